package evidence

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tracebook/tracebook/analysis/device"
	"github.com/tracebook/tracebook/analysis/table"
)

// ProducerProfilerStep is the producer (traces.producer, RankInfo.Producer)
// of a trace whose steps are torch.profiler's ProfilerStep# annotations: a
// loop under the profiler's schedule, training or inference (the workload
// area's operators say which). The importer (analysis/trace) writes it.
const ProducerProfilerStep = "profiler_step"

// RankInfo is what the traces table says about one (trace, rank).
type RankInfo struct {
	Trace, Producer, Platform, GPUModel, RankSource, Format string
	Rank                                                    int
	GPUTotalMem                                             int64
	// CCMajor and CCMinor are the device's compute capability (on ROCm the
	// GFXIP version) from gpu_cc_major/gpu_cc_minor, -1 when the trace does
	// not give it or the table has no such columns (an older bundle).
	CCMajor, CCMinor int
	// GPUNumSMs is device 0's numSms from gpu_num_sms (the SM count on
	// CUDA, the compute-unit count on ROCm), 0 when the trace or the table
	// does not give it.
	GPUNumSMs                                           int
	HasGraphs, HasSyncEvents, HasPythonStacks, HasSteps bool
	// WorldSize is the job's rank count from the trace's distributedInfo,
	// 0 when the trace does not give it.
	WorldSize int
	// BaseTimeNs is when the capture started, Unix ns: the trace's
	// baseTimeNanoseconds plus its first event's ts (Kineto writes ts as
	// an offset from that base, which can be weeks: vllm_h100_tp4_rank0's
	// base says 2025-04-01, its events 2025-05-14), or the first ts where
	// it reads as a Unix time itself. It dates the producer's version from
	// above (a trace captured before a release cannot run it). 0 when the
	// trace gives neither.
	BaseTimeNs int64
	// OutOfRange is how many activity records Kineto left out as outside
	// the capture window (its log's Record counts, kineto_out_of_range);
	// CuptiStoppedEarly says that CUPTI stopped collecting before the
	// window's end, its buffers full (cupti_stopped_early): GPU records
	// are missing. 0 and false where the trace logs no record counts.
	OutOfRange        int64
	CuptiStoppedEarly bool
}

// Props is what the rank's deviceProperties say, for device.Identify.
func (ri RankInfo) Props() device.Props {
	return device.Props{Name: ri.GPUModel, CCMajor: ri.CCMajor, CCMinor: ri.CCMinor, NumSMs: ri.GPUNumSMs, TotalMem: ri.GPUTotalMem, Platform: ri.Platform}
}

// Serving says whether the rank's producer is a serving engine (vLLM or
// SGLang): a loop of requests, whose capture, fixes and shares the rules
// word for a server rather than a training or inference script.
func (ri RankInfo) Serving() bool { return ri.Producer == "vllm" || ri.Producer == "sglang" }

// PlatformOf is the platform of a trace's rank in the traces table (the
// first rank of the trace for rank -1, of any trace for trace ""); "" where
// the table does not say.
func PlatformOf(traces *table.Table, trace string, rank int) string {
	for _, ri := range Ranks(traces) {
		if (trace == "" || ri.Trace == trace) && (rank < 0 || ri.Rank == rank) {
			return ri.Platform
		}
	}
	return ""
}

// GraphNoun names a platform's graphs, as the report and its fixes say
// them: "HIP graph" on ROCm, else "CUDA graph".
func GraphNoun(platform string) string {
	if platform == "rocm" {
		return "HIP graph"
	}
	return "CUDA graph"
}

