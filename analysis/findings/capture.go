package findings

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/table"
)

// The capture-quality gate runs before any rule. It reads the capture area
// (sql/capture.sql: first-use calls, warm-up, work held by work the window
// does not show, graph capture, counter replay, clock skew, edge syncs) and
// the ranks' sizes, and for each rank it
//   - names each artifact with its evidence (Gate.Artifacts, shown by the
//     report under "Capture quality");
//   - cuts the slice the rules judge: the GPU idle time inside start-up and
//     held intervals leaves both the idle time and the span (steady);
//   - caps the confidence of the findings an artifact could explain
//     (limits): a capped finding is at most a hypothesis, or, where the
//     capture cannot show steady state at all, a minor one, with a Caveat
//     that says why.

// Gate thresholds (our choices; each cap says why in the report).
const (
	// MinGPUEvents: fewer GPU events (operations: kernels, copies and
	// memsets, the ranks area's events; device-side sync records are not
	// GPU work) than this on a rank is too little to judge steady state.
	MinGPUEvents = 50
	// MinGPUSpanNs: a GPU span shorter than this is too short to judge.
	MinGPUSpanNs = 1_000_000
	// SampledIDsPerOp: a rank of at least SampledMinOps CPU operators with
	// an External id whose ids range over this many per operator or more
	// holds a sample of its events (the profiler numbers every operator it
	// records): the 34 complete shared traces range over 1.00-1.36 ids
	// per operator with 200 or more, HTA's trace-filter sample
	// (sampled_2of128) over 74.
	SampledIDsPerOp = 10
	SampledMinOps   = 200
	// ExcerptMinMissing, ExcerptMissingShare: a rank whose files lack at
	// least this many of the Ev Idx numbers up to their highest, and at
	// least this share of the numbers they hold, is an excerpt of a longer
	// trace (the overview area's index_missing). The 24 complete shared
	// traces that carry Ev Idx lack none; the excerpts lack from 5,272
	// (vllm_prefilldecode_piecewise_mi300x, 643 held) to 1,414,018.
	ExcerptMinMissing   = 100
	ExcerptMissingShare = 0.1
	// ExcludedIdleCap: when start-up and held intervals hold at least this
	// share of a rank's GPU idle time, what remains is a short slice and its
	// verdicts are hypotheses.
	ExcludedIdleCap = 0.5
	// ExcludedSpanCap, ExcludedMinSteps: when the GPU idle inside start-up
	// and held intervals is at least this share of a rank's GPU span, and
	// the rank has fewer steps than this (none: no telling how many
	// iterations the rest holds), the window shows little of the loop: no
	// finding is critical.
	ExcludedSpanCap  = 0.9
	ExcludedMinSteps = 3
	// CaptureSpanCap: a graph capture covering at least this share of the
	// GPU span makes the window a start-up capture.
	CaptureSpanCap = 0.5
	// SkewMinCount, SkewMinNs: GPU work stamped before its launch call this
	// often, or by this much, makes the launch-order tests unreliable.
	SkewMinCount = 10
	SkewMinNs    = 50_000
	// HeldMinIdleNs: held work is reported when the device idled this long
	// while it waited.
	HeldMinIdleNs = 1_000_000
	// HeldMinShare: ... and this share of the rank's GPU idle time.
	HeldMinShare = 0.05
	// HeldAtStartNs: a host call that waited for work the trace does not
	// show, begun this close to the trace's first event, waited for work
	// launched before the capture began (most likely).
	HeldAtStartNs = 1_000_000
	// HeldStepsMax: such a wait longer than this many times the GPU busy
	// time of the rank's longest step is more than the rest of one clipped
	// step (our choice: a step's GPU work, at most its busy time, and as
	// much again for a step launched behind it).
	HeldStepsMax = 2
)

// Artifact is one capture artifact of one rank.
type Artifact struct {
	Trace  string
	Rank   int
	Kind   string // the capture area's kind
	Title  string // what it is
	Detail string // its numbers, with their context
	IdleNs int64  // device-level GPU idle time inside it
	// Recurs: held work that leaves the GPU idle in most of the rank's
	// steps (RecurMinSteps or more): the loop's own stall, not a one-off.
	Recurs       bool
	Steps, OfAll int64 // the steps that hold it, of the rank's steps
	// PrevBatch: held work at the capture's start under SGLang's overlap
	// scheduler, most likely the previous batch the trace does not show.
	PrevBatch bool
	// GraphIdleNs: of held work's idle, the part that ends at a node of a
	// CUDA/HIP graph replay (the capture area's held_graph), set where it
	// is half or more: the replays ran or waited on what the trace does
	// not record.
	GraphIdleNs int64
}

// RecurMinSteps is the fewest steps held work must stall, and 4 in 5 of the
// rank's steps, before the stall is read as the loop's own (our choice: two
// could be warm-up and one more).
const RecurMinSteps = 3

// Gate is the capture-quality verdict of every rank in the evidence.
type Gate struct {
	Artifacts []Artifact
	ranks     map[string]*rankGate
}

// ExcludedIdle is the GPU idle time of one rank inside start-up and held
// intervals, which the rules leave out of the span they judge.
func (g *Gate) ExcludedIdle(trace string, rank int) int64 {
	if g != nil {
		if rg := g.ranks[key(trace, rank)]; rg != nil {
			return rg.excludedIdle
		}
	}
	return 0
}

// rankGate is what the gate decided for one rank.
type rankGate struct {
	span          int64    // GPU span
	excludedIdle  int64    // GPU idle inside start-up and held intervals
	loaderStartNs int64    // the DataLoader's first batch when its workers start up
	loaderStartAt [2]int64 // its first start and last end
	preWindowN    int64    // GPU operations launched before the window
	preWindowNs   int64    // and their GPU time
	limits        []limit
}

// limit caps the findings of some rules on a rank.
type limit struct {
	drop  bool // the capture cannot support a timing finding at all
	minor bool // no finding may be critical
	// unread: the window is no run of the workload at all (a counter
	// capture, a graph capture): no host/device reading (NoReading).
	unread bool
	rules  map[string]bool // nil: every rule
	why    string
	// recapture, for a limit that drops every finding: what to capture
	// instead, so that a lever can be named (Void).
	recapture string
}

