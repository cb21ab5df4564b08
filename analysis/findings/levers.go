package findings

// GPU-side levers: what the kernels themselves show, as against the idle
// time between them (rules.go). Each rule reads the kernels or memory area,
// and scopes its fix by what the device can run (analysis/device) and what
// the trace shows of the framework (Workload): a fix the device or the
// framework rules out is never printed (docs/JUDGEMENT.md §1.3, §2.2).
//
//   fp32_no_tensor_cores   fp32 GEMMs and convolutions on the SIMT path
//   elementwise_dominated  eager elementwise/reduction kernels: a fusion lever
//   eager_attention        an unfused attention: eager softmax beside batched matmuls
//   kernel_slow_instances  a kernel's slowest instances far above its median
//   short_kernel_storm     a busy GPU running mostly tiny kernels
//   memory_peak            the allocator peak near the device's memory

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tracebook/tracebook/analysis/device"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/internal/rx"
	"github.com/tracebook/tracebook/analysis/table"
)

// lever is what a lever rule knows about one rank besides its numbers.
type lever struct {
	ri       evidence.RankInfo
	caps     device.Caps
	w        Workload
	compiled bool   // torch.compile in use (Workload, or the operators of an older bundle)
	era      string // "2021" for Operator/Runtime/Kernel traces (about PyTorch 1.8-1.10)
	training bool   // backward or optimizer ran, or a ProfilerStep# loop shows no operator that says otherwise
	infer    bool   // operators were captured and none is backward or an optimizer step
	serving  bool   // vLLM or SGLang: they compile and graph the model themselves
	rr       rankRow
	// judged is the rank's GPU span the rules judge (ctx.steady: start-up
	// and held idle left out), the base of the levers' shares as of the
	// other findings'.
	judged int64
	// minCC is the least compute capability (×10) the rank's kernel names
	// imply where the device is not known (device.MinCCFromKernels; 0 =
	// none), minCCKernel the kernel that implies it.
	minCC       int
	minCCKernel string
}

func (l lever) busyShare() float64 {
	if span := l.span(); span > 0 {
		return float64(l.rr.busy) / float64(span)
	}
	return 0
}

// span is the rank's GPU span the rules judge: the start-up and held idle
// the capture gate leaves out hold no kernel, so every kernel the levers
// weigh lies in it (resnet_2080ti: its fp32 kernels 27.9% of the judged
// 9.9 s, not 18.9% of the whole 14.5 s).
func (l lever) span() int64 {
	if l.judged > 0 {
		return l.judged
	}
	return l.rr.busy + l.rr.idle
}

// busySpan is "the GPU was busy X% of its span", the span the device
// levers weigh their kernels against; where the rules judge less than the
// whole span (start-up or held idle left out), it says which.
func (c *ctx) busySpan(l lever) string {
	s := "the GPU was busy " + pct(l.busyShare()) + " of its span"
	if full := l.rr.busy + l.rr.idle; l.span() < full && (full-l.span())*1000 >= full {
		s = "the GPU was busy " + pct(l.busyShare()) + " of " + c.judgedSpan(l.rr.trace, l.rr.rank, l.span())
	}
	return s
}

// kernelCritical says whether a kernel lever (precision, fusion,
// alignment) is critical: its own share reaches the rule's critical
// threshold (shareCritical) and the GPU is busy at least gpu_busy_critical
// of the span, the kernels then being most of the time. Where the share
// alone would make it critical, f's observation says why it stays a
// follow-up, so that the report's order reads as the rules'
// (resnet_2080ti: fp32 SIMT kernels 27.9% of the judged span, a follow-up
// under a critical 6.4% pageable-copy issue, with the GPU busy 48.0%).
func (c *ctx) kernelCritical(f *evidence.Finding, l lever, shareCritical bool) bool {
	th := c.th["gpu_busy_critical"]
	if !shareCritical {
		return false
	}
	if l.busyShare() >= th {
		return true
	}
	f.Observation += fmt.Sprintf(" It stays a follow-up: a kernel lever is critical only with the GPU busy at least %s of the span the rules judge (here %s); with the GPU idle for the rest, faster kernels shorten only the part of the step the GPU sets.",
		pct(th), pct(l.busyShare()))
	return false
}

// leverOf gathers the device, workload and GPU times of (trace, rank).
func (c *ctx) leverOf(rr rankRow) lever {
	ri := c.rankInfo(rr.trace, rr.rank)
	l := lever{ri: ri, rr: rr, w: c.workload(rr.trace, rr.rank)}
	_, l.judged = c.steady(rr.trace, rr.rank)
	l.caps = c.caps(rr.trace, rr.rank)
	l.serving = ri.Serving()
	if !l.caps.Known {
		if major, minor, k, ok := device.MinCCFromKernels(c.kernelNames(rr.trace, rr.rank)); ok {
			l.minCC, l.minCCKernel = major*10+minor, k
		}
	}
	if l.w.Known {
		l.compiled, l.era = l.w.Compiled, l.w.Era
		l.training = l.w.Training || (!l.w.Operators && ri.Producer == evidence.ProducerProfilerStep)
		l.infer = l.w.Operators && !l.w.Training
	} else {
		// An older bundle without the workload area: the operators still
		// name torch.compile's frames, and the format names the era.
		l.compiled = c.opsShowCompile(rr.trace, rr.rank)
		if ri.Format == "kineto_2021" {
			l.era = "2021"
		}
		l.training = ri.Producer == evidence.ProducerProfilerStep
	}
	return l
}

// torchReleased are the release days of the PyTorch versions a fix can
// need (torch.cuda.graph: 1.10; torch.compile: 2.0), from PyTorch's
// release notes.
var torchReleased = map[[2]int]time.Time{
	{1, 10}: time.Date(2021, 10, 21, 0, 0, 0, 0, time.UTC),
	{2, 0}:  time.Date(2023, 3, 15, 0, 0, 0, 0, time.UTC),
}

// torchBefore: the trace states a PyTorch version older than major.minor
// (false when it states none).
func (l lever) torchBefore(major, minor int) bool {
	return torchVersionBefore(l.w.TorchVersion, major, minor)
}

// torchVersionBefore: v, a PyTorch version as a trace states it ("1.13.1",
// "2.1.0+cu121"), is older than major.minor (false when v is empty or not
// a version).
func torchVersionBefore(v string, major, minor int) bool {
	if v == "" {
		return false
	}
	parts := strings.SplitN(strings.TrimSpace(v), ".", 3)
	if len(parts) < 2 {
		return false
	}
	var ma, mi int
	if _, err := fmt.Sscanf(parts[0]+" "+parts[1], "%d %d", &ma, &mi); err != nil {
		return false
	}
	return ma < major || (ma == major && mi < minor)
}

// ampAPI is the float16 autocast context and GradScaler a fix names, in
// the API of the PyTorch the trace states: torch.amp's device-generic
// forms from 2.3, when torch.amp.GradScaler("cuda") arrived (2.4
// deprecates torch.cuda.amp's, with a warning on every call), torch.cuda.amp's
// where the trace states an older version or none (they run on every
// PyTorch since 1.6).
func (l lever) ampAPI() (autocast, scaler string) {
	if l.w.TorchVersion != "" && !l.torchBefore(2, 3) {
		return `torch.autocast("cuda", dtype=torch.float16)`, `torch.amp.GradScaler("cuda")`
	}
	return "torch.cuda.amp.autocast()", "torch.cuda.amp.GradScaler()"
}

// oldTorch: the trace dates itself before PyTorch major.minor, by its
// stated version or by its format (the 2021 era is about PyTorch 1.8-1.10);
// why says how, for a fix that starts with an upgrade.
func (l lever) oldTorch(major, minor int) (why string, old bool) {
	switch {
	case l.torchBefore(major, minor):
		return fmt.Sprintf("the trace states PyTorch %s", l.w.TorchVersion), true
	case l.era == "2021":
		return "this trace's format dates it to about PyTorch 1.8-1.10", true
	}
	// A capture from before the release cannot have run it, unless the
	// trace shows that version's own frames (a nightly).
	if rel, ok := torchReleased[[2]int{major, minor}]; ok && l.ri.BaseTimeNs > 0 && l.w.TorchMajor < major && l.w.TorchVersion == "" {
		if at := time.Unix(0, l.ri.BaseTimeNs).UTC(); at.Before(rel) {
			return fmt.Sprintf("this trace was captured on %s, before PyTorch %d.%d was released (%s)", at.Format("2006-01-02"), major, minor, rel.Format("2006-01-02")), true
		}
	}
	return "", false
}

// kernelNames are the names of the rank's kernels (the kernels area).
func (c *ctx) kernelNames(trace string, rank int) []string {
	k := c.ev.Table("kernels")
	if k == nil {
		return nil
	}
	var out []string
	for r := range k.Rows {
		if evidence.Str(k, r, "trace") == trace && int(evidence.Int(k, r, "rank")) == rank {
			out = append(out, evidence.Str(k, r, "name"))
		}
	}
	return out
}

// opsShowCompile: the CPU operators include torch.compile's frames
// (docs/JUDGEMENT.md §2.2). Triton kernel names alone do not count, nor do
// Dynamo's cache-lookup frames (eager code passes through Dynamo too), as
// in workload.go.
func (c *ctx) opsShowCompile(trace string, rank int) bool {
	o := c.ev.Table("ops")
	if o == nil {
		return false
	}
	for r := range o.Rows {
		if evidence.Str(o, r, "trace") != trace || int(evidence.Int(o, r, "rank")) != rank {
			continue
		}
		n := evidence.Str(o, r, "name")
		if strings.HasPrefix(n, "Torch-Compiled Region") || strings.HasPrefix(n, "CompiledFunction") ||
			strings.HasPrefix(n, "## Call CompiledFxGraph") {
			return true
		}
	}
	return false
}

// compileAdvice is the one decision whether torch.compile can be
// prescribed on l's rank (docs/JUDGEMENT.md §1.3, §2): ok with an empty why
// means "prescribe it"; ok with a why, prescribe it and say what to check;
// upgrade, it needs a newer PyTorch first (why says which the trace shows);
// otherwise why says why not (a serving engine that compiles itself, a
// model already compiled, a device Triton refuses).
func (l lever) compileAdvice() (ok, upgrade bool, why string) {
	switch {
	case l.serving:
		return false, false, "the serving engine compiles and graphs its model itself"
	case l.compiled:
		return false, false, "the trace already runs torch.compile (compiled-region frames)"
	case l.caps.Known && !l.caps.Compile:
		return false, false, "torch.compile's Triton backend does not run on " + orName(l.caps.Family) + " (compute capability below 7.0)"
	}
	if why, old := l.oldTorch(2, 0); old && !(l.w.AOTAutograd && !l.torchBefore(2, 0) && l.era == "") {
		return false, true, why
	}
	switch {
	case l.aotWithoutInductor():
		// functorch's aot_function on PyTorch 1.13, or a 2.0 nightly's
		// torch.compile, with a backend that fuses nothing: no Inductor
		// kernel ran (df_index_resolver_v100, 2022-11-30: 19,370 aten
		// kernels under CompiledFunction, none triton_).
		return true, false, "the model already runs AOTAutograd's CompiledFunction operators, and no Inductor (triton_) kernel ran: its backend fuses nothing (aot_eager, or functorch's aot_function with a non-fusing compiler; the trace cannot say which, so check it first); Inductor, torch.compile's default backend, fuses them and needs PyTorch 2.0 or later: check torch.__version__"
	case l.w.AOTAutograd && l.w.TorchVersion == "":
		// functorch's aot_function on PyTorch 1.13, or a 2.0 nightly's
		// torch.compile: its date does not rule torch.compile out.
		return true, false, "the trace runs AOTAutograd's CompiledFunction operators, which functorch's aot_function on PyTorch 1.13 or a PyTorch 2.0 nightly's torch.compile runs: check torch.__version__, as torch.compile needs 2.0 or later"
	case !l.caps.Known && l.ri.Platform == "cuda" && l.minCC >= 70:
		// The device is not named, but its kernels were written for an
		// architecture torch.compile runs on (sampled_2of128: ampere_sgemm).
		return true, false, fmt.Sprintf("torch.compile needs PyTorch 2.0 or later, which the trace does not state; the GPU runs %s, written for compute capability %d.%d or later, which torch.compile supports",
			shortName(l.minCCKernel), l.minCC/10, l.minCC%10)
	case !l.caps.Known && l.ri.Platform == "cuda":
		return true, false, "torch.compile needs PyTorch 2.0 or later and a GPU of compute capability 7.0 or more; the trace does not say which this is"
	case !l.caps.Known:
		return true, false, "torch.compile needs PyTorch 2.0 or later and a backend that supports this device; check both"
	}
	return true, false, ""
}

