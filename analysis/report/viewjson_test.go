package report

import (
	"encoding/json"
	"reflect"
	"strconv"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
)

func TestParseViewRoundTrip(t *testing.T) {
	tests := []View{
		{},
		{Filter: evidence.Filter{Rank: 3, HasRank: true, Phase: "decode"}},
		{Filter: evidence.Filter{Trace: "a \"quoted\" <name> é 😀", WindowStartNs: 1_000_000_000_123, WindowEndNs: 2_000_000_000_456, Step: 7, HasStep: true, Stream: 7, HasStream: true}},
		{Thresholds: map[string]float64{"sync_gap_critical": 0.25, "pageable_min_bytes": 65536, "neg": -1.5e-7}},
		{Sort: map[string]string{"kernels": "-total_ns", "ops": "name"}, Open: []string{"gpu", "gpu/0/1", "knobs"}, MaxRows: 40},
	}
	for _, want := range tests {
		data, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseView(data)
		if err != nil {
			t.Fatalf("ParseView(%s) = %v", data, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("ParseView(%s) = %+v, want %+v", data, got, want)
		}
	}
	// What the loader sends: JSON.stringify of the view, with spaces and escapes.
	got, err := ParseView([]byte(` { "filter" : {"rank":1,"has_rank":true,"phase":"pre\u0066ill"}, "open":[], "sort":{}, "thresholds":{"x":1e-3} } `))
	if err != nil || got.Filter.Phase != "prefill" || !got.Filter.HasRank || got.Thresholds["x"] != 0.001 {
		t.Errorf("ParseView(loader form) = %+v, %v", got, err)
	}
}

func TestParseView_Errors(t *testing.T) {
	tests := []string{`{`, `[]`, `{"filter":3}`, `{"filter":{"rank":1.5}}`, `{"thresholds":{"a":"b"}}`, `{"open":[1]}`,
		`{"a":1,}`, `{"a":tru}`, `{"a":"\x"}`, `{"a":1} x`, "{\"a\":\"\x01\"}", `{"max_rows":"9"}`}
	for _, in := range tests {
		if _, err := ParseView([]byte(in)); err == nil {
			t.Errorf("ParseView(%q) = nil error, want an error", in)
		}
	}
}

func TestParseViewStrings(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", `"prefill"`, "prefill"},
		{"every simple escape", `"\"\\\/\b\f\n\r\t"`, "\"\\/\b\f\n\r\t"},
		{"\\u in the BMP", `"\u00e9\u65E5"`, "é日"},
		{"surrogate pair", `"\ud83d\ude00"`, "😀"},
		{"lone high half", `"a\ud800b"`, "a\uFFFDb"},
		{"lone low half", `"a\udc00"`, "a\uFFFD"},
		// The \u after a half that finds no partner is a character of its
		// own, as in encoding/json (this reader used to drop it).
		{"high half before a \\u of no low half", `"\ud800\u0041"`, "\uFFFDA"},
		{"invalid utf-8, each byte replaced", "\"a\xff\xfeb\"", "a\uFFFD\uFFFDb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseView([]byte(`{"filter":{"trace":` + tc.in + `}}`))
			if err != nil || got.Filter.Trace != tc.want {
				t.Errorf("ParseView(trace %s) = %q, %v; want %q", tc.in, got.Filter.Trace, err, tc.want)
			}
		})
	}
}

// TestParseViewStrings_Errors pins the byte that each error names.
func TestParseViewStrings_Errors(t *testing.T) {
	tests := []struct {
		in   string
		byte int
	}{
		{`{"a":"abc`, 9},
		{`{"a":"\x"}`, 8},
		{`{"a":"\`, 6},
		{`{"a":"\u12`, 8},
		{`{"a":"\u12g4"}`, 8},
		{`{"a":"\ud800\`, 12},
		{`{"a":"\ud800\udc`, 14},
		{`{"a":"\ud800\udcxy"}`, 14},
		{"{\"a\":\"b\x01\"}", 7},
		{"{\"a\":\"b\n\"}", 7},
	}
	for _, tc := range tests {
		_, err := ParseView([]byte(tc.in))
		want := "parsing the view: malformed JSON at byte " + strconv.Itoa(tc.byte)
		if err == nil || err.Error() != want {
			t.Errorf("ParseView(%q) = %v, want %s", tc.in, err, want)
		}
	}
}

// FuzzParseView: no panic, and what parses re-encodes to the same view.
func FuzzParseView(f *testing.F) {
	f.Add([]byte(`{"filter":{"rank":1,"has_rank":true},"thresholds":{"a":1},"open":["x"],"sort":{"k":"-c"}}`))
	f.Add([]byte(`{"filter":{"trace":"\u00e9\ud83d\ude00"}}`))
	f.Add([]byte(`{"filter":{"trace":"\ud800\u0041\udc00\n"},"open":["\u0061"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ParseView(data)
		if err != nil {
			return
		}
		again, err := json.Marshal(v)
		if err != nil {
			return // NaN or Inf thresholds do not re-encode
		}
		w, err := ParseView(again)
		if err != nil || !reflect.DeepEqual(emptyMapsNil(v), emptyMapsNil(w)) {
			t.Errorf("ParseView(%q) = %+v; re-encoded %s parses to %+v, %v", data, v, again, w, err)
		}
	})
}

// emptyMapsNil drops empty maps, which omitempty leaves out of the JSON.
func emptyMapsNil(v View) View {
	if len(v.Thresholds) == 0 {
		v.Thresholds = nil
	}
	if len(v.Sort) == 0 {
		v.Sort = nil
	}
	return v
}