// Assess runs the gate over ev.
func Assess(ev *evidence.Evidence) *Gate {
	g := &Gate{ranks: map[string]*rankGate{}}
	c := newCtx(ev, nil)
	rank := func(trace string, r int) *rankGate {
		k := key(trace, r)
		if g.ranks[k] == nil {
			g.ranks[k] = &rankGate{}
		}
		return g.ranks[k]
	}
	add := func(a Artifact) { g.Artifacts = append(g.Artifacts, a) }

	type row struct {
		kind, name                        string
		count, total, max, idle, spanPart int64
		first, last, steps                int64
	}
	perRank := map[string]map[string]row{}
	if t := ev.Table("capture"); t != nil {
		for r := range t.Rows {
			k := key(evidence.Str(t, r, "trace"), int(evidence.Int(t, r, "rank")))
			if perRank[k] == nil {
				perRank[k] = map[string]row{}
			}
			kind := evidence.Str(t, r, "kind")
			x := perRank[k][kind]
			// Rows of one kind merge here when several names rolled up.
			if evidence.Int(t, r, "max_ns") >= x.max {
				x.name, x.max = evidence.Str(t, r, "name"), evidence.Int(t, r, "max_ns")
			}
			x.kind = kind
			x.count += evidence.Int(t, r, "count")
			x.total += evidence.Int(t, r, "total_ns")
			x.idle += evidence.Int(t, r, "idle_ns")
			x.spanPart += evidence.Int(t, r, "span_ns")
			x.steps += evidence.Int(t, r, "steps")
			x.first, x.last = evidence.Int(t, r, "first_ns"), evidence.Int(t, r, "last_ns")
			perRank[k][kind] = x
		}
	}

	// Every rank the evidence knows, with or without GPU work.
	all := append([]rankRow(nil), c.ranks...)
	seen := map[string]bool{}
	for _, rr := range c.ranks {
		seen[key(rr.trace, rr.rank)] = true
	}
	for _, ri := range c.info {
		if k := key(ri.Trace, ri.Rank); !seen[k] && (c.ev.Filter.Trace == "" || ri.Trace == c.ev.Filter.Trace) &&
			(!c.ev.Filter.HasRank || ri.Rank == c.ev.Filter.Rank) {
			seen[k] = true
			all = append(all, rankRow{trace: ri.Trace, rank: ri.Rank})
		}
	}
	sort.Slice(all, func(i, j int) bool {
		return all[i].trace < all[j].trace || (all[i].trace == all[j].trace && all[i].rank < all[j].rank)
	})
	for _, rr := range all {
		rg := rank(rr.trace, rr.rank)
		span := rr.busy + rr.idle
		rg.span = span
		where := c.where(rr.trace, rr.rank)
		rows := perRank[key(rr.trace, rr.rank)]
		ri := c.rankInfo(rr.trace, rr.rank)

		counter := false // a CUPTI counter capture: no duration is a reading
		if cr, ok := rows["counter_range"]; ok {
			add(Artifact{Trace: rr.trace, Rank: rr.rank, Kind: "counter_range", Title: "CUPTI counter capture: the timings are synthetic",
				Detail: fmt.Sprintf("%d cuda_profiler_range events (%s): the range profiler replays each kernel and writes evenly spaced timestamps, so no duration, utilisation or idle time in this trace is real, and no first-use, first-call or held reading is made from them.", cr.count, where)})
			rg.limits = append(rg.limits, limit{drop: true, unread: true, why: "the trace is a CUPTI counter capture (cuda_profiler_range events): its timings are synthetic",
				recapture: "The host operators' times are no reading either: the range profiler replays each kernel inside its launching call. Capture the workload again with torch.profiler's CPU and CUDA activities and no counter collection to see the next lever."})
			// The artifacts read from durations would give causes for what
			// the replay made (cupti_profiler: a 1333 ms cudaFree, its
			// sixth, read as first use): none is listed.
			for _, kind := range []string{"first_use", "first_copy", "upload", "first_op", "loader_start", "profiler_overhead", "warmup_step", "held", "held_wait", "clock_skew", "late_start"} {
				delete(rows, kind)
			}
			counter = true
		}
		if n, ids, sampled := sampledRank(ev, rr.trace, rr.rank); sampled {
			add(Artifact{Trace: rr.trace, Rank: rr.rank, Kind: "sampled", Title: "A sample of the events: most were dropped",
				Detail: fmt.Sprintf("Its %d CPU operators with an External id range over %d ids (%s): the profiler numbers every operator it records, so the trace holds about one in %d of them, their launches and kernels missing with them, as in a sampled or filtered trace. The gaps between the events kept are no idle time, and no busy, overlap or wait time is the workload's.", n, ids, where, ids/n)})
			rg.limits = append(rg.limits, limit{drop: true, unread: true, why: fmt.Sprintf("the trace holds about one in %d of the rank's events (a sampled or filtered trace)", ids/n),
				recapture: "Load the trace as the profiler wrote it, before a tool sampled or filtered its events, or capture a few steps again with torch.profiler's CPU and CUDA activities to see the next lever."})
			// The artifacts read from GPU idle gaps would give causes for
			// gaps the sampling made (sampled_2of128: "the device had the
			// work and did not run it"): none is listed.
			for _, kind := range []string{"held", "held_wait", "late_start"} {
				delete(rows, kind)
			}
		}
		var excerptBefore int64 // events cut away before the file's first (an excerpt)
		if held, missing, before, ok := excerptRank(ev, rr.trace, rr.rank); ok && !sampledOnRank(ev, rr.trace, rr.rank) {
			excerptBefore = before
			numbers := fmt.Sprintf("PyTorch numbers every event it hands the profiler's trace from 0 (Ev Idx; python frames apart), and the rank's file holds %s of the numbers up to its highest (%s)", table.Int(held), where)
			a := Artifact{Trace: rr.trace, Rank: rr.rank, Kind: "excerpt"}
			switch {
			case before == 0:
				// cpu_only: numbers 0-5 and 7470-7478 held, the main
				// thread's operators between them removed.
				a.Title = "A filtered trace: events the profiler recorded are missing"
				a.Detail = fmt.Sprintf("%s: %s of them are missing between its events, and its first numbers are there, so the file was not cut at the start: a tool removed events from inside it. Every total and share in this report covers the events kept.", numbers, table.Int(missing))
			default:
				lacks := fmt.Sprintf("the %s before its first event are missing", table.Int(before))
				if missing > before {
					lacks = fmt.Sprintf("%s are missing, %s of them before its first event", table.Int(missing), table.Int(before))
				}
				a.Title = "An excerpt of a longer trace: events the profiler recorded are missing"
				a.Detail = fmt.Sprintf("%s: %s, so the file was cut from a longer trace. Every total and share in this report covers the excerpt only; a call or kernel read as the first is the first the excerpt holds, and work at its start may wait on work the cut removed.", numbers, lacks)
			}
			add(a)
		}
		gpuEvents := rr.evs
		if span > 0 && ((gpuEvents > 0 && gpuEvents < MinGPUEvents) || span < MinGPUSpanNs) {
			events := fmt.Sprintf("%d GPU events", gpuEvents)
			if gpuEvents == 1 {
				events = "1 GPU event"
			}
			add(Artifact{Trace: rr.trace, Rank: rr.rank, Kind: "too_short", Title: "Too little GPU work to judge steady state",
				Detail: fmt.Sprintf("%s over a GPU span of %s (%s): a verdict needs at least %d events and %s of GPU span.", events, ms(span), where, MinGPUEvents, ms(MinGPUSpanNs))})
			// One GPU operation is busy over its whole span by definition:
			// the host and the device have nothing to be read against.
			rg.limits = append(rg.limits, limit{minor: true, unread: gpuEvents == 1,
				why: fmt.Sprintf("only %s over %s: too little to judge steady state", events, ms(span))})
		}
		platform := evidence.PlatformOf(ev.Traces, rr.trace, rr.rank)
		captureWindow := false // the window is a graph capture, not the loop
		var prevBatch int64    // GPU idle held by SGLang's previous batch at the capture's start
		if gc, ok := rows["graph_capture"]; ok {
			share := 0.0
			if span > 0 {
				share = float64(gc.spanPart) / float64(span)
			}
			graph := evidence.GraphNoun(platform)
			add(Artifact{Trace: rr.trace, Rank: rr.rank, Kind: "graph_capture", Title: graph + " capture: start-up, not steady state",
				Detail: fmt.Sprintf("%d capture calls and annotations (e.g. %s) span %s, %s of the GPU span (%s); captured work is recorded, not executed, and serving engines capture at start-up.", gc.count, gc.name, ms(gc.last-gc.first), pct(share), where)})
			loop, loopNoun := profileTheLoop+" once start-up is done", "loop"
			if ri.Serving() {
				loopNoun = "serving loop"
			}
			if ri.Producer == "vllm" {
				// ANCHORS.md §7.1: the server's profiler endpoints.
				loop = profileTheLoop + " once the engine is up (vLLM, started with its profiler configured, --profiler-config or VLLM_TORCH_PROFILER_DIR before v0.13: /start_profile and /stop_profile around requests, or vllm bench serve --profile)"
			}
			l := limit{minor: true, unread: true, why: "the window holds a " + graph + " capture (start-up), not the " + loopNoun + ": " + loop}
			if share < CaptureSpanCap {
				l = limit{rules: idleRules(), why: "part of the window is a " + graph + " capture (start-up)"}
			} else {
				captureWindow = true
			}
			rg.limits = append(rg.limits, l)
		}
		if ls, ok := rows["loader_start"]; ok {
			rg.loaderStartNs, rg.loaderStartAt = ls.total, [2]int64{ls.first, ls.last}
		}
		if pw, ok := rows["pre_window"]; ok {
			rg.preWindowN, rg.preWindowNs = pw.count, pw.total
		}
		for _, kind := range []string{"first_use", "first_copy", "upload", "first_op", "loader_start", "profiler_overhead", "warmup", "warmup_step", "harness", "held", "pre_window"} {
			x, ok := rows[kind]
			if !ok || (kind == "held" && (x.idle < HeldMinIdleNs || float64(x.idle) < HeldMinShare*float64(rr.idle))) {
				continue // work that waited in a busy queue is not an artifact
			}
			if kind == "profiler_overhead" && x.idle < HeldMinIdleNs {
				continue // the profiler's buffer flushes while the GPU ran: nothing to leave out
			}
			a := artifactOf(rr.trace, rr.rank, where, x.count, x.total, x.max, x.idle, x.name, kind)
			if kind == "warmup" && counter {
				// cupti_profiler: its warm-up forward "took" 6970 ms of
				// kernel replays; the ranges are named, their time is not.
				a.Detail = fmt.Sprintf("%d %s whose name says warm-up, e.g. %s (%s); their durations are the counter replay's, not the workload's.", x.count, noun(x.count, "range", "ranges"), x.name, where)
			}
			if kind == "harness" && counter {
				a.Detail = fmt.Sprintf("%d %s %s (%s): PARAM's operator benchmark clearing the cache before a measured run, not the measured model's work; their durations are the counter replay's.", x.count, x.name, noun(x.count, "range", "ranges"), where)
			}
			if kind == "held" && x.first < HeldAtStartNs && sglangOverlap(ev, ri, rr.trace, rr.rank) {
				// sglang_qwen3_prefilldecode_mi300x: the 493 ms before the
				// first step's own work is the previous batch's (held_wait
				// below reads the same); so is sglang_qwen3_decode_mi300x's
				// 463 ms before its first decode step, the batch before it
				// a 32k-token prefill that no decode step bounds.
				a.Detail += " SGLang's overlap scheduler is on and the first such interval begins at the capture's start: the device was most likely running the previous batch, launched before the capture on the same stream, which the trace does not show; that time is not idle in the run."
				a.PrevBatch = true
				prevBatch = x.idle
			}
			// Held work that ends at graph replays' nodes, half of the held
			// idle or more (negative_queue_length_a100: 616 of 664 ms, each
			// step's replays of the compiled backward starting up to 64 ms
			// after the work before them ended).
			hg, hasGraph := rows["held_graph"]
			inGraph := kind == "held" && hasGraph && hg.idle > 0 && 2*hg.idle >= x.idle
			if inGraph {
				a.GraphIdleNs = hg.idle
				a.Detail += fmt.Sprintf(" %s of it (%s, %d of the %d intervals) ends at a node of a %s replay, whose launch call returned long before: the replay ran nodes the trace does not record there, or waited on a dependency before or inside the graph; the trace shows neither.",
					ms(hg.idle), pct(float64(hg.idle)/float64(x.idle)), hg.count, x.count, evidence.GraphNoun(platform))
				if gpu, span := replaySpans(ev, rr.trace, rr.rank); span > 0 {
					a.Detail += fmt.Sprintf(" Inside the replays, the nodes the trace records ran %s of GPU work over %s, from each replay's first recorded node to its last (the graphs area's gpu_ns and span_ns).", ms(gpu), ms(span))
				}
			}
			if kind == "held" && x.steps >= RecurMinSteps && 5*x.steps >= 4*rr.steps {
				a.Recurs, a.Steps, a.OfAll = true, x.steps, rr.steps
				a.Title = "GPU idle with launched work waiting, step after step (a dependency, or work the trace does not show)"
				graphs := ""
				if inGraph {
					graphs = "; to see what the replays run there, " + graphsOffAdvice(ev, rr.trace, rr.rank, platform)
				}
				a.Detail += fmt.Sprintf(" It recurs: %d of the rank's %d steps hold 1 ms or more of it at once, so it belongs to the loop, not to a one-off of the capture, and the trace does not show whether the device waited (and for what) or ran work it did not record: %s%s, and profile every rank and process that shares the GPU.", x.steps, rr.steps, syncEventsAdvice(platform), graphs)
			}
			add(a)
		}
		if ex, ok := rows["excluded"]; ok && rr.idle > 0 {
			rg.excludedIdle = min(ex.idle, rr.idle)
			if share := float64(rg.excludedIdle) / float64(rr.idle); share >= ExcludedIdleCap {
				rg.limits = append(rg.limits, limit{rules: idleRules(),
					why: fmt.Sprintf("%s of the GPU idle time (%s of %s) lies in start-up or held intervals; the rules judge the remaining %s of GPU span, a short slice",
						pct(share), ms(rg.excludedIdle), ms(rr.idle), ms(span-rg.excludedIdle))})
			}
			if span > 0 && float64(rg.excludedIdle) >= ExcludedSpanCap*float64(span) && rr.steps < ExcludedMinSteps {
				advice := "; " + profileMore + " after warm-up"
				if captureWindow {
					advice = "" // the graph capture's limit says what to profile instead
				}
				if _, ok := rows["harness"]; ok && !captureWindow {
					// critical_path_alexnet: PARAM's harness empties the
					// cache before each measured run, whose allocations
					// go through cudaMalloc again: more of its runs
					// repeat that, not the loop.
					advice = "; " + profileWarm + " (no empty_cache between them): the harness empties the caching allocator before each measured run (see Capture quality), so each of its measured runs allocates through cudaMalloc again"
				}
				what := "is idle inside start-up or held intervals"
				if 10*prevBatch >= 9*rg.excludedIdle {
					// sglang_qwen3_decode_mi300x: 463 ms held by the batch
					// before the window, a 32k-token prefill.
					what, advice = "is held at the capture's start, most likely by SGLang's previous batch (its overlap scheduler)", "; "+profileMore+", so that the batch before the window is a small part of it"
				}
				rg.limits = append(rg.limits, limit{minor: true,
					why: fmt.Sprintf("%s of the GPU span (%s of %s) %s, and the rest holds fewer than %d steps: the window shows little of the loop's own work%s",
						pct(float64(rg.excludedIdle)/float64(span)), ms(rg.excludedIdle), ms(span), what, ExcludedMinSteps, advice)})
			}
		}
		if pw, ok := rows["past_window"]; ok {
			add(Artifact{Trace: rr.trace, Rank: rr.rank, Kind: "past_window", Title: "Annotations that end after the profiler stopped: their end is not a reading",
				Detail: fmt.Sprintf("%d %s after the trace's Record Window End marker, which the profiler writes once it has stopped, after everything it recorded; the longest, %s, lasts %s (%s): an end stamped late, of a range still open when the profiler stopped or by an exporter's error. A step among them, and the trace's time span, end at the marker.",
					pw.count, noun(pw.count, "annotation or operator ends", "annotations or operators end"), pw.name, ms(pw.max), where)})
		}
		if sk, ok := rows["clock_skew"]; ok {
			add(Artifact{Trace: rr.trace, Rank: rr.rank, Kind: "clock_skew", Title: "GPU work stamped before its launch call: host and device clocks are offset",
				Detail: fmt.Sprintf("%d GPU operations start before their launching call started, by up to %s (%s); launch-order tests (host wait, launched after idle) are unreliable at that scale.", sk.count, ms(sk.max), where)})
			if sk.count >= SkewMinCount || sk.max >= SkewMinNs {
				rg.limits = append(rg.limits, limit{rules: idleRules(), why: fmt.Sprintf("host and device clocks are offset (up to %s): the launch-order mechanism cannot be confirmed", ms(sk.max))})
			}
		}
		if hw, ok := rows["held_wait"]; ok {
			a := Artifact{Trace: rr.trace, Rank: rr.rank, Kind: "held_wait", Title: "Host calls that waited for work the trace does not show",
				Detail: fmt.Sprintf("%d blocking %s waited %s in all through GPU idle gaps of 1 ms or more, the rank's GPU running none of the trace's work (the longest such wait, %s, in %s; %s): the host waited for a dependency (an event on another stream, a peer), work launched before the window, another process or graph replays the trace did not record, not for the queue the trace shows. The sync and copy rules leave that time out.",
					hw.count, noun(hw.count, "call", "calls"), ms(hw.total), ms(hw.max), hw.name, where)}
			step := maxStepBusy(ev, rr.trace, rr.rank)
			if hw.first < HeldAtStartNs && sglangOverlap(ev, ri, rr.trace, rr.rank) {
				// sglang_qwen3_prefilldecode_mi300x: a 493 ms blocking copy
				// in ForwardBatch.init_new, inside the first step, that
				// waits on the stream for the previous batch's forward.
				// The file's own numbering says whether it was cut.
				before, startOf := "the capture began or before the slice the trace was cut to", "the window began (or before the slice it was cut to)"
				if excerptBefore > 0 {
					before = fmt.Sprintf("the slice the trace was cut to (its first %s events are not in the file)", table.Int(excerptBefore))
					startOf = "the slice the trace was cut to"
				}
				a.Detail += fmt.Sprintf(" The first began %s after the trace's first event. SGLang's overlap scheduler is on (the trace runs its overlap_utils frames): the GPU runs the previous batch while the host prepares the next one, so a blocking call at the capture's start most likely waited for the previous batch's GPU work, launched before %s (a hypothesis: another process on the GPU reads the same). Leave the first step out of steady-state reads: with a batch always in flight, starting the capture between steps does not avoid this.",
					ms(hw.first), before)
				if step > 0 && hw.max > HeldStepsMax*step {
					// sglang_qwen3_decode_mi300x: a 463 ms wait before the
					// first decode step (9.8 ms busy) after a 32k-token
					// prefill, which the decode step cannot bound.
					a.Detail += fmt.Sprintf(" The longest waited %s, %d times the GPU busy time of the rank's longest step (%s): what it waited for ran before %s, most likely a larger batch than those in the window, such as a prefill (a hypothesis: a step's name gives its requests and cached tokens, and the trace holds no step before the wait), whose length the steps in the window do not bound.",
						ms(hw.max), hw.max/step, ms(step), startOf)
				}
			} else if hw.first < HeldAtStartNs && step > 0 && hw.max > HeldStepsMax*step {
				// A wait at the start far longer than any step's GPU work,
				// with no batch known to be in flight.
				a.Detail += fmt.Sprintf(" The first began %s after the trace's first event, and the longest waited %s, more than %d times the GPU busy time of the rank's longest step (%s): longer than the rest of one step the capture clipped could run, so the trace does not show what held the device (another process on the GPU, the profiler's start-up, or work queued over several steps before the window; a hypothesis). Start the capture between steps, or leave its first step out.",
					ms(hw.first), ms(hw.max), HeldStepsMax, ms(step))
			} else if hw.first < HeldAtStartNs {
				a.Detail += fmt.Sprintf(" The first began %s after the trace's first event: the device was most likely still running work launched before the capture began, the rest of a step it clipped (a hypothesis: another process on the GPU reads the same). Start the capture between steps, or leave its first step out.",
					ms(hw.first))
			}
			add(a)
		}
		if es, ok := rows["edge_sync"]; ok {
			// The row names the longest call only: with more than one,
			// say so rather than give its name to all of them.
			which := fmt.Sprintf("%s, %s", es.name, ms(es.total))
			if es.count > 1 {
				which = fmt.Sprintf("%s in total; the longest a %s of %s", ms(es.total), es.name, ms(es.max))
			}
			add(Artifact{Trace: rr.trace, Rank: rr.rank, Kind: "edge_sync", Title: "Synchronisations at the window's edge",
				Detail: fmt.Sprintf("%d sync %s (%s) after the last GPU work started, before the first launch or outside every step (%s): what they waited for is not the window's own work: a sync after the last GPU work started drains what the window queued (the profiler's stop synchronisation, a harness sync, or the loop's own sync at the end of its step), a sync before the first launch waits for work launched before the window, and a sync outside every step for the step before. The sync rule leaves them out; a sync the loop makes every step is counted at its other calls where the capture holds more steps.", es.count, noun(es.count, "call", "calls"), which, where)})
		}
		if ls, ok := rows["late_start"]; ok {
			a := Artifact{Trace: rr.trace, Rank: rr.rank, Kind: "late_start", Title: "The first GPU work started long after its launch (work the trace does not show, or offset clocks)",
				Detail: fmt.Sprintf("The rank's first GPU work, %s, started %s after its launching call returned, with no GPU work of the trace before it (%s): the device was busy with work the trace does not show (a step before the window, another process) or its clock is offset from the host's. The GPU span begins there, so no rule judges that time, and the host's work before it cannot be read against the device.", ls.name, ms(ls.total), where)}
			if excerptBefore > 0 {
				// vllm_decode_full_mi300x: cut from a trace whose first
				// 1,414,018 events are not in the file.
				a.Detail += fmt.Sprintf(" The file is an excerpt whose first %s events were cut away (see the excerpt above): the device most likely ran the work they launched.", table.Int(excerptBefore))
			}
			add(a)
		}
		if ri.HasPythonStacks {
			rg.limits = append(rg.limits, limit{rules: map[string]bool{"host_bound_idle": true, "launch_bound": true},
				why: tracerLimit})
		} else if mean, ok := c.workload(rr.trace, rr.rank).SlowViews(); ok {
			// Inflated host time weakens a host-side verdict as the
			// Python tracer's does (docs/JUDGEMENT.md 3), the findings'
			// and the CPU cross-check's alike (noteHostCost names why).
			rg.limits = append(rg.limits, limit{rules: map[string]bool{"host_bound_idle": true, "launch_bound": true},
				why: fmt.Sprintf("the host's view operators took %s each, where %s is usual: the host time the verdict rests on is inflated, by the profiler or a slow host", us(int64(mean)), usualViewOp)})
		}
	}
	g.Artifacts = groupRanks(g.Artifacts)
	return g
}