// aotWithoutInductor: the rank runs AOTAutograd's CompiledFunction
// operators, no Inductor kernel, and states no PyTorch version: compiled
// already, with a backend that fuses nothing. docs/JUDGEMENT.md §2.2 never
// says "try torch.compile" there; the fixes say to check that backend and
// move the compiled region to Inductor.
func (l lever) aotWithoutInductor() bool {
	return l.w.AOTAutograd && l.w.TorchVersion == "" && !l.w.InductorKernels
}

// compileFix says how to bring torch.compile to l's rank: a fix (to follow
// a colon) and a snippet, or ok false where compileAdvice rules it out or
// the device is not known to allow it. The caller has checked that the
// trace is not compiled already.
func (l lever) compileFix(mode string) (fix, snippet string, ok bool) {
	can, upgrade, why := l.compileAdvice()
	if (!can && !upgrade) || !l.caps.Compile {
		return "", "", false
	}
	notes := ""
	if n := l.compileNotes(); n != "" {
		notes = "; " + n
	}
	if upgrade {
		return "upgrade to PyTorch >= 2.0 (" + why + ", which has no torch.compile), then compile the model" + notes + ".",
			l.compileSnippet(mode, "PyTorch >= 2.0"), true
	}
	if l.aotWithoutInductor() {
		return "compile the model's CompiledFunction region with Inductor instead (" + why + ")" + notes + ".", l.compileSnippet(mode, ""), true
	}
	if l.w.TorchMajor >= 2 {
		return "compile the model with torch.compile" + notes + ".", l.compileSnippet(mode, ""), true
	}
	return "compile the model with torch.compile (PyTorch >= 2.0)" + notes + ".", l.compileSnippet(mode, ""), true
}

// compileCall is the torch.compile call a fix prints on l's rank. It
// names the Inductor backend where the device or the trace gives a
// reason to: a GPU whose Triton matmuls have no tensor cores
// (tritonMatmulNote), where the fusion Inductor brings is the point, or
// a trace that ran AOTAutograd with a backend that fused nothing.
func (l lever) compileCall(mode string) string {
	args := []string{"model"}
	if l.w.TorchRec {
		args[0] = "dense_arch"
	}
	if tritonMatmulNote(l.caps) != "" || (l.w.AOTAutograd && !l.w.InductorKernels) {
		args = append(args, `backend="inductor"`)
	}
	if mode != "" {
		args = append(args, fmt.Sprintf("mode=%q", mode))
	}
	return "torch.compile(" + strings.Join(args, ", ") + ")"
}

// compileNotes is the clause a torch.compile fix adds on l's rank
// (onDevice; "" for none): what the device's matmuls gain from it
// (tritonMatmulNote) and, where the trace states no PyTorch 2, which
// wheels bring one to a GPU the newer builds dropped (wheelNote).
func (l lever) compileNotes() string {
	wheels := ""
	if l.w.TorchMajor < 2 {
		wheels = wheelNote(l.caps)
	}
	n := onDevice(l.caps, tritonMatmulNote(l.caps), wheels)
	if l.w.TorchRec {
		// dlrm_8rank: the host time is the sparse side's (input dist,
		// awaitables), the DataLoader and the optimizer, which no compiled
		// graph holds.
		t := "with TorchRec, compile the dense modules (DLRM's dense_arch and over_arch), not the whole DistributedModelParallel: its sparse side (the KeyedJaggedTensor input dist and its awaitables) breaks the graph and keeps its host time whatever torch.compile does"
		if n == "" {
			return t
		}
		n += "; " + t
	}
	return n
}

// compileSnippet is a torch.compile fix's snippet: the compile call
// (compileCall), with comment as its comment, after the line that
// installs the wheels compileNotes names.
func (l lever) compileSnippet(mode, comment string) string {
	line := "model = " + l.compileCall(mode)
	if l.w.TorchRec {
		line = "dense_arch = " + l.compileCall(mode) + "  # each dense module, before DistributedModelParallel wraps the model"
		if comment != "" {
			line += "; " + comment
		}
		comment = ""
	}
	if comment != "" {
		line += "  # " + comment
	}
	if w := wheelCommand(l.caps, l.w); w != "" && l.w.TorchMajor < 2 {
		return w + "\n" + line
	}
	return line
}

// --- fp32_no_tensor_cores ---------------------------------------------------

var (
	// simtRE: GEMM kernel names on the SIMT path (fp32 sgemm, the complex
	// cgemm of cuDNN's FFT convolutions, cuBLAS's gemv/gemmSN/gemmk1).
	// Every name it matches holds "gem" (hasGem is the cheap test before it).
	simtRE = rx.MustCompile(`(?i)(^|[^a-z])sgemm|(^|[^a-z]|g)cgemm|gemv|gemmsn|gemmk1`)
	// Markers of tensor-core math in NVIDIA kernel names (cuBLAS, cuDNN,
	// CUTLASS, nvjet), and of types other than fp32.
	tensorMarkers = []string{"tensorop", "hmma", "wgmma", "wmma", "imma", "h884", "s884", "h1688", "s1688", "h16816", "s16816",
		"i8816", "i16832", "s161616", "nvjet", "tf32", "tcgen05", "sm80_", "sm86_", "sm89_", "sm90_", "sm100", "sm120"}
	notFP32Markers = []string{"f16", "half", "bfloat16", "e4m3", "e5m2", "fp8", "int8", "double", "dgemm", "zgemm"}
	convMarkers    = []string{"conv", "cudnn", "fprop", "dgrad", "wgrad", "winograd", "fft2d_"}
	// convKernels: the convolution kernels of cuDNN's legacy algorithms
	// (and at::native's), which name their type only as a template
	// argument; cuDNN's batch-norm and layout kernels are not among them.
	convKernels = []string{"conv", "fprop", "dgrad", "wgrad", "winograd", "fft2d_"}
	// candidateMarkers: every name fp32SIMT accepts holds "gem" or one of these.
	candidateMarkers = []string{"cudnn", "conv", "grad", "fft2d_", "xmma", "simt_s", "fprop"}
)

// hasGem reports whether s holds "gem" in any case, as every name simtRE
// matches does: most kernel names do not, and the check spares them the
// regular expression (slow in the viewer module, which runs it per view).
func hasGem(s string) bool {
	for i := 0; i+3 <= len(s); i++ {
		if s[i]|0x20 == 'g' && s[i+1]|0x20 == 'e' && s[i+2]|0x20 == 'm' {
			return true
		}
	}
	return false
}

// hasFold reports whether s holds sub (lower-case ASCII) in any ASCII case.
func hasFold(s, sub string) bool {
	n := len(sub)
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for ; j < n; j++ {
			b := s[i+j]
			if 'A' <= b && b <= 'Z' {
				b += 'a' - 'A'
			}
			if b != sub[j] {
				break
			}
		}
		if j == n {
			return true
		}
	}
	return false
}

func hasAnyFold(s string, subs []string) bool {
	for _, x := range subs {
		if hasFold(s, x) {
			return true
		}
	}
	return false
}

// fp32SIMT says whether a kernel name shows an fp32 GEMM or convolution on
// the SIMT (FFMA) path rather than on tensor cores, and which ("GEMM" or
// "convolution"; "" when neither). It reads NVIDIA's names: volta_sgemm,
// ampere_sgemm, turing/volta/ampere_scudnn, implicit_convolve_sgemm,
// cuDNN's dgrad/wgrad engines, non-fused Winograd and FFT kernels templated
// on float, cuBLAS's gemv/gemmk1/gemmSN on float, CUTLASS simt_s*, and the
// sm80+ xmma kernels whose types are all f32 (f32f32_f32f32_f32, ffma).
// Volta's volta_h884gemm, s1688/h16816 CUTLASS kernels, tf32/bf16/f16
// xmma and nvjet kernels are tensor cores; fp64 (dgemm, double) is another
// story and is left out.
func fp32SIMT(name string) string {
	// Most kernel names are neither: one cheap pass spares them the rest
	// (the viewer module runs this per kernel name per view).
	if !hasGem(name) && !hasAnyFold(name, candidateMarkers) {
		return ""
	}
	kind := func() string {
		if hasAnyFold(name, convMarkers) {
			return "convolution"
		}
		return "GEMM"
	}
	if hasFold(name, "xmma") {
		// cuBLAS/cuDNN's own fallback on sm80+: xmma with FFMA math.
		if !hasFold(name, "tf32") && (hasFold(name, "f32f32_f32f32_f32") || hasFold(name, "_ffma")) {
			return kind()
		}
		return ""
	}
	if hasAnyFold(name, tensorMarkers) || hasAnyFold(name, notFP32Markers) {
		return ""
	}
	switch {
	case hasGem(name) && simtRE.MatchString(name):
		if hasFold(name, "sgemm") || hasFold(name, "cgemm") || hasFold(name, "float") {
			return kind()
		}
		return "" // gemv/gemmk1 whose name does not give the type
	case hasFold(name, "scudnn") || hasFold(name, "simt_s"):
		return kind()
	case hasFold(name, "<float") && hasAnyFold(name, convKernels) && !hasFold(name, "depthwise"):
		return "convolution"
	}
	return ""
}

// IsFP32SIMT reports whether a kernel name shows an fp32 GEMM or
// convolution on the SIMT path (the kernels fp32_no_tensor_cores counts).
func IsFP32SIMT(name string) bool { return mathOf(name).simt != "" }

// kernelMath is what the fp32 lever reads from a kernel name: fp32SIMT's
// answer, tensorCoreMath's, and whether the name is a convolution's.
type kernelMath struct {
	simt     string
	tc, tf32 bool
	conv     bool
}

// mathMemo holds kernelMath per kernel name, up to mathMemoCap names: a
// report judges every view (rank, phase, window) again over the same few
// hundred names, each of which the scans above read many times over.
var (
	mathMu   sync.Mutex
	mathMemo = map[string]kernelMath{}
)

const mathMemoCap = 1 << 16

func mathOf(name string) kernelMath {
	mathMu.Lock()
	m, ok := mathMemo[name]
	mathMu.Unlock()
	if ok {
		return m
	}
	m = kernelMath{simt: fp32SIMT(name), conv: hasAnyFold(name, convMarkers)}
	m.tc, m.tf32 = tensorCoreMath(name)
	mathMu.Lock()
	if len(mathMemo) < mathMemoCap {
		mathMemo[name] = m
	}
	mathMu.Unlock()
	return m
}

