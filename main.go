// Command tracebook turns PyTorch-profiler (Kineto) and vLLM/SGLang traces
// into evidence, a GPU/CPU cross-view and a report with fixes. It is a
// Jupyter kernel (tracebook kernel), a command-line tool and the builder of
// a single-file offline HTML report. Package cli holds the commands;
// docs/DESIGN.md describes the whole.
package main

import (
	_ "embed"
	"os"

	"github.com/tracebook/tracebook/cli"
)

// sampleTrace is the trace `tracebook report` analyses when given none
// (cli.SampleTrace). It is embedded here because go:embed reaches only the
// embedding package's folder and below, and testdata/ sits at the root.
//
//go:embed testdata/hta/critical_path_alexnet/benchmark_result_2869224_1695835535_trace.json.gz
var sampleTrace []byte

func main() {
	cli.SampleTrace = sampleTrace
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