// groupRanks keeps one artifact per trace and kind: the rank with the most
// GPU idle inside it (the lowest rank on a tie), noting how many ranks show
// it. Artifacts are ordered by trace, then by the idle inside them.
func groupRanks(as []Artifact) []Artifact {
	type k struct{ trace, kind string }
	best := map[k]int{}
	n := map[k]int{}
	var order []k
	for i, a := range as {
		kk := k{a.Trace, a.Kind}
		n[kk]++
		j, ok := best[kk]
		if !ok {
			order = append(order, kk)
		}
		if !ok || a.IdleNs > as[j].IdleNs || (a.IdleNs == as[j].IdleNs && a.Rank < as[j].Rank) {
			best[kk] = i
		}
	}
	out := make([]Artifact, 0, len(order))
	for _, kk := range order {
		a := as[best[kk]]
		if n[kk] > 1 {
			a.Detail += fmt.Sprintf(" (%d ranks of this trace show it; rank shown has the most GPU idle inside it)", n[kk])
		}
		out = append(out, a)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Trace != out[j].Trace {
			return out[i].Trace < out[j].Trace
		}
		return out[i].IdleNs > out[j].IdleNs
	})
	return out
}

// artifactOf words one of the start-up or held kinds.
func artifactOf(trace string, rank int, where string, count, total, max, idle int64, name, kind string) Artifact {
	a := Artifact{Trace: trace, Rank: rank, Kind: kind, IdleNs: idle}
	idleText := ""
	if idle > 0 {
		idleText = fmt.Sprintf("; %s of GPU idle time lies inside them", ms(idle))
	}
	switch kind {
	case "first_use":
		a.Title = "First-use runtime calls (context creation, lazy loading, allocator growth)"
		a.Detail = fmt.Sprintf("%d runtime %s took at least 1 ms and 20x the median of their name, %s in total; the longest, %s, took %s (%s)%s. Taken as one-time costs, not the loop's: each is among the first calls of its name in the trace (a launch, its kernel's first), which is its first in the process only if the capture began with the process; a capture that began later (a correlation id in the hundreds of thousands) leaves that a hypothesis.", count, noun(count, "call", "calls"), ms(total), name, ms(max), where, idleText)
	case "first_copy":
		a.Title = "A first copy call that blocked before any GPU work (a one-time cost at the window's start)"
		its, them, the := noun(count, "its", "their"), noun(count, "it", "them"), noun(count, "the call", "the calls")
		a.Detail = fmt.Sprintf("%d first copy %s (%s) blocked %s before the rank's first GPU work began, at least 1 ms and 20x the median time the calls of %s name spend before their own copy starts, with no GPU work queued before %s (%s): there %s ran no copy and waited on no queued work the trace shows. A one-time cost at the window's start (the first copy's set-up: staging buffers, allocator growth, lazy initialisation; or work from before the window that the capture clipped), not the loop's; the copy and sync rules leave that part out of their blocked time.", count, noun(count, "call", "calls"), name, ms(total), its, them, where, the)
	case "upload":
		a.Title = "Copies to the device before any computation (an upload, once)"
		a.Detail = fmt.Sprintf("%d copy %s (%s) blocked the host %s in total for copies that ended before the rank's first kernel started, as every GPU copy of the rank did (%s)%s: data moved to the device once, before the work (a model's weights or its inputs), not a copy the loop makes each step. The sync and copy rules leave these calls out.", count, noun(count, "call", "calls"), name, ms(total), where, idleText)
	case "first_op":
		a.Title = "First calls far slower than the later ones (autotuning, lazy initialisation, compilation)"
		a.Detail = fmt.Sprintf("%d %s first call took at least 10 ms and 20x their median call; the longest, %s, took %s (%s)%s.", count, noun(count, "operator's", "operators'"), name, ms(max), where, idleText)
	case "loader_start":
		a.Title = "DataLoader worker start-up: the first batch waited for the workers"
		a.Detail = fmt.Sprintf("The first batch of %s took %s, at least 5x the median of the later ones (%s)%s: the worker processes starting up (again every epoch unless persistent_workers=True), not the steady loading; the DataLoader rule leaves it out.", name, ms(max), where, idleText)
	case "profiler_overhead":
		a.Title = "First-call and profiler costs: lazy kernel loading and the profiler's buffers"
		// The capture evidence names the kind "EVENT in OPERATOR"; the
		// time is the operator's, which paid for the event.
		longest := name
		if ev, op, ok := strings.Cut(name, " in "); ok {
			longest = op + " around a " + ev + " event"
		}
		// b200_eager: 2 ms of such events inside 10.8 ms of operators,
		// the rest the operators' other first-call work (FlashInfer
		// loading its kernels): the operators' whole time is left out.
		a.Detail = fmt.Sprintf("%d %s of lazy kernel loading or of the profiler's buffers (Lazy Function Loading: a kernel's module loaded on its first launch; Activity Buffer Request or Buffer Flush: the profiler's own buffers), inside operators that took %s in all, left out whole with their other first-call work; the longest operator, %s, took %s (%s)%s. One-time or the profiler's own costs, not the loop's.", count, noun(count, "event", "events"), ms(total), longest, ms(max), where, idleText)
	case "warmup":
		a.Title = "Warm-up iterations inside the window"
		a.Detail = fmt.Sprintf("%d %s whose name says warm-up, the longest %s (%s, %s)%s.", count, noun(count, "range", "ranges"), name, ms(max), where, idleText)
	case "warmup_step":
		a.Title = "A first step far longer than the others of its phase (warm-up or a one-off)"
		a.Detail = fmt.Sprintf("%s took %s, at least twice the median of the later steps of its phase (%s)%s.", name, ms(max), where, idleText)
	case "harness":
		a.Title = "A benchmark harness's work between the measured runs"
		a.Detail = fmt.Sprintf("%d %s %s, %s in all, the longest %s (%s)%s: PARAM's operator benchmark clearing the cache before a measured run (a multiply of a CPU tensor the size of the L2 cache, then torch.cuda.empty_cache()), not the measured model's work. The empty_cache also returns the caching allocator's free blocks to the device, so the measured run after it allocates through cudaMalloc again, a cost a training loop's warm allocator does not pay.", count, name, noun(count, "range", "ranges"), ms(total), ms(max), where, idleText)
	case "held":
		a.Title = "GPU idle with launched work waiting (a dependency, or work the trace does not show)"
		a.Detail = fmt.Sprintf("%d GPU idle %s went on at least 1 ms after the work that ended them was launched; the longest such wait, %s, ended with %s (%s)%s: the device had the work and did not run it, held by a dependency (an event on another stream, a peer) or by work the trace does not show (queued before the window, another process), not by the host.", count, noun(count, "interval", "intervals"), ms(max), name, where, idleText)
	case "pre_window":
		a.Title = "GPU work launched before the capture began"
		a.Detail = fmt.Sprintf("%d GPU operations at the window's start have no launching call in the trace, %s of GPU time (%s): their host side is outside the window.", count, ms(total), where)
	}
	return a
}

