package perfetto

import (
	"cmp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/analysis/table"
)

// Timeline reduces one finding's window to what the report's timeline
// chart draws (report.Timeline): the busiest host threads and GPU streams
// of the rank, each a list of busy spans drawn at about a pixel's
// resolution (merge), and the finding's flagged intervals (the marks the
// saved file's track holds), drawn the same way. nil when the window holds
// no event.
func Timeline(in Input) *report.Timeline {
	if in.Window.EndNs <= in.Window.StartNs {
		return nil
	}
	return timeline(in, prepare(in.Rows))
}

// Timelines is Timeline for each input, the rows of inputs that share
// them (findings whose windows are the same) read once.
func Timelines(ins []Input) []*report.Timeline {
	out := make([]*report.Timeline, len(ins))
	read := map[*table.Table]*prepared{}
	for i, in := range ins {
		if in.Window.EndNs <= in.Window.StartNs {
			continue
		}
		p := read[in.Rows]
		if p == nil {
			p = prepare(in.Rows)
			read[in.Rows] = p
		}
		out[i] = timeline(in, p)
	}
	return out
}

// timeline is Timeline with the window's rows read (p).
func timeline(in Input, p *prepared) *report.Timeline {
	w := in.Window
	length := w.EndNs - w.StartNs
	events, gaps, threads, org := p.events, p.gaps, p.thrds, p.org
	if len(events) == 0 {
		return nil
	}
	start := org.t0 + w.StartNs // the window's start in trace time
	names := map[string]string{}
	for _, t := range threads {
		if t.name != "" {
			names[t.pid+"\x00"+t.tid] = t.name
		}
	}
	type lane struct {
		key, name string
		gpu       bool
		order     int64
		ivs       []ival
	}
	lanes := map[string]*lane{}
	drawn := 0
	for i := range events {
		e := &events[i]
		var key, name string
		var gpu bool
		var kind report.SpanKind
		var order int64
		switch {
		case isGPU(e):
			gpu = true
			// Kineto writes GPU work on pid = device, tid = stream.
			stream, _ := strconv.ParseInt(e.tid, 10, 64)
			if e.has&hasStream != 0 {
				stream = e.stream
			}
			key = "g\x00" + strconv.FormatInt(e.device, 10) + "\x00" + strconv.FormatInt(stream, 10)
			name = "GPU stream " + strconv.FormatInt(stream, 10)
			if e.has&hasDevice != 0 {
				name = "GPU " + strconv.FormatInt(e.device, 10) + " stream " + strconv.FormatInt(stream, 10)
			}
			order = e.device<<32 | (stream & 0xffffffff)
			switch {
			case e.class == "COMM":
				kind = report.SpanComm
			case e.kind == "gpu_memcpy" || e.kind == "gpu_memset" || e.class == "MEM":
				kind = report.SpanMem
			default:
				kind = report.SpanCompute
			}
		case e.kind == "runtime" || e.kind == "driver" || e.kind == "cpu_op" || e.kind == "annotation" || e.kind == "python":
			key = "h\x00" + e.pid + "\x00" + e.tid
			name = "thread " + e.tid
			if n := names[e.pid+"\x00"+e.tid]; n != "" && n != e.tid {
				name = n
				if !strings.Contains(n, e.tid) {
					name += " (thread " + e.tid + ")"
				}
			}
			order, _ = strconv.ParseInt(e.tid, 10, 64)
			switch {
			case isHost(e) && e.api == "sync" && !strings.Contains(e.name, "WaitEvent"):
				kind = report.SpanSync
			case isHost(e):
				kind = report.SpanLaunch
			default:
				kind = report.SpanHostOp
			}
		default:
			continue
		}
		a, b := max(e.ts-start, 0), min(e.ts+e.dur-start, length)
		if b <= a && !(e.dur == 0 && a == b && a >= 0 && a <= length) {
			continue
		}
		l := lanes[key]
		if l == nil {
			l = &lane{key: key, name: name, gpu: gpu, order: order}
			lanes[key] = l
		}
		l.ivs = append(l.ivs, ival{a, b, kind})
		drawn++
	}
	tl := &report.Timeline{Events: drawn, InWindow: max(org.total, len(events))}
	var host, gpu []*lane
	for _, l := range lanes {
		if l.gpu {
			gpu = append(gpu, l)
		} else {
			host = append(host, l)
		}
	}
	tl.HostLanes, tl.GPULanes = len(host), len(gpu)
	busy := map[*lane]int64{}
	for _, l := range lanes {
		busy[l] = union(l.ivs)
	}
	// The busiest lanes, then in the lane order (thread id, stream).
	pick := func(ls []*lane, n int) []*lane {
		sort.Slice(ls, func(i, j int) bool {
			if busy[ls[i]] != busy[ls[j]] {
				return busy[ls[i]] > busy[ls[j]]
			}
			return ls[i].key < ls[j].key
		})
		ls = ls[:min(n, len(ls))]
		sort.Slice(ls, func(i, j int) bool {
			if ls[i].order != ls[j].order {
				return ls[i].order < ls[j].order
			}
			return ls[i].key < ls[j].key
		})
		return ls
	}
	for _, l := range append(pick(host, report.MaxHostLanes), pick(gpu, report.MaxGPULanes)...) {
		tl.Lanes = append(tl.Lanes, report.TimelineLane{Name: l.name, GPU: l.gpu, BusyNs: busy[l], Spans: merge(l.ivs, length, !l.gpu)})
	}
	var ms []ival
	seen := map[string]bool{}
	var what []string
	for _, m := range marks(w, events, gaps) {
		a, b := max(m.ts-start, 0), min(m.ts+m.dur-start, length)
		if b < a {
			continue
		}
		ms = append(ms, ival{a, b, report.SpanMark})
		if !seen[m.what] && len(what) < 2 {
			seen[m.what] = true
			what = append(what, m.what)
		}
	}
	tl.Marks = merge(ms, length, true)
	tl.MarksNs = unionLen(ms)
	tl.MarkWhat = strings.Join(what, "; ")
	return tl
}

