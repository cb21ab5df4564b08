// Package findings turns rolled-up evidence (analysis/evidence) into
// findings: a catalogue of rules, each with named, overridable thresholds, a
// scope (producer, platform, capture settings) outside which it offers no
// fix, and a status that is "confirmed" only where a mechanism links cause
// and effect in the same rank and step.
//
// Thresholds come from the peers' catalogue (HTA, the TensorBoard profiler
// plugin, Nsight Systems; docs/ANCHORS.md §11) where one exists, and are named
// so the viewer can change them and re-rank the findings in WebAssembly.
//
// The rules are one table, Rules (catalogue.go): each row holds a rule's
// evaluation, thresholds, per-step measure, Perfetto marks and anchor.
// Files: findings.go (thresholds, Judge, what the rules share),
// catalogue.go (the table and the predicates its rows share), rules.go
// (idle and host-side rules), levers.go (GPU-side levers), collectives.go
// (straggler, exposed communication), capture.go (the capture-quality
// gate), workload.go and fixes.go (what scopes a fix).
package findings

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/table"
)

// Threshold documents one named threshold.
type Threshold struct {
	Name    string
	Default float64
	Doc     string // what it compares, and its source
}

// Catalogue lists every threshold the rules read, with its default.
var Catalogue = []Threshold{
	{"sync_gap_critical", 0.05, "GPU gaps opened by host syncs, as a share of the rank's GPU span, that make the sync finding critical (our choice; nsys flags every sync API)"},
	{"sync_gap_minor", 0.005, "the same share below which a sync is not reported"},
	{"sync_blocked_minor", 0.02, "host time blocked in syncs (share of the GPU span) that is reported even without a GPU gap, as a hypothesis"},
	{"pageable_min_bytes", 65536, "pageable copies of at most this many bytes are ignored (nsys cuda_memcpy_sync ignores HtoD <= 64 KB)"},
	{"pageable_critical", 0.05, "host time in pageable copies, as a share of the rank's GPU span the rules judge (start-up and held idle left out), that makes the finding critical"},
	{"idle_critical", 0.5, "GPU idle share of the span under which utilisation is low (tb_plugin GPU utilization < 0.5; nsys gpu_time_util < 50%)"},
	{"host_wait_minor", 0.10, "HTA host-wait idle time as a share of the GPU span that is reported"},
	{"host_wait_critical", 0.25, "the same share that makes host-bound idle critical"},
	{"short_kernel_share", 0.5, "share of launches that are HTA short kernels (cpu_dur <= 50 us and gpu_dur < cpu_dur) that makes a trace launch-bound"},
	{"launch_min_count", 100, "launches with GPU work needed before a trace is judged launch-bound (our choice: a handful of launches around a graph replay says nothing)"},
	{"launch_idle_minor", 0.2, "GPU idle share of the span needed before launch-bound is reported"},
	{"launch_explains_min", 0.25, "share of the idle the launch calls can account for (their host time, at most the launch waits) under which launch-bound is refuted outside serving engines: the GPU waits on the host work between the launches, which host-bound names (our choice)"},
	{"imbalance_minor", 0.10, "compute time of the slowest rank over the median rank, minus 1, that is reported as imbalance (HTA straggler analysis ranks by start time; this is its time-share counterpart)"},
	{"imbalance_critical", 0.25, "the same ratio that makes the straggler finding critical"},
	{"straggler_wait_minor", 0.02, "the other ranks' wait for the rank that arrives last at matched collectives, as a share of their GPU span, that is reported (HTA's straggler analysis ranks ranks by the start of their collectives; the share is our choice)"},
	{"straggler_wait_critical", 0.10, "the same share that makes the straggler finding critical"},
	{"comm_wait_share", 0.5, "share of a rank's matched collective time spent waiting for the last rank to arrive above which exposed communication is put down to the late rank, not to missing overlap"},
	{"comm_share", 0.10, "communication not overlapped by computation, as a share of the rank's GPU span the rules judge (start-up and held idle left out), that is reported (tb_plugin R4: communication over 10% of step time, counted where no kernel runs)"},
	{"comm_overlap_low", 50, "comm/comp overlap (%) under which communication counts as not overlapped"},
	{"comm_critical", 0.25, "the same share of the GPU span that makes the finding critical"},
	{"dataloader_share", 0.05, "DataLoader time as a share of step time that is reported (tb_plugin R1: > 5%)"},
	{"dataloader_critical", 0.20, "the same share that makes the finding critical"},
	{"fp32_simt_share", 0.10, "share of GPU busy time in fp32 GEMM and convolution kernels whose names show the SIMT path that is reported (our choice)"},
	{"fp32_simt_critical", 0.30, "the same share that makes the finding critical, with the GPU busy at least gpu_busy_critical of its span (our choice: then the SIMT kernels are at least 15% of the wall time, and tensor cores run them several times faster)"},
	{"gpu_busy_critical", 0.50, "GPU busy share of the span from which a kernel-side lever (precision, fusion) can be critical: the kernels are most of the time (tb_plugin treats GPU utilization < 50% as low; its converse)"},
	{"elementwise_share", 0.40, "share of GPU busy time in PyTorch's eager elementwise and reduction kernels that is reported as a fusion lever; critical with the GPU busy at least gpu_busy_critical (our choice)"},
	{"attention_softmax_share", 0.15, "share of GPU busy time in PyTorch's eager softmax kernels, with no fused attention kernel on the rank and batched matmuls among its operators, that is reported as an unfused attention; critical with the GPU busy at least gpu_busy_critical (our choice)"},
	{"align1_gemm_share", 0.10, "share of GPU busy time in CUTLASS GEMM kernels built for 1-element alignment (align1: a dimension or leading dimension not a multiple of 16 bytes) that is reported; critical at align1_gemm_critical with the GPU busy at least gpu_busy_critical (our choice)"},
	{"align1_gemm_critical", 0.30, "the same share that makes the finding critical (our choice, as fp32_simt_critical)"},
	{"slow_instance_ratio", 2, "a kernel instance at least this many times its name's median duration is slow (our choice)"},
	{"slow_instance_share", 0.05, "time the slow instances take beyond the median, as a share of GPU busy time, that is reported (our choice)"},
	{"slow_instance_min_count", 10, "instances of a kernel name needed before its median is trusted (our choice)"},
	{"slow_instance_tail", 0.10, "largest share of a name's instances that may be slow: more is a second mode (another shape), not a tail (our choice)"},
	{"storm_kernel_ns", 10000, "median duration (ns) under which a kernel name counts as tiny (our choice; about ten times a kernel launch's GPU-side cost)"},
	{"storm_count_share", 0.5, "share of launched kernels that are tiny needed for a storm (our choice, after HTA's 50% short-kernel share)"},
	{"storm_min_count", 1000, "kernels launched needed before a rank is judged (our choice)"},
	{"storm_time_share", 0.3, "share of GPU busy time in tiny kernels needed for a storm: below it the large kernels are the time (our choice)"},
	{"memory_peak_share", 0.90, "allocator peak (reserved or allocated) as a share of the device's memory that is reported (our choice; vLLM's default gpu_memory_utilization is 0.9, so serving engines are left out)"},
}

