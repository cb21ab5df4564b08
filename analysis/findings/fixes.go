package findings

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tracebook/tracebook/analysis/device"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/table"
)

// Fixes are scoped by what the trace shows: the producer (a ProfilerStep# loop, vLLM,
// SGLang), the device's capabilities (analysis/device), the workload and
// framework era (workload.go) and the capture settings (CUDA graphs). A fix
// whose precondition the trace contradicts is never printed; one the trace
// cannot confirm says what to check.

// caps returns the capabilities of the rank's device.
func (c *ctx) caps(trace string, rank int) device.Caps {
	ri := c.rankInfo(trace, rank)
	return device.Identify(ri.Props())
}

// GPU-generation facts a fix adds to what analysis/device's capabilities
// say (docs/JUDGEMENT.md §1.3), kept here in one place: the fixes read
// them through onDevice, tritonMatmulNote, wheelNote and wheelCommand.
var (
	// legacyWheel: PyTorch 2.8's release notes say its cu128/cu129 builds
	// dropped sm_50-sm_70, and the cu126 builds keep them
	// ([PT-2.8-REL][PT-RFC-172352]): on an NVIDIA GPU of compute
	// capability 7.0 or less, a recent PyTorch is a cu126 wheel.
	legacyWheel = struct {
		maxCC                          int // ×10
		release, dropped, build, archs string
	}{maxCC: 70, release: "2.8", dropped: "cu128/cu129", build: "cu126", archs: "sm_50-sm_70"}
	// tritonTCFrom: Triton from November 2024 runs dot (its matmul) on
	// tensor cores only from compute capability 8.0 and falls back to FMA
	// below ([TRITON-5066]); device.Caps.TritonTC says which side a GPU
	// is on, this says since when.
	tritonTCFrom = "Triton from November 2024"
)

// onDevice is the clause that says what notes (tritonMatmulNote,
// wheelNote) mean on the device: "on Volta (V100), compute capability
// 7.0 (sm_70), expect ..., and a recent PyTorch means ..."; "" without
// notes.
func onDevice(c device.Caps, notes ...string) string {
	var said []string
	for _, n := range notes {
		if n != "" {
			said = append(said, n)
		}
	}
	if len(said) == 0 {
		return ""
	}
	at := "on " + orName(c.Family)
	if cc, ok := nvidiaCC(c); ok {
		at += fmt.Sprintf(", compute capability %d.%d", cc/10, cc%10)
		if c.Arch != "" && c.Arch != c.Family {
			at += " (" + c.Arch + ")"
		}
	}
	return at + ", " + strings.Join(said, ", and ")
}

// nvidiaCC is an NVIDIA device's compute capability ×10: as the trace
// gives it, else as its family's compiler target says (sm_70 for a
// V100 named without one); ok is false off NVIDIA or when neither tells.
func nvidiaCC(c device.Caps) (cc int, ok bool) {
	if !c.Known || c.Vendor != "nvidia" {
		return 0, false
	}
	if c.CCMajor > 0 {
		return c.CCMajor*10 + min(c.CCMinor, 9), true
	}
	digits, found := strings.CutPrefix(c.Arch, "sm_")
	if !found || len(digits) < 2 {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		return 0, false
	}
	// sm_XY is X.Y; sm_1XY (sm_100, sm_120) is 1X.Y.
	return n, true
}

// tritonMatmulNote is what a torch.compile fix says on a GPU that runs
// Inductor but whose Triton matmuls have no tensor cores (NVIDIA compute
// capability 7.x: Volta, Turing), for onDevice; "" elsewhere.
// torch.compile fuses the elementwise work there, and its matmuls gain
// nothing (docs/JUDGEMENT.md §1.3, "never say" 6).
func tritonMatmulNote(c device.Caps) string {
	if !c.Known || c.Vendor != "nvidia" || !c.Compile || c.TritonTC {
		return ""
	}
	return "expect the gain from the fused elementwise work, not from the matmuls (" + tritonTCFrom +
		" runs matmuls without tensor cores below compute capability 8.0, so Inductor's Triton GEMMs may fall back to FMA)"
}

// legacyWheelGPU: PyTorch's newer CUDA builds dropped the GPU
// (legacyWheel).
func legacyWheelGPU(c device.Caps) bool {
	cc, ok := nvidiaCC(c)
	return ok && cc <= legacyWheel.maxCC
}

// wheelNote is what a fix that needs a newer PyTorch says on a GPU the
// newer CUDA builds dropped, for onDevice; "" elsewhere.
func wheelNote(c device.Caps) string {
	if !legacyWheelGPU(c) {
		return ""
	}
	return fmt.Sprintf("a recent PyTorch means the %s wheels (PyTorch %s's %s builds dropped %s)",
		legacyWheel.build, legacyWheel.release, legacyWheel.dropped, legacyWheel.archs)
}

// wheelCommand is the snippet line that installs those wheels, "" where
// wheelNote says nothing.
func wheelCommand(c device.Caps, w Workload) string {
	if !legacyWheelGPU(c) {
		return ""
	}
	arch := orName(c.Family)
	if c.Arch != "" && c.Arch != c.Family {
		arch += " " + c.Arch
	}
	// TorchRec's fbgemm-gpu and torchrec wheels are built against one
	// torch release and come from the same index: upgraded alone, torch
	// breaks them. fbgemm-gpu's wheels list compute capability 7.0 up to
	// its 1.2 release (PyTorch 2.7) and 7.5 as their lowest from 1.4
	// (PyTorch 2.9; the release compatibility table at
	// pytorch.org/FBGEMM/general/Releases.html):
	// on a V100 the three are pinned to that release, whose cu126 wheels
	// hold sm_70 (dlrm_8rank).
	pkgs, also, flag := "torch", "", "-U "
	if w.TorchRec {
		pkgs, also = "torch fbgemm-gpu torchrec", "; TorchRec's fbgemm-gpu and torchrec move with it"
		if cc, _ := nvidiaCC(c); cc >= 70 && cc < 75 {
			pkgs, flag = `"torch==2.7.*" "fbgemm-gpu==1.2.*" "torchrec==1.2.*"`, ""
			also = "; fbgemm-gpu's wheels list compute capability 7.0 up to 1.2 (PyTorch 2.7) and start at 7.5 from 1.4 (PyTorch 2.9), so TorchRec's three packages are pinned to that release"
		}
	}
	if pythonBefore(w.PythonVersion, 3, 9) {
		// df_index_resolver_v100's process is python3.8: PyTorch 2.5 and
		// later publish no cp38 wheel (pytorch/pytorch#138979), and the
		// cu126 builds begin later still.
		also += "; it needs Python 3.9 or later, and this trace's process is python" + w.PythonVersion + " (PyTorch 2.5 and later publish no Python 3.8 wheels): a newer Python comes first"
	}
	return fmt.Sprintf("pip install %s%s --index-url https://download.pytorch.org/whl/%s  # %s: PyTorch %s's %s wheels dropped it%s",
		flag, pkgs, legacyWheel.build, arch, legacyWheel.release, legacyWheel.dropped, also)
}

// pythonBefore says whether a Python version ("3.8") is before major.minor;
// false for "" or one it cannot read.
func pythonBefore(v string, major, minor int) bool {
	a, b, ok := strings.Cut(v, ".")
	if !ok {
		return false
	}
	ma, err1 := strconv.Atoi(a)
	mi, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil {
		return false
	}
	return ma < major || (ma == major && mi < minor)
}

