package report

import (
	"sort"
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/findings"
	"github.com/tracebook/tracebook/analysis/table"
)

// The Evidence section opens with the seed's table, Area | Evidence |
// Interpretation: one row per area the evidence covers, each with its key
// number and what that number is a share of, on which ranks; the
// interpretation is what the rules concluded from the area (the findings
// that cite its preset) or, when none did, that no rule flags it. An area
// the trace cannot show is a gap, never a zero. The preset tables follow,
// folded.

// areaRow is one row of the summary: its label, the presets whose findings
// interpret it, and the function that reads its evidence.
type areaRow struct {
	area string
	// cites says whether a finding's evidence reference is about the area.
	cites func(r evidence.Ref) bool
	read  func(s *areaSlice) (text string, gap *evidence.Gap)
}

// preset cites the references to one preset.
func preset(name string) func(evidence.Ref) bool {
	return func(r evidence.Ref) bool { return r.Preset == name }
}

// acrossRanks cites the collectives and the ranks of a whole trace: every
// finding takes its denominator from one rank's row of ranks, only a
// comparison of ranks cites the trace's.
func acrossRanks(r evidence.Ref) bool {
	return r.Preset == "collectives" || (r.Preset == "ranks" && r.Where["rank"] == "")
}

var areaRows = []areaRow{
	{"Synchronization waits", preset("sync"), syncEvidence},
	{"GPU kernel hotspots", preset("kernels"), kernelEvidence},
	{"CPU operator hotspots", preset("ops"), opEvidence},
	{"Rank imbalance", acrossRanks, rankEvidence},
	{"Memory copies", preset("memcpy"), memcpyEvidence},
	{"Prefill/decode and steps", preset("steps"), stepEvidence},
	{"Idle gaps", preset("gaps"), idleEvidence},
	{"Kernel launches", preset("launch"), launchEvidence},
	{"Communication overlap", preset("overlap"), overlapEvidence},
}

// areaSlice is what the rows read: the rolled-up evidence, the gaps that
// concern the slice and the slice in words.
type areaSlice struct {
	ev    *evidence.Evidence
	gaps  []evidence.Gap
	where string // "rank 3", "8 ranks, summed"
	spans rankSpans
	void  string // evidenceRows' void
}

// rankSpans are the GPU busy, idle and span times of the slice's ranks,
// from the ranks area.
type rankSpans struct {
	ranks            int
	busy, idle, span int64
	wall             int64 // the ranks' wall times summed (findings.WallNs)
}

// evidenceRows fills the summary table of the Evidence section.
// void is the capture gate's reason that no time in the slice is the
// workload's (findings.Gate.Void: a sampled trace), "" when it has none.
func evidenceRows(ev *evidence.Evidence, found []evidence.Finding, void string) []EvidenceRow {
	s := &areaSlice{ev: ev, void: void}
	f := ev.Filter
	for _, g := range ev.Gaps {
		if (f.Trace == "" || g.Trace == "" || g.Trace == f.Trace) && (!f.HasRank || g.Rank < 0 || g.Rank == f.Rank) {
			s.gaps = append(s.gaps, g)
		}
	}
	if t := ev.Table("ranks"); t != nil {
		for r := range t.Rows {
			s.spans.ranks++
			busy, idle := evidence.Int(t, r, "busy_ns"), evidence.Int(t, r, "idle_ns")
			s.spans.busy += busy
			s.spans.idle += idle
			s.spans.wall += findings.WallNs(ev, evidence.Str(t, r, "trace"), int(evidence.Int(t, r, "rank")), busy+idle)
		}
		s.spans.span = s.spans.busy + s.spans.idle
	}
	s.where = sliceWords(ev)
	rows := []EvidenceRow{}
	for _, a := range areaRows {
		text, gap := a.read(s)
		if text == "" && gap == nil {
			continue // the area was not collected and no gap explains it
		}
		row := EvidenceRow{Area: a.area, Evidence: text, Interpretation: interpretation(a.cites, found, shownOf(found))}
		switch {
		case gap != nil && text == "":
			row.Gap = true
			row.Evidence = "Gap: " + gap.What + " cannot be shown."
			row.Interpretation = "Not judged from this trace: " + gap.Why + "."
		case gap != nil:
			row.Evidence += " Missing: " + gap.What + "."
			row.Interpretation += " Limited: " + gap.Why + "."
		}
		if row.Interpretation == noFlag && void != "" {
			// sampled_2of128: the rules judge none of its time, so their
			// silence says nothing of the area.
			row.Interpretation = "Not judged: " + void + ", so no rule reads this slice's time: no flag here is no evidence that the area is not a bottleneck."
		}
		if hostTimed[a.area] && !row.Gap && counterCapture(ev) {
			// The range profiler replays each kernel inside its launch
			// (cupti_profiler: cudaLaunchKernel 22-146 ms each).
			row.Interpretation += " Limited: a CUPTI counter capture replays each kernel inside its launch, so these host times are the replay's, not the loop's."
		}
		rows = append(rows, row)
	}
	return rows
}

// hostTimed are the areas whose numbers are host call or operator times.
var hostTimed = map[string]bool{"Kernel launches": true, "CPU operator hotspots": true, "Synchronization waits": true, "Memory copies": true}

// counterCapture: a rank of the slice is a CUPTI counter capture (the
// capture area's counter_range rows).
func counterCapture(ev *evidence.Evidence) bool {
	t := ev.Table("capture")
	if t == nil {
		return false
	}
	for r := range t.Rows {
		if evidence.Str(t, r, "kind") == "counter_range" {
			return true
		}
	}
	return false
}

