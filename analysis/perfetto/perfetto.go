// Package perfetto writes a report finding's window as a Chrome trace (the
// JSON `{"traceEvents": [...]}` that Perfetto and chrome://tracing open):
// the events of the finding's worst step ±1 on its rank, as
// sql/perfetto.sql returns them, with their process and thread names and
// the ac2g flow arrows between launches and GPU work, plus the finding
// itself as a track of its own: a process named "tracebook findings" with
// one slice over the worst step (the rule's title, the observation, the
// fix and the numbers with their context as args) and one slice per
// flagged interval (the sync calls and the GPU gaps they opened, the
// pageable copies, the host-wait gaps, ...: the Marks of the rule's row of
// findings.Rules).
//
// The window is chosen by analysis/report (report.PlanWindows); running
// the SQL is the engine's job (pipeline.AddPerfetto). This package is pure:
// rows in, bytes out. It writes JSON by hand (no encoding/json): names from
// traces are escaped, timestamps are the trace's own microseconds, exact
// from the nanoseconds (1695835585862981.5 stays 1695835585862981.5).
package perfetto

import (
	"bytes"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/findings"
	"github.com/tracebook/tracebook/analysis/internal/jsonstr"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/analysis/table"
)

// DefaultMaxEvents is the most trace events a file keeps (longest first);
// the SQL returns at most this many.
const DefaultMaxEvents = 20000

// DefaultMaxPython is the most python frames a window may hold for them to
// be exported (sql/perfetto.sql's $6): with_stack traces hold many.
const DefaultMaxPython = 2000

// ReportBudget is the most bytes (gzip) the files of one report take
// together in the single-file page.
const ReportBudget = 96 << 10

// PageLimit is the size the single-file report stays under with its files
// (an 8-rank, 1,000-step job's report included: wasm/size_test.go).
const PageLimit = 3_000_000

// minBudget is the least budget PageBudget gives: a page that leaves less
// room still gets files of a hundred events or so each.
const minBudget = 8 << 10

// PageBudget is the budget for Files when the report's page without the
// files takes pageBytes: what is left under PageLimit (less a margin, and
// less the quarter that the page's base85 adds), at most ReportBudget and
// at least 8 kB.
func PageBudget(pageBytes int) int {
	left := (PageLimit - pageBytes - 4<<10) * 4 / 5
	return max(min(left, ReportBudget), minBudget)
}

// maxMarks caps the flagged intervals drawn on the finding's track, and
// maxLanes the rows they are spread over where they overlap.
const (
	maxMarks = 500
	maxLanes = 8
)

// Input is one finding's window with the rows of sql/perfetto.sql for it.
type Input struct {
	Window  report.Window
	Finding evidence.Finding
	Rows    *table.Table
}

// Options tune Build.
type Options struct {
	// MaxEvents keeps this many trace events, longest first; 0 = DefaultMaxEvents.
	MaxEvents int
	// NoFlows leaves out the ac2g arrows.
	NoFlows bool
	// Why says why events were left out past MaxEvents ("to fit the
	// report's size budget"); "" = the default cap.
	Why string
}

// maxEvents is the cap o sets: MaxEvents, else DefaultMaxEvents.
func (o Options) maxEvents() int {
	if o.MaxEvents > 0 {
		return o.MaxEvents
	}
	return DefaultMaxEvents
}

// Stats say what a file holds.
type Stats struct {
	InWindow   int // events of the window (sql/perfetto.sql's total)
	Returned   int // events the SQL returned (its cap)
	Kept       int // events written
	Flows      int // ac2g arrows written
	Marks      int // flagged intervals on the finding's track
	Python     int // python frames in the window
	PythonKept bool

	bytes, flowBytes int // JSON bytes written, of which the flows
}

// Capped reports whether events of the window were left out.
func (s Stats) Capped() bool { return s.Kept < s.InWindow-s.pythonLeft() }

func (s Stats) pythonLeft() int {
	if s.PythonKept {
		return 0
	}
	return s.Python
}

