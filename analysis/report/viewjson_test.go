package report

import (
	"encoding/json"
	"reflect"
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

// FuzzParseView: no panic, and what parses re-encodes to the same view.
func FuzzParseView(f *testing.F) {
	f.Add([]byte(`{"filter":{"rank":1,"has_rank":true},"thresholds":{"a":1},"open":["x"],"sort":{"k":"-c"}}`))
	f.Add([]byte(`{"filter":{"trace":"\u00e9\ud83d\ude00"}}`))
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
