package findings

import (
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/evidence"
)

// Workload is what the trace shows about one rank's workload and framework,
// read from the workload area. Fixes are scoped by it: a fix whose
// precondition it contradicts is never printed.
//
// The area (sql/workload.sql) has one row per feature the rank's events
// show; this struct reads them:
//
//	cpu_ops                   Operators
//	backward, optimizer       Training
//	compiled                  Compiled, TorchMajor 2
//	dynamo_frames             TorchMajor 2 (not Compiled: eager code calls Dynamo too)
//	inductor_kernels          InductorKernels (not Compiled: Triton kernels alone prove nothing)
//	ddp                       DDP
//	allreduce_in_backward     BackwardAllReduce
//	fsdp, torchrec            FSDP, TorchRec
//	torchrec_bucketize        TorchRecBucketize
//	hf_pipeline               HFPipeline
//	hf_chunk_forward          HFChunkForwards
//	hf_chunk_forward_gpu      HFChunkForwardGPUNs
//	aiter_torch_gemm(_gpu)    AITERTorchGEMMs, AITERTorchGEMMGPUNs
//	sglang_overlap            SGLangOverlap
//	dataloader_single         DataLoaderWorkers 0
//	dataloader_workers        DataLoaderWorkers 1
//	dataloader_gpu_idle       LoaderIdleNs, LoaderSpanNs
//	zero_grad_gpu_idle        ZeroGradIdleNs, ZeroGradSpanNs
//	optimizer_gpu_idle        OptimizerIdleNs, OptimizerSpanNs, OptimizerStep
//	foreach_ops               Foreach
//	compiled_gpu_idle         CompiledIdleNs
//	legacy_categories         Era "2021"
//	torch_version             TorchVersion, TorchMajor
//	python_version            PythonVersion
//	view_ops                  ViewOps, ViewOpsNs
//	gemm_shapes               GEMM
//	gemm_misaligned           Misaligned
//	activation_checkpointing  Checkpointing
//	conv_batch                ConvBatch
type Workload struct {
	// Known is false when the workload area is missing (an older bundle):
	// every field is then unknown, not false.
	Known bool
	// Training: backward or optimizer operators ran (autograd engine,
	// *Backward ops, Optimizer.step). False with Known means inference.
	Training bool
	// Compiled: torch.compile is in use (Torch-Compiled Region,
	// CompiledFunction, ## Call CompiledFxGraph, TorchDynamo frames).
	Compiled bool
	// CompiledNs: the time during which compiled code ran (the union of
	// the compiled feature's events, covered_ns; their sum where a
	// collection has no union): how much of the work runs compiled code.
	CompiledNs int64
	// DDP, FSDP, TorchRec: what the operators show of the parallelism.
	DDP, FSDP, TorchRec bool
	// AOTAutograd: AOTAutograd's CompiledFunction operators without any
	// other sign of PyTorch 2 (functorch's aot_function on PyTorch 1.13,
	// or a compile backend without Dynamo's frames): not counted as
	// torch.compile.
	AOTAutograd bool
	// BackwardGraphs is how many compiled backward graphs the rank runs a
	// step (AOTAutograd's CompiledFunctionBackward calls in the ops area
	// over the steps in the ranks area; every call where the rank has no
	// steps). Two or more: Dynamo's DDP optimizer split the graph, so DDP
	// gets the gradients between them (negative_queue_length_a100: 7 a
	// step). 0 where the ops area shows none.
	BackwardGraphs int64
	// TorchRecPipeline: TorchRec's sparse_data_dist ranges, so its train
	// pipeline already runs the input dist under the previous batch.
	TorchRecPipeline bool
	// TorchRecBucketize: the input dist bucketizes the features for
	// row-wise sharding (fbgemm::block_bucketize_sparse_features), and the
	// lengths it reads are the bucketized ones, which no data-loader field
	// supplies.
	TorchRecBucketize bool
	// HFPipeline: a Hugging Face transformers pipeline runs the loop (its
	// python frames): it builds the DataLoader, whose num_workers is the
	// pipeline call's.
	HFPipeline bool
	// HFChunkPipeline is the module of a transformers ChunkPipeline that
	// runs the loop (zero_shot_object_detection, ...; its python frames),
	// "" for none: transformers gives its DataLoader at most one worker.
	HFChunkPipeline string
	// HFChunkForwards is how many times that pipeline ran the model: its
	// _forward frames, one a chunk (0 without python stacks).
	HFChunkForwards int64
	// HFChunkForwardGPUNs is the GPU time of the work those runs launched
	// (0 without python stacks).
	HFChunkForwardGPUNs int64
	// AITERTorchGEMMs is how many GEMMs aiter's tuned gemm_a16w16 ran
	// through torch (its torch_gemm frames: F.linear, hipBLASLt's default
	// heuristic), what it does for a shape without a tuned entry, and
	// AITERTorchGEMMGPUNs the GPU time of the work they launched (0
	// without python stacks).
	AITERTorchGEMMs, AITERTorchGEMMGPUNs int64
	// SGLangOverlap: SGLang's overlap scheduler ran (its overlap_utils
	// python frames): --disable-overlap-schedule was not passed.
	SGLangOverlap bool
	// DataLoaderWorkers: 0 for _SingleProcessDataLoaderIter, 1 for
	// _MultiProcessingDataLoaderIter (workers, count unknown), -1 unknown.
	DataLoaderWorkers int
	// LoaderIdleNs is the GPU idle time inside the DataLoader's calls,
	// LoaderSpanNs those calls' time inside the rank's GPU span (both 0
	// when the trace has no such call there).
	LoaderIdleNs, LoaderSpanNs int64
	// ZeroGradIdleNs and ZeroGradSpanNs: the same for the optimizer's
	// Optimizer.zero_grad#... ranges.
	ZeroGradIdleNs, ZeroGradSpanNs int64
	// CompiledIdleNs is the GPU idle time inside the outermost
	// Torch-Compiled Region ranges: what a CUDA-graph replay of the
	// compiled model can reach.
	CompiledIdleNs int64
	// Era is the trace-format era when the categories date it
	// ("2021": Operator/Runtime/Kernel categories, about PyTorch 1.8-1.10),
	// "" when they do not.
	Era string
	// TorchMajor is the PyTorch major version the trace implies at least
	// (2 when torch.compile frames are present), 0 when unknown.
	TorchMajor int

	// Operators: CPU operators were captured. Without them Training false
	// says nothing (a trace of runtime calls and kernels only), and Phase
	// says "unknown".
	Operators bool
	// Backward: backward operators ran (Training may also come from an
	// optimizer step alone).
	Backward bool
	// InductorKernels: kernels named triton_* ran. Not proof of
	// torch.compile (vLLM and SGLang ship Triton kernels of their own).
	InductorKernels bool
	// BackwardAllReduce: c10d all-reduces ran inside backward operators:
	// gradients reduced from autograd hooks (DDP's reducer, or a compiled
	// equivalent), whether or not the DDP markers are in the trace.
	BackwardAllReduce bool
	// Shapes: the operators carry their input shapes (record_shapes=True),
	// which adds host time to every operator.
	Shapes bool
	// OptimizerIdleNs and OptimizerSpanNs: the GPU idle inside the
	// optimizer's Optimizer.step#... ranges and their time inside the GPU
	// span (the optimizer_gpu_idle feature); OptimizerStep is the first
	// range's name ("Optimizer.step#Adagrad.step").
	OptimizerIdleNs, OptimizerSpanNs int64
	OptimizerStep                    string
	// Foreach: the rank ran multi-tensor operators (aten::_foreach_*,
	// aten::_fused_*, the foreach_ops feature): some optimizer, or other
	// code, updates its tensors in a few launches, not one at a time.
	Foreach bool
	// ViewOps and ViewOpsNs: the aten::view and aten::as_strided calls and
	// their summed time (the view_ops feature): their mean is the host's
	// cost per operator call, profiler included.
	ViewOps, ViewOpsNs int64
	// GEMM: the bf16 and fp16 matrix products whose shapes were recorded
	// (the gemm_shapes feature), summed.
	GEMM GEMMWork
	// Misaligned: the GEMM calls whose recorded shapes and strides have a
	// leading dimension that is not a multiple of 16 bytes (the
	// gemm_misaligned feature), the heaviest shape in Examples.
	Misaligned struct{ Calls, GPUNs int64 }
	// ConvBatch: the batch most of the rank's forward convolutions take
	// (the first dimension of their recorded input; 0 when none was
	// recorded): the per-GPU batch of a CNN.
	ConvBatch int64
	// Checkpointing: activation checkpointing runs (python frames of
	// torch/utils/checkpoint.py; unknown without python stacks).
	Checkpointing bool
	// TorchVersion is the PyTorch version the trace's metadata states
	// ("2.6.0+cu124"), "" when it states none.
	TorchVersion string
	// PythonVersion is the Python version a process name states ("3.8"
	// of python3.8), "" when none does.
	PythonVersion string
	// Examples maps each feature the trace shows (the area's feature
	// names) to the first event name that shows it, for the report to
	// quote; nil when none shows.
	Examples map[string]string
}

