package crossview

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/table"
)

// ErrNoInput is returned by Build when it is given no rows at all (not even
// a trace origin: nothing is loaded).
var ErrNoInput = errors.New("crossview: no rows: load a trace first")

type rankKey struct {
	trace string
	rank  int
}

// rankSlice is the slice on one rank: the host intervals frames are clipped
// to, the selected step intervals, and the device-side intervals that the
// wall time and the GPU gaps are measured on.
type rankSlice struct {
	key    rankKey
	origin int64
	host   []ival // frames are clipped to these; nil = not clipped (the whole rank)
	steps  []ival // selected steps (phase/step filter), nil otherwise
	window []ival // the window alone, nil without one
	dev    []ival // wall time and gaps
}

// Build builds the GPU view, the CPU view and the cross-check of one slice
// of the rows the crossview preset returned, all of them held in in.Frames.
func Build(in *Input, s Slice, opts Options) (*Result, error) {
	res, errs := BuildAll(in, []Slice{s}, opts)
	return res[0], errs[0]
}

// BuildAll builds the cross-view of each slice from one Input whose frames
// are all in in.Frames: it streams them, in start order, through a Stream.
// A slice whose cross-view fails has a nil Result and its error.
func BuildAll(in *Input, slices []Slice, opts Options) ([]*Result, []error) {
	if in != nil {
		prepare(in)
	}
	st := NewStream(in, slices, opts)
	if in != nil {
		for _, i := range startOrder(in.Frames) {
			if err := st.Frame(&in.Frames[i]); err != nil {
				panic(err) // startOrder is the order Frame checks
			}
		}
	}
	return st.Results()
}

// prepare gives an Input built with every frame in Frames what a Stream
// needs before the frames: each thread's span and each operation's host
// frame.
func prepare(in *Input) {
	in.Spans = make([]Span, len(in.Threads))
	seen := make([]bool, len(in.Threads))
	for i := range in.Frames {
		f := &in.Frames[i]
		sp := &in.Spans[f.Thread]
		if !seen[f.Thread] {
			*sp, seen[f.Thread] = Span{f.TsNs, f.End()}, true
			continue
		}
		sp.StartNs, sp.EndNs = min(sp.StartNs, f.TsNs), max(sp.EndNs, f.End())
	}
	if in.Hosts {
		return
	}
	byID := make(map[int64]int32, len(in.Frames))
	for i := range in.Frames {
		byID[in.Frames[i].ID] = int32(i)
	}
	for i := range in.Ops {
		o := &in.Ops[i]
		o.HostThread = -1
		if x, ok := byID[o.Launch]; ok && o.Launch != 0 {
			f := &in.Frames[x]
			o.HostTsNs, o.HostDurNs, o.HostThread = f.TsNs, f.DurNs, f.Thread
			continue
		}
		o.Launch = 0 // no such call among the frames: the operator links it, if any
		if x, ok := byID[o.Operator]; ok && o.Operator != 0 {
			f := &in.Frames[x]
			o.HostTsNs, o.HostDurNs, o.HostThread = f.TsNs, f.DurNs, f.Thread
		} else {
			o.Operator = 0
		}
	}
	in.Hosts = true
}

// startOrder returns the indexes of frames in the order a Stream takes
// them: by thread, then start ascending, end descending, ID.
func startOrder(frames []Frame) []int32 {
	order := make([]int32, len(frames))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(i, j int32) int {
		p, q := &frames[i], &frames[j]
		return cmp.Or(cmp.Compare(p.Thread, q.Thread), cmp.Compare(p.TsNs, q.TsNs), cmp.Compare(q.End(), p.End()), cmp.Compare(p.ID, q.ID))
	})
	return order
}

// Stream builds the cross-views of several slices from one pass over the
// host frames, which it never holds: everything but the frames (threads
// with their spans, operations with their host frames, steps, origins)
// comes first, in the Input given to NewStream; then each frame, through
// Frame, in its thread's start order (ts ascending, end descending, ID;
// threads may interleave). Memory is the operations', the trees' and one
// open call stack per thread: a trace of tens of millions of frames streams
// through in the size of its GPU work.
type Stream struct {
	in   *Input
	bs   []*builder // nil for a slice that failed at once
	es   []error
	last []Frame // each thread's last frame, by thread index: the order is checked
}

// NewStream starts the cross-views of slices over in, whose Spans and
// Hosts must be set (BuildAll's prepare, or the preset's rows).
func NewStream(in *Input, slices []Slice, opts Options) *Stream {
	st := &Stream{in: in, bs: make([]*builder, len(slices)), es: make([]error, len(slices))}
	for i, s := range slices {
		st.bs[i], st.es[i] = newBuilder(in, s, opts)
	}
	return st
}

// Frame takes the next frame. A frame out of its thread's start order is
// an error: the walk would build wrong stacks from it.
func (st *Stream) Frame(f *Frame) error {
	if int(f.Thread) >= len(st.in.Threads) || f.Thread < 0 {
		return fmt.Errorf("crossview: frame %d names thread %d, of %d", f.ID, f.Thread, len(st.in.Threads))
	}
	for int(f.Thread) >= len(st.last) {
		st.last = append(st.last, Frame{})
	}
	if p := &st.last[f.Thread]; p.ID != 0 && cmp.Or(cmp.Compare(p.TsNs, f.TsNs), cmp.Compare(f.End(), p.End()), cmp.Compare(p.ID, f.ID)) > 0 {
		return fmt.Errorf("crossview: frame %d (start %d ns) comes after frame %d (start %d ns) of its thread: the frames must come in start order", f.ID, f.TsNs, p.ID, p.TsNs)
	}
	st.last[f.Thread] = Frame{ID: f.ID, TsNs: f.TsNs, DurNs: f.DurNs}
	t := &st.in.Threads[f.Thread]
	for _, b := range st.bs {
		if b != nil && b.inSlice(t.Trace, t.Rank) {
			b.frame(f)
		}
	}
	return nil
}