// compileAdvice says whether torch.compile can be prescribed on the rank
// (lever.compileAdvice decides), and when it cannot, why. ok with an empty
// why means "prescribe it"; a non-empty why with ok says what to check,
// the PyTorch version torch.compile needs at least, where the trace states
// no PyTorch 2.
func (c *ctx) compileAdvice(trace string, rank int) (ok bool, why string) {
	l := c.leverAt(trace, rank)
	ok, upgrade, why := l.compileAdvice()
	if upgrade {
		// The PyTorch that wrote the trace cannot run it; the user's can,
		// after an upgrade (trace_diff_control_a100, captured 2022-08-22).
		return false, why + ", and torch.compile needs PyTorch 2.0 or later (after an upgrade, it is one)"
	}
	if ok && why == "" && l.w.TorchMajor < 2 {
		// As compileFix says it: a trace that states no PyTorch 2 is told
		// which version torch.compile needs.
		why = "PyTorch >= 2.0"
	}
	return ok, why
}

// leverAt is the lever of the rank's row (an empty row when it has none).
func (c *ctx) leverAt(trace string, rank int) lever {
	rr := rankRow{trace: trace, rank: rank}
	for _, r := range c.ranks {
		if r.trace == trace && r.rank == rank {
			rr = r
		}
	}
	return c.leverOf(rr)
}

func orName(s string) string {
	if s == "" {
		return "this GPU"
	}
	return s
}

// asyncSchedulingArrived is the day vLLM's --async-scheduling first
// existed: its pull request (vLLM #19970) was opened on 2025-06-23
// (docs/JUDGEMENT.md §5.1). A trace captured before ran a vLLM without it.
var asyncSchedulingArrived = time.Date(2025, 6, 23, 0, 0, 0, 0, time.UTC)

// asyncScheduling is the advice on vLLM's async scheduling for the rank,
// a clause that completes a sentence, and its snippet: check it is on
// (the default from vLLM 0.14, the flag before), or, for a trace
// captured before the flag existed, upgrade.
func (c *ctx) asyncScheduling(trace string, rank int) (advice, snippet string) {
	ri := c.rankInfo(trace, rank)
	if at := ri.BaseTimeNs; at > 0 && time.Unix(0, at).Before(asyncSchedulingArrived) {
		advice = "this trace was captured on " + time.Unix(0, at).UTC().Format("2006-01-02") +
			", before vLLM had async scheduling (the --async-scheduling flag was added in mid-2025, by vLLM #19970, opened on 2025-06-23; it is on by default from vLLM 0.14): upgrade vLLM to overlap the scheduler with the GPU"
		if ri.Platform == "rocm" {
			// PyPI's vllm wheel is the CUDA build.
			return advice + " (on ROCm, a ROCm build: AMD's rocm/vllm image or vLLM's ROCm wheels, not PyPI's CUDA wheel)",
				"docker pull rocm/vllm:latest  # a ROCm build of vLLM; async scheduling is on by default from vLLM 0.14"
		}
		return advice, "pip install -U vllm  # async scheduling is on by default from vLLM 0.14"
	}
	return "check that async scheduling is on (the default from vLLM 0.14; pass --async-scheduling before that)",
		"vllm serve MODEL --async-scheduling  # only needed before vLLM 0.14"
}

// HostFrame is where a rank's longest late-launch GPU gaps sit on the
// launching thread: the frame it was working in at the middle of most of
// them, by idle time. The report reads it from the host stacks of the
// cross-check's largest gaps (crossview.Check.HostStacks) and passes it to
// NameHostFrame.
type HostFrame struct {
	// Name is the frame.
	Name string
	// Stack is the launching thread's stack at the middle of the largest
	// of those gaps, outermost first, from the innermost frames the
	// cross-check keeps down to Name: what tells the model's forward from
	// the scheduler between steps (frameSide).
	Stack []string
	// Leaf: Name was the innermost open frame at the middle of each of
	// those gaps.
	Leaf bool
	// Gaps of the cross-check's Of largest gaps on the rank sit in Name,
	// Ns of GPU idle in all, of the rank's IdleNs.
	Gaps, Of   int
	Ns, IdleNs int64
	// Loader is the DataLoader iterator frame (enumerate(DataLoader)#...)
	// that Name runs inside, where the gaps' stacks or the frame's
	// ancestry in the cross-view's CPU tree show one around all of its
	// time; NotInLoader: that ancestry shows none around any of it.
	// Neither when the evidence does not decide.
	Loader      string
	NotInLoader bool
	// PyCalls are the python events (python frames and the C calls they
	// make) the launching thread recorded from start to end inside those
	// Gaps, PyNs the time they cover (their own time: a call nested in
	// another counts once), summed over the same gaps as Ns
	// (crossview.HostStack.PyCalls). Zero without python stacks. At
	// PyDenseNs of gap or less a call, the Python tracer's per-call cost is
	// part of the gaps (sentence).
	PyCalls, PyNs int64
}

// PyDenseNs is the mean gap time per recorded python call at or below
// which a host frame's gaps are dense with traced calls: with one call
// every 50 µs or more often, the time the Python tracer spends recording
// each call is a visible part of the gap, and the frame's sentence says
// so (vllm_mi300x_tp4_rank0: one call every 19 µs, whose own time is
// about 1% of the gaps). Our choice: far below the tracer's cost per call
// it would say nothing, and one call per 50 µs already means thousands
// of calls in a gap of a few hundred milliseconds.
const PyDenseNs = 50_000

// IsDataLoader reports whether a frame is a DataLoader (or DataPipe)
// iterator's: enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__.
func IsDataLoader(name string) bool { return isDataLoader(name) }

// label names the frame; a built-in function (a C call) with the python
// frame that called it, which says more than its own name.
func (h HostFrame) label() string {
	if strings.HasPrefix(h.Name, "<built-in") && len(h.Stack) >= 2 {
		return h.Name + " (called from " + h.Stack[len(h.Stack)-2] + ")"
	}
	return h.Name
}

// sentence is the observation's sentence: which gaps, the time they hold
// and its share of the rank's GPU idle, and the frame; where the
// launching thread recorded a python call every PyDenseNs of those gaps
// or more often, a second sentence says the tracer's per-call cost is
// part of them, with the knob that turns stacks off (stacksOff).
func (h HostFrame) sentence(stacksOff string) string {
	which := fmt.Sprintf("%d of the cross-check's %d longest GPU gaps on this rank", h.Gaps, h.Of)
	if h.Gaps == h.Of {
		which = fmt.Sprintf("each of the cross-check's %d longest GPU gaps on this rank", h.Of)
	}
	s := fmt.Sprintf("At the middle of %s (together %s, %s of its %s of GPU idle), the launching thread was working in %s", which, ms(h.Ns), pct(float64(h.Ns)/float64(h.IdleNs)), ms(h.IdleNs), h.label())
	if h.Leaf {
		s += ", with no deeper frame open"
	}
	s += "."
	if h.PyCalls > 0 && h.Ns > 0 && h.Ns <= h.PyCalls*PyDenseNs {
		s += fmt.Sprintf(" The launching thread recorded %s python calls inside these gaps, one every %s, whose own time sums to %s: "+
			"with python stacks on, the profiler's per-call cost is part of each gap; re-capture without stacks (%s) before reading them as the host's work.",
			table.Int(h.PyCalls), us(h.Ns/h.PyCalls), ms(h.PyNs), stacksOff)
	}
	return s
}

// stacksOff names the setting that captures the rank again without
// python stacks: vLLM's (its worker's own call for a trace captured
// before VLLM_TORCH_PROFILER_WITH_STACK, as withoutStacks decides) and
// torch.profiler's.
func (c *ctx) stacksOff(trace string, rank int) string {
	const torch = "torch.profiler: with_stack=False"
	ri := c.rankInfo(trace, rank)
	if ri.Producer != "vllm" {
		return torch
	}
	if at := ri.BaseTimeNs; at > 0 && time.Unix(0, at).Before(stackSwitchArrived) {
		return "vLLM: " + stacksHardCoded + "; " + torch
	}
	return `vLLM: "torch_profiler_with_stack": false in --profiler-config, VLLM_TORCH_PROFILER_WITH_STACK=0 before v0.13; ` + torch
}