// tensorCoreMath: a GEMM or convolution kernel whose name shows tensor-core
// math, and whether it is TF32.
func tensorCoreMath(name string) (tc, tf32 bool) {
	if !hasAnyFold(name, []string{"gemm", "conv", "cudnn", "fprop", "dgrad", "wgrad", "xmma", "nvjet", "cutlass", "mma"}) {
		return false, false
	}
	if hasFold(name, "xmma") && !hasFold(name, "tf32") && (hasFold(name, "f32f32_f32f32_f32") || hasFold(name, "_ffma")) {
		return false, false
	}
	if hasAnyFold(name, tensorMarkers) || hasFold(name, "xmma") {
		return true, hasFold(name, "tf32")
	}
	return false, false
}

func fp32NoTensorCores(c *ctx) []evidence.Finding {
	k := c.ev.Table("kernels")
	if k == nil {
		return nil
	}
	type acc struct {
		l              lever
		gemm, conv, tc int64
		// replay: of gemm+conv, what graph replays ran (the kernels
		// area's graph_ns); replayKnown: the area has that column.
		replay      int64
		replayKnown bool
		tf32Conv    bool  // a convolution already runs in TF32: cuDNN has TF32 on
		top         []int // rows, largest first
	}
	picks := worstRanks(c, func(rr rankRow) (any, float64, bool) {
		ri := c.rankInfo(rr.trace, rr.rank)
		if ri.GPUModel == "" || ri.Platform != "cuda" || rr.busy <= 0 {
			return nil, 0, false // no verdict from a blank device name; the names read here are NVIDIA's
		}
		a := &acc{replayKnown: k.Col("graph_ns") >= 0}
		for _, r := range c.rankRows(k, rr.trace, rr.rank) {
			if evidence.Str(k, r, "class") != "COMP" {
				continue
			}
			m := mathOf(evidence.Str(k, r, "name"))
			d := evidence.Int(k, r, "total_ns")
			switch m.simt {
			case "GEMM":
				a.gemm += d
				a.replay += evidence.Int(k, r, "graph_ns")
				a.top = append(a.top, r)
			case "convolution":
				a.conv += d
				a.replay += evidence.Int(k, r, "graph_ns")
				a.top = append(a.top, r)
			default:
				if m.tc {
					a.tc += d
					a.tf32Conv = a.tf32Conv || (m.tf32 && m.conv)
				}
			}
		}
		if a.gemm+a.conv == 0 {
			return nil, 0, false
		}
		a.l = c.leverOf(rr)
		if a.l.caps.Known && (!a.l.caps.TensorCores || a.l.caps.Vendor != "nvidia") {
			return nil, 0, false // no tensor cores (P100/GP100): no precision lever to offer
		}
		share := float64(a.gemm+a.conv) / float64(rr.busy)
		return a, share, share >= c.th["fp32_simt_share"]
	})
	var out []evidence.Finding
	for _, b := range picks {
		a := b.acc.(*acc)
		l := a.l
		simt := a.gemm + a.conv
		// The kernel name says GEMM; the operator that launched it may say
		// convolution (cuDNN's and im2col's convolutions run sgemm kernels):
		// the part of the GEMM-named time the matmul operators did not
		// launch, and the convolution operators did, is the convolutions'.
		ops := c.simtOps(b.trace, b.rank)
		moved := ops.convOwned(a.gemm, a.conv)
		a.gemm, a.conv = a.gemm-moved, a.conv+moved
		sort.SliceStable(a.top, func(i, j int) bool {
			return evidence.Int(k, a.top[i], "total_ns") > evidence.Int(k, a.top[j], "total_ns")
		})
		var names []string
		for i, r := range a.top {
			if i == 3 {
				break
			}
			names = append(names, fmt.Sprintf("%s (%s)", shortName(evidence.Str(k, r, "name")), ms(evidence.Int(k, r, "total_ns"))))
		}
		dev := l.ri.GPUModel
		if l.caps.Family != "" {
			dev = fmt.Sprintf("%s, %s", l.ri.GPUModel, l.caps.Family)
		}
		// The title and observation name the math the rank ran: a model
		// without convolutions (trace_diff_test_v100, df_index_resolver_v100)
		// has its fp32 GEMMs named alone, not beside "0.000 ms in
		// convolutions"; the split is given only when both ran.
		what, kernels, split := "GEMMs and convolutions", "GEMM and convolution kernels", fmt.Sprintf(" (%s in GEMMs, %s in convolutions)", ms(a.gemm), ms(a.conv))
		switch {
		case a.conv == 0:
			what, kernels, split = "GEMMs", "GEMM kernels", ""
		case a.gemm == 0:
			what, kernels, split = "convolutions", "convolution kernels", ""
		}
		obs := fmt.Sprintf("fp32 %s on the SIMT path took %s%s, %s of GPU busy time; %s, so they are %s of that span (%s, %s)%s. Largest: %s.",
			kernels, ms(simt), split, pct(b.score), c.busySpan(l), pct(float64(simt)/float64(l.span())), dev, c.where(b.trace, b.rank), others(b.n), strings.Join(names, "; "))
		if !ops.linked && a.gemm > 0 && a.conv > 0 {
			// No launch linked to an operator, by External id or by nesting
			// (the ops area's launches).
			obs += " The split is the kernels' names': cuDNN runs convolutions as sgemm kernels too, and the trace links no launch to an operator, by External id or by an operator around it."
		}
		if moved > 0 {
			obs += fmt.Sprintf(" %s of the GEMM-named kernels belong to convolutions: the operators that launched them are convolutions (%s), which cuDNN (or an im2col fallback) runs as sgemm kernels; the matmul operators launched %s of GPU work in all.",
				ms(moved), ops.convNames(), ms(ops.matmul))
		}
		graphs := ops.inGraphs(simt)
		if a.replayKnown {
			graphs = ops.replayed(a.replay, simt)
		}
		if graphs != "" {
			obs += " " + ops.graphSentence(graphs, simt, l.rr.busy)
		}
		if graphs == graphsMostly || graphs == graphsSome {
			obs += " " + ops.replaySentence(a.replay, simt)
		}
		if a.tc > 0 {
			obs += fmt.Sprintf(" Another %s of GEMMs and convolutions already ran on tensor cores.", ms(a.tc))
		}
		f := evidence.Finding{Trace: b.trace, Rank: b.rank, Status: "confirmed", Severity: "minor",
			Observation: obs,
			Mechanism:   "The kernel names select the math: sgemm/scudnn/gemv kernels, cuDNN engines templated on float and xmma kernels with f32 types and FFMA run on the CUDA cores, not the tensor cores, whose kernels carry markers such as h884, s1688, h16816, tensorop, xmma or nvjet.",
			Evidence:    []evidence.Ref{ref("kernels", "rank", itoa(b.rank), "name", "*sgemm*|*scudnn*|*gemv*|*_engine<float*"), ref("ranks", "rank", itoa(b.rank))},
			Impact:      float64(simt) / float64(l.span()),
			ImpactOf:    c.shareOf("the GPU span the rules judge", b.trace, b.rank),
			Scope:       evidence.Scope{Platforms: []string{"cuda"}, Capture: []string{"device name in deviceProperties"}},
		}
		critical := c.kernelCritical(&f, l, b.score >= c.th["fp32_simt_critical"])
		// recapture is what a CUDA graph needs besides the fix: the
		// precision in effect where it is captured, and the autocast that
		// captures it (cache_enabled=False, as make_graphed_callables asks).
		recapture, captureCast := "autocast", ""
		switch {
		case !l.caps.Known:
			f.Title = "fp32 " + what + " run without tensor cores; the device's tensor-core types are unknown"
			f.Fix = fmt.Sprintf("%q is not in the capability table: check its compute capability before choosing a precision. 7.x has float16 tensor cores only (autocast to float16, with a GradScaler when training); 8.0 and later also take TF32 and bfloat16; below 7.0 there are no tensor cores.", l.ri.GPUModel)
			f.Snippet = `python -c "import torch; print(torch.cuda.get_device_name(), torch.cuda.get_device_capability())"`
			f.Verify = "Re-profile after the change: the GEMM and convolution kernel names should carry a tensor-core marker, and their share of GPU busy time fall."
			f.Refute = "The device has no tensor cores (compute capability below 7.0), or the model needs these ops in full fp32."
		case !l.caps.BF16 && !l.caps.TF32:
			// Volta/Turing (CC 7.x): float16 is the only tensor-core type.
			f.Title = fmt.Sprintf("fp32 %s bypass the tensor cores: on %s they need float16 (AMP)", what, familyOr(l.caps, "this GPU"))
			if critical {
				f.Severity = "critical"
			}
			autocast, scaler := l.ampAPI()
			captureCast = noCache(autocast)
			switch {
			case l.training && a.tc > 0:
				f.Fix = "Autocast already covers part of the model: widen the float16 autocast region to these layers (look for explicit .float() casts or ops outside it), keeping the GradScaler."
				f.Snippet = "with " + autocast + ": loss = model(x)  # around the whole forward and loss"
			case l.training:
				f.Fix = "Train with automatic mixed precision in float16: autocast the forward pass and loss, and scale the loss with a GradScaler (float16 has a narrow range)."
				f.Snippet = "scaler = " + scaler + "  # with " + autocast + ": loss = model(x); scaler.scale(loss).backward(); scaler.step(opt); scaler.update()"
			case l.infer:
				f.Fix = "Run inference in float16: autocast the forward pass (or convert the model with .half())."
				f.Snippet = "with " + autocast + ", torch.no_grad(): y = model(x)"
			default:
				f.Fix = "Run the model in float16 with autocast; when training, scale the loss with a GradScaler (float16 has a narrow range)."
				f.Snippet = "with " + autocast + ": y = model(x)  # training: " + scaler + " around backward/step"
			}
			f.Verify = "Re-profile: the GEMM and convolution kernels should carry a float16 tensor-core marker (h884/s884 on Volta, h1688/s1688 on Turing) and their time fall."
			f.Refute = "The same layers still run sgemm/scudnn kernels under autocast (shapes not multiples of 8 keep cuBLAS/cuDNN off the tensor cores), or the loss diverges in float16."
		default:
			// CC >= 8.0: TF32 for fp32 math, or bfloat16.
			f.Title = "fp32 " + what + " bypass the tensor cores: TF32 or bfloat16 would use them"
			recapture, captureCast = "the TF32 setting or bfloat16 autocast", `torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False)`
			if critical {
				f.Severity = "critical"
			}
			switch {
			case a.gemm >= a.conv:
				f.Fix = "Let the fp32 matmuls run on TF32 tensor cores (PyTorch >= 1.12 defaults matmul TF32 off), or autocast the model to bfloat16."
				f.Snippet = `torch.set_float32_matmul_precision("high")  # or torch.backends.cuda.matmul.allow_tf32 = True`
			case a.tf32Conv:
				f.Fix = "cuDNN already runs some convolutions in TF32 (tf32 kernel names), so TF32 is on and the SIMT ones are cuDNN's pick for those shapes: autocast to bfloat16 moves them to tensor cores (channels_last memory format helps cuDNN choose them)."
				f.Snippet = `with torch.autocast("cuda", dtype=torch.bfloat16): y = model(x)`
			default:
				f.Fix = "Check that TF32 is allowed for cuDNN and for matmuls (cuDNN's default is on; SIMT convolutions with no TF32 one beside them suggest it was turned off), or autocast the model to bfloat16."
				f.Snippet = "torch.backends.cudnn.allow_tf32 = True; torch.backends.cuda.matmul.allow_tf32 = True"
			}
			f.Verify = "Re-profile: the GEMM and convolution kernel names should carry tf32, bf16 or nvjet/xmma tensor-core markers and their time fall."
			f.Refute = "The kernels stay sgemm/scudnn with TF32 allowed (shapes or alignments cuBLAS/cuDNN cannot tile on tensor cores), or the model needs full fp32 precision."
		}
		if graphs != "" {
			// trace_diff_test_v100: its graph launches run inside
			// AOTAutograd's CompiledFunction, a compiler's graphs, not
			// torch.cuda.graph's.
			compiled := l.w.Compiled || l.w.AOTAutograd
			f.Fix += " " + graphFix(graphs, recapture, compiled)
			switch {
			case captureCast != "" && compiled:
				f.Snippet += "\nwith " + strings.Replace(captureCast, ", cache_enabled=False", "", 1) + ": out = compiled_model(x)  # from its first call, so that its graphs are traced and captured under autocast"
			case captureCast != "":
				f.Snippet += "\nwith " + captureCast + ": model = torch.cuda.make_graphed_callables(model, (x,))  # capture the graph again under autocast"
			}
		}
		out = append(out, f)
	}
	return out
}