// Ranks reads the traces table: one RankInfo per (trace, rank), sorted.
// Several files of one rank merge: flags are ORed, names, the compute
// capability and the SM count taken from the first file that has them.
func Ranks(traces *table.Table) []RankInfo {
	if traces == nil {
		return nil
	}
	byKey := map[string]*RankInfo{}
	var keys []string
	for r := range traces.Rows {
		tr, rank := Str(traces, r, "trace"), int(Int(traces, r, "rank"))
		k := fmt.Sprintf("%s\x00%09d", tr, rank)
		ri := byKey[k]
		if ri == nil {
			ri = &RankInfo{Trace: tr, Rank: rank, CCMajor: -1, CCMinor: -1}
			byKey[k] = ri
			keys = append(keys, k)
		}
		set := func(dst *string, col string) {
			if *dst == "" {
				*dst = Str(traces, r, col)
			}
		}
		set(&ri.Producer, "producer")
		set(&ri.Platform, "platform")
		set(&ri.GPUModel, "gpu_model")
		set(&ri.RankSource, "rank_source")
		set(&ri.Format, "format")
		if w := int(Int(traces, r, "world_size")); w > ri.WorldSize {
			ri.WorldSize = w
		}
		if m := Int(traces, r, "gpu_total_mem"); m > ri.GPUTotalMem {
			ri.GPUTotalMem = m
		}
		ri.OutOfRange += Int(traces, r, "kineto_out_of_range")
		if Int(traces, r, "cupti_stopped_early") > 0 {
			ri.CuptiStoppedEarly = true
		}
		if n := int(Int(traces, r, "gpu_num_sms")); ri.GPUNumSMs == 0 && n > 0 {
			ri.GPUNumSMs = n
		}
		if ri.CCMajor < 0 {
			major, okMajor := toInt(Cell(traces, r, "gpu_cc_major"))
			minor, okMinor := toInt(Cell(traces, r, "gpu_cc_minor"))
			if okMajor && okMinor {
				ri.CCMajor, ri.CCMinor = int(major), int(minor)
			}
		}
		if ri.BaseTimeNs == 0 {
			ri.BaseTimeNs = captureNs(Int(traces, r, "base_time_ns"), Int(traces, r, "first_ts_ns"))
		}
		ri.HasGraphs = ri.HasGraphs || Bool(traces, r, "has_graphs")
		ri.HasSyncEvents = ri.HasSyncEvents || Bool(traces, r, "has_sync_events")
		ri.HasPythonStacks = ri.HasPythonStacks || Bool(traces, r, "has_python_stacks")
		ri.HasSteps = ri.HasSteps || Bool(traces, r, "has_steps")
	}
	sort.Strings(keys)
	out := make([]RankInfo, 0, len(keys))
	for _, k := range keys {
		out = append(out, *byKey[k])
	}
	return out
}

// hasCaptureKind says whether the capture area holds a row of kind for the
// trace and rank.
func hasCaptureKind(b *Bundle, trace string, rank int, kind string) bool {
	t := b.Table("capture")
	if t == nil {
		return false
	}
	for r := range t.Rows {
		if Str(t, r, "trace") == trace && int(Int(t, r, "rank")) == rank && Str(t, r, "kind") == kind {
			return true
		}
	}
	return false
}

