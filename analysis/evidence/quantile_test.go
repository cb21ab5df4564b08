package evidence

import (
	"testing"

	"github.com/tracebook/tracebook/analysis/table"
)

// TestLaunchQuantilesWithinExtremes: a launch row's p99 is a log bucket's
// middle clamped to the exact extremes, so one call of 463.064 ms (the
// SGLang MI300X trace's blocking copy) reads 463.064 ms at p99, not the
// bucket's 471 ms.
func TestLaunchQuantilesWithinExtremes(t *testing.T) {
	const call = int64(463_064_000)
	h := Hist{BucketOf(call): 1}.String()
	tb := &table.Table{Columns: []table.Column{
		{Name: "launches", Unit: "COUNT"}, {Name: "with_gpu", Unit: "COUNT"}, {Name: "cpu_ns", Unit: "DURATION_NS"}, {Name: "delay_ns", Unit: "DURATION_NS"},
		{Name: "min_cpu_ns", Unit: "DURATION_NS"}, {Name: "max_cpu_ns", Unit: "DURATION_NS"}, {Name: "min_delay_ns", Unit: "DURATION_NS"}, {Name: "max_delay_ns", Unit: "DURATION_NS"},
		{Name: "cpu_hist", Unit: HistUnit}, {Name: "delay_hist", Unit: HistUnit}}}
	tb.Rows = [][]any{{int64(1), int64(1), call, call, call, call, call, call, h, h}}
	if mid := (Hist{BucketOf(call): 1}).Quantile(0.99, 0, 0); mid <= call {
		t.Fatalf("the bucket's middle %d is not above the call %d: the case tests nothing", mid, call)
	}
	deriveLaunch(tb, nil)
	for _, c := range []string{"p99_cpu_ns", "p50_delay_ns", "p99_delay_ns"} {
		if got := Int(tb, 0, c); got != call {
			t.Errorf("%s = %d, want %d", c, got, call)
		}
	}
}