// Results finishes the cross-views, one per slice given to NewStream; a
// slice that failed has a nil Result and its error.
func (st *Stream) Results() ([]*Result, []error) {
	out := make([]*Result, len(st.bs))
	for i, b := range st.bs {
		if b != nil {
			out[i] = b.finish()
		}
	}
	return out, st.es
}

// builder builds one slice's cross-view as the frames stream in.
type builder struct {
	in      *Input
	s       Slice
	opts    Options
	ranks   map[rankKey]*rankSlice
	per     map[rankKey]*rankData
	ops     []opIn  // GPU operations in the slice
	hung    hungOps // the ops that hang from each host frame
	threads map[int32]*threadState
	gaps    []string
	frames  int64 // frames in the slice's ranks
	m       Metrics
	top     []topGap           // each rank's longest GPU idle gaps, by rank and middle, with the host frame found at each one's middle
	topOf   map[rankKey][2]int // a rank's part of top

	gpu, cpu *bnode // the trees' roots
	cpuTotal int64
	graphs   []graphLaunch
	waits    map[string]bool // IsWait by name
	names    map[string]string
	stacks   map[string]*callStack   // a Call stack arg split into frames, outermost first, by arg
	engine   map[rankKey][]engineRun // the autograd engine's functions, by rank and thread
	// otherStreams are the streams of the slice's ranks that a slice of
	// one stream leaves out.
	otherStreams map[int64]bool
}

// engineRun is one thread's autograd engine functions: their starts,
// ascending, and the latest end of those up to each.
type engineRun struct {
	thread int32
	ts     []int64
	end    []int64
}

// threadState is one thread's open call stack and what the cross-check
// keeps of a launching thread.
type threadState struct {
	id   int32 // index in Input.Threads
	key  rankKey
	rs   *rankSlice // its rank's slice
	d    *rankData  // the rank's, when this is one of its launching threads; else nil
	main bool       // the rank's main launching thread
	// engine holds the autograd engine functions of its rank's
	// other threads, on a launching thread (see entry.engA).
	engine []engineRun
	// drain is when the GPU work of its last launch so far (in start
	// order) ends: the latest end of the operations it launched.
	drain int64
	// drainOf is the frame whose launched work drain holds.
	drainOf int64
	stack   []entry
	// next is where the thread's next root frame may start counting: the
	// end of the last root frame closed (see entry.from).
	next int64
	// pyEnd is the end of the python calls counted so far inside the
	// rank's tracked gaps (builder.pyIn).
	pyEnd int64
}

// entry is an open frame.
type entry struct {
	ts, end int64
	kind    HostKind
	name    string // as drawn (frameName)
	clip    int64  // its time inside the slice
	// from is where its counted time starts: its start, or the end of an
	// earlier sibling that overlaps it (the trace's nesting is not always
	// proper: a record_function range can cross the python frames around
	// it), so that no instant of a thread counts twice; next is where its
	// next child's may start.
	from, next    int64
	cnt, kidCnt   int64 // its counted time inside the slice; its children's
	span, kidSpan int64 // the same inside its rank's GPU span (launching threads)
	class         uint8
	sync          bool
	selfWait      bool // waiting in its own self time only (IsSelfWait): its callees are classed on their own
	// engA..engB is where the autograd engine functions of other threads
	// of the rank that start inside it run (engB <= engA: none): its self
	// time there is waiting (the thread called backward() and is blocked
	// while the engine's thread runs it). kidEngCnt and kidEngSpan are its
	// children's counted time and span there.
	engA, engB            int64
	kidEngCnt, kidEngSpan int64
	// pollCnt and pollSpan are its self time polling the device (see
	// PollMinNs): counted and inside its rank's GPU span.
	pollCnt, pollSpan int64
	// full: a launch call a full launch queue held, or a frame inside one
	// (queueFull): its self time is blocked.
	full         bool
	depth        int32
	levels       []string // python levels from its Call stack, drawn above it
	py           []string // the python frames drawn above it and at it
	cnode, gnode *bnode   // its nodes of the CPU and GPU trees, once made
	graph        int32    // index in builder.graphs of a graph launch, -1
}

// graphLaunch is a graph launch in the slice: its node, its graph id when
// an operation records one, and the operations its replay recorded.
type graphLaunch struct {
	site *bnode
	id   int64
	ops  int64
	sig  uint64 // FNV-1a of its recorded operations' names, in order
}

// opIn is a GPU operation in the slice: its clipped interval and its host
// frame (Op.HostTsNs ...). A large trace has millions: it is kept small.
type opIn struct {
	a, b int64 // clipped interval
	i    int32 // index in Input.Ops
	host int8  // hostNone, hostLaunch (its launching call) or hostOper (its operator by External id)
}

// op returns o's operation.
func (b *builder) op(o *opIn) *Op { return &b.in.Ops[o.i] }

// opKey returns the rank of an operation.
func (b *builder) opKey(o *Op) rankKey { return rankKey{b.in.OpTrace(o), o.Rank} }

// hostTs and hostEnd are the start and end of o's host frame.
func (b *builder) hostTs(o *opIn) int64 { return b.op(o).HostTsNs }
func (b *builder) hostEnd(o *opIn) int64 {
	op := b.op(o)
	return op.HostTsNs + op.HostDurNs
}

// hungOps finds the operations that hang from a host frame: pairs of the
// frame's ID and the operation's index in builder.ops, sorted, and a bit
// per frame ID that has any (most frames launch nothing). About 16 bytes
// an operation, where a map of slices took about 70.
type hungOps struct {
	pairs []hungPair
	has   []uint64
}

type hungPair struct {
	id int64
	op int32
}

