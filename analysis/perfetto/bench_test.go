package perfetto

import (
	"strconv"
	"testing"
)

// benchInput is a window of n kernels, each launched by a runtime call.
func benchInput(n int) Input {
	in := syncWindow()
	r := &rowsTable{t: in.Rows}
	const t0 = int64(1_700_000_000_000_000)
	for i := 0; i < n; i++ {
		r.event("100", "100", "runtime", "launch", "cuda_runtime", "cudaLaunchKernel", t0+int64(i)*2_000, 1_500, int64(100_000+i))
		r.event("0", "7", "kernel", "", "kernel", "void gemm_kernel<"+strconv.Itoa(i%40)+">", t0+int64(i)*2_000+900, int64(700+i%500), int64(100_000+i))
	}
	return in
}

// BenchmarkBuild writes the file of a window of 20,000 events (10,000
// launches and their kernels) with its flows.
func BenchmarkBuild(b *testing.B) {
	in := benchInput(DefaultMaxEvents / 2)
	b.ReportAllocs()
	var size int
	for b.Loop() {
		data, _ := Build(in, Options{})
		size = len(data)
	}
	b.ReportMetric(float64(size), "bytes/file")
}

// BenchmarkFilesBudget cuts five such windows to the report's budget.
func BenchmarkFilesBudget(b *testing.B) {
	ins := []Input{}
	for i := 0; i < 5; i++ {
		ins = append(ins, benchInput(DefaultMaxEvents/2))
	}
	b.ReportAllocs()
	for b.Loop() {
		Files(ins, ReportBudget)
	}
}

// BenchmarkTimeline reduces a window of 20,000 events to its timeline.
func BenchmarkTimeline(b *testing.B) {
	in := benchInput(DefaultMaxEvents / 2)
	b.ReportAllocs()
	for b.Loop() {
		Timeline(in)
	}
}
