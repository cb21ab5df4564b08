package crossview

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

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
	host   []ival // frames are clipped to these
	steps  []ival // selected steps (phase/step filter), nil otherwise
	window []ival // the window alone, nil without one
	dev    []ival // wall time and gaps
}

// builder holds the indexes one Build works with.
type builder struct {
	in     *Input
	s      Slice
	opts   Options
	frames []*Frame
	idx    frameIndex // Frame.ID -> index in frames
	parent []int32    // repaired parent index, -1 = root
	clipNs []int64    // frame time inside the slice
	selfNs []int64
	class  []uint8 // 0 unknown, 1 working, 2 sync, 3 waiting
	sync   []bool
	depth  []int32
	ranks  map[rankKey]*rankSlice
	ops    []opIn // GPU operations in the slice
	gaps   []string
	waits  map[string]bool // IsWait by name
	names  map[string]string
	// graphRecorded and graphExpected: graph replays' kernels, set by gpuTree.
	graphRecorded, graphExpected int64
	// syncGap: GPU idle time in the gaps each sync frame opened, set by measure.
	syncGap map[int32]int64
	// stacks: a Call stack arg split into frames, outermost first, by arg.
	stacks map[string]*callStack
	// pyCtx: the python frames drawn above each frame (see pyContext).
	pyCtx     [][]string
	pyCtxDone []bool
}