// event is one row of sql/perfetto.sql.
type event struct {
	rowKind, pid, tid, kind, api, cat, name, label, class string
	sync, srcKind, dstKind                                string
	copyBytes                                             int64
	ts, dur                                               int64
	corr, ext, stream, device, bytes, graph, sortIndex    int64
	has                                                   uint16
	pidN, tidN                                            int64 // the numbers written (ids)
}

const (
	hasCorr = 1 << iota
	hasExt
	hasStream
	hasDevice
	hasBytes
	hasGraph
	hasSort
)

func (e *event) end() int64 { return e.ts + e.dur }

// origin is the origin row of sql/perfetto.sql.
type origin struct {
	t0            int64 // the trace's first timestamp
	total, python int
	pythonKept    bool
}

func readRows(t *table.Table) (events, gaps, procs, threads []event, o origin) {
	if t == nil {
		return
	}
	col := func(name string) int { return t.Col(name) }
	c := struct {
		rk, pid, tid, kind, api, cat, name, label, si, ts, dur, corr, ext, stream, dev, bytes, graph, class, total, py, pyk int
		sync, src, dst, copyBytes                                                                                           int
	}{
		col("row_kind"), col("pid"), col("tid"), col("kind"), col("api"), col("cat"), col("name"), col("label"), col("sort_index"),
		col("ts_ns"), col("dur_ns"), col("correlation"), col("external_id"), col("stream"), col("device"), col("bytes"),
		col("graph_id"), col("class"), col("total"), col("python"), col("python_kept"),
		col("sync"), col("src_kind"), col("dst_kind"), col("copy_bytes"),
	}
	str := func(r []any, i int) string {
		if i < 0 || i >= len(r) {
			return ""
		}
		s, _ := r[i].(string)
		return s
	}
	num := func(r []any, i int) (int64, bool) {
		if i < 0 || i >= len(r) {
			return 0, false
		}
		switch v := r[i].(type) {
		case int64:
			return v, true
		case float64:
			return int64(v), true
		}
		return 0, false
	}
	events = make([]event, 0, len(t.Rows))
	for _, r := range t.Rows {
		e := event{rowKind: str(r, c.rk), pid: str(r, c.pid), tid: str(r, c.tid), kind: str(r, c.kind), api: str(r, c.api),
			cat: str(r, c.cat), name: str(r, c.name), label: str(r, c.label), class: str(r, c.class),
			sync: str(r, c.sync), srcKind: str(r, c.src), dstKind: str(r, c.dst)}
		e.copyBytes, _ = num(r, c.copyBytes)
		e.ts, _ = num(r, c.ts)
		e.dur, _ = num(r, c.dur)
		set := func(i int, dst *int64, bit uint16) {
			if v, ok := num(r, i); ok {
				*dst = v
				e.has |= bit
			}
		}
		set(c.corr, &e.corr, hasCorr)
		set(c.ext, &e.ext, hasExt)
		set(c.stream, &e.stream, hasStream)
		set(c.dev, &e.device, hasDevice)
		set(c.bytes, &e.bytes, hasBytes)
		set(c.graph, &e.graph, hasGraph)
		set(c.si, &e.sortIndex, hasSort)
		switch e.rowKind {
		case "event":
			events = append(events, e)
		case "gap":
			gaps = append(gaps, e)
		case "process":
			procs = append(procs, e)
		case "thread":
			threads = append(threads, e)
		case "origin":
			tot, _ := num(r, c.total)
			py, _ := num(r, c.py)
			o = origin{t0: e.ts, total: int(tot), python: int(py)}
			if c.pyk >= 0 && c.pyk < len(r) {
				o.pythonKept, _ = r[c.pyk].(bool)
			}
		}
	}
	return
}

// mark is one flagged interval of the finding's track.
type mark struct {
	name, what string
	ts, dur    int64
	lane       int
}

func isHost(e *event) bool { return e.kind == "runtime" || e.kind == "driver" }
func isGPU(e *event) bool {
	return e.kind == "kernel" || e.kind == "gpu_memcpy" || e.kind == "gpu_memset"
}

