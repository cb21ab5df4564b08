package findings_test

import (
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/findings"
	"github.com/tracebook/tracebook/analysis/table"
)

// rig is one rank's hand-made evidence for the lever rules.
type rig struct {
	producer, platform, gpu, format string
	totalMem                        int64
	graphs                          bool
	busy, idle                      int64
	kernels                         [][]any // kernelRow rows
	features                        []string
	memory                          *table.Table
	ops                             [][]any // opRow rows
	graphRows                       [][]any // graphRow rows
}

func (g rig) bundle() *evidence.Bundle {
	b := evidence.NewBundle()
	platform := g.platform
	if platform == "" {
		platform = "cuda"
	}
	b.Traces = &table.Table{Columns: cols("trace rank rank_source producer platform gpu_model gpu_total_mem format has_graphs has_sync_events has_python_stacks"),
		Rows: [][]any{{"t", int64(0), "filename", g.producer, platform, g.gpu, g.totalMem, g.format, g.graphs, true, false}}}
	b.Tables["ranks"] = &table.Table{Columns: cols("trace rank step phase events busy_ns idle_ns compute_ns comm_ns comm_comp_ns step_ns"),
		Rows: [][]any{{"t", int64(0), int64(1), "", int64(5000), g.busy, g.idle, g.busy, int64(0), g.busy, g.busy + g.idle}}}
	if g.kernels != nil {
		b.Tables["kernels"] = &table.Table{Columns: cols("trace rank step phase stream name class count total_ns min_ns max_ns hist pre_window_ns"), Rows: g.kernels}
	}
	if g.features != nil {
		w := &table.Table{Columns: cols("trace rank feature example count total_ns")}
		for _, f := range g.features {
			name, val, ok := strings.Cut(f, "=") // feature[=event name]
			if !ok {
				val = name
			}
			w.Rows = append(w.Rows, []any{"t", int64(0), name, val, int64(1), int64(0)})
		}
		b.Tables["workload"] = w
	}
	if g.memory != nil {
		b.Tables["memory"] = g.memory
	}
	if g.ops != nil {
		b.Tables["ops"] = &table.Table{Columns: cols("trace rank step phase name count incl_ns self_ns max_ns launches gpu_events gpu_ns annotation"), Rows: g.ops}
	}
	if g.graphRows != nil {
		b.Tables["graphs"] = &table.Table{Columns: cols("trace rank step phase graph launches empty_launches kernels min_per_launch max_per_launch gpu_ns span_ns"), Rows: g.graphRows}
	}
	return b
}

// opRow is one operator of the ops area in step: n calls that launched
// gpu ns of GPU work themselves (one launch a call; 0 gpu: none linked).
func opRow(step int64, name string, n, gpu int64) []any {
	launches := n
	if gpu == 0 {
		launches = 0
	}
	return []any{"t", int64(0), step, "", name, n, n * 1000, n * 1000, int64(1000), launches, launches, gpu, false}
}

// graphRow is one graph of the graphs area: launches replays whose
// kernels ran gpu ns (graph -2: kernels without a launching CPU event).
func graphRow(graph, launches, gpu int64) []any {
	return []any{"t", int64(0), int64(1), "", graph, launches, int64(0), 100 * launches, int64(100), int64(100), gpu, gpu}
}

// kernelRow is one kernel name: n instances of dur ns each, plus the
// instances of extra (duration -> count), none launched before the window
// (pre_window_ns 0: withPre sets it).
func kernelRow(name string, n, dur int64, extra map[int64]int64) []any {
	h := evidence.Hist{evidence.BucketOf(dur): n}
	total, lo, hi := n*dur, dur, dur
	for d, c := range extra {
		h[evidence.BucketOf(d)] += c
		total += c * d
		lo, hi = min(lo, d), max(hi, d)
		n += c
	}
	return []any{"t", int64(0), int64(1), "", int64(7), name, "COMP", n, total, lo, hi, h.String(), int64(0)}
}

// withPre is row (a kernelRow) with pre ns of its time launched before
// the window, moved to step -1 as evidence_base_events puts such work.
func withPre(row []any, pre int64) []any {
	r := append([]any(nil), row...)
	r[2], r[len(r)-1] = int64(-1), pre
	return r
}