// DetectGaps records in b the evidence gaps that its traces table and
// evidence tables show. A gap that holds for every rank of a trace is
// recorded once with rank -1.
func DetectGaps(b *Bundle) {
	ranks := Ranks(b.Traces)
	perTrace := map[string][]RankInfo{}
	var traces []string
	for _, ri := range ranks {
		if _, ok := perTrace[ri.Trace]; !ok {
			traces = append(traces, ri.Trace)
		}
		perTrace[ri.Trace] = append(perTrace[ri.Trace], ri)
	}
	ov := b.Table("overview")
	kernelsOf := func(trace string, rank int) (int64, bool) {
		if ov == nil {
			return 0, false
		}
		for r := range ov.Rows {
			if Str(ov, r, "trace") == trace && int(Int(ov, r, "rank")) == rank {
				return Int(ov, r, "kernels"), true
			}
		}
		return 0, false
	}
	for _, tr := range traces {
		rs := perTrace[tr]
		// add records a gap for the ranks where cond holds: once with rank -1 when it holds for all.
		add := func(kind GapKind, what, why string, cond func(RankInfo) bool) {
			var hit []int
			for _, ri := range rs {
				if cond(ri) {
					hit = append(hit, ri.Rank)
				}
			}
			if len(hit) == 0 {
				return
			}
			if len(hit) == len(rs) {
				b.AddGap(Gap{Kind: kind, Trace: tr, Rank: -1, What: what, Why: why})
				return
			}
			for _, r := range hit {
				b.AddGap(Gap{Kind: kind, Trace: tr, Rank: r, What: what, Why: why})
			}
		}
		noGPU := func(ri RankInfo) bool { n, ok := kernelsOf(ri.Trace, ri.Rank); return ok && n == 0 }
		// A CUPTI counter capture records counter ranges, not kernels.
		counters := func(ri RankInfo) bool { return hasCaptureKind(b, ri.Trace, ri.Rank, "counter_range") }
		add(GapNoGPUEvents, "GPU time, idle time and every kernel-level number",
			"the trace holds no kernels: a CUPTI counter capture (cuda_profiler_range events) records counter ranges, not kernel activities",
			func(ri RankInfo) bool { return noGPU(ri) && counters(ri) })
		// The legacy autograd profiler (use_kineto=False, or a PyTorch
		// built without Kineto) exports operators, and with its use_cuda
		// option on a CUDA build each operator's CUDA time: only
		// torch.profiler on a Kineto build records kernels as they ran,
		// stacks and memory.
		legacy := func(ri RankInfo) bool { return ri.Format == "legacy" }
		// The legacy profiler's trace of a run on the CPU looks the same:
		// say both, unless the operators name the CPU's own kernels
		// (torch1.13.1_legacy_smallnet: aten::mkldnn_convolution, oneDNN's
		// convolution, which a CUDA tensor never reaches).
		cpuOp := func(ri RankInfo) string { return CPUBackendOp(b.Table("ops"), ri.Trace, ri.Rank) }
		add(GapNoGPUEvents, "GPU time, idle time and every kernel-level number",
			"the trace holds no GPU activity: a run on the CPU has none, and its operators are the whole story (CPU operator hotspots); for a GPU run: "+legacyProfiler,
			func(ri RankInfo) bool { return noGPU(ri) && legacy(ri) && cpuOp(ri) == "" })
		for _, ri := range rs {
			if op := cpuOp(ri); noGPU(ri) && legacy(ri) && op != "" {
				add(GapNoGPUEvents, "GPU time, idle time and every kernel-level number",
					"a run on the CPU: its operators include "+op+", oneDNN's CPU kernel, which a tensor on a GPU never reaches, so there is no device to capture, and the operators are the whole story (CPU operator hotspots)",
					func(x RankInfo) bool { return x.Rank == ri.Rank && noGPU(x) && legacy(x) })
			}
		}
		add(GapNoGPUEvents, "GPU time, idle time and every kernel-level number",
			"the trace holds no kernels (a CPU-only capture, or activities=[ProfilerActivity.CPU])",
			func(ri RankInfo) bool { return noGPU(ri) && !counters(ri) && !legacy(ri) })
		// Kineto records the device's sync events since 2023-06
		// (docs/JUDGEMENT.md §2.1): an older capture could not have had
		// them, and the option that asks for them is newer than its PyTorch.
		syncWhat := "GPU-side synchronisation waits (Stream Sync, Event Sync, Stream Wait Event on the device)"
		// The option is CUPTI's: an MTIA or a ROCm trace cannot carry them
		// (Kineto's roctracer backend records kernels, copies, memsets and
		// runtime calls, not the device's sync activity).
		mtia := func(ri RankInfo) bool { return ri.Platform == "mtia" }
		rocm := func(ri RankInfo) bool { return ri.Platform == "rocm" }
		cupti := func(ri RankInfo) bool { return !mtia(ri) && !rocm(ri) }
		add(GapNoSyncEvents, syncWhat,
			"Kineto records the device's sync events through CUPTI (enable_cuda_sync_events), on CUDA GPUs; this MTIA trace has no such option",
			func(ri RankInfo) bool { return !ri.HasSyncEvents && !noGPU(ri) && mtia(ri) })
		add(GapNoSyncEvents, syncWhat,
			"Kineto records the device's sync events through CUPTI (enable_cuda_sync_events), on CUDA GPUs only: its ROCm backend does not, "+
				"so a ROCm capture has none to ask for; the host's hip*Synchronize and hipStreamWaitEvent calls are what the trace shows of them",
			func(ri RankInfo) bool { return !ri.HasSyncEvents && !noGPU(ri) && rocm(ri) })
		add(GapNoSyncEvents, syncWhat,
			"captured without cuda_sync events; collect with torch.profiler._ExperimentalConfig(enable_cuda_sync_events=True)",
			func(ri RankInfo) bool { return !ri.HasSyncEvents && !noGPU(ri) && !predatesSyncEvents(ri) && cupti(ri) })
		add(GapNoSyncEvents, syncWhat,
			"captured before the profiler recorded cuda_sync events (Kineto records them since 2023-06; "+
				"this trace's format or capture date is older): on a current PyTorch, collect with torch.profiler._ExperimentalConfig(enable_cuda_sync_events=True)",
			func(ri RankInfo) bool { return !ri.HasSyncEvents && !noGPU(ri) && predatesSyncEvents(ri) && cupti(ri) })
		// Kineto logs "CUPTI stopped early? = 1" when it ended the
		// collection because its GPU activity buffers were full
		// (CuptiActivityProfiler: cupti_.stopCollection): GPU records may
		// be missing, and the gaps they leave are no idle time.
		add(GapGPURecordsLost, "GPU idle time and utilisation",
			"the profiler's log in the trace says CUPTI stopped early (Record counts: CUPTI stopped early? = 1): Kineto ended the collection once its GPU activity buffers were full, so GPU records may be missing and idle time inflated; profile fewer steps (a shorter active window in the profiler's schedule)",
			func(ri RankInfo) bool { return ri.CuptiStoppedEarly })
		add(GapNoPythonStacks, "python frames above the operators (which line issued a sync or a copy)",
			"captured without python stacks; collect with with_stack=True",
			func(ri RankInfo) bool { return !ri.HasPythonStacks && ri.Format != "kineto_2021" && !legacy(ri) })
		add(GapNoPythonStacks, "python frames above the operators (which line issued a sync or a copy)", legacyProfiler,
			func(ri RankInfo) bool { return !ri.HasPythonStacks && legacy(ri) })
		// A 2021 capture keeps its stacks, when it has any, as the operators'
		// "Call stack" strings: the cross-view shows them, the evidence does not.
		add(GapNoPythonStacks, "python frames above the operators (which line issued a sync or a copy)",
			"a 2021-format capture: its stacks, where with_stack=True recorded them, are the operators' Call stack strings, which only the cross-view reads; "+
				"a current PyTorch profiler with with_stack=True records python_function events the evidence uses",
			func(ri RankInfo) bool { return !ri.HasPythonStacks && ri.Format == "kineto_2021" })
		add(GapGraphsHideKernel, "per-kernel CPU attribution of graph-replayed kernels (no operator, no input shapes)",
			"the trace replays CUDA graphs: their kernels carry only the cudaGraphLaunch's correlation",
			func(ri RankInfo) bool { return ri.HasGraphs && !rocm(ri) })
		add(GapGraphsHideKernel, "per-kernel CPU attribution of graph-replayed kernels (no operator, no input shapes)",
			"the trace replays HIP graphs: their kernels carry only the hipGraphLaunch's correlation",
			func(ri RankInfo) bool { return ri.HasGraphs && rocm(ri) })
		// Which rank a file is matters only in a job: one process that
		// communicates with no one (h100_owlv2) is no rank of one.
		add(GapRankDefaulted, "which rank of the job this file is",
			"no merged-pid prefix, -rank-N file name or distributedInfo: the rank defaulted to 0",
			func(ri RankInfo) bool { return ri.RankSource == "default" && (len(rs) > 1 || communicates(b, tr)) })
		// An unnamed device whose properties identify the part (GFXIP 9.4,
		// 304 CUs, 192 GiB: an MI300X) leaves no gap.
		add(GapNoDeviceName, "device-model verdicts (tensor cores, peak bandwidth)",
			"deviceProperties do not name the GPU"+kernelArch(b, tr),
			func(ri RankInfo) bool {
				return ri.GPUModel == "" && !noGPU(ri) && device.Identify(ri.Props()).Model == ""
			})
		// A job of one rank (world size 1) has no other rank to load: no
		// gap (mtia_single_rank, ns_resolution_v100); nor has a process
		// that states no world size and communicates with no one (no
		// collective, no communication kernel: h100_owlv2, a single-GPU
		// pipeline; torch1.13.1_legacy_smallnet, a CPU run).
		if len(rs) == 1 && (rs[0].WorldSize > 1 || (rs[0].WorldSize == 0 && communicates(b, tr))) {
			b.AddGap(Gap{Kind: GapSingleRank, Trace: tr, Rank: -1, What: "rank imbalance, stragglers and collective wait vs transfer",
				Why: "only one rank was loaded; load the per-rank files of the job together"})
		}
	}

	// Steps: none, or inferred.
	if st := b.Table("steps"); st != nil {
		has := map[string]bool{}
		hyp := map[string]string{} // the source of a rank's inferred steps
		for r := range st.Rows {
			k := fmt.Sprintf("%s\x00%d", Str(st, r, "trace"), Int(st, r, "rank"))
			has[k] = true
			if Bool(st, r, "hypothesis") && hyp[k] == "" {
				hyp[k] = Str(st, r, "source")
				if hyp[k] == "" {
					hyp[k] = "?"
				}
			}
		}
		for _, ri := range ranks {
			k := fmt.Sprintf("%s\x00%d", ri.Trace, ri.Rank)
			switch {
			case !has[k] && hasCaptureKind(b, ri.Trace, ri.Rank, "graph_capture"):
				// vllm_graph_capture_full_mi300x: the engine's start-up
				// capture of its CUDA/HIP graphs, which runs no step.
				b.AddGap(Gap{Kind: GapNoSteps, Trace: ri.Trace, Rank: ri.Rank, What: "per-step and per-phase evidence (step time, prefill vs decode)",
					Why: "no ProfilerStep#, vLLM execute_* or SGLang step[ annotation, and the trace captures graphs (stream capture calls or capture_* ranges): a capture at start-up runs no step; profile the serving loop after start-up for its steps"})
			case !has[k]:
				b.AddGap(Gap{Kind: GapNoSteps, Trace: ri.Trace, Rank: ri.Rank, What: "per-step and per-phase evidence (step time, prefill vs decode)",
					Why: "no ProfilerStep#, vLLM execute_* or SGLang step[ annotation; use a profiler schedule (prof.step()) or a vLLM build that annotates steps"})
			case hyp[k] != "":
				b.AddGap(Gap{Kind: GapStepsHypothesis, Trace: ri.Trace, Rank: ri.Rank, What: "annotated step boundaries or phases",
					Why: inferredSteps(hyp[k]) + " (no step annotation): their boundaries or phases are a hypothesis"})
			}
		}
	}
	// Graph under-recording: launches with no recorded kernel, or far fewer kernels than the largest replay of the same graph.
	if g := b.Table("graphs"); g != nil {
		type acc struct{ launches, empty, kernels, maxPer int64 }
		per := map[string]*acc{}
		var order []string
		for r := range g.Rows {
			if Int(g, r, "graph") == -2 {
				continue
			}
			k := fmt.Sprintf("%s\x00%d\x00%d", Str(g, r, "trace"), Int(g, r, "rank"), Int(g, r, "graph"))
			a := per[k]
			if a == nil {
				a = &acc{}
				per[k] = a
				order = append(order, k)
			}
			a.launches += Int(g, r, "launches")
			a.empty += Int(g, r, "empty_launches")
			a.kernels += Int(g, r, "kernels")
			if m := Int(g, r, "max_per_launch"); m > a.maxPer {
				a.maxPer = m
			}
		}
		for _, k := range order {
			a := per[k]
			var tr string
			var rank, graph int
			parts := splitKey(k)
			tr = parts[0]
			fmt.Sscan(parts[1], &rank)
			fmt.Sscan(parts[2], &graph)
			coverage := 1.0
			if graph >= 0 && a.launches > 0 && a.maxPer > 0 {
				coverage = float64(a.kernels) / float64(a.launches*a.maxPer)
			}
			if a.empty > 0 || coverage < 0.5 {
				b.AddGap(Gap{Kind: GapGraphUnderRecord, Trace: tr, Rank: rank,
					What: "GPU idle time and utilisation while graphs replay",
					Why: fmt.Sprintf("%d of %d graph launches recorded no kernel (kernel coverage %.0f%%): the profiler buffer likely overflowed during replay, so idle time is inflated",
						a.empty, a.launches, 100*coverage)})
			}
		}
	}
	// Memory kinds: copies whose names do not say pageable or pinned (no
	// kinds, or ROCm's plain "Host").
	if m := b.Table("memcpy"); m != nil {
		seen := map[string]bool{}
		for r := range m.Rows {
			src, dst := Str(m, r, "src"), Str(m, r, "dst")
			if Str(m, r, "kind") == "memcpy" && (src == "" || src == "Host" || dst == "Host") {
				k := fmt.Sprintf("%s\x00%d", Str(m, r, "trace"), Int(m, r, "rank"))
				if !seen[k] {
					seen[k] = true
					b.AddGap(Gap{Kind: GapMemoryKindHidden, Trace: Str(m, r, "trace"), Rank: int(Int(m, r, "rank")),
						What: "whether host copies use pageable or pinned memory",
						Why:  "the copy names do not carry the memory kinds (Pageable/Pinned) on this platform"})
				}
			}
		}
	}
	if m := b.Table("memory"); m != nil {
		for _, tr := range traces {
			found := false
			for r := range m.Rows {
				if Str(m, r, "trace") == tr && Int(m, r, "allocs")+Int(m, r, "frees") > 0 {
					found = true
				}
			}
			if !found {
				why := "no [memory] events; collect with profile_memory=True"
				if legacyTrace(perTrace[tr]) {
					why = "no [memory] events: " + legacyProfiler
				} else if memoryProfiled(b.Traces, tr) {
					why = "no [memory] events, though the trace's header says profile_memory was on: nothing was allocated or freed in the capture (a graph replay allocates nothing), or a tool that trimmed the trace dropped them"
				}
				b.AddGap(Gap{Kind: GapNoMemoryEvents, Trace: tr, Rank: -1, What: "allocator peaks against device memory", Why: why})
			}
		}
	}
}