// interpretation names the findings whose evidence the area holds, or says
// that no rule flags the area. Findings past the report's follow-ups
// (listed: those the issues list) are named as such: "see the issues
// above" would point at nothing (trace_diff_control_a100's sync finding,
// the third minor one).
func interpretation(cites func(evidence.Ref) bool, found, listed []evidence.Finding) string {
	var parts, rest []string
	crit, _ := shown(found)
	for _, f := range found {
		for _, r := range f.Evidence {
			if cites(r) {
				// A critical finding listed among the follow-ups (its fix is
				// an issue's above, or past the critical issues' limit) is
				// named where the report lists it (b200_eager: the eager
				// launches, whose fix is issue 1's).
				sev := f.Severity
				if sev == "critical" && !isShown(f, crit) {
					sev = "listed to consider"
				}
				what := f.Title + " (" + sev + ", " + f.Status + ")"
				if isShown(f, listed) {
					parts = append(parts, what)
				} else {
					rest = append(rest, what)
				}
				break
			}
		}
	}
	var out []string
	if len(parts) > 0 {
		out = append(out, strings.Join(parts, "; ")+"; see the issues above.")
	}
	if len(rest) > 0 {
		out = append(out, strings.Join(rest, "; ")+": past the issues the report lists (at most "+strconv.Itoa(MaxCritical)+" critical and "+strconv.Itoa(MaxFollowUps)+" to consider); the numbers are in this row.")
	}
	if len(out) == 0 {
		return noFlag
	}
	return strings.Join(out, " ")
}

// noFlag is an area's interpretation where no finding cites it.
const noFlag = "No rule flags this area: not a bottleneck at the rules' thresholds in this slice."

// isShown reports whether f is among shown (same rule, trace and rank).
func isShown(f evidence.Finding, shown []evidence.Finding) bool {
	for _, s := range shown {
		if s.Rule == f.Rule && s.Trace == f.Trace && s.Rank == f.Rank {
			return true
		}
	}
	return false
}

