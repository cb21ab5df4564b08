package evidence_test

import (
	"fmt"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/table"
)

// TestRanksComputeCapability checks RankInfo.CCMajor/CCMinor: read from
// gpu_cc_major/gpu_cc_minor (the first file of a rank that has them), -1
// when NULL and when the table predates the columns.
func TestRanksComputeCapability(t *testing.T) {
	cols := func(names ...string) []table.Column {
		var out []table.Column
		for _, n := range names {
			out = append(out, table.Column{Name: n})
		}
		return out
	}
	withCC := &table.Table{Name: "traces", Columns: cols("trace", "rank", "gpu_model", "gpu_cc_major", "gpu_cc_minor"), Rows: [][]any{
		{"a", int64(0), "Tesla V100-SXM2-32GB", int64(7), int64(0)},
		{"a", int64(1), nil, nil, nil}, // a second file of rank 1 has them
		{"a", int64(1), "Tesla V100-SXM2-32GB", int64(7), int64(0)},
		{"a", int64(2), nil, nil, nil},
		{"b", int64(0), "", int64(9), nil}, // half a capability is none
	}}
	old := &table.Table{Name: "traces", Columns: cols("trace", "rank", "gpu_model"), Rows: [][]any{{"c", int64(0), "NVIDIA H100"}}}
	type cc struct{ major, minor int }
	want := map[string]cc{"a/0": {7, 0}, "a/1": {7, 0}, "a/2": {-1, -1}, "b/0": {-1, -1}, "c/0": {-1, -1}}
	for _, tb := range []*table.Table{withCC, old} {
		for _, ri := range evidence.Ranks(tb) {
			key := fmt.Sprintf("%s/%d", ri.Trace, ri.Rank)
			if got := (cc{ri.CCMajor, ri.CCMinor}); got != want[key] {
				t.Errorf("Ranks() %s: CC = %d.%d, want %d.%d", key, got.major, got.minor, want[key].major, want[key].minor)
			}
			delete(want, key)
		}
	}
	if len(want) != 0 {
		t.Errorf("Ranks() left out %v", want)
	}
}
