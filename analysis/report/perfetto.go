package report

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/findings"
	"github.com/tracebook/tracebook/analysis/table"
)

// Window is where a finding can be checked in Perfetto: one rank of one
// trace, the finding's worst step with one step either side, and the file
// the report saves for it (a Chrome-trace JSON of that window with the
// finding drawn as its own track; analysis/perfetto writes it).
//
// How the worst step is chosen (PlanWindows): the step of the finding's
// rank where the finding's measure is largest (each rule's row of
// findings.Rules holds its measure, Step); the slowest step for a finding of the whole trace, for
// a rule without a per-step measure, and when the measure lies outside
// every step. Steps that hold start-up or held idle (Capture quality's
// excluded intervals) are passed over while another step qualifies. A rank
// without steps has no worst step: the window is then
// the worst instance of what the finding is about (the longest sync call,
// pageable copy, host-wait gap, ...: sql/perfetto_anchor.sql) with
// AnchorMarginNs either side (PlaceAnchor).
type Window struct {
	// N numbers the finding in the report it was collected for: critical
	// issues first, then follow-ups, from 1.
	N int `msgpack:"n" json:"n"`
	// File is the name of the saved trace: finding-N-<rule>.json.
	File  string `msgpack:"file" json:"file"`
	Rule  string `msgpack:"rule" json:"rule"`
	Trace string `msgpack:"trace" json:"trace"`
	Rank  int    `msgpack:"rank" json:"rank"`
	// Step is the worst step; -1 when the rank has no steps.
	Step int `msgpack:"step" json:"step"`
	// FirstStep and LastStep are the steps the window spans (the worst one
	// ±1, clamped to the rank's steps); -1 when the rank has no steps.
	FirstStep int `msgpack:"first_step" json:"first_step"`
	LastStep  int `msgpack:"last_step" json:"last_step"`
	// StartNs and EndNs bound the window, from the trace's first event.
	StartNs int64 `msgpack:"start_ns" json:"start_ns"`
	EndNs   int64 `msgpack:"end_ns" json:"end_ns"`
	// FocusStartNs and FocusEndNs bound what the finding's slice covers:
	// the worst step, or the anchor instance (from the trace's first event).
	FocusStartNs int64 `msgpack:"focus_start_ns" json:"focus_start_ns"`
	FocusEndNs   int64 `msgpack:"focus_end_ns" json:"focus_end_ns"`
	// Basis says, with the number, why this window.
	Basis string `msgpack:"basis" json:"basis"`
	// Spread says how the finding's step measure falls across the rank's
	// steps (stepSpread): every step's, or mostly one step's. "" for a
	// rank with fewer than three steps, or a rule without a step measure.
	Spread string `msgpack:"spread,omitempty" json:"spread,omitempty"`
	// Anchor is the kind of instance (a row of sql/perfetto_anchor.sql) a
	// rank without steps centres the window on; "" for step windows.
	Anchor string `msgpack:"anchor,omitempty" json:"anchor,omitempty"`
	// Placed is false while a window without steps waits for PlaceAnchor.
	Placed bool `msgpack:"placed" json:"placed"`
	// Subject is what the finding counts where its rule's row reads it
	// from the finding (findings.Rule.Subject: the kernel of a
	// kernel_slow_instances finding, ...); the marks of its Perfetto file
	// read it. nil for the other rules.
	Subject *findings.Subject `msgpack:"subject,omitempty" json:"subject,omitempty"`
	// Timeline is the window's events drawn as the report's timeline
	// chart (timeline.go); nil when the engine made none.
	Timeline *Timeline `msgpack:"timeline,omitempty" json:"timeline,omitempty"`
}

// WindowKey names the events of a window: the windows of several
// findings may be the same.
type WindowKey struct {
	Trace      string
	Rank       int
	Start, End int64
}

// Key is w's WindowKey.
func (w Window) Key() WindowKey { return WindowKey{w.Trace, w.Rank, w.StartNs, w.EndNs} }

// PerfettoFile is one saved trace: a finding's window as Chrome-trace JSON.
// The single-file report embeds the files (package wasm); `tracebook report
// --perfetto DIR` writes them.
type PerfettoFile struct {
	Name string // finding-N-<rule>.json
	JSON []byte
	// Split is where the finding's own part ends (its header and track);
	// files of findings with the same window have the same JSON[Split:]
	// (the trace's events), which the single-file report stores once.
	// 0 = the file shares nothing.
	Split int
	// Gz holds JSON[:Split] and JSON[Split:] gzip-compressed, as the
	// files' size budget measured them, for the page to store as they
	// are; either is nil where it was not compressed (the body of a file
	// that shares it, a file built without a budget).
	Gz [2][]byte
}