func containsString(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// gapOf returns the first gap of one of the kinds, or nil.
func (s *areaSlice) gapOf(kinds ...evidence.GapKind) *evidence.Gap {
	for i := range s.gaps {
		for _, k := range kinds {
			if s.gaps[i].Kind == k {
				return &s.gaps[i]
			}
		}
	}
	return nil
}

// notCollected is the gap of an area whose preset did not run.
func notCollected(area string) *evidence.Gap {
	return &evidence.Gap{What: "the " + area + " area", Why: "its preset was not collected for this report (%evidence " + area + " collects it)"}
}

// sliceWords says which ranks (and phase and window) the numbers cover.
func sliceWords(ev *evidence.Evidence) string {
	type key struct {
		trace string
		rank  int64
	}
	seen := map[key]bool{}
	traces := map[string]bool{}
	var one key
	if t := ev.Table("ranks"); t != nil {
		for r := range t.Rows {
			k := key{evidence.Str(t, r, "trace"), evidence.Int(t, r, "rank")}
			seen[k], traces[k.trace], one = true, true, k
		}
	}
	var w string
	switch {
	case len(seen) == 1 && ev.Filter.Trace == "" && len(traces) > 1:
		w = "rank " + strconv.FormatInt(one.rank, 10) + " of " + one.trace
	case len(seen) == 1:
		w = "rank " + strconv.FormatInt(one.rank, 10)
	case len(seen) > 1 && len(traces) > 1:
		w = strconv.Itoa(len(seen)) + " ranks of " + strconv.Itoa(len(traces)) + " traces, summed"
	case len(seen) > 1:
		w = strconv.Itoa(len(seen)) + " ranks, summed"
	default:
		w = "this slice"
	}
	if ev.Filter.Phase != "" {
		w += ", phase " + ev.Filter.Phase
	}
	if ev.Filter.HasStep {
		w += ", step " + strconv.Itoa(ev.Filter.Step)
	}
	return w
}

// share is "12.3% of the 21.834 ms GPU span" style text: a share with what
// it is a share of.
func share(part, whole int64, of string) string {
	if whole <= 0 {
		return "of no " + of
	}
	return fmtPct(float64(part)/float64(whole)) + " of the " + fmtMs(whole) + " " + of
}

// name is a trace string as the summary quotes it: on one line, long names
// shortened in the middle (the preset tables below hold them whole). 72
// code points keep a Tensile GEMM's name whole as findings.KernelName
// gives it, up to its macro tile and matrix instruction
// (Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x256x32_MI16x16x1).
func name(s string) string { return table.ShortenMiddle(oneLine(s), nameMax) }

const nameMax = 72

func syncEvidence(s *areaSlice) (string, *evidence.Gap) {
	t := s.ev.Table("sync")
	if t == nil {
		return "", notCollected("sync")
	}
	var n, blocked, held, firstUse, gaps, gapNs, edge, edgeNs int64
	// The longest call (and the operator that made it) summed over the
	// slice's ranks, as the totals are (dlrm_8rank: aten::to's
	// cudaStreamSynchronize, 20.3 ms over 8 ranks, 6.6 ms of it rank 1's).
	type callKey struct {
		call, op string
		edge     bool // the edge syncs have their own sentence
	}
	type callSum struct {
		callKey
		ns, count int64
		byRank    map[int]int64
	}
	var calls []*callSum
	byCall := map[callKey]*callSum{}
	for r := range t.Rows {
		if !evidence.Bool(t, r, "blocking") {
			continue
		}
		k := callKey{evidence.Str(t, r, "call"), evidence.Str(t, r, "op"), evidence.Bool(t, r, "edge")}
		c := byCall[k]
		if c == nil {
			c = &callSum{callKey: k, byRank: map[int]int64{}}
			byCall[k] = c
			calls = append(calls, c)
		}
		ns := evidence.Int(t, r, "blocked_ns")
		c.ns += ns
		c.count += evidence.Int(t, r, "count")
		c.byRank[int(evidence.Int(t, r, "rank"))] += ns
		n += evidence.Int(t, r, "count")
		blocked += evidence.Int(t, r, "blocked_ns")
		// An edge sync holds no held time (sql/sync.sql): its whole time
		// is the edge's, as in Capture quality.
		held += evidence.Int(t, r, "held_ns")
		if evidence.Bool(t, r, "edge") {
			edge += evidence.Int(t, r, "count")
			edgeNs += evidence.Int(t, r, "blocked_ns")
		}
		firstUse += evidence.Int(t, r, "one_time_ns")
		gaps += evidence.Int(t, r, "gaps")
		gapNs += evidence.Int(t, r, "gpu_gap_ns")
	}
	// The longest is the loop's call where the slice has one, an edge
	// sync's where it has none.
	var top *callSum
	for pass := 0; pass < 2 && top == nil; pass++ {
		for _, c := range calls {
			if (pass == 0 && c.edge) || (top != nil && c.ns <= top.ns) {
				continue
			}
			top = c
		}
	}
	var text string
	if n == 0 {
		text = "No blocking synchronisation call or copy (" + s.where + ")."
	} else {
		// The share of the wall time where the ranks have one (a rank
		// without GPU work, as a counter capture, has none to quote).
		of := s.where
		if s.spans.wall > 0 {
			of += "; " + share(blocked, s.spans.wall, "wall time")
		}
		opened := "; they opened " + plural(gaps, "GPU gap", "GPU gaps") + ", " + fmtMs(gapNs) + " of GPU idle time"
		if s.gapOf(evidence.GapNoGPUEvents) != nil {
			// cupti_profiler: counter ranges, no GPU activity: no gap can
			// be measured, which is not none.
			opened = "; the trace holds no GPU activity (kernel, copy or memset record), so the GPU idle they opened cannot be shown"
		}
		text = "The host blocked " + fmtMs(blocked) + " in " + plural(n, "blocking call", "blocking calls") + " (" + of + ")" + opened + ". Longest: " +
			name(top.call)
		if top.op != "" {
			text += " from " + name(top.op)
		}
		text += ", " + fmtMs(top.ns) + " in " + plural(top.count, "call", "calls")
		if len(top.byRank) > 1 {
			most := -1
			for rk, ns := range top.byRank {
				if most < 0 || ns > top.byRank[most] || (ns == top.byRank[most] && rk < most) {
					most = rk
				}
			}
			text += " on " + strconv.Itoa(len(top.byRank)) + " ranks (rank " + strconv.Itoa(most) + " the most, " + fmtMs(top.byRank[most]) + ")"
		}
		text += "."
		if edge > 0 {
			text += " " + plural(edge, "sync", "syncs") + " at the capture's edges blocked " + fmtMs(edgeNs) + " (left out of the loop's waits: the profiler's stop synchronisation draining what the window queued, a harness sync, the loop's own sync at a step's end, or a wait for work launched before the window or for the step before; see Capture quality)."
		}
		if held > 0 && edge > 0 {
			text += " Of the other calls' time, " + fmtMs(held) + " passed while the GPU ran none of the trace's work: a wait for work the trace does not show (see Capture quality)."
		} else if held > 0 {
			text += " " + fmtMs(held) + " of the blocked time passed while the GPU ran none of the trace's work: a wait for work the trace does not show (see Capture quality)."
		}
		if firstUse > 0 {
			text += " " + fmtMs(firstUse) + " of the blocked time was first copy calls blocking before any GPU work began: a one-time cost at the window's start (see Capture quality)."
		}
	}
	switch {
	case s.void != "" && findings.Sampled(s.ev):
		// sampled_2of128 kept launch and copy calls only: none of the
		// job's stream or event syncs is left to count.
		text += " Read with care: " + s.void + ", so these are the calls it kept: the host's sync time is unknown, not this."
	case s.void != "":
		// cupti_profiler: the range profiler replays each kernel inside
		// its launching call.
		text += " Read with care: " + s.void + ", and the host's calls time the profiler's replays of their kernels: no reading of the host's waits either."
	}
	return text, s.gapOf(evidence.GapNoSyncEvents)
}

// byName sums a column per value of another over every row.
func byName(t *table.Table, key, col string) (names []string, sums map[string]int64, total int64) {
	sums = map[string]int64{}
	for r := range t.Rows {
		k := evidence.Str(t, r, key)
		if _, ok := sums[k]; !ok {
			names = append(names, k)
		}
		v := evidence.Int(t, r, col)
		sums[k] += v
		total += v
	}
	sort.SliceStable(names, func(i, j int) bool {
		if sums[names[i]] != sums[names[j]] {
			return sums[names[i]] > sums[names[j]]
		}
		return names[i] < names[j]
	})
	return names, sums, total
}

func kernelEvidence(s *areaSlice) (string, *evidence.Gap) {
	t := s.ev.Table("kernels")
	if t == nil {
		return "", notCollected("kernels")
	}
	names, sums, total := byName(t, "name", "total_ns")
	if len(names) == 0 || total == 0 {
		if g := s.gapOf(evidence.GapNoGPUEvents); g != nil {
			return "", g
		}
		return "", &evidence.Gap{What: "kernel time", Why: "no GPU kernel in this slice"}
	}
	classes, csums, _ := byName(t, "class", "total_ns")
	var split []string
	for _, c := range classes {
		split = append(split, orDash(c)+" "+fmtPct(float64(csums[c])/float64(total)))
	}
	top := names[0]
	return "Top kernel " + name(findings.KernelName(top)) + ": " + fmtMs(sums[top]) + ", " + share(sums[top], total, "summed kernel time") +
		" (" + s.where + "). By class: " + strings.Join(split, ", ") + ".", nil
}

func opEvidence(s *areaSlice) (string, *evidence.Gap) {
	t := s.ev.Table("ops")
	if t == nil {
		return "", notCollected("ops")
	}
	names, sums, total := byName(t, "name", "self_ns")
	if len(names) == 0 || total == 0 {
		return "", &evidence.Gap{What: "CPU operator time", Why: "the slice holds no CPU operator (cpu_op) events; profile with ProfilerActivity.CPU"}
	}
	// A step annotation or a "## scope ##" range (record_function: the
	// main thread inside backward(), TorchRec's pipeline waits) holds as
	// self time what its thread did outside every operator, a wait or
	// uninstrumented Python: the hotspot is the first name that is an
	// operator, and the ranges ahead of it are named as such.
	top, ranges := names[0], []string(nil)
	isRange := scopeRanges(t)
	for _, n := range names {
		if !isRange(n) {
			top = n
			break
		}
		if len(ranges) < 3 {
			ranges = append(ranges, name(n)+" "+fmtMs(sums[n]))
		}
	}
	// The share is of the operators' self time: a range's is no
	// operator's work (triton_example: ProfilerStep#1's 13,336 ms, stamped
	// past the window, made every operator 0.0%).
	opsTotal := total
	for _, n := range names {
		if isRange(n) && n != top {
			opsTotal -= sums[n]
		}
	}
	text := "Most self time: " + name(top) + ", " + fmtMs(sums[top]) + ", " + share(sums[top], opsTotal, "operators' summed self time") +
		" (" + s.where + ")."
	if len(ranges) > 0 && top != names[0] {
		text += " Ahead of it, ranges whose self time is their thread outside every operator (waiting, or uninstrumented Python): " + strings.Join(ranges, ", ") + "."
	}
	// A blocking runtime call inside an operator (a synchronous copy
	// waiting for the GPU) is that operator's self time too: the host
	// waiting, not CPU work (sglang_qwen3_decode_mi300x: aten::copy_'s
	// 463 ms of self time is one hipMemcpyWithStream).
	if b := blockedIn(s.ev.Table("sync"), top); 2*b >= sums[top] && b > 0 {
		// Named, not "of that": a ranges sentence may stand between
		// (h100_owlv2: the DataLoader's range, which holds no sync).
		text += " Of " + name(top) + "'s self time, up to " + fmtMs(min(b, sums[top])) + " is the host blocked in synchronous runtime calls inside it (waiting for the GPU, not CPU work; see the sync area)."
	} else if calls, longest := opCalls(t, top); calls > 1 && 2*longest >= sums[top] {
		// with_gpu_user_annotation: one aten::empty_strided of 2.194 ms,
		// before the first kernel, holds most of its 2.318 ms.
		text += " One of its " + fmtInt(calls) + " calls took " + fmtMs(longest) + " (inclusive), half its self time or more: that call dominates, most likely a first call's one-time setup (an allocation, autotuning or a compilation; a hypothesis) rather than the loop's per-call cost."
	}
	// A first-use runtime call (module loading, context creation) inside an
	// operator is that operator's self time (amd_mi250_minitoy: a 6.5 ms
	// first hipLaunchKernel in aten::add_, 39% of the self time). A
	// counter capture's calls are no first use: Capture quality lists none
	// (cupti_profiler's 1333 ms cudaFree is the replay's, its sixth).
	if c := s.ev.Table("capture"); c != nil && !counterCapture(s.ev) {
		n, ns, what := countWhere(c, "kind", "first_use")
		if n > 0 && 10*ns >= sums[top] {
			text += " These self times include " + fmtMs(ns) + " in " + plural(n, "first-use runtime call", "first-use runtime calls") + " (e.g. " + name(what) + ") that Capture quality leaves out as one-time costs."
		}
	}
	return text, nil
}

// opCalls is an operator's calls and its longest call (inclusive) in the
// ops area's rows.
func opCalls(t *table.Table, op string) (calls, longest int64) {
	for r := range t.Rows {
		if evidence.Str(t, r, "name") == op {
			calls += evidence.Int(t, r, "count")
			longest = max(longest, evidence.Int(t, r, "max_ns"))
		}
	}
	return calls, longest
}

// copyOps are the operators a synchronous copy runs inside: the sync area
// names the one that triggered it (aten::to), the ops area charges the
// innermost (aten::copy_).
var copyOps = map[string]bool{"aten::copy_": true, "aten::_to_copy": true, "aten::to": true}

// blockedIn sums the host time blocking sync calls spent inside op (edge
// syncs left out).
func blockedIn(t *table.Table, op string) int64 {
	if t == nil {
		return 0
	}
	var ns int64
	for r := range t.Rows {
		if !evidence.Bool(t, r, "blocking") || evidence.Bool(t, r, "edge") {
			continue
		}
		o := evidence.Str(t, r, "op")
		if o == op || (copyOps[op] && copyOps[o] && evidence.Str(t, r, "trigger") == "copy") {
			ns += evidence.Int(t, r, "blocked_ns")
		}
	}
	return ns
}

// scopeRanges tells the ops rows that are ranges, not operators: user
// annotations (the ops area's annotation column: record_function ranges of
// any name, such as a pipeline's "dispatch(F)"), whose self time is their
// thread outside every operator. A bundle without that column falls back to
// the names: a step annotation or a scope written as "## name ##". A gloo
// collective's range (gloo:all_reduce) is no scope: the thread runs the
// collective in it.
func scopeRanges(t *table.Table) func(string) bool {
	ann := map[string]bool{}
	if c := t.Col("annotation"); c >= 0 {
		for r := range t.Rows {
			if b, _ := t.Rows[r][c].(bool); b {
				ann[evidence.Str(t, r, "name")] = true
			}
		}
	}
	return func(n string) bool {
		// A gloo collective's range is the collective itself, run by the
		// thread (cpu_only: gloo:all_reduce, 2,135 ms on two background
		// threads beside 0.004 ms of operators).
		if strings.HasPrefix(n, "gloo:") {
			return false
		}
		return ann[n] || strings.HasPrefix(n, "ProfilerStep#") || (strings.HasPrefix(n, "## ") && strings.HasSuffix(n, " ##"))
	}
}

// singleRankJob: every trace of the slice says its job has one rank.
func singleRankJob(ev *evidence.Evidence) bool {
	ris := evidence.Ranks(ev.Traces)
	for _, ri := range ris {
		if ri.WorldSize != 1 {
			return false
		}
	}
	return len(ris) > 0
}

// rankCount is how many ranks the slice's trace holds and the largest
// world size its distributed info gives (0 when none gives one, or when
// the slice holds several traces).
func rankCount(ev *evidence.Evidence) (n, world int) {
	ris := evidence.Ranks(ev.Traces)
	for _, ri := range ris {
		if ri.Trace != ris[0].Trace {
			return len(ris), 0
		}
		world = max(world, ri.WorldSize)
	}
	return len(ris), world
}

func rankEvidence(s *areaSlice) (string, *evidence.Gap) {
	t := s.ev.Table("ranks")
	if t == nil {
		return "", notCollected("ranks")
	}
	if len(t.Rows) < 2 {
		if g := s.gapOf(evidence.GapSingleRank); g != nil {
			return "", g
		}
		if singleRankJob(s.ev) {
			return "A single-rank job (world size 1 in the trace's distributed info): there is no other rank to compare.", nil
		}
		if n, world := rankCount(s.ev); n == 1 && world == 0 {
			// No single-rank gap: the process communicates with no other
			// (evidence.DetectGaps; h100_owlv2, a single-GPU pipeline).
			return "One process, whose trace states no world size (no distributedInfo, or one without it) and which ran no collective or communication kernel: there is no other rank to compare.", nil
		}
		return "", &evidence.Gap{What: "rank imbalance", Why: "this slice holds " + s.where + " only; a report over all ranks compares them"}
	}
	hiC, loC, hiB, loB := 0, 0, 0, 0
	for r := range t.Rows {
		c, b := evidence.Int(t, r, "compute_ns"), evidence.Int(t, r, "busy_ns")
		if c > evidence.Int(t, hiC, "compute_ns") {
			hiC = r
		}
		if c < evidence.Int(t, loC, "compute_ns") {
			loC = r
		}
		if b > evidence.Int(t, hiB, "busy_ns") {
			hiB = r
		}
		if b < evidence.Int(t, loB, "busy_ns") {
			loB = r
		}
	}
	label := func(r int) string {
		l := "rank " + strconv.FormatInt(evidence.Int(t, r, "rank"), 10)
		if s.ev.Filter.Trace == "" && strings.Contains(s.where, "traces") {
			l += " of " + name(evidence.Str(t, r, "trace"))
		}
		return l
	}
	text := "Across " + strconv.Itoa(len(t.Rows)) + " ranks, compute time runs from " + fmtMs(evidence.Int(t, loC, "compute_ns")) + " (" + label(loC) + ") to " +
		fmtMs(evidence.Int(t, hiC, "compute_ns")) + " (" + label(hiC)
	if evidence.Cell(t, hiC, "compute_vs_median_pct") != nil {
		text += ", " + table.SignedPct(evidence.Float(t, hiC, "compute_vs_median_pct")/100) + " against the median rank of its trace"
	}
	text += "); GPU busy time from " + fmtMs(evidence.Int(t, loB, "busy_ns")) + " (" + label(loB) + ") to " +
		fmtMs(evidence.Int(t, hiB, "busy_ns")) + " (" + label(hiB) + ")."
	text += preWindowCompute(s.ev, t, hiC, label)
	if n, world := rankCount(s.ev); world > n {
		// sampled_2of128: 2 of 128 ranks, each a sample of its events.
		text += " These are " + strconv.Itoa(n) + " of the job's " + strconv.Itoa(world) + " ranks (world size in the trace's distributed info): the others are not in the trace, and a straggler among them cannot show."
	}
	if s.void != "" {
		text += " Read with care: " + s.void + ", so these times are those of the events kept and the difference between ranks may be the sampling's."
	}
	return text, nil
}

// preWindowCompute is the rank imbalance row's sentence on the
// computation launched before the window (the kernels area's
// pre_window_ns of COMP kernels: an iteration queued it before the
// capture began) where the rank with the most compute (hi) has some: that
// rank's lead may be the earlier iteration's tail, so the range is given
// again without it (dlrm_8rank: ranks 1 and 3 hold 0.203 and 0.176 ms of
// step 9's optimizer kernels; without them they are no outlier). "" where
// it has none.
func preWindowCompute(ev *evidence.Evidence, t *table.Table, hi int, label func(int) string) string {
	k := ev.Table("kernels")
	if k == nil || k.Col("pre_window_ns") < 0 {
		return ""
	}
	type rk struct {
		trace string
		rank  int64
	}
	pre := map[rk]int64{}
	for r := range k.Rows {
		if evidence.Str(k, r, "class") == "COMP" {
			pre[rk{evidence.Str(k, r, "trace"), evidence.Int(k, r, "rank")}] += evidence.Int(k, r, "pre_window_ns")
		}
	}
	at := func(r int) rk { return rk{evidence.Str(t, r, "trace"), evidence.Int(t, r, "rank")} }
	if pre[at(hi)] <= 0 {
		return ""
	}
	var held []string
	lo2, hi2 := -1, -1
	own := func(r int) int64 { return max(0, evidence.Int(t, r, "compute_ns")-pre[at(r)]) }
	for r := range t.Rows {
		if p := pre[at(r)]; p > 0 {
			held = append(held, fmtMs(p)+" on "+label(r))
		}
		if lo2 < 0 || own(r) < own(lo2) {
			lo2 = r
		}
		if hi2 < 0 || own(r) > own(hi2) {
			hi2 = r
		}
	}
	verb := " is"
	if n := len(held); n > 1 {
		held[n-2], held, verb = held[n-2]+" and "+held[n-1], held[:n-1], " are"
	}
	return " Of the compute time, " + strings.Join(held, ", ") + verb + " kernels launched before the window (queued by an iteration before the capture began; see Capture quality): without them, compute runs from " +
		fmtMs(own(lo2)) + " (" + label(lo2) + ") to " + fmtMs(own(hi2)) + " (" + label(hi2) + ")."
}

func memcpyEvidence(s *areaSlice) (string, *evidence.Gap) {
	t := s.ev.Table("memcpy")
	if t == nil {
		return "", notCollected("memcpy")
	}
	var n, bytes, unsized, ns, syncN, pageable, blocking int64
	for r := range t.Rows {
		c := evidence.Int(t, r, "count")
		n += c
		if evidence.Int(t, r, "bytes") == 0 {
			// A copy of 0 bytes runs no GPU work: the trace gave no byte
			// count (the preset sums a missing one as 0), a gap, not 0 bytes.
			unsized += c
		}
		bytes += evidence.Int(t, r, "bytes")
		ns += evidence.Int(t, r, "total_ns")
		sync := evidence.Bool(t, r, "sync")
		paged := evidence.Str(t, r, "src") == "Pageable" || evidence.Str(t, r, "dst") == "Pageable"
		if sync {
			syncN += c
		}
		if paged {
			pageable += c
		}
		if sync || paged {
			blocking += c
		}
	}
	if n == 0 {
		if g := s.gapOf(evidence.GapNoGPUEvents); g != nil {
			return "", g
		}
		text := "No GPU copy or memset event (" + s.where + ")."
		// Transfers a device writes as kernels (MTIA's dma_request) are
		// memory all the same: the kernels area counts them.
		if k := s.ev.Table("kernels"); k != nil {
			dn, dns, name := countWhere(k, "class", "MEM")
			if dn > 0 {
				text += " " + plural(dn, "device transfer", "device transfers") + " written as kernels (" + name + ", " + fmtMs(dns) + ") count as memory in GPU kernel hotspots."
			}
		}
		return text, nil
	}
	moved := " moved " + fmtInt(bytes) + " bytes"
	switch {
	case unsized == n:
		moved = " (the trace gives no byte count) ran"
	case unsized > 0:
		moved = " moved at least " + fmtInt(bytes) + " bytes (" + fmtInt(unsized) + " without a byte count)"
	}
	// A copy to or from pageable memory blocks its call as a synchronous
	// one does, Async or not (the driver stages it through a pinned
	// buffer): trace_diff_control_a100's 60 DtoH copies from Async calls
	// blocked the host for 75.7 ms.
	blocks := fmtInt(blocking) + " blocked the host: " + fmtInt(syncN) + " from synchronous calls, " + fmtInt(pageable) + " to or from pageable host memory (which blocks an Async call too)."
	if blocking == 0 {
		blocks = "none blocked the host (no synchronous call, no pageable host memory)."
	}
	hidden := s.gapOf(evidence.GapMemoryKindHidden)
	if hidden != nil && pageable == 0 {
		// The names do not record the memory kind (ROCm's "Host -> Device"):
		// no pageable copy is unknown, not none.
		blocks = fmtInt(syncN) + " from synchronous calls; pageable or pinned host memory unknown."
	}
	text := plural(n, "copy or memset", "copies and memsets") + moved + " in " + fmtMs(ns) + " of GPU time (" + s.where + "; " +
		share(ns, s.spans.busy, "GPU busy time") + "); " + blocks
	return text, hidden
}

func stepEvidence(s *areaSlice) (string, *evidence.Gap) {
	t := s.ev.Table("steps")
	if t == nil {
		return "", notCollected("steps")
	}
	if len(t.Rows) == 0 {
		if g := s.gapOf(evidence.GapNoSteps); g != nil {
			return "", g
		}
		return "", &evidence.Gap{What: "per-step evidence", Why: "no step in this slice"}
	}
	walls, busies := map[string][]int64{}, map[string][]int64{}
	var phases []string
	var total, busy, behind, empty int64
	// Steps without GPU work (a profiler's stub step) are left out of the
	// medians, as the step chart leaves them, when other steps ran some.
	hasGPU := t.Col("gpu_events") >= 0
	worked := false
	for r := range t.Rows {
		worked = worked || evidence.Int(t, r, "gpu_events") > 0
	}
	inferred := false
	// The phase is the steps preset's: a ProfilerStep# loop that does not
	// train is inference there (sql/evidence_base.sql).
	for r := range t.Rows {
		p := orDash(evidence.Str(t, r, "phase"))
		w := evidence.Int(t, r, "wall_ns")
		if hasGPU && worked && evidence.Int(t, r, "gpu_events") == 0 {
			empty++
			total += w
			continue
		}
		if _, ok := walls[p]; !ok {
			phases = append(phases, p)
		}
		walls[p] = append(walls[p], w)
		if t.Col("gpu_busy_ns") >= 0 {
			busies[p] = append(busies[p], evidence.Int(t, r, "gpu_busy_ns"))
		}
		total += w
		inferred = inferred || evidence.Bool(t, r, "hypothesis")
		// A step is its host annotation; its GPU work can run long after
		// (vLLM enqueues a step's kernels and returns).
		if b := evidence.Int(t, r, "gpu_busy_ns"); b > w {
			busy += b
			behind++
		}
	}
	sort.Strings(phases)
	var parts []string
	for _, p := range phases {
		ws := walls[p]
		var sum int64
		for _, w := range ws {
			sum += w
		}
		label := p
		if p == "unknown" {
			label = "of unknown phase"
		}
		// A wall far above the GPU's busy time is no measure of the step's
		// GPU work (sglang_qwen3_decode: a 466 ms decode step whose GPU
		// was busy 9.8 ms, its host held in a copy behind work the trace
		// does not show): the row says so beside the median.
		med := "median wall " + fmtMs(medianInt(ws))
		if bs := busies[p]; worked && len(bs) == len(ws) && 2*medianInt(bs) < medianInt(ws) {
			med += ", median GPU busy " + fmtMs(medianInt(bs))
		}
		// The phase's share of the step time comes before the medians:
		// after "median GPU busy 11.596 ms" it read as the GPU's share
		// (b200_eager: "11.596 ms, 100.0% of the 87.413 ms step time").
		// One phase is all of the step time: its total, not "100.0%".
		of := share(sum, total, "step time")
		if len(phases) == 1 {
			of = fmtMs(sum) + " in all"
		}
		parts = append(parts, fmtInt(int64(len(ws)))+" "+label+", "+of+" ("+med+")")
	}
	text := plural(int64(len(t.Rows)), "step", "steps") + " (" + s.where + "): " + strings.Join(parts, "; ") + "."
	if empty > 0 {
		text += " " + plural(empty, "step", "steps") + " without GPU work left out of the medians."
	}
	if behind > 0 {
		// resnet_2080ti's steps are inferred (each ends at an optimizer
		// step): they are host times all the same, not annotations.
		source := "the host's annotations"
		if inferred {
			source = "host times"
		}
		text += " Step times are " + source + ": " + plural(behind, "step's", "steps'") + " GPU work took longer than the step (" +
			fmtMs(busy) + " of GPU busy time), running after the host moved on."
	}
	// sglang_qwen3_decode_mi300x: 463 ms of its one step's 466 ms wall is
	// a copy call held waiting for the batch before the capture.
	if c := s.ev.Table("capture"); c != nil && total > 0 {
		if _, held, _ := countWhere(c, "kind", "held_wait"); 2*held >= total {
			text += " Up to " + fmtMs(min(held, total)) + " of that wall time is host calls held waiting on work the trace does not show (see Capture quality), not the steps' own work."
		}
	}
	if inferred {
		text += " Steps or phases are inferred, not annotated."
	}
	return text, nil
}

// plural is "1 call" or "3 calls".
func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmtInt(n) + " " + many
}