// steady returns the rank's GPU idle time and span with the idle inside
// start-up and held intervals taken out: the slice the rules judge.
func (c *ctx) steady(trace string, rank int) (idle, span int64) {
	for _, r := range c.ranks {
		if r.trace == trace && r.rank == rank {
			idle, span = r.idle, r.busy+r.idle
		}
	}
	ex := c.gate.ExcludedIdle(trace, rank)
	return max(idle-ex, 0), max(span-ex, 0)
}

// judgedSpan names span, the rank's span the rules judge (steady), for a
// finding's sentence: "the GPU span of 11.0 ms", or, when start-up or held
// intervals were left out of it, "the GPU span the rules judge, 441 ms of
// 1231 ms (…)".
func (c *ctx) judgedSpan(trace string, rank int, span int64) string {
	if full := c.span(trace, rank); span < full && ms(span) != ms(full) {
		return fmt.Sprintf("the GPU span the rules judge, %s of %s (start-up and held intervals left out)", ms(span), ms(full))
	}
	return "the GPU span of " + ms(span)
}

// rankGate is what the gate decided for one rank: an empty one when the
// gate has not run (inside Assess) or knows no such rank.
func (c *ctx) rankGate(trace string, rank int) *rankGate {
	if c.gate != nil {
		if rg := c.gate.ranks[key(trace, rank)]; rg != nil {
			return rg
		}
	}
	return &rankGate{}
}