// Defaults returns the default thresholds.
func Defaults() evidence.Thresholds {
	th := evidence.Thresholds{}
	for _, t := range Catalogue {
		th[t.Name] = t.Default
	}
	return th
}

// Evaluate runs every rule on ev with th (missing names take their
// defaults) and returns the findings: critical first, then by impact.
func Evaluate(ev *evidence.Evidence, th evidence.Thresholds) []evidence.Finding {
	fs, _ := Judge(ev, th)
	return fs
}

// Judge is Evaluate that also returns the capture-quality gate the
// findings were capped by, for the report to show.
func Judge(ev *evidence.Evidence, th evidence.Thresholds) ([]evidence.Finding, *Gate) {
	c := newCtx(ev, th)
	c.gate = Assess(ev)
	var out []evidence.Finding
	for _, r := range Rules {
		for _, f := range r.eval(c) {
			f.Rule = r.ID
			f.Step = -1
			if ev.Filter.HasStep {
				f.Step = ev.Filter.Step
			}
			if f.Phase == "" {
				f.Phase = ev.Filter.Phase
			}
			out = append(out, f)
		}
	}
	out = c.gate.apply(c.mergeWaiting(out))
	c.noteHostCost(out)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if (a.Severity == "critical") != (b.Severity == "critical") {
			return a.Severity == "critical"
		}
		if a.Impact != b.Impact {
			return a.Impact > b.Impact
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		if a.Trace != b.Trace {
			return a.Trace < b.Trace
		}
		return a.Rank < b.Rank
	})
	return out, c.gate
}

