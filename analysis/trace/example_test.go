package trace_test

import (
	"fmt"
	"strings"

	"github.com/tracebook/tracebook/analysis/trace"
)

func ExampleParse() {
	const doc = `{"schemaVersion": 1, "traceEvents": [
	  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 7,
	   "ts": 1682725898236567.123, "dur": 4.5, "args": {"correlation": 42, "cbid": 211}},
	  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": "stream 7",
	   "ts": "1682725898236570.0005", "dur": 12, "args": {"correlation": 42, "stream": 7, "grid": [64, 1, 1]}},
	  {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream 7"}}
	]}`
	info, err := trace.Parse(strings.NewReader(doc), "example.json", trace.LoadOptions{}, func(e *trace.Event) error {
		fmt.Printf("%s %s %s ts=%dns dur=%dns correlation=%d grid=%s args=%s\n",
			e.Kind, e.API, e.Name, e.TsNs, e.DurNs, e.Correlation, e.Grid, e.Args)
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(info.Events, "events;", info.Platform, info.Format, info.Threads[0].Name)
	// Output:
	// runtime launch cudaLaunchKernel ts=1682725898236567123ns dur=4500ns correlation=42 grid= args={"cbid":211}
	// kernel  gemm ts=1682725898236570001ns dur=12000ns correlation=42 grid=[64,1,1] args=
	// 2 events; cuda kineto stream 7
}

func ExampleResolveRank() {
	ref := trace.NewFileRef("runs/llama/vllm-rank-3.1716000000000000000.pt.trace.json.gz")
	rank, source := trace.ResolveRank(ref, &trace.FileInfo{HasDistributedRank: true, DistributedRank: 5})
	fmt.Println(rank, source)
	rank, source = trace.ResolveRank(trace.NewFileRef("trace.json"), &trace.FileInfo{})
	fmt.Println(rank, source)
	// Output:
	// 3 filename
	// 0 default
}