// stackSwitchArrived is the day vLLM's VLLM_TORCH_PROFILER_WITH_STACK was
// proposed: its pull request (vLLM #21803, in v0.10.1) was under review on
// 2025-07-29. Before it, vLLM's worker started torch.profiler with
// with_stack=True written into the call, and no setting turned stacks off
// (vllm_mi300x_tp4_rank0, captured on 2025-05-14).
var stackSwitchArrived = time.Date(2025, 7, 29, 0, 0, 0, 0, time.UTC)

// stacksHardCoded says how a vLLM from before stackSwitchArrived captures
// without stacks.
const stacksHardCoded = "this trace's vLLM predates VLLM_TORCH_PROFILER_WITH_STACK (vLLM #21803, v0.10.1) and starts torch.profiler with with_stack=True written into its GPU worker (vllm/v1/worker/gpu_worker.py): set with_stack=False there, or profile on v0.10.1 or later with VLLM_TORCH_PROFILER_WITH_STACK=0"

// inductorCode reports whether a python frame is in the code torch.compile's
// Inductor generates (its cache is /tmp/torchinductor_<user> unless
// TORCHINDUCTOR_CACHE_DIR moves it; xdit_sd35_mi300x's gaps sit in
// .../torchinductor_root/ov/cov463q....py(2533): call).
func inductorCode(frame string) bool {
	return strings.Contains(frame, "torchinductor")
}

// frameSide says where a vLLM or SGLang host stack (outermost first) runs:
// "forward" in the model's code (its modules and layers; SGLang's model
// runner), "scheduler" in the scheduler or the engine loop between steps,
// "" when its frames show neither. The innermost telling frame decides.
func frameSide(stack []string) string {
	for i := len(stack) - 1; i >= 0; i-- {
		s := stack[i]
		switch {
		case strings.HasPrefix(s, "nn.Module: "), strings.Contains(s, "/model_executor/models/"), strings.Contains(s, "/model_executor/layers/"),
			strings.Contains(s, "sglang/srt/models/"), strings.Contains(s, "sglang/srt/layers/"), strings.Contains(s, "sglang/srt/model_executor/"):
			return "forward"
		case strings.Contains(s, "vllm/v1/core/sched/"), strings.Contains(s, "vllm/v1/engine/"), strings.Contains(s, "sglang/srt/managers/scheduler"):
			return "scheduler"
		}
	}
	return ""
}

// NameHostFrame gives a host-bound finding (host_bound_idle) the frame its
// rank's longest late-launch gaps sit in: its observation names the frame
// with the gaps' share of the rank's GPU idle, and its fix takes the branch
// that frame decides (vLLM, SGLang: the model's forward or the scheduler;
// otherwise the frame to shorten first). A finding whose fix is not the
// host fix (the capture gate's, the untraced-host one's) is left as it
// is; so is one without a frame. It reports whether it changed f.
func NameHostFrame(f *evidence.Finding, ev *evidence.Evidence, th evidence.Thresholds, gate *Gate, at HostFrame) bool {
	if f.Rule != "host_bound_idle" || at.Name == "" || at.IdleNs <= 0 {
		return false
	}
	c := newCtx(ev, th)
	c.gate = gate
	if fix, snippet := c.hostFix(f.Trace, f.Rank, HostFrame{}); f.Fix != fix || f.Snippet != snippet {
		return false
	}
	f.Observation += " " + at.sentence(c.stacksOff(f.Trace, f.Rank))
	f.Fix, f.Snippet = c.hostFix(f.Trace, f.Rank, at)
	c.setFixReach(f)
	return true
}

// vllmCompiledEntry reports whether the innermost frame of a host stack
// (outermost first) is a model forward that vLLM's torch.compile decorator
// called (vllm/compilation/decorators.py's __call__): once compiled, the
// decorator dispatches to Dynamo's compiled code without evaluating its
// guards (vLLM's custom dispatcher, vllm-project/vllm#7898; later
// versions drop the guards through torch 2.8, #25110). So the frame's own
// time before its compiled graph starts is not guard checks
// (vllm_mi300x_tp4_rank0: llama.py(374) forward holds 22-28 ms of each
// step's GPU gap before its OptimizedModule starts, with
// set_skip_guard_eval_unsafe among its few traced calls).
func vllmCompiledEntry(stack []string) bool {
	return len(stack) >= 2 && strings.Contains(stack[len(stack)-2], "vllm/compilation/decorators.py")
}

// withoutStacks is the snippet that re-profiles the rank's vLLM server
// without Python stacks: the --profiler-config of vLLM v0.13 and later
// (the environment variable before it, ANCHORS.md §7.1), or, for a trace
// captured before vLLM had that variable (stackSwitchArrived), the
// with_stack argument its GPU worker wrote into the profiler's call
// (vllm_mi300x_tp4_rank0, captured on 2025-05-14).
func (c *ctx) withoutStacks(trace string, rank int) string {
	if at := c.rankInfo(trace, rank).BaseTimeNs; at > 0 && time.Unix(0, at).Before(stackSwitchArrived) {
		return "profiler = torch.profiler.profile(..., with_stack=False)  # in vllm/v1/worker/gpu_worker.py: this trace's vLLM predates VLLM_TORCH_PROFILER_WITH_STACK (v0.10.1)"
	}
	return `vllm serve MODEL --profiler-config '{"profiler": "torch", "torch_profiler_dir": "DIR", "torch_profiler_with_stack": false}'  # before v0.13: VLLM_TORCH_PROFILER_WITH_STACK=0`
}

// fullGraphsDefault is the day vLLM's FULL_AND_PIECEWISE CUDA-graph mode
// was proposed as its default, which v0.11.0 shipped: its pull request
// (vLLM #25444) was opened on 2025-09-23 (docs/JUDGEMENT.md §5.1). A trace
// captured before ran a vLLM whose default graphs were piecewise.
var fullGraphsDefault = time.Date(2025, 9, 23, 0, 0, 0, 0, time.UTC)

// piecewise says whether a rank's graphs are vLLM's piecewise ones: at
// least 3 graph launches a step (the graphs area over the ranks area's
// steps), one launch per piece between the attention layers
// (vllm_mi300x_tp4_rank0: 729 launches over 11 steps, 81 in each step that
// replays graphs, each 6 to 13 kernels), where FULL graphs launch one a
// forward (vllm_decode_full_mi300x: 1, of 421 kernels). It returns the
// launches and the fewest and most kernels one replayed.
func (c *ctx) piecewise(trace string, rank int) (launches, fewest, most int64, ok bool) {
	t := c.ev.Table("graphs")
	if t == nil {
		return 0, 0, 0, false
	}
	for r := range t.Rows {
		if evidence.Str(t, r, "trace") != trace || int(evidence.Int(t, r, "rank")) != rank || evidence.Int(t, r, "graph") == -2 {
			continue
		}
		n, lo, hi := evidence.Int(t, r, "launches"), evidence.Int(t, r, "min_per_launch"), evidence.Int(t, r, "max_per_launch")
		if launches == 0 || lo < fewest {
			fewest = lo
		}
		launches, most = launches+n, max(most, hi)
	}
	steps := int64(1)
	for _, rr := range c.ranks {
		if rr.trace == trace && rr.rank == rank && rr.steps > 0 {
			steps = rr.steps
		}
	}
	return launches, fewest, most, launches >= 3*steps
}