// ctx is what every rule reads: the evidence, thresholds, and per-rank
// metadata and spans.
type ctx struct {
	ev    *evidence.Evidence
	th    evidence.Thresholds
	info  map[string]evidence.RankInfo // trace\x00rank
	ranks []rankRow
	gaps  map[string]map[evidence.GapKind]bool // trace\x00rank -> kinds (rank -1 gaps fan out)
	gate  *Gate                                // the capture-quality gate; nil inside Assess
	rowIx map[*table.Table]map[string][]int    // rankRows' index: table -> trace\x00rank -> rows
}

type rankRow struct {
	trace                                                   string
	rank                                                    int
	busy, idle, compute, comm, commComp, stepNs, steps, evs int64
}

func key(trace string, rank int) string { return fmt.Sprintf("%s\x00%d", trace, rank) }

func newCtx(ev *evidence.Evidence, th evidence.Thresholds) *ctx {
	c := &ctx{ev: ev, th: Defaults(), info: map[string]evidence.RankInfo{}, gaps: map[string]map[evidence.GapKind]bool{}}
	for k, v := range th {
		c.th[k] = v
	}
	for _, ri := range evidence.Ranks(ev.Traces) {
		c.info[key(ri.Trace, ri.Rank)] = ri
	}
	if t := ev.Table("ranks"); t != nil {
		for r := range t.Rows {
			c.ranks = append(c.ranks, rankRow{
				trace: evidence.Str(t, r, "trace"), rank: int(evidence.Int(t, r, "rank")),
				busy: evidence.Int(t, r, "busy_ns"), idle: evidence.Int(t, r, "idle_ns"),
				compute: evidence.Int(t, r, "compute_ns"), comm: evidence.Int(t, r, "comm_ns"),
				commComp: evidence.Int(t, r, "comm_comp_ns"), stepNs: evidence.Int(t, r, "step_ns"),
				steps: evidence.Int(t, r, "steps"), evs: evidence.Int(t, r, "events"),
			})
		}
	}
	for _, g := range ev.Gaps {
		for _, rr := range c.ranks {
			if rr.trace == g.Trace && (g.Rank == -1 || g.Rank == rr.rank) {
				k := key(rr.trace, rr.rank)
				if c.gaps[k] == nil {
					c.gaps[k] = map[evidence.GapKind]bool{}
				}
				c.gaps[k][g.Kind] = true
			}
		}
	}
	return c
}

func (c *ctx) rankInfo(trace string, rank int) evidence.RankInfo {
	if ri, ok := c.info[key(trace, rank)]; ok {
		return ri
	}
	// A trace-wide default: the first rank of the trace.
	for _, ri := range c.info {
		if ri.Trace == trace {
			return ri
		}
	}
	return evidence.RankInfo{Trace: trace, Rank: rank}
}

func (c *ctx) span(trace string, rank int) int64 {
	for _, r := range c.ranks {
		if r.trace == trace && r.rank == rank {
			return r.busy + r.idle
		}
	}
	return 0
}

func (c *ctx) hasGap(trace string, rank int, k evidence.GapKind) bool {
	return c.gaps[key(trace, rank)][k]
}

// where describes the slice a number belongs to: trace, rank, window, step and phase.
func (c *ctx) where(trace string, rank int) string {
	f := c.ev.Filter
	parts := []string{fmt.Sprintf("trace %s", trace)}
	if rank >= 0 {
		parts = append(parts, fmt.Sprintf("rank %d", rank))
	} else {
		parts = append(parts, "all ranks")
	}
	if f.WindowStartNs != 0 || f.WindowEndNs != 0 {
		parts = append(parts, table.Window(f.WindowStartNs, f.WindowEndNs))
	} else {
		parts = append(parts, "whole trace")
	}
	if f.HasStep {
		parts = append(parts, fmt.Sprintf("step %d", f.Step))
	}
	if f.Phase != "" {
		parts = append(parts, "phase "+f.Phase)
	}
	return strings.Join(parts, ", ")
}

// shareOf names what a finding's Impact is a share of: what, on the
// slice where(trace, rank) describes (Finding.ImpactOf).
func (c *ctx) shareOf(what, trace string, rank int) string {
	return what + " (" + c.where(trace, rank) + ")"
}

// ms writes a duration in a finding's sentence (table.ProseMs).
func ms(ns int64) string { return table.ProseMs(ns) }

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

func inScope(ri evidence.RankInfo, producers, platforms []string) bool {
	ok := func(v string, list []string) bool {
		if len(list) == 0 {
			return true
		}
		for _, l := range list {
			if l == v {
				return true
			}
		}
		return false
	}
	return ok(ri.Producer, producers) && ok(ri.Platform, platforms)
}