// marks finds the flagged intervals of rule among the rows: what the
// finding is about (the Marks of its row of findings.Rules), drawn where it
// happened.
func marks(w report.Window, events, gaps []event) []mark {
	var out []mark
	var m *findings.Marks
	if r := findings.RuleOf(w.Rule); r != nil {
		m = r.Marks
	}
	if m == nil {
		return nil
	}
	var subj findings.Subject
	if w.Subject != nil {
		subj = *w.Subject
	}
	if m.Event != nil {
		launch := map[int64]*event{} // correlation -> its host call
		for i := range events {
			if e := &events[i]; e.has&hasCorr != 0 && isHost(e) {
				launch[e.corr] = e
			}
		}
		for i := range events {
			e := &events[i]
			fe := findings.Event{Kind: e.kind, API: e.api, Name: e.name, Class: e.class, Dur: e.dur,
				Sync: e.sync, SrcKind: e.srcKind, DstKind: e.dstKind, CopyBytes: e.copyBytes}
			if !m.Event(fe, subj) {
				continue
			}
			out = append(out, mark{name: m.Named.Name(e.name), what: m.Named.What, ts: e.ts, dur: e.dur})
			if d := m.During; d != nil {
				// A gap the call opened ends at a launch after it began
				// (host_wait), as the sync area counts it: one that queued
				// work ends waited on something else (trace_diff_test_v100:
				// 140 ms of such gaps beside a finding of no GPU gap). It
				// is drawn up to the call's duration, as the sync area
				// counts it too: the rest of the gap is the host's own work
				// after the call (h100_owlv2: a DataLoader's 491 ms of GPU
				// idle after 6-us syncs was drawn as theirs, 856 ms of
				// flagged intervals beside a finding of 1.1 ms of gaps).
				for _, g := range gaps {
					if g.kind == "host_wait" && g.ts >= e.ts && g.ts <= e.end() {
						out = append(out, mark{name: d.Name(e.name), what: d.What, ts: g.ts, dur: min(g.dur, e.dur)})
					}
				}
			}
			if l := m.Launch; l != nil && e.has&hasCorr != 0 {
				if c := launch[e.corr]; c != nil {
					out = append(out, mark{name: l.Name(c.name), what: l.What, ts: c.ts, dur: c.dur})
				}
			}
		}
	}
	if m.Gap != nil {
		for _, g := range gaps {
			if m.Gap(g.kind) {
				out = append(out, mark{name: m.GapNamed.Name(g.kind), what: m.GapNamed.What, ts: g.ts, dur: g.dur})
			}
		}
	}
	// Longest first past the cap, then spread over lanes so that no two
	// slices of one lane overlap.
	sort.SliceStable(out, func(i, j int) bool { return out[i].dur > out[j].dur })
	if len(out) > maxMarks {
		out = out[:maxMarks]
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].ts != out[j].ts {
			return out[i].ts < out[j].ts
		}
		return out[i].dur > out[j].dur
	})
	var laneEnd []int64
	kept := out[:0]
	for _, m := range out {
		lane := -1
		for l, end := range laneEnd {
			if end <= m.ts {
				lane = l
				break
			}
		}
		if lane < 0 {
			if len(laneEnd) == maxLanes {
				continue
			}
			laneEnd = append(laneEnd, 0)
			lane = len(laneEnd) - 1
		}
		laneEnd[lane] = m.ts + m.dur
		m.lane = lane
		kept = append(kept, m)
	}
	return kept
}

// ids maps the pids and tids as written to the numbers the JSON carries:
// a decimal pid or tid stays itself; any other ("stream 7", "Spans") gets
// a number of its own, its text becoming the name of the process or thread.
type ids struct {
	next  int64
	pids  map[string]int64
	tids  map[string]int64
	named map[string]string // "p\x00pid" or "t\x00pid\x00tid" -> name from text
}

func newIDs() *ids {
	return &ids{next: 1 << 40, pids: map[string]int64{}, tids: map[string]int64{}, named: map[string]string{}}
}

func (m *ids) pid(p string) int64 { return m.id(m.pids, "p\x00"+p, p, p) }

func (m *ids) tid(p, t string) int64 { return m.id(m.tids, "t\x00"+p+"\x00"+t, p+"\x00"+t, t) }