func medianInt(xs []int64) int64 {
	c := append([]int64(nil), xs...)
	sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
	if len(c) == 0 {
		return 0
	}
	if len(c)%2 == 1 {
		return c[len(c)/2]
	}
	return (c[len(c)/2-1] + c[len(c)/2]) / 2
}

// streamIdle is HTA's per-stream idle split, for the stream with the most
// gaps (the one the work runs on); deviceIdle is the slice's GPU idle time
// (every stream idle at once). A stream that runs a few kernels a step
// (vllm_h100: stream 171, 10 all-gathers, 0.24 ms busy) idles through the
// whole step between them, and HTA names each of those gaps host_wait:
// summed with the main stream's, they would swamp its split, so the other
// streams' idle is given apart.
func streamIdle(t *table.Table, deviceIdle int64) string {
	if t.Col("stream") < 0 {
		return ""
	}
	gaps, idle := map[int64]int64{}, map[int64]int64{}
	var streams []int64
	for r := range t.Rows {
		st := evidence.Int(t, r, "stream")
		if _, ok := gaps[st]; !ok {
			streams = append(streams, st)
		}
		gaps[st] += evidence.Int(t, r, "count")
		idle[st] += evidence.Int(t, r, "idle_ns")
	}
	if len(streams) == 0 {
		return ""
	}
	sort.Slice(streams, func(i, j int) bool {
		if gaps[streams[i]] != gaps[streams[j]] {
			return gaps[streams[i]] > gaps[streams[j]]
		}
		return streams[i] < streams[j]
	})
	main := streams[0]
	var split []string
	cats := map[string]int64{}
	var names []string
	for r := range t.Rows {
		if evidence.Int(t, r, "stream") != main {
			continue
		}
		c := evidence.Str(t, r, "category")
		if _, ok := cats[c]; !ok {
			names = append(names, c)
		}
		cats[c] += evidence.Int(t, r, "idle_ns")
	}
	sort.SliceStable(names, func(i, j int) bool { return cats[names[i]] > cats[names[j]] })
	if idle[main] <= 0 {
		return ""
	}
	for _, c := range names {
		split = append(split, orDash(c)+" "+fmtPct(float64(cats[c])/float64(idle[main])))
	}
	which := " (" + plural(gaps[main], "gap", "gaps") + ")"
	if len(streams) > 1 {
		which = ", the one with the most gaps (" + fmtInt(gaps[main]) + ")"
	}
	out := " Per-stream idle (HTA's split, each stream apart; its kernel_wait is a gap under 30 µs, the default its code applies to its µs timestamps) on stream " + strconv.FormatInt(main, 10) + which + ": " +
		fmtMs(idle[main]) + ", " + strings.Join(split, ", ") + "."
	if len(streams) > 1 {
		var rest, restGaps int64
		for _, st := range streams[1:] {
			rest += idle[st]
			restGaps += gaps[st]
		}
		others := "The other stream idles "
		if len(streams) > 2 {
			others = "The other " + strconv.Itoa(len(streams)-1) + " streams idle "
		}
		out += " " + others + fmtMs(rest) + " more in " + plural(restGaps, "gap", "gaps") +
			", each stream counted apart: a stream's gap is GPU idle only where every other stream idles too, which the GPU idle above (" +
			fmtMs(deviceIdle) + ") counts."
	}
	return out
}