// worst picks, per trace, the rank with the largest score among those that
// pass, and counts how many ranks of the trace pass.
type cand struct {
	trace string
	rank  int
	score float64
	row   int
}

func worstPerTrace(cs []cand) (best []cand, counts map[string]int) {
	counts = map[string]int{}
	byTrace := map[string]cand{}
	var order []string
	for _, x := range cs {
		counts[x.trace]++
		b, ok := byTrace[x.trace]
		if !ok {
			order = append(order, x.trace)
		}
		if !ok || x.score > b.score || (x.score == b.score && x.rank < b.rank) {
			byTrace[x.trace] = x
		}
	}
	sort.Strings(order)
	for _, t := range order {
		best = append(best, byTrace[t])
	}
	return best, counts
}

func others(n int) string {
	if n <= 1 {
		return ""
	}
	return fmt.Sprintf(" (%d ranks of this trace show it; rank shown is the worst)", n)
}

// ranked is the worst rank of one trace that passed a rule's test: its
// score, what the test gathered on it (acc, of the rule's own type), and
// how many ranks of the trace passed (n, for others).
type ranked struct {
	trace string
	rank  int
	score float64
	acc   any
	n     int
}

// worstRanks runs a rule's test over every rank (ok false: the rank does
// not pass) and returns, per trace in name order, the passing rank with the
// largest score (the lower rank on a tie) and what the test gathered on it:
// the skeleton every per-rank rule shares. (acc is an any, not a type
// parameter: one copy of this code instead of one per rule in the viewer
// module.)
func worstRanks(c *ctx, test func(rr rankRow) (acc any, score float64, ok bool)) []ranked {
	var cs []cand
	accs := map[string]any{}
	for _, rr := range c.ranks {
		a, score, ok := test(rr)
		if !ok {
			continue
		}
		accs[key(rr.trace, rr.rank)] = a
		cs = append(cs, cand{trace: rr.trace, rank: rr.rank, score: score})
	}
	best, counts := worstPerTrace(cs)
	out := make([]ranked, 0, len(best))
	for _, b := range best {
		out = append(out, ranked{trace: b.trace, rank: b.rank, score: b.score, acc: accs[key(b.trace, b.rank)], n: counts[b.trace]})
	}
	return out
}

// rankRows returns the rows of t that belong to (trace, rank), in table
// order. The index is built once per table and context.
func (c *ctx) rankRows(t *table.Table, trace string, rank int) []int {
	if t == nil {
		return nil
	}
	ix := c.rowIx[t]
	if ix == nil {
		ix = map[string][]int{}
		for r := range t.Rows {
			k := key(evidence.Str(t, r, "trace"), int(evidence.Int(t, r, "rank")))
			ix[k] = append(ix[k], r)
		}
		if c.rowIx == nil {
			c.rowIx = map[*table.Table]map[string][]int{}
		}
		c.rowIx[t] = ix
	}
	return ix[key(trace, rank)]
}

// sumBy sums col over the rows of t that match trace and rank and pass keep.
func sumBy(t *table.Table, trace string, rank int, col string, keep func(r int) bool) int64 {
	if t == nil {
		return 0
	}
	var s int64
	for r := range t.Rows {
		if evidence.Str(t, r, "trace") == trace && int(evidence.Int(t, r, "rank")) == rank && (keep == nil || keep(r)) {
			s += evidence.Int(t, r, col)
		}
	}
	return s
}

func severity(share, critical float64) string {
	if share >= critical {
		return "critical"
	}
	return "minor"
}

// mergeWaiting folds a rank's exposed communication that is waiting for a
// late rank into that rank's straggler finding: one cause, one finding. The
// straggler keeps its own impact (the part of the others' wait that is its
// own: a share of their GPU span, where the waiting finding's is a share of
// one waiter's) and takes the larger severity, and names the waiter. A
// straggler whose own lead explains under half of the wait it was last in
// folds nothing: the wait is the spread of the ranks' arrivals, and the
// waiting finding says so on its own. Under a rank filter the straggler's
// rows are absent, and the waiting finding stands alone.
func (c *ctx) mergeWaiting(fs []evidence.Finding) []evidence.Finding {
	colls := c.collectives()
	strag := map[string]int{} // trace\x00rank -> index of the straggler finding
	for i, f := range fs {
		if f.Rule == "rank_straggler" && f.Status == "confirmed" {
			if cr := colls[key(f.Trace, f.Rank)]; cr != nil && cr.single(c.rankCount(f.Trace)) {
				strag[key(f.Trace, f.Rank)] = i
			}
		}
	}
	if len(strag) == 0 {
		return fs
	}
	folded := make([]bool, len(fs))
	for j, f := range fs {
		if f.Rule != "comm_not_overlapped" || f.Status != "confirmed" {
			continue
		}
		if i, ok := waitsFor(f, strag); ok {
			s := &fs[i]
			if f.Severity == "critical" {
				s.Severity = "critical"
			}
			s.Observation += " " + f.Title + ": " + firstSentence(f.Observation)
			s.Evidence = append(s.Evidence, f.Evidence...)
			folded[j] = true
		}
	}
	var out []evidence.Finding
	for j, f := range fs {
		if !folded[j] {
			out = append(out, f)
		}
	}
	return out
}

