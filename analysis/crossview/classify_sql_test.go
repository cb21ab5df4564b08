//go:build cgo && unix

package crossview_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/internal/duck"
	"github.com/tracebook/tracebook/pipeline"
	tbsql "github.com/tracebook/tracebook/sql"
)

// The cross-view, the evidence and the Perfetto windows rate the same event
// the same way: the crossview preset's class and sync columns (which Build
// reads) and the Perfetto rows' sync and copy kinds (which the findings'
// marks read) agree with the macros of sql/views.sql that the evidence
// presets call. The names are taken from the shared traces where the
// comment names one; the others are spelled as the library writes them.

// kernelCases: kernel names and their class.
var kernelCases = []struct {
	kind, name, want string
}{
	// NCCL: both kernel spellings (ncclKernel_ before 2.19, ncclDevKernel_ after).
	{"kernel", "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", "COMM"},                               // hta/df_index_resolver_v100
	{"kernel", "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", "COMM"}, // param/dlrm_8rank
	{"kernel", "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "COMM"},                  // tracelens/b200_eager
	{"kernel", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", "COMM"},   // tracemap/vllm_h100_tp4_rank0
	{"kernel", "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "COMM"},                           //
	// RCCL: ncclDevKernel_Generic names no operation; rccl*-named kernels.
	{"kernel", "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", "COMM"},   // tracelens/mi300x_resnet_act_checkpoint
	{"kernel", "ncclDevKernel_Generic_2(ncclDevKernelArgsStorage<4096ul>)", "COMM"}, // tracemap/vllm_mi300x_tp4_rank0
	{"kernel", "rccl_AllReduce_RING_LL_Sum_bf16", "COMM"},
	// HCCL (Habana/Ascend), matched case-insensitively at the start.
	{"kernel", "hcclAllReduce", "COMM"},
	{"kernel", "HCCL_AllGather", "COMM"},
	// vLLM's custom all-reduce, CUDA and HIP.
	{"kernel", "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 4>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)", "COMM"},   // tracemap/vllm_h100_tp4_rank0
	{"kernel", "void vllm::cross_device_reduce_1stage<__hip_bfloat16, 4>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __hip_bfloat16*, int, int)", "COMM"}, // tracemap/vllm_mi300x_tp4_rank0
	{"kernel", "void vllm::cross_device_reduce_2stage<half, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, half*, int, int)", "COMM"},
	// DeepEP: upstream (deep_ep::) and DeepSeek's build (dpsk::ep::).
	{"kernel", "void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*, long*, float*, int*, int*, int4 const*, float const*, long const*, float const*, bool const*, int const*, int, int, int, int, int, int, int, int, void**, int, int, int)", "COMM"},
	{"kernel", "void deep_ep::internode_ll::combine<7168, 9>(void*, void*, int*, void*, void const*, long const*, int const*, long const*, int*, int*, void*, long, int, int, int, int, int, int, int, int, bool)", "COMM"},
	{"kernel", "void dpsk::ep::cuda::get_dispatch_layout<256, 32, 8>(long const*, int*, int*, int*, bool*, int, int, int, int)", "COMM"}, // deepseek/train_h800_ep64
	{"kernel", "void dpsk::ep::internode::cached_notify<false>(int, int, int, int, int*, int, int, int const*, int const*, int*, void*, void**, int**, int, int, int, int*, bool, int)", "COMM"},
	// PyTorch symmetric memory.
	{"kernel", "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long, unsigned int**, unsigned long, unsigned long)", "COMM"}, // tracelens/b200_eager
	{"kernel", "void (anonymous namespace)::two_shot_all_reduce_kernel<float, 16, 8>(float**, unsigned long, unsigned long, unsigned int**, unsigned long, unsigned long)", "COMM"},
	{"kernel", "void (anonymous namespace)::multimem_all_gather_kernel<16>(char*, char*, unsigned long, unsigned int**, unsigned long, unsigned long)", "COMM"},
	// Names that say all_reduce, reduce, gather or scatter and are computation.
	{"kernel", "triton_poi_fused_add_all_reduce_bitwise_and_bitwise_or_embedding_ge_lt_masked_fill_mul_sub_0", "COMP"}, // tracemap/vllm_h100_tp4_rank0: torch.all fused by Inductor
	{"kernel", "triton_red_fused_all_reduce_0", "COMP"},
	{"kernel", "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4> >(at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4>)", "COMP"}, // tracemap/vllm_h100_tp4_rank0
	{"kernel", "void cuda::reduce_fused_impl<__nv_bfloat16, false, false>(int4 const*, float const*, int const*, int4*, int, int, int, __nv_fp8_interpretation_t, float const*, float const*)", "COMP"},                               // deepseek/train_h800_ep64
	{"kernel", "void cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel>(dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel::Params)", "COMP"},                                                                   // deepseek/train_h800_ep64
	{"kernel", "void paged_attention_ll4mi_reduce_kernel<__hip_bfloat16, __hip_bfloat16, 128, 128, 256, 1>(__hip_bfloat16*, float const*, float const*, __hip_bfloat16 const*, int const*, int const*, int, float const*)", "COMP"},   // tracemap/vllm_mi300x_tp4_rank0
	{"kernel", "void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, long, long, long, bool)", "COMP"},                                                                                                 // tracelens/b200_eager
	{"kernel", "reduce_segments", "COMP"},                   // tracelens/vllm_decode_full_mi300x
	{"kernel", "_finalize_matmul_scatter_bf16", "COMP"},     // tracelens/vllm_decode_full_mi300x
	{"kernel", "aten::scatter_add.out-dtype_Float", "COMP"}, // hta/mtia_single_rank
	// Device transfers written as kernels: memory, as HTA's ^dma.
	{"kernel", "dma_request", "MEM"}, // hta/mtia_single_rank: args direction and size
	{"kernel", "void splitKreduce_kernel<float, float, float, float>(cublasSplitKParams<float>, float const*, float const*, float*, float const*, float const*, float const*)", "COMP"}, // kineto/resnet50_num_workers_0
	// A name of NCCL's that is not at the start is not enough.
	{"kernel", "my_nccl_wrapper_kernel", "COMP"},
	// Copies, memsets, GPU-side waits; host events have no class.
	{"gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", "MEM"},
	{"gpu_memset", "Memset (Device)", "MEM"},
	{"gpu_sync", "Stream Wait Event", "SYNC"}, // hta/event_sync_multi_stream
	{"gpu_sync", "Event Sync", "SYNC"},
	{"cpu_op", "nccl:all_reduce", ""},
	{"cpu_op", "symm_mem::multimem_all_reduce_", ""}, // tracelens/b200_eager
	{"runtime", "cudaLaunchKernel", ""},
}

// syncCases: host calls, the GPU copy each launched ("" = none), and how the
// call synchronizes.
var syncCases = []struct {
	kind, name, copy, want string
}{
	{"runtime", "cudaStreamSynchronize", "", "blocking"},
	{"runtime", "cudaDeviceSynchronize", "", "blocking"},
	{"runtime", "cudaEventSynchronize", "", "blocking"}, // hta/nccl_data_a100
	{"runtime", "hipDeviceSynchronize", "", "blocking"},
	{"runtime", "hipEventSynchronize", "", "blocking"}, // tracelens/vllm_decode_full_mi300x
	{"driver", "cuStreamSynchronize", "", "blocking"},
	{"driver", "cuCtxSynchronize", "", "blocking"},
	{"runtime", "cudaStreamWaitEvent", "", "stream"},
	{"runtime", "hipStreamWaitEvent", "", "stream"}, // tracemap/vllm_mi300x_tp4_rank0
	{"driver", "cuStreamWaitEvent", "", "stream"},
	// Synchronous copies block whatever they copy.
	{"runtime", "cudaMemcpy", "", "blocking"}, // hta/cupti_profiler
	{"runtime", "cudaMemcpy", "Memcpy HtoD (Pinned -> Device)", "blocking"},
	{"runtime", "hipMemcpyWithStream", "Memcpy HtoD (Host -> Device)", "blocking"},   // hta/amd_mi250_minitoy
	{"runtime", "hipMemcpyWithStream", "Memcpy DtoD (Device -> Device)", "blocking"}, // tracelens/xdit_sd35_mi300x
	{"runtime", "hipMemcpyWithStream", "Memcpy DtoH (Device -> Host)", "blocking"},   // tracemap/vllm_mi300x_tp4_rank0
	{"driver", "cuMemcpyDtoH_v2", "", "blocking"},
	{"driver", "cuMemcpyHtoD_v2", "", "blocking"},
	{"runtime", "cudaMemcpy2D", "", "blocking"},
	// Async copies block when the copy is pageable, or device to host into
	// memory the name does not call pinned.
	{"runtime", "cudaMemcpyAsync", "Memcpy DtoH (Device -> Pageable)", "blocking"}, // tracemap/vllm_h100_tp4_rank0
	{"runtime", "cudaMemcpyAsync", "Memcpy HtoD (Pageable -> Device)", "blocking"}, // hta/critical_path_alexnet
	{"runtime", "cudaMemcpyAsync", "Memcpy DtoH", "blocking"},                      // a name without memory kinds
	{"runtime", "hipMemcpyAsync", "Memcpy DtoH (Device -> Host)", "blocking"},      // ROCm names no memory kind
	// tracelens/h100_qwen15_05b_chat: a 12 us call; the 8 us
	// cudaStreamSynchronize after it is the wait.
	{"runtime", "cudaMemcpyAsync", "Memcpy DtoH (Device -> Pinned)", ""},
	{"runtime", "cudaMemcpyAsync", "Memcpy HtoD (Pinned -> Device)", ""}, // tracemap/vllm_h100_tp4_rank0
	{"runtime", "cudaMemcpyAsync", "Memcpy DtoD (Device -> Device)", ""}, // deepseek/train_h800_ep64
	{"runtime", "hipMemcpyAsync", "Memcpy HtoD (Host -> Device)", ""},    // tracelens/vllm_prefilldecode_piecewise_mi300x
	{"runtime", "cudaMemcpyAsync", "", ""},                               // hta/cupti_profiler: no copy recorded
	{"driver", "cuMemcpyDtoHAsync_v2", "", ""},
	// Not syncs.
	{"runtime", "cudaMemsetAsync", "", ""},
	{"runtime", "cudaLaunchKernel", "", ""},
	{"runtime", "cudaGraphLaunch", "", ""},
	{"cpu_op", "cudaStreamSynchronize", "", ""},
	// Scalar reads: the operator blocks, whatever copy it makes.
	{"cpu_op", "aten::item", "", "blocking"},
	{"cpu_op", "aten::_local_scalar_dense", "", "blocking"},
	{"cpu_op", "aten::is_nonzero", "", "blocking"},
	{"cpu_op", "aten::nonzero", "", ""},
}

func openMemory(t *testing.T) *duck.DB {
	t.Helper()
	db, err := duck.Open("", duck.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// cats are the Kineto categories the cases' kinds are written with.
var cats = map[string]string{
	"kernel": "kernel", "gpu_memcpy": "gpu_memcpy", "gpu_memset": "gpu_memset", "gpu_sync": "cuda_sync",
	"cpu_op": "cpu_op", "runtime": "cuda_runtime", "driver": "cuda_driver",
}

// casesTrace writes a trace holding every case: each kernel case on the
// GPU with a launch of its own correlation, each sync case on the host
// with, where it names one, the GPU copy of its correlation. It returns
// the trace's path.
func casesTrace(t *testing.T) string {
	t.Helper()
	var ev []map[string]any
	ts, corr := 1000, 1
	add := func(kind, name string, pid, tid, c int) {
		e := map[string]any{"ph": "X", "cat": cats[kind], "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": 5}
		if c > 0 {
			e["args"] = map[string]any{"correlation": c}
		}
		ev = append(ev, e)
		ts += 10
	}
	for _, tc := range kernelCases {
		if tc.kind == "cpu_op" || tc.kind == "runtime" {
			add(tc.kind, tc.name, 1, 1, 0)
			continue
		}
		add("runtime", "cudaLaunchKernel", 1, 1, corr)
		add(tc.kind, tc.name, 0, 7, corr)
		corr++
	}
	for _, tc := range syncCases {
		c := 0
		if tc.kind != "cpu_op" {
			c = corr
			corr++
		}
		add(tc.kind, tc.name, 1, 1, c)
		if tc.copy != "" {
			add("gpu_memcpy", tc.copy, 0, 7, c)
		}
	}
	data, err := json.Marshal(map[string]any{"traceEvents": ev})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cases.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCrossViewRatesAsEvidence loads the cases, reads the cross-view's
// input as Build gets it, and checks each operation's class and each
// frame's sync against the case and against the evidence's own reading of
// the same event (evidence_base_events.class, and the sync preset's
// tb_sync_call with the launched copy).
func TestCrossViewRatesAsEvidence(t *testing.T) {
	db := openMemory(t)
	ctx := context.Background()
	if _, err := db.Load(ctx, []string{casesTrace(t)}, trace.LoadOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	in, err := pipeline.CrossViewInput(ctx, db, evidence.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if err := pipeline.BuildEvidenceBase(ctx, db, evidence.Filter{}); err != nil {
		t.Fatal(err)
	}
	evClass := map[string]string{}
	tb, err := db.Query(ctx, `SELECT DISTINCT kind || '|' || name, class FROM evidence_base_events WHERE class IS NOT NULL`, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range tb.Rows {
		evClass[r[0].(string)] = r[1].(string)
	}
	opClass := map[string]string{}
	for i := range in.Ops {
		o := &in.Ops[i]
		opClass[o.Kind.String()+"|"+in.OpName(o)] = o.Class.String()
	}
	for _, tc := range kernelCases {
		if tc.kind == "cpu_op" || tc.kind == "runtime" {
			continue
		}
		key := tc.kind + "|" + tc.name
		got, ok := opClass[key]
		if tc.kind == "gpu_sync" {
			// GPU-side waits are no operation of the views (no GPU time of
			// their own); the evidence rates them.
			ok, got = true, evClass[key]
		}
		if !ok {
			t.Errorf("%s %q: no operation in the cross-view input", tc.kind, tc.name)
			continue
		}
		if got != tc.want || evClass[key] != tc.want {
			t.Errorf("class of %s %q: cross-view %q, evidence %q, want %q", tc.kind, tc.name, got, evClass[key], tc.want)
		}
	}
	// The evidence's sync rating of each host call, by its correlation.
	evSync := map[string]string{}
	tb, err = db.Query(ctx, `WITH cp AS (
			SELECT trace, rank, correlation, any_value(name) AS copy_name FROM events
			WHERE kind = 'gpu_memcpy' AND correlation IS NOT NULL GROUP BY ALL)
		SELECT k.ts_ns, coalesce(CASE WHEN k.kind = 'cpu_op' AND tb_scalar_read(k.name) THEN 'blocking'
			ELSE tb_sync_call(k.kind, k.api, k.name, tb_copy_waits(cp.copy_name)) END, '')
		FROM events k LEFT JOIN cp ON cp.trace = k.trace AND cp.rank = k.rank AND cp.correlation = k.correlation
		WHERE k.kind IN ('runtime', 'driver', 'cpu_op')`, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range tb.Rows {
		evSync[fmt.Sprint(r[0])] = r[1].(string)
	}
	checked := 0
	for _, f := range in.Frames {
		for _, tc := range syncCases {
			if f.Kind.String() != tc.kind || f.Name != tc.name || !launched(in, f, tc.copy) {
				continue
			}
			if f.Blocking != (tc.want == "blocking") || evSync[fmt.Sprint(f.TsNs)] != tc.want {
				t.Errorf("%s %s launching %q: cross-view blocking %v, evidence %q, want %q", tc.kind, tc.name, tc.copy, f.Blocking, evSync[fmt.Sprint(f.TsNs)], tc.want)
			}
			checked++
			break
		}
	}
	if checked < len(syncCases) {
		t.Errorf("compared %d host calls of %d sync cases (%d frames)", checked, len(syncCases), len(in.Frames))
	}
	// The rows of a Perfetto window (whose sync rating the findings' marks
	// read) rate each host call as the evidence does, and give a copy's
	// memory kinds, or those of the copy a call launched, as the memcpy
	// area does (tb_copy_src, tb_copy_dst).
	p, _ := tbsql.Lookup("perfetto")
	pf, err := db.Query(ctx, p.SQL, 0, "cases", 0, int64(0), int64(1)<<50, int64(1)<<20, int64(1)<<20)
	if err != nil {
		t.Fatal(err)
	}
	kinds, err := db.Query(ctx, `SELECT DISTINCT name, coalesce(tb_copy_src(name), ''), coalesce(tb_copy_dst(name), '') FROM events WHERE kind = 'gpu_memcpy'`, 0)
	if err != nil {
		t.Fatal(err)
	}
	src, dst := map[string]string{}, map[string]string{}
	for _, r := range kinds.Rows {
		src[r[0].(string)], dst[r[0].(string)] = r[1].(string), r[2].(string)
	}
	str := func(r []any, col string) string { s, _ := r[pf.Col(col)].(string); return s }
	rated := 0
	for _, r := range pf.Rows {
		if str(r, "row_kind") != "event" {
			continue
		}
		switch kind := str(r, "kind"); kind {
		case "runtime", "driver":
			ts := fmt.Sprint(r[pf.Col("ts_ns")])
			if got, want := str(r, "sync"), evSync[ts]; got != want {
				t.Errorf("Perfetto row %s %s: sync %q, evidence %q", kind, str(r, "name"), got, want)
			}
			rated++
		case "gpu_memcpy":
			if n := str(r, "name"); str(r, "src_kind") != src[n] || str(r, "dst_kind") != dst[n] {
				t.Errorf("Perfetto row %q: kinds %q -> %q, memcpy area %q -> %q", n, str(r, "src_kind"), str(r, "dst_kind"), src[n], dst[n])
			}
		}
	}
	if rated == 0 {
		t.Error("no host call in the Perfetto rows")
	}
}

// launched reports whether frame f launched a GPU copy named copyName
// ("" = none).
func launched(in *crossview.Input, f crossview.Frame, copyName string) bool {
	for i := range in.Ops {
		o := &in.Ops[i]
		if o.Launch == f.ID {
			return in.OpName(o) == copyName
		}
	}
	return copyName == ""
}

// TestCrossViewRatesAsEvidenceOnSharedTraces: on shared traces, every
// operation of the cross-view input has the class the evidence gives the
// same event.
func TestCrossViewRatesAsEvidenceOnSharedTraces(t *testing.T) {
	if testing.Short() {
		t.Skip("loads shared traces")
	}
	for _, dir := range []string{"tracemap/vllm_h100_tp4_rank0", "tracelens/b200_eager", "param/dlrm_8rank", "deepseek/train_h800_ep64"} {
		t.Run(dir, func(t *testing.T) {
			db := load(t, dir)
			ctx := context.Background()
			in, err := pipeline.CrossViewInput(ctx, db, evidence.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			tb, err := db.Query(ctx, `SELECT DISTINCT kind, name, tb_kernel_class(kind, name)
				FROM events WHERE kind IN ('kernel', 'gpu_memcpy', 'gpu_memset')`, 0)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{}
			for _, r := range tb.Rows {
				want[r[0].(string)+"|"+r[1].(string)] = r[2].(string)
			}
			comm := 0
			for i := range in.Ops {
				o := &in.Ops[i]
				if w := want[o.Kind.String()+"|"+in.OpName(o)]; o.Class.String() != w {
					t.Fatalf("%s %q: cross-view class %q, evidence %q", o.Kind, in.OpName(o), o.Class, w)
				}
				if o.Class == crossview.ClassComm {
					comm++
				}
			}
			if len(in.Ops) == 0 || (dir != "tracelens/b200_eager" && comm == 0) {
				t.Errorf("%d operations, %d of class COMM", len(in.Ops), comm)
			}
		})
	}
}
