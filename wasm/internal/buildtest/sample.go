package buildtest

import (
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/analysis/table"
)

// Hostile is a name a trace may carry that must show as text everywhere.
const Hostile = `<script>alert(1)</script><img src=x onerror=alert(2)>`

// SampleBundle returns a small encoded bundle whose names include Hostile.
func SampleBundle(t testing.TB) []byte {
	t.Helper()
	d := report.Doc{
		Title:   "TorchProfiler Trace Report",
		Scope:   "trace sample, all ranks",
		Summary: []string{"The GPU waits on the host: " + Hostile + " dominates."},
		Traces: []report.TraceMeta{{Name: "sample", File: "runs/" + Hostile + ".json.gz", Events: 1234, SpanNs: 5_000_000,
			Ranks: []int{0, 1}, Producer: "training", Capture: []string{"cuda_sync events"}}},
		GPUTree: &report.Tree{Where: "pid 1, all threads", Root: report.Node{ID: "r", Name: "all", GPUNs: 100, Share: 1,
			Children: []report.Node{
				{ID: "r/a", Name: "aten::mm", GPUNs: 80, Share: .8, Children: []report.Node{{ID: "r/a/k", Name: "cudaLaunchKernel", Kernel: Hostile, GPUNs: 80, Share: .8}}},
				{ID: "r/s", Name: "cudaStreamSynchronize", GPUNs: 20, Share: .2, Sync: true},
			}}},
		Critical: []report.Issue{{ID: "sync", Title: "Host syncs " + Hostile, Observation: "obs", Fix: "remove .item()", Snippet: "x = t.tolist()  # " + Hostile}},
		Tables: []table.Table{{Name: "kernels", Columns: []table.Column{{Name: "name", Type: "VARCHAR"}, {Name: "total_ns", Type: "BIGINT", Unit: "ns"}},
			Rows: [][]any{{Hostile, int64(5)}, {"b", int64(7)}}, Total: 2}},
		Controls: report.Controls{Ranks: []int{0, 1}, Phases: []string{"decode"}},
	}
	b, err := msgpack.Marshal(&d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
