package crossview

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strings"

	"github.com/tracebook/tracebook/analysis/table"
)

// Rule is one row of the verdict's decision table: the first rule whose
// When holds gives the verdict, labelled by Label.
type Rule struct {
	Name    string
	Verdict string
	// Doc states the condition with its thresholds, as the package doc's table does.
	Doc   string
	When  func(m Metrics) bool
	Label func(m Metrics) string
	// Share, for the rules that name a constraint on the idle or exposed
	// time (comm-exposed, waiting, sync-gaps, host-gaps), is the share of
	// the GPU span that constraint accounts for: where several of them
	// hold, the largest decides (Decide). Nil for the others.
	Share func(m Metrics) float64
}

// The thresholds of Rules.
const (
	// BusyGPUBound: at or above this GPU busy share the device is the constraint.
	BusyGPUBound = 0.85
	// BusyMostly with BlockedAhead: a mostly busy device with the host
	// waiting on it is still the likelier constraint.
	BusyMostly = 0.70
	// IdleMin: below this idle share, idle causes do not decide a verdict.
	IdleMin = 0.15
	// WaitShareMin, SyncShareMin, HostShareMin: the share of idle time a
	// cause must explain.
	WaitShareMin = 0.40
	SyncShareMin = 0.40
	HostShareMin = 0.50
	// CommExposedMin: exposed communication share of the GPU span.
	CommExposedMin = 0.20
	// BlockedAhead: the launching threads blocked in sync calls or polling
	// the device while it was busy, share of the GPU span: the host was ahead of the device.
	BlockedAhead = 0.05
	// QueuedAhead: the device busy with launched work waiting behind it,
	// share of the GPU span: the host kept the device's queue filled, so
	// it was ahead of the device without blocking. Our choice: three
	// quarters of the span, so that a queue that ran dry between bursts
	// does not count (sglang_qwen3_prefilldecode_mi300x: 99.7%, its host
	// launching inside the span; h100_qwen15_05b_chat, a 0.5B model's
	// small kernels, 58.9%).
	QueuedAhead = 0.75
	// GraphCoverageMin: below it graph replays hide too many kernels to
	// measure idle time.
	GraphCoverageMin = 0.50
	// HeldMinNs: an operation that starts this long after its launching
	// call returned, with the device idle for most of the gap before it,
	// was held on the device side (sql/capture.sql's held kind).
	HeldMinNs = 1_000_000
	// KernelWaitMaxNs: idle between kernels queued back to back, shorter
	// than this, is the device's own time between them (HTA's kernel
	// wait, consecutive_kernel_delay 30, applied to µs timestamps), not a
	// dependency: sql/views.sql's tb_kernel_wait_ns, which the gaps area's
	// kernel_wait uses (pipeline's TestKernelWaitOneThreshold).
	KernelWaitMaxNs = 30_000
	// BackToBackIdle: a GPU idle under this share of its span ran its work
	// back to back, so work launched before the span began waited in its
	// queue (launchedKernels). Our choice: vllm_decode_full_mi300x's GPU
	// idled 0.2% of its span.
	BackToBackIdle = 0.05
	// PollMinNs and PollSlackNs: a stretch of a launching thread's self
	// time of PollMinNs or more, through most of which the GPU work of the
	// thread's last launch before it ran, ended within PollSlackNs of when
	// that work ended, is the thread polling the device (DeepEP's host spin on the notify
	// kernel's counter: 22.7 ms in train_h800_ep64's dispatch(F), ended
	// 22 µs before the kernel did). Our choice: long enough that a host
	// working as long as the device takes to drain is a rare coincidence.
	PollMinNs   = 1_000_000
	PollSlackNs = 100_000
	// QueueFullMinNs and QueueFullDepth: a launch call of QueueFullMinNs
	// or more, with QueueFullDepth or more of its rank's launches queued
	// ahead of it (launched, their GPU work not yet started), blocked on a
	// full launch queue: the driver holds the call until the device takes
	// an entry, so the host is ahead of the device. Our choice, from the
	// shared traces: the 533 launch calls of 100 µs or more in
	// ns_resolution_v100 (V100) each had 1,011-1,021 launches queued ahead
	// (the queue holds about 1,024), 89 of negative_queue_length_a100's 95
	// over 969; every other trace's long launch calls had 133 or fewer
	// queued (first-use module loads and one-off driver work).
	QueueFullMinNs = 100_000
	QueueFullDepth = 512
)

func always(string) func(Metrics) string { return func(Metrics) string { return "" } }

func fixed(label string) func(Metrics) string { return func(Metrics) string { return label } }

// linked labels a verdict confirmed when a mechanism links at least half of
// the idle time it rests on (see Metrics.GapConfirmedNs).
func linked(confirmed, total func(Metrics) int64) func(Metrics) string {
	return func(m Metrics) string {
		if t := total(m); t > 0 && 2*confirmed(m) >= t {
			return Confirmed
		}
		return Hypothesis
	}
}