// id returns the number of a pid or tid written as text: the text itself
// when it is a number, else a fresh number past every real one, whose
// text is kept in named under key for the name metadata.
func (m *ids) id(seen map[string]int64, key, k, text string) int64 {
	if v, ok := seen[k]; ok {
		return v
	}
	v, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		v = m.next
		m.next++
		m.named[key] = text
	}
	seen[k] = v
	return v
}

// Build writes the Chrome trace of one finding's window: a header with
// what the file holds, the finding's track, the names of the trace's
// processes and threads, its events (the MaxEvents longest, in time order)
// and the ac2g arrows between them.
func Build(in Input, opt Options) ([]byte, Stats) {
	p := prepare(in.Rows)
	body, st, pid := p.body(opt)
	head, st := p.head(in, p.marks(in.Window), st, pid, opt)
	return append(head, body...), st
}

// prepared is a window's rows read once: its events (longest first once
// a body is built, for building it under several caps) and its GPU idle
// gaps, for the flagged intervals and the timeline of each finding that
// shares the window.
type prepared struct {
	events, gaps, procs, thrds []event
	org                        origin
	byDur                      []*event // longest first; nil until body sorts them
}

func prepare(rows *table.Table) *prepared {
	p := &prepared{}
	p.events, p.gaps, p.procs, p.thrds, p.org = readRows(rows)
	return p
}

// marks are the flagged intervals of the finding whose window w is.
func (p *prepared) marks(w report.Window) []mark { return marks(w, p.events, p.gaps) }

// A file is written in two parts: the head (the header and the finding's
// track) and the body (the trace's names, events and flows, each element
// after a comma). Findings whose windows are the same have the same body:
// it is built once, and the single-file report stores it once
// (report.PerfettoFile.Split).

// body writes the body under opt's cap and returns it with the stats of
// what it kept (Marks and the byte counts are the head's to complete) and
// the pid the finding's track takes (one past the window's highest).
func (p *prepared) body(opt Options) (body []byte, st Stats, trackPid int64) {
	maxEvents := opt.maxEvents()
	st = Stats{InWindow: p.org.total, Returned: len(p.events), Python: p.org.python, PythonKept: p.org.pythonKept}
	if st.InWindow < len(p.events) {
		st.InWindow = len(p.events)
	}
	if p.byDur == nil {
		p.byDur = make([]*event, len(p.events))
		for i := range p.events {
			p.byDur[i] = &p.events[i]
		}
		sort.SliceStable(p.byDur, func(i, j int) bool { return p.byDur[i].dur > p.byDur[j].dur })
	}
	kept := inTimeOrder(p.byDur, maxEvents)
	st.Kept = len(kept)

	id := newIDs()
	var maxPid int64
	for _, e := range kept {
		if e.pidN = id.pid(e.pid); e.pidN > maxPid && e.pidN < 1<<40 {
			maxPid = e.pidN
		}
		e.tidN = id.tid(e.pid, e.tid)
	}
	b := &writer{} // not first: the head holds the first events
	b.b.Grow(256 * (len(kept) + 16))
	b.names(id, p.procs, p.thrds)
	b.events(kept)
	if !opt.NoFlows {
		before := b.b.Len()
		st.Flows = b.flows(kept)
		st.flowBytes = b.b.Len() - before
	}
	b.raw("\n]}\n")
	st.bytes = b.b.Len()
	return b.b.Bytes(), st, maxPid + 1
}

// head writes the head of in's file, whose finding flags ms, before a body
// that body returned with st and trackPid under opt, and completes st.
func (p *prepared) head(in Input, ms []mark, st Stats, trackPid int64, opt Options) ([]byte, Stats) {
	maxEvents := opt.maxEvents()
	st.Marks = len(ms)
	note := exportNote(st, maxEvents, opt.Why)
	h := &writer{first: true}
	h.b.Grow(256 * (len(ms) + 16))
	h.header(in.Window, st, note)
	h.finding(in, p.org.t0, trackPid, ms, note)
	st.bytes += h.b.Len()
	return h.b.Bytes(), st
}