// excludedIdle is the GPU idle time inside what Capture quality leaves out
// (start-up, work held by what the trace does not show): the capture area's
// excluded rows.
func excludedIdle(ev *evidence.Evidence) int64 {
	t := ev.Table("capture")
	if t == nil {
		return 0
	}
	var out int64
	for r := range t.Rows {
		if evidence.Str(t, r, "kind") == "excluded" {
			out += evidence.Int(t, r, "idle_ns")
		}
	}
	return out
}

func idleEvidence(s *areaSlice) (string, *evidence.Gap) {
	if s.ev.Table("ranks") == nil {
		return "", notCollected("ranks")
	}
	if s.spans.span == 0 {
		if g := s.gapOf(evidence.GapNoGPUEvents); g != nil {
			return "", g
		}
		return "", &evidence.Gap{What: "GPU idle time", Why: "no GPU activity in this slice"}
	}
	text := "GPU idle " + fmtMs(s.spans.idle) + ", " + share(s.spans.idle, s.spans.span, "GPU span") + " (" + s.where + ")."
	if t := s.ev.Table("gaps"); t != nil {
		text += streamIdle(t, s.spans.idle)
	}
	// HTA's per-stream test names a gap by the launch that ends it: the
	// idle that Capture quality leaves out (start-up, work held by what the
	// trace does not show) reads as host_wait there (sglang_qwen3_decode:
	// 463 ms held by a cross-stream dependency, 99.9% "host_wait").
	if out := excludedIdle(s.ev); out > 0 && !findings.Sampled(s.ev) {
		if 10*out >= s.spans.idle {
			text += " " + fmtMs(out) + " of the idle lies in what Capture quality leaves out (start-up, work held by what the trace does not show), which the per-stream split counts by the launch that ends it."
		}
	}
	return text, s.gapOf(evidence.GapNoSyncEvents)
}

