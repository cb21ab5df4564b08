package pass

import (
	"cmp"
	"container/heap"
	"fmt"
	"slices"

	"github.com/tracebook/tracebook/analysis/table"
)

// opsInput is the ops preset's _calls: one operator call (a cpu_op or a
// user annotation of evidence_base_events) with the launches its External
// id links and the GPU work those produced, or, on a rank whose calls do
// not link by id, one launching call (runtime or driver) with its GPU work,
// which goes to the innermost operator open on its thread.
var opsInput = []string{"trace", "rank", "pid", "tid", "file_id", "idx", "kind", "name", "ts_ns", "end_ns", "dur_ns",
	"step", "phase", "launches", "gpu_events", "gpu_ns"}

// opsColumns are the ops preset's columns and their DuckDB types.
var opsColumns = []table.Column{
	{Name: "trace", Type: "VARCHAR"}, {Name: "rank", Type: "INTEGER"}, {Name: "step", Type: "INTEGER"},
	{Name: "phase", Type: "VARCHAR"}, {Name: "name", Type: "VARCHAR"}, {Name: "count", Type: "BIGINT"},
	{Name: "incl_ns", Type: "BIGINT"}, {Name: "self_ns", Type: "BIGINT"}, {Name: "max_ns", Type: "BIGINT"},
	{Name: "launches", Type: "BIGINT"}, {Name: "gpu_events", Type: "BIGINT"}, {Name: "gpu_ns", Type: "BIGINT"},
	{Name: "annotation", Type: "BOOLEAN"},
}

// opsThread is a thread of the operator calls: ordered by trace, rank,
// pid and tid, as the preset's dense_rank numbers them.
type opsThread struct {
	trace    nstr
	rank     int64
	pid, tid nstr
}

// opCall is one input row, its texts as indexes into the pass's tables.
type opCall struct {
	name, phase                int32
	annotation                 bool
	ts, end, dur, step         int64
	launches, gpuEvents, gpuNs int64
	child                      int64 // the time of the calls it directly encloses
	outer                      bool  // not nested in an earlier call of its name
	live                       bool  // a call; false in an empty depth of ops.last
}

// openEnd is the end of a call the sweep holds open; zero marks a
// zero-length call, whose end comes after the starts at its time.
type openEnd struct {
	end  int64
	zero bool
}

// ops is the ops area's pass (sql/ops.sql): each call's self time is its
// duration less that of the calls it directly encloses on its thread, by
// the preset's sweep and ASOF join, then the calls are summed by trace,
// rank, step, phase, name and annotation.
//
// The calls come in the preset's id order (the PASS line's ORDER BY:
// thread, start, the longer first, name), so the pass holds one thread's
// open calls at a time, not the slice's calls: the sweep's open ends, and
// per depth the last call there, which takes the time of the calls one
// level down until a later call at its depth replaces it (the preset's
// ASOF join: a call's parent is the last earlier call one level up).
type ops struct {
	threads []opsThread // in order; the current one last
	first   int32       // the first thread of the current trace and rank
	texts   []nstr      // names and phases
	textAt  map[nstr]int32

	open    openHeap
	last    []opCall // per depth, the last call there (live)
	maxEnd  map[int32]int64
	prev    [4]int64 // the previous call's start, -end, file and index on the thread, for the order check
	hasPrev bool

	sumAt map[opsKey]int
	sums  []opsSum
}

func newOps() *ops {
	return &ops{textAt: map[nstr]int32{}, maxEnd: map[int32]int64{}, sumAt: map[opsKey]int{}}
}

// text interns a text cell.
func (o *ops) text(row table.Cells, col int) int32 {
	s := str(row, col)
	i, ok := o.textAt[s]
	if !ok {
		i = int32(len(o.texts))
		o.texts = append(o.texts, s)
		o.textAt[s] = i
	}
	return i
}

func (o *ops) Add(row table.Cells) error {
	var ints [10]int64 // rank, ts_ns, end_ns, dur_ns, step, launches, gpu_events, gpu_ns, file_id, idx
	for i, col := range []int{1, 8, 9, 10, 11, 13, 14, 15, 4, 5} {
		v, ok := row.Int(col)
		if !ok {
			return fmt.Errorf("pass ops: %s is NULL", opsInput[col])
		}
		ints[i] = v
	}
	th := opsThread{trace: str(row, 0), rank: ints[0], pid: str(row, 2), tid: str(row, 3)}
	if n := len(o.threads); n == 0 || o.threads[n-1] != th {
		if n > 0 && cmpThread(o.threads[n-1], th) >= 0 {
			return fmt.Errorf("pass ops: the calls are not in thread order")
		}
		o.endThread()
		if n == 0 || cmpNstr(o.threads[n-1].trace, th.trace) != 0 || o.threads[n-1].rank != th.rank {
			o.first = int32(n)
		}
		o.threads = append(o.threads, th)
	}
	kind, _ := row.Str(6)
	c := opCall{name: o.text(row, 7), phase: o.text(row, 12), annotation: kind == "annotation",
		ts: ints[1], end: ints[2], dur: ints[3], step: ints[4], launches: ints[5], gpuEvents: ints[6], gpuNs: ints[7], live: true}
	at := [4]int64{c.ts, -c.end, ints[8], ints[9]} // the PASS order in the thread
	if o.hasPrev && slices.Compare(o.prev[:], at[:]) > 0 {
		return fmt.Errorf("pass ops: the calls of a thread are not in start order")
	}
	o.prev, o.hasPrev = at, true
	if kind == "runtime" || kind == "driver" {
		o.launch(c)
	} else {
		o.call(c)
	}
	return nil
}