// fullGraphs is the lever for host gaps inside a vLLM forward that replays
// piecewise graphs (piecewise): FULL graphs replay a decode step's
// forward as one graph, without its Python. The clause and its snippet;
// "" where the rank's graphs are not piecewise.
func (c *ctx) fullGraphs(trace string, rank int) (clause, snippet string) {
	n, lo, hi, ok := c.piecewise(trace, rank)
	if !ok {
		return "", ""
	}
	kernels := fmt.Sprintf("%d to %d kernels", lo, hi)
	if lo == hi {
		kernels = fmt.Sprintf("%d kernels", lo)
	}
	clause = fmt.Sprintf("The graphs are piecewise (%d graph launches of %s each, the attention launched between the pieces: vLLM's PIECEWISE mode), so every step runs the forward in Python to launch them. "+
		FullGraphsReplay+", without that Python: cudagraph_mode FULL_AND_PIECEWISE (vLLM's default from v0.11.0) or FULL_DECODE_ONLY, where the attention backend supports full graphs, for decode batches within the capture sizes", n, kernels)
	if at := c.rankInfo(trace, rank).BaseTimeNs; at > 0 && time.Unix(0, at).Before(fullGraphsDefault) {
		// vllm_mi300x_tp4_rank0 (2025-05-14): its vLLM has no
		// cudagraph_mode to pass; the upgrade brings the default.
		clause += " (this trace was captured on " + time.Unix(0, at).UTC().Format("2006-01-02") + ", before that default, and most likely before the cudagraph_mode setting itself: upgrade vLLM, and no flag is needed)"
		return clause + ". ", `python -c "import vllm; print(vllm.__version__)"  # v0.11.0 or later replays FULL_AND_PIECEWISE graphs by default`
	}
	return clause + ". ", `vllm serve MODEL --compilation-config '{"cudagraph_mode": "FULL_AND_PIECEWISE"}'  # the default from vLLM v0.11.0`
}

// FullGraphsReplay begins the host fix's clause on vLLM's FULL graphs
// (fullGraphs): the report bounds what that fix reaches by the steps that
// replay graphs.
const FullGraphsReplay = "FULL graphs replay a decode step's whole forward as one graph"

// forwardFix is the fix for host gaps inside a serving engine's model
// forward (frameSide "forward"): the engine's overlap of scheduling with
// the GPU (hides) does not hide them; a capture with Python stacks is
// re-taken without them first, as the tracer inflates exactly that time.
func (c *ctx) forwardFix(trace string, rank int, at HostFrame, hides string) (fix, snippet string) {
	ri := c.rankInfo(trace, rank)
	fix = "sit inside the model's forward, in " + at.label() + ", not in the scheduler between steps: " + hides +
		" overlaps the scheduler with the GPU, not the forward's own host time, so it does not hide these gaps. "
	full, fullSnippet := "", ""
	if ri.Producer == "vllm" {
		// Two batches in flight: the next step's forward is launched while
		// the GPU runs the current one, so its host time overlaps that
		// GPU time (vllm_mi300x_tp4_rank0: 22-28 ms of forward Python a
		// step against about 17 ms of GPU work).
		async, _ := c.asyncScheduling(trace, rank)
		full, fullSnippet = c.fullGraphs(trace, rank)
		hides := "it hides these gaps"
		if full != "" {
			hides = "it hides what stays of them"
		}
		fix = "sit inside the model's forward, in " + at.label() + ", not in the scheduler between steps. " + full +
			"Async scheduling keeps two batches in flight, so the next step's host work, this forward's Python included, runs while the GPU finishes the current step: " + hides + " up to a step's GPU time, and what exceeds that stays (" + async + "). "
	}
	then := "shorten that frame."
	if at.Leaf {
		then = "they are that frame's own time (no deeper frame was open at their middle): its Python, or work under it that the profiler does not record as frames"
		switch {
		case vllmCompiledEntry(at.Stack):
			then += ", such as the compiled code's entry before its graph runs (vLLM's torch.compile decorator, vllm/compilation/decorators.py, " +
				"runs it without Dynamo's guard checks: what is left there is gathering the graph's inputs, and C-level work the tracer does not break down, " +
				"such as garbage collection or a wait for the GIL; sampling the process's native stacks there, with py-spy record --native or perf, tells which)"
		case c.workload(trace, rank).Compiled:
			then += ", such as torch.compile's guard checks before the compiled graph runs"
		}
		then += "; shorten that."
	}
	if full != "" {
		// FULL graphs skip the forward's Python whatever the tracer added
		// to it: the lever comes first, what the frame holds after.
		if at.Leaf {
			fix += capFirst(strings.TrimSuffix(then, "; shorten that.")) + "."
		}
		if ri.HasPythonStacks {
			fix += " Python stacks were captured, and the Python tracer adds its cost to each call it records in this host time (how much of the gaps that is, a capture without stacks shows); FULL graphs skip that Python either way, in the decode steps they replay; a step they do not replay (a prefill or a mixed batch past the capture sizes) keeps it."
		}
		return fix, fullSnippet
	}
	if !ri.HasPythonStacks {
		return fix + capFirst(then), ""
	}
	if ri.Producer == "vllm" {
		snippet = c.withoutStacks(trace, rank)
	}
	return fix + "Python stacks were captured, and the Python tracer inflates this kind of host time: profile again without them first. If the gaps stay, " + then, snippet
}

// cpuSideNames says where a report's reader finds the host work a fix
// asks to shorten, where the trace names no frame for it: the report's
// CPU operator hotspots, and the cross-view's longest GPU gaps with what
// the launching thread ran in each.
const cpuSideNames = "the CPU operator hotspots name the costliest operators, and tracebook crossview what the launching thread ran in the longest GPU gaps"

// hostFix is the fix for a host-bound GPU: what keeps the launching thread
// from feeding the GPU, in the producer's terms; at, when it names a
// frame, is where the rank's longest late-launch gaps sit, and picks the
// branch. On a slow host it first says to check the host (checkHostFirst).
func (c *ctx) hostFix(trace string, rank int, at HostFrame) (fix, snippet string) {
	fix, snippet = c.hostLever(trace, rank, at)
	return c.checkHostFirst(trace, rank) + fix, snippet
}

