package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/report"
)

// TestGapsListedOnceAndCounted: a cross-view gap that restates one of the
// bundle's (graph-replayed kernels without CPU attribution, no python
// stacks) is listed once,
// the cross-view's other gaps are listed, and the summary counts what the
// Evidence Gaps section lists.
func TestGapsListedOnceAndCounted(t *testing.T) {
	b := evidence.NewBundle()
	b.Gaps = []evidence.Gap{
		{Kind: evidence.GapGraphsHideKernel, Trace: "job", Rank: -1, What: "per-kernel CPU attribution of graph-replayed kernels", Why: "the trace replays graphs"},
		{Kind: evidence.GapSingleRank, Trace: "job", Rank: -1, What: "rank imbalance", Why: "only one rank was loaded"},
	}
	other := "3 GPU operations have no launching CPU event in the trace"
	cv := &crossview.Result{Gaps: []string{crossview.GraphAttributionGap, other}}
	// A trace without python stacks: the bundle's gap says how to
	// collect them, and the cross-view's is not listed beside it.
	b.Gaps = append(b.Gaps, evidence.Gap{Kind: evidence.GapNoPythonStacks, Trace: "job", Rank: -1, What: "python frames above the operators", Why: "captured without python stacks"})
	cv.Gaps = append(cv.Gaps, crossview.NoPythonStacksGap)
	for _, tc := range []struct {
		name      string
		bundle    []evidence.Gap
		wantGraph int // times the cross-view's graph gap is listed
		wantCount string
	}{
		{"bundle states it", b.Gaps, 0, "4 evidence gap(s)"},
		{"bundle does not", b.Gaps[1:], 1, "4 evidence gap(s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bb := evidence.NewBundle()
			bb.Gaps = tc.bundle
			var md bytes.Buffer
			if err := report.GenerateView(&md, &report.Source{Bundle: bb, CrossViews: []*crossview.Result{cv}}, report.View{}, report.Markdown); err != nil {
				t.Fatal(err)
			}
			out := md.String()
			if n := strings.Count(out, crossview.GraphAttributionGap); n != tc.wantGraph {
				t.Errorf("the cross-view's graph gap is listed %d times, want %d", n, tc.wantGraph)
			}
			if n := strings.Count(out, crossview.NoPythonStacksGap); n != 0 {
				t.Errorf("the cross-view's python-stacks gap is listed %d times beside the bundle's", n)
			}
			if n := strings.Count(out, other); n != 1 {
				t.Errorf("the cross-view's other gap is listed %d times, want 1", n)
			}
			if !strings.Contains(out, tc.wantCount+" limit what this trace can show") {
				t.Errorf("summary does not say %q:\n%s", tc.wantCount, out[:min(len(out), 1500)])
			}
			sec := out[strings.Index(out, "## Evidence Gaps"):]
			if i := strings.Index(sec[3:], "\n## "); i >= 0 {
				sec = sec[:i+3]
			}
			if n := strings.Count(sec, "\n- "); n != 4 {
				t.Errorf("Evidence Gaps lists %d items, want 4:\n%s", n, sec)
			}
		})
	}
}