func (h *hungOps) add(id int64, op int32) { h.pairs = append(h.pairs, hungPair{id, op}) }

// index sorts the pairs and sets the bits; add no more after it.
func (h *hungOps) index() {
	slices.SortFunc(h.pairs, func(p, q hungPair) int { return cmp.Or(cmp.Compare(p.id, q.id), cmp.Compare(p.op, q.op)) })
	var hi int64
	for _, p := range h.pairs {
		hi = max(hi, p.id)
	}
	h.has = make([]uint64, hi/64+1)
	for _, p := range h.pairs {
		if p.id >= 0 {
			h.has[p.id/64] |= 1 << (p.id % 64)
		}
	}
}

// of returns the pairs of the frame with this ID, in the order the
// operations were added.
func (h *hungOps) of(id int64) []hungPair {
	if id < 0 || id/64 >= int64(len(h.has)) || h.has[id/64]&(1<<(id%64)) == 0 {
		return nil
	}
	i, _ := slices.BinarySearchFunc(h.pairs, id, func(p hungPair, id int64) int { return cmp.Compare(p.id, id) })
	j := i
	for j < len(h.pairs) && h.pairs[j].id == id {
		j++
	}
	return h.pairs[i:j]
}

const (
	hostNone int8 = iota
	hostLaunch
	hostOper
)

const (
	clsUnknown uint8 = iota
	clsWorking
	clsSync
	clsWaiting
)

var classNames = [...]string{"", ClassWorking, ClassSync, ClassWaiting}

func newBuilder(in *Input, s Slice, opts Options) (*builder, error) {
	if in == nil || (len(in.Frames) == 0 && len(in.Spans) == 0 && len(in.Ops) == 0 && len(in.Origins) == 0) {
		return nil, ErrNoInput
	}
	if s.HasWindow() && s.WindowEndNs <= s.WindowStartNs {
		return nil, fmt.Errorf("crossview: window %s..%s ms is empty", ms(s.WindowStartNs), ms(s.WindowEndNs))
	}
	if opts.TopGaps <= 0 {
		opts.TopGaps = 5
	}
	b := &builder{in: in, s: s, opts: opts, threads: map[int32]*threadState{},
		gpu: &bnode{n: &Node{}}, cpu: &bnode{n: &Node{}}}
	b.sliceRanks()
	b.engineRuns()
	b.selectOps()
	b.hung.index()
	b.device()
	return b, nil
}

// engineRuns sorts the autograd engine functions of the slice's
// ranks by thread.
func (b *builder) engineRuns() {
	byThread := map[int32][]EngineFunc{}
	for _, es := range b.in.EngineFuncs {
		if th := &b.in.Threads[es.Thread]; b.inSlice(th.Trace, th.Rank) {
			byThread[es.Thread] = append(byThread[es.Thread], es)
		}
	}
	for _, t := range slices.Sorted(maps.Keys(byThread)) {
		fs := byThread[t]
		slices.SortFunc(fs, func(p, q EngineFunc) int { return cmp.Compare(p.TsNs, q.TsNs) })
		r := engineRun{thread: t, ts: make([]int64, len(fs)), end: make([]int64, len(fs))}
		last := int64(math.MinInt64)
		for i, f := range fs {
			last = max(last, f.TsNs+f.DurNs)
			r.ts[i], r.end[i] = f.TsNs, last
		}
		if b.engine == nil {
			b.engine = map[rankKey][]engineRun{}
		}
		k := rankKey{b.in.Threads[t].Trace, b.in.Threads[t].Rank}
		b.engine[k] = append(b.engine[k], r)
	}
}

// engineIn returns where th's engine runs (the autograd engine functions
// of the rank's other threads) that start in [ts, end) run, clipped to
// end: from the first such start to the latest end; a, b with b <= a
// when none starts there.
func engineIn(th *threadState, ts, end int64) (a, b int64) {
	a, b = end, ts
	for _, r := range th.engine {
		lo, _ := slices.BinarySearch(r.ts, ts)
		hi, _ := slices.BinarySearch(r.ts, end)
		if hi > lo {
			a, b = min(a, r.ts[lo]), max(b, min(r.end[hi-1], end))
		}
	}
	return a, b
}