// hostLever is hostFix's lever in the code.
func (c *ctx) hostLever(trace string, rank int, at HostFrame) (fix, snippet string) {
	ri := c.rankInfo(trace, rank)
	w := c.workload(trace, rank)
	side := ""
	if at.Name != "" {
		side = frameSide(at.Stack)
	}
	switch ri.Producer {
	case "vllm":
		if steps, ok := c.overCaptureSteps(trace, rank); ok && !ri.HasGraphs {
			if _, _, eager := c.vllmUncompiled(trace, rank); eager {
				return uncompiledFix(steps)
			}
			return c.oversizeStepsFix(trace, rank)
		}
		async, snippet := c.asyncScheduling(trace, rank)
		if ri.HasGraphs {
			const graphs = "CUDA graphs are on (the trace replays graphs), so the gaps are host work"
			switch {
			case side == "forward":
				fix, snippet := c.forwardFix(trace, rank, at, "async scheduling")
				return graphs + ", and they " + fix, snippet
			case side == "scheduler":
				return graphs + ", and they sit in the scheduler between steps (" + at.label() + "): " + async + ".", snippet
			case at.Name != "":
				return graphs + "; the longest sit in " + at.label() + ". If that is the scheduler between steps, " + async +
					"; if it is the model's Python inside the forward (between graph pieces), async scheduling hides it only up to a step's GPU time: profile that frame without Python stacks and shorten it.", snippet
			}
			return graphs + ": " + cpuSideNames + ". If it is the scheduler between steps, " + async +
				"; if it is the model's Python inside the forward (between graph pieces), async scheduling hides it only up to a step's GPU time: profile that frame without Python stacks and shorten it.", snippet
		}
		return "No graph replay in the trace: turn CUDA graphs on (drop --enforce-eager; a compilation_config cudagraph_mode of NONE also turns them off) so decode steps are one launch, and " + async + ".",
			"vllm serve MODEL  # without --enforce-eager"
	case "sglang":
		overlap := "the overlap scheduler is on unless --disable-overlap-schedule was passed"
		if w.SGLangOverlap {
			overlap = "the overlap scheduler is on (the trace runs its overlap_utils frames), so the gaps are host work it does not hide: " + cpuSideNames
			if at.Name != "" {
				overlap = "the overlap scheduler is on (the trace runs its overlap_utils frames), so the gaps are host work it does not hide; the longest sit in " + at.label()
			}
		} else if at.Name != "" {
			overlap += "; the longest gaps sit in " + at.label()
		}
		graphs := "No graph replay in the trace: check that --disable-cuda-graph was not passed and that the batch fits --cuda-graph-max-bs; "
		if ri.HasGraphs {
			graphs = "CUDA graphs are on (the trace replays graphs) and the batch should fit --cuda-graph-max-bs; "
		}
		if side == "forward" {
			fix, _ := c.forwardFix(trace, rank, at, "the overlap scheduler")
			return graphs + "the gaps " + fix, ""
		}
		return graphs + overlap + ".", ""
	}
	d, share := c.dataloaderShare(trace, rank)
	if share >= c.th["dataloader_critical"] {
		// The host is mostly waiting for batches: that is the lever, not
		// fusion. A smaller share is named after the CPU work below.
		_, load := dataloaderFix(w, c.hostCopiesPinned(trace, rank))
		fix := fmt.Sprintf("The launching thread spends %s (%s of %s) inside enumerate(DataLoader), launching nothing while it waits for batches (the GPU idles once its queue runs dry). Fix the input pipeline first (see the DataLoader issue), then shorten the CPU work that remains between launches.",
			ms(d), pct(share), c.loaderWhat(trace, rank))
		switch {
		case at.Name == "" || isDataLoader(at.Name):
		case at.Loader != "" && w.HFChunkPipeline != "":
			// transformers runs a ChunkPipeline's DataLoader with one
			// worker at most (h100_owlv2: zoom_shift in the image
			// preprocessing, once per candidate label).
			fix += " The longest gaps sit in " + at.label() + ", which runs inside " + at.Loader + " (the DataLoader's batches: the pipeline's preprocessing): the one worker this ChunkPipeline allows overlaps it with the model, and doing it once instead of once per chunk (see the DataLoader issue) leaves one run of it."
		case at.Loader != "":
			fix += " The longest gaps sit in " + at.label() + ", which runs inside " + at.Loader + " (the DataLoader's batches: dataset or collate code): loading in worker processes (num_workers > 0) hides it."
		case at.NotInLoader:
			fix += " The longest gaps sit in " + at.label() + ", which runs outside the DataLoader's batches: shorten it."
		default:
			fix += " The longest gaps sit in " + at.label() + ": where it runs inside the DataLoader's batches (dataset or collate code), loading in worker processes hides it; elsewhere, shorten it."
		}
		return fix, load
	}
	parts := []string{"Shorten the CPU work between launches (" + cpuSideNames + ")"}
	caveat := "" // what the steps' host syncs leave of a CUDA graph by hand
	switch {
	case inductorCode(at.Name):
		// Generated code: there is nothing to shorten by hand; CUDA
		// graphs (below, for a compiled model) take its launches away.
		parts[0] = "The longest gaps sit in " + at.label() + ", the Python wrapper torch.compile's Inductor generated for the compiled graph, not code to shorten by hand: it checks each input (assert_size_stride; torch._inductor.config.size_asserts = False drops the checks, and their safety) and launches the graph's kernels one by one"
		if ri.HasPythonStacks {
			// xdit_sd35_mi300x: 1,231 checks took 0.53 ms of a 14.5 ms
			// gap; the rest is the wrapper's own lines, each traced.
			parts[0] = "The longest gaps sit in " + at.label() + ", the Python wrapper torch.compile's Inductor generated for the compiled graph, not code to shorten by hand. Python stacks were captured, and the Python tracer inflates exactly this Python, one event per traced call: profile again without them first, to see what of the gaps remains. The wrapper checks each input (assert_size_stride, microseconds a call: torch._inductor.config.size_asserts = False drops the checks, and their safety) and launches the graph's kernels one by one"
		}
	case at.Name != "":
		parts[0] = "Shorten the CPU work between launches, first " + at.label() + ", where the longest gaps sit"
	}
	ok, why := c.compileAdvice(trace, rank)
	switch {
	case ok:
		l := c.leverAt(trace, rank)
		if why != "" {
			why = " (" + why + ")"
		}
		lead := "fuse the small operations with torch.compile"
		if l.aotWithoutInductor() {
			lead = "fuse the small operations by compiling the model's CompiledFunction region with Inductor instead"
		}
		parts = append(parts, lead+why)
		if n := l.compileNotes(); n != "" {
			parts = append(parts, n)
		}
		snippet = l.compileSnippet("", "")
	case w.Compiled && !ri.HasGraphs:
		graphs := evidence.GraphNoun(ri.Platform) + "s"
		if ri.Platform == "rocm" {
			graphs += " (CUDA graphs on ROCm)"
		}
		if n := c.compiledRegions(trace, rank); n == 1 {
			// One region: Dynamo captured the model whole, and there is
			// no graph break to look for (xdit_sd35_mi300x).
			parts = append(parts, "the model is already compiled, as one graph (one Torch-Compiled Region, no graph break): replay it as "+graphs+" with mode=\"reduce-overhead\"")
			snippet = "model = torch.compile(model, mode=\"reduce-overhead\")"
		} else {
			parts = append(parts, "the model is already compiled: replay it as "+graphs+" with mode=\"reduce-overhead\" and look for graph breaks")
			snippet = "TORCH_LOGS=graph_breaks python your_script.py"
		}
		if reach, idle, _ := c.compiledReach(trace, rank); reach > 0 {
			// xdit_sd35_mi300x: 365 ms of its 459 ms of idle inside the
			// four transformer calls; the eager text encoders hold most
			// of the rest.
			parts = append(parts, fmt.Sprintf(replayReaches+", %s of the %s (%s); the rest lies outside them, in code the compiled model does not run",
				ms(reach), ms(idle), pct(float64(reach)/float64(idle))))
		}
	case why != "":
		parts = append(parts, "batch more work per launch (larger batches, fewer small operations); torch.compile is not an option here: "+why)
		if ri.Platform == "cuda" && !ri.HasGraphs && !ri.Serving() {
			// CUDA graphs by hand predate torch.compile (PyTorch 1.10):
			// a 2022 loop can replay its launches as one
			// (trace_diff_control_a100, captured 2022-08-22).
			if _, before := c.leverAt(trace, rank).oldTorch(1, 10); !before {
				static := "or capture the static part of the step as a CUDA graph by hand (torch.cuda.graph with static input buffers, PyTorch 1.10 or later), which replays its launches as one"
				graphSnippet := "g = torch.cuda.CUDAGraph()  # with torch.cuda.graph(g): out = model(static_in)"
				switch {
				case w.TorchRec:
					// TorchRec's sparse side reads its lengths back and
					// sizes its all-to-alls per batch: only the dense
					// modules have static shapes (trace_diff_control_a100,
					// whose host waits lie mostly in their backward).
					static += "; with TorchRec that part is the dense modules (the dense and over arch), whose shapes stay fixed: the sparse features' input dist and all-to-alls change size with every batch and cannot be replayed. torch.cuda.make_graphed_callables graphs a module's forward and its backward, where most of a training step's launches are; the gradient accumulation into .grad stays eager"
					graphSnippet = "dense_arch = torch.cuda.make_graphed_callables(dense_arch, (sample_dense_in,))  # forward and backward as graphs"
				case w.Training:
					// with_gpu_user_annotation: the forward launches 25 of
					// the step's 130 kernels; the backward, on the
					// autograd thread, 50.
					static += "; in a training step that is the whole step, forward, loss, backward and optimizer step captured together (the whole-network capture of PyTorch's CUDA graphs notes, after a few warm-up steps on a side stream), since a graph of the forward alone leaves the backward's launches eager"
					graphSnippet = "g = torch.cuda.CUDAGraph()  # with torch.cuda.graph(g): loss = loss_fn(model(static_in), static_y); loss.backward(); opt.step()"
				}
				parts = append(parts, static)
				caveat = c.syncsBreakGraphs(trace, rank, false)
				if snippet == "" {
					snippet = graphSnippet
				}
			}
		}
	}
	if z := c.zeroGradAside(trace, rank, w); z != "" {
		parts = append(parts, z)
	}
	if o := c.optimizerAside(trace, rank, w); o != "" {
		parts = append(parts, o)
	}
	onThread := w.Training && w.DataLoaderWorkers == 0
	switch {
	case w.LoaderSpanNs <= 0 && w.LoaderIdleNs <= 0:
		// No DataLoader call lies inside the GPU span (dlrm_8rank's 1.2 ms
		// runs before the rank's first GPU work): none of the idle this
		// fix is for is the loader's, so it names none.
	case share >= c.th["dataloader_share"]:
		// The DataLoader issue carries the loader's fix (dlrm_8rank's had
		// said "see the DataLoader issue; and load batches in DataLoader
		// worker processes", that issue's own fix again).
		where := ""
		if onThread {
			where = ", on the training thread (num_workers=0)"
		}
		parts = append(parts, fmt.Sprintf("the DataLoader also takes %s (%s of %s)%s: see the DataLoader issue", ms(d), pct(share), c.loaderWhat(trace, rank), where))
	case onThread:
		parts = append(parts, "and load batches in DataLoader worker processes, not on the training thread")
		if snippet == "" {
			snippet = "DataLoader(ds, batch_size=B, num_workers=4, pin_memory=True)"
		}
	}
	return strings.Join(parts, "; ") + "." + caveat, snippet
}