// inTimeOrder keeps the first n of the events (longest first) and puts
// them in time order (an enclosing event before the ones it holds).
func inTimeOrder(byDur []*event, n int) []*event {
	kept := append([]*event(nil), byDur[:min(n, len(byDur))]...)
	sort.SliceStable(kept, func(i, j int) bool {
		a, b := kept[i], kept[j]
		if a.ts != b.ts {
			return a.ts < b.ts
		}
		if a.dur != b.dur {
			return a.dur > b.dur
		}
		if a.pid != b.pid {
			return a.pid < b.pid
		}
		return a.tid < b.tid
	})
	return kept
}

// header writes the top-level keys and opens traceEvents: the rank (so that
// loading the file into tracebook keeps it) and what the file holds.
func (w *writer) header(win report.Window, st Stats, note string) {
	w.raw(`{"schemaVersion":1,"traceName":`)
	w.str(win.File)
	w.raw(`,"distributedInfo":{"rank":`)
	w.int(int64(win.Rank))
	w.raw(`},"tracebook":{`)
	w.kv("note", note, true)
	w.raw(`,"finding":`)
	w.int(int64(win.N))
	w.kv("rule", win.Rule, false)
	w.kv("trace", win.Trace, false)
	w.kv("window", win.Text(), false)
	w.kv("basis", win.Basis, false)
	w.raw(`,"capped":`)
	w.bool(st.Capped())
	w.raw(`,"events_in_window":`)
	w.int(int64(st.InWindow))
	w.raw(`,"events_kept":`)
	w.int(int64(st.Kept))
	w.raw("},\n\"traceEvents\":[\n")
}

// next separates one event from the one before it.
func (w *writer) next() {
	if !w.first {
		w.raw(",\n")
	}
	w.first = false
}

// meta writes a metadata (M) event whose one arg is key; tid < 0 = none.
func (w *writer) meta(name string, pid, tid int64, key string, val func()) {
	w.next()
	w.raw(`{"ph":"M","name":`)
	w.str(name)
	w.raw(`,"pid":`)
	w.int(pid)
	if tid >= 0 {
		w.raw(`,"tid":`)
		w.int(tid)
	}
	w.raw(`,"args":{`)
	w.str(key)
	w.raw(":")
	val()
	w.raw("}}")
}

// at writes an event's "pid", "tid" and "ts" members.
func (w *writer) at(pid, tid, ts int64) {
	w.raw(`,"pid":`)
	w.int(pid)
	w.raw(`,"tid":`)
	w.int(tid)
	w.raw(`,"ts":`)
	w.us(ts)
}

// slice writes an X event; args writes the inside of its args object (nil = none).
func (w *writer) slice(cat, name string, pid, tid, ts, dur int64, args func()) {
	w.next()
	w.raw(`{"ph":"X","cat":`)
	w.str(cat)
	w.raw(`,"name":`)
	w.str(name)
	w.at(pid, tid, ts)
	w.raw(`,"dur":`)
	w.us(dur)
	if args != nil {
		w.raw(`,"args":{`)
		args()
		w.raw("}")
	}
	w.raw("}")
}

// names writes the names of the processes and threads the kept events use:
// those of the trace's metadata, else the text of a pid or tid that was
// not a number.
func (w *writer) names(id *ids, procs, threads []event) {
	procName := map[int64]bool{}
	for _, p := range procs {
		if _, ok := id.pids[p.pid]; !ok {
			continue
		}
		pid := id.pid(p.pid)
		if p.name != "" {
			w.meta("process_name", pid, -1, "name", func() { w.str(p.name) })
			procName[pid] = true
		}
		if p.label != "" {
			w.meta("process_labels", pid, -1, "labels", func() { w.str(p.label) })
		}
		if p.has&hasSort != 0 {
			w.meta("process_sort_index", pid, -1, "sort_index", func() { w.int(p.sortIndex) })
		}
	}
	thrName := map[string]bool{}
	for _, t := range threads {
		k := t.pid + "\x00" + t.tid
		if _, ok := id.tids[k]; !ok {
			continue
		}
		pid, tid := id.pid(t.pid), id.tid(t.pid, t.tid)
		if t.name != "" {
			w.meta("thread_name", pid, tid, "name", func() { w.str(t.name) })
			thrName[k] = true
		}
		if t.has&hasSort != 0 {
			w.meta("thread_sort_index", pid, tid, "sort_index", func() { w.int(t.sortIndex) })
		}
	}
	var named []string
	for k := range id.named {
		named = append(named, k)
	}
	sort.Strings(named)
	for _, k := range named {
		parts := strings.Split(k, "\x00")
		if parts[0] == "p" && !procName[id.pids[parts[1]]] {
			w.meta("process_name", id.pids[parts[1]], -1, "name", func() { w.str(parts[1]) })
		}
		if parts[0] == "t" && !thrName[parts[1]+"\x00"+parts[2]] {
			w.meta("thread_name", id.pid(parts[1]), id.tids[parts[1]+"\x00"+parts[2]], "name", func() { w.str(parts[2]) })
		}
	}
}