// legacyProfiler is why a trace the legacy autograd profiler wrote (format
// legacy) lacks kernels, stacks or memory events.
const legacyProfiler = "the legacy autograd profiler wrote this trace (torch.autograd.profiler.profile with use_kineto=False, or a PyTorch built without Kineto), and this one holds operators only: on a CUDA build its use_cuda option adds each operator's CUDA time as a device range, but it records no kernel as the GPU ran it, and the stacks, shapes and memory its with_stack, record_shapes and profile_memory options record reach key_averages() in the process, not its export_chrome_trace JSON; profile with torch.profiler on a PyTorch build that has Kineto"

// CPUBackendOp names an operator of the rank in an ops table that runs
// only on the CPU: oneDNN's (aten::mkldnn_*, the CPU path of
// convolutions and linear layers), "" where it has none. A trace without
// GPU activity that has one is a run on the CPU, not a GPU run whose
// device the profiler did not record.
func CPUBackendOp(ops *table.Table, trace string, rank int) string {
	if ops == nil {
		return ""
	}
	best := ""
	for r := range ops.Rows {
		if Str(ops, r, "trace") != trace || int(Int(ops, r, "rank")) != rank {
			continue
		}
		if n := Str(ops, r, "name"); IsCPUBackendOp(n) && (best == "" || n < best) {
			best = n
		}
	}
	return best
}

