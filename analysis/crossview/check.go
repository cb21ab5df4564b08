package crossview

import (
	"fmt"
	"sort"
	"strings"
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
	// CommExposedMin: exposed communication share of the wall.
	CommExposedMin = 0.20
	// BlockedAhead: the launching threads blocked in sync calls while the
	// device was busy, share of the wall: the host was ahead of the device.
	BlockedAhead = 0.05
	// GraphCoverageMin: below it graph replays hide too many kernels to
	// measure idle time.
	GraphCoverageMin = 0.50
	// HeldMinNs: an operation that starts this long after its launching
	// call returned, with the device idle for most of the gap before it,
	// was held on the device side (sql/capture.sql's held kind).
	HeldMinNs = 1_000_000
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
		When: func(m Metrics) bool { return m.Comm() >= CommExposedMin }, Label: fixed(Hypothesis)},
	{Name: "device-saturated", Verdict: VerdictGPU, Doc: "busy >= 0.85; confirmed when blocked >= 0.05",
		When: func(m Metrics) bool { return m.Busy() >= BusyGPUBound },
		Label: func(m Metrics) string {
			if m.Blocked() >= BlockedAhead {
				return Confirmed
			}
			return Hypothesis
		}},
	{Name: "waiting", Verdict: VerdictWaiting, Doc: "idle >= 0.15 and wait >= 0.40; confirmed when the mechanism links half of it",
		When:  func(m Metrics) bool { return m.Idle() >= IdleMin && m.GapShare(CauseWait) >= WaitShareMin },
		Label: linked(func(m Metrics) int64 { return m.GapWaitConfirmedNs }, func(m Metrics) int64 { return m.GapWaitNs })},
	{Name: "sync-gaps", Verdict: VerdictSync, Doc: "idle >= 0.15 and sync >= 0.40; confirmed when the mechanism links half of it",
		When:  func(m Metrics) bool { return m.Idle() >= IdleMin && m.GapShare(CauseSync) >= SyncShareMin },
		Label: linked(func(m Metrics) int64 { return m.GapSyncConfirmedNs }, func(m Metrics) int64 { return m.GapSyncNs })},
	{Name: "host-gaps", Verdict: VerdictHost, Doc: "idle >= 0.15 and host >= 0.50; confirmed when the mechanism links half of it; hypothesis with python stacks",
		When: func(m Metrics) bool { return m.Idle() >= IdleMin && m.GapShare(CauseHost) >= HostShareMin },
		Label: func(m Metrics) string {
			if m.StackCapture() {
				return Hypothesis
			}
			return linked(func(m Metrics) int64 { return m.GapHostConfirmedNs }, func(m Metrics) int64 { return m.GapHostNs })(m)
		}},
	{Name: "device-mostly-busy", Verdict: VerdictGPU, Doc: "busy >= 0.70 and blocked >= 0.05",
		When: func(m Metrics) bool { return m.Busy() >= BusyMostly && m.Blocked() >= BlockedAhead }, Label: fixed(Hypothesis)},
	{Name: "otherwise", Verdict: VerdictInconclusive, Doc: "no rule above holds",
		When: func(Metrics) bool { return true }, Label: always("")},
}

// Decide applies Rules to the metrics and returns the rule that holds.
func Decide(m Metrics) (Rule, string) {
	for _, r := range Rules {
		if r.When(m) {
			return r, r.Label(m)
		}
	}
	r := Rules[len(Rules)-1]
	return r, ""
}

// rankData is what the cross-check needs about one rank.
type rankData struct {
	ops     []opIn
	threads map[int32]int // launching threads (Input.Threads) -> launches
	main    int32         // the thread with the most launches
	sync    []ival        // outermost sync frames of the launching threads, merged
	syncFr  []int32       // the same frames, by start
	wait    []ival        // outermost wait frames of the launching threads
}