// launchFix is the fix for a launch-bound training or unknown workload:
// replay the region as a CUDA graph, by the route the trace allows, and
// what the steps' host syncs leave of that route.
func (c *ctx) launchFix(trace string, rank int, graphs bool) (fix, snippet string) {
	fix, snippet = c.graphRoute(trace, rank, graphs)
	w := c.workload(trace, rank)
	z, o := c.zeroGradAside(trace, rank, w), c.optimizerAside(trace, rank, w)
	if call, p50 := c.launchQueue(trace, rank); p50 >= LaunchQueuedNs {
		// resnet50_num_workers_4: half of its launches waited 2.6 ms for
		// their kernel, so a graph saves launch time the queue already
		// hides; the optimizer's ranges, where the host falls behind, come
		// first.
		lead := fmt.Sprintf("Half of the %s calls waited %s or more for their kernel, so the queue hides most launch cost, and a graph or larger kernels gain only in the stretches where the host falls behind (the Perfetto view shows them).", call, ms(p50))
		named := ""
		for _, a := range []string{z, o} {
			if a != "" {
				named += " " + upperFirst(a) + "."
			}
		}
		if named != "" {
			lead += " Start with those the trace names." + named + " For the others: "
		} else {
			lead += " Find what the host does there first; then "
		}
		return c.checkHostFirst(trace, rank) + lead + lowerFirst(fix) + c.syncsBreakGraphs(trace, rank, true), snippet
	}
	if z != "" {
		fix += " " + upperFirst(z) + "."
	}
	if o != "" {
		fix += " " + upperFirst(o) + "."
	}
	return c.checkHostFirst(trace, rank) + fix + c.syncsBreakGraphs(trace, rank, true), snippet
}

// replayReaches begins the host fix's clause on how much GPU idle a graph
// replay of the compiled regions reaches (compiledReach).
const replayReaches = "the replay reaches the GPU idle inside the compiled regions"

// compiledReach is the GPU idle inside a rank's compiled regions where it
// is under CompiledIdleMost of the idle the rules judge (0 otherwise), with
// that idle and span.
func (c *ctx) compiledReach(trace string, rank int) (reach, idle, span int64) {
	w := c.workload(trace, rank)
	idle, span = c.steady(trace, rank)
	if w.CompiledIdleNs > 0 && idle > 0 && float64(w.CompiledIdleNs) < CompiledIdleMost*float64(idle) {
		reach = w.CompiledIdleNs
	}
	return reach, idle, span
}

// setFixReach gives a host-bound finding whose fix says how much GPU idle
// the replay reaches (replayReaches) that idle as a share of its span:
// Expected Impact states it beside the finding's own share.
func (c *ctx) setFixReach(f *evidence.Finding) {
	f.FixReach, f.FixReachOf = 0, ""
	if reach, _, span := c.compiledReach(f.Trace, f.Rank); reach > 0 && span > 0 && strings.Contains(f.Fix, replayReaches) {
		f.FixReach = float64(reach) / float64(span)
		f.FixReachOf = "the GPU idle inside the compiled regions, which a graph replay reaches"
	}
}

// CompiledIdleMost: under this share of a rank's GPU idle inside its
// compiled regions, the host fix says how much of the idle a CUDA-graph
// replay of the compiled model reaches (above it, nearly all).
const CompiledIdleMost = 0.9

// ZeroGradIdleShare is the share of a rank's GPU idle that must fall inside
// the optimizer's zero_grad ranges for the host fixes to name
// set_to_none=True (our choice: a tenth, a lever of its own).
const ZeroGradIdleShare = 0.10

// zeroGradAside names zero_grad(set_to_none=True) where the optimizer's
// zero_grad ranges hold ZeroGradIdleShare or more of the rank's GPU idle
// (resnet50_num_workers_4: 38 ms of 187 ms, 966 aten::zero_ in 6 steps):
// zeroing each gradient launches a kernel per parameter while the GPU has
// nothing to run; set to None, the gradients need no kernel. The argument
// exists since PyTorch 1.7 and is the default from 2.0 (PyTorch's
// Optimizer.zero_grad documentation; pytorch#92731), which a trace
// zeroing them passes False to. "" otherwise.
func (c *ctx) zeroGradAside(trace string, rank int, w Workload) string {
	idle, _ := c.steady(trace, rank)
	if idle <= 0 || w.ZeroGradIdleNs < 1_000_000 || float64(w.ZeroGradIdleNs) < ZeroGradIdleShare*float64(idle) {
		return ""
	}
	return fmt.Sprintf("the optimizer's zero_grad holds %s of the GPU idle (%s of %s): zeroing each gradient launches a kernel per parameter; optimizer.zero_grad(set_to_none=True) (PyTorch 1.7 or later, the default from 2.0) sets them to None instead, with no kernel (code that reads .grad before the backward then finds None)",
		ms(w.ZeroGradIdleNs), pct(float64(w.ZeroGradIdleNs)/float64(idle)), ms(idle))
}

// OptimizerIdleShare is the share of a rank's GPU idle that must fall
// inside the optimizer's step for the host fixes to name its foreach
// implementation (our choice: half of ZeroGradIdleShare, as the step
// does work of its own beside its launches; dlrm_8rank's Adagrad holds
// 6.8% of rank 7's GPU idle).
const OptimizerIdleShare = 0.05

// foreachOptimizers are the torch.optim classes with a foreach
// implementation (their foreach argument), by the name their step range
// carries (Optimizer.step#Adagrad.step).
var foreachOptimizers = map[string]bool{"SGD": true, "Adam": true, "AdamW": true, "Adagrad": true, "Adadelta": true,
	"Adamax": true, "NAdam": true, "RAdam": true, "RMSprop": true, "Rprop": true, "ASGD": true}