// unionLen is the length of the union of ivs, exactly.
func unionLen(ivs []ival) int64 {
	sorted := slices.Clone(ivs)
	slices.SortFunc(sorted, func(x, y ival) int { return cmp.Compare(x.a, y.a) })
	var n, end int64
	for _, v := range sorted {
		if v.b > end {
			n += v.b - max(v.a, end)
			end = v.b
		}
	}
	return n
}

// ival is one event of a lane, clipped to the window (ns from its start).
type ival struct {
	a, b int64
	kind report.SpanKind
}

// union is the time the intervals cover together.
func union(ivs []ival) int64 {
	s := append([]ival(nil), ivs...)
	sort.Slice(s, func(i, j int) bool { return s[i].a < s[j].a })
	var total, end int64 = 0, -1
	for _, v := range s {
		if v.b <= end {
			continue
		}
		if v.a > end {
			total += v.b - v.a
		} else {
			total += v.b - end
		}
		end = v.b
	}
	return total
}

// merge draws a lane's intervals at the timeline's resolution: the window
// is cut into timelineCols columns, a column where any interval lies is
// busy, and runs of busy columns of one kind become spans (column-aligned).
// A column's kind is, byPriority (host threads), the highest kind that
// covers at least half of it, else the kind with the most time in it. Past
// report.MaxSpans spans, idle runs of one column are filled, then of two,
// and so on, until the lane fits.
func merge(ivs []ival, length int64, byPriority bool) []report.Span {
	if len(ivs) == 0 || length <= 0 {
		return nil
	}
	const kinds = int(report.SpanMark) + 1
	cols := timelineCols
	colW := float64(length) / float64(cols)
	// cov[k][c]: ns of kind k in column c; full columns inside an
	// interval go through a difference array.
	cov := make([][]float64, kinds)
	diff := make([][]float64, kinds)
	for k := range cov {
		cov[k] = make([]float64, cols)
		diff[k] = make([]float64, cols+1)
	}
	busy := make([]bool, cols)
	for _, v := range ivs {
		a, b := float64(v.a)/colW, float64(v.b)/colW
		ca, cb := min(int(a), cols-1), min(int(b), cols-1)
		busy[ca] = true
		if ca == cb {
			cov[v.kind][ca] += float64(v.b - v.a)
			continue
		}
		cov[v.kind][ca] += (float64(ca+1) - a) * colW
		cov[v.kind][cb] += (b - float64(cb)) * colW
		if b > float64(cb) {
			busy[cb] = true
		}
		diff[v.kind][ca+1]++
		diff[v.kind][cb]--
	}
	kindAt := make([]int, cols)
	for k := range diff {
		run := 0.0
		for c := 0; c < cols; c++ {
			run += diff[k][c]
			if run > 0 {
				cov[k][c] += run * colW
				busy[c] = true
			}
		}
	}
	for c := 0; c < cols; c++ {
		best := 0
		for k := 1; k < kinds; k++ {
			if cov[k][c] > cov[best][c] {
				best = k
			}
		}
		if byPriority {
			for k := kinds - 1; k >= 0; k-- {
				if cov[k][c] >= colW/2 {
					best = k
					break
				}
			}
		}
		kindAt[c] = best
	}
	for fill := 1; ; fill++ {
		out := runs(busy, kindAt, colW, length)
		if len(out) <= report.MaxSpans || fill > cols {
			return out
		}
		// Fill the idle runs of at most fill columns between busy ones.
		for c := 1; c < cols; {
			if busy[c] || !busy[c-1] {
				c++
				continue
			}
			e := c
			for e < cols && !busy[e] {
				e++
			}
			if e < cols && e-c <= fill {
				for i := c; i < e; i++ {
					busy[i], kindAt[i] = true, kindAt[c-1]
				}
			}
			c = e
		}
	}
}

// timelineCols is the number of columns merge draws a lane at: about one
// per pixel of the report's timeline.
const timelineCols = 700

// runs turns the busy columns into spans, one per run of one kind.
func runs(busy []bool, kindAt []int, colW float64, length int64) []report.Span {
	var out []report.Span
	at := func(c int) int64 { return min(int64(float64(c)*colW+0.5), length) }
	for c := 0; c < len(busy); {
		if !busy[c] {
			c++
			continue
		}
		e := c + 1
		for e < len(busy) && busy[e] && kindAt[e] == kindAt[c] {
			e++
		}
		out = append(out, report.Span{StartNs: at(c), DurNs: at(e) - at(c), Kind: report.SpanKind(kindAt[c])})
		c = e
	}
	return out
}