// Rules is the verdict's decision table, in order.
var Rules = []Rule{
	{Name: "no-gpu-work", Verdict: VerdictInconclusive, Doc: "no GPU operation in the slice",
		When: func(m Metrics) bool { return m.GPUTimeNs == 0 || m.WallNs == 0 }, Label: always("")},
	{Name: "graph-undercount", Verdict: VerdictInconclusive, Doc: "graph replays recorded < 50% of their kernels",
		When: func(m Metrics) bool { return m.GraphExpected > 0 && m.GraphCoverage() < GraphCoverageMin }, Label: always("")},
	{Name: "comm-exposed", Verdict: VerdictComm, Doc: "comm >= 0.20",
		When: func(m Metrics) bool { return m.Comm() >= CommExposedMin }, Label: fixed(Hypothesis),
		Share: func(m Metrics) float64 { return m.Comm() }},
	// The queue confirms the host ran ahead only where the host recorded
	// time inside the span: a window cut to one replayed step, launched
	// before the GPU began (vllm_decode_full_mi300x: one graph launch,
	// queued 97.2%), shows no host pace between steps.
	{Name: "device-saturated", Verdict: VerdictGPU, Doc: "busy >= 0.85; confirmed when blocked >= 0.05, or queued >= 0.75 with host time in the span",
		When: func(m Metrics) bool { return m.Busy() >= BusyGPUBound },
		Label: func(m Metrics) string {
			if m.Blocked() >= BlockedAhead || (m.Queued() >= QueuedAhead && m.HostNs() > 0) {
				return Confirmed
			}
			return Hypothesis
		}},
	// The host ran ahead of a GPU busy most of the span: its idle gaps,
	// host-launched as they may be, are pockets the GPU's own time
	// outweighs (trace_diff_control_a100: busy 83.6%, launched work
	// queued behind it 79.3% of the span, launch gaps 13.9%).
	{Name: "host-ahead", Verdict: VerdictGPU, Doc: "busy >= 0.70 and queued >= 0.75",
		When: func(m Metrics) bool { return m.Busy() >= BusyMostly && m.Queued() >= QueuedAhead }, Label: fixed(Hypothesis)},
	{Name: "waiting", Verdict: VerdictWaiting, Doc: "idle >= 0.15 and wait >= 0.40; confirmed when the mechanism links half of it",
		When:  func(m Metrics) bool { return m.Idle() >= IdleMin && m.GapShare(CauseWait) >= WaitShareMin },
		Label: linked(func(m Metrics) int64 { return m.GapWaitConfirmedNs }, func(m Metrics) int64 { return m.GapWaitNs }),
		Share: idleShare(CauseWait)},
	{Name: "sync-gaps", Verdict: VerdictSync, Doc: "idle >= 0.15 and sync >= 0.40; confirmed when the mechanism links half of it",
		When:  func(m Metrics) bool { return m.Idle() >= IdleMin && m.GapShare(CauseSync) >= SyncShareMin },
		Label: linked(func(m Metrics) int64 { return m.GapSyncConfirmedNs }, func(m Metrics) int64 { return m.GapSyncNs }),
		Share: idleShare(CauseSync)},
	{Name: "host-gaps", Verdict: VerdictHost, Doc: "idle >= 0.15 and host >= 0.50; confirmed when the mechanism links half of it; hypothesis with python stacks",
		When: func(m Metrics) bool { return m.Idle() >= IdleMin && m.GapShare(CauseHost) >= HostShareMin },
		Label: func(m Metrics) string {
			if m.StackCapture() {
				return Hypothesis
			}
			return linked(func(m Metrics) int64 { return m.GapHostConfirmedNs }, func(m Metrics) int64 { return m.GapHostNs })(m)
		},
		Share: idleShare(CauseHost)},
	{Name: "device-mostly-busy", Verdict: VerdictGPU, Doc: "busy >= 0.70 and blocked >= 0.05",
		When: func(m Metrics) bool { return m.Busy() >= BusyMostly && m.Blocked() >= BlockedAhead }, Label: fixed(Hypothesis)},
	{Name: "otherwise", Verdict: VerdictInconclusive, Doc: "no rule above holds",
		When: func(Metrics) bool { return true }, Label: always("")},
}

// NoSteadyState is the verdict's rule for a window that is no run of the
// workload (Check.Unread): the capture gate finds a graph capture over
// most of it, a counter capture, or a sampled trace. It is not in Rules: the metrics do
// not show it.
var NoSteadyState = Rule{Name: "no-steady-state", Verdict: VerdictInconclusive,
	Doc:  "the capture shows no run of the workload: a graph capture or a counter capture (captured work is recorded, not executed, or the timings are synthetic), or a sample of the events (most dropped, the gaps between those kept no idle time)",
	When: func(Metrics) bool { return false }, Label: always("")}

// OneStream is the verdict's rule for a slice of one GPU stream of ranks
// that ran work on others too: that work fills the stream's idle time, so
// the stream's idle is not the device's, and a host-bound or launch-bound
// reading of it would blame the host for waits on the other streams (a
// communication stream idles until the compute stream's gradients are
// ready). It is not in Rules: the metrics, of the one stream, do not show
// it.
var OneStream = Rule{Name: "one-stream", Verdict: VerdictInconclusive,
	Doc:  "the slice is one GPU stream of ranks that ran work on others: their work fills its idle time",
	When: func(Metrics) bool { return false }, Label: always("")}

// Unread returns c with no host/device reading: the window is no run of
// the workload (why, from the capture gate), so neither its GPU idle time
// nor its host time says which side constrains the workload. The numbers
// stay, for what they are.
func (c Check) Unread(why string) Check { return c.unreadBy(NoSteadyState, why) }

// unreadBy is c with no host/device reading, by rule r, for why.
func (c Check) unreadBy(r Rule, why string) Check {
	c.Verdict, c.Rule, c.Label, c.AlsoHolds = r.Verdict, r.Name, "", nil
	c.Reason = "No host/device reading: " + why + ". The events as the trace holds them, not a reading of the workload: " + reason(c.Metrics, r)
	return c
}

// Unreadable says whether c reads no host/device constraint at all: a
// window that is no run of the workload (NoSteadyState), a slice of one
// stream (OneStream).
func (c Check) Unreadable() bool { return c.Rule == NoSteadyState.Name || c.Rule == OneStream.Name }

// idleShare is the share of the GPU span in idle gaps of a cause.
func idleShare(cause string) func(Metrics) float64 {
	return func(m Metrics) float64 { return m.Idle() * m.GapShare(cause) }
}

// Decide applies Rules to the metrics and returns the rule that holds: the
// first whose condition holds, except that where it names a constraint
// (Rule.Share) and a later constraint rule holds too with a larger share
// of the GPU span, the largest decides. df_index_resolver_v100: exposed
// communication 20.6% of the span, host-wait gaps 41%; the table's order
// alone read it communication-bound.
func Decide(m Metrics) (Rule, string) {
	for i, r := range Rules {
		if !r.When(m) {
			continue
		}
		if r.Share != nil {
			for _, o := range Rules[i+1:] {
				if o.Share != nil && o.When(m) && o.Share(m) > r.Share(m) {
					r = o
				}
			}
		}
		return r, r.Label(m)
	}
	r := Rules[len(Rules)-1]
	return r, ""
}

