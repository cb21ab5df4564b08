package buildtest

import (
	"testing"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/analysis/table"
)

// Hostile is a name a trace may carry that must show as text everywhere.
const Hostile = `<script>alert(1)</script><img src=x onerror=alert(2)>`

// SampleBundle returns a small encoded bundle of two ranks whose names
// include Hostile.
func SampleBundle(t testing.TB) []byte {
	t.Helper()
	b := evidence.NewBundle()
	b.Traces = &table.Table{Name: "traces", Columns: []table.Column{
		{Name: "trace", Type: "VARCHAR"}, {Name: "path", Type: "VARCHAR"}, {Name: "rank", Type: "INTEGER"},
		{Name: "producer", Type: "VARCHAR"}, {Name: "platform", Type: "VARCHAR"}, {Name: "gpu_model", Type: "VARCHAR"},
		{Name: "has_sync_events", Type: "BOOLEAN"}, {Name: "events", Type: "BIGINT"},
		{Name: "first_ts_ns", Type: "BIGINT"}, {Name: "last_end_ns", Type: "BIGINT"}},
		Rows: [][]any{
			{"sample", "runs/" + Hostile + "/rank0.json.gz", int64(0), "profiler_step", "cuda", "GPU " + Hostile, true, int64(1000), int64(0), int64(5_000_000)},
			{"sample", "runs/" + Hostile + "/rank1.json.gz", int64(1), "profiler_step", "cuda", "GPU " + Hostile, true, int64(1200), int64(0), int64(5_500_000)},
		}, Total: 2}
	b.Tables["kernels"] = &table.Table{Name: "kernels", Columns: []table.Column{
		{Name: "trace", Type: "VARCHAR", Unit: "TEXT"}, {Name: "rank", Type: "INTEGER", Unit: "INT"},
		{Name: "step", Type: "INTEGER", Unit: "INT"}, {Name: "phase", Type: "VARCHAR", Unit: "TEXT"},
		{Name: "stream", Type: "BIGINT", Unit: "INT"}, {Name: "name", Type: "VARCHAR", Unit: "TEXT"},
		{Name: "count", Type: "BIGINT", Unit: "COUNT"}, {Name: "total_ns", Type: "BIGINT", Unit: "DURATION_NS"},
		{Name: "hist", Type: "VARCHAR", Unit: "HIST"}},
		Rows: [][]any{
			{"sample", int64(0), int64(0), "train", int64(7), Hostile, int64(10), int64(3_000_000), "80:10"},
			{"sample", int64(1), int64(0), "train", int64(7), "void gemm<float>(float*)", int64(20), int64(1_000_000), "70:20"},
		}, Total: 2}
	b.Tables["ranks"] = &table.Table{Name: "ranks", Columns: cols("trace", "TEXT", "rank", "INT", "step", "INT", "phase", "TEXT",
		"events", "COUNT", "first_ns", "TIMESTAMP_NS", "last_ns", "TIMESTAMP_NS", "busy_ns", "DURATION_NS", "idle_ns", "DURATION_NS",
		"compute_ns", "DURATION_NS", "comm_ns", "DURATION_NS", "mem_ns", "DURATION_NS", "comm_comp_ns", "DURATION_NS",
		"kernel_ns", "DURATION_NS", "step_ns", "DURATION_NS"),
		Rows: [][]any{
			{"sample", int64(0), int64(0), "train", int64(1000), int64(0), int64(5_000_000), int64(3_000_000), int64(2_000_000),
				int64(3_000_000), int64(0), int64(0), int64(0), int64(3_000_000), int64(5_000_000)},
			{"sample", int64(1), int64(0), "train", int64(1200), int64(0), int64(5_500_000), int64(5_000_000), int64(500_000),
				int64(5_000_000), int64(0), int64(0), int64(0), int64(5_000_000), int64(5_500_000)},
		}, Total: 2}
	b.Tables["sync"] = &table.Table{Name: "sync", Columns: cols("trace", "TEXT", "rank", "INT", "step", "INT", "phase", "TEXT",
		"stream", "INT", "call", "TEXT", "op", "TEXT", "trigger", "TEXT", "direction", "TEXT", "pageable", "BOOL", "blocking", "BOOL",
		"count", "COUNT", "blocked_ns", "DURATION_NS", "max_blocked_ns", "DURATION_NS", "gaps", "COUNT", "gpu_gap_ns", "DURATION_NS",
		"max_gap_ns", "DURATION_NS", "bytes", "BYTES"),
		Rows: [][]any{{"sample", int64(0), int64(0), "train", int64(7), "cudaStreamSynchronize", "aten::" + Hostile, "item", "DtoH",
			false, true, int64(10), int64(1_500_000), int64(200_000), int64(10), int64(1_200_000), int64(150_000), int64(40)}},
		Total: 1}
	b.Findings = []evidence.Finding{{
		Rule: "sync_in_step", Severity: "critical", Status: "confirmed",
		Title:       "Host syncs on " + Hostile,
		Observation: "cudaStreamSynchronize after " + Hostile + " blocks 40.0% of step time on rank 0.",
		Mechanism:   "each sync opens a GPU gap in the same step",
		Fix:         "remove .item() from the hot loop", Snippet: "loss_val = loss.detach()  # " + Hostile,
		Evidence: []evidence.Ref{{Preset: "sync", Where: map[string]string{"rank": "0"}}},
		Trace:    "sample", Rank: 0, Step: -1, Impact: 0.4,
	}, {
		Rule: "small_kernels", Severity: "minor", Status: "hypothesis",
		Title: "Many short kernels", Observation: "60% of kernels run under 10 us.", Fix: "torch.compile(mode=\"reduce-overhead\")",
		Refute: "launch queue stays full", Trace: "sample", Rank: 1, Step: -1, Impact: 0.1,
	}}
	b.Gaps = []evidence.Gap{{Kind: evidence.GapNoPythonStacks, Trace: "sample", Rank: -1, What: "no python frames", Why: "with_stack=False"}}
	cv := &crossview.Result{Label: "trace sample, rank 0", Slice: crossview.Slice{Trace: "sample"},
		GPU: crossview.Tree{View: "gpu", TotalNs: 4_000_000, Roots: []*crossview.Node{
			{Name: "ProfilerStep#0", Kind: "annotation", Ns: 4_000_000, Children: []*crossview.Node{
				{Name: "aten::" + Hostile, Kind: "cpu_op", Ns: 3_000_000, Children: []*crossview.Node{
					{Name: "cudaLaunchKernel", Kind: "runtime", Ns: 3_000_000, Children: []*crossview.Node{
						{Name: Hostile, Kind: "kernel", Ns: 3_000_000}}}}},
				{Name: "cudaStreamSynchronize", Kind: "runtime", Sync: true, Ns: 1_000_000, Children: []*crossview.Node{
					{Name: "Memcpy DtoH (Device -> Pageable)", Kind: "gpu_memcpy", Ns: 1_000_000}}},
			}}}},
		Check: crossview.Check{Verdict: "sync-bound", Label: "confirmed", Reason: "syncs open 40% of idle",
			Metrics: crossview.Metrics{Ranks: 1, WallNs: 5_000_000, BusyNs: 4_000_000}},
		Gaps: []string{},
	}
	data, err := report.EncodeSource(&report.Source{Bundle: b, CrossViews: []*crossview.Result{cv}})
	if err != nil {
		t.Fatal(err)
	}
	return data
}