func launchEvidence(s *areaSlice) (string, *evidence.Gap) {
	t := s.ev.Table("launch")
	if t == nil || len(t.Rows) == 0 {
		return "", nil // shown only where collected
	}
	// Copy and memset calls count among HTA's launches, but a blocking
	// copy's time is a wait (resnet_2080ti: 123 pageable copies, 2010 ms,
	// beside 946 ms of kernel launches): they are given apart.
	var n, cpu, longest, copies, copyCPU, short, late, withGPU int64
	for r := range t.Rows {
		call := strings.ToLower(evidence.Str(t, r, "call"))
		if strings.Contains(call, "memcpy") || strings.Contains(call, "memset") {
			copies += evidence.Int(t, r, "launches")
			copyCPU += evidence.Int(t, r, "cpu_ns")
		} else {
			n += evidence.Int(t, r, "launches")
			cpu += evidence.Int(t, r, "cpu_ns")
			longest = max(longest, evidence.Int(t, r, "max_cpu_ns"))
		}
		short += evidence.Int(t, r, "short")
		late += evidence.Int(t, r, "delay_outliers")
		withGPU += evidence.Int(t, r, "with_gpu")
	}
	if n+copies == 0 {
		return "", nil
	}
	text := plural(n, "kernel launch", "kernel launches")
	if n > 1 && 2*longest >= cpu {
		// resnet_2080ti: one 726 ms first launch in 946 ms over 9,628
		// calls; the mean of the others is the loop's.
		text += " took " + fmtMs(cpu) + " of host time (" + s.where + "), " + fmtMs(longest) + " of it in the longest call alone: the others' mean is " + fmtMs((cpu-longest)/(n-1))
	} else if n > 0 {
		text += " took " + fmtMs(cpu) + " of host time (mean " + fmtMs(cpu/n) + ", " + s.where + ")"
	} else {
		text += " (" + s.where + ")"
	}
	if copies > 0 {
		text += "; " + plural(copies, "copy or memset call", "copy and memset calls") + " took " + fmtMs(copyCPU) + " more (a blocking one's time is a wait: see Synchronization waits and Memory copies)"
	}
	// Short launches are counted among the calls whose GPU work is in the
	// trace, copies included as in HTA's launch statistics (the launch-bound
	// finding's denominator too).
	of := " of the " + fmtInt(withGPU) + " calls whose GPU work is in the trace"
	if t.Col("with_gpu") < 0 {
		of = ""
	} else if withGPU == 0 {
		// Nothing to time a launch against (cupti_profiler: a counter
		// capture records no kernel).
		return text + "; no call's GPU work is in the trace, so no launch is timed against its work.", nil
	}
	return text + "; " + fmtInt(short) + of + " launched GPU work shorter than the launch call; " + fmtInt(late) + " started over 100 µs after their call returned.", nil
}

func overlapEvidence(s *areaSlice) (string, *evidence.Gap) {
	t := s.ev.Table("overlap")
	if t == nil || len(t.Rows) == 0 {
		return "", nil // shown only where collected
	}
	var comm, over int64
	for r := range t.Rows {
		comm += evidence.Int(t, r, "comm_ns")
		over += evidence.Int(t, r, "overlap_ns")
	}
	if comm == 0 {
		return "No communication kernel (" + s.where + ").", nil
	}
	return fmtMs(comm) + " of communication kernels (" + s.where + "), " + fmtPct(float64(over)/float64(comm)) +
		" of it overlapped by computation.", nil
}

// countWhere sums count and total_ns over the rows of t whose col is
// value, with the first such row's name.
func countWhere(t *table.Table, col, value string) (n, ns int64, name string) {
	for r := range t.Rows {
		if evidence.Str(t, r, col) == value {
			n += evidence.Int(t, r, "count")
			ns += evidence.Int(t, r, "total_ns")
			if name == "" {
				name = evidence.Str(t, r, "name")
			}
		}
	}
	return n, ns, name
}