// AnchorMarginNs is the margin either side of the anchor instance in the
// window of a rank without steps: the window is 2 × 10 ms plus the instance.
const AnchorMarginNs = 10_000_000

// PerfettoHint is the sentence that tells the reader what to do with a
// saved file.
const PerfettoHint = "drag it into ui.perfetto.dev (or chrome://tracing): the finding is the \"tracebook findings\" track"

// FileName is the name of the saved trace of finding n of rule.
func FileName(n int, rule string) string {
	var b strings.Builder
	for _, r := range rule {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return "finding-" + strconv.Itoa(n) + "-" + b.String() + ".json"
}

// PlanWindows chooses the window of every finding the report of b shows
// for b's own filter (at most MaxCritical critical issues and MaxFollowUps
// follow-ups, numbered in that order). Windows of ranks without steps come
// back with Placed false and an Anchor kind: the caller runs
// sql/perfetto_anchor.sql for that rank and calls PlaceAnchor.
func PlanWindows(b *evidence.Bundle) []Window {
	if b == nil {
		return nil
	}
	v := View{Filter: b.Filter}
	ev, th := evidence.Rollup(b, v.Filter), thresholdsFor(b, v)
	var out []Window
	for i, f := range shownOf(findings.Evaluate(ev, th)) {
		w := planWindow(b, ev, th, f)
		w.N = i + 1
		w.File = FileName(w.N, f.Rule)
		out = append(out, w)
	}
	return out
}

// ShownFindings returns the findings the report of b shows for b's own
// filter and thresholds: the critical issues, then the follow-ups, in the
// report's order (PlanWindows numbers its windows in this order).
func ShownFindings(b *evidence.Bundle) []evidence.Finding {
	if b == nil {
		return nil
	}
	v := View{Filter: b.Filter}
	return shownOf(findingsFor(b, evidence.Rollup(b, v.Filter), v))
}

// shownOf returns the findings of found that a report shows, in its order.
func shownOf(found []evidence.Finding) []evidence.Finding {
	crit, minor := shown(found)
	if len(minor) > MaxFollowUps {
		minor = minor[:MaxFollowUps]
	}
	return append(crit, minor...)
}

// stepRow is one step of one rank, from the steps table.
type stepRow struct {
	step          int
	start, wallNs int64
}

// stepsOf returns the steps of one rank in src's steps area (a bundle, or
// the evidence of a view), in step order.
func stepsOf(src interface{ Table(string) *table.Table }, trace string, rank int) []stepRow {
	t := src.Table("steps")
	if t == nil {
		return nil
	}
	var out []stepRow
	seen := map[int]bool{}
	for r := range t.Rows {
		if evidence.Str(t, r, "trace") != trace || int(evidence.Int(t, r, "rank")) != rank {
			continue
		}
		s := int(evidence.Int(t, r, "step"))
		if s < 0 || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, stepRow{step: s, start: evidence.Int(t, r, "start_ns"), wallNs: evidence.Int(t, r, "wall_ns")})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].start != out[j].start {
			return out[i].start < out[j].start
		}
		return out[i].step < out[j].step
	})
	return out
}

// excludedOverlaps: the capture area's excluded intervals of the rank
// (start-up and held work, with GPU idle in them) reach into [start, end)
// (ns from the trace's first event).
func excludedOverlaps(b *evidence.Bundle, trace string, rank int, start, end int64) bool {
	t := b.Table("capture")
	if t == nil || t.Col("first_ns") < 0 {
		return false
	}
	for r := range t.Rows {
		if evidence.Str(t, r, "trace") == trace && int(evidence.Int(t, r, "rank")) == rank && evidence.Str(t, r, "kind") == "excluded" &&
			evidence.Int(t, r, "idle_ns") > 0 && evidence.Int(t, r, "first_ns") < end && evidence.Int(t, r, "last_ns") > start {
			return true
		}
	}
	return false
}