// measure computes the cross-check's numbers and gaps, and the GPU idle
// time each sync frame opened (for the GPU view's sync nodes). decide
// finishes the cross-check once the trees are built.
func (b *builder) measure() Check {
	var m Metrics
	per := map[rankKey]*rankData{}
	for _, o := range b.ops {
		d := per[o.key]
		if d == nil {
			d = &rankData{threads: map[int32]int{}}
			per[o.key] = d
		}
		d.ops = append(d.ops, o)
		if h := o.linked(); h >= 0 {
			d.threads[b.frames[h].Thread]++
		}
		m.GPUTimeNs += o.b - o.a
	}
	for _, d := range per {
		best := -1
		for t, n := range d.threads {
			if n > best || (n == best && b.in.Threads[t].Name < b.in.Threads[d.main].Name) {
				d.main, best = t, n
			}
		}
	}
	for i, f := range b.frames {
		if f.Kind == HostPython {
			m.PythonFrames++
		}
		if f.CallStack != 0 {
			m.CallStackOps++
		}
		d := per[b.rankOf(f)]
		if d == nil {
			continue
		}
		if _, ok := d.threads[f.Thread]; !ok {
			continue
		}
		if b.clipNs[i] > 0 {
			switch b.class[i] {
			case clsSync:
				m.HostSyncNs += b.selfNs[i]
			case clsWaiting:
				m.HostWaitNs += b.selfNs[i]
			default:
				m.HostWorkNs += b.selfNs[i]
			}
		}
		p := b.parent[i]
		switch {
		case b.class[i] == clsSync && (p < 0 || b.class[p] != clsSync):
			d.sync = append(d.sync, ival{f.TsNs, f.End()})
			d.syncFr = append(d.syncFr, int32(i))
		case b.class[i] == clsWaiting && (p < 0 || b.class[p] != clsWaiting):
			d.wait = append(d.wait, ival{f.TsNs, f.End()})
		}
	}
	m.WallNs = b.wallNs()
	var gaps []Gap
	keys := make([]rankKey, 0, len(b.ranks))
	for k := range b.ranks {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].trace < keys[j].trace || (keys[i].trace == keys[j].trace && keys[i].rank < keys[j].rank)
	})
	for _, k := range keys {
		rs := b.ranks[k]
		if ivalsLen(rs.dev) > 0 {
			m.Ranks++
		}
		d := per[k]
		if d == nil {
			m.IdleNs += ivalsLen(rs.dev)
			m.GapOtherNs += ivalsLen(rs.dev)
			continue
		}
		gaps = b.rankCheck(rs, d, &m, gaps)
	}
	c := Check{Metrics: m, TopGaps: []Gap{}, Notes: []string{}}
	for i := range gaps {
		b.hostAt(&gaps[i], per)
	}
	c.TopGaps = append(c.TopGaps, gaps...)
	return c
}

// decide adds the graph replay counts, the notes and the verdict.
func (b *builder) decide(c *Check) {
	m := &c.Metrics
	m.GraphRecorded, m.GraphExpected = b.graphRecorded, b.graphExpected
	switch {
	case m.PythonFrames > 0:
		c.Notes = append(c.Notes, fmt.Sprintf("python stacks were captured (%d python frames): stack capture inflates host time, so the host-side numbers are upper bounds and host-bound is at most a hypothesis", m.PythonFrames))
	case m.CallStackOps > 0:
		c.Notes = append(c.Notes, fmt.Sprintf("python stacks were captured (%d operators carry a Call stack): stack capture inflates host time, so the host-side numbers are upper bounds and host-bound is at most a hypothesis", m.CallStackOps))
	}
	if m.GraphExpected > 0 && m.GraphCoverage() < 1 {
		c.Notes = append(c.Notes, fmt.Sprintf("graph replays: %.1f%% of the replayed kernels were recorded", 100*m.GraphCoverage()))
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
		c.Reason += " Later rules that also hold: " + strings.Join(c.AlsoHolds, ", ") + "."
	}
}

