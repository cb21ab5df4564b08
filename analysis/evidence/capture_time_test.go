package evidence

import (
	"testing"
	"time"

	"github.com/tracebook/tracebook/internal/testutil"
)

// A trace is dated by its baseTimeNanoseconds plus its first event's ts
// (Kineto's ts are offsets from the base, weeks in vllm_h100_tp4_rank0), or
// by the first ts where that reads as a Unix time; neither dates nothing.
func TestCaptureNs(t *testing.T) {
	day := func(s string) int64 { return testutil.UnixDay(t, s) }
	for _, c := range []struct {
		name          string
		base, firstTs int64
		want          string
	}{
		{"offset from the base", 1743521598000000000, 3_680_000_000_000_000, "2025-05-14"},
		{"ts is a Unix time", 0, day("2022-11-30") + 3_600_000_000_000, "2022-11-30"},
		{"ts is a Unix time beside a base", day("2022-11-01"), day("2022-11-30"), "2022-11-30"},
		{"neither", 0, 12_345_678, ""},
	} {
		got := ""
		if ns := captureNs(c.base, c.firstTs); ns > 0 {
			got = time.Unix(0, ns).UTC().Format("2006-01-02")
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