// IsCPUBackendOp: oneDNN's CPU kernels (aten::mkldnn_*), which a tensor on
// a GPU never reaches.
func IsCPUBackendOp(name string) bool { return strings.HasPrefix(name, "aten::mkldnn_") }

// legacyTrace says whether every rank of a trace was written by the
// legacy autograd profiler.
func legacyTrace(rs []RankInfo) bool {
	for _, ri := range rs {
		if ri.Format != "legacy" {
			return false
		}
	}
	return len(rs) > 0
}

// AllocatorEvents is the allocations and frees the profiler recorded on a
// rank (profile_memory=True: the memory area's allocs and frees, summed
// over its devices and rows), 0 without a memory table.
func AllocatorEvents(memory *table.Table, trace string, rank int) int64 {
	if memory == nil {
		return 0
	}
	var n int64
	for r := range memory.Rows {
		if Str(memory, r, "trace") == trace && int(Int(memory, r, "rank")) == rank {
			n += Int(memory, r, "allocs") + Int(memory, r, "frees")
		}
	}
	return n
}

// memoryProfiled says whether a file of trace tr says in its header that
// profile_memory was on (the traces table's profile_memory column, read
// from the header by pipeline's evidence collection).
func memoryProfiled(t *table.Table, tr string) bool {
	if t == nil || t.Col("profile_memory") < 0 {
		return false
	}
	for r := range t.Rows {
		if Str(t, r, "trace") == tr && Bool(t, r, "profile_memory") {
			return true
		}
	}
	return false
}