// simtOps is what the rank's operators and graph replays say of where its
// fp32 SIMT kernels came from: the ops area's gpu_ns (the GPU time each
// operator launched itself, so nesting counts nothing twice) of the
// matmul and convolution operators, and the graphs area's replays. Both
// are summed over the rank's rows, as the kernel totals are.
type simtOps struct {
	// linked: some operator launched GPU time: the trace links launches
	// to operators. resnet_2080ti's launch calls carry their own
	// correlation id as External id, which the ops area links to no
	// operator: which operator launched a kernel is then not known, and
	// the split is the names'.
	linked       bool
	matmul, conv int64 // GPU time the matmul and the convolution operators launched
	convs        map[string]int64
	launches     int64 // graph launches (graph >= -1), and their kernels' time
	graphNs      int64
}

// matmulOps are the operators that launch cuBLAS GEMMs. aten::linear and
// aten::matmul launch through aten::mm/addmm/bmm, the innermost operator,
// and count only where a trace records no inner one.
var matmulOps = []string{"aten::mm", "aten::addmm", "aten::addmm_", "aten::_addmm_activation", "aten::bmm", "aten::baddbmm", "aten::baddbmm_",
	"aten::addbmm", "aten::addbmm_", "aten::mv", "aten::addmv", "aten::addmv_", "aten::dot", "aten::matmul", "aten::linear", "aten::einsum", "aten::_scaled_mm"}

// isConvOp: an aten convolution operator (aten::cudnn_convolution,
// aten::convolution_backward, aten::cudnn_convolution_backward_input,
// aten::miopen_convolution, aten::conv2d, aten::slow_conv2d_forward,
// aten::_conv_depthwise2d, ...), not aten::_convert_*.
func isConvOp(name string) bool {
	op, ok := strings.CutPrefix(name, "aten::")
	if !ok {
		return false
	}
	if strings.Contains(op, "convolution") {
		return true
	}
	for _, t := range strings.Split(op, "_") {
		if t == "conv" || (len(t) > 4 && strings.HasPrefix(t, "conv") && t[4] >= '0' && t[4] <= '9') {
			return true
		}
	}
	return false
}

func (c *ctx) simtOps(trace string, rank int) simtOps {
	var s simtOps
	o := c.ev.Table("ops")
	for _, r := range c.rankRows(o, trace, rank) {
		d := evidence.Int(o, r, "gpu_ns")
		if d <= 0 {
			continue
		}
		s.linked = true
		switch n := evidence.Str(o, r, "name"); {
		case slices.Contains(matmulOps, n):
			s.matmul += d
		case isConvOp(n):
			s.conv += d
			if s.convs == nil {
				s.convs = map[string]int64{}
			}
			s.convs[n] += d
		}
	}
	g := c.ev.Table("graphs")
	for _, r := range c.rankRows(g, trace, rank) {
		if evidence.Int(g, r, "graph") >= -1 {
			s.launches += evidence.Int(g, r, "launches")
			s.graphNs += evidence.Int(g, r, "gpu_ns")
		}
	}
	return s
}

// convOwned is the part of the GEMM-named SIMT time (gemm) that the
// convolution operators launched: what the matmul operators did not
// launch, up to what the convolution operators launched beyond the
// convolution-named SIMT time (conv). 0 where the trace links no launch
// to an operator: the split is then the names'.
func (s simtOps) convOwned(gemm, conv int64) int64 {
	if !s.linked || gemm <= s.matmul {
		return 0
	}
	return max(0, min(gemm-s.matmul, s.conv-conv))
}

// convNames: the convolution operators, most GPU time first, with it.
func (s simtOps) convNames() string {
	names := make([]string, 0, len(s.convs))
	for n := range s.convs {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if s.convs[names[i]] != s.convs[names[j]] {
			return s.convs[names[i]] > s.convs[names[j]]
		}
		return names[i] < names[j]
	})
	var out []string
	for i, n := range names {
		if i == 3 {
			out = append(out, fmt.Sprintf("and %d more", len(names)-3))
			break
		}
		out = append(out, fmt.Sprintf("%s %s", n, ms(s.convs[n])))
	}
	return strings.Join(out, ", ")
}

// How the rank's graph replays bear on its fp32 SIMT time (inGraphs).
const (
	graphsLikely  = "likely"  // launches linked, the rest fits in the replays
	graphsPart    = "part"    // launches linked, the rest exceeds the replays
	graphsUnknown = "unknown" // no launch linked to an operator
	graphsMostly  = "mostly"  // the replays ran half of it or more (measured: graph_ns)
	graphsSome    = "some"    // the replays ran a tenth of it or more, under half
)

// replayed says how much of the rank's fp32 SIMT time (simt) the graph
// replays ran, measured (replay: the kernels area's graph_ns, the kernels
// that carry a graph launch's correlation): graphsMostly, graphsSome, or
// "" under a tenth or without replays.
func (s simtOps) replayed(replay, simt int64) string {
	switch {
	case s.launches <= 0 || simt <= 0 || replay*10 < simt:
		return ""
	case 2*replay >= simt:
		return graphsMostly
	}
	return graphsSome
}

// replaySentence says how much of the fp32 SIMT time (simt) the replays
// ran (replay), and how the trace tells.
func (s simtOps) replaySentence(replay, simt int64) string {
	return fmt.Sprintf("%s of this fp32 time (%s) ran inside them: those kernels carry a graph launch's correlation id, as a replay's kernels do.", ms(replay), pct(float64(replay)/float64(simt)))
}

// inGraphs says whether the rank replayed CUDA graphs that may hold its
// fp32 SIMT time (simt): where the trace links launches to operators, a
// tenth or more of it was launched by no eager matmul or convolution
// operator ("likely" where the replays' kernels cover it, "part" where
// not); without linkage the replays' kernels are a tenth of it or more
// ("unknown": the trace cannot say). "" otherwise.
func (s simtOps) inGraphs(simt int64) string {
	if s.launches <= 0 || s.graphNs <= 0 || simt <= 0 {
		return ""
	}
	if !s.linked {
		if s.graphNs*10 < simt {
			return ""
		}
		return graphsUnknown
	}
	rest := s.rest(simt)
	switch {
	case rest*10 < simt:
		return ""
	case s.graphNs >= rest:
		return graphsLikely
	}
	return graphsPart
}

// rest is the fp32 SIMT time the eager matmul and convolution operators
// did not launch (at most all of it).
func (s simtOps) rest(simt int64) int64 { return max(0, simt-min(simt, s.matmul+s.conv)) }

// graphSentence is the observation's sentence on the graph replays (kind:
// inGraphs'), of busy ns of GPU busy time.
func (s simtOps) graphSentence(kind string, simt, busy int64) string {
	replays := fmt.Sprintf("the rank replayed CUDA graphs (%d launches, whose kernels ran %s, %s of GPU busy time)", s.launches, ms(s.graphNs), pct(float64(s.graphNs)/float64(max(busy, 1))))
	switch kind {
	case graphsMostly, graphsSome:
		return upperFirst(replays) + "."
	case graphsLikely:
		return fmt.Sprintf("%s of this fp32 time was launched by no eager matmul or convolution operator, and %s: most likely it ran inside them.", ms(s.rest(simt)), replays)
	case graphsPart:
		return fmt.Sprintf("%s of this fp32 time was launched by no eager matmul or convolution operator, and %s: up to %s of it can have run inside them.", ms(s.rest(simt)), replays, ms(s.graphNs))
	}
	return fmt.Sprintf("%s%s, and the trace links no launch to its operator, so it cannot say how much of this fp32 time ran inside them.", strings.ToUpper(replays[:1]), replays[1:])
}

// graphFix is the fix's sentence for kernels inside CUDA graphs: a graph
// replays the kernels it captured, so the precision change (what) must be
// in effect where it is captured, and the graph captured again.
func graphFix(kind, what string, compiled bool) string {
	lead := "Where these kernels run inside the CUDA graphs (the trace cannot say which do)"
	switch kind {
	case graphsMostly:
		lead = "Most of these kernels run inside the CUDA graphs"
	case graphsLikely:
		lead = "These kernels most likely run inside the CUDA graphs"
	case graphsPart, graphsSome:
		lead = "Where these kernels run inside the CUDA graphs"
	}
	if compiled {
		// The compiler captures its graphs when it traces the model: the
		// autocast in effect then is the one they replay.
		return lead + ": a graph replays the kernels it captured, so one captured in fp32 stays fp32 whatever is in effect at replay; the graphs here run inside compiled code (torch.compile's or AOTAutograd's CompiledFunction), which traces and captures them when it compiles: " + what +
			" must be active around the compiled model's call from its first call on, so that they are traced and captured under it."
	}
	return lead + ": a graph replays the kernels it captured, so one captured in fp32 stays fp32 whatever is in effect at replay; " + what +
		" must be active where the graph is captured (torch.cuda.graph, or torch.cuda.make_graphed_callables, which needs autocast's cache_enabled=False), and the graph captured again."
}

// noCache is an autocast call (ampAPI's) with its weight-cast cache off,
// as capturing a CUDA graph under autocast needs.
func noCache(autocast string) string {
	if strings.HasSuffix(autocast, "()") {
		return strings.TrimSuffix(autocast, ")") + "cache_enabled=False)"
	}
	return strings.TrimSuffix(autocast, ")") + ", cache_enabled=False)"
}

func familyOr(c device.Caps, def string) string {
	if c.Family != "" {
		return c.Family
	}
	return def
}

// shortName is KernelName for an observation: at most 80 bytes.
func shortName(n string) string {
	n = KernelName(n)
	if len(n) > 80 {
		n = n[:77] + "..."
	}
	return n
}

// Kernel families (KernelFamily), in the order a report lists them.
const (
	FamilyGEMM        = "GEMMs and convolutions"
	FamilyAttention   = "attention"
	FamilySoftmax     = "softmax"
	FamilyNorm        = "normalisation"
	FamilyElementwise = "elementwise and reduction"
	FamilyComm        = "communication"
	FamilyCopy        = "copies and memsets"
	FamilyOther       = "other"
)

// KernelFamilies are the families of KernelFamily, in that order.
var KernelFamilies = []string{FamilyGEMM, FamilyAttention, FamilySoftmax, FamilyNorm, FamilyElementwise, FamilyComm, FamilyCopy, FamilyOther}