// finding writes the finding's own process (pid): thread 1 holds one slice
// over the worst step (or the anchor instance) named after the rule's
// title, with the observation, the fix and the numbers as args; threads 2
// and up hold the flagged intervals, one lane per thread where they overlap.
func (w *writer) finding(in Input, t0, pid int64, ms []mark, note string) {
	w.meta("process_name", pid, -1, "name", func() { w.str("tracebook findings") })
	w.meta("process_sort_index", pid, -1, "sort_index", func() { w.int(-1) })
	w.meta("thread_name", pid, 1, "name", func() { w.str("finding " + strconv.Itoa(in.Window.N) + ": " + in.Window.Rule) })
	lanes := 0
	for _, m := range ms {
		lanes = max(lanes, m.lane+1)
	}
	for l := 0; l < lanes; l++ {
		name := "flagged intervals"
		if l > 0 {
			name += " (" + strconv.Itoa(l+1) + ")"
		}
		w.meta("thread_name", pid, int64(2+l), "name", func() { w.str(name) })
	}
	f, win := in.Finding, in.Window
	title := f.Title
	if title == "" {
		title = win.Rule
	}
	w.slice("tracebook", title, pid, 1, t0+win.FocusStartNs, max(win.FocusEndNs-win.FocusStartNs, 0), func() {
		w.kv("rule", win.Rule, true)
		w.kv("severity", f.Severity, false)
		w.kv("status", f.Status, false)
		w.kv("observation", f.Observation, false)
		optional := func(k, v string) {
			if v != "" {
				w.kv(k, v, false)
			}
		}
		optional("mechanism", f.Mechanism)
		w.kv("fix", f.Fix, false)
		optional("snippet", f.Snippet)
		optional("verify", f.Verify)
		optional("refute", f.Refute)
		w.kv("window", win.Text(), false)
		w.kv("why this window", win.Basis, false)
		if t := f.ImpactText(); t != "" {
			w.kv("impact", t+" (what the report ranks findings by)", false)
		}
		optional("evidence", evidenceText(f.Evidence))
		w.kv("export", note, false)
	})
	for _, m := range ms {
		w.slice("tracebook", m.name, pid, int64(2+m.lane), m.ts, m.dur, func() {
			w.kv("rule", win.Rule, true)
			w.kv("what", m.what, false)
		})
	}
}

// events writes the trace's events with the args that link them
// (External id, correlation) and say where they ran (stream, device).
func (w *writer) events(kept []*event) {
	for _, e := range kept {
		var args func()
		if e.has&(hasCorr|hasExt|hasStream|hasDevice|hasBytes|hasGraph) != 0 {
			args = func() {
				sep := ""
				for _, a := range [...]struct {
					bit uint16
					key string
					v   int64
				}{{hasExt, "External id", e.ext}, {hasCorr, "correlation", e.corr}, {hasStream, "stream", e.stream},
					{hasDevice, "device", e.device}, {hasBytes, "bytes", e.bytes}, {hasGraph, "graph id", e.graph}} {
					if e.has&a.bit == 0 {
						continue
					}
					w.raw(sep + `"` + a.key + `":`)
					sep = ","
					w.int(a.v)
				}
			}
		}
		w.slice(e.cat, e.name, e.pidN, e.tidN, e.ts, e.dur, args)
	}
}