// workload returns what the workload area shows for trace and rank.
func (c *ctx) workload(trace string, rank int) Workload {
	return readWorkload(c.ev, trace, rank)
}

// ReadWorkload returns what the workload area of ev shows for trace and
// rank: for the report and the viewer, which have the evidence but not the
// rules' context.
func ReadWorkload(ev *evidence.Evidence, trace string, rank int) Workload {
	return readWorkload(ev, trace, rank)
}

func readWorkload(ev *evidence.Evidence, trace string, rank int) Workload {
	w := Workload{DataLoaderWorkers: -1}
	t := ev.Table("workload")
	if t == nil {
		return w
	}
	w.Known = true
	single, workers, aot := false, false, false
	var aotNs int64
	for r := range t.Rows {
		if evidence.Str(t, r, "trace") != trace || int(evidence.Int(t, r, "rank")) != rank {
			continue
		}
		feature, name := evidence.Str(t, r, "feature"), evidence.Str(t, r, "example")
		if feature == "" {
			continue
		}
		if w.Examples == nil {
			w.Examples = map[string]string{}
		}
		// Rows of one feature differ by example only after a rollup of
		// several collections; the first row's example stands for them.
		if _, seen := w.Examples[feature]; !seen {
			w.Examples[feature] = name
		}
		switch feature {
		case "cpu_ops":
			w.Operators = true
		case "backward":
			w.Backward, w.Training = true, true
		case "optimizer":
			w.Training = true
		case "compiled":
			w.Compiled = true
			if t.Col("covered_ns") >= 0 && t.Rows[r][t.Col("covered_ns")] != nil {
				w.CompiledNs += evidence.Int(t, r, "covered_ns")
			} else {
				w.CompiledNs += evidence.Int(t, r, "total_ns")
			}
			w.TorchMajor = max(w.TorchMajor, 2)
		case "aot_autograd":
			aot = true
			if t.Col("covered_ns") >= 0 && t.Rows[r][t.Col("covered_ns")] != nil {
				aotNs += evidence.Int(t, r, "covered_ns")
			} else {
				aotNs += evidence.Int(t, r, "total_ns")
			}
		case "dynamo_frames":
			w.TorchMajor = max(w.TorchMajor, 2)
		case "inductor_kernels":
			w.InductorKernels = true
		case "ddp":
			w.DDP = true
		case "allreduce_in_backward":
			w.BackwardAllReduce = true
		case "fsdp":
			w.FSDP = true
		case "torchrec":
			w.TorchRec = true
		case "torchrec_pipeline":
			w.TorchRecPipeline = true
		case "torchrec_bucketize":
			w.TorchRecBucketize = true
		case "hf_pipeline":
			w.HFPipeline = true
		case "hf_chunk_pipeline":
			w.HFPipeline = true
			w.HFChunkPipeline = pipelineModule(name)
		case "hf_chunk_forward":
			w.HFPipeline = true
			w.HFChunkForwards += evidence.Int(t, r, "count")
			if w.HFChunkPipeline == "" {
				w.HFChunkPipeline = pipelineModule(name)
			}
		case "hf_chunk_forward_gpu":
			w.HFChunkForwardGPUNs += evidence.Int(t, r, "total_ns")
		case "aiter_torch_gemm":
			w.AITERTorchGEMMs += evidence.Int(t, r, "count")
		case "aiter_torch_gemm_gpu":
			w.AITERTorchGEMMGPUNs += evidence.Int(t, r, "total_ns")
		case "sglang_overlap":
			w.SGLangOverlap = true
		case "dataloader_single":
			single = true
		case "dataloader_workers":
			workers = true
		case "dataloader_gpu_idle":
			w.LoaderIdleNs, w.LoaderSpanNs = evidence.Int(t, r, "total_ns"), evidence.Int(t, r, "covered_ns")
		case "zero_grad_gpu_idle":
			w.ZeroGradIdleNs, w.ZeroGradSpanNs = evidence.Int(t, r, "total_ns"), evidence.Int(t, r, "covered_ns")
		case "compiled_gpu_idle":
			w.CompiledIdleNs = evidence.Int(t, r, "total_ns")
		case "record_shapes":
			w.Shapes = true
		case "optimizer_gpu_idle":
			w.OptimizerIdleNs, w.OptimizerSpanNs, w.OptimizerStep = evidence.Int(t, r, "total_ns"), evidence.Int(t, r, "covered_ns"), name
		case "foreach_ops":
			w.Foreach = true
		case "view_ops":
			w.ViewOps += evidence.Int(t, r, "count")
			w.ViewOpsNs += evidence.Int(t, r, "total_ns")
		case "activation_checkpointing":
			w.Checkpointing = true
		case "conv_batch":
			if n, err := strconv.ParseInt(name, 10, 64); err == nil && n > 0 {
				w.ConvBatch = n
			}
		case "gemm_misaligned":
			w.Misaligned.Calls += evidence.Int(t, r, "count")
			w.Misaligned.GPUNs += evidence.Int(t, r, "total_ns")
		case "gemm_shapes":
			w.GEMM.Add(GEMMWork{Calls: evidence.Int(t, r, "count"), GPUNs: evidence.Int(t, r, "total_ns"),
				FLOPs: evidence.Int(t, r, "gemm_flops"), Bytes: evidence.Int(t, r, "gemm_bytes")})
		case "legacy_categories":
			w.Era = "2021"
		case "python_version":
			w.PythonVersion = name
		case "torch_version":
			w.TorchVersion = name
			if m := torchMajor(name); m > 0 {
				w.TorchMajor = max(w.TorchMajor, m)
			}
		}
	}
	// AOTAutograd's operators are torch.compile's beside another sign of
	// PyTorch 2; alone they can be functorch's aot_function (PyTorch 1.13).
	if aot {
		if w.Compiled || w.InductorKernels || w.TorchMajor >= 2 {
			w.Compiled = true
			w.CompiledNs = max(w.CompiledNs, aotNs)
			w.TorchMajor = max(w.TorchMajor, 2)
		} else {
			w.AOTAutograd = true
		}
	}
	w.BackwardGraphs = backwardGraphs(ev, trace, rank)
	switch {
	case single && !workers:
		w.DataLoaderWorkers = 0
	case workers && !single:
		w.DataLoaderWorkers = 1
	}
	return w
}

