package findings

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/table"
)

// workloadEvidence rolls up a bundle whose workload area holds rows, each
// {trace, rank, feature, example}; nil rows mean no workload area at all.
func workloadEvidence(rows [][]any) *evidence.Evidence {
	b := evidence.NewBundle()
	if rows != nil {
		t := &table.Table{Name: "workload", Columns: []table.Column{{Name: "trace"}, {Name: "rank"}, {Name: "feature"}, {Name: "example"}, {Name: "count"}, {Name: "total_ns"}}}
		for _, r := range rows {
			t.Rows = append(t.Rows, []any{r[0], int64(r[1].(int)), r[2], r[3], int64(1), int64(1000)})
		}
		b.Tables["workload"] = t
	}
	return evidence.Rollup(b, evidence.Filter{})
}

func TestWorkload(t *testing.T) {
	op := []any{"t", 0, "cpu_ops", "aten::mm"}
	tests := []struct {
		name  string
		rows  [][]any
		want  Workload
		phase string
	}{
		{
			name:  "no workload area: unknown, not false",
			rows:  nil,
			want:  Workload{DataLoaderWorkers: -1},
			phase: "unknown",
		},
		{
			name:  "operators, no backward: inference",
			rows:  [][]any{op},
			want:  Workload{Known: true, Operators: true, DataLoaderWorkers: -1, Examples: map[string]string{"cpu_ops": "aten::mm"}},
			phase: "inference (no backward operator)",
		},
		{
			name:  "no operator captured: the phase is unknown",
			rows:  [][]any{{"t", 0, "legacy_categories", "cudaLaunchKernel"}},
			want:  Workload{Known: true, DataLoaderWorkers: -1, Era: "2021", Examples: map[string]string{"legacy_categories": "cudaLaunchKernel"}},
			phase: "unknown",
		},
		{
			name: "2021 training with a single-process DataLoader",
			rows: [][]any{op, {"t", 0, "backward", "NllLossBackward"}, {"t", 0, "optimizer", "Optimizer.step#SGD.step"},
				{"t", 0, "dataloader_single", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"},
				{"t", 0, "legacy_categories", "aten::zeros"}},
			want: Workload{Known: true, Operators: true, Training: true, Backward: true, DataLoaderWorkers: 0, Era: "2021",
				Examples: map[string]string{"cpu_ops": "aten::mm", "backward": "NllLossBackward", "optimizer": "Optimizer.step#SGD.step",
					"dataloader_single": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "legacy_categories": "aten::zeros"}},
			phase: "training (backward operators present)",
		},
		{
			name: "optimizer alone is training",
			rows: [][]any{op, {"t", 0, "optimizer", "Optimizer.step#Adam.step"}, {"t", 0, "dataloader_workers", "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"}},
			want: Workload{Known: true, Operators: true, Training: true, DataLoaderWorkers: 1,
				Examples: map[string]string{"cpu_ops": "aten::mm", "optimizer": "Optimizer.step#Adam.step", "dataloader_workers": "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"}},
			phase: "training (optimizer steps present)",
		},
		{
			name: "both DataLoader iterators: the worker count is unknown",
			rows: [][]any{op, {"t", 0, "dataloader_single", "a"}, {"t", 0, "dataloader_workers", "b"}},
			want: Workload{Known: true, Operators: true, DataLoaderWorkers: -1,
				Examples: map[string]string{"cpu_ops": "aten::mm", "dataloader_single": "a", "dataloader_workers": "b"}},
			phase: "inference (no backward operator)",
		},
		{
			name: "compiled implies PyTorch 2",
			rows: [][]any{op, {"t", 0, "compiled", "Torch-Compiled Region: 0/0"}, {"t", 0, "inductor_kernels", "triton_poi_fused_add_0"}},
			want: Workload{Known: true, Operators: true, Compiled: true, CompiledNs: 1000, InductorKernels: true, TorchMajor: 2, DataLoaderWorkers: -1,
				Examples: map[string]string{"cpu_ops": "aten::mm", "compiled": "Torch-Compiled Region: 0/0", "inductor_kernels": "triton_poi_fused_add_0"}},
			phase: "inference (no backward operator)",
		},
		{
			name: "Triton kernels and Dynamo frames alone do not prove torch.compile",
			rows: [][]any{op, {"t", 0, "inductor_kernels", "triton_red_fused_0"}, {"t", 0, "dynamo_frames", "torch/_dynamo/eval_frame.py(738): _fn"}},
			want: Workload{Known: true, Operators: true, InductorKernels: true, TorchMajor: 2, DataLoaderWorkers: -1,
				Examples: map[string]string{"cpu_ops": "aten::mm", "inductor_kernels": "triton_red_fused_0", "dynamo_frames": "torch/_dynamo/eval_frame.py(738): _fn"}},
			phase: "inference (no backward operator)",
		},
		{
			name: "parallelism and the stated PyTorch version",
			rows: [][]any{op, {"t", 0, "ddp", "DistributedDataParallel.forward"}, {"t", 0, "allreduce_in_backward", "c10d::allreduce_"},
				{"t", 0, "fsdp", "FSDP::pre_forward"}, {"t", 0, "torchrec", "## sparse_data_dist ##"}, {"t", 0, "torch_version", "2.6.0+cu124"}},
			want: Workload{Known: true, Operators: true, DDP: true, BackwardAllReduce: true, FSDP: true, TorchRec: true,
				TorchVersion: "2.6.0+cu124", TorchMajor: 2, DataLoaderWorkers: -1,
				Examples: map[string]string{"cpu_ops": "aten::mm", "ddp": "DistributedDataParallel.forward", "allreduce_in_backward": "c10d::allreduce_",
					"fsdp": "FSDP::pre_forward", "torchrec": "## sparse_data_dist ##", "torch_version": "2.6.0+cu124"}},
			phase: "inference (no backward operator)",
		},
		{
			name: "other ranks and traces are not read",
			rows: [][]any{op, {"t", 1, "backward", "MmBackward0"}, {"u", 0, "compiled", "CompiledFunction"}, {"t", 0, "unheard_of", "x"}},
			want: Workload{Known: true, Operators: true, DataLoaderWorkers: -1,
				Examples: map[string]string{"cpu_ops": "aten::mm", "unheard_of": "x"}},
			phase: "inference (no backward operator)",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev := workloadEvidence(tc.rows)
			got := newCtx(ev, nil).workload("t", 0)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("workload(t, 0) = %+v, want %+v", got, tc.want)
			}
			if p := got.Phase(); p != tc.phase {
				t.Errorf("Phase() = %q, want %q", p, tc.phase)
			}
			if exp := ReadWorkload(ev, "t", 0); !reflect.DeepEqual(exp, got) {
				t.Errorf("ReadWorkload = %+v, want the rules' %+v", exp, got)
			}
		})
	}
}