// waitsFor returns the straggler finding whose rank f's evidence names as
// the late rank.
func waitsFor(f evidence.Finding, strag map[string]int) (int, bool) {
	for _, r := range f.Evidence {
		if r.Preset != "collectives" {
			continue
		}
		if i, ok := strag[f.Trace+"\x00"+r.Where["rank"]]; ok && r.Where["rank"] != strconv.Itoa(f.Rank) {
			return i, true
		}
	}
	return 0, false
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// noteHostCost adds to the host-bound and launch-bound findings what the
// trace shows of the host's own speed: a rank whose view operators are
// slow (Workload.SlowViews) is named with their figures (the capture gate,
// Assess, caps such a finding, and the cross-check's host-side reading, at
// a hypothesis), and one whose operators
// carry their input shapes (record_shapes=True) is told that part of the
// host time the verdict rests on is the profiler's (docs/JUDGEMENT.md 3:
// shape recording inflates host durations and weakens such verdicts). A
// rank with python stacks is capped by the capture gate instead, for the
// larger cost of the Python tracer, and gets neither sentence.
func (c *ctx) noteHostCost(fs []evidence.Finding) {
	for i := range fs {
		f := &fs[i]
		if (f.Rule != "host_bound_idle" && f.Rule != "launch_bound") || f.Rank < 0 || c.rankInfo(f.Trace, f.Rank).HasPythonStacks {
			continue
		}
		w := c.workload(f.Trace, f.Rank)
		if mean, ok := w.SlowViews(); ok {
			f.Observation += fmt.Sprintf(" The host ran operators slowly: aten::view and aten::as_strided, which make a view of a tensor without allocating or launching anything, took %s on average over %s calls, where they commonly take %s with the profiler on: the host time of every operator here is inflated, by the profiler's recording of each operator, CPU contention (other processes, or more threads than cores: OMP_NUM_THREADS, DataLoader workers) or a slow or throttled CPU; a few steps timed without the profiler tell which.",
				us(int64(mean)), table.Int(w.ViewOps), usualViewOp)
			if ns, n := c.launchCallMean(f.Trace, f.Rank); n >= SlowViewOpCalls && ns <= UsualLaunchCallNs {
				hooks := "per-operator hooks (RecordFunction observers that a framework or a monitoring tool registers, autograd anomaly detection; the profiler recorded no shapes or stacks here, which keeps its own cost per operator small)"
				if w.Shapes {
					hooks = "per-operator hooks (the profiler's shape recording, other RecordFunction observers, autograd anomaly detection)"
				}
				f.Observation += fmt.Sprintf(" Its kernel launch calls, which CUPTI times apart from the operators, took %s on average over %s calls, within what other hosts take (%s), while its view operators took %.0f to %.0f times the usual: a CPU slow across the board would slow both alike, so the likelier cost is in the operators' own path, %s, over contention or a slow CPU (a hypothesis).",
					us(int64(ns)), table.Int(n), usualLaunchCall, mean/usualViewOpMaxNs, mean/usualViewOpMinNs, hooks)
			}
			f.Evidence = append(f.Evidence, ref("workload", "rank", itoa(f.Rank), "feature", "view_ops"))
		}
		if w.Shapes {
			f.Observation += " Shapes were recorded (record_shapes=True): recording each operator's input sizes adds host time to it, so part of the host time between launches is the profiler's; profile once without record_shapes to see how much remains."
		}
		if n := evidence.AllocatorEvents(c.ev.Table("memory"), f.Trace, f.Rank); n >= AllocatorEventsNoted {
			// df_index_resolver_v100: 28,010 [memory] events.
			f.Observation += fmt.Sprintf(" The allocator's events were recorded (profile_memory=True: %s allocations and frees): the profiler records each one on the host, in the operator that allocates, so that part of the host time is the profiler's too; profile once without profile_memory to see how much remains.", table.Int(n))
		}
	}
}

// AllocatorEventsNoted is the count of allocator events ([memory]
// instants, profile_memory=True) on a rank from which the host-bound and
// launch-bound findings say that recording them adds host time (our
// choice: a few per step are no cost to speak of; df_index_resolver_v100
// records 28,010 in 5 steps).
const AllocatorEventsNoted = 1000

// SlowViewOpNs and SlowViewOpCalls: a rank whose aten::view and
// aten::as_strided calls that recorded no stack, SlowViewOpCalls or more,
// take SlowViewOpNs or more on average runs every operator slowly (our
// choice, from the shared traces: 0.3-5 µs on the captures with 200 or
// more such calls, against 24.6 µs on nccl_data_a100; the 2021 resnet50
// captures take 4-5 µs on their autograd thread and 17-19 µs on the
// thread whose operators carry a Call stack, which the area leaves out).
const (
	SlowViewOpNs    = 10_000
	SlowViewOpCalls = 200
)

// usualViewOp is what a view operator commonly takes with the profiler
// on, usualViewOpMinNs to usualViewOpMaxNs.
const (
	usualViewOp      = "0.3–5 µs"
	usualViewOpMinNs = 300
	usualViewOpMaxNs = 5_000
)

// UsualLaunchCallNs: a rank whose kernel launch calls (cudaLaunchKernel,
// hipLaunchKernel) take this long or less on average launches at the
// speed of other hosts (our choice, from the shared traces with 200 or
// more launches: 3–12 µs on average; nccl_data_a100, whose view
// operators take 24.6 µs, 9.6 µs). A CPU that runs everything slowly
// (contention, throttling) slows those calls too.
const UsualLaunchCallNs = 12_000

// usualLaunchCall is what a kernel launch call commonly takes.
const usualLaunchCall = "3–12 µs"

// launchCallMean is the mean time of the rank's kernel launch calls
// (cudaLaunchKernel, hipLaunchKernel: the launch area's rows), and how
// many there were.
func (c *ctx) launchCallMean(trace string, rank int) (meanNs float64, n int64) {
	l := c.ev.Table("launch")
	if l == nil {
		return 0, 0
	}
	var ns int64
	for _, r := range c.rankRows(l, trace, rank) {
		if call := evidence.Str(l, r, "call"); call == "cudaLaunchKernel" || call == "hipLaunchKernel" {
			n += evidence.Int(l, r, "launches")
			ns += evidence.Int(l, r, "cpu_ns")
		}
	}
	if n == 0 {
		return 0, 0
	}
	return float64(ns) / float64(n), n
}

// SlowViews is the mean time of the rank's view operators, and whether it
// is slow (SlowViewOpNs or more, over SlowViewOpCalls or more calls).
func (w Workload) SlowViews() (meanNs float64, ok bool) {
	if w.ViewOps < SlowViewOpCalls {
		return 0, false
	}
	meanNs = float64(w.ViewOpsNs) / float64(w.ViewOps)
	return meanNs, meanNs >= SlowViewOpNs
}

// checkHostFirst opens the host and launch fixes of a rank whose view
// operators are slow (Workload.SlowViews): the host's speed is checked
// before the code is changed, the per-operator hooks first where its
// launch calls are as fast as usual (UsualLaunchCallNs). "" otherwise, and
// on a rank with python stacks, whose fixes already say to profile again
// without them first.
func (c *ctx) checkHostFirst(trace string, rank int) string {
	w := c.workload(trace, rank)
	mean, ok := w.SlowViews()
	if !ok || c.rankInfo(trace, rank).HasPythonStacks {
		return ""
	}
	if ns, n := c.launchCallMean(trace, rank); n >= SlowViewOpCalls && ns <= UsualLaunchCallNs {
		return fmt.Sprintf("Check the host before the code: its view operators took %s each on average while its launch calls ran at the usual speed (see the observation), so time a few steps without the profiler and with no other per-operator hook first; what the gaps keep after that is the code's. ", us(int64(mean)))
	}
	return fmt.Sprintf("Check the host before the code: its view operators took %s each on average (see the observation), so time a few steps without the profiler and look at the rank's CPU load and thread counts first; what the gaps keep after that is the code's. ", us(int64(mean)))
}
