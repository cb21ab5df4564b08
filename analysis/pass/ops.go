package pass

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/tracebook/tracebook/analysis/table"
)

// opsInput is the ops preset's _calls: one operator call (a cpu_op or a
// user annotation of evidence_base_events) with the launches its External
// id links and the GPU work those produced.
var opsInput = []string{"trace", "rank", "pid", "tid", "kind", "name", "ts_ns", "end_ns", "dur_ns",
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
	th, name, phase            int32
	annotation                 bool
	ts, end, dur, step         int64
	launches, gpuEvents, gpuNs int64
	depth                      int64 // the sweep's depth on its thread
	child                      int64 // the time of the calls it directly encloses
	outer                      bool  // not nested in an earlier call of its name
}

// ops is the ops area's pass (sql/ops.sql): each call's self time is its
// duration less that of the calls it directly encloses on its thread, by
// the preset's sweep and ASOF join, then the calls are summed by trace,
// rank, step, phase, name and annotation.
type ops struct {
	threads  []opsThread
	threadAt map[opsThread]int32
	texts    []nstr // names and phases
	textAt   map[nstr]int32
	calls    []opCall
}

func newOps(rows int) *ops {
	return &ops{threadAt: map[opsThread]int32{}, textAt: map[nstr]int32{}, calls: make([]opCall, 0, rows)}
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
	var ints [8]int64
	for i, col := range []int{1, 6, 7, 8, 9, 11, 12, 13} {
		v, ok := row.Int(col)
		if !ok {
			return fmt.Errorf("pass ops: %s is NULL", opsInput[col])
		}
		ints[i] = v
	}
	th := opsThread{trace: str(row, 0), rank: ints[0], pid: str(row, 2), tid: str(row, 3)}
	t, ok := o.threadAt[th]
	if !ok {
		t = int32(len(o.threads))
		o.threads = append(o.threads, th)
		o.threadAt[th] = t
	}
	kind, _ := row.Str(4)
	o.calls = append(o.calls, opCall{th: t, name: o.text(row, 5), phase: o.text(row, 10), annotation: kind == "annotation",
		ts: ints[1], end: ints[2], dur: ints[3], step: ints[4], launches: ints[5], gpuEvents: ints[6], gpuNs: ints[7]})
	return nil
}

// cmpThread orders threads as the preset's ORDER BY trace, rank, pid, tid.
func cmpThread(a, b opsThread) int {
	return cmp.Or(cmpNstr(a.trace, b.trace), cmp.Compare(a.rank, b.rank), cmpNstr(a.pid, b.pid), cmpNstr(a.tid, b.tid))
}

func (o *ops) Table() *table.Table {
	// Number the threads in order, then put the calls in the preset's id
	// order: thread, start, the longer first, name.
	order := make([]int32, len(o.threads))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return cmpThread(o.threads[a], o.threads[b]) })
	rankOf := make([]int32, len(order))
	for r, t := range order {
		rankOf[t] = int32(r)
	}
	for i := range o.calls {
		o.calls[i].th = rankOf[o.calls[i].th]
	}
	slices.SortFunc(o.calls, func(a, b opCall) int {
		return cmp.Or(cmp.Compare(a.th, b.th), cmp.Compare(a.ts, b.ts), cmp.Compare(b.end, a.end),
			cmpNstr(o.texts[a.name], o.texts[b.name]))
	})
	for lo := 0; lo < len(o.calls); {
		hi := lo + 1
		for hi < len(o.calls) && o.calls[hi].th == o.calls[lo].th {
			hi++
		}
		nest(o.calls[lo:hi])
		lo = hi
	}
	return o.sum(order)
}

// nest sets depth, child and outer on one thread's calls, in id order.
func nest(calls []opCall) {
	// The sweep: +1 at each start, -1 at each end, in time order; at equal
	// times ends first (typ 0), then starts (1), then the ends of
	// zero-length calls (2); then by id.
	type point struct {
		t   int64
		typ int8
		id  int32
	}
	pts := make([]point, 0, 2*len(calls))
	for i, c := range calls {
		pts = append(pts, point{c.ts, 1, int32(i)})
		typ := int8(0)
		if c.end == c.ts {
			typ = 2
		}
		pts = append(pts, point{c.end, typ, int32(i)})
	}
	slices.SortFunc(pts, func(a, b point) int {
		return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.typ, b.typ), cmp.Compare(a.id, b.id))
	})
	var sum int64
	for _, p := range pts {
		if p.typ == 1 {
			sum++
			calls[p.id].depth = sum - 1
		} else {
			sum--
		}
	}
	// The parent: the last earlier call (by id) one level up.
	last := map[int64]int32{}
	maxEnd := map[int32]int64{}
	for i := range calls {
		c := &calls[i]
		if p, ok := last[c.depth-1]; ok {
			calls[p].child += c.dur
		}
		last[c.depth] = int32(i)
		e, seen := maxEnd[c.name]
		c.outer = !seen || e < c.end
		if !seen || c.end > e {
			maxEnd[c.name] = c.end
		}
	}
}

// opsKey is the preset's GROUP BY.
type opsKey struct {
	th          int32 // its trace and rank
	step        int64
	phase, name int32
	annotation  bool
}

type opsSum struct {
	key                                                opsKey
	count, incl, self, max, launches, gpuEvents, gpuNs int64
}

// sum groups the nested calls and orders the groups as the preset does:
// trace, rank, step, phase, self time (the largest first), name.
func (o *ops) sum(order []int32) *table.Table {
	// Threads of one trace and rank group together: key them by the first
	// thread of that pair in order.
	first := make([]int32, len(order))
	for th := 1; th < len(order); th++ {
		a, b := o.threads[order[th-1]], o.threads[order[th]]
		first[th] = int32(th)
		if cmpNstr(a.trace, b.trace) == 0 && a.rank == b.rank {
			first[th] = first[th-1]
		}
	}
	at := map[opsKey]int{}
	var sums []opsSum
	for _, c := range o.calls {
		k := opsKey{th: first[c.th], step: c.step, phase: c.phase, name: c.name, annotation: c.annotation}
		i, ok := at[k]
		if !ok {
			i = len(sums)
			sums = append(sums, opsSum{key: k})
			at[k] = i
		}
		s := &sums[i]
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
	slices.SortFunc(sums, func(a, b opsSum) int {
		return cmp.Or(cmp.Compare(a.key.th, b.key.th), cmp.Compare(a.key.step, b.key.step),
			cmpNstr(o.texts[a.key.phase], o.texts[b.key.phase]), cmp.Compare(b.self, a.self),
			cmpNstr(o.texts[a.key.name], o.texts[b.key.name]), cmpBool(a.key.annotation, b.key.annotation))
	})
	t := &table.Table{Name: "ops", Columns: slices.Clone(opsColumns), Rows: make([][]any, len(sums)), Total: int64(len(sums))}
	for i, s := range sums {
		th := o.threads[order[s.key.th]]
		t.Rows[i] = []any{th.trace.val(), th.rank, s.key.step, o.texts[s.key.phase].val(), o.texts[s.key.name].val(),
			s.count, s.incl, s.self, s.max, s.launches, s.gpuEvents, s.gpuNs, s.key.annotation}
	}
	return t
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