// only evaluates g and returns the findings of one rule.
func only(g rig, rule string, th evidence.Thresholds) []evidence.Finding {
	var out []evidence.Finding
	for _, f := range findings.Evaluate(evidence.Rollup(g.bundle(), evidence.Filter{}), th) {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

// text is everything a finding prints.
func text(f evidence.Finding) string {
	return strings.Join([]string{f.Title, f.Observation, f.Mechanism, f.Fix, f.Snippet, f.Verify, f.Refute}, "\n")
}

func hasAny(s string, words ...string) string {
	l := strings.ToLower(s)
	for _, w := range words {
		if strings.Contains(l, strings.ToLower(w)) {
			return w
		}
	}
	return ""
}

func TestIsFP32SIMT(t *testing.T) {
	for name, want := range map[string]bool{
		"volta_sgemm_128x64_nn":                                                                                                      true,
		"ampere_sgemm_32x32_sliced1x4_tn":                                                                                            true,
		"turing_sgemm_64x64_nt":                                                                                                      true,
		"volta_scudnn_128x64_relu_interior_nn_v1":                                                                                    true,
		"cudnn_infer_volta_scudnn_128x64_relu_medium_nn":                                                                             true,
		"void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int)":                                               true,
		"void cudnn::cnn::wgrad_alg0_engine<float, 128, 6, 7, 3, 3, 5, false, 512>(int)":                                             true,
		"void implicit_convolve_sgemm<float, float, 1024, 6, 7, 3, 3, 5, 1, false, true, true>(int)":                                 true,
		"void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>(cudnn::winograd_nonfused::W)":                           true,
		"void gemv2N_kernel<int, int, float, float, float, float, 128, 1, 4, 4, 1, false>(int)":                                      true,
		"void gemmk1_kernel<int, float, 256, 5, false, false, false, false>(int)":                                                    true,
		"cutlass_80_simt_sgemm_128x128_8x4_nn_align1":                                                                                true,
		"sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize256x64x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas": true,
		// Tensor cores, other types, or not a GEMM/convolution.
		"volta_h884gemm_64x64_ldg8_nn": false,
		"volta_s884cudnn_fp16_128x128": false,
		"turing_h1688gemm_128x128_nn":  false,
		"sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16": false,
		"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1":             false,
		"void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_tn_align4>(Params)":        false,
		"nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT":                                               false,
		"volta_dgemm_64x64_nn": false,
		"void gemv2T_kernel_val<int, int, double, double, double, double, 128, 16>(int)":              false,
		"void gemv2T_kernel_val<int, int, __half, __half, float, float, 128, 16>(int)":                false,
		"void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 512, true, 1>(float)":                false,
		"void cudnn::ops::scalePackedTensor_kernel<float, float>(cudnnTensor4dStruct, float*, float)": false,
		"void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float> >(int)":      false,
		"triton_poi_fused_add_0": false,
	} {
		if got := findings.IsFP32SIMT(name); got != want {
			t.Errorf("IsFP32SIMT(%q) = %v, want %v", name, got, want)
		}
	}
}

// simtKernels: 60% of a 100 ms busy time in SIMT GEMMs and convolutions.
func simtKernels() [][]any {
	return [][]any{
		kernelRow("volta_sgemm_128x64_nn", 100, 200_000, nil),
		kernelRow("volta_scudnn_128x64_relu_interior_nn_v1", 100, 200_000, nil),
		kernelRow("void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int)", 100, 200_000, nil),
		kernelRow("void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float> >(int)", 100, 100_000, nil),
	}
}

func TestFP32NoTensorCoresByDevice(t *testing.T) {
	forbid := []string{"bf16", "bfloat16", "tf32", "set_float32_matmul_precision"}
	tests := []struct {
		name     string
		rig      rig
		want     string   // rules() of the rule's findings
		contains []string // in Fix+Snippet
		absent   []string // nowhere in the finding
	}{
		{"V100 training: float16 AMP with a GradScaler, never bf16/TF32",
			rig{producer: "profiler_step", gpu: "Tesla V100-SXM2-32GB", busy: 100_000_000, idle: 5_000_000, kernels: simtKernels(), features: []string{"cpu_ops", "backward"}},
			"fp32_no_tensor_cores:critical:confirmed", []string{"float16", "GradScaler", "autocast"}, forbid},
		{"V100 training on PyTorch 2.5: torch.amp's API, not the deprecated torch.cuda.amp",
			rig{producer: "profiler_step", gpu: "Tesla V100-SXM2-32GB", busy: 100_000_000, idle: 5_000_000, kernels: simtKernels(), features: []string{"cpu_ops", "backward", "torch_version=2.5.1+cu121"}},
			"fp32_no_tensor_cores:critical:confirmed", []string{`torch.amp.GradScaler("cuda")`, `torch.autocast("cuda", dtype=torch.float16)`}, append(forbid, "torch.cuda.amp")},
		{"V100 training on PyTorch 2.2: torch.cuda.amp (torch.amp.GradScaler is 2.3's)",
			rig{producer: "profiler_step", gpu: "Tesla V100-SXM2-32GB", busy: 100_000_000, idle: 5_000_000, kernels: simtKernels(), features: []string{"cpu_ops", "backward", "torch_version=2.2.0"}},
			"fp32_no_tensor_cores:critical:confirmed", []string{"torch.cuda.amp.GradScaler()", "torch.cuda.amp.autocast()"}, append(forbid, "torch.amp.GradScaler")},
		{"V100 inference: autocast without a GradScaler",
			rig{producer: "profiler_step", gpu: "Tesla V100-SXM2-32GB", busy: 100_000_000, idle: 5_000_000, kernels: simtKernels(), features: []string{"cpu_ops"}},
			"fp32_no_tensor_cores:critical:confirmed", []string{"float16", "autocast"}, append(forbid, "GradScaler")},
		{"RTX 2080 Ti (Turing): float16 only",
			rig{producer: "unknown", gpu: "NVIDIA GeForce RTX 2080 Ti", busy: 100_000_000, idle: 5_000_000, kernels: simtKernels()},
			"fp32_no_tensor_cores:critical:confirmed", []string{"float16"}, forbid},
		{"T4 with the GPU mostly idle: minor",
			rig{producer: "profiler_step", gpu: "Tesla T4", busy: 30_000_000, idle: 70_000_000, kernels: simtKernels(), features: []string{"cpu_ops", "backward"}},
			"fp32_no_tensor_cores:minor:confirmed", []string{"GradScaler"}, forbid},
		{"GP100: no tensor cores, no precision fix",
			rig{producer: "profiler_step", gpu: "Quadro GP100", busy: 100_000_000, idle: 5_000_000, kernels: simtKernels(), features: []string{"cpu_ops", "backward"}},
			"", nil, nil},
		{"A100 GEMMs: TF32",
			rig{producer: "profiler_step", gpu: "NVIDIA A100-SXM4-80GB", busy: 100_000_000, idle: 5_000_000, kernels: [][]any{
				kernelRow("ampere_sgemm_128x64_nn", 100, 500_000, nil),
				kernelRow("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize256x64x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas", 10, 100_000, nil)}},
			"fp32_no_tensor_cores:critical:confirmed", []string{"set_float32_matmul_precision(\"high\")", "TF32"}, []string{"torch.float16", "GradScaler", "cuda.amp"}},
		{"A100 convolutions with TF32 already in cuDNN: bfloat16 autocast",
			rig{producer: "profiler_step", gpu: "NVIDIA A100-PG509-200", busy: 100_000_000, idle: 5_000_000, kernels: [][]any{
				kernelRow("cudnn_ampere_scudnn_128x64_relu_xregs_large_nn_v1", 100, 400_000, nil),
				kernelRow("sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4", 100, 100_000, nil)}},
			"fp32_no_tensor_cores:critical:confirmed", []string{"torch.bfloat16", "already"}, []string{"torch.float16", "GradScaler", "cuda.amp"}},
		{"H100 bf16 GEMMs: nothing to say",
			rig{producer: "profiler_step", gpu: "NVIDIA H100 80GB HBM3", busy: 100_000_000, idle: 5_000_000, kernels: [][]any{
				kernelRow("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1", 100, 900_000, nil)}},
			"", nil, nil},
		{"blank device name: no verdict",
			rig{producer: "profiler_step", gpu: "", busy: 100_000_000, idle: 5_000_000, kernels: simtKernels()},
			"", nil, nil},
		{"ROCm: the names read are NVIDIA's",
			rig{producer: "profiler_step", platform: "rocm", gpu: "AMD Instinct MI300X", busy: 100_000_000, idle: 5_000_000, kernels: simtKernels()},
			"", nil, nil},
		{"a device not in the table: what to check, no precision prescribed",
			rig{producer: "profiler_step", gpu: "NVIDIA Mystery 9000", busy: 100_000_000, idle: 5_000_000, kernels: simtKernels()},
			"fp32_no_tensor_cores:minor:confirmed", []string{"compute capability", "get_device_capability"}, []string{"GradScaler()", "allow_tf32"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := only(tc.rig, "fp32_no_tensor_cores", nil)
			if got := rules(fs); got != tc.want {
				t.Fatalf("findings = %q, want %q: %+v", got, tc.want, fs)
			}
			for _, f := range fs {
				for _, w := range tc.contains {
					if !strings.Contains(f.Fix+"\n"+f.Snippet, w) {
						t.Errorf("fix lacks %q: %q / %q", w, f.Fix, f.Snippet)
					}
				}
				if w := hasAny(text(f), tc.absent...); w != "" {
					t.Errorf("finding mentions %q:\n%s", w, text(f))
				}
				if !strings.Contains(f.Observation, "of GPU busy time") || !strings.Contains(f.Observation, "trace t, rank 0") {
					t.Errorf("observation without its context: %q", f.Observation)
				}
			}
		})
	}
	// The critical threshold is the catalogue's, and the viewer may raise it.
	g := tests[0].rig
	if fs := only(g, "fp32_no_tensor_cores", evidence.Thresholds{"fp32_simt_critical": 0.9}); rules(fs) != "fp32_no_tensor_cores:minor:confirmed" {
		t.Errorf("raised fp32_simt_critical: %s", rules(fs))
	}
	if fs := only(g, "fp32_no_tensor_cores", evidence.Thresholds{"gpu_busy_critical": 0.99}); rules(fs) != "fp32_no_tensor_cores:minor:confirmed" {
		t.Errorf("raised gpu_busy_critical: %s", rules(fs))
	}
}

// The fp32 finding names the math that ran: a model without convolutions
// (trace_diff_test_v100, df_index_resolver_v100) reads "fp32 GEMMs", with
// no "0.000 ms in convolutions"; the split is kept where both ran.
func TestFP32NoTensorCoresNamesTheMath(t *testing.T) {
	gemms := [][]any{kernelRow("volta_sgemm_128x64_nn", 100, 600_000, nil)}
	convs := [][]any{kernelRow("volta_scudnn_128x64_relu_interior_nn_v1", 100, 600_000, nil)}
	for _, c := range []struct {
		name        string
		gpu         string
		kernels     [][]any
		title, obs  string
		notInTitObs []string // in neither the title nor the observation
	}{
		{"V100 GEMMs only", "Tesla V100-SXM2-32GB", gemms,
			"fp32 GEMMs bypass the tensor cores: on Volta (V100) they need float16 (AMP)",
			"fp32 GEMM kernels on the SIMT path took 60.0 ms, 60.0% of GPU busy time", []string{"convolution", "in GEMMs"}},
		{"V100 convolutions only", "Tesla V100-SXM2-32GB", convs,
			"fp32 convolutions bypass the tensor cores: on Volta (V100) they need float16 (AMP)",
			"fp32 convolution kernels on the SIMT path took 60.0 ms, 60.0% of GPU busy time", []string{"GEMM", "in convolutions"}},
		{"V100 both: the split", "Tesla V100-SXM2-32GB", simtKernels(),
			"fp32 GEMMs and convolutions bypass the tensor cores: on Volta (V100) they need float16 (AMP)",
			"fp32 GEMM and convolution kernels on the SIMT path took 60.0 ms (20.0 ms in GEMMs, 40.0 ms in convolutions)", nil},
		{"A100 GEMMs only", "NVIDIA A100-SXM4-80GB", gemms,
			"fp32 GEMMs bypass the tensor cores: TF32 or bfloat16 would use them",
			"fp32 GEMM kernels on the SIMT path took 60.0 ms,", []string{"convolution"}},
		{"unknown device, GEMMs only", "NVIDIA Mystery 9000", gemms,
			"fp32 GEMMs run without tensor cores; the device's tensor-core types are unknown",
			"fp32 GEMM kernels on the SIMT path took 60.0 ms,", []string{"convolution"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := only(rig{producer: "profiler_step", gpu: c.gpu, busy: 100_000_000, idle: 5_000_000, kernels: c.kernels, features: []string{"cpu_ops", "backward"}}, "fp32_no_tensor_cores", nil)
			if len(fs) != 1 {
				t.Fatalf("findings = %q, want one fp32_no_tensor_cores", rules(fs))
			}
			f := fs[0]
			if f.Title != c.title {
				t.Errorf("title = %q, want %q", f.Title, c.title)
			}
			if !strings.Contains(f.Observation, c.obs) {
				t.Errorf("observation lacks %q: %q", c.obs, f.Observation)
			}
			for _, w := range c.notInTitObs {
				if strings.Contains(f.Title+"\n"+f.Observation, w) {
					t.Errorf("title or observation says %q:\n%s\n%s", w, f.Title, f.Observation)
				}
			}
		})
	}
}

// eagerKernels: 60% of a 100 ms busy time in eager elementwise kernels.
func eagerKernels() [][]any {
	return [][]any{
		kernelRow("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int)", 4000, 10_000, nil),
		kernelRow("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float>, unsigned int, float, 4> >(int)", 1000, 20_000, nil),
		kernelRow("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1", 100, 400_000, nil),
	}
}

// TestKernelTotalsSplitPreWindow: where a tenth or more of a kernel
// total is work launched before the window (kernels.pre_window_ns), the finding
// gives that part and the window's own in ms, instead of a "may be".
func TestKernelTotalsSplitPreWindow(t *testing.T) {
	h100 := rig{producer: "profiler_step", gpu: "NVIDIA H100 80GB HBM3", busy: 100_000_000, idle: 5_000_000, features: []string{"cpu_ops"}}
	tests := []struct {
		name string
		pre  int64 // of the first eager row's 40 ms
		want string
	}{
		{"a third before the window", 20_000_000, " Of the eager elementwise and reduction time, 60.0 ms summed over its kernels, 20.0 ms is work launched before the window (queued before the capture began, see Capture quality); the window's own launches ran 40.0 ms."},
		{"under a tenth: no note", 5_000_000, ""},
		{"none", 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := h100
			g.kernels = eagerKernels()
			g.kernels[0] = withPre(g.kernels[0], tc.pre)
			fs := only(g, "elementwise_dominated", nil)
			if len(fs) != 1 {
				t.Fatalf("findings = %q, want one elementwise_dominated", rules(fs))
			}
			if !strings.Contains(fs[0].Observation, "took 60.0 ms in 5000 launches") {
				t.Errorf("the total is not the whole window's: %q", fs[0].Observation)
			}
			got := strings.Contains(fs[0].Observation, "launched before the window")
			if tc.want == "" && got {
				t.Errorf("observation splits off the pre-window part: %q", fs[0].Observation)
			}
			if tc.want != "" && !strings.Contains(fs[0].Observation, tc.want) {
				t.Errorf("observation = %q, want it to contain %q", fs[0].Observation, tc.want)
			}
			if strings.Contains(fs[0].Observation, "may be the previous iteration's") {
				t.Errorf("observation keeps the vague note: %q", fs[0].Observation)
			}
		})
	}
}

func TestElementwiseDominated(t *testing.T) {
	tests := []struct {
		name     string
		rig      rig
		want     string
		contains []string // in Fix+Snippet
		absent   []string // in Fix+Snippet
	}{
		{"eager H100: torch.compile",
			rig{producer: "profiler_step", gpu: "NVIDIA H100 80GB HBM3", busy: 100_000_000, idle: 5_000_000, kernels: eagerKernels(), features: []string{"cpu_ops", "backward", "torch_version=2.6.0+cu124"}},
			"elementwise_dominated:critical:hypothesis", []string{"model = torch.compile(model)"}, []string{"graph_breaks", "upgrade"}},
		{"already compiled: graph breaks, not torch.compile",
			rig{producer: "profiler_step", gpu: "NVIDIA H100 80GB HBM3", busy: 100_000_000, idle: 5_000_000, kernels: eagerKernels(), features: []string{"cpu_ops", "backward", "compiled"}},
			"elementwise_dominated:critical:hypothesis", []string{"TORCH_LOGS=graph_breaks"}, []string{"torch.compile(model"}},
		{"vLLM compiles itself: no finding",
			rig{producer: "vllm", gpu: "NVIDIA H100 80GB HBM3", busy: 100_000_000, idle: 5_000_000, kernels: eagerKernels()},
			"", nil, nil},
		{"SGLang compiles itself: no finding",
			rig{producer: "sglang", gpu: "NVIDIA H100 80GB HBM3", busy: 100_000_000, idle: 5_000_000, kernels: eagerKernels()},
			"", nil, nil},
		{"GP100: Inductor refuses CC < 7.0",
			rig{producer: "profiler_step", gpu: "Quadro GP100", busy: 100_000_000, idle: 5_000_000, kernels: eagerKernels(), features: []string{"cpu_ops", "backward"}},
			"", nil, nil},
		{"2021-era trace: upgrade first",
			rig{producer: "profiler_step", gpu: "Tesla V100-SXM2-16GB", busy: 100_000_000, idle: 5_000_000, kernels: eagerKernels(), features: []string{"cpu_ops", "backward", "legacy_categories"}},
			"elementwise_dominated:critical:hypothesis", []string{"PyTorch >= 2.0", `torch.compile(model, backend="inductor")`, "whl/cu126", "not from the matmuls"}, nil},
		{"an idle GPU: minor",
			rig{producer: "profiler_step", gpu: "NVIDIA H100 80GB HBM3", busy: 100_000_000, idle: 200_000_000, kernels: eagerKernels(), features: []string{"cpu_ops"}},
			"elementwise_dominated:minor:hypothesis", []string{"torch.compile"}, nil},
		{"below the share: nothing",
			rig{producer: "profiler_step", gpu: "NVIDIA H100 80GB HBM3", busy: 200_000_000, idle: 5_000_000, kernels: eagerKernels()},
			"", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := only(tc.rig, "elementwise_dominated", nil)
			if got := rules(fs); got != tc.want {
				t.Fatalf("findings = %q, want %q: %+v", got, tc.want, fs)
			}
			for _, f := range fs {
				for _, w := range tc.contains {
					if !strings.Contains(f.Fix+"\n"+f.Snippet, w) {
						t.Errorf("fix lacks %q: %q / %q", w, f.Fix, f.Snippet)
					}
				}
				if w := hasAny(f.Fix+"\n"+f.Snippet, tc.absent...); w != "" {
					t.Errorf("fix mentions %q: %q / %q", w, f.Fix, f.Snippet)
				}
				if !strings.Contains(f.Observation, "(CUDAFunctor_add)") {
					t.Errorf("observation does not name the largest kernel's op: %q", f.Observation)
				}
			}
		})
	}
}