// torchMajor reads the major version of "2.6.0+cu124"; 0 when it is not one.
func torchMajor(v string) int {
	head, _, _ := strings.Cut(strings.TrimSpace(v), ".")
	n, err := strconv.Atoi(head)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// Phase says in words whether the rank trains, for the report:
// "training (backward operators present)", "training (optimizer steps
// present)" when only an optimizer ran, "inference (no backward operator)"
// when operators were captured and none is a backward one, and "unknown"
// when the workload area is missing or the trace holds no CPU operator.
func (w Workload) Phase() string {
	switch {
	case !w.Known:
		return "unknown"
	case w.Backward:
		return "training (backward operators present)"
	case w.Training:
		return "training (optimizer steps present)"
	case !w.Operators:
		return "unknown"
	default:
		return "inference (no backward operator)"
	}
}

// pipelineModule is the module of a transformers pipeline frame:
// "transformers/pipelines/zero_shot_object_detection.py(65): __call__" is
// zero_shot_object_detection.
func pipelineModule(frame string) string {
	_, rest, ok := strings.Cut(frame, "transformers/pipelines/")
	if !ok {
		return ""
	}
	mod, _, _ := strings.Cut(rest, ".py")
	return mod
}

// GEMMWork is what the workload area's gemm_shapes feature shows: the bf16
// and fp16 matrix products whose operators recorded their shapes, the GPU
// time of the work they launched, and what their shapes make them compute
// and move at the least.
type GEMMWork struct {
	Calls, GPUNs, FLOPs, Bytes int64
}

// Add sums o into g.
func (g *GEMMWork) Add(o GEMMWork) {
	g.Calls += o.Calls
	g.GPUNs += o.GPUNs
	g.FLOPs += o.FLOPs
	g.Bytes += o.Bytes
}

// Roofline is the share of the device's roofline the GEMMs reach at the
// least: their FLOPs at the dense BF16/FP16 peak (TFLOP/s) and their bytes
// at the memory bandwidth (TB/s) take at least max(FLOPs/peak,
// bytes/bandwidth) of the time, a bound from the sums (each call's own
// bound, summed, can only be larger), so the share of their GPU time that
// bound takes is a floor on how close to the roofline they ran. compute
// and memory are the two shares apart; ok is false without GPU time or
// with a peak unknown.
func (g GEMMWork) Roofline(peakTFLOPs, memTBs float64) (bound, compute, memory float64, ok bool) {
	if g.GPUNs <= 0 || peakTFLOPs <= 0 || memTBs <= 0 {
		return 0, 0, 0, false
	}
	// TFLOP/s is 1e3 FLOP per ns; TB/s is 1e3 bytes per ns.
	compute = float64(g.FLOPs) / (peakTFLOPs * 1e3) / float64(g.GPUNs)
	memory = float64(g.Bytes) / (memTBs * 1e3) / float64(g.GPUNs)
	return max(compute, memory), compute, memory, true
}

// MisalignedShape reads the gemm_misaligned feature's example ("aten::bmm
// [16, 5185, 64] by [16, 64, 5185] c10::BFloat16 N=5185"): the operator
// and its operands' shapes, their type as the report names it (bf16,
// fp16, fp32), the leading dimension that is misaligned (K, N, or M of a
// transposed first operand), its size, and that size padded to a
// multiple of 16 bytes. ok is false where the example does not read so.
func (w Workload) MisalignedShape() (shape, dtype, dim string, size, padded int64, ok bool) {
	ex := strings.Fields(w.Examples["gemm_misaligned"])
	if len(ex) < 3 {
		return "", "", "", 0, 0, false
	}
	last, ty := ex[len(ex)-1], ex[len(ex)-2]
	d, v, found := strings.Cut(last, "=")
	n, err := strconv.ParseInt(v, 10, 64)
	if !found || err != nil || n <= 0 || (d != "K" && d != "N" && d != "M") {
		return "", "", "", 0, 0, false
	}
	elems := int64(8)
	switch ty {
	case "c10::BFloat16":
		dtype = "bf16"
	case "c10::Half":
		dtype = "fp16"
	case "float":
		dtype, elems = "fp32", 4
	default:
		return "", "", "", 0, 0, false
	}
	return strings.Join(ex[:len(ex)-2], " "), dtype, d, n, (n + elems - 1) / elems * elems, true
}

// backwardGraphs is Workload.BackwardGraphs: CompiledFunctionBackward
// calls of the rank in the ops area, a step.
func backwardGraphs(ev *evidence.Evidence, trace string, rank int) int64 {
	var calls, steps int64
	if t := ev.Table("ops"); t != nil {
		for r := range t.Rows {
			if evidence.Str(t, r, "trace") == trace && int(evidence.Int(t, r, "rank")) == rank && evidence.Str(t, r, "name") == "CompiledFunctionBackward" {
				calls += evidence.Int(t, r, "count")
			}
		}
	}
	if t := ev.Table("ranks"); t != nil && t.Col("steps") >= 0 {
		for r := range t.Rows {
			if evidence.Str(t, r, "trace") == trace && int(evidence.Int(t, r, "rank")) == rank {
				steps += evidence.Int(t, r, "steps")
			}
		}
	}
	if steps > 0 {
		return calls / steps
	}
	return calls
}