// rankOf returns the trace and rank of a frame.
func (b *builder) rankOf(f *Frame) rankKey {
	t := &b.in.Threads[f.Thread]
	return rankKey{t.Trace, t.Rank}
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

// frameIndex finds a frame's index in builder.frames by its ID. The
// preset's IDs are row numbers, so a slice indexed by ID is the common case:
// 4 bytes a row where a map costs several times that (a large trace has
// millions of frames); IDs spread far wider than the frames (a slice of one
// trace among many loaded) fall back to a map.
type frameIndex struct {
	dense  []int32 // ID -> index + 1; 0 = none
	sparse map[int64]int32
}

func newFrameIndex(frames []*Frame) frameIndex {
	var hi int64
	for _, f := range frames {
		hi = max(hi, f.ID)
	}
	var x frameIndex
	if hi <= 4*int64(len(frames))+1<<20 {
		x.dense = make([]int32, hi+1)
		for i, f := range frames {
			if f.ID > 0 {
				x.dense[f.ID] = int32(i) + 1
			}
		}
		return x
	}
	x.sparse = make(map[int64]int32, len(frames))
	for i, f := range frames {
		x.sparse[f.ID] = int32(i)
	}
	return x
}

// get returns the index of the frame with this ID.
func (x frameIndex) get(id int64) (int32, bool) {
	if x.sparse != nil {
		i, ok := x.sparse[id]
		return i, ok
	}
	if id <= 0 || id >= int64(len(x.dense)) || x.dense[id] == 0 {
		return 0, false
	}
	return x.dense[id] - 1, true
}

// opIn is a GPU operation in the slice: its clipped interval and weight.
type opIn struct {
	op     *Op
	launch int32 // frame index of the launching call, -1 = none
	oper   int32 // without a launching call: frame index of the operator linked by External id, -1 = none
	a, b   int64 // clipped interval
	key    rankKey
}

// hostOf returns the frame indexes of an operation's launching call and,
// when there is none, of the operator that its External id links it to;
// -1 = none.
func (b *builder) hostOf(o *Op) (launch, oper int32) {
	launch, oper = -1, -1
	if o.Launch != 0 {
		if x, ok := b.idx.get(o.Launch); ok {
			return x, -1
		}
	}
	if o.Operator != 0 {
		if x, ok := b.idx.get(o.Operator); ok {
			oper = x
		}
	}
	return launch, oper
}

// linked returns the host frame an operation hangs from: its launching
// call, else its operator; -1 = none.
func (o *opIn) linked() int32 {
	if o.launch >= 0 {
		return o.launch
	}
	return o.oper
}

const (
	clsUnknown uint8 = iota
	clsWorking
	clsSync
	clsWaiting
)

var classNames = [...]string{"", ClassWorking, ClassSync, ClassWaiting}

// Build builds the GPU view, the CPU view and the cross-check of one slice
// of the rows the crossview preset returned.
func Build(in *Input, s Slice, opts Options) (*Result, error) {
	if in == nil || (len(in.Frames) == 0 && len(in.Ops) == 0 && len(in.Origins) == 0) {
		return nil, ErrNoInput
	}
	if s.HasWindow() && s.WindowEndNs <= s.WindowStartNs {
		return nil, fmt.Errorf("crossview: window %s..%s ms is empty", ms(s.WindowStartNs), ms(s.WindowEndNs))
	}
	if opts.TopGaps <= 0 {
		opts.TopGaps = 5
	}
	b := &builder{in: in, s: s, opts: opts}
	b.selectRows()
	b.sliceRanks()
	b.clipFrames()
	b.selectOps()
	res := &Result{Slice: s, Label: b.label()}
	res.Check = b.measure()
	res.GPU = b.gpuTree()
	res.CPU = b.cpuTree()
	b.decide(&res.Check)
	res.Gaps = append(b.gaps, b.evidenceGaps(res)...)
	if res.Gaps == nil {
		res.Gaps = []string{}
	}
	return res, nil
}

func (b *builder) inSlice(trace string, rank int) bool {
	return (b.s.Trace == "" || trace == b.s.Trace) && (!b.s.HasRank || rank == b.s.Rank)
}

// selectRows keeps the frames of the slice's traces and ranks, indexes
// them and finds each one's enclosing frame.
func (b *builder) selectRows() {
	b.frames = make([]*Frame, 0, len(b.in.Frames))
	for i := range b.in.Frames {
		f := &b.in.Frames[i]
		if t := b.in.ThreadOf(f); b.inSlice(t.Trace, t.Rank) {
			b.frames = append(b.frames, f)
		}
	}
	n := len(b.frames)
	b.idx = newFrameIndex(b.frames)
	b.linkParents()
	// Break any cycle the SQL could not exclude (equal intervals pointing
	// at each other): walking up must end.
	b.depth = make([]int32, n)
	for i := range b.depth {
		b.depth[i] = -1
	}
	for i := range b.frames {
		b.depthOf(int32(i))
	}
}

// linkParents finds each frame's enclosing frame by time containment on
// its thread. Along the thread's start order, the frame that encloses a
// frame is its predecessor or the nearest enclosing frame of the
// predecessor that contains it: the walk of a call stack, in one pass. A
// frame no frame of its thread contains takes the frame of its Python
// parent id.
func (b *builder) linkParents() {
	n := len(b.frames)
	prev := b.startOrder()
	next := make([]int32, n)
	for i := range next {
		next[i] = -1
	}
	for i, p := range prev {
		if p >= 0 {
			next[p] = int32(i)
		}
	}
	b.parent = make([]int32, n)
	done := make([]bool, n)
	within := func(q, f *Frame) bool { return q.TsNs <= f.TsNs && f.End() <= q.End() }
	resolve := func(i int32) {
		f := b.frames[i]
		p := prev[i]
		for steps := 0; p >= 0 && done[p] && !within(b.frames[p], f); steps++ {
			if steps > 4096 {
				p = -1
				break
			}
			p = b.parent[p]
		}
		if p >= 0 && (!done[p] || !within(b.frames[p], f)) {
			p = -1
		}
		if p < 0 && f.Parent != 0 {
			if q, ok := b.idx.get(f.Parent); ok && q != i {
				p = q
			}
		}
		b.parent[i] = p
		done[i] = true
	}
	for i := range b.frames {
		if prev[i] >= 0 {
			continue // not the head of a thread's order
		}
		for j := int32(i); j >= 0 && !done[j]; j = next[j] {
			resolve(j)
		}
	}
}

// startOrder returns each frame's predecessor in its thread's start order
// (ts ascending, end descending, ID), -1 for a thread's first frame.
func (b *builder) startOrder() []int32 {
	type entry struct {
		thread      int32
		frame       int32
		ts, end, id int64
	}
	order := make([]entry, len(b.frames))
	for i, f := range b.frames {
		order[i] = entry{thread: f.Thread, frame: int32(i), ts: f.TsNs, end: f.End(), id: f.ID}
	}
	slices.SortFunc(order, func(p, q entry) int {
		return cmp.Or(cmp.Compare(p.thread, q.thread), cmp.Compare(p.ts, q.ts), cmp.Compare(q.end, p.end), cmp.Compare(p.id, q.id))
	})
	prev := make([]int32, len(b.frames))
	for k, e := range order {
		prev[e.frame] = -1
		if k > 0 && order[k-1].thread == e.thread {
			prev[e.frame] = order[k-1].frame
		}
	}
	return prev
}

// depthOf returns a frame's depth (0 for a root), cutting cycles.
func (b *builder) depthOf(i int32) int32 {
	if b.depth[i] >= 0 {
		return b.depth[i]
	}
	var chain []int32
	seen := map[int32]bool{}
	j := i
	for j >= 0 && b.depth[j] < 0 {
		if seen[j] {
			b.parent[j] = -1 // a cycle: cut it here and start again
			return b.depthOf(i)
		}
		seen[j] = true
		chain = append(chain, j)
		j = b.parent[j]
	}
	d := int32(-1)
	if j >= 0 && b.depth[j] >= 0 {
		d = b.depth[j]
	}
	for k := len(chain) - 1; k >= 0; k-- {
		c := chain[k]
		if b.parent[c] < 0 {
			d = 0
		} else {
			d = b.depth[b.parent[c]] + 1
		}
		b.depth[c] = d
	}
	return b.depth[i]
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
		if !b.inSlice(o.Trace, o.Rank) || (o.Launch == 0 && o.Operator == 0) {
			continue
		}
		li, oi := b.hostOf(o)
		if li < 0 {
			li = oi
		}
		if li >= 0 {
			launching[rankKey{o.Trace, o.Rank}] = true
			launcher[b.frames[li].Thread] = true
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
	for _, f := range b.frames {
		k := b.rankOf(f)
		grow(ext, k, f.TsNs, f.End())
		if !launching[k] || launcher[f.Thread] {
			grow(act, k, f.TsNs, f.End())
		}
	}
	for i := range b.in.Ops {
		o := &b.in.Ops[i]
		if b.inSlice(o.Trace, o.Rank) {
			k := rankKey{o.Trace, o.Rank}
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
		b.gaps = append(b.gaps, "the trace has no step annotations (ProfilerStep#N, vLLM execute_context_…_generation_…, execute_new_…_cached_…, SGLang step[…]): a phase or step cannot be selected, so the slice is empty")
	}
	keys := make([]rankKey, 0, len(ext))
	for k := range ext {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].trace < keys[j].trace || (keys[i].trace == keys[j].trace && keys[i].rank < keys[j].rank)
	})
	for _, k := range keys {
		e := ext[k]
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
		case rs.window != nil:
			rs.host = rs.window
			rs.dev = rs.window
		default:
			rs.host = []ival{*e}
			rs.dev = []ival{*act[k]}
		}
		b.ranks[k] = rs
	}
}