// poll adds to e the stretch [a, end) of its self time when th spent it
// polling the device: PollMinNs or more, through most of which the GPU work
// of th's last launch before it ran, ending within PollSlackNs of when that
// work ended (th.drain): th waited for it as a synchronize call on its
// stream would have.
func (b *builder) poll(th *threadState, e *entry, a, end int64) {
	if th.d == nil || e.class != clsWorking || end-a < PollMinNs ||
		th.drain < a+(end-a)/2 || abs(th.drain-end) > PollSlackNs {
		return
	}
	c, sp := b.counted(th, a, end)
	e.pollCnt += c
	e.pollSpan += sp
	th.d.poll = append(th.d.poll, ival{a, end})
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// counted returns the part of [a, end) that th's frames count (inside its
// rank's host slice, when it has one: entry.cnt) and the part inside its
// rank's GPU span, on a launching thread (entry.span).
func (b *builder) counted(th *threadState, a, end int64) (cnt, span int64) {
	if end <= a {
		return 0, 0
	}
	cnt = end - a
	if rs := th.rs; rs != nil && rs.host != nil {
		cnt = overlap(a, end, rs.host)
	}
	if d := th.d; d != nil {
		span = overlap(a, end, d.hostSpan)
	}
	return cnt, span
}

func (b *builder) inSlice(trace string, rank int) bool {
	return (b.s.Trace == "" || trace == b.s.Trace) && (!b.s.HasRank || rank == b.s.Rank)
}

// frameName is frameName, remembered by name.
func (b *builder) frameName(kind HostKind, name string) string {
	if kind != HostPython {
		return name
	}
	n, ok := b.names[name]
	if !ok {
		if b.names == nil {
			b.names = map[string]string{}
		}
		n = frameName(kind, name)
		b.names[name] = n
	}
	return n
}

func (b *builder) isWait(name string) bool {
	w, ok := b.waits[name]
	if !ok {
		if b.waits == nil {
			b.waits = map[string]bool{}
		}
		w = IsWait(name)
		b.waits[name] = w
	}
	return w
}

// sliceRanks works out each rank's intervals from the window and the steps.
func (b *builder) sliceRanks() {
	b.ranks = map[rankKey]*rankSlice{}
	// The launching threads of each rank: the wall of an unbounded slice
	// is their span with the GPU operations', so that a stray thread (a
	// watchdog polling events long after the profiled work) does not
	// stretch it.
	launching := map[rankKey]bool{} // ranks with a launching thread
	launcher := map[int32]bool{}    // the launching threads
	for i := range b.in.Ops {
		o := &b.in.Ops[i]
		if b.inSlice(b.in.OpTrace(o), o.Rank) && o.HostThread >= 0 && (o.Launch != 0 || o.Operator != 0) &&
			b.inSlice(b.in.Threads[o.HostThread].Trace, b.in.Threads[o.HostThread].Rank) {
			launching[b.opKey(o)] = true
			launcher[o.HostThread] = true
		}
	}
	ext := map[rankKey]*ival{} // every frame and operation
	act := map[rankKey]*ival{} // launching threads' frames and operations
	grow := func(m map[rankKey]*ival, k rankKey, a, e int64) {
		if x, ok := m[k]; ok {
			x.a, x.b = min(x.a, a), max(x.b, e)
		} else {
			m[k] = &ival{a, e}
		}
	}
	for t, sp := range b.in.Spans {
		th := &b.in.Threads[t]
		if sp == (Span{}) || !b.inSlice(th.Trace, th.Rank) {
			continue
		}
		k := rankKey{th.Trace, th.Rank}
		grow(ext, k, sp.StartNs, sp.EndNs)
		if !launching[k] || launcher[int32(t)] {
			grow(act, k, sp.StartNs, sp.EndNs)
		}
	}
	for i := range b.in.Ops {
		o := &b.in.Ops[i]
		if k := b.opKey(o); b.inSlice(k.trace, k.rank) {
			grow(ext, k, o.TsNs, o.End())
			grow(act, k, o.TsNs, o.End())
		}
	}
	stepFilter := b.s.Phase != "" || b.s.HasStep
	steps := map[rankKey][]ival{}
	anySteps := false
	for _, st := range b.in.Steps {
		if !b.inSlice(st.Trace, st.Rank) {
			continue
		}
		anySteps = true
		if (b.s.Phase == "" || st.Phase == b.s.Phase) && (!b.s.HasStep || st.Number == b.s.Step) {
			k := rankKey{st.Trace, st.Rank}
			steps[k] = append(steps[k], ival{st.TsNs, st.TsNs + st.DurNs})
		}
	}
	if stepFilter && anySteps && len(steps) == 0 {
		what := "phase " + b.s.Phase
		if b.s.HasStep {
			what = fmt.Sprintf("step %d", b.s.Step)
			if b.s.Phase != "" {
				what += " of phase " + b.s.Phase
			}
		}
		b.gaps = append(b.gaps, "no step of "+what+" in the trace: the slice is empty")
	}
	if stepFilter && !anySteps {
		b.gaps = append(b.gaps, "the trace has no step annotations ("+evidence.StepAnnotations+"): a phase or step cannot be selected, so the slice is empty")
	}
	for k, e := range ext {
		rs := &rankSlice{key: k, origin: b.origin(k.trace, e.a)}
		if b.s.HasWindow() {
			rs.window = []ival{{rs.origin + b.s.WindowStartNs, rs.origin + b.s.WindowEndNs}}
		}
		switch {
		case stepFilter:
			rs.steps = mergeIvals(steps[k])
			rs.host = rs.steps
			if rs.window != nil {
				rs.host = intersect(rs.steps, rs.window)
			}
			if rs.host == nil {
				rs.host = []ival{} // clipped to nothing
			}
		case rs.window != nil:
			rs.host = rs.window
			rs.dev = rs.window
		default:
			rs.dev = []ival{*act[k]}
		}
		b.ranks[k] = rs
	}
}

// rankKeys returns the slice's ranks in order.
func (b *builder) rankKeys() []rankKey {
	keys := make([]rankKey, 0, len(b.ranks))
	for k := range b.ranks {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].trace < keys[j].trace || (keys[i].trace == keys[j].trace && keys[i].rank < keys[j].rank)
	})
	return keys
}

// origin returns the first timestamp of a trace (the origin of windows).
func (b *builder) origin(trace string, fallback int64) int64 {
	if o, ok := b.in.Origins[trace]; ok {
		return o
	}
	// No origin row: the first event of the trace over all its ranks.
	first := int64(math.MaxInt64)
	for t, sp := range b.in.Spans {
		if sp != (Span{}) && b.in.Threads[t].Trace == trace && sp.StartNs < first {
			first = sp.StartNs
		}
	}
	for i := range b.in.Ops {
		if o := &b.in.Ops[i]; b.in.OpTrace(o) == trace && o.TsNs < first {
			first = o.TsNs
		}
	}
	if first == math.MaxInt64 {
		return fallback
	}
	if b.in.Origins == nil {
		b.in.Origins = map[string]int64{}
	}
	b.in.Origins[trace] = first
	return first
}