// preWindow is the rank's GPU work launched before the window: the
// operations and their GPU time.
func (c *ctx) preWindow(trace string, rank int) (n, ns int64) {
	rg := c.rankGate(trace, rank)
	return rg.preWindowN, rg.preWindowNs
}

// loaderStart is the rank's DataLoader worker start-up (the loader_start
// artifact's time), which the DataLoader rule leaves out.
func (c *ctx) loaderStart(trace string, rank int) int64 {
	return c.rankGate(trace, rank).loaderStartNs
}

// loaderStartIn tells whether the rank's DataLoader worker start-up lies
// inside [first, last] (from the trace's first event).
func (c *ctx) loaderStartIn(trace string, rank int, first, last int64) bool {
	rg := c.rankGate(trace, rank)
	return rg.loaderStartNs > 0 && rg.loaderStartAt[0] >= first && rg.loaderStartAt[1] <= last
}

// apply caps the findings by the ranks' limits. A finding on every rank
// (rank -1) takes the limits every rank of its trace shares.
func (g *Gate) apply(fs []evidence.Finding) []evidence.Finding {
	out := fs[:0]
	for _, f := range fs {
		drop := false
		var whys []string
		for _, l := range g.limitsOf(f.Trace, f.Rank) {
			if l.rules != nil && !l.rules[f.Rule] {
				continue
			}
			if l.drop {
				drop = true
				break
			}
			if f.Status == "confirmed" {
				f.Status = "hypothesis"
			}
			if l.minor {
				f.Severity = "minor"
				if l.rules == nil {
					// The capture shows no steady state: no fix can rest on it.
					// A finding that already asks for another capture keeps
					// what that capture must record (the host-wait rule's
					// untraced host work).
					also := ""
					if rest, ok := strings.CutPrefix(f.Fix, noFixPrefix); ok {
						also = " " + capFirst(rest)
					}
					f.Fix = "None from this capture (" + l.why + "): profile the steady state, a few steps after warm-up, and re-run the report." + also
					f.Snippet = "torch.profiler.schedule(wait=1, warmup=2, active=3)"
				}
			}
			whys = append(whys, l.why)
		}
		if drop {
			continue
		}
		if len(whys) > 0 {
			f.Caveat = capFirst(strings.Join(whys, "; ")) + "."
		}
		out = append(out, f)
	}
	return out
}