// origin returns the first timestamp of a trace (the origin of windows).
func (b *builder) origin(trace string, fallback int64) int64 {
	if o, ok := b.in.Origins[trace]; ok {
		return o
	}
	// No origin row: the first event of the trace over all its ranks.
	first := int64(math.MaxInt64)
	for i := range b.in.Frames {
		if f := &b.in.Frames[i]; b.in.ThreadOf(f).Trace == trace && f.TsNs < first {
			first = f.TsNs
		}
	}
	for i := range b.in.Ops {
		if o := &b.in.Ops[i]; o.Trace == trace && o.TsNs < first {
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

// clipFrames computes each frame's time inside the slice, its self time
// and its class.
func (b *builder) clipFrames() {
	n := len(b.frames)
	b.clipNs = make([]int64, n)
	b.selfNs = make([]int64, n)
	for i, f := range b.frames {
		rs := b.ranks[b.rankOf(f)]
		b.clipNs[i] = overlap(f.TsNs, f.End(), rs.host)
	}
	copy(b.selfNs, b.clipNs)
	for i := range b.frames {
		if p := b.parent[i]; p >= 0 {
			b.selfNs[p] -= b.clipNs[i]
		}
	}
	for i := range b.selfNs {
		if b.selfNs[i] < 0 {
			// Children that overlap each other: the trace's nesting is not
			// proper. Self time cannot be negative.
			b.selfNs[i] = 0
		}
	}
	b.sync = make([]bool, n)
	for i, f := range b.frames {
		b.sync[i] = f.Blocking
	}
	b.class = make([]uint8, n)
	for i := range b.frames {
		b.classOf(int32(i))
	}
}

func (b *builder) classOf(i int32) uint8 {
	if c := b.class[i]; c != clsUnknown {
		return c
	}
	var chain []int32
	j := i
	for j >= 0 && b.class[j] == clsUnknown {
		chain = append(chain, j)
		j = b.parent[j]
	}
	up := clsWorking
	if j >= 0 {
		up = b.class[j]
	}
	for k := len(chain) - 1; k >= 0; k-- {
		c := chain[k]
		switch {
		case b.sync[c]:
			up = clsSync
		case up == clsSync || up == clsWaiting:
		case b.isWait(b.frames[c].Name):
			up = clsWaiting
		default:
			up = clsWorking
		}
		b.class[c] = up
	}
	return b.class[i]
}

// selectOps keeps the GPU operations of the slice with their clipped
// interval. With a phase or step, an operation belongs to the slice when
// the call that launched it (else the operator linked by External id, else
// the operation itself) starts in a selected step; the device intervals of
// the rank then run from each step's start to the end of its last
// operation.
func (b *builder) selectOps() {
	devExt := map[rankKey][]ival{}
	for i := range b.in.Ops {
		o := &b.in.Ops[i]
		if !b.inSlice(o.Trace, o.Rank) || (b.s.HasStream && o.Stream != b.s.Stream) {
			continue
		}
		k := rankKey{o.Trace, o.Rank}
		rs := b.ranks[k]
		li, oi := b.hostOf(o)
		a, e := o.TsNs, o.End()
		if rs.steps != nil {
			anchor := o.TsNs
			if li >= 0 {
				anchor = b.frames[li].TsNs
			} else if oi >= 0 {
				anchor = b.frames[oi].TsNs
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
		} else {
			var ok bool
			if a, e, ok = clip(a, e, rs.host); !ok {
				continue
			}
		}
		if e <= a {
			continue
		}
		b.ops = append(b.ops, opIn{op: o, launch: li, oper: oi, a: a, b: e, key: k})
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

// evidenceGaps lists what the slice cannot show.
func (b *builder) evidenceGaps(res *Result) []string {
	var out []string
	m := res.Check.Metrics
	if len(b.frames) == 0 {
		out = append(out, "no host frame (python, operator, annotation, runtime call) in the slice: the CPU view is empty")
	}
	if len(b.ops) == 0 {
		out = append(out, "no GPU operation in the slice: the GPU view is empty")
	}
	switch {
	case m.PythonFrames > 0 || len(b.frames) == 0:
	case m.CallStackOps > 0:
		out = append(out, fmt.Sprintf("no python_function events in the trace: the python frames above operators come from the \"Call stack\" arg of %d operators; they carry no time of their own, and operators recorded without one (such as the autograd thread's) have none above them", m.CallStackOps))
	default:
		out = append(out, "no python stacks in the trace (with_stack off): the host stacks start at operators and annotations")
	}
	var byOp, noLaunch, early, ambiguous linkCount
	for _, o := range b.ops {
		w := o.b - o.a
		switch {
		case o.launch >= 0:
		case o.oper >= 0:
			byOp.add(w)
		default:
			noLaunch.add(w)
			switch o.op.Link {
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
		out = append(out, "kernels replayed by CUDA/HIP graphs have no per-kernel CPU attribution: they hang under the graph launch")
	}
	return out
}