// rankData is what the cross-check needs about one rank.
type rankData struct {
	ops     []int32       // its operations (indexes in builder.ops) by clipped start
	threads map[int32]int // launching threads (Input.Threads) -> launches
	main    int32         // the thread with the most launches
	busy    []ival        // the union of its operations inside the device intervals
	gaps    []ival        // the GPU idle gaps: the device intervals less busy
	// hostSpan is the GPU span (the device intervals from the first
	// operation to the last) inside the host intervals of the slice: the
	// launching threads' host time and blocked time are measured in it,
	// as the GPU's busy and idle time are.
	hostSpan []ival
	// kept is, by gap, its time outside the intervals the capture gate
	// leaves out (Input.LeftOut): the part of the gap the cross-check judges.
	kept []int64
	// edge are the capture gate's edge syncs (Input.LeftOut): the sync
	// frames around them are left out.
	edge []ival
	sync []ival // outermost sync frames of the launching threads, merged once the frames are in
	poll []ival // the launching threads' stretches polling the device (builder.poll) or launching into a full queue (builder.queueFull)
	// queue is its launches in launch order and their GPU work's starts
	// in start order (queueDepth), made on the first long launch call.
	queue  *launchQueue
	syncFr []syncFrame // the same frames, by start
	wait   []ival      // outermost wait frames of the launching threads
	// frames are the outermost frames of the launching threads; silent,
	// once they are in, the intervals of HeldMinNs or more between them in
	// which no launching thread had a frame open (the ranks area's
	// host_wait_untraced_ns reads the same silences).
	frames []ival
	silent []ival
}

// syncFrame is an outermost sync frame of a launching thread, with its GPU
// view node when it is inside the slice.
type syncFrame struct {
	ts, end int64
	node    *Node
}

// hostGapsPerRank is how many of each rank's longest GPU idle gaps the
// cross-check finds the host stack of (hostAt): the slice's TopGaps come
// from them, and the stacks of the late-launch ones are summed in
// HostStacks, so that the frame a host-bound finding names holds a share
// of the idle measured over more than the few gaps a reader is shown
// (vllm_mi300x: the 5 longest held 49% of the rank's idle, the frame's
// gaps far more). Our choice: enough to cover most of a host-bound rank's
// idle, few enough that each frame costs a binary search and a short walk.
const hostGapsPerRank = 256

// hostStacksPerRank caps a rank's HostStacks, longest first: the report
// carries them in its page.
const hostStacksPerRank = 16

// topGap is one of a rank's longest GPU idle gaps (hostGapsPerRank), and
// the innermost frame of its rank's main launching thread open at its
// middle, found as the frames stream in (hostAt).
type topGap struct {
	gap    Gap
	key    rankKey
	a, b   int64 // the gap, in the trace's time
	mid    int64
	thread int32 // the thread that launched the work ending the gap; -1: none
	found  int8  // where the host stack came from: 0 none yet, 1 the main launching thread, 2 thread
	depth  int32
	class  uint8
	// py counts the python calls inside the gap (pyIn) on the rank's main
	// launching thread ([0], when it is not thread) and on thread ([1]):
	// found picks the one of the thread the stack came from.
	py [2]pyCalls
}

// pyCalls counts python calls inside a gap: how many, and the time they
// cover (HostStack.PyCalls, PyNs).
type pyCalls struct {
	n, ns int64
}

// device measures what the GPU operations alone give, before the frames
// stream in: each rank's launching threads and its main one, busy and idle
// time, exposed communication, the gaps, and the longest of them, whose
// host stacks the frames then fill in (hostAt).
func (b *builder) device() {
	b.per = map[rankKey]*rankData{}
	// Each rank's operations counted first, so that its lists are made
	// at their size (×250 vLLM: 3.5 M operations on one rank).
	n := map[rankKey]int{}
	for i := range b.ops {
		n[b.opKey(b.op(&b.ops[i]))]++
	}
	for i := range b.ops {
		o := &b.ops[i]
		k := b.opKey(b.op(o))
		d := b.per[k]
		if d == nil {
			d = &rankData{threads: map[int32]int{}, ops: make([]int32, 0, n[k])}
			b.per[k] = d
		}
		d.ops = append(d.ops, int32(i))
		if o.host != hostNone {
			d.threads[b.op(o).HostThread]++
		}
		b.m.GPUTimeNs += o.b - o.a
	}
	for _, d := range b.per {
		best := -1
		for t, n := range d.threads {
			if n > best || (n == best && b.in.Threads[t].Name < b.in.Threads[d.main].Name) {
				d.main, best = t, n
			}
		}
	}
	b.topOf = map[rankKey][2]int{}
	for _, k := range b.rankKeys() {
		rs, d := b.ranks[k], b.per[k]
		if d == nil {
			continue
		}
		busy := make([]ival, 0, len(d.ops))
		var comm, other []ival
		for _, i := range d.ops {
			o := &b.ops[i]
			iv := ival{o.a, o.b}
			busy = append(busy, iv)
			// Exposed communication is communication no computation
			// overlaps, as the ranks and overlap areas count it (comm_ns
			// less its union with compute): a copy beside it hides none.
			switch b.op(o).Class {
			case ClassComm:
				comm = append(comm, iv)
			case ClassComp:
				other = append(other, iv)
			}
		}
		d.busy = intersect(mergeIvals(busy), rs.dev)
		if len(d.busy) > 0 {
			d.hostSpan = intersect(rs.dev, []ival{{d.busy[0].a, d.busy[len(d.busy)-1].b}})
			if rs.host != nil {
				d.hostSpan = intersect(d.hostSpan, rs.host)
			}
		}
		out := b.leftOut(k, rs.origin)
		b.m.LaunchThreads += len(d.threads)
		comm, other = mergeIvals(comm), mergeIvals(other)
		b.m.BusyNs += ivalsLen(d.busy)
		b.m.CommNs += ivalsLen(comm)
		b.m.CommExposedNs += ivalsLen(comm) - intersectLen(comm, other)
		// The operation that ends each gap: operations by clipped start.
		sort.Slice(d.ops, func(i, j int) bool { return b.ops[d.ops[i]].a < b.ops[d.ops[j]].a })
		// Gaps inside the GPU span (first operation to last); the wall
		// before and after it is the capture's edge, not GPU idle time.
		d.gaps = d.gaps[:0]
		for _, g := range complement(rs.dev, d.busy) {
			if len(d.busy) == 0 || g.b <= d.busy[0].a || g.a >= d.busy[len(d.busy)-1].b {
				b.m.EdgeIdleNs += g.b - g.a
				continue
			}
			d.gaps = append(d.gaps, g)
			// The idle inside start-up and held intervals leaves the
			// idle time and the span, as the rules leave it out.
			kept := g.b - g.a - overlap(g.a, g.b, out.idle)
			d.kept = append(d.kept, kept)
			b.m.IdleNs += kept
			b.m.LeftOutIdleNs += g.b - g.a - kept
		}
		// Each launching thread's share of the base of the host time: its
		// rank's span (busy and the idle kept).
		spanR := ivalsLen(d.busy)
		for _, k := range d.kept {
			spanR += k
		}
		b.m.LaunchSpanNs += int64(len(d.threads)) * spanR
		// The launching threads' host time is measured in the same slice:
		// the GPU span less the idle left out, and less the edge syncs.
		if len(out.idle) > 0 || len(out.edge) > 0 {
			for _, e := range out.edge {
				if n := overlap(e.a, e.b, d.hostSpan); n > 0 {
					b.m.EdgeSyncs++
					b.m.EdgeSyncNs += n
				}
			}
			cut := append(intersect(d.gaps, out.idle), out.edge...)
			d.hostSpan = complement(d.hostSpan, mergeIvals(cut))
			d.edge = out.edge
		}
		var top []Gap
		for i, g := range d.gaps {
			// A gap mostly left out is none of the judged slice's.
			if 2*d.kept[i] >= g.b-g.a {
				top = keepTop(top, Gap{Trace: k.trace, Rank: k.rank, StartNs: g.a - rs.origin, DurNs: g.b - g.a}, max(hostGapsPerRank, b.opts.TopGaps))
			}
		}
		// The rank's gaps by their middle, for hostAt's search.
		sort.Slice(top, func(i, j int) bool { return top[i].StartNs < top[j].StartNs })
		b.topOf[k] = [2]int{len(b.top), len(b.top) + len(top)}
		for _, g := range top {
			a := rs.origin + g.StartNs
			b.top = append(b.top, topGap{gap: g, key: k, a: a, b: a + g.DurNs, mid: a + g.DurNs/2,
				thread: b.endingThread(d, a+g.DurNs)})
		}
	}
}