func splitKey(k string) []string {
	var out []string
	start := 0
	for i := 0; i < len(k); i++ {
		if k[i] == 0 {
			out = append(out, k[start:i])
			start = i + 1
		}
	}
	return append(out, k[start:])
}

// unixTsMin is 2017-01-01 in Unix ns: a trace timestamp past it is a Unix
// time (a monotonic clock's counts from boot are far smaller).
const unixTsMin = 1_483_228_800_000_000_000

// captureNs is when a trace's events start, Unix ns, from its
// baseTimeNanoseconds and its first event's timestamp (see
// RankInfo.BaseTimeNs); 0 when neither dates it.
func captureNs(base, firstTs int64) int64 {
	switch {
	case firstTs >= unixTsMin:
		return firstTs
	case base > 0:
		return base + max(firstTs, 0)
	}
	return 0
}

// syncEventsSince is when Kineto began to record the device's sync events
// (docs/JUDGEMENT.md §2.1: Event Sync, Stream Sync, Context Sync and Stream
// Wait Event, 2023-06).
var syncEventsSince = time.Date(2023, 6, 1, 0, 0, 0, 0, time.UTC)

// predatesSyncEvents: the rank's capture is older than the device's sync
// events, by its format (the 2021 one) or its capture date.
func predatesSyncEvents(ri RankInfo) bool {
	return ri.Format == "kineto_2021" || (ri.BaseTimeNs > 0 && time.Unix(0, ri.BaseTimeNs).Before(syncEventsSince))
}