// launch gives a launching call's GPU work to the innermost call open at
// its start (the sweep's order: it comes after the starts at its time).
func (o *ops) launch(c opCall) {
	o.closeBefore(c.ts)
	if depth := len(o.open); depth > 0 && depth <= len(o.last) && o.last[depth-1].live {
		p := &o.last[depth-1]
		p.launches += c.launches
		p.gpuEvents += c.gpuEvents
		p.gpuNs += c.gpuNs
	}
}

// closeBefore ends the open calls that end before t, or at t with a
// length: at equal times ends come first, but a zero-length call's own end
// follows the starts at its time.
func (o *ops) closeBefore(t int64) {
	for len(o.open) > 0 && (o.open[0].end < t || (o.open[0].end == t && !o.open[0].zero)) {
		heap.Pop(&o.open)
	}
}

// call runs the sweep for the next call of the thread. The sweep's points
// in time order, at equal times ends first, then starts, then the ends of
// zero-length calls: a call's depth is the calls open at its start.
func (o *ops) call(c opCall) {
	o.closeBefore(c.ts)
	depth := len(o.open)
	heap.Push(&o.open, openEnd{c.end, c.end == c.ts})
	if depth > 0 && depth <= len(o.last) && o.last[depth-1].live {
		o.last[depth-1].child += c.dur
	}
	e, seen := o.maxEnd[c.name]
	c.outer = !seen || e < c.end
	if !seen || c.end > e {
		o.maxEnd[c.name] = c.end
	}
	for len(o.last) <= depth {
		o.last = append(o.last, opCall{})
	}
	o.add(o.last[depth])
	o.last[depth] = c
}

// endThread sums the calls the thread still holds and starts the next.
func (o *ops) endThread() {
	for _, c := range o.last {
		o.add(c)
	}
	o.open, o.last, o.hasPrev = o.open[:0], o.last[:0], false
	clear(o.maxEnd)
}

// opsKey is the preset's GROUP BY.
type opsKey struct {
	th          int32 // its trace and rank: the first thread of the pair
	step        int64
	phase, name int32
	annotation  bool
}

type opsSum struct {
	key                                                opsKey
	count, incl, self, max, launches, gpuEvents, gpuNs int64
}

// add sums a call whose children are all counted (nothing for an empty
// depth's zero opCall).
func (o *ops) add(c opCall) {
	if !c.live {
		return
	}
	k := opsKey{th: o.first, step: c.step, phase: c.phase, name: c.name, annotation: c.annotation}
	i, ok := o.sumAt[k]
	if !ok {
		i = len(o.sums)
		o.sums = append(o.sums, opsSum{key: k})
		o.sumAt[k] = i
	}
	s := &o.sums[i]
	s.count++
	if c.outer {
		s.incl += c.dur
	}
	s.self += max(0, c.dur-c.child)
	s.max = max(s.max, c.dur)
	s.launches += c.launches
	s.gpuEvents += c.gpuEvents
	s.gpuNs += c.gpuNs
}

// cmpThread orders threads as the preset's ORDER BY trace, rank, pid, tid.
func cmpThread(a, b opsThread) int {
	return cmp.Or(cmpNstr(a.trace, b.trace), cmp.Compare(a.rank, b.rank), cmpNstr(a.pid, b.pid), cmpNstr(a.tid, b.tid))
}

// Table orders the groups as the preset does: trace, rank, step, phase,
// self time (the largest first), name.
func (o *ops) Table() *table.Table {
	o.endThread()
	slices.SortFunc(o.sums, func(a, b opsSum) int {
		return cmp.Or(cmp.Compare(a.key.th, b.key.th), cmp.Compare(a.key.step, b.key.step),
			cmpNstr(o.texts[a.key.phase], o.texts[b.key.phase]), cmp.Compare(b.self, a.self),
			cmpNstr(o.texts[a.key.name], o.texts[b.key.name]), cmpBool(a.key.annotation, b.key.annotation))
	})
	t := &table.Table{Name: "ops", Columns: slices.Clone(opsColumns), Rows: make([][]any, len(o.sums)), Total: int64(len(o.sums))}
	for i, s := range o.sums {
		th := o.threads[s.key.th]
		t.Rows[i] = []any{th.trace.val(), th.rank, s.key.step, o.texts[s.key.phase].val(), o.texts[s.key.name].val(),
			s.count, s.incl, s.self, s.max, s.launches, s.gpuEvents, s.gpuNs, s.key.annotation}
	}
	return t
}

// openHeap is the sweep's open calls, the earliest end first and, at
// equal ends, a zero-length call's last.
type openHeap []openEnd

func (h openHeap) Len() int { return len(h) }
func (h openHeap) Less(i, j int) bool {
	return h[i].end < h[j].end || (h[i].end == h[j].end && !h[i].zero && h[j].zero)
}
func (h openHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *openHeap) Push(x any)   { *h = append(*h, x.(openEnd)) }
func (h *openHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case b:
		return -1
	}
	return 1
}