// selectOps keeps the GPU operations of the slice with their clipped
// interval. With a phase or step, an operation belongs to the slice when
// the call that launched it (else the operator linked by External id, else
// the operation itself) starts in a selected step; the device intervals of
// the rank then run from each step's start to the end of its last
// operation.
func (b *builder) selectOps() {
	devExt := map[rankKey][]ival{}
	// Room for every operation: growing the slice copies it several times
	// over (×250 vLLM: 3.5 M operations).
	b.ops = make([]opIn, 0, len(b.in.Ops))
	for i := range b.in.Ops {
		o := &b.in.Ops[i]
		k := b.opKey(o)
		if !b.inSlice(k.trace, k.rank) {
			continue
		}
		if b.s.HasStream && o.Stream != b.s.Stream {
			if b.otherStreams == nil {
				b.otherStreams = map[int64]bool{}
			}
			b.otherStreams[o.Stream] = true
			continue
		}
		rs := b.ranks[k]
		in := opIn{i: int32(i)}
		switch {
		case o.HostThread < 0 || !b.inSlice(b.in.Threads[o.HostThread].Trace, b.in.Threads[o.HostThread].Rank):
			// No host frame, or one outside the slice's ranks.
		case o.Launch != 0:
			in.host = hostLaunch
		case o.Operator != 0:
			in.host = hostOper
		}
		a, e := o.TsNs, o.End()
		if rs.steps != nil {
			anchor := o.TsNs
			if in.host != hostNone {
				anchor = b.hostTs(&in)
			}
			si := containing(rs.steps, anchor)
			if si < 0 {
				continue
			}
			if rs.window != nil {
				var ok bool
				if a, e, ok = clip(a, e, rs.window); !ok {
					continue
				}
			}
			// The step's device interval reaches the end of its operations.
			devExt[k] = append(devExt[k], ival{rs.steps[si].a, max(rs.steps[si].b, e)})
		} else if rs.host != nil {
			var ok bool
			if a, e, ok = clip(a, e, rs.host); !ok {
				continue
			}
		}
		if e <= a {
			continue
		}
		in.a, in.b = a, e
		if in.host != hostNone {
			id := o.Launch
			if in.host == hostOper {
				id = o.Operator
			}
			b.hung.add(id, int32(len(b.ops)))
		}
		b.ops = append(b.ops, in)
	}
	for k, rs := range b.ranks {
		if rs.steps == nil {
			continue
		}
		dev := append(devExt[k], rs.steps...)
		dev = mergeIvals(dev)
		if rs.window != nil {
			dev = intersect(dev, rs.window)
		}
		rs.dev = dev
	}
}

// frame takes the next frame of the slice: it closes the open frames of
// its thread that do not contain it, opens it under the innermost one that
// does, and hangs from it the GPU operations it launched.
func (b *builder) frame(f *Frame) {
	th := b.thread(f.Thread)
	ts, end := f.TsNs, f.End()
	for n := len(th.stack); n > 0 && !(th.stack[n-1].ts <= ts && end <= th.stack[n-1].end); n-- {
		b.pop(th)
	}
	var up *entry
	if n := len(th.stack); n > 0 {
		up = &th.stack[n-1]
	}
	e := entry{ts: ts, end: end, kind: f.Kind, name: b.frameName(f.Kind, f.Name), sync: f.Blocking, graph: -1}
	switch {
	case f.Blocking:
		e.class = clsSync
	case up != nil && (up.class == clsSync || (up.class == clsWaiting && !up.selfWait)):
		e.class = up.class
	case b.isWait(f.Name):
		e.class = clsWaiting
	case IsSelfWait(f.Name):
		e.class, e.selfWait = clsWaiting, true
	default:
		e.class = clsWorking
	}
	e.engA, e.engB = engineIn(th, ts, end)
	e.clip = end - ts
	if up != nil {
		b.poll(th, up, up.next, min(ts, up.end)) // up's self time before e
		e.from = min(max(ts, up.next), end)
	} else {
		e.from = min(max(ts, th.next), end)
	}
	e.next = e.from
	if rs := th.rs; rs.host != nil {
		e.clip = overlap(ts, end, rs.host)
	}
	e.cnt, e.span = b.counted(th, e.from, end)
	if up != nil {
		e.depth = up.depth + 1
		e.py = up.py
	}
	// The python levels of a Call stack, less those drawn above it. A
	// region (an annotation, or an operator recorded in record_function's
	// __enter__: ProfilerStep#N, enumerate(DataLoader)#...) gets none:
	// the python frames at its start need not enclose it (the profiler's
	// step() opens ProfilerStep#N and returns), so its callees carry their
	// own stacks instead.
	if cs := b.in.CallStackOf(f); cs != "" {
		if st := b.stackOf(cs); f.Kind != HostAnnotation && !st.enter {
			k := 0
			for k < len(st.frames) && k < len(e.py) && st.frames[k] == e.py[k] {
				k++
			}
			e.levels, e.py = st.frames[k:], st.frames
		}
	}
	b.frames++
	if f.Kind == HostPython {
		b.m.PythonFrames++
	}
	if f.CallStack != 0 {
		b.m.CallStackOps++
	}
	// The outermost sync and wait frames of a launching thread. A frame
	// that waits in its self time only is none: its callees may launch
	// (the CPU autograd engine runs on the calling thread).
	outerSync := e.class == clsSync && (up == nil || up.class != clsSync)
	outerWait := e.class == clsWaiting && !e.selfWait && (up == nil || up.class != clsWaiting || up.selfWait)
	th.stack = append(th.stack, e)
	top := len(th.stack) - 1
	if e.clip > 0 {
		b.nodeAt(th, top, b.cpu)
	}
	launched := b.hang(th, top, f)
	if th.d != nil && e.class == clsWorking {
		if up != nil && up.full {
			th.stack[top].full = true
		} else if depth, full := b.queueFull(th, ts, end, launched); full {
			th.stack[top].full = true
			m := &b.m
			if m.QueueFullCalls == 0 || depth < m.QueueFullMinDepth {
				m.QueueFullMinDepth = depth
			}
			m.QueueFullMaxDepth = max(m.QueueFullMaxDepth, depth)
			m.QueueFullCalls++
			m.QueueFullNs += th.stack[top].clip
			th.d.poll = append(th.d.poll, ival{ts, end})
		}
	}
	// Sync frames appear in the GPU view with their blocked time even
	// when they launched nothing.
	var gn *Node
	if e.sync && e.clip > 0 {
		gn = b.nodeAt(th, top, b.gpu).n
		gn.Sync = true
		gn.BlockedNs += e.clip
	}
	if d := th.d; d != nil {
		if up == nil {
			d.frames = append(d.frames, ival{ts, end})
		}
		switch {
		case outerSync:
			d.sync = append(d.sync, ival{ts, end})
			d.syncFr = append(d.syncFr, syncFrame{ts: ts, end: end, node: gn})
		case outerWait:
			d.wait = append(d.wait, ival{ts, end})
		}
	}
	if th.d != nil {
		b.hostAt(th, top)
		if f.Kind == HostPython {
			b.pyIn(th, ts, end)
		}
	}
}