// KernelFamily is what a kernel computes, read from its class and name: a
// communication kernel, a copy or memset, a fused attention kernel,
// PyTorch's eager softmax (an unfused attention's, mostly), an Inductor
// pointwise or reduction kernel, a normalisation (layer, RMS, group or
// batch norm, named so by the kernel's namespaces and name, not its
// template arguments: a vector norm's reduction, at::native's NormTwoOps
// or MTIA's vector_norm, is a reduction, and MoE routing's
// routingRenormalize no norm), a GEMM or convolution (cuBLAS, CUTLASS,
// cuDNN, nvjet, Tensile's Cijk_, MIOpen's igemm, Triton matmuls, MTIA's
// fc; not FBGEMM's embedding kernels, nor any other embedding kernel),
// PyTorch's other eager kernels and MTIA's pointwise and reduction ops
// (elementwise and reduction), or other.
func KernelFamily(class, name string) string {
	// The qualified name only where a norm or embedding marker stands in
	// the name at all (every part of it is text of the name): most rows
	// skip reading it.
	own := ""
	if hasAnyFold(name, normMarkers) || hasFold(name, "embedding") || hasFold(name, "split_eb_") {
		own = kernelQualifiedName(name)
	}
	op, mtia := mtiaOp(name)
	switch {
	case class == "COMM":
		return FamilyComm
	case class == "MEM":
		return FamilyCopy
	case fusedAttention(name):
		return FamilyAttention
	case eagerSoftmax(class, name):
		return FamilySoftmax
	case inductorPointwise(name):
		return FamilyElementwise
	case hasAnyFold(own, normMarkers) && !hasAnyFold(own, notNormMarkers):
		return FamilyNorm
	case hasFold(own, "embedding") || hasFold(own, "split_eb_"):
		return FamilyOther // FBGEMM's embedding tables: "gem" of fbgemm makes no GEMM
	case hasGem(name) || hasAnyFold(name, gemmMarkers) || hasAnyFold(name, convMarkers) || op == "fc":
		return FamilyGEMM
	case eagerElementwise(class, name), mtia && mtiaPointwise(op):
		// The elementwise_dominated rule's own test: other at::native
		// kernels (torch.cat's CatArrayBatchedCopy, index_select) move
		// data and count as other (h100_qwen15_05b_chat: 2.9 ms of them).
		return FamilyElementwise
	}
	return FamilyOther
}

var (
	// normMarkers: layer, RMS, group and batch norm kernels (cuDNN's
	// bn_fw/bn_bw before the cudnn marker makes them convolutions), in a
	// kernel's namespaces and name (kernelQualifiedName).
	normMarkers = []string{"norm", "bn_fw", "bn_bw"}
	// notNormMarkers: names that hold "norm" and normalise no layer: a
	// vector norm's reduction (MTIA's vector_norm) and MoE routing's
	// renormalised top-k (moe::dev::routing::routingRenormalize).
	notNormMarkers = []string{"vector_norm", "renorm"}
	// gemmMarkers: GEMM kernels whose names hold no "gem".
	gemmMarkers = []string{"matmul", "nvjet", "xmma", "cijk_", "triton_mm", "triton_tem_", "bmm"}
	// mtiaPointwiseWords: the words of MTIA's pointwise and reduction ops
	// (add-dtype_Float, reduce_sum-dtype_Float, aten::sigmoid.out-dtype_Float,
	// customized_fba_mul_const-dtype_Float, max_dim_max-dtype_Long,
	// vector_norm_float_order-dtype_Float, aten::cat.out-dtype_Float).
	mtiaPointwiseWords = []string{"abs", "add", "bce", "cat", "clamp", "clip", "div", "divide", "exp", "gelu", "index",
		"log", "log2", "max", "mean", "min", "mul", "nan", "neg", "pow", "reduce", "relu", "rsqrt", "scatter", "sigmoid",
		"silu", "sqrt", "sub", "sum", "tanh", "vector", "where"}
)

// kernelQualifiedName is the name KernelName reads without its template
// arguments and the op an at::native label adds: the kernel's namespaces
// and name (layer_norm::ln_fwd_kernel, vectorized_layer_norm_kernel,
// reduce_kernel), not the types and functors it was instantiated with
// (a reduce_kernel of NormTwoOps is a vector norm's reduction).
func kernelQualifiedName(name string) string {
	n := KernelName(name)
	if i := strings.Index(n, " ("); i > 0 {
		n = n[:i]
	}
	if i := strings.IndexByte(n, '<'); i > 0 {
		n = n[:i]
	}
	return n
}

// mtiaOp is the op of a kernel named the MTIA way, OP-dtype_TYPE[-extraKey_N]
// (fc-dtype_Float, aten::mul.out-dtype_Float): OP, and whether the name is
// such a one.
func mtiaOp(name string) (string, bool) {
	i := strings.Index(name, "-dtype_")
	if i <= 0 {
		return "", false
	}
	return name[:i], true
}

// mtiaPointwise says whether an MTIA op is a pointwise or reduction one:
// one of its words (aten::'s op, then the parts between _ and .) is a
// pointwise or reduction word.
func mtiaPointwise(op string) bool {
	op = strings.TrimPrefix(op, "aten::")
	for _, w := range strings.FieldsFunc(op, func(r rune) bool { return r == '_' || r == '.' }) {
		if slices.Contains(mtiaPointwiseWords, strings.ToLower(w)) {
			return true
		}
	}
	return false
}

// --- elementwise_dominated --------------------------------------------------

// eagerElementwise: PyTorch's eager elementwise and reduction kernels, a
// computation kernel (class COMP) whose name is one of at::native's
// elementwise_kernel or reduce_kernel (sql/perfetto_anchor.sql's
// elementwise anchor is the same test).
func eagerElementwise(class, name string) bool {
	return class == "COMP" && strings.Contains(name, "at::native::") &&
		(strings.Contains(name, "elementwise_kernel") || strings.Contains(name, "reduce_kernel<"))
}

// inductorPointwise: Inductor's generated pointwise/reduction kernels.
func inductorPointwise(name string) bool {
	return strings.HasPrefix(name, "triton_poi_") || strings.HasPrefix(name, "triton_red_") || strings.HasPrefix(name, "triton_per_")
}

func elementwiseDominated(c *ctx) []evidence.Finding {
	k := c.ev.Table("kernels")
	if k == nil {
		return nil
	}
	type acc struct {
		l      lever
		eager  kernelTotal
		triton int64
	}
	picks := worstRanks(c, func(rr rankRow) (any, float64, bool) {
		if rr.busy <= 0 {
			return nil, 0, false
		}
		a := &acc{}
		a.eager = c.kernelSum(k, rr, eagerElementwise)
		a.triton = c.kernelSum(k, rr, func(class, name string) bool { return class == "COMP" && inductorPointwise(name) }).ns
		share := float64(a.eager.ns) / float64(rr.busy)
		if share < c.th["elementwise_share"] {
			return nil, 0, false
		}
		a.l = c.leverOf(rr)
		return a, share, true
	})
	var out []evidence.Finding
	for _, b := range picks {
		a := b.acc.(*acc)
		l := a.l
		f := evidence.Finding{Trace: b.trace, Rank: b.rank, Status: "hypothesis", Severity: "minor",
			Title: "Eager elementwise and reduction kernels take a large share of GPU time: a fusion lever",
			Observation: fmt.Sprintf("PyTorch's eager elementwise and reduction kernels (at::native elementwise_kernel/reduce_kernel) took %s in %d launches, %s of GPU busy time; %s (%s)%s. Largest: %s (%s).",
				ms(a.eager.ns), a.eager.count, pct(b.score), c.busySpan(l), c.where(b.trace, b.rank), others(b.n),
				shortName(evidence.Str(k, a.eager.top, "name")), ms(evidence.Int(k, a.eager.top, "total_ns"))) + a.eager.preNote("eager elementwise and reduction time"),
			Evidence: []evidence.Ref{ref("kernels", "rank", itoa(b.rank), "name", "at::native::*elementwise_kernel*|at::native::reduce_kernel*"), ref("ranks", "rank", itoa(b.rank))},
			Impact:   float64(a.eager.ns) / float64(l.span()),
			ImpactOf: c.shareOf("the GPU span the rules judge", b.trace, b.rank),
			Scope:    evidence.Scope{Producers: []string{l.ri.Producer}, Platforms: []string{l.ri.Platform}},
			Verify:   "Re-profile: the at::native elementwise kernels should give way to fewer fused (triton_) kernels and GPU busy time fall.",
			Refute:   "The elementwise kernels sit between ops a compiler cannot fuse across (custom CUDA ops, collectives, data-dependent shapes), or each already moves as many bytes as fused code would.",
		}
		if a.triton > 0 {
			f.Observation += fmt.Sprintf(" Inductor's fused kernels (triton_poi/red/per) took another %s.", ms(a.triton))
		}
		if c.kernelCritical(&f, l, true) {
			f.Severity = "critical"
		}
		switch {
		case l.serving:
			continue // vLLM and SGLang compile their model themselves: no torch.compile fix here
		case l.compiled:
			f.Title = "Eager elementwise kernels take a large share of GPU time although torch.compile is on: graph breaks leave them unfused"
			f.Fix = "torch.compile is in use, yet these kernels ran eagerly: find the graph breaks (and the code run outside the compiled region) that leave them unfused, and remove them."
			f.Snippet = "TORCH_LOGS=graph_breaks python your_script.py"
			f.Verify = "Re-profile: fewer at::native elementwise kernels and more triton_ kernels; TORCH_LOGS=graph_breaks lists no break in the hot loop."
		default:
			fix, snip, ok := l.compileFix("")
			if !ok {
				continue // the device cannot run Inductor (CC < 7.0), or it is not known to: no fusion fix to print
			}
			f.Fix = "Fuse the chains of elementwise ops into single kernels: " + fix
			f.Snippet = snip
		}
		out = append(out, f)
	}
	return out
}

// --- eager_attention --------------------------------------------------------

// eagerSoftmax: PyTorch's own softmax kernels, forward or backward (at::native's
// cunn_SoftMax* and the warp softmax), not a compiler's fused ones.
func eagerSoftmax(class, name string) bool {
	return class == "COMP" && !strings.HasPrefix(name, "triton_") &&
		(strings.Contains(name, "cunn_SoftMax") || strings.Contains(name, "softmax_warp_"))
}