// flows writes Kineto's ac2g arrows among the kept events: from the runtime
// call to each GPU operation with its correlation. It returns the arrows.
func (w *writer) flows(kept []*event) int {
	launchAt := map[int64]*event{} // correlation -> its host call
	for _, e := range kept {
		if isHost(e) && e.has&hasCorr != 0 {
			if _, ok := launchAt[e.corr]; !ok {
				launchAt[e.corr] = e
			}
		}
	}
	end := func(ph string, e *event, corr int64) {
		w.next()
		w.raw(`{"ph":"` + ph + `",`)
		if ph == "f" {
			w.raw(`"bp":"e",`)
		}
		w.raw(`"cat":"ac2g","name":"ac2g","id":`)
		w.int(corr)
		w.at(e.pidN, e.tidN, e.ts)
		w.raw("}")
	}
	n := 0
	started := map[int64]bool{}
	for _, g := range kept {
		if !isGPU(g) || g.has&hasCorr == 0 {
			continue
		}
		l, ok := launchAt[g.corr]
		if !ok {
			continue
		}
		if !started[g.corr] {
			started[g.corr] = true
			end("s", l, g.corr)
		}
		end("f", g, g.corr)
		n++
	}
	return n
}

// exportNote says what the file holds of the window.
func exportNote(st Stats, maxEvents int, why string) string {
	s := "all " + strconv.Itoa(st.Kept) + " events of the window"
	if st.Capped() {
		if why == "" {
			why = "the export's cap of " + strconv.Itoa(maxEvents) + " events"
		}
		s = "capped: " + strconv.Itoa(st.Kept) + " of the " + strconv.Itoa(st.InWindow) + " events of the window, the longest first (" + why + ")"
	}
	if st.Python > 0 && !st.PythonKept {
		s += "; its " + strconv.Itoa(st.Python) + " python frames are left out (more than " + strconv.Itoa(DefaultMaxPython) + ")"
	}
	return s
}

func evidenceText(refs []evidence.Ref) string {
	var parts []string
	for _, r := range refs {
		parts = append(parts, r.String())
	}
	return strings.Join(parts, "; ")
}