// topAt returns the index in b.top of rank k's tracked gap whose middle is
// at mid, or -1.
func (b *builder) topAt(k rankKey, mid int64) int {
	r := b.topOf[k]
	top := b.top[r[0]:r[1]]
	i := sort.Search(len(top), func(i int) bool { return top[i].mid >= mid })
	if i < len(top) && top[i].mid == mid {
		return r[0] + i
	}
	return -1
}

// endingThread is the thread that launched the operation ending at end a
// gap of d's rank (the first launched one starting there), -1 when none
// was launched: in a training step the backward's kernels come from the
// autograd thread and the forward's from the main one, so the host stack
// that explains a gap is the one of the thread whose launch ended it
// (nccl_data_a100: DDP's buffer broadcast in the forward).
func (b *builder) endingThread(d *rankData, end int64) int32 {
	ops := d.ops
	k := sort.Search(len(ops), func(i int) bool { return b.ops[ops[i]].a >= end })
	for ; k < len(ops) && b.ops[ops[k]].a == end; k++ {
		if o := &b.ops[ops[k]]; o.host != hostNone {
			return b.op(o).HostThread
		}
	}
	return -1
}

// hostAt offers the open frame at k of th, one of a rank's launching
// threads, to the longest gaps of its rank: the innermost frame open at a
// gap's middle on the thread that launched the work ending the gap, else on
// the rank's main launching thread, gives the gap its host stack, at most
// its 4 innermost frames, outermost first.
func (b *builder) hostAt(th *threadState, k int) {
	e := &th.stack[k]
	r := b.topOf[th.key]
	top := b.top[r[0]:r[1]]
	for i := sort.Search(len(top), func(i int) bool { return top[i].mid >= e.ts }); i < len(top) && top[i].mid < e.end; i++ {
		t := &top[i]
		var src int8
		switch {
		case th.id == t.thread:
			src = 2
		case th.main:
			src = 1
		default:
			continue
		}
		if src < t.found || (src == t.found && e.depth <= t.depth) {
			continue
		}
		t.found, t.depth, t.class = src, e.depth, e.class
		path := make([]string, 0, 4)
		for j := max(0, k-3); j <= k; j++ {
			path = append(path, th.stack[j].name)
		}
		t.gap.Host = path
	}
}

// pyIn counts a python call from ts to end of th, one of a rank's
// launching threads, in the tracked gap of its rank that holds it from
// start to end, if any (a call open past the gap's end, such as the frame
// whose own time the gap is, is none of its calls): on the slot of the
// thread that launched the work ending the gap, else on the main
// launching thread's. Its time counts from th.pyEnd, the end of the calls
// counted so far, so that a call nested in a counted one adds none: the
// frames come in the thread's start order. O(1) memory: two counters a
// gap and one end a thread, whatever the number of calls.
func (b *builder) pyIn(th *threadState, ts, end int64) {
	r, ok := b.topOf[th.key]
	if !ok {
		return
	}
	top := b.top[r[0]:r[1]]
	// The tracked gaps are disjoint and by start: by end too.
	i := sort.Search(len(top), func(i int) bool { return top[i].b > ts })
	if i == len(top) || ts < top[i].a || end > top[i].b {
		return
	}
	t := &top[i]
	slot := 0
	switch {
	case th.id == t.thread:
		slot = 1
	case !th.main:
		return
	}
	t.py[slot].n++
	t.py[slot].ns += max(0, end-max(ts, th.pyEnd))
	th.pyEnd = max(th.pyEnd, end)
}