// rankCheck measures one rank: busy and idle time, exposed communication,
// blocked time, and each gap's cause. It adds the rank's gaps to top, the
// longest gaps so far (keepTop).
func (b *builder) rankCheck(rs *rankSlice, d *rankData, m *Metrics, top []Gap) []Gap {
	var busy, comm, other []ival
	for _, o := range d.ops {
		iv := ival{o.a, o.b}
		busy = append(busy, iv)
		if o.op.Class == ClassComm {
			comm = append(comm, iv)
		} else {
			other = append(other, iv)
		}
	}
	busy = mergeIvals(busy)
	busy = intersect(busy, rs.dev)
	comm, other = mergeIvals(comm), mergeIvals(other)
	m.BusyNs += ivalsLen(busy)
	wall := ivalsLen(rs.dev)
	m.IdleNs += wall - ivalsLen(busy)
	m.CommNs += ivalsLen(comm)
	m.CommExposedNs += ivalsLen(comm) - intersectLen(comm, other)
	d.sync, d.wait = mergeIvals(d.sync), mergeIvals(d.wait)
	sort.Slice(d.syncFr, func(i, j int) bool { return b.frames[d.syncFr[i]].TsNs < b.frames[d.syncFr[j]].TsNs })
	m.BlockedWhileBusyNs += intersectLen(intersect(d.sync, rs.dev), busy)

	// The operation that ends each gap: operations by clipped start.
	ops := d.ops
	sort.Slice(ops, func(i, j int) bool { return ops[i].a < ops[j].a })
	for _, g := range complement(rs.dev, busy) {
		dur := g.b - g.a
		cause, confirmed := b.gapCause(g, ops, d)
		if cause == CauseSync {
			if fi := b.syncFrameAt(d, g.a); fi >= 0 {
				if b.syncGap == nil {
					b.syncGap = map[int32]int64{}
				}
				b.syncGap[fi] += dur
			}
		}
		switch cause {
		case CauseSync:
			m.GapSyncNs += dur
		case CauseWait:
			m.GapWaitNs += dur
		case CauseHost:
			m.GapHostNs += dur
		case CauseDevice:
			m.GapDeviceNs += dur
		default:
			m.GapOtherNs += dur
		}
		if confirmed {
			m.GapConfirmedNs += dur
			switch cause {
			case CauseSync:
				m.GapSyncConfirmedNs += dur
			case CauseWait:
				m.GapWaitConfirmedNs += dur
			case CauseHost:
				m.GapHostConfirmedNs += dur
			}
		}
		top = keepTop(top, Gap{Trace: rs.key.trace, Rank: rs.key.rank, StartNs: g.a - rs.origin, DurNs: dur, Cause: cause}, b.opts.TopGaps)
	}
	return top
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
// operation that ends the gap: when a sync call of a launching thread was
// open at the gap's start, the host was blocked while the device ran dry
// (sync); else a launch issued after the gap began means the device waited
// for the host, which sat in a wait frame (wait) or worked (host); a launch
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
func (b *builder) gapCause(g ival, ops []opIn, d *rankData) (string, bool) {
	k := sort.Search(len(ops), func(i int) bool { return ops[i].a >= g.b })
	var launchTs, launchEnd, operTs int64
	haveLaunch, haveOper := false, false
	for ; k < len(ops) && ops[k].a == g.b; k++ {
		switch {
		case ops[k].launch >= 0:
			ts := b.frames[ops[k].launch].TsNs
			if !haveLaunch || ts < launchTs {
				launchTs, launchEnd, haveLaunch = ts, b.frames[ops[k].launch].End(), true
			}
		case ops[k].oper >= 0:
			if ts := b.frames[ops[k].oper].TsNs; ts >= g.a && (!haveOper || ts < operTs) {
				operTs, haveOper = ts, true
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
			return CauseWait, false
		}
		return CauseOther, false
	}
	switch {
	case containing(d.sync, g.a) >= 0:
		return CauseSync, launchTs >= g.a
	case launchEnd > 0 && g.b-launchEnd >= HeldMinNs && 2*(g.b-max(launchEnd, g.a)) >= g.b-g.a:
		// Launched, yet the device stayed idle long after the call
		// returned: it was held by work the trace does not show (queued
		// before the window, another process) or a dependency, not by the
		// host.
		return CauseDevice, true
	case launchTs >= g.a && waiting:
		return CauseWait, true
	case launchTs >= g.a:
		return CauseHost, true
	}
	return CauseDevice, true
}

// syncFrameAt returns the outermost sync frame of a launching thread open
// at t, or -1.
func (b *builder) syncFrameAt(d *rankData, t int64) int32 {
	fr := d.syncFr
	k := sort.Search(len(fr), func(i int) bool { return b.frames[fr[i]].TsNs > t })
	for j := k - 1; j >= 0 && j >= k-16; j-- {
		if f := b.frames[fr[j]]; f.TsNs <= t && t < f.End() {
			return fr[j]
		}
	}
	return -1
}

// hostAt fills a gap's host stack: the innermost frame of the rank's main
// launching thread open at the gap's middle.
func (b *builder) hostAt(g *Gap, per map[rankKey]*rankData) {
	key := rankKey{trace: g.Trace, rank: g.Rank}
	_, found := b.ranks[key]
	d := per[key]
	if !found || d == nil {
		return
	}
	rs := b.ranks[key]
	mid := rs.origin + g.StartNs + g.DurNs/2
	best := int32(-1)
	for i, f := range b.frames {
		if f.Thread != d.main || f.TsNs > mid || f.End() <= mid { // d.main is a thread of key's rank
			continue
		}
		if best < 0 || b.depth[i] > b.depth[best] {
			best = int32(i)
		}
	}
	if best < 0 {
		return
	}
	g.HostClass = classNames[b.class[best]]
	var path []string
	for j := best; j >= 0 && len(path) < 4; j = b.parent[j] {
		f := b.frames[j]
		path = append(path, b.frameName(f.Kind, f.Name))
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	g.Host = path
}

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// reason states the numbers behind a verdict.
func reason(m Metrics, r Rule) string {
	if m.GPUTimeNs == 0 {
		return "no GPU operation in the slice"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "GPU busy %s of %s ms wall (%d rank(s)); idle %s ms: gaps opened by sync calls %s, launching thread waiting for work %s, launches issued after the device went idle %s, device-side dependencies %s, other %s (mechanism-linked: %s of idle)",
		pct(m.Busy()), ms(m.WallNs), m.Ranks, ms(m.IdleNs),
		pct(m.GapShare(CauseSync)), pct(m.GapShare(CauseWait)), pct(m.GapShare(CauseHost)), pct(m.GapShare(CauseDevice)), pct(m.GapShare(CauseOther)),
		pct(share(m.GapConfirmedNs, m.IdleNs)))
	fmt.Fprintf(&sb, "; exposed communication %s of wall; launching threads blocked in sync calls while the GPU was busy %s of wall", pct(m.Comm()), pct(m.Blocked()))
	if host := m.HostWorkNs + m.HostSyncNs + m.HostWaitNs; host > 0 {
		fmt.Fprintf(&sb, "; launching threads' host time %s ms: working %s, blocked in sync %s, waiting for work %s",
			ms(host), pct(share(m.HostWorkNs, host)), pct(share(m.HostSyncNs, host)), pct(share(m.HostWaitNs, host)))
	}
	fmt.Fprintf(&sb, ". Rule %s (%s).", r.Name, r.Doc)
	return sb.String()
}