// hang hangs from the open frame at k of th the GPU operations it launched
// (or, as their operator, carries the External id of), and records a graph
// launch. It returns how many of them the frame launched.
func (b *builder) hang(th *threadState, k int, f *Frame) (launched int) {
	e := &th.stack[k]
	ops := b.hung.of(f.ID)
	if f.GraphLaunch && (e.clip > 0 || len(ops) > 0) {
		e.graph = int32(len(b.graphs))
		b.graphs = append(b.graphs, graphLaunch{site: b.nodeAt(th, k, b.gpu)})
	}
	for _, h := range ops {
		o := &b.ops[h.op]
		if o.host == hostOper {
			p := b.nodeAt(th, k, b.gpu).child("bucket", LaunchNotCaptured)
			p.n.Count++
			b.leaf(p, o, false)
			continue
		}
		launched++
		if th.drainOf != f.ID {
			th.drain, th.drainOf = 0, f.ID
		}
		op := b.op(o)
		th.drain = max(th.drain, op.End())
		viaGraph := false
		if e.graph >= 0 {
			viaGraph = true
			g := &b.graphs[e.graph]
			g.ops++
			g.sig = fnvAdd(g.sig, b.in.OpName(op))
			if g.id == 0 && op.GraphID != 0 {
				g.id = op.GraphID
			}
		}
		b.leaf(b.nodeAt(th, k, b.gpu), o, viaGraph)
	}
	return launched
}

// queueFull tells whether a launch call of th over [ts, end) that launched
// GPU work blocked on a full launch queue: QueueFullMinNs or more, with
// QueueFullDepth or more of its rank's launches queued ahead of it (depth).
func (b *builder) queueFull(th *threadState, ts, end int64, launched int) (depth int64, full bool) {
	if launched == 0 || end-ts < QueueFullMinNs {
		return 0, false
	}
	if th.d.queue == nil {
		th.d.queue = newLaunchQueue(b.in, th.key)
	}
	depth = int64(th.d.queue.depth(ts))
	return depth, depth >= QueueFullDepth
}

// launchQueue is one rank's launch calls, once each, as a full launch
// queue is measured: when each was called and when its first GPU
// operation started, each list sorted.
type launchQueue struct{ called, started []int64 }

func newLaunchQueue(in *Input, k rankKey) *launchQueue {
	type launch struct{ id, called, started int64 }
	var ls []launch
	for i := range in.Ops {
		if o := &in.Ops[i]; o.Launch != 0 && o.Rank == k.rank && in.OpTrace(o) == k.trace {
			ls = append(ls, launch{o.Launch, o.HostTsNs, o.TsNs})
		}
	}
	slices.SortFunc(ls, func(p, q launch) int { return cmp.Or(cmp.Compare(p.id, q.id), cmp.Compare(p.started, q.started)) })
	q := &launchQueue{}
	for i, l := range ls {
		if i == 0 || ls[i-1].id != l.id {
			q.called = append(q.called, l.called)
			q.started = append(q.started, l.started)
		}
	}
	slices.Sort(q.called)
	slices.Sort(q.started)
	return q
}

// depth is how many launches were queued at t: called before t, their GPU
// work not started by t. (GPU work stamped before its call, clock skew,
// makes it smaller, never larger.)
func (q *launchQueue) depth(t int64) int {
	called, _ := slices.BinarySearch(q.called, t)
	started, _ := slices.BinarySearch(q.started, t+1)
	return called - started
}

// leaf adds an operation under p as a `→ kernel` leaf.
func (b *builder) leaf(p *bnode, o *opIn, viaGraph bool) {
	op := b.op(o)
	leaf := p.child(op.Kind.String(), b.in.OpName(op))
	leaf.n.SelfNs += o.b - o.a
	leaf.n.Count++
	if viaGraph {
		leaf.n.NoCPUAttribution = true
	}
}

// nodeAt returns the node of tree root for the open frame at k of th,
// making it and its open ancestors' nodes on first use: each frame counts
// once in each tree it appears in, and so does each python level of a
// Call stack it draws.
func (b *builder) nodeAt(th *threadState, k int, root *bnode) *bnode {
	e := &th.stack[k]
	slot := &e.cnode
	if root == b.gpu {
		slot = &e.gnode
	}
	if *slot != nil {
		return *slot
	}
	cur := root
	if k > 0 {
		cur = b.nodeAt(th, k-1, root)
	}
	for _, py := range e.levels {
		cur = cur.child(KindCallStack, py)
		cur.n.Count++ // the operators recorded under it
	}
	cur = cur.child(e.kind.String(), e.name)
	cur.n.Count++
	*slot = cur
	return cur
}