// planWindow chooses f's window from the bundle's steps; ev and th are
// the evidence and thresholds f was judged with (its Subject reads them).
func planWindow(b *evidence.Bundle, ev *evidence.Evidence, th evidence.Thresholds, f evidence.Finding) Window {
	var step *findings.StepMeasure
	anchor := "gap"
	w := Window{Rule: f.Rule, Trace: f.Trace, Rank: f.Rank, Step: -1, FirstStep: -1, LastStep: -1}
	if r := findings.RuleOf(f.Rule); r != nil {
		step, anchor = r.Step, r.Anchor
		if r.Subject != nil && f.Rank >= 0 {
			s := r.Subject(ev, th, f)
			w.Subject = &s
		}
	}
	if w.Rank < 0 {
		// A finding of the whole trace: the slowest step of any of its ranks.
		w.Rank = slowestRank(b, f.Trace)
	}
	steps := stepsOf(b, w.Trace, w.Rank)
	if len(steps) == 0 {
		w.Anchor = anchor
		return w
	}
	// A step that holds start-up or held idle (Capture quality's excluded
	// intervals) is the worst only when every step does: the window should
	// show the loop, not its start-up (resnet_2080ti: the 4.8 s first
	// iteration, workers starting and cuDNN autotuning).
	// The warm-up step the charts and the steady-state shares leave out
	// (trace_diff_control_a100: step 1009, the capture's first) is no
	// worst step either, unless every step is.
	warm := warmupStep(b, w.Trace, w.Rank)
	clean := make([]bool, len(steps))
	anyClean := false
	for i, s := range steps {
		clean[i] = !excludedOverlaps(b, w.Trace, w.Rank, s.start, s.start+s.wallNs) && s.step != warm
		anyClean = anyClean || clean[i]
	}
	eligible := func(i int) bool { return clean[i] || !anyClean }
	best := -1
	if step != nil && f.Rank >= 0 {
		var subj findings.Subject
		if w.Subject != nil {
			subj = *w.Subject
		}
		step, vals := step.Measure(b, w.Trace, w.Rank, subj)
		for pass := 0; pass < 2 && best < 0; pass++ {
			for i, s := range steps {
				if v := vals[s.step]; v > 0 && (pass == 1 || eligible(i)) && (best < 0 || v > vals[steps[best].step]) {
					best = i
				}
			}
		}
		w.Spread = stepSpread(steps, warm, vals, step)
		if best >= 0 {
			v := fmtMs(vals[steps[best].step])
			if step.Bytes {
				v = fmtInt(vals[steps[best].step]) + " bytes"
			}
			w.Basis = "step " + strconv.Itoa(steps[best].step) + " has the largest " + step.What + " of rank " + strconv.Itoa(w.Rank) + ": " + v
			if st := steps[best]; excludedOverlaps(b, w.Trace, w.Rank, st.start, st.start+st.wallNs) {
				w.Basis += " (the step's own figure: it keeps the start-up and held idle inside the step, which the finding's numbers leave out)"
			}
		}
	}
	if best < 0 {
		for i, s := range steps {
			if eligible(i) && (best < 0 || s.wallNs > steps[best].wallNs) {
				best = i
			}
		}
		why := "the slowest step"
		switch {
		case f.Rank < 0:
			why += " of the trace (the finding covers the whole trace)"
		case step != nil:
			why += " (the finding's " + step.What + " lies outside every step)"
		}
		w.Basis = "step " + strconv.Itoa(steps[best].step) + " is " + why + " of rank " + strconv.Itoa(w.Rank) + ": " + fmtMs(steps[best].wallNs)
	}
	lo, hi := best, best
	if lo > 0 {
		lo--
	}
	if hi < len(steps)-1 {
		hi++
	}
	w.Step, w.FirstStep, w.LastStep = steps[best].step, steps[lo].step, steps[hi].step
	w.FocusStartNs, w.FocusEndNs = steps[best].start, steps[best].start+steps[best].wallNs
	w.StartNs, w.EndNs = steps[lo].start, steps[lo].start+steps[lo].wallNs
	for _, s := range steps[lo : hi+1] {
		if e := s.start + s.wallNs; e > w.EndNs {
			w.EndNs = e
		}
	}
	w.Placed = true
	return w
}

