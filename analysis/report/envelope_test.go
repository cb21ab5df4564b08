package report

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/evidence"
)

// decodeEnvelopeReflect decodes an envelope with the msgpack library alone,
// as DecodeSource did before decodeEnvelope.
func decodeEnvelopeReflect(t *testing.T, data []byte) *Source {
	t.Helper()
	var parts struct {
		_msgpack   struct{} `msgpack:",as_array"`
		Bundle     []byte
		CrossViews []*crossview.Result
		Windows    []Window
	}
	if data[0] == 0x92 {
		var two struct {
			_msgpack   struct{} `msgpack:",as_array"`
			Bundle     []byte
			CrossViews []*crossview.Result
		}
		if err := msgpack.Unmarshal(data, &two); err != nil {
			t.Fatal(err)
		}
		parts.Bundle, parts.CrossViews = two.Bundle, two.CrossViews
	} else if err := msgpack.Unmarshal(data, &parts); err != nil {
		t.Fatal(err)
	}
	b, err := evidence.Decode(parts.Bundle)
	if err != nil {
		t.Fatal(err)
	}
	return &Source{Bundle: b, CrossViews: parts.CrossViews, Windows: parts.Windows}
}

// TestDecodeEnvelope: decodeEnvelope decodes the golden sources and
// envelopes of 2 and 3 parts, with bundles of each bin size, as the msgpack
// library does, and declines truncated input and other layouts.
func TestDecodeEnvelope(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.source.msgpack"))
	if len(files) == 0 {
		t.Fatal("no encoded sources in testdata/golden")
	}
	var inputs [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, data)
	}
	b := evidence.NewBundle()
	small, err := evidence.Encode(b)
	if err != nil {
		t.Fatal(err)
	}
	b.Context["pad"] = string(bytes.Repeat([]byte{'x'}, 300))
	medium, _ := evidence.Encode(b)
	b.Context["pad"] = string(bytes.Repeat([]byte{'x'}, 70000))
	large, _ := evidence.Encode(b)
	for _, bb := range [][]byte{small, medium, large} {
		for _, parts := range [][]any{
			{bb, []*crossview.Result{}},
			{bb, []*crossview.Result{{Label: "cv"}}, []Window{{N: 1, File: "finding-1-x.json", Rule: "x", Step: -1}}},
		} {
			data, err := msgpack.Marshal(parts)
			if err != nil {
				t.Fatal(err)
			}
			inputs = append(inputs, data)
		}
	}
	for i, data := range inputs {
		want := decodeEnvelopeReflect(t, data)
		got, ok, err := decodeEnvelope(data)
		if !ok || err != nil {
			t.Fatalf("input %d: decodeEnvelope = %v, %v", i, ok, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("input %d: decodeEnvelope differs from the library's decoding", i)
		}
		_, rest, _, _ := splitEnvelope(data)
		for n := 0; n < len(data)-len(rest) && n < 8; n++ {
			if _, _, _, ok := splitEnvelope(data[:n]); ok {
				t.Errorf("input %d cut at %d: accepted", i, n)
			}
		}
		if _, _, _, ok := splitEnvelope(data[:len(data)-len(rest)-1]); ok {
			t.Errorf("input %d with its bundle cut short: accepted", i)
		}
		if _, ok, err := decodeEnvelope(data[:len(data)-1]); !ok || err == nil {
			t.Errorf("input %d without its last byte: ok %v, error %v; want an error", i, ok, err)
		}
	}
	for _, data := range [][]byte{{0x92, 0xa1, 'x', 0x90}, {0x91, 0xc4, 0}, {0x92, 0xc0, 0x90}, {0x94, 0xc4, 0}} {
		if _, ok, _ := decodeEnvelope(data); ok {
			t.Errorf("decodeEnvelope(% x) accepted another layout", data)
		}
	}
}