func (g *Gate) limitsOf(trace string, rank int) []limit {
	if trace != "" && rank >= 0 {
		if rg := g.ranks[key(trace, rank)]; rg != nil {
			return rg.limits
		}
		return nil
	}
	var out []limit
	keys := make([]string, 0, len(g.ranks))
	for k := range g.ranks {
		tr, r, _ := strings.Cut(k, "\x00")
		if (trace == "" || tr == trace) && (rank < 0 || r == strconv.Itoa(rank)) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, g.ranks[k].limits...)
	}
	return out
}

// Inconclusive returns, for the evidence's ranks whose capture cannot
// support a critical verdict on any rule, why; "" when every rank can.
func (g *Gate) Inconclusive() string {
	if g == nil {
		return ""
	}
	var whys []string
	seen := map[string]bool{}
	for _, l := range g.limitsOf("", -1) {
		if l.rules == nil && (l.drop || l.minor) && !seen[l.why] {
			seen[l.why] = true
			whys = append(whys, l.why)
		}
	}
	return strings.Join(whys, "; ")
}

// Void says why no timing of the slice can be read (a limit that drops
// every finding, such as a counter capture's synthetic timestamps or a
// sampled trace's missing events), and what to capture instead so that a
// lever can be named; "" and "" when the timings stand.
func (g *Gate) Void() (why, recapture string) {
	if g == nil {
		return "", ""
	}
	for _, l := range g.limitsOf("", -1) {
		if l.rules == nil && l.drop {
			return l.why, l.recapture
		}
	}
	return "", ""
}