// stepSpread says how a finding's per-step measure falls across the
// rank's steps (its warm-up step left out, as the steady-state shares
// leave it), the question a reader asks first of any finding: is it
// the loop's, paid every step, or one step's, a start-up or a one-off of
// the capture? With three steps or more: one step holding half of the
// steps' sum or more is "mostly one step's"; otherwise the steps that
// hold any, with their range and median, and "every step" where all of
// them do, and the one step at 1.75 times their median and the next
// step's or more as an outlier (our choice: well past a step-to-step
// spread of a few percent, and below the 2x of one late peer; a top step
// close to the next is the top of a second kind of step, not an outlier:
// resnet_2080ti's DataLoader waits and pageable copies, in two groups),
// or a measure that rises across the steps (rising). "" with fewer than
// three steps (the one-step caveat speaks for those) or nothing in any
// step. vllm_mi300x_tp4_rank0's host waits: each of the 10 steps with GPU
// work holds 23-30 ms, one stall a step at the compiled forward's entry.
func stepSpread(all []stepRow, warm int, vals map[int]int64, m *findings.StepMeasure) string {
	var steps []stepRow
	for _, s := range all {
		if s.step != warm {
			steps = append(steps, s)
		}
	}
	if len(steps) < 3 {
		return ""
	}
	var held, order []int64 // order: every step's value, in step order
	var sum, top int64
	topStep := -1
	for _, s := range steps {
		v := vals[s.step]
		order = append(order, v)
		if v <= 0 {
			continue
		}
		held = append(held, v)
		sum += v
		if v > top {
			top, topStep = v, s.step
		}
	}
	if sum <= 0 {
		return ""
	}
	of := fmt.Sprintf("the rank's %d steps", len(steps))
	if len(steps) < len(all) {
		of = fmt.Sprintf("the rank's %d steps after its warm-up step %d", len(steps), warm)
	}
	if 2*top >= sum && len(held) > 1 {
		var next int64
		for _, v := range held {
			if v != top && v > next {
				next = v
			}
		}
		return fmt.Sprintf("Across %s, the %s is mostly one step's: step %d holds %s of the steps' %s (%s), the next most %s",
			of, m.What, topStep, m.Format(top), m.Format(sum), fmtPct(float64(top)/float64(sum)), m.Format(next))
	}
	if len(held) == 1 {
		return fmt.Sprintf("Across %s, the %s is one step's: only step %d holds any (%s)", of, m.What, topStep, m.Format(top))
	}
	sorted := append([]int64(nil), held...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	lo, hi, med := sorted[0], sorted[len(sorted)-1], sorted[len(sorted)/2]
	if len(sorted)%2 == 0 {
		med = (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
	}
	which := fmt.Sprintf("%d of %s hold", len(held), of)
	if len(held) == len(steps) {
		which = fmt.Sprintf("each of %s holds", of)
	}
	out := fmt.Sprintf("Across steps, %s some %s: %s to %s a step (median %s)", which, m.What, m.Format(lo), m.Format(hi), m.Format(med))
	if n := len(sorted); n >= 4 && med > 0 && 4*hi >= 7*med && 4*hi >= 7*sorted[n-2] {
		// One step far above the others (df_index_resolver_v100: the last
		// step's 119 ms of exposed communication against 59.6 ms in each of
		// the others, a late peer): the total mixes it with the loop's.
		out += fmt.Sprintf("; step %d holds %s, %.1fx the median: an outlier that the total mixes with the other steps'", topStep, m.Format(hi), float64(hi)/float64(med))
	} else if first, last, ok := rising(order); ok {
		out += fmt.Sprintf("; it tends to rise across the window's steps (the first third %s a step on average, the last third %s): not a steady state, and the total is of this window's steps", m.Format(first), m.Format(last))
	}
	return out
}

// rising tells whether per-step values grow across the steps: five steps
// or more, their pairs in step order mostly increasing (Kendall's tau of
// 0.6 or more) and the last third's mean at least 1.3 times the first
// third's, which it returns with it. Our thresholds: a step-to-step
// spread of a few percent passes neither (trace_diff_control_a100's
// exposed communication, 12.0 to 18.8 ms over five steps, passes both).
func rising(v []int64) (first, last int64, ok bool) {
	n := len(v)
	if n < 5 {
		return 0, 0, false
	}
	conc, disc := 0, 0
	for i := range v {
		for j := i + 1; j < n; j++ {
			switch {
			case v[j] > v[i]:
				conc++
			case v[j] < v[i]:
				disc++
			}
		}
	}
	third := n / 3
	for i := range third {
		first += v[i]
		last += v[n-1-i]
	}
	first, last = first/int64(third), last/int64(third)
	pairs := n * (n - 1) / 2
	return first, last, 5*(conc-disc) >= 3*pairs && 10*last >= 13*first && first > 0
}

// warmupStep is the rank's warm-up step, the one the capture area names
// (kind warmup_step, "step N": evidence.Steady leaves it out of the
// steady-state shares); -1 when there is none.
func warmupStep(b *evidence.Bundle, trace string, rank int) int {
	t := b.Table("capture")
	if t == nil {
		return -1
	}
	for r := range t.Rows {
		if evidence.Str(t, r, "trace") != trace || int(evidence.Int(t, r, "rank")) != rank || evidence.Str(t, r, "kind") != "warmup_step" {
			continue
		}
		if step, ok := evidence.WarmupStepOf(evidence.Str(t, r, "name")); ok {
			return step
		}
	}
	return -1
}

// slowestRank is the rank of trace whose longest step is the longest; 0
// when the trace has no steps.
func slowestRank(b *evidence.Bundle, trace string) int {
	t := b.Table("steps")
	rank, best := 0, int64(-1)
	if t == nil {
		return rank
	}
	for r := range t.Rows {
		if evidence.Str(t, r, "trace") != trace {
			continue
		}
		if w := evidence.Int(t, r, "wall_ns"); w > best {
			rank, best = int(evidence.Int(t, r, "rank")), w
		}
	}
	return rank
}

// PlaceAnchor places a window of a rank without steps from the rows of
// sql/perfetto_anchor.sql for that rank: the instance of w.Anchor (else the
// longest GPU gap, else the longest kernel) with AnchorMarginNs either
// side. spanNs, the rank's span from the trace's first event (0 when
// unknown), clamps the window's end. Without any instance the window is the
// first 2 × AnchorMarginNs of the trace.
func PlaceAnchor(w *Window, anchors *table.Table, spanNs int64) {
	if w.Placed {
		return
	}
	row := -1
	kind := ""
	if findings.MarkedAnchors[w.Anchor] {
		if row = markedAnchor(w, anchors); row >= 0 {
			kind = w.Anchor
		}
	}
	for _, want := range []string{w.Anchor, "gap", "kernel"} {
		if anchors == nil || want == "" || row >= 0 {
			continue
		}
		for r := range anchors.Rows {
			if evidence.Str(anchors, r, "anchor") == want {
				row, kind = r, want
				break
			}
		}
		if row >= 0 {
			break
		}
	}
	w.Placed = true
	if row < 0 {
		w.StartNs, w.EndNs = 0, 2*AnchorMarginNs
		if spanNs > 0 && w.EndNs > spanNs {
			w.EndNs = spanNs
		}
		w.FocusStartNs, w.FocusEndNs = w.StartNs, w.EndNs
		w.Basis = "the rank has no steps and no instance to centre on: the first " + fmtMs(w.EndNs) + " of the trace"
		return
	}
	start, dur := evidence.Int(anchors, row, "start_ns"), evidence.Int(anchors, row, "dur_ns")
	w.FocusStartNs, w.FocusEndNs = start, start+dur
	w.StartNs, w.EndNs = start-AnchorMarginNs, start+dur+AnchorMarginNs
	if w.StartNs < 0 {
		w.StartNs = 0
	}
	if spanNs > 0 && w.EndNs > spanNs && spanNs > w.FocusEndNs {
		w.EndNs = spanNs
	}
	w.Basis = fmtMs(AnchorMarginNs) + " either side of rank " + strconv.Itoa(w.Rank) + "'s " + findings.AnchorWords[kind] +
		" (" + oneLine(evidence.Str(anchors, row, "name")) + ", " + fmtMs(dur) + ")"
}

// markedAnchor returns the row of anchors (the kernel_name and host_name
// rows of sql/perfetto_anchor.sql: each name's longest instance) whose
// instance the marks of w's rule flag, the longest first (then the
// earliest); -1 when none is.
func markedAnchor(w *Window, anchors *table.Table) int {
	r := findings.RuleOf(w.Rule)
	if r == nil || r.Marks == nil || r.Marks.Event == nil || anchors == nil {
		return -1
	}
	var subj findings.Subject
	if w.Subject != nil {
		subj = *w.Subject
	}
	best := -1
	for i := range anchors.Rows {
		if a := evidence.Str(anchors, i, "anchor"); a != "kernel_name" && a != "host_name" {
			continue
		}
		e := findings.Event{Kind: evidence.Str(anchors, i, "kind"), Name: evidence.Str(anchors, i, "name"),
			Class: evidence.Str(anchors, i, "class"), Dur: evidence.Int(anchors, i, "dur_ns")}
		if !r.Marks.Event(e, subj) {
			continue
		}
		if d, s := e.Dur, evidence.Int(anchors, i, "start_ns"); best < 0 || d > evidence.Int(anchors, best, "dur_ns") ||
			d == evidence.Int(anchors, best, "dur_ns") && s < evidence.Int(anchors, best, "start_ns") {
			best = i
		}
	}
	return best
}

// Text names the window in words: the trace, rank, steps and time range.
func (w *Window) Text() string {
	s := "trace " + w.Trace + ", rank " + strconv.Itoa(w.Rank)
	switch {
	case w.Step >= 0 && w.FirstStep == w.LastStep:
		s += ", step " + strconv.Itoa(w.Step)
	case w.Step >= 0:
		s += ", steps " + strconv.Itoa(w.FirstStep) + ".." + strconv.Itoa(w.LastStep) + " (worst " + strconv.Itoa(w.Step) + ")"
	default:
		s += ", no steps"
	}
	return s + ", " + fmtMs(w.StartNs) + " .. " + fmtMs(w.EndNs) + " from the trace start"
}

// attachWindows gives each issue of d the window collected for its
// finding (same rule, trace and rank). crit and minor are the findings d's
// issues were made from, in the same order. A finding the collected report
// did not show (the viewer re-ranked the findings for another rank, phase
// or threshold) gets the window PlanWindows would choose for it, without a
// file: its line says which command writes one.
func attachWindows(d *Doc, b *evidence.Bundle, ev *evidence.Evidence, th evidence.Thresholds, ws []Window, crit, minor []evidence.Finding) {
	if len(ws) == 0 {
		return
	}
	find := func(f evidence.Finding) *Window {
		for i := range ws {
			if ws[i].Rule == f.Rule && ws[i].Trace == f.Trace && ws[i].Rank == f.Rank && ws[i].Placed {
				w := ws[i]
				return &w
			}
		}
		w := planWindow(b, ev, th, f)
		return &w
	}
	for i := range d.Critical {
		if i < len(crit) {
			d.Critical[i].Window = find(crit[i])
		}
	}
	for i := range d.FollowUps {
		if i < len(minor) {
			d.FollowUps[i].Window = find(minor[i])
		}
	}
}

// htmlWindow writes an issue's Perfetto line: the window in words, and a
// button that saves the file (package wasm's perfetto.js; without
// JavaScript the line still says where to look). A window without a file
// names the command that writes one instead.
func htmlWindow(p func(...string), w *Window) {
	if w.Spread != "" {
		p(`<span class="tb-spread">`, esc(w.Spread), ".</span> ")
	}
	switch {
	case !w.Placed:
		p(`<span class="tb-perfetto">Open in Perfetto: this report holds no window for this finding; <code>`, esc(w.command()),
			`</code> places one around rank `, strconv.Itoa(w.Rank), "'s ", esc(findings.AnchorWords[w.Anchor]), " and writes its file.</span>")
	case w.File == "":
		p(`<span class="tb-perfetto">Open in Perfetto: `, esc(w.Text()), "; ", esc(w.Basis), ". This report holds no file for it (it was collected for another view): <code>",
			esc(w.command()), "</code> writes it.</span>")
	default:
		p(`<span class="tb-perfetto">Open in Perfetto: `, esc(w.Text()), "; ", esc(w.Basis), `. <button type="button" data-tb-perfetto="`, esc(w.File), `">Save `,
			esc(w.File), `</button>, then `, esc(PerfettoHint), ".</span>")
	}
}

// mdWindow is an issue's Perfetto line in Markdown.
func mdWindow(w *Window) string {
	if w.Spread != "" {
		return mdText(w.Spread) + ". " + mdPerfetto(w)
	}
	return mdPerfetto(w)
}

// mdPerfetto is the Perfetto line itself.
func mdPerfetto(w *Window) string {
	switch {
	case !w.Placed:
		return "Open in Perfetto: this report holds no window for this finding; " + mdCode(w.command()) + " places one around rank " +
			strconv.Itoa(w.Rank) + "'s " + mdText(findings.AnchorWords[w.Anchor]) + " and writes its file."
	case w.File == "":
		return "Open in Perfetto: " + mdText(w.Text()) + "; " + mdText(w.Basis) + ". This report holds no file for it (it was collected for another view): " +
			mdCode(w.command()) + " writes it."
	}
	return "Open in Perfetto: " + mdText(w.Text()) + "; " + mdText(w.Basis) + ". File " + mdCode(w.File) +
		" (the HTML report's button saves it; `tracebook report TRACE --perfetto DIR` writes it): " + mdText(PerfettoHint) + "."
}

// command is the command that writes the window's file: the report of its
// rank with --perfetto.
func (w *Window) command() string {
	return "tracebook report TRACE --rank " + strconv.Itoa(w.Rank) + " --perfetto DIR"
}