func TestKernelSlowInstances(t *testing.T) {
	g := rig{producer: "profiler_step", gpu: "NVIDIA H100 80GB HBM3", busy: 20_000_000, idle: 1_000_000}
	// A tail: 95 instances at 100 us, 5 at 500 us (2 ms above the median's time, 10% of busy).
	g.kernels = [][]any{kernelRow("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 95, 100_000, map[int64]int64{500_000: 5})}
	fs := only(g, "kernel_slow_instances", nil)
	if rules(fs) != "kernel_slow_instances:minor:hypothesis" || !strings.Contains(fs[0].Observation, "5 of the 100 instances") {
		t.Fatalf("tail: %s %+v", rules(fs), fs)
	}
	if !strings.Contains(fs[0].Observation, "larger shape") || !strings.Contains(fs[0].Refute, "shape") {
		t.Errorf("the shape caveat is missing: %q / %q", fs[0].Observation, fs[0].Refute)
	}
	// A second mode (30 of 100: another layer's shape) is not a tail.
	g.kernels = [][]any{kernelRow("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 70, 100_000, map[int64]int64{500_000: 30})}
	if fs := only(g, "kernel_slow_instances", nil); len(fs) != 0 {
		t.Errorf("second mode reported as slow instances: %s", rules(fs))
	}
	// One slow instance (a first call) is not a pattern.
	g.kernels = [][]any{kernelRow("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 99, 100_000, map[int64]int64{5_000_000: 1})}
	if fs := only(g, "kernel_slow_instances", nil); len(fs) != 0 {
		t.Errorf("one slow instance reported: %s", rules(fs))
	}
}

// tinyKernels: 3000 kernels of 5 us and 10 of 1 ms: 60% of busy time tiny.
func tinyKernels() [][]any {
	return [][]any{
		kernelRow("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int)", 3000, 5_000, nil),
		kernelRow("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 10, 1_000_000, nil),
	}
}

func TestShortKernelStorm(t *testing.T) {
	tests := []struct {
		name    string
		rig     rig
		want    string
		snippet string
	}{
		{"busy eager H100: compile with CUDA graphs",
			rig{producer: "profiler_step", gpu: "NVIDIA H100 80GB HBM3", busy: 25_000_000, idle: 1_000_000, kernels: tinyKernels(), features: []string{"cpu_ops", "backward"}},
			"short_kernel_storm:minor:hypothesis", `model = torch.compile(model, mode="reduce-overhead")`},
		{"GPU idle: launch_bound's, not a storm",
			rig{producer: "profiler_step", gpu: "NVIDIA H100 80GB HBM3", busy: 25_000_000, idle: 25_000_000, kernels: tinyKernels()},
			"", ""},
		{"compiled, not graphed: reduce-overhead",
			rig{producer: "profiler_step", gpu: "NVIDIA H100 80GB HBM3", busy: 25_000_000, idle: 1_000_000, kernels: tinyKernels(), features: []string{"cpu_ops", "compiled"}},
			"short_kernel_storm:minor:hypothesis", `model = torch.compile(model, mode="reduce-overhead")`},
		{"compiled and graphed: nothing to switch on",
			rig{producer: "profiler_step", gpu: "NVIDIA H100 80GB HBM3", graphs: true, busy: 25_000_000, idle: 1_000_000, kernels: tinyKernels(), features: []string{"cpu_ops", "compiled"}},
			"", ""},
		{"vLLM with CUDA graphs: keep them, nothing to say",
			rig{producer: "vllm", gpu: "NVIDIA H100 80GB HBM3", graphs: true, busy: 25_000_000, idle: 1_000_000, kernels: tinyKernels()},
			"", ""},
		{"eager vLLM: CUDA graphs, no torch.compile",
			rig{producer: "vllm", gpu: "NVIDIA B200", busy: 25_000_000, idle: 1_000_000, kernels: tinyKernels()},
			"short_kernel_storm:minor:hypothesis", "vllm serve MODEL  # without --enforce-eager"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := only(tc.rig, "short_kernel_storm", nil)
			if got := rules(fs); got != tc.want {
				t.Fatalf("findings = %q, want %q: %+v", got, tc.want, fs)
			}
			if len(fs) == 1 && fs[0].Snippet != tc.snippet {
				t.Errorf("snippet = %q, want %q", fs[0].Snippet, tc.snippet)
			}
		})
	}
}

func memoryTable(reserved, total int64) *table.Table {
	return &table.Table{Columns: cols("trace rank step phase device allocs frees alloc_bytes freed_bytes peak_allocated peak_reserved total_mem free_calls free_ns"),
		Rows: [][]any{
			{"t", int64(0), int64(1), "", int64(0), int64(10), int64(10), int64(1 << 30), int64(1 << 30), reserved - (2 << 30), reserved, total, int64(0), int64(0)},
			{"t", int64(0), int64(1), "", int64(-1), int64(0), int64(0), int64(0), int64(0), nil, nil, total, int64(3), int64(2_000_000)},
		}}
}

func TestMemoryPeak(t *testing.T) {
	const gb = int64(1 << 30)
	g := rig{producer: "profiler_step", gpu: "NVIDIA H100 80GB HBM3", totalMem: 80 * gb, busy: 20_000_000, idle: 1_000_000, features: []string{"cpu_ops", "backward"}}
	g.memory = memoryTable(76*gb, 80*gb)
	fs := only(g, "memory_peak", nil)
	if rules(fs) != "memory_peak:minor:hypothesis" || !strings.Contains(fs[0].Snippet, "expandable_segments:True") ||
		!strings.Contains(fs[0].Fix, "activation checkpointing") || !strings.Contains(fs[0].Observation, "95.0%") {
		t.Fatalf("training near the cap: %s %+v", rules(fs), fs)
	}
	// Inference: no activations to recompute.
	g.features = []string{"cpu_ops"}
	if fs := only(g, "memory_peak", nil); len(fs) != 1 || strings.Contains(fs[0].Fix, "checkpointing") {
		t.Errorf("inference fix: %+v", fs)
	}
	// A 2021-era trace: expandable segments need PyTorch 2.1.
	g.features = []string{"cpu_ops", "backward", "legacy_categories"}
	if fs := only(g, "memory_peak", nil); len(fs) != 1 || !strings.Contains(fs[0].Fix, "Upgrade to PyTorch >= 2.1") {
		t.Errorf("old trace: %+v", fs)
	}
	// vLLM reserves 90% for its KV cache by design.
	g.producer = "vllm"
	if fs := only(g, "memory_peak", nil); len(fs) != 0 {
		t.Errorf("vLLM's KV-cache reservation reported: %s", rules(fs))
	}
	// Below the share, and without [memory] events: nothing.
	g.producer = "profiler_step"
	g.memory = memoryTable(40*gb, 80*gb)
	if fs := only(g, "memory_peak", nil); len(fs) != 0 {
		t.Errorf("half the device reported: %s", rules(fs))
	}
	g.memory = nil
	if fs := only(g, "memory_peak", nil); len(fs) != 0 {
		t.Errorf("finding without [memory] events: %s", rules(fs))
	}
}

// TestKernelName: the readable names of kernels as real traces write them.
func TestKernelName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::BFloat16, float, c10::BFloat16, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)",
			"cunn_SoftMaxForward"},
		{"void at::native::vectorized_elementwise_kernel<4, at::native::sigmoid_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#3}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, at::native::sigmoid_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#3}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)",
			"vectorized_elementwise_kernel (sigmoid_kernel_cuda)"},
		{"void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_32x3_tn_align1>(cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_32x3_tn_align1::Params)",
			"cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_32x3_tn_align1"},
		{"void cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_dptp128c_acc::GemmKernel>(dpsk::grouped_gemm::cuda::fp8_dptp128c_acc::GemmKernel::Params)",
			"dpsk::grouped_gemm::cuda::fp8_dptp128c_acc::GemmKernel"},
		// A wrapper with two arguments is not a wrapper of one kernel.
		{"void cutlass::Kernel<A, B>(int)", "cutlass::Kernel<A, B>"},
		{"void (anonymous namespace)::softmax_warp_forward<float, float, float, 8, false, false>(float*, float const*, int, int, int, bool const*, int, bool)",
			"softmax_warp_forward<float, float, float, 8, false, false>"},
		{"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"},
		{"Memcpy DtoH (Device -> Pageable)", "Memcpy DtoH (Device -> Pageable)"},
		{"triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_2", "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_2"},
		{"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
			"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"},
	} {
		if got := findings.KernelName(c.in); got != c.want {
			t.Errorf("findings.KernelName(%.60q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
	// Two kernels KernelName names alike differ by their templates.
	a := "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >(int, at::native::AUnaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul>)"
	b := strings.ReplaceAll(strings.ReplaceAll(a, "AUnaryFunctor", "BinaryFunctor"), "2ul", "3ul")
	if findings.KernelName(a) != findings.KernelName(b) || findings.KernelTemplate(a) == findings.KernelTemplate(b) {
		t.Errorf("names %q %q, templates %q %q", findings.KernelName(a), findings.KernelName(b), findings.KernelTemplate(a), findings.KernelTemplate(b))
	}
	if got, want := findings.KernelTemplate(a), "vectorized_elementwise_kernel<4, AUnaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >"; got != want {
		t.Errorf("KernelTemplate: got %q, want %q", got, want)
	}
}

// TestKernelFamily: real kernel names and what they compute.
func TestKernelFamily(t *testing.T) {
	for _, c := range []struct{ class, name, want string }{
		{"COMM", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", findings.FamilyComm},
		{"MEM", "Memcpy DtoH (Device -> Pageable)", findings.FamilyCopy},
		{"COMP", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", findings.FamilyGEMM},
		{"COMP", "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT32x32x256_MI16x16x1_SN_LDSB1", findings.FamilyGEMM},
		{"COMP", "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu", findings.FamilyGEMM},
		{"COMP", "nvjet_tst_128x256_64x4_2x1_v_bz_coopA_TNN", findings.FamilyGEMM},
		{"COMP", "void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int)", findings.FamilyGEMM},
		{"COMP", "igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x128x32_wt32x32x8", findings.FamilyGEMM},
		{"COMP", "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 512, true, 1>(float)", findings.FamilyNorm},
		{"COMP", "_ZN7ck_tile6kentryILi1ENS_12Rmsnorm2dFwdINS_27Rmsnorm2dFwdPipelineOnePass", findings.FamilyNorm},
		{"COMP", "kernel_unified_attention_3d", findings.FamilyAttention},
		{"COMP", "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4> >(Flash_fwd_params)", findings.FamilyAttention},
		{"COMP", "void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)", findings.FamilySoftmax},
		{"COMP", "triton_poi_fused_convolution_relu_3", findings.FamilyElementwise},
		{"COMP", "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_2", findings.FamilyElementwise},
		{"COMP", "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int)", findings.FamilyElementwise},
		{"COMP", "void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*)", findings.FamilyOther},
		// at::native kernels other than elementwise and reduce move data:
		// the elementwise_dominated rule's test decides the family too.
		{"COMP", "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 4, 64, 64>(at::native::(anonymous namespace)::CatArrInputTensorMetadata)", findings.FamilyOther},
		{"COMP", "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp)", findings.FamilyElementwise},
		// Norms by the kernel's namespaces and name: a vector norm is a
		// reduction, and MoE routing's routingRenormalize no norm.
		{"COMP", "void layer_norm::ln_fwd_kernel<layer_norm::Kernel_traits<__nv_bfloat16, __nv_bfloat16, float, unsigned int, 7168u> >(layer_norm::FwdParams)", findings.FamilyNorm},
		{"COMP", "void moe::dev::routing::routingIndicesHistogramKernel<moe::dev::routing::routingRenormalize::KernelParams<__nv_bfloat16, __nv_bfloat16, 128, false, true, true> >(moe::dev::routing::routingRenormalize::KernelParams<__nv_bfloat16, __nv_bfloat16, 128, false, true, true>)", findings.FamilyOther},
		{"COMP", "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*, float const*, float const*, float*, float*, float*)", findings.FamilyNorm},
		{"COMP", "void (anonymous namespace)::groupnorm_kernel_dispatch_down<__hip_bfloat16, 1024u>(unsigned int, unsigned int, long, float, bool)", findings.FamilyNorm},
		{"COMP", "std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long)", findings.FamilyNorm},
		{"COMP", "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, at::native::NormTwoOps<c10::BFloat16, float, c10::BFloat16>, unsigned int, c10::BFloat16, 4> >(at::native::ReduceOp<c10::BFloat16, at::native::NormTwoOps<c10::BFloat16, float, c10::BFloat16>, unsigned int, c10::BFloat16, 4>)", findings.FamilyElementwise},
		{"COMP", "void moe::dev::routing::routingRenormalize::routingIndicesHistogramScoresKernel<moe::dev::routing::routingRenormalize::KernelParams<__nv_bfloat16, __nv_bfloat16, 128, false, true, true> >(moe::dev::routing::routingRenormalize::KernelParams<__nv_bfloat16, __nv_bfloat16, 128, false, true, true>)", findings.FamilyOther},
		// FBGEMM's embedding kernels are no GEMMs.
		{"COMP", "void fbgemm_gpu::split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1<float, float, float, 2ul>(int)", findings.FamilyOther},
		// MTIA's kernels, OP-dtype_TYPE (mtia_single_rank).
		{"COMP", "fc-dtype_Float", findings.FamilyGEMM},
		{"COMP", "batch_matmul-dtype_Float", findings.FamilyGEMM},
		{"COMP", "layer_norm_backward-dtype_Float", findings.FamilyNorm},
		{"COMP", "vector_norm_float_order-dtype_Float", findings.FamilyElementwise},
		{"COMP", "aten::sigmoid.out-dtype_Float", findings.FamilyElementwise},
		{"COMP", "customized_fba_mul_const-dtype_Float", findings.FamilyElementwise},
		{"COMP", "aten::cat.out-dtype_Float-extraKey_15", findings.FamilyElementwise},
		{"COMP", "split_eb_bwd_rowwise_adagrad-dtype_Half", findings.FamilyOther},
		{"COMP", "fbgemm::split_embedding_codegen_grad_indice_weights_cpu-dtype_Half", findings.FamilyOther},
		{"COMP", "permute_2d_sparse_data-dtype_Int", findings.FamilyOther},
	} {
		if got := findings.KernelFamily(c.class, c.name); got != c.want {
			t.Errorf("%s %.50q: %q, want %q", c.class, c.name, got, c.want)
		}
	}
}

// TestIsAlign1GEMM: a CUTLASS tensor-core GEMM built for 1-element
// alignment, not one built for 2, 4 or 8, not a convolution or another
// library's kernel, and not an fp32 SIMT GEMM (fp32_no_tensor_cores's).
func TestIsAlign1GEMM(t *testing.T) {
	for name, want := range map[string]bool{
		"void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_tn_align1>(cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_tn_align1::Params)": true,
		"void cutlass::Kernel2<cutlass_75_wmma_tensorop_bf16_s161616gemm_bf16_32x32_32x1_nn_align1>(Params)":                                                  true,
		"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_tn_align1>(cutlass_80_tensorop_s1688gemm_256x64_16x4_tn_align1::Params)":              true,
		"cutlass_80_tensorop_s1688gemm_64x64_32x4_nn_align1":                                                                                                  true,
		"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_tn_align4>(Params)":                                                                   false,
		"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>(Params)":                                                   false,
		"void cutlass::Kernel<cutlass_80_simt_sgemm_128x64_8x5_nn_align1>(Params)":                                                                            false,
		"cutlass_80_tensorop_s1688gemm_64x64_32x4_nn_align16":                                                                                                 false,
		"void cutlass::Kernel<cutlass_80_tensorop_f16_s16816fprop_optimized_f16_128x128_align1>(Params)":                                                      false,
		"ampere_sgemm_128x64_nn": false,
	} {
		if got := findings.IsAlign1GEMM(name); got != want {
			t.Errorf("IsAlign1GEMM(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestMisalignedGEMM: align1 GEMMs at align1_gemm_share of GPU busy time
// are reported, critical at align1_gemm_critical with the GPU busy at
// least gpu_busy_critical; on a Hopper GPU the sm75- and sm80-family
// kernels among them are named (h100_owlv2: cutlass_75_ kernels on H100).
func TestMisalignedGEMM(t *testing.T) {
	const old = "void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_tn_align1>(Params)"
	const hopper = "of them are sm75-family (cutlass_75_) kernels on this Hopper GPU"
	for _, c := range []struct {
		name      string
		gpu       string
		busy, ns  int64
		want, say string // want: rules(fs); say: in the observation
	}{
		{"at the share", "NVIDIA A100-SXM4-40GB", 60_000_000, 6_000_000, "misaligned_gemm:minor:hypothesis", "10.0% of GPU busy time"},
		{"under the share", "NVIDIA A100-SXM4-40GB", 60_000_000, 5_999_999, "", ""},
		{"critical", "NVIDIA A100-SXM4-40GB", 60_000_000, 18_000_000, "misaligned_gemm:critical:hypothesis", "30.0% of GPU busy time"},
		{"critical share, idle GPU", "NVIDIA A100-SXM4-40GB", 40_000_000, 12_000_000, "misaligned_gemm:minor:hypothesis", ""},
		{"Hopper", "NVIDIA H100 80GB HBM3", 60_000_000, 18_000_000, "misaligned_gemm:critical:hypothesis", hopper},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := map[string]*table.Table{"kernels": kernelsTable(old, c.ns)}
			fs := eval(bundle("profiler_step", "cuda", c.gpu, c.busy, 100_000_000-c.busy, k), nil)
			var got []evidence.Finding
			for _, f := range fs {
				if f.Rule == "misaligned_gemm" {
					got = append(got, f)
				}
			}
			if rules(got) != c.want {
				t.Fatalf("findings %q, want %q", rules(got), c.want)
			}
			if c.want == "" {
				return
			}
			if !strings.Contains(got[0].Observation, c.say) || strings.Contains(got[0].Observation, hopper) != (c.say == hopper) {
				t.Errorf("observation %q, want %q", got[0].Observation, c.say)
			}
		})
	}
}

// The misaligned-GEMM fix names the heaviest recorded shape whose K or N
// is not a multiple of 16 bytes (the workload area's gemm_misaligned
// example) with that dimension padded; calls that linked no GPU work are
// said so; without a readable example it says how to record the shapes.
func TestMisalignedGEMMShapes(t *testing.T) {
	const old = "void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_tn_align1>(Params)"
	const record = "With record_shapes=True the operators' Input Dims name the shapes"
	for _, c := range []struct {
		name, example string
		calls, gpuNs  int64
		want          string
	}{
		{"h100_owlv2", "aten::bmm [16, 5185, 64] by [16, 64, 5185] c10::BFloat16 N=5185", 390, 229_901_991,
			"The operators' recorded shapes name one: 390 GEMM calls (230 ms of their GPU work) have a leading dimension that is not a multiple of 16 bytes, the heaviest aten::bmm [16, 5185, 64] by [16, 64, 5185] in bf16, whose N of 5,185 would be 5,192 padded."},
		{"negative_queue_length_a100", "aten::addmm [4096, 2798] by [2798, 64] float K=2798", 15, 0,
			"15 GEMM calls have a leading dimension that is not a multiple of 16 bytes, among them aten::addmm [4096, 2798] by [2798, 64] in fp32, whose K of 2,798 would be 2,800 padded. No GPU work is linked to them (no launch carries their External id), so the trace does not say which of the 18.0 ms of align1 kernels ran these shapes"},
		{"linked work under half the align1 time", "aten::addmm [4096, 2798] by [2798, 64] float K=2798", 15, 1_300_000,
			"(1.3 ms of their GPU work) have a leading dimension that is not a multiple of 16 bytes, the heaviest aten::addmm [4096, 2798] by [2798, 64] in fp32, whose K of 2,798 would be 2,800 padded. Their linked GPU work covers 1.3 ms of the 18.0 ms of align1 kernels"},
		{"fp16", "aten::mm [7, 100] by [100, 30] c10::Half N=30", 1, 1, "in fp16, whose N of 30 would be 32 padded."},
		{"no shapes", "", 0, 0, record},
		{"unread type", "aten::mm [7, 100] by [100, 30] c10::Float8 N=30", 1, 1, record},
		{"transposed first operand", "aten::mm [7, 100] by [100, 32] float M=7", 1, 1, "in fp32, whose M of 7 would be 8 padded."},
		{"unread dimension", "aten::mm [7, 100] by [100, 30] float B=7", 1, 1, record},
	} {
		t.Run(c.name, func(t *testing.T) {
			tabs := map[string]*table.Table{"kernels": kernelsTable(old, 18_000_000)}
			if c.example != "" {
				tabs["workload"] = workloadTable([][]any{{"t", int64(0), "gemm_misaligned", c.example, c.calls, c.gpuNs, nil}})
			}
			var f *evidence.Finding
			fs := eval(bundle("profiler_step", "cuda", "NVIDIA A100-SXM4-40GB", 60_000_000, 40_000_000, tabs), nil)
			for i := range fs {
				if fs[i].Rule == "misaligned_gemm" {
					f = &fs[i]
				}
			}
			if f == nil {
				t.Fatalf("no misaligned_gemm finding: %s", rules(fs))
			}
			if !strings.Contains(f.Fix, c.want) || strings.Contains(f.Fix, record) != (c.want == record) {
				t.Errorf("fix %q, want %q", f.Fix, c.want)
			}
		})
	}
}

// The fp32 finding splits its SIMT time by the operators that launched
// the kernels where the trace links launches to operators (the ops area's
// gpu_ns): cuDNN runs convolutions as sgemm kernels (ns_resolution_v100:
// 117 ms of volta_sgemm launched by aten::convolution_backward and
// aten::cudnn_convolution, 0.385 ms by aten::mm/addmm), and a rank that
// replays CUDA graphs may run them there (trace_diff_test_v100: 177 ms of
// its 200 ms of volta_sgemm inside 12 cudaGraphLaunch replays), where the
// fix must say the graph is captured again under autocast.
func TestFP32NoTensorCoresByLaunchingOperator(t *testing.T) {
	v100, a100 := "Tesla V100-SXM2-32GB", "NVIDIA A100-SXM4-80GB"
	sgemm := func(ns int64) []any { return kernelRow("volta_sgemm_64x64_nt", 100, ns/100, nil) }
	dgrad := func(ns int64) []any {
		return kernelRow("void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int)", 100, ns/100, nil)
	}
	tests := []struct {
		name    string
		gpu     string
		kernels [][]any
		ops     [][]any
		graphs  [][]any
		title   string   // "" = not checked
		obs     []string // in the observation
		fix     []string // in Fix+Snippet
		absent  []string // in neither the title, the observation nor the fix
	}{
		{"sgemm launched by convolutions (ns_resolution_v100): moved to the convolutions", v100,
			[][]any{sgemm(40_000_000), dgrad(20_000_000)},
			[][]any{opRow(1, "aten::convolution_backward", 10, 25_000_000), opRow(2, "aten::convolution_backward", 10, 20_000_000),
				opRow(1, "aten::cudnn_convolution", 10, 15_000_000), opRow(1, "aten::mm", 2, 300_000), opRow(1, "aten::addmm", 1, 200_000),
				opRow(1, "aten::add_", 50, 2_000_000)},
			nil,
			"fp32 GEMMs and convolutions bypass the tensor cores: on Volta (V100) they need float16 (AMP)",
			[]string{"took 60.0 ms (0.500 ms in GEMMs, 59.5 ms in convolutions)",
				"39.5 ms of the GEMM-named kernels belong to convolutions: the operators that launched them are convolutions (aten::convolution_backward 45.0 ms, aten::cudnn_convolution 15.0 ms)",
				"the matmul operators launched 0.500 ms"},
			[]string{"GradScaler"}, []string{"40.0 ms in GEMMs", "graph"}},
		{"every sgemm launched by a convolution: the finding speaks of convolutions only", v100,
			[][]any{sgemm(60_000_000)},
			[][]any{opRow(1, "aten::cudnn_convolution", 10, 30_000_000), opRow(1, "aten::cudnn_convolution_backward_input", 10, 31_000_000)},
			nil,
			"fp32 convolutions bypass the tensor cores: on Volta (V100) they need float16 (AMP)",
			[]string{"fp32 convolution kernels on the SIMT path took 60.0 ms, 60.0% of GPU busy time", "60.0 ms of the GEMM-named kernels belong to convolutions"},
			nil, []string{"in GEMMs", "graph"}},
		{"A100: sgemm of convolutions takes cuDNN's TF32 fix, not the matmul one", a100,
			[][]any{kernelRow("ampere_sgemm_128x64_nn", 100, 500_000, nil), kernelRow("cudnn_ampere_scudnn_128x64_relu_xregs_large_nn_v1", 100, 100_000, nil)},
			[][]any{opRow(1, "aten::cudnn_convolution", 10, 60_000_000)},
			nil,
			"fp32 convolutions bypass the tensor cores: TF32 or bfloat16 would use them",
			[]string{"50.0 ms of the GEMM-named kernels belong to convolutions"},
			[]string{"torch.backends.cudnn.allow_tf32 = True"}, []string{"set_float32_matmul_precision"}},
		{"no launch linked to an operator: the names' split", v100,
			simtKernels(),
			[][]any{opRow(1, "aten::cudnn_convolution", 10, 0), opRow(1, "aten::mm", 10, 0)},
			nil,
			"fp32 GEMMs and convolutions bypass the tensor cores: on Volta (V100) they need float16 (AMP)",
			[]string{"took 60.0 ms (20.0 ms in GEMMs, 40.0 ms in convolutions)"},
			nil, []string{"belong to convolutions", "graph"}},
		{"convolutions launched less than their own SIMT kernels (resnet_2080ti's mislinked launches): nothing moves", v100,
			simtKernels(),
			[][]any{opRow(1, "aten::result_type", 10, 50_000_000), opRow(1, "aten::cudnn_convolution", 10, 30_000_000)},
			nil,
			"fp32 GEMMs and convolutions bypass the tensor cores: on Volta (V100) they need float16 (AMP)",
			[]string{"took 60.0 ms (20.0 ms in GEMMs, 40.0 ms in convolutions)"},
			nil, []string{"belong to convolutions"}},
		{"matmul operators launched the sgemm: GEMMs stay GEMMs", v100,
			[][]any{sgemm(60_000_000)},
			[][]any{opRow(1, "aten::mm", 100, 40_000_000), opRow(2, "aten::addmm", 100, 20_000_000), opRow(1, "aten::cudnn_convolution", 10, 5_000_000)},
			[][]any{graphRow(-1, 12, 30_000_000)},
			"fp32 GEMMs bypass the tensor cores: on Volta (V100) they need float16 (AMP)",
			[]string{"fp32 GEMM kernels on the SIMT path took 60.0 ms, 60.0% of GPU busy time"},
			nil, []string{"convolution", "graph"}},
		{"graph replays, no launch linked (trace_diff_test_v100): the trace cannot say, the fix recaptures", v100,
			[][]any{sgemm(60_000_000)},
			[][]any{opRow(1, "aten::mm", 100, 0), opRow(1, "aten::addmm", 100, 0)},
			[][]any{graphRow(-2, 0, 5_000_000), graphRow(-1, 12, 80_000_000)},
			"fp32 GEMMs bypass the tensor cores: on Volta (V100) they need float16 (AMP)",
			[]string{"The rank replayed CUDA graphs (12 launches, whose kernels ran 80.0 ms, 80.0% of GPU busy time), and the trace links no launch to its operator, so it cannot say how much of this fp32 time ran inside them."},
			[]string{"Train with automatic mixed precision in float16", "(the trace cannot say which do)", "one captured in fp32 stays fp32", "autocast must be active where the graph is captured",
				"make_graphed_callables", "captured again", "with torch.cuda.amp.autocast(cache_enabled=False): model = torch.cuda.make_graphed_callables(model, (x,))"},
			[]string{"most likely", "convolution"}},
		{"graph replays and eager matmuls that launched a tenth: most likely inside the graphs", v100,
			[][]any{sgemm(60_000_000)},
			[][]any{opRow(1, "aten::mm", 100, 6_000_000), opRow(1, "aten::add_", 100, 3_000_000)},
			[][]any{graphRow(3, 10, 50_000_000), graphRow(4, 2, 20_000_000)},
			"fp32 GEMMs bypass the tensor cores: on Volta (V100) they need float16 (AMP)",
			[]string{"54.0 ms of this fp32 time was launched by no eager matmul or convolution operator, and the rank replayed CUDA graphs (12 launches, whose kernels ran 70.0 ms, 70.0% of GPU busy time): most likely it ran inside them."},
			[]string{"These kernels most likely run inside the CUDA graphs", "cache_enabled=False"},
			[]string{"cannot say"}},
		{"graph replays smaller than the rest: up to their time", v100,
			[][]any{sgemm(60_000_000)},
			[][]any{opRow(1, "aten::add_", 100, 3_000_000)},
			[][]any{graphRow(-1, 4, 20_000_000)},
			"",
			[]string{"60.0 ms of this fp32 time was launched by no eager matmul or convolution operator", "up to 20.0 ms of it can have run inside them"},
			[]string{"Where these kernels run inside the CUDA graphs:"},
			[]string{"most likely"}},
		{"only kernels without a launching CPU event (graph -2): no graph sentence", v100,
			[][]any{sgemm(60_000_000)},
			[][]any{opRow(1, "aten::mm", 100, 0)},
			[][]any{graphRow(-2, 0, 30_000_000)},
			"", nil, nil, []string{"graph"}},
		{"A100 graphs: TF32 or bfloat16 in effect at capture", a100,
			[][]any{kernelRow("ampere_sgemm_128x64_nn", 100, 600_000, nil)},
			nil,
			[][]any{graphRow(-1, 12, 80_000_000)},
			"fp32 GEMMs bypass the tensor cores: TF32 or bfloat16 would use them",
			[]string{"cannot say"},
			[]string{"the TF32 setting or bfloat16 autocast must be active where the graph is captured", `with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False)`},
			[]string{"float16)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := rig{producer: "profiler_step", gpu: tc.gpu, busy: 100_000_000, idle: 5_000_000, kernels: tc.kernels,
				features: []string{"cpu_ops", "backward"}, ops: tc.ops, graphRows: tc.graphs}
			fs := only(g, "fp32_no_tensor_cores", nil)
			if len(fs) != 1 {
				t.Fatalf("findings = %q, want one fp32_no_tensor_cores", rules(fs))
			}
			f := fs[0]
			if tc.title != "" && f.Title != tc.title {
				t.Errorf("title = %q, want %q", f.Title, tc.title)
			}
			for _, w := range tc.obs {
				if !strings.Contains(f.Observation, w) {
					t.Errorf("observation lacks %q:\n%s", w, f.Observation)
				}
			}
			for _, w := range tc.fix {
				if !strings.Contains(f.Fix+"\n"+f.Snippet, w) {
					t.Errorf("fix lacks %q:\n%s\n%s", w, f.Fix, f.Snippet)
				}
			}
			if w := hasAny(f.Title+"\n"+f.Observation+"\n"+f.Fix+"\n"+f.Snippet, tc.absent...); w != "" {
				t.Errorf("finding mentions %q:\n%s\n%s\n%s\n%s", w, f.Title, f.Observation, f.Fix, f.Snippet)
			}
		})
	}
}

// trace_diff_test_v100's CUDA graphs run inside AOTAutograd's
// CompiledFunction: the compiler captures them when it traces, so the
// fix puts autocast around the compiled model's call from its first call,
// not around torch.cuda.graph or make_graphed_callables.
func TestFP32GraphsOfCompiledCode(t *testing.T) {
	for _, compiled := range []bool{true, false} {
		features := []string{"cpu_ops", "backward"}
		if compiled {
			features = append(features, "aot_autograd=CompiledFunction")
		}
		g := rig{producer: "profiler_step", gpu: "Tesla V100-SXM2-16GB", busy: 100_000_000, idle: 5_000_000,
			kernels: [][]any{kernelRow("volta_sgemm_128x64_nn", 100, 600_000, nil)}, features: features,
			ops: [][]any{opRow(1, "aten::mm", 100, 0)}, graphRows: [][]any{graphRow(-1, 12, 80_000_000)}}
		fs := only(g, "fp32_no_tensor_cores", nil)
		if len(fs) != 1 {
			t.Fatalf("compiled %v: findings = %q", compiled, rules(fs))
		}
		got := fs[0].Fix + "\n" + fs[0].Snippet
		hasCompiled := strings.Contains(got, "the graphs here run inside compiled code") && strings.Contains(got, "out = compiled_model(x)  # from its first call")
		hasByHand := strings.Contains(got, "make_graphed_callables")
		if hasCompiled != compiled || hasByHand == compiled {
			t.Errorf("compiled %v: %s", compiled, got)
		}
	}
}

// Where a rank's align1 GEMM kernels are mostly its unfused attention's
// batched matmuls (h100_owlv2: all 360 align1 launches are aten::bmm's, 230
// ms, which the attention finding already counts), the attention finding
// says so in one sentence and no misaligned_gemm finding repeats them. The
// ops area bounds the part outside aten::bmm/baddbmm: the other GEMM and
// convolution operators' GPU time, graph replays, and GPU work linked to
// no operator; where that is half the align1 time or more, or nothing is
// linked, the misaligned finding stays.
func TestAlign1FoldedIntoAttention(t *testing.T) {
	const (
		softmax = "void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::BFloat16, float, c10::BFloat16, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)"
		align1  = "void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_tn_align1>(Params)"
		hopper  = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1"
		add     = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int)"
		note    = "They are also most of the 30.0 ms that CUTLASS GEMM kernels built for 1-element alignment (align1) took in 100 launches, 30.0% of GPU busy time"
	)
	// 90 ms of kernels: softmax 40, align1 30, Hopper GEMM 10, add 10.
	kernels := func(alignNs int64) [][]any {
		return [][]any{kernelRow(softmax, 100, 400_000, nil), kernelRow(align1, 100, alignNs/100, nil),
			kernelRow(hopper, 100, 100_000, nil), kernelRow(add, 100, 100_000, nil)}
	}
	// The operators launched all 90 ms: aten::bmm the align1 30 ms,
	// aten::addmm the Hopper GEMM's 10 ms (mm: what else they launched).
	ops := func(bmm, addmm, add int64) [][]any {
		return [][]any{opRow(1, "aten::_softmax", 10, 40_000_000), opRow(1, "aten::bmm", 10, bmm), opRow(2, "aten::baddbmm", 10, 0),
			opRow(1, "aten::addmm", 10, addmm), opRow(1, "aten::add", 10, add)}
	}
	tests := []struct {
		name     string
		alignNs  int64
		ops      [][]any
		graphs   [][]any
		features []string
		want     string // rules() of eager_attention and misaligned_gemm
		say      []string
	}{
		{"all align1 time inside the batched matmuls (h100_owlv2): folded", 30_000_000, ops(30_000_000, 10_000_000, 10_000_000), nil, nil,
			"eager_attention:critical:hypothesis", []string{note, "account for at most 10.0 ms of it; the fused attention replaces them, so they are no separate issue."}},
		{"the recorded misaligned shape is the attention's bmm", 30_000_000, ops(30_000_000, 10_000_000, 10_000_000), nil,
			[]string{"gemm_misaligned=aten::bmm [16, 5185, 64] by [16, 64, 5185] c10::BFloat16 N=5185"},
			"eager_attention:critical:hypothesis", []string{note, "(the recorded aten::bmm [16, 5185, 64] by [16, 64, 5185] in bf16: its N of 5,185 is not a multiple of 16 bytes"}},
		{"other GEMMs launched half the align1 time: kept", 30_000_000, ops(15_000_000, 15_000_000, 20_000_000), nil, nil,
			"eager_attention:critical:hypothesis misaligned_gemm:critical:hypothesis", nil},
		{"no launch linked to an operator: kept", 30_000_000, ops(0, 0, 0), nil, nil,
			"eager_attention:critical:hypothesis misaligned_gemm:critical:hypothesis", nil},
		{"GPU work linked to no operator could hold it: kept", 30_000_000, ops(30_000_000, 10_000_000, 0)[:2], nil, nil,
			"eager_attention:critical:hypothesis misaligned_gemm:critical:hypothesis", nil},
		{"graph replays could hold it: kept", 30_000_000, ops(30_000_000, 10_000_000, 10_000_000), [][]any{graphRow(-1, 5, 20_000_000)}, nil,
			"eager_attention:critical:hypothesis misaligned_gemm:critical:hypothesis", nil},
		{"align1 under its share: no finding, no sentence", 9_000_000, ops(9_000_000, 10_000_000, 10_000_000), nil, nil,
			"eager_attention:critical:hypothesis", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := rig{producer: "profiler_step", gpu: "NVIDIA H100 80GB HBM3", busy: 100_000_000, idle: 5_000_000, kernels: kernels(tc.alignNs),
				features: append([]string{"cpu_ops"}, tc.features...), ops: tc.ops, graphRows: tc.graphs}
			var fs []evidence.Finding
			for _, f := range findings.Evaluate(evidence.Rollup(g.bundle(), evidence.Filter{}), nil) {
				if f.Rule == "eager_attention" || f.Rule == "misaligned_gemm" {
					fs = append(fs, f)
				}
			}
			if got := rules(fs); got != tc.want {
				t.Fatalf("findings = %q, want %q", got, tc.want)
			}
			obs := fs[0].Observation
			for _, w := range tc.say {
				if !strings.Contains(obs, w) {
					t.Errorf("attention observation lacks %q:\n%s", w, obs)
				}
			}
			if folded := strings.Contains(obs, "align1"); folded != (tc.say != nil) {
				t.Errorf("attention observation names align1: %v, want %v:\n%s", folded, tc.say != nil, obs)
			}
		})
	}
}

// Where the kernels area says how much of each kernel's time graph
// replays ran (graph_ns: the kernels that carry a graph launch's
// correlation), the fp32 finding gives that figure instead of guessing
// from the operators (trace_diff_test_v100: 177.8 of 199.7 ms), and the
// fix says most of the kernels run inside the graphs; under a tenth, it
// says nothing of them.
func TestFP32ReplayedMeasured(t *testing.T) {
	for _, c := range []struct {
		replay         int64
		obs, fix, none string
	}{
		{54_000_000, "54.0 ms of this fp32 time (90.0%) ran inside them: those kernels carry a graph launch's correlation id", "Most of these kernels run inside the CUDA graphs", "cannot say"},
		{12_000_000, "12.0 ms of this fp32 time (20.0%) ran inside them", "Where these kernels run inside the CUDA graphs:", "Most of these"},
		{3_000_000, "", "", "inside them"},
	} {
		g := rig{producer: "profiler_step", gpu: "Tesla V100-SXM2-32GB", busy: 100_000_000, idle: 5_000_000,
			kernels:  [][]any{kernelRow("volta_sgemm_64x64_nt", 100, 600_000, nil)},
			features: []string{"cpu_ops", "backward"}, ops: [][]any{opRow(1, "aten::mm", 100, 0)},
			graphRows: [][]any{graphRow(-1, 12, 80_000_000)}}
		b := g.bundle()
		k := b.Tables["kernels"]
		k.Columns = append(k.Columns, table.Column{Name: "graph_ns"})
		k.Rows[0] = append(k.Rows[0], c.replay)
		var f *evidence.Finding
		for _, x := range findings.Evaluate(evidence.Rollup(b, evidence.Filter{}), nil) {
			if x.Rule == "fp32_no_tensor_cores" {
				f = &x
			}
		}
		if f == nil {
			t.Fatalf("replay %d: no fp32 finding", c.replay)
		}
		if !strings.Contains(f.Observation, c.obs) || !strings.Contains(f.Fix, c.fix) || strings.Contains(f.Observation+f.Fix, c.none) {
			t.Errorf("replay %d ns:\n%s\n%s\nwant %q, %q, not %q", c.replay, f.Observation, f.Fix, c.obs, c.fix, c.none)
		}
	}
}