// optimizerAside names the foreach implementation of a torch.optim
// optimizer whose step holds OptimizerIdleShare or more of the rank's GPU
// idle (and 0.5 ms or more) on a rank with no multi-tensor operator: its
// for-loop implementation updates the parameters one at a time, a kernel
// or more each, and the foreach one updates them all in a few. PyTorch
// 2.0 and later pick foreach by default on CUDA when the argument is not
// set (pytorch/pytorch#95241), so such a trace runs an older PyTorch, a
// device or tensor type outside that default, or foreach=False. The
// argument itself is PyTorch 1.12's (foreachSince): 1.11's optimizers
// have none (its torch/optim/adam.py, as PyTorch's 1.11 documentation
// shows the source), and pytorch/pytorch#70295 and the pull requests
// stacked on it added it to the optimizers in January 2022.
func (c *ctx) optimizerAside(trace string, rank int, w Workload) string {
	idle, _ := c.steady(trace, rank)
	cls := strings.TrimSuffix(strings.TrimPrefix(w.OptimizerStep, "Optimizer.step#"), ".step")
	if idle <= 0 || w.Foreach || !foreachOptimizers[cls] || w.OptimizerIdleNs < 500_000 ||
		float64(w.OptimizerIdleNs) < OptimizerIdleShare*float64(idle) {
		return ""
	}
	return fmt.Sprintf("the optimizer's step (%s) holds %s of the GPU idle (%s of %s) and updates the parameters one at a time, a kernel or more each (the rank runs no multi-tensor _foreach_ or _fused_ operator); its foreach implementation updates them all in a few launches: %s(..., foreach=True) (an argument from PyTorch 1.12), the default on CUDA from PyTorch 2.0 when foreach is not set%s",
		w.OptimizerStep, ms(w.OptimizerIdleNs), pct(float64(w.OptimizerIdleNs)/float64(idle)), ms(idle), cls, c.foreachEra(trace, rank, w))
}

// foreachSince is the first PyTorch whose torch.optim optimizers take the
// foreach argument (optimizerAside).
var foreachSince = [2]int{1, 12}

// foreachEra says what the trace tells of why the loop ran
// (optimizerAside): a PyTorch it states older than foreachSince has no
// argument to set; a trace captured before PyTorch 2.0 was released runs
// an older PyTorch, which needs the argument set; one captured later, if
// its PyTorch is 2.0 or later, had the default turned off. "" where the
// trace states a later PyTorch or gives no date.
func (c *ctx) foreachEra(trace string, rank int, w Workload) string {
	if torchVersionBefore(w.TorchVersion, foreachSince[0], foreachSince[1]) {
		return fmt.Sprintf(" (the trace states PyTorch %s, which has no foreach argument: it needs an upgrade to %d.%d or later first)", w.TorchVersion, foreachSince[0], foreachSince[1])
	}
	at := c.rankInfo(trace, rank).BaseTimeNs
	if at <= 0 || w.TorchVersion != "" {
		return ""
	}
	day, rel := time.Unix(0, at).UTC(), torchReleased[[2]int{2, 0}]
	if day.Before(rel) {
		return fmt.Sprintf(" (this trace was captured on %s, before PyTorch 2.0 was released (%s): set it explicitly)", day.Format("2006-01-02"), rel.Format("2006-01-02"))
	}
	return fmt.Sprintf(" (this trace was captured on %s, after PyTorch 2.0 was released: where its PyTorch is 2.0 or later, the default was turned off, by foreach=False in the code or a gradient that is sparse or not on the GPU, which makes it fall back to the loop)", day.Format("2006-01-02"))
}

// syncsBreakGraphs is the caveat for a graph fix on a rank whose operators
// block in host syncs: a CUDA graph cannot be captured across a
// synchronisation, so only the work between the syncs can be replayed
// (torch.compile splits its graphs there, which the caveat says where the
// fix offers torch.compile). "" when there are none.
func (c *ctx) syncsBreakGraphs(trace string, rank int, compile bool) string {
	t := c.ev.Table("sync")
	var n int64
	// An operator's syncs count as the most of any one call it blocks in:
	// a blocking copy and the stream sync after it are one sync
	// (trace_diff_control_a100: aten::to's 36 DtoH copies and 36
	// cudaStreamSynchronize calls are 36).
	byOp := map[string]int64{}
	byOpCall := map[[2]string]int64{}
	for _, r := range c.rankRows(t, trace, rank) {
		// The syncs operators issue (a scalar read, a dynamic shape, a copy
		// to the host); explicit ones are the harness's or the profiler's
		// as often as the loop's, and the sync finding names them. An
		// operator that only uploads (HtoD copies and the syncs after them)
		// moves the batch in, before the model runs, unless its uploads
		// are scalars (with_gpu_user_annotation: 60 bytes in 10 aten::to
		// between the launches), which the model's own code makes.
		op := evidence.Str(t, r, "op")
		upload := evidence.Str(t, r, "direction") == "HtoD" || (op != "" && uploadOnly(t, trace, rank, op))
		if !evidence.Bool(t, r, "blocking") || evidence.Bool(t, r, "edge") || evidence.Str(t, r, "trigger") == "explicit" || (upload && !tinyUploads(t, trace, rank, op)) {
			continue
		}
		if op == "" {
			n += evidence.Int(t, r, "count")
			continue
		}
		byOpCall[[2]string{op, evidence.Str(t, r, "call")}] += evidence.Int(t, r, "count")
	}
	for k, cnt := range byOpCall {
		byOp[k[0]] = max(byOp[k[0]], cnt)
	}
	for _, k := range byOp {
		n += k
	}
	if n == 0 {
		return ""
	}
	top, most := "", int64(0)
	for op, k := range byOp {
		if k > most || (k == most && op < top) {
			top, most = op, k
		}
	}
	eg := ""
	if top != "" {
		eg = fmt.Sprintf(", %d of them under %s", most, top)
	}
	splits := ""
	if compile {
		splits = " (torch.compile splits its graphs there)"
	}
	return fmt.Sprintf(" Caveat: the operators block in %d host %s%s; a CUDA graph cannot be captured across a synchronisation, so only the work between them can be replayed%s: remove the data-dependent syncs first, or expect less.",
		n, noun(n, "sync", "syncs"), eg, splits)
}

// graphRoute is the graph fix without its caveat (launchFix).
func (c *ctx) graphRoute(trace string, rank int, graphs bool) (fix, snippet string) {
	if graphs {
		return "CUDA graph replays are already in the trace: the launch-bound part runs outside them; capture that region too (torch.cuda.graph, or torch.compile with mode=\"reduce-overhead\" where it applies) or fuse its small operations.", ""
	}
	ok, why := c.compileAdvice(trace, rank)
	w := c.workload(trace, rank)
	switch {
	case ok:
		l := c.leverAt(trace, rank)
		if why == "" {
			why = "CUDA graphs"
		}
		fix = "Replay the launch-bound region as a CUDA graph: compile it with mode=\"reduce-overhead\" (" + why + "), or fuse the small operations."
		if n := l.compileNotes(); n != "" {
			fix += " " + upperFirst(n) + "."
		}
		return fix, l.compileSnippet("reduce-overhead", "")
	case w.Compiled && c.compiledRegions(trace, rank) == 1:
		return "The model is already compiled, as one graph (one Torch-Compiled Region, no graph break): compile it with mode=\"reduce-overhead\" so it replays as CUDA graphs.", "model = torch.compile(model, mode=\"reduce-overhead\")"
	case w.Compiled:
		return "The model is already compiled: compile it with mode=\"reduce-overhead\" so the compiled region replays as CUDA graphs, and remove graph breaks (TORCH_LOGS=graph_breaks).", "TORCH_LOGS=graph_breaks python your_script.py"
	}
	graph := "torch.cuda.graph with static input buffers"
	if old, before := c.leverAt(trace, rank).oldTorch(1, 10); before {
		// torch.cuda.graph arrived in PyTorch 1.10.
		graph += ", PyTorch 1.10 or later: " + old + ", so it comes after an upgrade"
	}
	return "Capture the launch-bound region as a CUDA graph by hand (" + graph + ") or launch fewer, larger kernels (bigger batches); torch.compile is not an option here: " + why + ".", "g = torch.cuda.CUDAGraph()  # with torch.cuda.graph(g): out = model(static_in)"
}