// pop closes the innermost open frame of th: its self time is its counted
// time in the slice less its children's; a launching thread's, in its
// rank's GPU span, goes to the cross-check's host time by class.
func (b *builder) pop(th *threadState) {
	n := len(th.stack)
	e := &th.stack[n-1]
	b.poll(th, e, e.next, e.end) // its self time after its last child
	if e.full {
		// Blocked through: splitSelf caps it at the frame's self time.
		e.pollCnt, e.pollSpan = e.cnt, e.span
	}
	// Its self time while the engine runs the backward it called: the
	// part of its counted time (and span) there less its children's.
	var engCnt, engSpan int64
	if e.class == clsWorking && e.engB > e.engA {
		engCnt, engSpan = b.counted(th, max(e.from, e.engA), e.engB)
		engCnt, engSpan = max(0, engCnt-e.kidEngCnt), max(0, engSpan-e.kidEngSpan)
	}
	if n > 1 {
		up := &th.stack[n-2]
		up.kidCnt += e.cnt
		up.kidSpan += e.span
		if up.engB > up.engA {
			c, sp := b.counted(th, max(e.from, up.engA), min(e.end, up.engB))
			up.kidEngCnt += c
			up.kidEngSpan += sp
		}
		up.next = max(up.next, e.end)
	} else {
		th.next = max(th.next, e.end)
	}
	if e.clip > 0 {
		// Its children's counted times lie inside its own and do not
		// overlap (entry.from): the self times of a thread add up to the
		// union of its frames.
		self := max(0, e.cnt-e.kidCnt)
		nd := e.cnode.n
		b.cpuTotal += self
		nd.SelfNs += self
		_, sync, wait, polled := splitSelf(e.class, self, engCnt, e.pollCnt)
		nd.SyncNs += sync
		nd.WaitNs += wait
		if e.full {
			nd.QueueFullNs += polled
		} else {
			nd.PollNs += polled
		}
		if e.sync {
			nd.Sync = true
			nd.BlockedNs += e.clip
		}
	}
	// A launching thread's self time inside the GPU span, the base of the
	// GPU-side numbers: its host time by class never exceeds the span.
	if self := max(0, e.span-e.kidSpan); th.d != nil && self > 0 {
		work, sync, wait, _ := splitSelf(e.class, self, engSpan, e.pollSpan)
		b.m.HostWorkNs += work
		b.m.HostSyncNs += sync
		b.m.HostWaitNs += wait
	}
	th.stack[n-1] = entry{}
	th.stack = th.stack[:n-1]
}

// splitSelf divides a frame's self time by its class: a sync frame's is
// blocked, a waiting frame's waits, and a working frame's waits where
// another thread runs the backward it called (eng), is blocked where it
// polled the device (poll, of which polled says how much counted) and
// works the rest.
func splitSelf(class uint8, self, eng, poll int64) (work, sync, wait, polled int64) {
	switch class {
	case clsSync:
		return 0, self, 0, 0
	case clsWaiting:
		return 0, 0, self, 0
	}
	wait = min(eng, self)
	polled = min(poll, self-wait)
	return self - wait - polled, polled, wait, polled
}

// thread returns the state of a thread, made on its first frame.
func (b *builder) thread(t int32) *threadState {
	if th, ok := b.threads[t]; ok {
		return th
	}
	x := &b.in.Threads[t]
	th := &threadState{id: t, key: rankKey{x.Trace, x.Rank}}
	th.rs = b.ranks[th.key]
	if d := b.per[th.key]; d != nil {
		if _, ok := d.threads[t]; ok {
			th.d = d
			th.main = d.main == t
			for _, r := range b.engine[th.key] {
				if r.thread != t {
					th.engine = append(th.engine, r)
				}
			}
		}
	}
	b.threads[t] = th
	return th
}

// finish closes every open frame and finishes the trees and the
// cross-check.
func (b *builder) finish() *Result {
	for _, t := range slices.Sorted(maps.Keys(b.threads)) {
		th := b.threads[t]
		for len(th.stack) > 0 {
			b.pop(th)
		}
	}
	res := &Result{Slice: b.s, Label: b.label()}
	res.Check = b.measure()
	res.GPU = b.gpuTree()
	res.CPU = b.tree("cpu", b.cpu, b.cpuTotal)
	b.decide(&res.Check)
	res.Gaps = append(b.gaps, b.evidenceGaps(res)...)
	if res.Gaps == nil {
		res.Gaps = []string{}
	}
	return res
}

// gpuTree finishes the GPU view: the operations no host frame of the slice
// launched go under NoLaunchBucket, and each graph launch gets its replay
// counts.
func (b *builder) gpuTree() Tree {
	var bucket *bnode
	var total int64
	for i := range b.ops {
		o := &b.ops[i]
		total += o.b - o.a
		if o.host != hostNone {
			continue
		}
		if bucket == nil {
			bucket = b.gpu.child("bucket", NoLaunchBucket)
		}
		bucket.n.Count++
		b.leaf(bucket, o, false)
	}
	// A replay's expected kernels: the most any replay of the same graph
	// recorded. The same graph: the same graph id where the trace records
	// one, else the same call site (the same node of the tree) and the same
	// sequence of recorded kernel names. One call site can replay several
	// graphs (negative_queue_length_a100: a compiled function's 14 graphs,
	// each replayed whole 5 times, under two call sites; vLLM: a graph per
	// batch size), so without graph ids a replay can only be compared with
	// replays of the same kernels, and under-recording shows only where the
	// trace records graph ids.
	type graphKey struct {
		id   int64
		site *bnode
		sig  uint64
	}
	keyOf := func(g *graphLaunch) graphKey {
		if g.id != 0 {
			return graphKey{id: g.id}
		}
		return graphKey{site: g.site, sig: g.sig}
	}
	most := map[graphKey]int64{}
	for i := range b.graphs {
		k := keyOf(&b.graphs[i])
		most[k] = max(most[k], b.graphs[i].ops)
	}
	for i := range b.graphs {
		g := &b.graphs[i]
		nd := g.site.n
		if nd.Graph == nil {
			nd.Graph = &GraphReplay{}
		}
		nd.Graph.Replays++
		if g.id != 0 {
			nd.Graph.Keyed++
		}
		nd.Graph.Recorded += g.ops
		nd.Graph.Expected += most[keyOf(g)]
		b.m.GraphRecorded += g.ops
		b.m.GraphExpected += most[keyOf(g)]
	}
	return b.tree("gpu", b.gpu, total)
}