// measure finishes the cross-check's numbers once the frames are in: the
// cause of each gap, the time the launching threads were blocked while the
// device was busy, and the GPU idle time each sync frame opened (on its
// node of the GPU view). decide finishes the cross-check once the trees
// are built.
func (b *builder) measure() Check {
	m := &b.m
	m.WallNs = b.wallNs()
	for _, k := range b.rankKeys() {
		rs := b.ranks[k]
		if ivalsLen(rs.dev) > 0 {
			m.Ranks++
		}
		d := b.per[k]
		if d == nil {
			m.EdgeIdleNs += ivalsLen(rs.dev)
			continue
		}
		b.rankCheck(rs, d)
	}
	c := Check{Metrics: *m, TopGaps: []Gap{}, Notes: []string{}}
	var top []Gap
	for i := range b.top {
		t := &b.top[i]
		if t.found > 0 {
			t.gap.HostClass = classNames[t.class]
		}
		top = keepTop(top, t.gap, b.opts.TopGaps)
	}
	c.TopGaps = append(c.TopGaps, top...)
	c.HostStacks = b.hostStacks()
	return c
}

// hostStacks sums, per rank, the late-launch gaps (cause host) among its
// tracked ones by the host stack at their middle (an empty one where no
// frame was open, which counts in the gaps' time too), with the python
// calls inside them on the thread the stack came from (pyIn): at most
// hostStacksPerRank stacks a rank, the most time first (then the stack).
func (b *builder) hostStacks() []HostStack {
	var out []HostStack
	for _, k := range b.rankKeys() {
		r, ok := b.topOf[k]
		if !ok {
			continue
		}
		var mine []HostStack
		at := map[string]int{}
		for _, t := range b.top[r[0]:r[1]] {
			if t.gap.Cause != CauseHost {
				continue
			}
			key := strings.Join(t.gap.Host, "\x00")
			i, ok := at[key]
			if !ok {
				i = len(mine)
				at[key] = i
				mine = append(mine, HostStack{Trace: k.trace, Rank: k.rank, Host: t.gap.Host, Of: r[1] - r[0]})
			}
			mine[i].Gaps++
			mine[i].Ns += t.gap.DurNs
			// The python calls of the thread the stack came from (none
			// where no frame was open).
			if t.found > 0 {
				py := t.py[t.found-1]
				mine[i].PyCalls += py.n
				mine[i].PyNs += py.ns
			}
		}
		sort.SliceStable(mine, func(i, j int) bool {
			if mine[i].Ns != mine[j].Ns {
				return mine[i].Ns > mine[j].Ns
			}
			return slices.Compare(mine[i].Host, mine[j].Host) < 0
		})
		out = append(out, mine[:min(len(mine), hostStacksPerRank)]...)
	}
	return out
}

// decide adds the graph replay counts, the notes and the verdict.
func (b *builder) decide(c *Check) {
	m := &c.Metrics
	m.GraphRecorded, m.GraphExpected = b.m.GraphRecorded, b.m.GraphExpected
	switch {
	case m.PythonFrames > 0:
		c.Notes = append(c.Notes, fmt.Sprintf("python stacks were captured (%d python frames): stack capture inflates host time, so the host-side numbers are upper bounds and host-bound is at most a hypothesis", m.PythonFrames))
	case m.CallStackOps > 0:
		c.Notes = append(c.Notes, fmt.Sprintf("python stacks were captured (%d operators carry a Call stack): stack capture inflates host time, so the host-side numbers are upper bounds and host-bound is at most a hypothesis", m.CallStackOps))
	}
	if m.GraphExpected > 0 && m.GraphCoverage() < 1 {
		c.Notes = append(c.Notes, fmt.Sprintf("graph replays: %.1f%% of the replayed kernels were recorded", 100*m.GraphCoverage()))
	}
	if s := m.SerialLaunch(); s != "" {
		c.Notes = append(c.Notes, s)
	}
	r, label := Decide(*m)
	c.Verdict, c.Rule, c.Label = r.Verdict, r.Name, label
	c.Reason = reason(*m, r)
	for _, o := range Rules {
		if o.Name != r.Name && o.Verdict != VerdictInconclusive && o.Verdict != r.Verdict && o.When(*m) {
			c.AlsoHolds = append(c.AlsoHolds, o.Name+" ("+o.Verdict+")")
		}
	}
	if len(c.AlsoHolds) > 0 {
		c.Reason += " Other rules that also hold: " + strings.Join(c.AlsoHolds, ", ") + "."
	}
	if b.s.HasStream && len(b.otherStreams) > 0 {
		others := make([]int, 0, len(b.otherStreams))
		for st := range b.otherStreams {
			others = append(others, int(st))
		}
		*c = c.unreadBy(OneStream, fmt.Sprintf("the slice is GPU stream %d, and its ranks ran work on other streams too (%s), which fills its idle time: the stream's idle is not the device's", b.s.Stream, table.Runs(others, 12)))
	}
}