// dataloaderShare is the time in enumerate(DataLoader) on the rank and its
// share of the loop's time (loopTime), both less the workers' start-up
// (loaderStartOut). On a rank with a warm-up step (evidence.Steady) both
// are the steps' after it: the start-up step's first-call work and its
// first batch are not the loop's share.
func (c *ctx) dataloaderShare(trace string, rank int) (int64, float64) {
	if s := c.ev.SteadyOf(trace, rank); s != nil {
		start, d := c.loaderStartOut(trace, rank)
		if base := sumBy(s.Ranks, trace, rank, "step_ns", nil) - start; base > 0 {
			return d - start, float64(d-start) / float64(base)
		}
		return 0, 0
	}
	for _, rr := range c.ranks {
		if rr.trace != trace || rr.rank != rank {
			continue
		}
		start, d := c.loaderStartOut(trace, rank)
		if base := c.loopTime(rr) - start; base > 0 {
			return d - start, float64(d-start) / float64(base)
		}
	}
	return 0, 0
}

// loaderStartOut returns the workers' start-up that dataloaderShare leaves
// out of the DataLoader's time and of the loop's (at most the DataLoader's
// time), and the DataLoader's time with it: the steady state's (Steady),
// which leaves a start-up inside the warm-up step out with the step.
func (c *ctx) loaderStartOut(trace string, rank int) (start, d int64) {
	o := c.ev.Table("ops")
	s := c.ev.SteadyOf(trace, rank)
	if s != nil {
		o = s.Ops
	}
	if o == nil {
		return 0, 0
	}
	d = sumBy(o, trace, rank, "incl_ns", func(r int) bool { return isDataLoader(evidence.Str(o, r, "name")) })
	// The workers' start-up is the capture's (loader_start), not the
	// steady loading: out of the DataLoader's time and of the loop's.
	if s != nil && c.loaderStartIn(trace, rank, s.FirstNs, s.LastNs) {
		return 0, d
	}
	return min(c.loaderStart(trace, rank), d), d
}

// compiledRegions counts the distinct Torch-Compiled Region frames among a
// rank's operators ("Torch-Compiled Region: 0/0"): Dynamo opens a frame per
// graph it captures, so more than one says the model breaks into several.
func (c *ctx) compiledRegions(trace string, rank int) int {
	o := c.ev.Table("ops")
	seen := map[string]bool{}
	for _, r := range c.rankRows(o, trace, rank) {
		if n := evidence.Str(o, r, "name"); strings.HasPrefix(n, "Torch-Compiled Region") {
			seen[n] = true
		}
	}
	return len(seen)
}

// vllmMaxCaptureSize is the largest CUDA-graph capture size vLLM uses by
// default: max_cudagraph_capture_size = min(2 × max_num_seqs, 512)
// (docs/JUDGEMENT.md 5.1, from vllm/config/compilation.py). The V1 runner
// pads a step's token count up to the next capture size only when it is at
// most the largest; a larger step runs without a graph.
const vllmMaxCaptureSize = 512

// stepsOverCapture reports whether every step of a vLLM rank has more
// tokens than vllmMaxCaptureSize, by the token counts of its execute_*
// annotations (prefill plus decode tokens): n steps, the smallest with
// smallest tokens. It is false when a step's count is unknown (execute_new_*
// and python-frame steps do not give one) or within the capture sizes.
func (c *ctx) stepsOverCapture(trace string, rank int) (n int, smallest int64, ok bool) {
	t := c.ev.Table("steps")
	for _, r := range c.rankRows(t, trace, rank) {
		if evidence.Str(t, r, "source") != "execute_tokens" || evidence.Cell(t, r, "ctx_tok") == nil || evidence.Cell(t, r, "gen_tok") == nil {
			return 0, 0, false
		}
		tok := evidence.Int(t, r, "ctx_tok") + evidence.Int(t, r, "gen_tok")
		if tok <= vllmMaxCaptureSize {
			return 0, 0, false
		}
		if n == 0 || tok < smallest {
			smallest = tok
		}
		n++
	}
	return n, smallest, n > 0
}

// vllmUncompiled: a vLLM rank whose steps ran the model uncompiled. vLLM
// compiles the model's forward with torch.compile unless --enforce-eager
// (or -O0) is passed; compiled, every step runs its compiled graph, CUDA
// graphs or not. A compiled-code share of the steps' time under 20% (a
// helper such as the embedding mask compiled alone) is an eager model.
// False when the operators or the steps are unknown.
func (c *ctx) vllmUncompiled(trace string, rank int) (compiled, steps int64, ok bool) {
	if c.rankInfo(trace, rank).Producer != "vllm" {
		return 0, 0, false
	}
	w := c.workload(trace, rank)
	if !w.Known || !w.Operators {
		return 0, 0, false
	}
	steps = sumBy(c.ev.Table("steps"), trace, rank, "wall_ns", nil)
	return w.CompiledNs, steps, steps > 0 && float64(w.CompiledNs) < 0.2*float64(steps)
}

// uncompiledFix is the fix for a vLLM rank that ran its model uncompiled
// (vllmUncompiled) in steps larger than its CUDA graphs
// (stepsOverCapture): compiling fuses their kernels, but graphs would not
// replay them, so the compiled forward still launches each fused kernel
// from the host and part of the host waits stays (b200_eager: one
// 888-token prefill step). steps says which steps, as the launch-bound
// observation does ("The rank's one step has more tokens (888)").
func uncompiledFix(steps string) (fix, snippet string) {
	return "Drop --enforce-eager (or -O0): vLLM then compiles the model (fused kernels, fewer launches, in steps of any size) and replays CUDA graphs for steps up to its capture sizes. " +
			steps + " than the largest default capture size (" + strconv.Itoa(vllmMaxCaptureSize) + "), so graphs would not replay it: compiled, the forward still launches each fused kernel from the host (Inductor's wrapper code), and part of these host waits stays; the steps that graphs replay, such as decode batches within the capture sizes, lose them.",
		"vllm serve MODEL  # without --enforce-eager"
}

// overCaptureSteps names the rank's steps larger than vLLM's largest
// default capture size (stepsOverCapture), for a sentence that goes on
// "than ..."; over is false where no step is.
func (c *ctx) overCaptureSteps(trace string, rank int) (steps string, over bool) {
	n, smallest, over := c.stepsOverCapture(trace, rank)
	if n == 1 {
		return fmt.Sprintf("The rank's one step has more tokens (%d)", smallest), over
	}
	return fmt.Sprintf("Each of the rank's %d steps has more tokens (the smallest %d)", n, smallest), over
}

// oversizeStepsFix is the fix for a vLLM rank launch-bound in steps that
// CUDA graphs would not replay (stepsOverCapture): not graphs, but a
// capture that can tell, and larger kernels.
func (c *ctx) oversizeStepsFix(trace string, rank int) (fix, snippet string) {
	fix = fmt.Sprintf("CUDA graphs would not replay this rank's steps: each is larger than vLLM's largest default capture size (%d tokens), and raising max_cudagraph_capture_size to cover them costs graph memory and start-up time for little gain on large token counts. Profile decode steps as well, to see whether graphs are on", vllmMaxCaptureSize)
	if c.rankInfo(trace, rank).HasPythonStacks {
		fix += ", and without Python stacks (the Python tracer inflates every launch's host time)"
		snippet = c.withoutStacks(trace, rank)
	}
	return fix + "; if the launches still leave the GPU idle in large steps, the lever is fewer, larger kernels (fused MoE and attention backends), not graphs.", snippet
}