// Files builds the file of every input so that together they take at most
// budget bytes gzip-compressed (0 = no budget). Inputs with the same window
// share their body (the trace's events), which the single-file report
// stores once, so a budget counts it once. The windows are sized smallest
// first, each within an equal share of what the ones before it left; a
// window past its share first loses its flow arrows, then keeps fewer
// events (longest first) until it fits, and its files say so. The files
// come back in the inputs' order.
func Files(ins []Input, budget int) []report.PerfettoFile {
	// The inputs of one window (findings whose windows are the same) share
	// its rows: they are read once and the body built once for them all;
	// each finding writes its own head.
	type group struct {
		members []int
		prep    *prepared
		ms      [][]mark // each member's flagged intervals
		heads   [][]byte
		sts     []Stats
		body    []byte
		gz      [][2][]byte // each head and (the first member) the body compressed, as the budget measured them
		size    int
	}
	var groups []*group
	byKey := map[string]*group{}
	for i, in := range ins {
		w := in.Window
		k := w.Trace + "\x00" + strconv.Itoa(w.Rank) + "\x00" + strconv.FormatInt(w.StartNs, 10) + "\x00" + strconv.FormatInt(w.EndNs, 10)
		g := byKey[k]
		if g == nil {
			g = &group{}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.members = append(g.members, i)
	}
	buildGroup := func(g *group, opt Options) {
		body, st, pid := g.prep.body(opt)
		g.body, g.size = body, 0
		g.heads, g.sts, g.gz = make([][]byte, len(g.members)), make([]Stats, len(g.members)), make([][2][]byte, len(g.members))
		for j, i := range g.members {
			g.heads[j], g.sts[j] = g.prep.head(ins[i], g.ms[j], st, pid, opt)
			if budget > 0 {
				g.gz[j][0] = gzipBytes(g.heads[j])
				g.size += len(g.gz[j][0])
				if j == 0 {
					g.gz[j][1] = gzipBytes(g.body)
					g.size += len(g.gz[j][1])
				}
			}
		}
	}
	// Each window is read and first built on a goroutine of its own: they
	// share nothing but the rows they read.
	var wg sync.WaitGroup
	for _, g := range groups {
		wg.Go(func() {
			g.prep = prepare(ins[g.members[0]].Rows)
			for _, i := range g.members {
				g.ms = append(g.ms, g.prep.marks(ins[i].Window))
			}
			buildGroup(g, Options{})
		})
	}
	wg.Wait()
	if budget > 0 {
		order := append([]*group(nil), groups...)
		sort.SliceStable(order, func(a, b int) bool { return order[a].size < order[b].size })
		left := budget
		for k, g := range order {
			share := left / (len(order) - k)
			opt := Options{Why: "to fit the report's size budget of " + strconv.Itoa(share>>10) + " kB gzip for this window"}
			for tries := 0; g.size > share && tries < 12; tries++ {
				st := g.sts[0]
				// Without the flows the file would take about this much.
				gz := float64(g.size)
				if st.bytes > 0 {
					gz *= float64(st.bytes-st.flowBytes) / float64(st.bytes)
				}
				opt.NoFlows = opt.NoFlows || st.Flows > 0
				if gz > float64(share) {
					next := int(float64(st.Kept) * float64(share) / gz * 0.9)
					if next >= st.Kept {
						next = st.Kept - 1
					}
					if next < 1 {
						break
					}
					opt.MaxEvents = next
				}
				buildGroup(g, opt)
			}
			left -= g.size
		}
	}
	out := make([]report.PerfettoFile, len(ins))
	for _, g := range groups {
		for j, i := range g.members {
			head := g.heads[j]
			out[i] = report.PerfettoFile{Name: ins[i].Window.File, JSON: append(head[:len(head):len(head)], g.body...), Split: len(head), Gz: g.gz[j]}
		}
	}
	return out
}

// gzipBytes compresses b as the page stores it (report.PerfettoFile.Gz),
// with klauspost's level 6: the budget is measured on what the page
// holds, at a fifth of the time of the standard library's
// BestCompression, for a few percent more bytes (the 1.2 MB body of the
// vLLM H100 trace's window: 3.9 against 19 ms, 101 against 90 kB).
func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, 6)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// writer writes JSON by hand; first is true until the first event.
type writer struct {
	b     bytes.Buffer
	first bool
	tmp   []byte
}

func (w *writer) raw(s string) { w.b.WriteString(s) }
func (w *writer) int(v int64) {
	w.tmp = strconv.AppendInt(w.tmp[:0], v, 10)
	w.b.Write(w.tmp)
}
func (w *writer) bool(v bool) {
	if v {
		w.raw("true")
	} else {
		w.raw("false")
	}
}

// kv writes "key":"value", with a comma before it unless first.
func (w *writer) kv(key, val string, first bool) {
	if !first {
		w.raw(",")
	}
	w.str(key)
	w.raw(":")
	w.str(val)
}

// us writes nanoseconds as the trace's microseconds, exactly: 1234567 ns
// is 1234.567, 1234000 ns is 1234.
func (w *writer) us(ns int64) {
	w.tmp = appendMicros(w.tmp[:0], ns)
	w.b.Write(w.tmp)
}

// Micros formats nanoseconds as decimal microseconds without rounding.
func Micros(ns int64) string { return string(appendMicros(nil, ns)) }

func appendMicros(b []byte, ns int64) []byte {
	u := uint64(ns)
	if ns < 0 {
		b = append(b, '-')
		u = uint64(-ns)
	}
	b = strconv.AppendUint(b, u/1000, 10)
	if frac := u % 1000; frac != 0 {
		d := [3]byte{byte('0' + frac/100), byte('0' + frac/10%10), byte('0' + frac%10)}
		n := 3
		for n > 0 && d[n-1] == '0' {
			n--
		}
		b = append(b, '.')
		b = append(b, d[:n]...)
	}
	return b
}

// str writes s as a JSON string that can never close an HTML element it is
// embedded in (jsonstr.AppendQuoted, the one encoder).
func (w *writer) str(s string) {
	w.tmp = jsonstr.AppendQuoted(w.tmp[:0], s)
	w.b.Write(w.tmp)
}