// fnvAdd folds name into h, an FNV-1a hash (0 starts one), with a
// separator so that the names' boundaries count.
func fnvAdd(h uint64, name string) uint64 {
	if h == 0 {
		h = 14695981039346656037
	}
	for i := 0; i < len(name); i++ {
		h = (h ^ uint64(name[i])) * 1099511628211
	}
	return (h ^ 0xff) * 1099511628211
}

// label names the slice in words.
func (b *builder) label() string {
	s := b.s
	var parts []string
	if s.Trace != "" {
		parts = append(parts, "trace "+s.Trace)
	} else {
		traces := map[string]bool{}
		for k := range b.ranks {
			traces[k.trace] = true
		}
		if len(traces) == 1 {
			for t := range traces {
				parts = append(parts, "trace "+t)
			}
		} else {
			parts = append(parts, fmt.Sprintf("%d traces", len(traces)))
		}
	}
	if s.HasRank {
		parts = append(parts, fmt.Sprintf("rank %d", s.Rank))
	} else {
		parts = append(parts, fmt.Sprintf("%d rank(s)", len(b.ranks)))
	}
	if s.HasWindow() {
		parts = append(parts, table.Window(s.WindowStartNs, s.WindowEndNs))
	}
	if s.Phase != "" {
		parts = append(parts, "phase "+s.Phase)
	}
	if s.HasStep {
		parts = append(parts, fmt.Sprintf("step %d", s.Step))
	}
	if s.HasStream {
		parts = append(parts, fmt.Sprintf("stream %d", s.Stream))
	}
	if !s.HasWindow() && s.Phase == "" && !s.HasStep {
		parts = append(parts, "whole trace")
	}
	return strings.Join(parts, ", ")
}

// linkCount counts operations and their GPU time.
type linkCount struct{ n, ns int64 }

func (c *linkCount) add(ns int64) { c.n++; c.ns += ns }

// GraphAttributionGap is the gap the cross-view states for a slice that
// replays graphs: what evidence.GapGraphsHideKernel says of the trace, for
// a reader of the cross-view alone (the report lists only that one).
const GraphAttributionGap = "kernels replayed by CUDA/HIP graphs have no per-kernel CPU attribution: they hang under the graph launch"

// NoPythonStacksGap is the gap the cross-view states for a slice captured
// without python stacks (nor 2021-era Call stack args): what
// evidence.GapNoPythonStacks says of the trace, for a reader of the
// cross-view alone (the report lists only that one).
const NoPythonStacksGap = "no python stacks in the trace (with_stack off): the host stacks start at operators and annotations"

// evidenceGaps lists what the slice cannot show.
func (b *builder) evidenceGaps(res *Result) []string {
	var out []string
	m := res.Check.Metrics
	if b.frames == 0 {
		out = append(out, "no host frame (python, operator, annotation, runtime call) in the slice: the CPU view is empty")
	}
	if len(b.ops) == 0 {
		out = append(out, "no GPU operation in the slice: the GPU view is empty")
	}
	switch {
	case m.PythonFrames > 0 || b.frames == 0:
	case m.CallStackOps > 0:
		out = append(out, fmt.Sprintf("no python_function events in the trace: the python frames above operators come from the \"Call stack\" arg of %d operators; they carry no time of their own, and operators recorded without one (such as the autograd thread's) have none above them", m.CallStackOps))
	default:
		out = append(out, NoPythonStacksGap)
	}
	var byOp, noLaunch, early, ambiguous linkCount
	for _, o := range b.ops {
		w := o.b - o.a
		switch o.host {
		case hostLaunch:
		case hostOper:
			byOp.add(w)
		default:
			noLaunch.add(w)
			switch b.op(&o).Link {
			case LinkBeforeCapture:
				early.add(w)
			case LinkAmbiguous:
				ambiguous.add(w)
			}
		}
	}
	if byOp.n > 0 {
		out = append(out, fmt.Sprintf("%d GPU operations (%s ms, %.1f%% of GPU time) have no runtime call in the trace but carry the External id of exactly one operator: shown under that operator as %q",
			byOp.n, ms(byOp.ns), 100*share(byOp.ns, res.GPU.TotalNs), LaunchNotCaptured))
	}
	if noLaunch.n > 0 {
		msg := fmt.Sprintf("%d GPU operations (%s ms, %.1f%% of GPU time) have no launching CPU event in the trace: shown under %q",
			noLaunch.n, ms(noLaunch.ns), 100*share(noLaunch.ns, res.GPU.TotalNs), NoLaunchBucket)
		if early.n > 0 {
			msg += fmt.Sprintf("; %d of them (%s ms) carry a correlation id lower than every runtime call the trace captured on their rank: they were launched before the host capture began", early.n, ms(early.ns))
		}
		if ambiguous.n > 0 {
			msg += fmt.Sprintf("; %d of them (%s ms) carry an External id that several operators have: left unlinked", ambiguous.n, ms(ambiguous.ns))
		}
		out = append(out, msg)
	}
	if m.GraphExpected > 0 && m.GraphCoverage() < 0.9 {
		out = append(out, fmt.Sprintf("graph replays: the trace recorded %.1f%% of the replayed kernels (%d of %d): GPU idle time is overstated",
			100*m.GraphCoverage(), m.GraphRecorded, m.GraphExpected))
	}
	if m.GraphExpected > 0 {
		out = append(out, GraphAttributionGap)
	}
	return out
}
