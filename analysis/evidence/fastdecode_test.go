package evidence

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/internal/testutil"
)

// decodeReflect is Decode's reflective path alone.
func decodeReflect(t *testing.T, data []byte) *Bundle {
	t.Helper()
	dec := msgpack.NewDecoder(bytes.NewReader(data))
	dec.UseLooseInterfaceDecoding(true)
	var b Bundle
	if err := dec.Decode(&b); err != nil {
		t.Fatalf("reflective decoding: %v", err)
	}
	normalizeTable(b.Traces)
	for _, t := range b.Tables {
		normalizeTable(t)
	}
	return &b
}

// encodeMap writes a msgpack map from alternating keys and values, keys in
// the order given.
func encodeMap(t *testing.T, kv ...any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.EncodeMapLen(len(kv) / 2)
	for i := 0; i+1 < len(kv); i += 2 {
		enc.EncodeString(kv[i].(string))
		if err := enc.Encode(kv[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// TestDecodeFastSameAsReflective: decodeFast reads every bundle it accepts
// exactly as the reflective decoding does (cell types included), and
// declines the ones it does not read.
func TestDecodeFastSameAsReflective(t *testing.T) {
	type tc struct {
		name string
		data []byte
		fast bool // decodeFast should accept it
	}
	var cases []tc
	golden, err := os.ReadFile(filepath.Join("testdata", "bundle.msgpack.golden"))
	if err != nil {
		t.Fatal(err)
	}
	cases = append(cases, tc{"bundle.msgpack.golden", golden, true})
	// The report goldens' sources: an envelope around a bundle encoding.
	sources, _ := filepath.Glob(filepath.Join(testutil.RepoRoot(t), "analysis", "report", "testdata", "golden", "*.source.msgpack"))
	if len(sources) == 0 {
		t.Fatal("no report golden sources found")
	}
	for _, f := range sources {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var env []any // the bundle's bytes, then cross-views and windows
		if err := msgpack.Unmarshal(data, &env); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		bundle, ok := env[0].([]byte)
		if !ok {
			t.Fatalf("%s: the envelope's first part is %T", f, env[0])
		}
		cases = append(cases, tc{filepath.Base(f), bundle, true})
	}
	// Every kind of cell, empty and nil rows, a nil table, an empty table.
	cellsTable := map[string]any{
		"name":    "cells",
		"columns": []map[string]any{{"name": "a", "type": "BIGINT", "unit": "COUNT"}, {"name": "b", "type": "VARCHAR"}},
		"rows": []any{
			[]any{int8(-3), int16(-300), int32(-70000), int64(math.MinInt64), uint8(200), uint16(60000), uint32(4000000000)},
			[]any{uint64(math.MaxUint64), uint64(42), float32(1.5), 2.25, "", "text", []byte("bytes"), true, false, nil},
			[]any{},
			nil,
			[]any{int64(-1), int64(127), int64(128), int64(-32), int64(-33)},
		},
		"total": int64(5),
	}
	cases = append(cases,
		tc{"cells", encodeMap(t, "schema_version", 1, "tables", map[string]any{"cells": cellsTable, "none": nil,
			"empty": map[string]any{"name": "empty", "columns": []any{}, "rows": []any{}, "total": 0}},
			"traces", cellsTable, "context", map[string]string{"tp": "4"}, "thresholds", map[string]float64{"x": 0.5}), true},
		tc{"nil tables", encodeMap(t, "tables", nil, "traces", nil), true},
		tc{"unknown table field", encodeMap(t, "tables", map[string]any{"x": map[string]any{"name": "x", "extra": []any{1, "a"}}}), true},
		tc{"unknown bundle field", encodeMap(t, "tables", map[string]any{}, "future", 1), false},
		tc{"map cell", encodeMap(t, "tables", map[string]any{"x": map[string]any{"rows": []any{[]any{map[string]any{"k": 1}}}}}), false},
		tc{"array cell", encodeMap(t, "tables", map[string]any{"x": map[string]any{"rows": []any{[]any{[]any{1}}}}}), false},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := decodeFast(c.data)
			if ok != c.fast {
				t.Fatalf("decodeFast accepted = %v, want %v", ok, c.fast)
			}
			if !ok {
				return
			}
			want := decodeReflect(t, c.data)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("decodeFast differs from the reflective decoding:\n got %#v\nwant %#v", got, want)
			}
			for name, tb := range got.Tables {
				if tb == nil {
					continue
				}
				for i, r := range tb.Rows {
					for j, v := range r {
						if w := want.Tables[name].Rows[i][j]; reflect.TypeOf(v) != reflect.TypeOf(w) {
							t.Errorf("%s row %d cell %d: %T, want %T", name, i, j, v, w)
						}
					}
				}
			}
		})
	}
	// Truncated input is never accepted.
	for n := 0; n < len(golden); n += 1 + len(golden)/97 {
		if _, ok := decodeFast(golden[:n]); ok {
			t.Fatalf("decodeFast accepted the golden bundle cut at byte %d", n)
		}
	}
}

// TestDecodedRowsAreCapped: an append to a decoded row leaves the next row
// as it was (rows share one backing array).
func TestDecodedRowsAreCapped(t *testing.T) {
	tb := &table.Table{Name: "t", Columns: []table.Column{{Name: "a"}, {Name: "b"}},
		Rows: [][]any{{int64(1), "x"}, {int64(2), "y"}}, Total: 2}
	b := NewBundle()
	b.Tables["t"] = tb
	data, err := Encode(b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	rows := got.Tables["t"].Rows
	_ = append(rows[0], "appended")
	if !reflect.DeepEqual(rows[1], []any{int64(2), "y"}) {
		t.Errorf("appending to row 0 changed row 1: %v", rows[1])
	}
}

// TestDecodeAllocatesWithinInput: the lengths a bundle claims do not size
// what decodeFast allocates past the bytes it holds. A table claiming 8,000
// rows whose first row holds 8,000 cells, in 8 kB, made it reserve room for
// 64 M cells (1 GB) before reading on (FuzzDecode); now it reserves at most
// a cell per byte left, and the bytes that are missing make it an error.
func TestDecodeAllocatesWithinInput(t *testing.T) {
	const n = 8000
	data := []byte{0x81, 0xa6, 't', 'a', 'b', 'l', 'e', 's', 0x81, 0xa1, 't', 0x81, 0xa4, 'r', 'o', 'w', 's',
		0xdc, n >> 8, n & 0xff, // the rows
		0xdc, n >> 8, n & 0xff} // the first row's cells
	data = append(data, bytes.Repeat([]byte{0xc0}, n)...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := Decode(data); err == nil {
		t.Fatal("a bundle missing 7,999 rows decoded")
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Errorf("decoding %d bytes allocated %d MB", len(data), got>>20)
	}
}

// TestCheckMsgpack: what reaches the msgpack library is one whole value
// whose lengths the bytes back. Four bytes claiming a billion findings made
// the library allocate gigabytes (FuzzDecode: the fuzzer's process killed
// for memory); a deep call tree is accepted.
func TestCheckMsgpack(t *testing.T) {
	golden, err := os.ReadFile(filepath.Join("testdata", "bundle.msgpack.golden"))
	if err != nil {
		t.Fatal(err)
	}
	deep := bytes.Repeat([]byte{0x91}, 3000) // a call tree 1,500 frames deep nests about 3,000 levels
	deep = append(deep, 0xc0)
	for _, c := range []struct {
		name string
		data []byte
		ok   bool
	}{
		{"golden bundle", golden, true},
		{"deep nesting", deep, true},
		{"a billion findings claimed", []byte{0x81, 0xa8, 'f', 'i', 'n', 'd', 'i', 'n', 'g', 's', 0xdd, 0x3b, 0x9a, 0xca, 0x00}, false},
		{"a string past the end", []byte{0xdb, 0x7f, 0xff, 0xff, 0xff, 'x'}, false},
		{"bytes after the value", append(append([]byte{}, golden...), 0xc0), false},
		{"nested past the bound", append(bytes.Repeat([]byte{0x91}, maxNesting+2), 0xc0), false},
		{"empty", nil, false},
	} {
		if err := CheckMsgpack(c.data); (err == nil) != c.ok {
			t.Errorf("%s: CheckMsgpack = %v, want ok %v", c.name, err, c.ok)
		}
	}
	if _, err := Decode([]byte{0x81, 0xa8, 'f', 'i', 'n', 'd', 'i', 'n', 'g', 's', 0xdd, 0x3b, 0x9a, 0xca, 0x00}); err == nil {
		t.Error("a bundle claiming a billion findings in 15 bytes decoded")
	}
}