// rankCheck gives each gap of one rank its cause, and measures the time
// its launching threads were blocked while the device was busy.
func (b *builder) rankCheck(rs *rankSlice, d *rankData) {
	m := &b.m
	if len(d.edge) > 0 {
		// A sync frame around an edge sync is not the loop's.
		d.sync = slices.DeleteFunc(d.sync, func(s ival) bool { return overlap(s.a, s.b, d.edge) > 0 })
		d.syncFr = slices.DeleteFunc(d.syncFr, func(f syncFrame) bool { return overlap(f.ts, f.end, d.edge) > 0 })
	}
	d.sync, d.wait = mergeIvals(d.sync), mergeIvals(d.wait)
	sort.Slice(d.syncFr, func(i, j int) bool { return d.syncFr[i].ts < d.syncFr[j].ts })
	m.BlockedWhileBusyNs += intersectLen(intersect(mergeIvals(append(d.poll, d.sync...)), d.hostSpan), d.busy)
	add := func(cause string, confirmed bool, ns int64) {
		switch cause {
		case CauseSync:
			m.GapSyncNs += ns
		case CauseWait:
			m.GapWaitNs += ns
		case CauseHost:
			m.GapHostNs += ns
		case CauseDevice:
			m.GapDeviceNs += ns
		default:
			m.GapOtherNs += ns
		}
		if confirmed {
			m.GapConfirmedNs += ns
			switch cause {
			case CauseSync:
				m.GapSyncConfirmedNs += ns
			case CauseWait:
				m.GapWaitConfirmedNs += ns
			case CauseHost:
				m.GapHostConfirmedNs += ns
			}
		}
	}
	launches, queued := b.launchedKernels(d)
	m.QueuedWhileBusyNs += intersectLen(intersect(queued, d.hostSpan), d.busy)
	fr := mergeIvals(d.frames)
	for i := 1; i < len(fr); i++ {
		if fr[i].a-fr[i-1].b >= HeldMinNs {
			d.silent = append(d.silent, ival{fr[i-1].b, fr[i].a})
		}
	}
	d.frames = nil
	for i, g := range d.gaps {
		dur := g.b - g.a
		device := m.GapDeviceNs
		// Each part of a gap keeps its share of the gap's time outside the
		// intervals left out (all of it when none is).
		kept := d.kept[i]
		cause, confirmed, launched, launchTs := b.gapCause(g, d)
		label := cause
		// A late launch is the host's only where the host recorded work:
		// the part of the gap in which no launching thread had a frame
		// open for HeldMinNs or more shows the host idle too (work outside
		// the profiler's view), no cause the trace can name
		// (event_sync_multi_stream: 18.4 ms between two matmuls).
		var silent int64
		if cause == CauseHost {
			silent = overlap(g.a, g.b, d.silent)
		}
		host := func(ns int64) {
			u := min(mulDiv(silent, kept, dur), ns)
			add(CauseOther, false, u)
			add(cause, confirmed, ns-u)
		}
		// A gap that opens inside a sync call is the sync's up to the
		// call's length: without the call the host would have spent that
		// long ahead of the device; the rest is what the host did after it
		// returned, the cause the launch that ends the gap gives (the sync
		// area's gpu_gap_ns, sql/sync.sql, counts the same part). A gap
		// the device held (its work launched long before it ran) is the
		// device's, the sync waiting on it (the sync area's held_ns).
		//
		// A sync that blocked on through idle gaps of HeldMinNs or more
		// waited for work the trace does not show (the sync area's held_ns,
		// sql/evidence_base.sql): that part of this gap is the device's,
		// and the sync's own part is at most the call less all it held.
		if s := containing(d.sync, g.a); s >= 0 && launched && cause != CauseDevice {
			held, heldHere := d.held(d.sync[s], g)
			heldHere = min(heldHere, dur)
			part := max(0, min(dur-heldHere, d.sync[s].b-d.sync[s].a-held))
			// The rest of the kept time goes to the last part, so that
			// the parts add up to it exactly.
			sp, hp := mulDiv(part, kept, dur), mulDiv(heldHere, kept, dur)
			if fr := syncFrameAt(d, g.a); fr != nil && fr.node != nil {
				fr.node.GapNs += sp
			}
			add(CauseSync, launchTs >= g.a, sp)
			add(CauseDevice, true, hp)
			host(kept - sp - hp)
			switch {
			case 2*part >= dur:
				label = CauseSync
			case 2*heldHere >= dur:
				label = CauseDevice
			case 2*silent >= dur:
				label = CauseOther
			}
		} else {
			host(kept)
			if 2*silent >= dur {
				label = CauseOther
			}
		}
		m.IdleNoLaunchNs += mulDiv(dur-overlap(g.a, g.b, launches), kept, dur)
		if i := b.topAt(rs.key, g.a+dur/2); i >= 0 {
			b.top[i].gap.Cause = label
		}
		if dur < KernelWaitMaxNs {
			m.GapDeviceShortNs += m.GapDeviceNs - device
		}
	}
}

// launchedKernels adds the rank's kernels that a launch call launched to
// LaunchedKernelNs, the part of them that ran while that call was open to
// SyncLaunchNs, and returns those calls' intervals and the intervals in
// which their operations waited, launched, to start (from the call's
// return to the operation's start), each merged. Calls that returned
// inside the rank's GPU span count as queued; calls that returned before
// it count only where the GPU then ran back to back (idle under
// BackToBackIdle of its span): work launched before the GPU began waited
// behind something the trace does not show, or the clocks are offset, and
// an offset would leave the GPU as spaced out as the launches were
// (vllm_decode_full_mi300x: launches 18-917 µs apart by 2.3 ms, their
// kernels back to back from 8.4 ms: queued behind the previous step).
func (b *builder) launchedKernels(d *rankData) (calls, queued []ival) {
	m := &b.m
	first := int64(math.MaxInt64)
	if len(d.busy) > 0 {
		first = d.busy[0].a
	}
	if n := len(d.busy); n > 0 {
		if span := d.busy[n-1].b - d.busy[0].a; span > 0 && float64(span-ivalsLen(d.busy)) < BackToBackIdle*float64(span) {
			first = math.MinInt64
		}
	}
	calls = make([]ival, 0, len(d.ops))
	for _, i := range d.ops {
		o := &b.ops[i]
		if o.host != hostLaunch {
			continue
		}
		calls = append(calls, ival{b.hostTs(o), b.hostEnd(o)})
		if o.a > b.hostEnd(o) && b.hostEnd(o) >= first {
			queued = append(queued, ival{b.hostEnd(o), o.a})
		}
		if b.op(o).Kind != OpKernel {
			continue
		}
		m.LaunchedKernelNs += o.b - o.a
		m.SyncLaunchNs += max(0, min(o.b, b.hostEnd(o))-max(o.a, b.hostTs(o)))
	}
	return mergeIvals(calls), mergeIvals(queued)
}