// fusedAttention: a kernel that computes attention without storing its
// score matrix (FlashAttention, cuDNN/CUTLASS fmha, PyTorch's
// memory-efficient kernels, the serving engines' paged attention).
func fusedAttention(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"flash", "fmha", "attention", "attn", "cutlassf"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// kernelTotal is what kernelSum adds up over a rank's kernels rows.
type kernelTotal struct {
	ns, count int64
	pre       int64 // of ns, the work launched before the window (kernels.pre_window_ns)
	graph     int64 // of ns, the time inside CUDA-graph replays (kernels.graph_ns)
	top       int   // the row of the longest name; -1: none matched
}

// kernelSum sums the rank's rows of the kernels area whose class and name
// match: their time and launches, the part of that time launched before
// the window, and the row of the longest.
func (c *ctx) kernelSum(k *table.Table, rr rankRow, match func(class, name string) bool) kernelTotal {
	t := kernelTotal{top: -1}
	for _, r := range c.rankRows(k, rr.trace, rr.rank) {
		if !match(evidence.Str(k, r, "class"), evidence.Str(k, r, "name")) {
			continue
		}
		t.ns += evidence.Int(k, r, "total_ns")
		t.count += evidence.Int(k, r, "count")
		t.pre += evidence.Int(k, r, "pre_window_ns")
		t.graph += evidence.Int(k, r, "graph_ns")
		if t.top < 0 || evidence.Int(k, r, "total_ns") > evidence.Int(k, t.top, "total_ns") {
			t.top = r
		}
	}
	return t
}

// preNote is the sentence a kernel total over the whole window (what it
// is the time of) adds when a tenth of it or more is work launched before
// the window (an iteration queued it before the capture began): the part
// that was, and the window's own ("" otherwise).
func (t kernelTotal) preNote(what string) string {
	if t.ns <= 0 || float64(t.pre) < 0.1*float64(t.ns) {
		return ""
	}
	return fmt.Sprintf(" Of the %s, %s summed over its kernels, %s is work launched before the window (queued before the capture began, see Capture quality); the window's own launches ran %s.", what, ms(t.ns), ms(t.pre), ms(t.ns-t.pre))
}

// opSum sums an ops-area column (count: calls; gpu_ns: the GPU time they
// launched) over the rank's operators of these names.
func (c *ctx) opSum(trace string, rank int, col string, names ...string) int64 {
	o := c.ev.Table("ops")
	var n int64
	for _, r := range c.rankRows(o, trace, rank) {
		if slices.Contains(names, evidence.Str(o, r, "name")) {
			n += evidence.Int(o, r, col)
		}
	}
	return n
}

// bmmNote is the unfused attention's matmul time beside its softmax: a
// fused kernel computes both matmuls and the softmax in one pass, so the
// attention it rewrites is their sum, of which the softmax is the part it
// removes (the finding's impact).
func bmmNote(bmm, soft int64, l lever) string {
	if bmm <= 0 || l.rr.busy <= 0 {
		return ""
	}
	return fmt.Sprintf(" The batched matmuls' own kernels took %s more: with the softmax, %s of GPU busy time (%s) is the attention a fused kernel computes in one pass; the softmax's share is the part it removes outright.",
		ms(bmm), pct(float64(bmm+soft)/float64(l.rr.busy)), ms(bmm+soft))
}

// attnAcc is what eagerAttention gathers on a rank.
type attnAcc struct {
	l            lever
	soft         kernelTotal
	bmm, softmax int64
	bmmNs        int64 // the batched matmuls' GPU time
}

// attentionPicks are the ranks eagerAttention reports, one a trace: the
// worst rank of each whose eager softmax passes its test, less the
// serving engines' (misalignedGEMM reads them too).
func (c *ctx) attentionPicks(k *table.Table) []ranked {
	picks := worstRanks(c, func(rr rankRow) (any, float64, bool) {
		if rr.busy <= 0 {
			return nil, 0, false
		}
		if c.kernelSum(k, rr, func(class, name string) bool { return class == "COMP" && fusedAttention(name) }).top >= 0 {
			return nil, 0, false // the model already runs a fused attention: the softmax is another's
		}
		a := &attnAcc{}
		a.soft = c.kernelSum(k, rr, eagerSoftmax)
		share := float64(a.soft.ns) / float64(rr.busy)
		if share < c.th["attention_softmax_share"] {
			return nil, 0, false
		}
		// aten::matmul of batched operands and aten::softmax call these
		// two, which are counted alone.
		a.bmm = c.opSum(rr.trace, rr.rank, "count", "aten::bmm", "aten::baddbmm")
		a.softmax = c.opSum(rr.trace, rr.rank, "count", "aten::_softmax")
		a.bmmNs = c.opSum(rr.trace, rr.rank, "gpu_ns", "aten::bmm", "aten::baddbmm")
		if a.bmm == 0 || a.softmax == 0 {
			return nil, 0, false // no matmul beside it: a classifier's or a router's softmax, not an attention's
		}
		a.l = c.leverOf(rr)
		return a, share, true
	})
	out := picks[:0]
	for _, b := range picks {
		if !b.acc.(*attnAcc).l.serving { // vLLM and SGLang choose their attention backends themselves
			out = append(out, b)
		}
	}
	return out
}

// attentionAlign1 says whether the rank's align1 GEMM kernels
// (misalignedGEMM's, at align1_gemm_share of GPU busy time or more) are
// mostly its unfused attention's batched matmuls (h100_owlv2: all 360
// align1 launches are aten::bmm's QK^T and PV over 5,185 tokens). The ops
// area does not say which kernels an operator launched, only their GPU
// time, so it bounds them: the align1 kernels can have run outside
// aten::bmm/baddbmm only in what the rank's other GEMM and convolution
// operators launched, in its graph replays, and in GPU work linked to no
// operator (outside); the rest, more than half of the align1 time, is the
// batched matmuls'. It returns the align1 total and outside.
func (c *ctx) attentionAlign1(k *table.Table, rr rankRow) (align kernelTotal, outside int64, ok bool) {
	align = c.kernelSum(k, rr, func(class, name string) bool { return class == "COMP" && IsAlign1GEMM(name) })
	if rr.busy <= 0 || float64(align.ns)/float64(rr.busy) < c.th["align1_gemm_share"] {
		return align, 0, false
	}
	o := c.ev.Table("ops")
	var linked, bmm int64
	for _, r := range c.rankRows(o, rr.trace, rr.rank) {
		d := evidence.Int(o, r, "gpu_ns")
		linked += d
		switch n := evidence.Str(o, r, "name"); {
		case n == "aten::bmm" || n == "aten::baddbmm":
			bmm += d
		case slices.Contains(matmulOps, n) || isConvOp(n):
			outside += d
		}
	}
	if linked <= 0 || bmm <= 0 {
		return align, 0, false // no launch linked to an operator: no bound
	}
	outside += max(0, c.kernelSum(k, rr, func(string, string) bool { return true }).ns-linked)
	g := c.ev.Table("graphs")
	for _, r := range c.rankRows(g, rr.trace, rr.rank) {
		if evidence.Int(g, r, "graph") >= -1 {
			outside += evidence.Int(g, r, "gpu_ns")
		}
	}
	in := align.ns - outside
	return align, outside, 2*in > align.ns && bmm >= in
}

// align1Note is the unfused-attention finding's sentence on the align1
// GEMM kernels its batched matmuls ran (attentionAlign1), which
// misalignedGEMM then leaves to it ("" where they are not mostly its).
func (c *ctx) align1Note(k *table.Table, l lever) string {
	align, outside, ok := c.attentionAlign1(k, l.rr)
	if !ok {
		return ""
	}
	shape := ""
	if sh, dtype, dim, size, _, ok := c.workload(l.rr.trace, l.rr.rank).MisalignedShape(); ok && (strings.HasPrefix(sh, "aten::bmm ") || strings.HasPrefix(sh, "aten::baddbmm ")) {
		shape = fmt.Sprintf(" (the recorded %s in %s: its %s of %s is not a multiple of 16 bytes, which rules out cuBLAS's wider kernels)", sh, dtype, dim, table.Int(size))
	}
	return fmt.Sprintf(" They are also most of the %s that CUTLASS GEMM kernels built for 1-element alignment (align1) took in %d launches, %s of GPU busy time: the rank's other GEMM and convolution operators, graph replays and GPU work linked to no operator account for at most %s of it%s; the fused attention replaces them, so they are no separate issue.",
		ms(align.ns), align.count, pct(float64(align.ns)/float64(l.rr.busy)), ms(outside), shape)
}

// eagerAttention: eager softmax kernels take a large share of GPU busy time
// on a rank that runs no fused attention kernel and whose operators run
// batched matmuls beside the softmax: an attention computed as matmul,
// softmax, matmul, which writes and reads the whole score matrix (h100_owlv2:
// cunn_SoftMaxForward is 46% of kernel time, more than its GEMMs).
func eagerAttention(c *ctx) []evidence.Finding {
	k := c.ev.Table("kernels")
	if k == nil {
		return nil
	}
	var out []evidence.Finding
	for _, b := range c.attentionPicks(k) {
		a := b.acc.(*attnAcc)
		l := a.l
		f := evidence.Finding{Trace: b.trace, Rank: b.rank, Status: "hypothesis", Severity: "minor",
			Title: "An unfused attention: eager softmax kernels take a large share of GPU time",
			Observation: fmt.Sprintf("PyTorch's eager softmax kernels took %s in %d launches, %s of GPU busy time; %s (%s)%s. No fused attention kernel (FlashAttention, fmha, memory-efficient) ran, and the operators ran %d batched matmuls (aten::bmm, baddbmm) beside %d softmaxes (aten::_softmax): attention computed as matmul, softmax, matmul, which writes and reads the whole score matrix. Largest: %s (%s).",
				ms(a.soft.ns), a.soft.count, pct(b.score), c.busySpan(l), c.where(b.trace, b.rank), others(b.n), a.bmm, a.softmax,
				shortName(evidence.Str(k, a.soft.top, "name")), ms(evidence.Int(k, a.soft.top, "total_ns"))) + bmmNote(a.bmmNs, a.soft.ns, l) + c.align1Note(k, l) + a.soft.preNote("softmax time"),
			Evidence: []evidence.Ref{ref("kernels", "rank", itoa(b.rank), "name", "*cunn_SoftMax*|*softmax_warp_*"), ref("ranks", "rank", itoa(b.rank))},
			Impact:   float64(a.soft.ns) / float64(l.span()),
			ImpactOf: c.shareOf("the GPU span the rules judge", b.trace, b.rank),
			Scope:    evidence.Scope{Producers: []string{l.ri.Producer}, Platforms: []string{l.ri.Platform}},
			Verify:   "Re-profile: the softmax and batched-matmul kernels give way to one fused attention kernel per layer (flash, fmha or efficient_attention in its name), and GPU busy time falls.",
			Refute:   "The softmax is not an attention's (a classifier's or a router's beside unrelated matmuls), or its rows are short, so the score matrix is small and a fused kernel saves little.",
			Snippet:  "out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # not softmax(q @ k.transpose(-2, -1) * scale) @ v",
		}
		if strings.Contains(f.Observation, "CUTLASS GEMM kernels built for 1-element alignment") {
			f.Evidence = append(f.Evidence, ref("kernels", "rank", itoa(b.rank), "name", "*cutlass*gemm*_align1*"))
		}
		if c.kernelCritical(&f, l, true) {
			f.Severity = "critical"
		}
		sdpa := "call torch.nn.functional.scaled_dot_product_attention, which runs a FlashAttention or memory-efficient kernel where the device and dtype allow and never stores the score matrix. A Hugging Face model whose class supports it takes attn_implementation=\"sdpa\" in from_pretrained (a class without that support raises an error: then replace its attention's matmul-softmax-matmul with that call)."
		if why, old := l.oldTorch(2, 0); old {
			f.Fix = "Upgrade to PyTorch >= 2.0 (" + why + "), then " + sdpa
			if n := onDevice(l.caps, wheelNote(l.caps)); n != "" {
				f.Fix += " " + upperFirst(n) + "."
			}
		} else {
			f.Fix = "Fuse the attention: " + sdpa
		}
		out = append(out, f)
	}
	return out
}

// --- misaligned_gemm --------------------------------------------------------

// IsAlign1GEMM says whether a kernel is a CUTLASS GEMM built for 1-element
// alignment: its name carries "gemm" and an "_align1" not followed by a
// digit (cutlass_80_tensorop_s1688gemm_256x64_16x4_tn_align1). cuBLAS picks
// such a kernel where a matrix's leading dimension or start is not a
// multiple of its vector width (16 bytes: 8 half-precision or 4
// single-precision elements), and each thread then loads one element at a
// time (h100_owlv2: 230 ms of align1 bfloat16 GEMMs on a sequence of 5,185
// tokens; negative_queue_length_a100: 119 ms of align1 TF32 GEMMs). An
// fp32 GEMM on the SIMT path (cutlass_80_simt_sgemm_..._align1) is
// fp32_no_tensor_cores's, whose fix comes first: it is left out.
func IsAlign1GEMM(name string) bool {
	if !strings.Contains(name, "cutlass") || !strings.Contains(name, "gemm") || IsFP32SIMT(name) {
		return false
	}
	for rest := name; ; {
		i := strings.Index(rest, "_align1")
		if i < 0 {
			return false
		}
		rest = rest[i+len("_align1"):]
		if rest == "" || rest[0] < '0' || rest[0] > '9' {
			return true
		}
	}
}

// misalignedGEMM reports a rank whose align1 GEMM kernels (IsAlign1GEMM)
// take align1_gemm_share or more of its GPU busy time.
func misalignedGEMM(c *ctx) []evidence.Finding {
	k := c.ev.Table("kernels")
	if k == nil {
		return nil
	}
	type acc struct {
		l          lever
		align      kernelTotal
		sm75, sm80 int64 // of it, sm75- and sm80-family kernels (cutlass_75_, cutlass_80_)
		bmmNs      int64 // the GPU time of aten::bmm and baddbmm beside an eager softmax
	}
	// The rank whose unfused-attention finding holds its align1 kernels
	// (attentionAlign1) has them said there, not again here.
	attention := map[string]int{}
	for _, b := range c.attentionPicks(k) {
		attention[b.trace] = b.rank
	}
	picks := worstRanks(c, func(rr rankRow) (any, float64, bool) {
		if rr.busy <= 0 {
			return nil, 0, false
		}
		if r, ok := attention[rr.trace]; ok && r == rr.rank {
			if _, _, in := c.attentionAlign1(k, rr); in {
				return nil, 0, false
			}
		}
		a := &acc{align: c.kernelSum(k, rr, func(class, name string) bool { return class == "COMP" && IsAlign1GEMM(name) })}
		share := float64(a.align.ns) / float64(rr.busy)
		if share < c.th["align1_gemm_share"] {
			return nil, 0, false
		}
		era := func(prefix string) int64 {
			return c.kernelSum(k, rr, func(class, name string) bool {
				return class == "COMP" && IsAlign1GEMM(name) && strings.Contains(name, prefix)
			}).ns
		}
		a.sm75, a.sm80 = era("cutlass_75_"), era("cutlass_80_")
		if c.kernelSum(k, rr, eagerSoftmax).ns > 0 && c.kernelSum(k, rr, func(class, name string) bool { return class == "COMP" && fusedAttention(name) }).top < 0 {
			a.bmmNs = c.opSum(rr.trace, rr.rank, "gpu_ns", "aten::bmm", "aten::baddbmm")
		}
		a.l = c.leverOf(rr)
		return a, share, true
	})
	var out []evidence.Finding
	for _, b := range picks {
		a := b.acc.(*acc)
		l := a.l
		obs := fmt.Sprintf("CUTLASS GEMM kernels built for 1-element alignment (align1) took %s in %d launches, %s of GPU busy time; %s (%s)%s. Largest: %s (%s).",
			ms(a.align.ns), a.align.count, pct(b.score), c.busySpan(l), c.where(b.trace, b.rank), others(b.n),
			shortName(evidence.Str(k, a.align.top, "name")), ms(evidence.Int(k, a.align.top, "total_ns")))
		if old := a.sm75 + a.sm80; strings.HasPrefix(l.caps.Family, "Hopper") && old > 0 {
			var eras []string
			if a.sm75 > 0 {
				eras = append(eras, "sm75-family (cutlass_75_)")
			}
			if a.sm80 > 0 {
				eras = append(eras, "sm80-family (cutlass_80_)")
			}
			obs += fmt.Sprintf(" %s of them are %s kernels on this Hopper GPU: its own kernels load through TMA, which needs 16-byte-aligned rows, so cuBLAS fell back to older ones.", ms(old), strings.Join(eras, " and "))
		}
		obs += a.align.preNote("align1 GEMM time")
		f := evidence.Finding{Trace: b.trace, Rank: b.rank, Status: "hypothesis", Severity: "minor",
			Title:       "GEMMs on misaligned shapes: cuBLAS runs kernels built for 1-element alignment",
			Observation: obs,
			Mechanism:   "A CUTLASS kernel's alignN is the vector width its loads assume, in elements; cuBLAS picks an align1 kernel where a matrix's leading dimension (or its start) is not a multiple of 16 bytes, 8 half-precision or 4 single-precision elements: each thread then loads one element at a time, and the wider, faster kernels are ruled out.",
			Evidence:    []evidence.Ref{ref("kernels", "rank", itoa(b.rank), "name", "*cutlass*gemm*_align1*"), ref("ranks", "rank", itoa(b.rank))},
			Impact:      float64(a.align.ns) / float64(l.span()),
			ImpactOf:    c.shareOf("the GPU span the rules judge", b.trace, b.rank),
			Scope:       evidence.Scope{Platforms: []string{"cuda"}},
			Fix:         "Make the GEMMs' dimensions multiples of 8 (16-bit types; 4 for fp32 and TF32): pad the odd one (a sequence length, hidden, head or vocabulary size, or batch times tokens), or make a sliced or transposed operand contiguous so that its rows start on a 16-byte boundary. " + c.misalignedShapes(b.trace, b.rank, a.align, 2*a.bmmNs >= a.align.ns),
			Snippet:     "x = torch.nn.functional.pad(x, (0, (-x.shape[-1]) % 8))  # last dimension to a multiple of 8; pad the weights' matching dimension alike",
			Verify:      "Re-profile: the GEMM kernels' names carry align8 (align4 for fp32), or the GPU's own kernels (sm90 on Hopper), and their time falls.",
			Refute:      "The kernels stay align1 with every dimension a multiple of 8 and contiguous operands (then another constraint, such as a tiny dimension, picked them), or their time does not fall.",
		}
		if 2*a.bmmNs >= a.align.ns {
			// h100_owlv2: the align1 kernels are its eager attention's
			// QK^T and PV batched matmuls over a 5,185-token sequence.
			f.Fix = fmt.Sprintf("These are most likely the batched matmuls of the unfused attention (aten::bmm and baddbmm ran %s of GPU work beside eager softmax kernels): fusing the attention (see the unfused-attention issue) replaces them with one kernel per layer that never stores the score matrix, whatever the sequence length. Elsewhere, ", ms(a.bmmNs)) + lowerFirst(f.Fix)
		}
		if c.kernelCritical(&f, l, b.score >= c.th["align1_gemm_critical"]) {
			f.Severity = "critical"
		}
		out = append(out, f)
	}
	return out
}

// misalignedShapes is the misaligned-GEMM fix's sentence on the shapes: the
// heaviest shape the operators recorded with a leading dimension (K, N,
// or M of a transposed operand) that is not a multiple of 16 bytes (the
// workload area's gemm_misaligned) and that dimension padded, and where their linked GPU work is under half of the
// alignNs of align1 kernels, that the rest ran shapes no operator recorded
// (negative_queue_length_a100: 117.6 of its 119 ms in CUDA graph
// replays); where none was recorded, how to record them. Where half the
// align1 time or more ran inside CUDA-graph replays (align.graph), that
// is said first: the replays record no operator, so no recorded shape is
// theirs.
func (c *ctx) misalignedShapes(trace string, rank int, align kernelTotal, attention bool) string {
	alignNs := align.ns
	w := c.workload(trace, rank)
	shape, dtype, dim, size, padded, ok := w.MisalignedShape()
	if !ok {
		return "With record_shapes=True the operators' Input Dims name the shapes (not those of kernels a CUDA graph replays)."
	}
	gpu, which := "", "among them"
	if w.Misaligned.GPUNs > 0 {
		gpu, which = " ("+ms(w.Misaligned.GPUNs)+" of their GPU work)", "the heaviest"
	}
	padding := fmt.Sprintf("would be %s padded", table.Int(padded))
	if attention && (strings.HasPrefix(shape, "aten::bmm ") || strings.HasPrefix(shape, "aten::baddbmm ")) {
		// h100_owlv2: the unfused attention's QK^T, N the key sequence
		// length; padded keys change the softmax unless masked out.
		padding = "is the unfused attention's sequence length: padded keys would have to be masked out of the softmax, and the fused attention removes this matmul instead"
	}
	s := fmt.Sprintf("The operators' recorded shapes name one: %s GEMM calls%s have a leading dimension that is not a multiple of 16 bytes, %s %s in %s, whose %s of %s %s.",
		table.Int(w.Misaligned.Calls), gpu, which, shape, dtype, dim, table.Int(size), padding)
	switch {
	case 2*align.graph >= alignNs:
		// negative_queue_length_a100: 98 of its 119 ms of align1 kernels
		// replayed in graphs; the eager K=2798 calls launched about 1 ms.
		s += fmt.Sprintf(" But %s of the %s of align1 kernels ran inside CUDA-graph replays, which record no operator and no shape: the graphs' GEMMs hold most of this time, so check their shapes first; padding the calls above reaches only the eager part.", ms(align.graph), ms(alignNs))
	case w.Misaligned.GPUNs == 0:
		s += fmt.Sprintf(" No GPU work is linked to them (no launch carries their External id), so the trace does not say which of the %s of align1 kernels ran these shapes; a CUDA graph's replays record no operator: check the shapes of the graphs' GEMMs too.", ms(alignNs))
	case 2*w.Misaligned.GPUNs < alignNs:
		s += fmt.Sprintf(" Their linked GPU work covers %s of the %s of align1 kernels: the rest ran shapes no operator recorded here (a CUDA graph's replays record none): check the shapes of the graphs' GEMMs too.", ms(w.Misaligned.GPUNs), ms(alignNs))
	}
	return s
}

// --- kernel_slow_instances --------------------------------------------------

// slowFloor is the shortest slow instance of a kernel whose median is p50:
// ratio (slow_instance_ratio) times it, in whole ns.
func slowFloor(p50 int64, ratio float64) int64 { return int64(math.Ceil(ratio * float64(p50))) }

// slowInstance: an instance of dur ns is slow when the histogram bucket it
// falls in starts at floor or above (the kernels area keeps durations as
// buckets, so the rule and its marks judge the bucket, not the exact
// duration).
func slowInstance(dur, floor int64) bool { return slowBucket(evidence.BucketOf(dur), floor) }

func slowBucket(bk int, floor int64) bool {
	return math.Exp2(float64(bk)/evidence.BucketsPerOctave) >= float64(floor)
}

// slowTail counts the instances of kernels row r whose bucket is slow
// (slowBucket) and estimates their time: each at its bucket's middle,
// clamped to the row's shortest and longest instance.
func slowTail(k *table.Table, r int, floor int64) (n, ns int64) {
	lo, hi := evidence.Int(k, r, "min_ns"), evidence.Int(k, r, "max_ns")
	for bk, cnt := range evidence.ParseHist(evidence.Str(k, r, "hist")) {
		if !slowBucket(bk, floor) {
			continue
		}
		mid := int64(math.Round(math.Exp2((float64(bk) + 0.5) / evidence.BucketsPerOctave)))
		mid = max(min(mid, hi), lo)
		n += cnt
		ns += cnt * mid
	}
	return n, ns
}

func slowInstances(c *ctx) []evidence.Finding {
	k := c.ev.Table("kernels")
	if k == nil {
		return nil
	}
	type hit struct {
		row                 int
		slowN, n            int64
		slowNs, excess, p50 int64
	}
	ratio := c.th["slow_instance_ratio"]
	type found struct {
		hit
		hits int // kernel names of the rank that pass
	}
	picks := worstRanks(c, func(rr rankRow) (any, float64, bool) {
		if rr.busy <= 0 {
			return found{}, 0, false
		}
		best := found{hit: hit{row: -1}}
		for _, r := range c.rankRows(k, rr.trace, rr.rank) {
			if evidence.Str(k, r, "class") != "COMP" {
				continue
			}
			n, p50 := evidence.Int(k, r, "count"), evidence.Int(k, r, "p50_ns")
			if float64(n) < c.th["slow_instance_min_count"] || p50 <= 0 {
				continue
			}
			slowN, slowNs := slowTail(k, r, slowFloor(p50, ratio))
			// A tail, not a second mode: several instances, and few of all.
			if slowN < 2 || float64(slowN) > c.th["slow_instance_tail"]*float64(n) {
				continue
			}
			h := hit{row: r, slowN: slowN, n: n, slowNs: slowNs, excess: slowNs - slowN*p50, p50: p50}
			if float64(h.excess)/float64(rr.busy) < c.th["slow_instance_share"] {
				continue
			}
			best.hits++
			if best.row < 0 || h.excess > best.excess {
				best.hit = h
			}
		}
		return best, float64(best.excess) / float64(rr.busy), best.row >= 0
	})
	var out []evidence.Finding
	for _, b := range picks {
		h := b.acc.(found)
		ri := c.rankInfo(b.trace, b.rank)
		name := evidence.Str(k, h.row, "name")
		more := ""
		if n := h.hits; n > 1 {
			more = fmt.Sprintf(" %d other kernel names of this rank show the same.", n-1)
		}
		f := evidence.Finding{Trace: b.trace, Rank: b.rank, Status: "hypothesis", Severity: "minor",
			Title: "Some instances of one kernel run far slower than its median",
			Observation: fmt.Sprintf("%d of the %d instances of %s ran at least %.0fx its median (p50 %s, slowest %s); they took about %s, %s more than at the median, %s of GPU busy time (%s)%s.%s The kernels area keeps one duration histogram per name, so these instances may be the same kernel on a larger shape.",
				h.slowN, h.n, shortName(name), ratio, us(h.p50), us(evidence.Int(k, h.row, "max_ns")), ms(h.slowNs), ms(h.excess), pct(b.score),
				c.where(b.trace, b.rank), others(b.n), more),
			Evidence: []evidence.Ref{ref("kernels", "rank", itoa(b.rank), "name", name)},
			Impact:   b.score / 4,
			Scope:    evidence.Scope{Producers: []string{ri.Producer}, Platforms: []string{ri.Platform}},
			Fix:      "Find the slow instances in the trace and compare their launching operator's input shapes with the typical ones: the same shape running slower points at the GPU (clocks, thermal or power throttling, another process or stream on it), a larger shape is expected.",
			Snippet:  "nvidia-smi -q -d CLOCK,PERFORMANCE",
			Verify:   "With shapes recorded (record_shapes=True), the slow instances have the same input shapes as the median ones, and the GPU reports a clock or throttle event while they run.",
			Refute:   "The slow instances come from a different layer or shape (their operator's Input Dims differ), or from the first iterations (cuDNN benchmarking, lazy loading).",
		}
		if ri.Platform == "rocm" {
			f.Snippet = "rocm-smi --showclocks --showperflevel"
		}
		out = append(out, f)
	}
	return out
}

// us writes a duration under a millisecond in microseconds (table.ProseUs).
func us(ns int64) string { return table.ProseUs(ns) }

// --- short_kernel_storm -----------------------------------------------------

// shortKernelStorm: most launches are kernels shorter than storm_kernel_ns
// and they hold a good part of the GPU's busy time, while the GPU is busy
// (idle below launch_idle_minor). With the GPU idle that much, the same
// launches are launch_bound's finding, and this rule stays silent.
// tinyKernel: row r of the rolled-up kernels area is a kernel name (not a
// copy or memset) whose median instance is shorter than storm_kernel_ns.
func tinyKernel(k *table.Table, r int, th evidence.Thresholds) bool {
	return evidence.Str(k, r, "class") != "MEM" && float64(evidence.Int(k, r, "p50_ns")) < th["storm_kernel_ns"]
}

func shortKernelStorm(c *ctx) []evidence.Finding {
	k := c.ev.Table("kernels")
	if k == nil {
		return nil
	}
	type acc struct {
		l                      lever
		n, short, shortNs, top int64
		topRow                 int
	}
	picks := worstRanks(c, func(rr rankRow) (any, float64, bool) {
		span := rr.busy + rr.idle
		if rr.busy <= 0 || span <= 0 || c.idleUnreliable(rr.trace, rr.rank) {
			return nil, 0, false
		}
		if float64(rr.idle)/float64(span) >= c.th["launch_idle_minor"] {
			return nil, 0, false // launch_bound's
		}
		a := &acc{topRow: -1}
		for _, r := range c.rankRows(k, rr.trace, rr.rank) {
			if evidence.Str(k, r, "class") == "MEM" {
				continue
			}
			n := evidence.Int(k, r, "count")
			a.n += n
			if tinyKernel(k, r, c.th) {
				a.short += n
				a.shortNs += evidence.Int(k, r, "total_ns")
				if n > a.top {
					a.top, a.topRow = n, r
				}
			}
		}
		if float64(a.n) < c.th["storm_min_count"] || float64(a.short) < c.th["storm_count_share"]*float64(a.n) ||
			float64(a.shortNs) < c.th["storm_time_share"]*float64(rr.busy) {
			return nil, 0, false
		}
		a.l = c.leverOf(rr)
		return a, float64(a.shortNs) / float64(rr.busy), true
	})
	var out []evidence.Finding
	for _, b := range picks {
		a := b.acc.(*acc)
		l := a.l
		f := evidence.Finding{Trace: b.trace, Rank: b.rank, Status: "hypothesis", Severity: "minor",
			Title: "The GPU is busy with a storm of tiny kernels: it launches more than it computes",
			Observation: fmt.Sprintf("%d of %d kernels (%s) belong to kernel names whose median instance is under %s; they took %s, %s of GPU busy time, while %s (%s)%s. Most launched: %s (%d).",
				a.short, a.n, pct(float64(a.short)/float64(a.n)), us(int64(c.th["storm_kernel_ns"])), ms(a.shortNs), pct(b.score), c.busySpan(l),
				c.where(b.trace, b.rank), others(b.n), shortName(evidence.Str(k, a.topRow, "name")), a.top),
			Evidence: []evidence.Ref{ref("kernels", "rank", itoa(b.rank)), ref("ranks", "rank", itoa(b.rank))},
			Impact:   b.score / 4,
			Scope:    evidence.Scope{Producers: []string{l.ri.Producer}, Platforms: []string{l.ri.Platform}},
			Verify:   "Re-profile: fewer kernels per step (kernels.count), and the same work in less GPU busy time.",
			Refute:   "The tiny kernels are inherent to the work (e.g. one decode token at batch 1) and fusing them moves no fewer bytes, or the GPU time does not fall with fewer launches.",
		}
		switch {
		case l.serving && l.ri.HasGraphs:
			continue // CUDA graphs already replay the model: nothing to switch on
		case l.ri.Producer == "vllm":
			f.Fix = "Run with CUDA graphs: drop --enforce-eager so vLLM captures its decode steps as graphs."
			f.Snippet = "vllm serve MODEL  # without --enforce-eager"
		case l.ri.Producer == "sglang":
			f.Fix = "Run with CUDA graphs: do not pass --disable-cuda-graph, and raise --cuda-graph-max-bs to the batch sizes served."
		case l.compiled && l.ri.HasGraphs:
			continue // compiled and graphed already
		case l.compiled:
			f.Fix = "The model is compiled but not graphed: compile it with CUDA graphs (static shapes, more memory)."
			f.Snippet = `model = torch.compile(model, mode="reduce-overhead")`
		default:
			fix, snip, ok := l.compileFix("reduce-overhead")
			if !ok {
				continue
			}
			f.Fix = "Fuse the small kernels and replay the rest as CUDA graphs: " + fix
			f.Snippet = snip
			if l.ri.HasGraphs {
				f.Fix = "Part of the work already replays as CUDA graphs; fuse the small kernels of the rest: " + fix
				f.Snippet = strings.Replace(snip, `, mode="reduce-overhead"`, "", 1)
			}
		}
		out = append(out, f)
	}
	return out
}

// --- memory_peak ------------------------------------------------------------

func memoryPeak(c *ctx) []evidence.Finding {
	m := c.ev.Table("memory")
	if m == nil {
		return nil
	}
	type acc struct {
		peak, alloc, reserved, total, frees, freeNs int64
		device                                      int64
		rr                                          rankRow
	}
	picks := worstRanks(c, func(rr rankRow) (any, float64, bool) {
		ri := c.rankInfo(rr.trace, rr.rank)
		a := &acc{device: -1, rr: rr}
		for _, r := range c.rankRows(m, rr.trace, rr.rank) {
			a.frees += evidence.Int(m, r, "free_calls")
			a.freeNs += evidence.Int(m, r, "free_ns")
			p, ok := memoryPeakOf(m, r)
			if !ok {
				continue
			}
			al, rs := evidence.Int(m, r, "peak_allocated"), evidence.Int(m, r, "peak_reserved")
			if p > a.peak {
				a.peak, a.alloc, a.reserved, a.device = p, al, rs, evidence.Int(m, r, "device")
				a.total = evidence.Int(m, r, "total_mem")
			}
		}
		if a.total <= 0 {
			a.total = ri.GPUTotalMem
		}
		if a.peak <= 0 || a.total <= 0 {
			return nil, 0, false // no [memory] events: the capture gap is recorded elsewhere
		}
		if ri.Serving() {
			return nil, 0, false // the engines reserve a set share of memory for the KV cache by design
		}
		share := float64(a.peak) / float64(a.total)
		return a, share, share >= c.th["memory_peak_share"]
	})
	var out []evidence.Finding
	for _, b := range picks {
		a := b.acc.(*acc)
		rr := a.rr
		l := c.leverOf(rr)
		gib := func(v int64) string { return fmt.Sprintf("%.1f GiB", float64(v)/(1<<30)) }
		f := evidence.Finding{Trace: b.trace, Rank: b.rank, Status: "hypothesis", Severity: "minor",
			Title: "The allocator's peak is close to the device's memory: fragmentation and out-of-memory risk",
			Observation: fmt.Sprintf("The caching allocator peaked at %s reserved and %s allocated on device %d, %s of its %s (%s)%s.",
				gib(a.reserved), gib(a.alloc), a.device, pct(b.score), gib(a.total), c.where(b.trace, b.rank), others(b.n)),
			Evidence: []evidence.Ref{ref("memory", "rank", itoa(b.rank), "device", fmt.Sprint(a.device))},
			Impact:   0,
			Scope:    evidence.Scope{Producers: []string{l.ri.Producer}, Platforms: []string{l.ri.Platform}, Capture: []string{"profile_memory=True"}},
			Verify:   "Re-profile with profile_memory=True: peak_reserved should fall and stay closer to peak_allocated.",
			Refute:   "Reserved memory stays well above allocated with no cudaFree calls and no out-of-memory retries (torch.cuda.memory_stats()[\"num_alloc_retries\"] == 0): the cache is only holding, not fighting for, memory.",
		}
		if a.frees > 0 && spanOf(rr) > 0 {
			f.Observation += fmt.Sprintf(" %d cudaFree/hipFree calls took %s (each synchronises the device; the allocator frees its cache when an allocation does not fit).", a.frees, ms(a.freeNs))
			f.Impact = float64(a.freeNs) / float64(spanOf(rr))
			f.ImpactOf = c.shareOf("the GPU span", b.trace, b.rank)
		}
		ckpt := ""
		if l.training {
			ckpt = "; and recompute the largest blocks' activations in the backward pass (activation checkpointing)"
		}
		why, old := l.oldTorch(2, 1)
		switch {
		case l.ri.Platform == "cuda" && !old:
			f.Fix = "Let the allocator grow expandable segments instead of caching fixed-size blocks (PyTorch >= 2.1), which cuts fragmentation" + ckpt + "."
			f.Snippet = "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python your_script.py"
		case l.ri.Platform == "cuda":
			f.Fix = "Upgrade to PyTorch >= 2.1 (" + why + ") and let the allocator grow expandable segments, which cuts fragmentation" + ckpt + "."
			f.Snippet = "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python your_script.py  # PyTorch >= 2.1"
		case l.training:
			f.Fix = "Recompute the largest blocks' activations in the backward pass (activation checkpointing), or train with smaller micro-batches."
			f.Snippet = "y = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)"
		default:
			continue // no allocator setting known to apply on this platform, and no activations to recompute
		}
		out = append(out, f)
	}
	return out
}

func spanOf(rr rankRow) int64 { return rr.busy + rr.idle }