// inferredSteps says where a rank's inferred steps come from, by the steps
// area's source (resnet_2080ti's from its optimizer steps, not vLLM's
// frames).
func inferredSteps(source string) string {
	switch source {
	case "optimizer_step":
		return "steps come from the ends of the optimizer's steps (Optimizer.step#...), the first from the rank's first event"
	case "python_execute_model":
		return "steps come from vLLM's python execute_model frames"
	case "execute_new_cached":
		return "steps come from vLLM's execute_new_N_cached_N annotations"
	}
	return "steps come from python execute_model frames, execute_new_N_cached_N counts or the ends of optimizer steps"
}

// communicates says whether trace tr shows communication: a row of the
// collectives area, or communication kernel time in the ranks area.
// archPrefixes are kernel-name prefixes that say which GPU architecture
// cuBLAS or CUTLASS built a kernel for, newest first: a GPU runs the
// kernels of its own architecture and, as a fallback, of older ones.
var archPrefixes = []struct{ prefix, arch string }{
	{"sm100", "sm_100 (Blackwell)"}, {"sm90", "sm_90 (Hopper)"}, {"nvjet", "sm_90 (Hopper)"},
	{"sm80", "sm_80 (Ampere)"}, {"ampere_", "sm_80 (Ampere)"}, {"cutlass_80_", "sm_80 (Ampere)"},
	{"turing_", "sm_75 (Turing)"}, {"cutlass_75_", "sm_75 (Turing)"}, {"volta_", "sm_70 (Volta)"},
}

// kernelArch is the no-device-name gap's clause on the newest
// architecture the trace's kernel names were built for (sampled_2of128:
// ampere_sgemm and cutlass_80 tensor-op kernels), a floor on the GPU's;
// "" where no name says one.
func kernelArch(b *Bundle, tr string) string {
	t := b.Table("kernels")
	if t == nil {
		return ""
	}
	best, example := len(archPrefixes), ""
	for r := range t.Rows {
		if Str(t, r, "trace") != tr {
			continue
		}
		name := Str(t, r, "name")
		for i, a := range archPrefixes {
			if i < best && strings.HasPrefix(name, a.prefix) {
				best, example = i, name
			}
		}
	}
	if example == "" {
		return ""
	}
	return "; its kernel names were built for " + archPrefixes[best].arch + " (" + example + "), so the GPU is of that architecture or newer, which runs older kernels too"
}

func communicates(b *Bundle, tr string) bool {
	if t := b.Table("collectives"); t != nil {
		for r := range t.Rows {
			if Str(t, r, "trace") == tr {
				return true
			}
		}
	}
	if t := b.Table("ranks"); t != nil && t.Col("comm_ns") >= 0 {
		for r := range t.Rows {
			if Str(t, r, "trace") == tr && Int(t, r, "comm_ns") > 0 {
				return true
			}
		}
	}
	return false
}