// NoReading says why the window of trace and rank (every rank of the
// trace for rank -1) is no run of the workload whose host and device could
// be read against each other (a graph capture over most of the GPU span:
// captured work is recorded, not executed; a counter capture: its timings
// are synthetic); "" when it is one. The CPU cross-check gives no verdict
// on such a window.
func (g *Gate) NoReading(trace string, rank int) string {
	if g == nil {
		return ""
	}
	var whys []string
	for _, l := range g.limitsOf(trace, rank) {
		if l.unread && !slices.Contains(whys, l.why) {
			whys = append(whys, l.why)
		}
	}
	return strings.Join(whys, "; ")
}

// Limited returns why the gate caps rule on trace and rank, "" when it
// does not.
func (g *Gate) Limited(trace string, rank int, rule string) string {
	if g == nil {
		return ""
	}
	var whys []string
	for _, l := range g.limitsOf(trace, rank) {
		if l.rules == nil || l.rules[rule] {
			whys = append(whys, l.why)
		}
	}
	return strings.Join(whys, "; ")
}

func capFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// wall returns the rank's wall time (WallNs over the GPU span the rules
// judge).
func (c *ctx) wall(trace string, rank int) int64 {
	return WallNs(c.ev, trace, rank, c.span(trace, rank))
}

// WallNs is a rank's wall time, the denominator of host-side shares
// (time blocked in syncs, in the DataLoader): the overview's span of every
// event of the rank (host and device), at least gpuSpan, its GPU span;
// gpuSpan where the overview has no row for it.
func WallNs(ev *evidence.Evidence, trace string, rank int, gpuSpan int64) int64 {
	if t := ev.Table("overview"); t != nil {
		for r := range t.Rows {
			if evidence.Str(t, r, "trace") == trace && int(evidence.Int(t, r, "rank")) == rank {
				if w := evidence.Int(t, r, "span_ns"); w > 0 {
					return max(w, gpuSpan)
				}
			}
		}
	}
	return gpuSpan
}

// Excluded returns the GPU idle time the gate took out of the judged slice
// and the GPU span it was taken from, summed over the ranks.
func (g *Gate) Excluded() (idle, span int64, ranks int) {
	if g == nil {
		return 0, 0, 0
	}
	for _, rg := range g.ranks {
		idle += rg.excludedIdle
		span += rg.span
		if rg.span > 0 {
			ranks++
		}
	}
	return idle, span, ranks
}

// overviewInt is a column of the overview area's row of a rank (0 when
// absent).
// sampledRank: the rank's n CPU operators with an External id range over
// ids ids, at least SampledIDsPerOp per operator: the trace holds a sample
// of its events.
func sampledRank(ev *evidence.Evidence, trace string, rank int) (n, ids int64, sampled bool) {
	n, ids = overviewInt(ev, trace, rank, "op_ids"), overviewInt(ev, trace, rank, "op_id_span")
	return n, ids, n >= SampledMinOps && ids >= SampledIDsPerOp*n
}

// What a capture limit tells the reader to profile instead, where it
// tells one (SaysWhatToProfile).
const (
	profileMore    = "profile more steps"
	profileTheLoop = "profile the loop"
	profileWarm    = "profile runs after warm-up with the cache kept warm"
)