// mulDiv returns a*b/c, rounded down, without overflow: a and b are at
// most c, all three non-negative (a part of a gap, a gap's kept time, its
// length).
func mulDiv(a, b, c int64) int64 {
	if b == c || c <= 0 {
		return a
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	q, _ := bits.Div64(hi, lo, uint64(c))
	return int64(q)
}

// leftOut is what the capture gate leaves out on rank k (Input.LeftOut),
// as absolute intervals, merged: the start-up and held intervals and the
// edge syncs.
func (b *builder) leftOut(k rankKey, origin int64) (out struct{ idle, edge []ival }) {
	for _, lo := range b.in.LeftOut {
		if lo.Trace != k.trace || lo.Rank != k.rank {
			continue
		}
		for _, x := range lo.Idle {
			out.idle = append(out.idle, ival{origin + x[0], origin + x[1]})
		}
		for _, x := range lo.EdgeSyncs {
			out.edge = append(out.edge, ival{origin + x[0], origin + x[1]})
		}
	}
	out.idle, out.edge = mergeIvals(out.idle), mergeIvals(out.edge)
	return out
}

// held returns how long the sync interval s blocked inside the rank's idle
// gaps of HeldMinNs or more between its GPU work (0 below HeldMinNs in
// all), and how much of that lies in gap g.
func (d *rankData) held(s, g ival) (all, inG int64) {
	if len(d.busy) == 0 {
		return 0, 0
	}
	first, last := d.busy[0].a, d.busy[len(d.busy)-1].b
	i := sort.Search(len(d.gaps), func(i int) bool { return d.gaps[i].b > s.a })
	for ; i < len(d.gaps) && d.gaps[i].a < s.b; i++ {
		x := d.gaps[i]
		if x.b-x.a < HeldMinNs || x.a < first || x.b > last {
			continue
		}
		n := min(s.b, x.b) - max(s.a, x.a)
		all += n
		if x == g {
			inG = n
		}
	}
	if all < HeldMinNs {
		return 0, 0
	}
	return all, inG
}

// keepTop adds g to top, the n longest gaps in the order a stable sort by
// duration, longest first, would give them: g goes after the gaps at least
// as long, and the shortest falls off past n. A trace has hundreds of
// thousands of gaps; the cross-check shows n.
func keepTop(top []Gap, g Gap, n int) []Gap {
	if len(top) == n && g.DurNs <= top[n-1].DurNs {
		return top
	}
	i := sort.Search(len(top), func(i int) bool { return top[i].DurNs < g.DurNs })
	if len(top) < n {
		top = append(top, Gap{})
	}
	copy(top[i+1:], top[i:])
	top[i] = g
	return top
}

// gapCause says why the device was idle in g, from the launch of the
// operation that ends the gap (returned with the launch's time, when one
// ends it; rankCheck gives the part of a launch-ended gap that opened
// inside a sync call to the sync): a launch issued after the gap began
// means the device waited for the host, which sat in a wait frame (wait)
// or worked (host); a launch
// issued before means the device waited on a dependency (device). A gap
// that no launched operation ends (trailing idle, operations without a
// launching call) is wait when the host waited through it, else other.
//
// An operation linked to its operator by External id has no launch time:
// the launch lay inside the operator, so the operator's start bounds it
// from below. A start at or after the gap's start proves a launch after it
// began; an earlier one proves nothing, and the operation counts as not
// launched.
//
// A launch that returned at least HeldMinNs before the operation started,
// with most of the gap after it, is device-side: the queue was held by work
// the trace does not show or by a dependency.
func (b *builder) gapCause(g ival, d *rankData) (cause string, confirmed, launched bool, launchTs int64) {
	ops := d.ops
	k := sort.Search(len(ops), func(i int) bool { return b.ops[ops[i]].a >= g.b })
	var launchEnd, operTs int64
	haveLaunch, haveOper := false, false
	for ; k < len(ops) && b.ops[ops[k]].a == g.b; k++ {
		o := &b.ops[ops[k]]
		switch o.host {
		case hostLaunch:
			if !haveLaunch || b.hostTs(o) < launchTs {
				launchTs, launchEnd, haveLaunch = b.hostTs(o), b.hostEnd(o), true
			}
		case hostOper:
			if b.hostTs(o) >= g.a && (!haveOper || b.hostTs(o) < operTs) {
				operTs, haveOper = b.hostTs(o), true
			}
		}
	}
	if !haveLaunch && haveOper {
		launchTs, haveLaunch = operTs, true
	}
	waiting := 2*overlap(g.a, g.b, d.wait) >= g.b-g.a
	if !haveLaunch {
		// Nothing the host launched ends this gap: trailing idle, or
		// operations without a launching call.
		if waiting {
			return CauseWait, false, false, 0
		}
		return CauseOther, false, false, 0
	}
	switch {
	case launchEnd > 0 && g.b-launchEnd >= HeldMinNs && 2*(g.b-max(launchEnd, g.a)) >= g.b-g.a:
		// Launched, yet the device stayed idle long after the call
		// returned: it was held by work the trace does not show (queued
		// before the window, another process) or a dependency, not by the
		// host.
		return CauseDevice, true, true, launchTs
	case launchTs >= g.a && waiting:
		return CauseWait, true, true, launchTs
	case launchTs >= g.a:
		return CauseHost, true, true, launchTs
	}
	return CauseDevice, true, true, launchTs
}

// syncFrameAt returns the outermost sync frame of a launching thread open
// at t, or nil.
func syncFrameAt(d *rankData, t int64) *syncFrame {
	fr := d.syncFr
	k := sort.Search(len(fr), func(i int) bool { return fr[i].ts > t })
	for j := k - 1; j >= 0 && j >= k-16; j-- {
		if f := &fr[j]; f.ts <= t && t < f.end {
			return f
		}
	}
	return nil
}

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// edgeNote says how much of the wall lies outside the GPU span (before
// the first GPU operation, after the last), "" when none does.
func edgeNote(m Metrics) string {
	if m.EdgeIdleNs <= 0 {
		return ""
	}
	return fmt.Sprintf("; the %s ms of wall before the first GPU operation and after the last left out", ms(m.EdgeIdleNs))
}

// leftOutNote says what the capture gate left out of the slice
// (Input.LeftOut), "" when nothing was.
func leftOutNote(m Metrics) string {
	var parts []string
	if m.LeftOutIdleNs > 0 {
		parts = append(parts, fmt.Sprintf("the %s ms of GPU idle inside start-up or held intervals", ms(m.LeftOutIdleNs)))
	}
	switch {
	case m.EdgeSyncs == 1:
		parts = append(parts, fmt.Sprintf("1 edge sync (%s ms of host time)", ms(m.EdgeSyncNs)))
	case m.EdgeSyncs > 1:
		parts = append(parts, fmt.Sprintf("%d edge syncs (%s ms of host time)", m.EdgeSyncs, ms(m.EdgeSyncNs)))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, " and ") + " left out, as the rules do (see Capture quality)"
}

// hostBase says what the launching threads' host time is a share of: the
// GPU span, once per launching thread; over several ranks, each thread
// its own rank's span (LaunchSpanNs: dlrm_8rank's 16 threads over 8 ranks
// share 2 × the summed span, not 16 ×).
func hostBase(m Metrics) string {
	switch n := m.LaunchThreads; {
	case n == 0: // a Result from before LaunchThreads
		return pct(share(m.HostNs(), m.SpanNs())) + " of it"
	case n == 1:
		return pct(share(m.HostNs(), m.SpanNs())) + " of it, 1 launching thread"
	case m.Ranks > 1 && m.LaunchSpanNs > 0:
		return fmt.Sprintf("%s of the %d launching threads' spans, each its rank's GPU span", pct(share(m.HostNs(), m.LaunchSpanNs)), n)
	default:
		return fmt.Sprintf("%s of %d × the span, %d launching threads", pct(share(m.HostNs(), int64(n)*m.SpanNs())), n, n)
	}
}

// queuedSplit splits the idle that work already queued ended into the
// gaps under KernelWaitMaxNs (the device's own time between queued
// kernels) and the longer ones (device-side dependencies: another stream,
// an event, a collective), "" when there is none.
func queuedSplit(m Metrics) string {
	if m.GapDeviceNs <= 0 {
		return ""
	}
	short := m.GapDeviceShortNs
	return fmt.Sprintf(" (%s in gaps under %d µs: the device's own time between queued kernels; %s in longer ones: device-side dependencies)",
		pct(share(short, m.IdleNs)), KernelWaitMaxNs/1000, pct(share(m.GapDeviceNs-short, m.IdleNs)))
}

// blockedIn is what blocks a launching thread on the device.
const blockedIn = "in sync calls, polling the device or launching into a full launch queue"

// queueFullNote names the launch calls a full launch queue held, when any.
func queueFullNote(m Metrics) string {
	if m.QueueFullCalls == 0 {
		return ""
	}
	depth := table.Int(m.QueueFullMinDepth)
	if m.QueueFullMaxDepth != m.QueueFullMinDepth {
		depth += " to " + table.Int(m.QueueFullMaxDepth)
	}
	return fmt.Sprintf(" (%d calls that queue GPU work, each of %d µs or more with %s launches queued ahead of it (%d or more), held the host %s ms: the device had more work queued than the launch queue holds)",
		m.QueueFullCalls, QueueFullMinNs/1000, depth, QueueFullDepth, ms(m.QueueFullNs))
}

// SerialLaunchShare is the share of the launched kernels' time
// (Metrics.LaunchedKernelNs) that must run inside its own launch call for
// SerialLaunch to read launches as returning once their work has run. Our
// choice: a CUDA or ROCm launch returns in microseconds, before its kernel
// starts (shared traces: under 1%); MTIA's runFunction holds 99.8%.
const SerialLaunchShare = 0.9

// SerialLaunch says, as a hypothesis, that the slice's launch calls return
// only once their kernel has run, when SerialLaunchShare of the launched
// kernels' time ran inside its own call and those kernels are at least
// half the GPU time: the host cannot queue work ahead, so the device idles
// while the host works between launch calls. "" otherwise.
func (m Metrics) SerialLaunch() string {
	if m.LaunchedKernelNs == 0 || 2*m.LaunchedKernelNs < m.GPUTimeNs || share(m.SyncLaunchNs, m.LaunchedKernelNs) < SerialLaunchShare || m.IdleNs <= 0 {
		return ""
	}
	return fmt.Sprintf("launch calls return only once their kernel has run: %s of the %s ms of kernels a launch call launched ran while that call was still open, so the host cannot queue work ahead and the device idles whenever the host works between launch calls; %s of the GPU idle (%s of %s ms) fell while no launch call was open, the host's own work between the calls (host and device serialised: a hypothesis)",
		pct(share(m.SyncLaunchNs, m.LaunchedKernelNs)), ms(m.LaunchedKernelNs), pct(share(m.IdleNoLaunchNs, m.IdleNs)), ms(m.IdleNoLaunchNs), ms(m.IdleNs))
}

// reason states the numbers behind a verdict.
func reason(m Metrics, r Rule) string {
	if m.GPUTimeNs == 0 {
		return "no GPU operation in the slice"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "GPU busy %s of %s ms GPU span (%d rank(s)%s%s); idle %s ms: gaps opened by sync calls %s, launching thread waiting for work %s, launches issued after the device went idle %s, work already queued %s%s, other %s (mechanism-linked: %s of idle)",
		pct(m.Busy()), ms(m.SpanNs()), m.Ranks, edgeNote(m), leftOutNote(m), ms(m.IdleNs),
		pct(m.GapShare(CauseSync)), pct(m.GapShare(CauseWait)), pct(m.GapShare(CauseHost)), pct(m.GapShare(CauseDevice)), queuedSplit(m), pct(m.GapShare(CauseOther)),
		pct(share(m.GapConfirmedNs, m.IdleNs)))
	queued := pct(m.Queued()) + " of the GPU span"
	if m.HostNs() == 0 && m.LaunchThreads > 0 && m.Queued() == 0 {
		// Every launch returned before the span began: the 0% is no
		// measurement (launchedKernels does not count such work as queued).
		queued = "not measured (every launch returned before the GPU span began)"
	}
	fmt.Fprintf(&sb, "; exposed communication %s of the GPU span; launching threads blocked (%s) while the GPU was busy %s of the GPU span%s; launched work waiting behind the busy GPU %s", pct(m.Comm()), blockedIn, pct(m.Blocked()), queueFullNote(m), queued)
	if host := m.HostNs(); host > 0 {
		fmt.Fprintf(&sb, "; launching threads' host self time inside the GPU span %s ms (%s): working %s, blocked (%s) %s, waiting (for work, data or the backward) %s",
			ms(host), hostBase(m), pct(share(m.HostWorkNs, host)), blockedIn, pct(share(m.HostSyncNs, host)), pct(share(m.HostWaitNs, host)))
	} else if m.LaunchThreads > 0 {
		// The launches all came before the GPU ran them (a graph queued
		// ahead): nothing of the host overlaps the span.
		if m.Queued() > 0 {
			sb.WriteString("; the launching threads recorded no host time inside the GPU span: the GPU ran back to back work launched before it began, queued behind work the trace does not show, so the queue does not show the host's pace between steps")
		} else {
			sb.WriteString("; the launching threads recorded no host time inside the GPU span: the GPU ran work launched before it began, with idle between, as work queued behind an earlier step or host and device clocks offset would show")
		}
	}
	fmt.Fprintf(&sb, ". Rule %s (%s).", r.Name, r.Doc)
	return sb.String()
}
