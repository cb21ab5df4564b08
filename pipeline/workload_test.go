//go:build cgo

package pipeline_test

import (
	"context"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/findings"
	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/internal/testutil"
	"github.com/tracebook/tracebook/pipeline"
)

// workloadOf loads dir as one trace through the real DuckDB, collects the
// workload area for f and returns its rolled-up evidence.
func workloadOf(t *testing.T, dir string, f evidence.Filter) *evidence.Evidence {
	t.Helper()
	db := openDB(t)
	ctx := context.Background()
	if _, err := db.Load(ctx, []string{dir}, trace.LoadOptions{Name: "t"}, nil); err != nil {
		t.Fatalf("Load %s: %v", dir, err)
	}
	b, err := pipeline.CollectEvidence(ctx, db, []string{"workload"}, f, nil)
	if err != nil {
		t.Fatalf("CollectEvidence: %v", err)
	}
	return evidence.Rollup(b, evidence.Filter{})
}

// features lists the features a rank shows, but dataloader_gpu_idle,
// zero_grad_gpu_idle and compiled_gpu_idle: measurements of calls inside
// the GPU span, which some ranks of a job have and others not
// (dlrm_8rank), not traits of the framework (TestJudgementLoaderStart and
// the findings' tests check them).
func features(w findings.Workload) []string {
	var out []string
	for f := range w.Examples {
		if f != "dataloader_gpu_idle" && f != "zero_grad_gpu_idle" && f != "compiled_gpu_idle" {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

// TestWorkloadRealTraces: what the workload area reads from real traces.
// The traces under testdata always run; the shared collection's are
// skipped where it is absent.
func TestWorkloadRealTraces(t *testing.T) {
	type want struct {
		phase                       string
		compiled, inductor          bool
		ddp, allreduceBwd, torchrec bool
		workers, torchMajor         int
		era, torchVersion           string
		pythonVersion               string // a process name's, python3.8
		slowViews                   bool   // Workload.SlowViews
		features                    []string
		gemm                        findings.GEMMWork
		convBatch                   int64
	}
	tests := []struct {
		set     string // under testdata, or under the shared traces when shared
		shared  bool
		ranks   []int
		want    want
		example [2]string // a feature and the name it must quote, when set
	}{
		{"kineto/resnet50_num_workers_0", false, []int{0}, want{
			phase: "training (backward operators present)", workers: 0, era: "2021",
			features:  []string{"backward", "conv_batch", "cpu_ops", "dataloader_single", "legacy_categories", "optimizer", "optimizer_gpu_idle", "record_shapes", "view_ops"},
			convBatch: 32},
			[2]string{"dataloader_single", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"}},
		{"param/dlrm_8rank", false, []int{0}, want{
			phase: "training (backward operators present)", ddp: true, allreduceBwd: true, torchrec: true, workers: 0,
			features: []string{"allreduce_in_backward", "backward", "cpu_ops", "dataloader_single", "ddp", "optimizer", "optimizer_gpu_idle", "record_shapes", "torchrec", "torchrec_pipeline", "view_ops"}},
			[2]string{"ddp", "DistributedDataParallel.forward"}},
		{"hta/triton_example", false, []int{0}, want{
			phase: "inference (no backward operator)", compiled: true, inductor: true, workers: -1, torchMajor: 2, pythonVersion: "3.10",
			features: []string{"compiled", "cpu_ops", "inductor_kernels", "python_version", "record_shapes"}}, [2]string{}},
		{"hta/inference_rank1_oldcats", false, []int{1}, want{
			// Runtime calls and kernels only: no operator, so no phase.
			phase: "unknown", workers: -1, era: "2021",
			features: []string{"legacy_categories"}}, [2]string{}},
		{"tracelens/vllm_prefilldecode_piecewise_mi300x", false, []int{0}, want{
			// Compiled from python frames only (vLLM's compiled dispatch).
			// Its one bf16 GEMM with shapes is the LM head: [46, 2880] by
			// [2880, 201088].
			phase: "inference (no backward operator)", compiled: true, inductor: true, workers: -1, torchMajor: 2,
			features: []string{"compiled", "cpu_ops", "dynamo_frames", "gemm_shapes", "inductor_kernels", "record_shapes", "view_ops"},
			gemm:     findings.GEMMWork{Calls: 1, GPUNs: 346_637, FLOPs: 2 * 46 * 2880 * 201088, Bytes: 2 * (46*2880 + 2880*201088 + 46*201088)}}, [2]string{}},
		{"kineto/resnet50_num_workers_4", true, []int{0}, want{
			phase: "training (backward operators present)", workers: 1, era: "2021",
			features:  []string{"backward", "conv_batch", "cpu_ops", "dataloader_workers", "legacy_categories", "optimizer", "optimizer_gpu_idle", "record_shapes", "view_ops"},
			convBatch: 32}, [2]string{}},
		{"param/dlrm_8rank", true, []int{0, 1, 2, 3, 4, 5, 6, 7}, want{
			phase: "training (backward operators present)", ddp: true, allreduceBwd: true, torchrec: true, workers: 0,
			features: []string{"allreduce_in_backward", "backward", "cpu_ops", "dataloader_single", "ddp", "optimizer", "optimizer_gpu_idle", "record_shapes", "torchrec", "torchrec_pipeline", "view_ops"}}, [2]string{}},
		{"tracemap/vllm_h100_tp4_rank0", true, []int{0}, want{
			phase: "inference (no backward operator)", compiled: true, inductor: true, workers: -1, torchMajor: 2,
			features: []string{"compiled", "cpu_ops", "dynamo_frames", "inductor_kernels", "view_ops"}}, [2]string{}},
		{"hta/nccl_data_a100", true, []int{0}, want{
			phase: "training (backward operators present)", ddp: true, allreduceBwd: true, workers: -1, slowViews: true, pythonVersion: "3.10",
			features: []string{"allreduce_in_backward", "backward", "cpu_ops", "ddp", "foreach_ops", "optimizer", "optimizer_gpu_idle", "python_version", "view_ops"}}, [2]string{}},
		{"hta/negative_queue_length_a100", true, []int{0}, want{
			// AOTAutograd's CompiledFunction (PyTorch 2.0-era Inductor kernels
			// named triton__0d1d...) under DDP, with TorchRec's pipeline.
			phase: "training (backward operators present)", compiled: true, inductor: true, ddp: true, allreduceBwd: true,
			torchrec: true, workers: -1, torchMajor: 2,
			// Its input dist bucketizes the features for row-wise sharding.
			features: []string{"allreduce_in_backward", "aot_autograd", "backward", "cpu_ops", "ddp", "gemm_misaligned", "inductor_kernels", "optimizer", "optimizer_gpu_idle", "record_shapes", "torchrec", "torchrec_bucketize", "torchrec_pipeline", "view_ops"}}, [2]string{"torchrec_bucketize", "fbgemm::block_bucketize_sparse_features"}},
		{"hta/df_index_resolver_v100", true, []int{1}, want{
			// AOTAutograd's CompiledFunction with eager kernels only, captured
			// in November 2022: functorch's aot_function, not torch.compile.
			phase: "training (backward operators present)", allreduceBwd: true, workers: -1, pythonVersion: "3.8",
			features: []string{"allreduce_in_backward", "aot_autograd", "backward", "cpu_ops", "optimizer", "optimizer_gpu_idle", "python_version", "view_ops"}}, [2]string{"aot_autograd", "CompiledFunction"}},
		{"hta/trace_diff_control_a100", true, []int{3}, want{
			phase: "training (backward operators present)", ddp: true, allreduceBwd: true, torchrec: true, workers: 1, pythonVersion: "3.8",
			features: []string{"allreduce_in_backward", "backward", "cpu_ops", "dataloader_workers", "ddp", "gemm_misaligned", "optimizer", "optimizer_gpu_idle", "python_version", "record_shapes", "torchrec", "torchrec_pipeline"}}, [2]string{}},
		{"tracelens/mi300x_resnet_act_checkpoint", true, []int{0}, want{
			// Dynamo frames from activation checkpointing's
			// torch._disable_dynamo: PyTorch 2, not compiled.
			phase: "training (backward operators present)", ddp: true, allreduceBwd: true, workers: -1, torchMajor: 2,
			// Its aten::mm [1000, 10] by [10, 512] (K: the batch of 10) is the
			// classifier's weight gradient: the first operand is a
			// transposed view (strides [1, 1000]) leading with 1,000,
			// the second with 512: aligned.
			features:  []string{"activation_checkpointing", "allreduce_in_backward", "backward", "conv_batch", "cpu_ops", "ddp", "dynamo_frames", "foreach_ops", "gemm_shapes", "optimizer", "optimizer_gpu_idle", "record_shapes", "view_ops"},
			gemm:      findings.GEMMWork{Calls: 9, GPUNs: 61_071, FLOPs: 92_160_000, Bytes: 9_488_160},
			convBatch: 10}, [2]string{}},
		{"tracelens/h100_qwen15_05b_chat", true, []int{0}, want{
			phase: "inference (no backward operator)", workers: -1, torchMajor: 2, torchVersion: "2.6.0+cu124",
			// Its one misaligned-looking call, aten::bmm [1, 32, 1] by
			// [1, 1, 559] (the rotary embedding's outer product), has K 1:
			// a vector product, not read.
			features: []string{"cpu_ops", "gemm_shapes", "record_shapes", "torch_version", "view_ops"},
			gemm:     findings.GEMMWork{Calls: 168, GPUNs: 8_997_754, FLOPs: 5_514_536_681_472, Bytes: 9_079_160_832}}, [2]string{}},
	}
	for _, tc := range tests {
		name := tc.set
		if tc.shared {
			name = "shared/" + name
		}
		t.Run(name, func(t *testing.T) {
			var dir string
			if tc.shared {
				if testing.Short() {
					t.Skip("loads a shared trace set")
				}
				dir = filepath.Join(testutil.SharedTraces(t), tc.set)
			} else {
				dir = filepath.Join(testutil.Testdata(t), tc.set)
			}
			ev := workloadOf(t, dir, evidence.Filter{})
			for _, rank := range tc.ranks {
				w := findings.ReadWorkload(ev, "t", rank)
				got := want{phase: w.Phase(), compiled: w.Compiled, inductor: w.InductorKernels, ddp: w.DDP,
					allreduceBwd: w.BackwardAllReduce, torchrec: w.TorchRec, workers: w.DataLoaderWorkers,
					torchMajor: w.TorchMajor, era: w.Era, torchVersion: w.TorchVersion, pythonVersion: w.PythonVersion, features: features(w), gemm: w.GEMM,
					convBatch: w.ConvBatch}
				_, got.slowViews = w.SlowViews()
				exp := tc.want
				if f := tc.example[0]; f != "" && w.Examples[f] != tc.example[1] {
					t.Errorf("rank %d: %s example %q, want %q", rank, f, w.Examples[f], tc.example[1])
				}
				if !w.Known {
					t.Errorf("rank %d: workload not Known", rank)
				}
				if w.FSDP {
					t.Errorf("rank %d: FSDP shown (%q); no trace here runs FSDP", rank, w.Examples["fsdp"])
				}
				if w.Training != (exp.phase == "training (backward operators present)") {
					t.Errorf("rank %d: Training = %v with phase %q", rank, w.Training, exp.phase)
				}
				if !reflect.DeepEqual(got, exp) {
					t.Errorf("rank %d:\n got  %+v\n want %+v\n examples %q", rank, got, exp, w.Examples)
				}
			}
		})
	}
}

// TestWorkloadWindow: the python frames the area reads from events honour
// the window, as evidence_base_events does: a window before the first
// compiled frame shows none, and the whole trace's count is events'.
func TestWorkloadWindow(t *testing.T) {
	dir := filepath.Join(testutil.Testdata(t), "tracelens", "vllm_prefilldecode_piecewise_mi300x")
	db := openDB(t)
	ctx := context.Background()
	if _, err := db.Load(ctx, []string{dir}, trace.LoadOptions{Name: "t"}, nil); err != nil {
		t.Fatal(err)
	}
	const direct = `WITH t0 AS (SELECT min(first_ts_ns) AS t0 FROM traces)
		SELECT count(*) AS n, coalesce(min(ts_ns) - any_value(t0.t0), -1) AS first_ns FROM events, t0
		WHERE kind = 'python' AND (regexp_matches(name, '(^|/)(torch/_inductor/|torch/_functorch/_aot_autograd/runtime_wrappers\.py|vllm/compilation/(wrapper|backends|piecewise_backend|caching|compiler_interface)\.py)')
		    OR regexp_matches(name, '(^|/)torch/_dynamo/utils\.py\(\d+\): record_pregraph_bytecode'))
		  AND ($1::BIGINT <= 0 OR ts_ns - t0.t0 >= $1::BIGINT) AND ($2::BIGINT <= 0 OR ts_ns - t0.t0 < $2::BIGINT)`
	whole, err := db.Query(ctx, direct, 0, int64(0), int64(0))
	if err != nil {
		t.Fatal(err)
	}
	first := evidence.Int(whole, 0, "first_ns")
	if evidence.Int(whole, 0, "n") == 0 || first <= 0 {
		t.Fatalf("no compiled-code frame after the first event: %v", whole.Rows)
	}
	for _, f := range []evidence.Filter{{}, {WindowStartNs: 0, WindowEndNs: first}, {WindowStartNs: first, WindowEndNs: 0}} {
		b, err := pipeline.CollectEvidence(ctx, db, []string{"workload"}, f, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := db.Query(ctx, direct, 0, f.WindowStartNs, f.WindowEndNs)
		if err != nil {
			t.Fatal(err)
		}
		// The compiled rows are CPU markers (none in this trace) plus these frames.
		var got int64
		wl := b.Tables["workload"]
		for r := range wl.Rows {
			if evidence.Str(wl, r, "feature") == "compiled" {
				got += evidence.Int(wl, r, "count")
			}
		}
		if w := evidence.Int(want, 0, "n"); got != w {
			t.Errorf("window %d..%d: compiled count %d, events say %d", f.WindowStartNs, f.WindowEndNs, got, w)
		}
		ev := evidence.Rollup(b, evidence.Filter{})
		if c := findings.ReadWorkload(ev, "t", 0).Compiled; c != (evidence.Int(want, 0, "n") > 0) {
			t.Errorf("window %d..%d: Compiled = %v", f.WindowStartNs, f.WindowEndNs, c)
		}
	}
}

// TestGEMMLead: sql/views.sql's tb_gemm_lead names the dimension an operand
// of a GEMM leads with, from its recorded strides, as gemm_misaligned reads
// it.
func TestGEMMLead(t *testing.T) {
	db := openDB(t)
	for _, c := range []struct {
		name, dims, strides, want string
	}{
		{"no strides recorded: row-major", "[4096, 2798]", "NULL", "K"},
		{"row-major", "[4096, 2798]", "[2798, 1]", "K"},
		// mi300x_resnet_act_checkpoint's weight gradient: grad_out.t().
		{"transposed", "[1000, 10]", "[1, 1000]", "M"},
		// h100_owlv2's attention scores: k transposed, batched.
		{"batched, transposed", "[16, 64, 5185]", "[331840, 1, 64]", "M"},
		{"a column of one", "[2048, 1]", "[1, 1]", "K"},
		{"a slice of wider rows", "[5185, 64]", "[192, 1]", "?"},
		{"expanded", "[10, 512]", "[0, 1]", "?"},
		{"strides of another rank", "[10, 512]", "[1]", "K"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tb, err := db.Query(context.Background(),
				"SELECT tb_gemm_lead("+c.dims+"::BIGINT[], "+c.strides+"::BIGINT[], 'K', 'M') AS lead", 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := tb.Rows[0][0]; got != c.want {
				t.Errorf("tb_gemm_lead(%s, %s) = %v, want %s", c.dims, c.strides, got, c.want)
			}
		})
	}
}

// TestWorkloadChunkRuns: h100_owlv2's zero-shot detection pipeline ran
// the model 5 times, one _forward frame per candidate label, and those
// runs launched 552 ms of its 567 ms of GPU work (the crossview's
// modeling_owlv2 forward: 552.216 ms), which the DataLoader fix's reach
// beyond its own share rests on.
func TestWorkloadChunkRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a shared trace set")
	}
	ev := workloadOf(t, filepath.Join(testutil.SharedTraces(t), "tracelens/h100_owlv2"), evidence.Filter{})
	w := findings.ReadWorkload(ev, "t", 0)
	if w.HFChunkPipeline != "zero_shot_object_detection" || w.HFChunkForwards != 5 || w.HFChunkForwardGPUNs != 552_216_162 {
		t.Errorf("pipeline %q, %d runs, %d ns of GPU work; want zero_shot_object_detection, 5, 552216162",
			w.HFChunkPipeline, w.HFChunkForwards, w.HFChunkForwardGPUNs)
	}
}

// TestWorkloadAiterTorchGEMM: sglang_qwen3_prefilldecode_mi300x's GEMMs
// went through aiter's tuned gemm_a16w16, which ran all 144 through torch
// (its torch_gemm frames), launching 420 ms of its 493 ms of kernel time.
func TestWorkloadAiterTorchGEMM(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a shared trace set")
	}
	ev := workloadOf(t, filepath.Join(testutil.SharedTraces(t), "tracelens/sglang_qwen3_prefilldecode_mi300x"), evidence.Filter{})
	w := findings.ReadWorkload(ev, "t", 0)
	if w.AITERTorchGEMMs != 144 || w.AITERTorchGEMMGPUNs != 419_869_417 {
		t.Errorf("%d calls, %d ns of GPU work; want 144, 419869417", w.AITERTorchGEMMs, w.AITERTorchGEMMGPUNs)
	}
}

// TestWorkloadIdleInsideRanges: the GPU idle time inside the DataLoader's
// calls and the outermost compiled regions, each range clipped to the
// rank's GPU span less the busy segments' parts inside it. The regions
// nest on one thread (one starts with the outer one, one ends with it)
// and sit alone on another.
func TestWorkloadIdleInsideRanges(t *testing.T) {
	const region = "Torch-Compiled Region: 0/0"
	k := newJT(jH100, 0, 1)
	// Busy segments [100, 200), [300, 400), [600, 700), [1000, 1100) us.
	for _, at := range []float64{100, 300, 600, 1000} {
		k.kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", at-50, at, 100)
	}
	next := "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
	k.op("user_annotation", next, 0, 120)   // clipped to [100, 120): busy throughout
	k.op("user_annotation", next, 150, 500) // [150, 650): 200 busy, 300 idle
	k.op("cpu_op", region, 250, 650)        // outermost: [250, 900), 200 busy
	k.op("cpu_op", region, 250, 550)        // starts with it, ends before: nested
	k.op("cpu_op", region, 300, 200)        // inside it: nested
	k.op("cpu_op", region, 400, 500)        // ends with it: nested
	k.ext++
	k.ev("cpu_op", region, 100, 101, 310, 140, map[string]any{"External id": k.ext}) // alone on its thread: [310, 450), 90 busy
	db := openDB(t)
	ctx := context.Background()
	if _, err := db.Load(ctx, []string{k.write(t, t.TempDir(), "ranges.json")}, trace.LoadOptions{Name: "t"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline.CollectEvidence(ctx, db, []string{"workload"}, evidence.Filter{}, nil); err != nil {
		t.Fatal(err)
	}
	got, err := db.Query(ctx, `SELECT feature || ' ' || count || ' ' || total_ns || ' ' || covered_ns FROM evidence_workload
		WHERE feature IN ('dataloader_gpu_idle', 'compiled_gpu_idle') ORDER BY feature`, 0)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, r := range got.Rows {
		rows = append(rows, r[0].(string))
	}
	want := []string{
		"compiled_gpu_idle 2 500000 790000",   // (650 - 200) + (140 - 90) us idle, of 650 + 140
		"dataloader_gpu_idle 2 300000 520000", // 0 + 300 us idle, of 20 + 500
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("idle inside the ranges: %q, want %q", rows, want)
	}
}