// SaysWhatToProfile reports whether a capture limit's reason (Gate.Void,
// Gate.Inconclusive) already says what to profile instead, so that the
// Next lever adds no advice of its own.
func SaysWhatToProfile(why string) bool {
	return strings.Contains(why, profileMore) || strings.Contains(why, profileTheLoop) || strings.Contains(why, profileWarm)
}

// sampledOnRank says whether the rank holds a sample of its events
// (sampledRank): the sampled artifact then says what an excerpt would.
func sampledOnRank(ev *evidence.Evidence, trace string, rank int) bool {
	_, _, s := sampledRank(ev, trace, rank)
	return s
}

// excerptRank: the rank's files hold held of the Ev Idx numbers up to their
// highest and lack missing of them, before of those below their lowest;
// ok when that makes the rank an excerpt (ExcerptMinMissing,
// ExcerptMissingShare).
func excerptRank(ev *evidence.Evidence, trace string, rank int) (held, missing, before int64, ok bool) {
	held, missing = overviewInt(ev, trace, rank, "indexed"), overviewInt(ev, trace, rank, "index_missing")
	before = overviewInt(ev, trace, rank, "index_before")
	return held, missing, before, held > 0 && missing >= ExcerptMinMissing && float64(missing) >= ExcerptMissingShare*float64(held)
}

// Sampled reports whether a rank of ev's overview holds a sample of its
// events (the capture gate's "sampled" artifact): its gaps are no idle time.
func Sampled(ev *evidence.Evidence) bool {
	t := ev.Table("overview")
	if t == nil {
		return false
	}
	for r := range t.Rows {
		if _, _, s := sampledRank(ev, evidence.Str(t, r, "trace"), int(evidence.Int(t, r, "rank"))); s {
			return true
		}
	}
	return false
}

func overviewInt(ev *evidence.Evidence, trace string, rank int, col string) int64 {
	t := ev.Table("overview")
	if t == nil {
		return 0
	}
	for r := range t.Rows {
		if evidence.Str(t, r, "trace") == trace && int(evidence.Int(t, r, "rank")) == rank {
			return evidence.Int(t, r, col)
		}
	}
	return 0
}

// syncEventsAdvice says how a capture on platform would show what the
// device waited for: CUDA sync events on CUDA, which Kineto records
// through CUPTI alone; on ROCm and MTIA the host's sync and stream-wait
// calls, and the platform's own tracer.
func syncEventsAdvice(platform string) string {
	switch platform {
	case "rocm":
		return "on ROCm the profiler records no device-side sync events (Kineto records them through CUPTI, on CUDA GPUs only): read the hipStreamWaitEvent and hip*Synchronize calls around the stall, or trace the streams with rocprofv3"
	case "mtia":
		return "the profiler records no device-side sync events on MTIA: read the host's wait calls around the stall"
	}
	return "capture with CUDA sync events (torch.profiler._ExperimentalConfig(enable_cuda_sync_events=True)), which record a stream's wait on another"
}

// replaySpans sums a rank's graph launches in the graphs area: the GPU
// time of the work recorded for them and the spans of that work, each
// launch's first start to its last end (negative_queue_length_a100: 105 ms
// over 399 ms; vLLM's decode replays, back to back, 134 ms over 138 ms).
// span is 0 where the area has no span_ns (an older bundle).
func replaySpans(ev *evidence.Evidence, trace string, rank int) (gpu, span int64) {
	t := ev.Table("graphs")
	if t == nil {
		return 0, 0
	}
	for r := range t.Rows {
		if evidence.Str(t, r, "trace") == trace && int(evidence.Int(t, r, "rank")) == rank && evidence.Int(t, r, "graph") != -2 {
			gpu += evidence.Int(t, r, "gpu_ns")
			span += evidence.Int(t, r, "span_ns")
		}
	}
	return gpu, span
}

// graphsOffAdvice says how to see what a rank's graph replays run between
// the nodes a trace records: a run with the graphs off, where each kernel
// is launched and recorded on its own (torch.compile's through Inductor's
// triton.cudagraphs where the rank runs compiled code), or Nsight Systems
// recording each node of a replay (--cuda-graph-trace=node, as vLLM's
// profiling guide has it; ANCHORS.md §7.4), on CUDA.
func graphsOffAdvice(ev *evidence.Evidence, trace string, rank int, platform string) string {
	off := "profile one run with the graphs off, where every kernel is launched and recorded on its own"
	if ReadWorkload(ev, trace, rank).Compiled {
		off = "profile one run with torch.compile's CUDA graphs off (torch._inductor.config.triton.cudagraphs = False), where every kernel is launched and recorded on its own"
	}
	if platform == "rocm" {
		return off
	}
	return off + ", or with Nsight Systems' --cuda-graph-trace=node, which records each node of a replay"
}

// maxStepBusy is the GPU busy time of a rank's busiest step (the steps
// table's gpu_busy_ns), 0 when the rank has no step with GPU work.
func maxStepBusy(ev *evidence.Evidence, trace string, rank int) int64 {
	t := ev.Table("steps")
	if t == nil {
		return 0
	}
	var most int64
	for r := range t.Rows {
		if evidence.Str(t, r, "trace") == trace && int(evidence.Int(t, r, "rank")) == rank {
			most = max(most, evidence.Int(t, r, "gpu_busy_ns"))
		}
	}
	return most
}

// tracerLimit is the capture gate's cap on a host-bound or launch-bound
// finding of a rank with python stacks.
const tracerLimit = "python stacks were captured (with_stack=True): the Python tracer " + StackCapLimit

// StackCapLimit is what a caveat says where python stacks capped a
// finding: the capture gate's tracerLimit for python_function events, and
// the report's for a 2021 capture's Call stack args.
const StackCapLimit = "inflates host time, so host-bound is at most a hypothesis"

// TracerInflated says whether f was capped for the cost of capturing
// python stacks (StackCapLimit): the host time its share rests on includes
// that cost, so the share overstates what a change to the code gains.
func TracerInflated(f evidence.Finding) bool {
	return strings.Contains(f.Caveat, StackCapLimit)
}

// sglangOverlap says whether a rank is SGLang's with its overlap scheduler
// on (the trace runs its overlap_utils frames): the GPU runs the previous
// batch while the host prepares the next, so a batch is always in flight.
func sglangOverlap(ev *evidence.Evidence, ri evidence.RankInfo, trace string, rank int) bool {
	return ri.Producer == "sglang" && readWorkload(ev, trace, rank).SGLangOverlap
}