func TestTorchMajor(t *testing.T) {
	for v, want := range map[string]int{"2.6.0+cu124": 2, "1.13.1": 1, " 2.1 ": 2, "": 0, "nightly": 0, "0.4.1": 0, "10.0.0a0": 10} {
		if got := torchMajor(v); got != want {
			t.Errorf("torchMajor(%q) = %d, want %d", v, got, want)
		}
	}
}

// GEMMWork.Roofline: the floor is the larger of the compute and memory
// shares, each the time the sums take at the peak over the GPU time.
func TestGEMMWorkRoofline(t *testing.T) {
	for _, c := range []struct {
		name                   string
		g                      GEMMWork
		peak, mem              float64
		bound, compute, memory float64
		ok                     bool
	}{
		// 1 TFLOP in 10 ms at 1,000 TFLOP/s takes 1 ms; 1 GB at 2 TB/s 0.5 ms.
		{"compute-bound", GEMMWork{GPUNs: 10_000_000, FLOPs: 1e12, Bytes: 1e9}, 1000, 2, 0.1, 0.1, 0.05, true},
		// 30 GB at 3 TB/s takes 10 ms: at the memory roof.
		{"memory-bound", GEMMWork{GPUNs: 10_000_000, FLOPs: 1e11, Bytes: 3e10}, 1000, 3, 1, 0.01, 1, true},
		{"no peak", GEMMWork{GPUNs: 10_000_000, FLOPs: 1e12, Bytes: 1e9}, 0, 2, 0, 0, 0, false},
		{"no GPU time", GEMMWork{FLOPs: 1e12, Bytes: 1e9}, 1000, 2, 0, 0, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			bound, compute, memory, ok := c.g.Roofline(c.peak, c.mem)
			near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
			if ok != c.ok || !near(bound, c.bound) || !near(compute, c.compute) || !near(memory, c.memory) {
				t.Errorf("Roofline = %g, %g, %g, %v; want %g, %g, %g, %v", bound, compute, memory, ok, c.bound, c.compute, c.memory, c.ok)
			}
		})
	}
}

// TestCompiledDDPFixBySplit: a compiled DDP backward of one graph a step
// hands the gradients over only after it (check the DDP optimizer); one
// already split into several graphs leaves the last bucket and the
// peers' wait (negative_queue_length_a100: 7 graphs a step).
func TestCompiledDDPFixBySplit(t *testing.T) {
	for _, c := range []struct {
		graphs   int64
		want     string
		unwanted string
	}{
		{1, "optimize_ddp", "already split"},
		{7, "already split: it runs 7 compiled graphs a step (by graph breaks, or by Dynamo", "optimize_ddp"},
	} {
		w := Workload{Known: true, DDP: true, Compiled: true, BackwardGraphs: c.graphs}
		fix, _ := overlapFix(evidence.RankInfo{}, w, "all_reduce", false, allReduces{})
		if !strings.Contains(fix, c.want) || strings.Contains(fix, c.unwanted) {
			t.Errorf("%d graphs a step: %s", c.graphs, fix)
		}
	}
}
