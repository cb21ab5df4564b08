//go:build cgo

package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/internal/duck"
	"github.com/tracebook/tracebook/internal/testutil"
)

// `tracebook crossview` and %crossview (CrossView) judge the slice the
// report's CPU cross-check judges: the same numbers and top gaps as the
// report's cross-view of the slice, and the verdict, label and reason the
// report prints. The shared traces: an edge sync that leaves the host time
// (deepseek), held idle left out (SGLang prefill/decode), a graph capture
// that gets no host/device reading (vLLM), warm-up idle left out with the
// label capped by the capture (alexnet), and one with nothing to leave
// out of its verdict (vLLM H100); and one rank of an 8-rank job. A large slice, whose evidence runs
// first and whose frames stream, gets the same.
func TestCrossViewJudgesTheReportsSlice(t *testing.T) {
	type set struct {
		name   string
		shared bool // in ../shared/traces, else in testdata
		f      evidence.Filter
	}
	sets := []set{{name: "param/dlrm_8rank", f: evidence.Filter{Rank: 3, HasRank: true}}}
	for _, s := range []string{"deepseek/train_h800_ep64", "tracelens/sglang_qwen3_prefilldecode_mi300x",
		"tracelens/vllm_graph_capture_full_mi300x", "hta/critical_path_alexnet", "tracemap/vllm_h100_tp4_rank0"} {
		sets = append(sets, set{name: s, shared: true})
	}
	for _, s := range sets {
		t.Run(s.name, func(t *testing.T) {
			path := filepath.Join(testutil.Testdata(t), s.name)
			if s.shared {
				path = filepath.Join(testutil.SharedTraces(t), s.name) // skips without them
			}
			db, err := duck.Open("", duck.Options{CacheDir: "-", Threads: 2, MemoryLimit: "512MB"})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			ctx := context.Background()
			if _, err := db.Load(ctx, []string{path}, trace.LoadOptions{}, nil); err != nil {
				t.Fatal(err)
			}
			f := s.f
			src, err := CollectReport(ctx, db, f, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(src.CrossViews) == 0 {
				t.Fatal("the report has no cross-view")
			}
			var md bytes.Buffer
			if err := report.GenerateView(&md, src, report.View{Filter: src.Bundle.Filter}, report.Markdown); err != nil {
				t.Fatal(err)
			}
			cv, err := CrossView(ctx, db, f, crossview.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			want := src.CrossViews[0].Check
			got := cv.Check
			if want.Metrics != got.Metrics {
				a, _ := json.MarshalIndent(want.Metrics, "", " ")
				b, _ := json.MarshalIndent(got.Metrics, "", " ")
				t.Errorf("the cross-check's numbers differ from the report's:\n%s", testutil.Diff(string(a), string(b)))
			}
			a, _ := json.Marshal(want.TopGaps)
			b, _ := json.Marshal(got.TopGaps)
			if !bytes.Equal(a, b) {
				t.Errorf("the top gaps differ from the report's:\n%s", testutil.Diff(string(a), string(b)))
			}
			// The report's CPU cross-check paragraph: "Verdict: V (label).
			// [Confidence capped by the capture: why.] Reason notes".
			_, para, _ := strings.Cut(md.String(), "**CPU cross-check**\n\n")
			para, _, _ = strings.Cut(para, "\n\n")
			label := ""
			if got.Label != "" {
				label = " (" + got.Label + ")"
			}
			head := table.MarkdownText("Verdict: " + got.Verdict + label + ". ")
			if !strings.HasPrefix(para, head) {
				t.Errorf("the report's CPU cross-check reads\n%s\nwant it to start with the cross-view's verdict %q", para, head)
			}
			if !strings.Contains(para, table.MarkdownText(got.Reason)) {
				t.Errorf("the report's CPU cross-check reads\n%s\nwant the cross-view's reason\n%s", para, got.Reason)
			}
			for _, n := range got.Notes {
				if why, ok := strings.CutPrefix(n, "Confidence capped by the capture: "); ok && !strings.Contains(para, table.MarkdownText("Confidence capped by the capture: "+why+". ")) {
					t.Errorf("the cross-view's label is capped (%s), the report's is not:\n%s", why, para)
				}
			}
			// A large slice collects the evidence first and then streams
			// the frames, under DuckDB's lowered limits: the same check.
			defer func(old int) { leanCrossViewFrames = old }(leanCrossViewFrames)
			leanCrossViewFrames = 0
			large, err := CrossView(ctx, db, f, crossview.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			a, _ = json.Marshal(cv)
			b, _ = json.Marshal(large)
			if !bytes.Equal(a, b) {
				t.Errorf("the cross-view of a large slice differs from a lean one's:\n%s", testutil.Diff(string(a), string(b)))
			}
			if got.Metrics.LeftOutIdleNs+got.Metrics.EdgeSyncNs > 0 && !strings.Contains(got.Reason, "left out, as the rules do") {
				t.Errorf("the cross-view leaves time out and does not say so: %s", got.Reason)
			}
		})
	}
}
