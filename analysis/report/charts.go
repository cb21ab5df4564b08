package report

import (
	"sort"
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/chart"
	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/findings"
	"github.com/tracebook/tracebook/analysis/table"
)

// Chart is one chart of the report, drawn by package chart from the
// evidence of the view's filter.
type Chart struct {
	// ID names the chart and stays the same across views: "ranks",
	// "kernel-classes", "kernels", "steps".
	ID    string `msgpack:"id" json:"id"`
	Title string `msgpack:"title" json:"title"`
	// Alt is the text alternative: the numbers behind the chart, one
	// statement per line. The SVG's <desc> holds it; the Markdown report
	// lists it under the image.
	Alt string `msgpack:"alt" json:"alt"`
	// SVG is the chart as a standalone SVG document. Every string in it is
	// escaped as XML text (trace and kernel names included) and it holds
	// no script and no style attribute, so the HTML report inlines it.
	SVG string `msgpack:"svg" json:"svg"`
}

// MaxStepBars is the most steps the step chart draws; past it the steps are
// sampled evenly (first and last kept) and the title says so.
const MaxStepBars = 100

// maxRankBars is the most ranks the rank chart draws; past it the ranks
// with the most compute time (the stragglers) are kept.
const maxRankBars = 32

// maxAltRanks is the most ranks the rank chart's text alternative lists
// one by one.
const maxAltRanks = 16

// topKernels is the number of kernels the kernel chart draws.
const topKernels = 10

// The series of the GPU time charts. busy_ns splits without overlap into
// compute (the union of COMP kernels), communication that no compute
// kernel hides (comm_comp_ns - compute_ns), and the rest of busy time, when
// only copies and memsets ran (busy_ns - comm_comp_ns: device-side sync
// records are not GPU work, sql/views.sql tb_gpu_work); idle_ns is the GPU
// idle time in the span. The four add up to the span.
var gpuSeries = []chart.Series{
	{Name: "compute", Color: chart.Blue},
	{Name: "exposed communication", Color: chart.Vermillion, Short: "exposed comm"},
	{Name: "memory copy/set only", Color: chart.BluishGreen, Short: "mem"},
	{Name: "idle", Color: chart.Grey},
}

// classColors colours the kernel classes as gpuSeries colours the time.
var classColors = map[string]string{"COMP": chart.Blue, "COMM": chart.Vermillion, "MEM": chart.BluishGreen, "SYNC": chart.ReddishPurple}

// classOrder orders the kernel classes; others follow by name.
var classOrder = map[string]int{"COMP": 0, "COMM": 1, "MEM": 2, "SYNC": 3}

// classNames says what each class is.
var classNames = map[string]string{"COMP": "COMP (compute)", "COMM": "COMM (communication)", "MEM": "MEM (memcpy/memset)", "SYNC": "SYNC (GPU sync)"}

// ChartsFor returns the charts of src for view v: what GenerateView puts in
// Doc.Charts, without the rest of the report (%report shows them as
// image/svg+xml). The rollup is the Source's, shared with GenerateView.
func ChartsFor(src *Source, v View) []Chart {
	b := src.Bundle
	if b == nil {
		b = evidence.NewBundle()
	}
	return Charts(src.rollup(b, v.Filter), b, v.Filter)
}

// Charts draws the report's charts for filter f from the rolled-up evidence
// ev and the bundle b it was rolled up from (the step chart reads b's
// per-step rows): GPU span per rank with the median marked, GPU time by
// kernel class, the top kernels, and the step time per step of one rank.
// A chart without data is left out; the result is never nil.
func Charts(ev *evidence.Evidence, b *evidence.Bundle, f evidence.Filter) []Chart {
	out := []Chart{}
	for _, c := range []Chart{rankChart(ev, b, f), classChart(ev, f), kernelChart(ev, f), stepChart(b, f)} {
		if c.SVG != "" {
			out = append(out, c)
		}
	}
	return out
}

// idleNotes frame the alt text of a chart that splits time into busy and
// idle: a sampled trace's gaps are events dropped, not idle time
// (sampled_2of128: "idle: host wait 181 ms" in a step); and the chart draws
// the whole span, which the rules judge less what Capture quality leaves
// out (sglang_qwen3_prefilldecode: 493 of its 494 ms of idle held by
// unrecorded work), said when excluded is set.
func idleNotes(alt []string, ev *evidence.Evidence, excluded bool) []string {
	if findings.Sampled(ev) {
		alt = append([]string{sampledNote}, alt...)
	}
	// A sampled trace's held idle is gaps the sampling made, which Capture
	// quality does not list: no such sentence.
	if out := excludedIdle(ev); excluded && out > 0 && !findings.Sampled(ev) {
		alt = append(alt, "Of the idle ("+sliceWords(ev)+"), "+fmtMs(out)+" lies in what Capture quality leaves out (start-up, work held by what the trace does not show), which the rules do not judge.")
	}
	return alt
}

// sampledNote heads the alt text of the charts that split time into busy
// and idle, on a sampled trace.
const sampledNote = "A sampled trace (see Capture quality): most events were dropped, so the idle time and its causes drawn here are gaps between the events kept, not the GPU's idle time."

// gpuSplit splits a ranks row's busy time as gpuSeries does, in ms.
func gpuSplit(t *table.Table, r int) []float64 {
	busy, idle := evidence.Int(t, r, "busy_ns"), evidence.Int(t, r, "idle_ns")
	comp, cc := evidence.Int(t, r, "compute_ns"), evidence.Int(t, r, "comm_comp_ns")
	return []float64{nsMs(comp), nsMs(max(cc-comp, 0)), nsMs(max(busy-cc, 0)), nsMs(idle)}
}

func nsMs(ns int64) float64 { return float64(ns) / 1e6 }

// hasSplit reports whether a ranks table has the columns gpuSplit reads
// (a bundle from before comm_comp_ns has not).
func hasSplit(t *table.Table) bool {
	for _, c := range []string{"busy_ns", "idle_ns", "compute_ns", "comm_comp_ns"} {
		if t.Col(c) < 0 {
			return false
		}
	}
	return true
}

// rankChart: busy / idle / exposed communication per rank as horizontal
// stacked bars, the median rank's compute time marked. Under a rank
// filter every rank of the rest of the filter is drawn and the selected one
// is in bold, so a straggler still stands out against its peers.
func rankChart(ev *evidence.Evidence, b *evidence.Bundle, f evidence.Filter) Chart {
	t := ev.Table("ranks")
	rf := f
	if f.HasRank {
		rf.HasRank, rf.Rank = false, 0
		if rf.Trace == "" {
			rf.Trace = ev.Filter.Trace
		}
		t = evidence.RollupTable("ranks", b.Table("ranks"), rf, nil)
	}
	if t == nil || len(t.Rows) == 0 || !hasSplit(t) {
		return Chart{}
	}
	gpu := false
	for r := range t.Rows {
		gpu = gpu || evidence.Int(t, r, "busy_ns")+evidence.Int(t, r, "idle_ns") > 0
	}
	if !gpu {
		return Chart{} // no GPU work on any rank: a gap (no_gpu_events), not a chart of zeros
	}
	if f.HasRank && len(t.Rows) == 1 {
		// The bundle holds the selected rank only (collected under the
		// filter): no peers to show it against.
		rf = f
	}
	traces := map[string]bool{}
	for r := range t.Rows {
		traces[evidence.Str(t, r, "trace")] = true
	}
	type rankBar struct {
		trace   string
		rank    int64
		vals    []float64
		compute float64
	}
	var rows []rankBar
	for r := range t.Rows {
		v := gpuSplit(t, r)
		rows = append(rows, rankBar{trace: evidence.Str(t, r, "trace"), rank: evidence.Int(t, r, "rank"), vals: v, compute: v[0]})
	}
	isSel := func(rb rankBar) bool {
		return rf.HasRank != f.HasRank && int64(f.Rank) == rb.rank && (f.Trace == "" || f.Trace == rb.trace)
	}
	shown := len(rows)
	if len(rows) > maxRankBars {
		// The ranks with the most compute (the stragglers), and the
		// selected one.
		sort.SliceStable(rows, func(i, j int) bool {
			if isSel(rows[i]) != isSel(rows[j]) {
				return isSel(rows[i])
			}
			return rows[i].compute > rows[j].compute
		})
		rows = rows[:maxRankBars]
		sort.SliceStable(rows, func(i, j int) bool {
			if rows[i].trace != rows[j].trace {
				return rows[i].trace < rows[j].trace
			}
			return rows[i].rank < rows[j].rank
		})
	}
	label := func(rb rankBar) string {
		l := "rank " + strconv.FormatInt(rb.rank, 10)
		if len(traces) > 1 {
			l = rb.trace + " · " + l
		}
		return l
	}
	c := chart.Bars{ID: "tb-chart-ranks", Unit: "ms", ValueAxis: "GPU span", Series: gpuSeries}
	computes := make([]float64, 0, shown)
	for r := range t.Rows {
		computes = append(computes, nsMs(evidence.Int(t, r, "compute_ns")))
	}
	var alt []string
	for _, rb := range rows {
		sel := isSel(rb)
		l := label(rb)
		full := l
		if sel {
			full += " (selected)"
		}
		c.Bars = append(c.Bars, chart.Bar{Label: l, Full: full, Values: rb.vals, Bold: sel})
		if len(rows) <= maxAltRanks || sel {
			alt = append(alt, full+": "+splitText(rb.vals))
		}
	}
	title := "GPU span per rank: compute, exposed communication, memory copy/set only and idle (ms)"
	if shown > 1 {
		med := median(computes)
		c.Marks = []chart.Mark{{Value: med, Label: "median compute " + chart.Format(med) + " ms"}}
		title += ", the median rank's compute marked"
		alt = append([]string{"Median compute time across the " + strconv.Itoa(shown) + " ranks: " + chart.Format(med) + " ms."}, alt...)
		lo, hi := minMaxBy(rows, func(rb rankBar) float64 { return rb.compute })
		if len(rows) > maxAltRanks {
			alt = append(alt, "Most compute: "+label(rows[hi])+", "+chart.Format(rows[hi].compute)+" ms; least: "+label(rows[lo])+", "+chart.Format(rows[lo].compute)+" ms.")
		}
	}
	title += " — " + scopeText(rf)
	if rf.HasRank != f.HasRank {
		title += " (rank " + strconv.Itoa(f.Rank) + " selected, in bold)"
	}
	if len(rows) < shown {
		title += "; the " + strconv.Itoa(len(rows)) + " of " + strconv.Itoa(shown) + " ranks with the most compute"
		if rf.HasRank != f.HasRank {
			title += " and the selected one"
		}
	}
	c.Title = title
	c.Desc = strings.Join(idleNotes(alt, ev, true), "\n")
	return Chart{ID: "ranks", Title: title, Alt: c.Desc, SVG: c.SVG()}
}

// splitText writes a gpuSplit in words.
func splitText(v []float64) string {
	total := 0.0
	parts := make([]string, len(gpuSeries))
	for j, s := range gpuSeries {
		parts[j] = s.Name + " " + chart.Format(v[j]) + " ms"
		total += v[j]
	}
	return strings.Join(parts, ", ") + " (span " + chart.Format(total) + " ms)"
}

// classChart: GPU time by kernel class, from the kernels table.
func classChart(ev *evidence.Evidence, f evidence.Filter) Chart {
	t := ev.Table("kernels")
	if t == nil || len(t.Rows) == 0 {
		return Chart{}
	}
	sums := map[string]int64{}
	var total int64
	for r := range t.Rows {
		ns := evidence.Int(t, r, "total_ns")
		sums[evidence.Str(t, r, "class")] += ns
		total += ns
	}
	classes := sortedClasses(sums)
	c := chart.Bars{ID: "tb-chart-classes", Unit: "ms", ValueAxis: "GPU time, sum of kernel durations"}
	var alt []string
	for j, cl := range classes {
		name := className(cl)
		c.Series = append(c.Series, chart.Series{Name: name, Color: classColor(cl, j)})
		vals := make([]float64, len(classes))
		vals[j] = nsMs(sums[cl])
		text := chart.Format(vals[j]) + " ms (" + fmtPct(shareOf(sums[cl], total)) + ")"
		label := cl
		if label == "" {
			label = name
		}
		c.Bars = append(c.Bars, chart.Bar{Label: label, Full: name, Values: vals, Text: text})
		alt = append(alt, name+": "+text+".")
	}
	c.Title = "GPU time by kernel class (ms, sum of kernel durations) — " + scopeText(f)
	c.Desc = strings.Join(alt, "\n")
	return Chart{ID: "kernel-classes", Title: c.Title, Alt: c.Desc, SVG: c.SVG()}
}

// kernelChart: the top kernels by GPU time, summed over the filter's ranks,
// coloured by class; long names shortened in the middle, the full name in
// the bar's tooltip.
func kernelChart(ev *evidence.Evidence, f evidence.Filter) Chart {
	t := ev.Table("kernels")
	if t == nil || len(t.Rows) == 0 {
		return Chart{}
	}
	type kern struct {
		name, class string
		ns          int64
	}
	byName := map[string]*kern{}
	var order []*kern
	var total int64
	for r := range t.Rows {
		name, ns := evidence.Str(t, r, "name"), evidence.Int(t, r, "total_ns")
		k := byName[name]
		if k == nil {
			k = &kern{name: name, class: evidence.Str(t, r, "class")}
			byName[name] = k
			order = append(order, k)
		}
		k.ns += ns
		total += ns
	}
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].ns != order[j].ns {
			return order[i].ns > order[j].ns
		}
		return order[i].name < order[j].name
	})
	if len(order) > topKernels {
		order = order[:topKernels]
	}
	present := map[string]int64{}
	for _, k := range order {
		present[k.class] += k.ns
	}
	classes := sortedClasses(present)
	idx := map[string]int{}
	c := chart.Bars{ID: "tb-chart-kernels", Unit: "ms", ValueAxis: "GPU time, sum of kernel durations"}
	for j, cl := range classes {
		idx[cl] = j
		c.Series = append(c.Series, chart.Series{Name: className(cl), Color: classColor(cl, j)})
	}
	var alt []string
	names := make([]string, len(order))
	for i, k := range order {
		names[i] = oneLine(k.name)
	}
	labels := KernelLabels(names, 80)
	for i, k := range order {
		vals := make([]float64, len(classes))
		vals[idx[k.class]] = nsMs(k.ns)
		text := chart.Format(nsMs(k.ns)) + " ms (" + fmtPct(shareOf(k.ns, total)) + ")"
		c.Bars = append(c.Bars, chart.Bar{Label: labels[i], Full: names[i] + " [" + k.class + "]", Values: vals, Text: text})
		alt = append(alt, strconv.Itoa(i+1)+". "+labels[i]+" ("+k.class+"): "+text+".")
	}
	what := "Top " + strconv.Itoa(len(order)) + " kernels"
	if len(order) == 1 {
		what = "The one kernel"
	}
	c.Title = what + " by GPU time (ms, share of all kernel time) — " + scopeText(f)
	c.Desc = strings.Join(alt, "\n")
	return Chart{ID: "kernels", Title: c.Title, Alt: c.Desc, SVG: c.SVG()}
}

// KernelLabels names kernels beside each other (a chart's axis and its
// text, the rows of a diff's table): each by findings.KernelName, except
// that kernels that name would not tell apart are named with their
// template arguments (findings.KernelTemplate); at most limit characters,
// shortened in the middle until they differ.
func KernelLabels(names []string, limit int) []string {
	labels := make([]string, len(names))
	seen := map[string]int{}
	for i, n := range names {
		labels[i] = findings.KernelName(n)
		seen[labels[i]]++
	}
	for i, n := range names {
		if seen[labels[i]] > 1 {
			labels[i] = findings.KernelTemplate(n)
		}
	}
	return table.ShortenDistinct(labels, limit)
}

// stepSeries are the step chart's series: gpuSeries with the idle time
// split by cause, as the evidence attributes it (stepIdleSplit).
var stepSeries = []chart.Series{
	gpuSeries[0], gpuSeries[1], gpuSeries[2],
	{Name: "idle: sync-opened", Color: chart.ReddishPurple, Short: "idle sync-opened"},
	{Name: "idle: host wait", Color: chart.Orange, Short: "idle host wait"},
	{Name: "idle: other", Color: chart.Grey, Short: "idle other"},
}

// stepIdleText says what each idle part of the step chart means; the
// chart's text alternative carries it.
const stepIdleText = "Idle is split by cause, in this order: sync-opened is the GPU idle time that a blocking host sync call opened " +
	"(the sync evidence's gpu_gap_ns: the GPU drained while the host waited in the call, counted up to the call's length); host wait is the rest of the idle time that " +
	"HTA's host-wait test puts on late launches, on the union of the rank's streams (the ranks evidence's host_wait_ns, at most the idle time left); " +
	"other is what remains (waits on other streams or dependencies, short gaps between kernels)."

// stepIdleSplit splits a step's device-level idle time (ranks.idle_ns)
// into sync-opened, host wait and other, each part at most what is left of
// the idle time after the parts before it.
func stepIdleSplit(idle, syncGap, hostWait int64) (syncNs, hostNs, otherNs int64) {
	idle = max(idle, 0)
	syncNs = min(max(syncGap, 0), idle)
	hostNs = min(max(hostWait, 0), idle-syncNs)
	return syncNs, hostNs, idle - syncNs - hostNs
}

// stepChart: the GPU span of each step of one rank (the filter's, else the
// first): its busy time by part and its idle, stacked as stepSeries, from
// the bundle's per-step ranks, sync and gaps rows; past MaxStepBars steps,
// evenly sampled. At least two steps are needed.
func stepChart(b *evidence.Bundle, f evidence.Filter) Chart {
	t := b.Table("ranks")
	if t == nil || len(t.Rows) == 0 || f.HasStep {
		return Chart{}
	}
	cp := t.Col("phase")
	if t.Col("trace") < 0 || t.Col("rank") < 0 || t.Col("step") < 0 || !hasSplit(t) {
		return Chart{}
	}
	// The rows in the filter: a step, the phase, the trace and rank asked
	// for. Without a trace, the first trace; without a rank, its first rank.
	trace := f.Trace
	if trace == "" {
		trace = b.Filter.Trace
	}
	inSlice := func(r int) bool {
		return evidence.Int(t, r, "step") >= 0 && (f.Phase == "" || cp < 0 || evidence.Str(t, r, "phase") == f.Phase)
	}
	if trace == "" {
		first := true
		for r := range t.Rows {
			if tr := evidence.Str(t, r, "trace"); inSlice(r) && (first || tr < trace) {
				trace, first = tr, false
			}
		}
	}
	inFilter := func(r int) bool { return inSlice(r) && evidence.Str(t, r, "trace") == trace }
	ranks := map[int64]bool{}
	for r := range t.Rows {
		if inFilter(r) {
			ranks[evidence.Int(t, r, "rank")] = true
		}
	}
	rank := int64(f.Rank)
	if !f.HasRank {
		first := true
		for rk := range ranks {
			if first || rk < rank {
				rank, first = rk, false
			}
		}
	}
	if !ranks[rank] {
		return Chart{}
	}
	type stepRow struct {
		step                          int64
		busy, idle, compute, commComp int64
		syncGap, hostWait             int64
	}
	bySteps := map[int64]*stepRow{}
	for r := range t.Rows {
		if !inFilter(r) || evidence.Int(t, r, "rank") != rank {
			continue
		}
		st := evidence.Int(t, r, "step")
		s := bySteps[st]
		if s == nil {
			s = &stepRow{step: st}
			bySteps[st] = s
		}
		s.busy += evidence.Int(t, r, "busy_ns")
		s.idle += evidence.Int(t, r, "idle_ns")
		s.hostWait += evidence.Int(t, r, "host_wait_ns")
		s.compute += evidence.Int(t, r, "compute_ns")
		s.commComp += evidence.Int(t, r, "comm_comp_ns")
	}
	if len(bySteps) < 2 {
		return Chart{}
	}
	// The idle causes of the same steps: the GPU gaps that blocking sync
	// calls opened, and the host-wait gaps (the ranks area's host_wait_ns,
	// HTA's test on the union of the rank's streams; summed over streams
	// from the gaps area where a bundle has no such column).
	// A table whose rows of this rank were merged over steps (a long
	// job's single-file report: Compact) no longer says which step an
	// idle interval belongs to: the idle time is then drawn unsplit.
	split := true
	causes := func(name, col string, keep func(*table.Table, int) bool, add func(*stepRow, int64)) {
		ct := b.Table(name)
		if ct == nil || ct.Col(col) < 0 || ct.Col("step") < 0 {
			return
		}
		cph := ct.Col("phase")
		rows, perStep := 0, 0
		for r := range ct.Rows {
			if evidence.Str(ct, r, "trace") != trace || evidence.Int(ct, r, "rank") != rank ||
				(f.Phase != "" && cph >= 0 && evidence.Str(ct, r, "phase") != f.Phase) || !keep(ct, r) {
				continue
			}
			rows++
			if s := bySteps[evidence.Int(ct, r, "step")]; s != nil {
				add(s, evidence.Int(ct, r, col))
			}
			if evidence.Int(ct, r, "step") >= 0 {
				perStep++
			}
		}
		if rows > 0 && perStep == 0 {
			split = false
		}
	}
	causes("sync", "gpu_gap_ns", func(ct *table.Table, r int) bool { return ct.Col("blocking") < 0 || evidence.Bool(ct, r, "blocking") },
		func(s *stepRow, v int64) { s.syncGap += v })
	if t.Col("host_wait_ns") < 0 {
		causes("gaps", "idle_ns", func(ct *table.Table, r int) bool { return evidence.Str(ct, r, "category") == "host_wait" },
			func(s *stepRow, v int64) { s.hostWait += v })
	}
	steps := make([]*stepRow, 0, len(bySteps))
	for _, s := range bySteps {
		steps = append(steps, s)
	}
	sort.Slice(steps, func(i, j int) bool { return steps[i].step < steps[j].step })
	all := len(steps)
	series := stepSeries
	if !split {
		series = gpuSeries
	}
	parts := func(s *stepRow) []float64 {
		if !split {
			return []float64{nsMs(s.compute), nsMs(max(s.commComp-s.compute, 0)), nsMs(max(s.busy-s.commComp, 0)), nsMs(s.idle)}
		}
		sy, hw, other := stepIdleSplit(s.idle, s.syncGap, s.hostWait)
		return []float64{nsMs(s.compute), nsMs(max(s.commComp-s.compute, 0)), nsMs(max(s.busy-s.commComp, 0)), nsMs(sy), nsMs(hw), nsMs(other)}
	}
	totals := make([]float64, all)
	sums := make([]float64, len(series))
	slowest, fastest := 0, 0
	for i, s := range steps {
		for j, v := range parts(s) {
			totals[i] += v
			sums[j] += v
		}
		if totals[i] > totals[slowest] {
			slowest = i
		}
		// The fastest step is one that ran GPU work: a step without any
		// (an empty annotation) says nothing about the loop.
		if totals[i] > 0 && (totals[fastest] == 0 || totals[i] < totals[fastest]) {
			fastest = i
		}
	}
	// The capture's first step has no GPU work before it: its GPU span
	// starts at its own first GPU operation, without the host work before
	// it that every later step's span holds (resnet50_num_workers_0: step 5
	// read fastest at 119 ms, its 69 ms DataLoader wait outside the span,
	// where its wall time is the median's). It is named fastest only when
	// no later step ran GPU work.
	firstClipped := false
	if fastest == 0 && len(steps) > 2 {
		alt := -1
		for i := 1; i < len(steps); i++ {
			if totals[i] > 0 && (alt < 0 || totals[i] < totals[alt]) {
				alt = i
			}
		}
		if alt > 0 {
			fastest, firstClipped = alt, true
		}
	}
	// The median is over the steps that ran GPU work, as the fastest is.
	var worked []float64
	for _, v := range totals {
		if v > 0 {
			worked = append(worked, v)
		}
	}
	if len(worked) == 0 {
		return Chart{} // no step ran GPU work: a chart of zeros says nothing (the gaps say why)
	}
	med := median(worked)
	shown := steps
	if all > MaxStepBars {
		shown = make([]*stepRow, MaxStepBars)
		for i := range shown {
			shown[i] = steps[i*(all-1)/(MaxStepBars-1)]
		}
	}
	c := chart.Bars{ID: "tb-chart-steps", Unit: "ms", ValueAxis: "GPU span", CategoryAxis: "step", Series: series, Vertical: true,
		Marks: []chart.Mark{{Value: med, Label: "median step GPU span " + chart.Format(med) + " ms"}}}
	for _, s := range shown {
		c.Bars = append(c.Bars, chart.Bar{Label: strconv.FormatInt(s.step, 10), Full: "step " + strconv.FormatInt(s.step, 10), Values: parts(s)})
	}
	where := "rank " + strconv.FormatInt(rank, 10)
	if !f.HasRank && len(ranks) > 1 {
		where += " (the first of " + strconv.Itoa(len(ranks)) + " ranks; filter on a rank to see another)"
	}
	scope := []string{"trace " + trace}
	if f.WindowStartNs != 0 || f.WindowEndNs != 0 {
		scope = append(scope, table.Window(f.WindowStartNs, f.WindowEndNs))
	}
	if f.Phase != "" {
		scope = append(scope, "phase "+f.Phase)
	}
	causeWords := " by cause"
	if !split {
		causeWords = ""
	}
	c.Title = "GPU span per step on " + where + ": compute, exposed communication, memory copy/set only and idle" + causeWords + " (ms), the median step marked — " +
		strings.Join(scope, ", ")
	if len(shown) < all {
		c.Title += "; " + strconv.Itoa(len(shown)) + " of " + strconv.Itoa(all) + " steps, evenly sampled"
	}
	grand := 0.0
	for _, v := range sums {
		grand += v
	}
	shares := make([]string, len(series))
	for j, s := range series {
		shares[j] = s.Name + " " + fmtPct(ratio(sums[j], grand))
	}
	head := strconv.Itoa(all) + " steps on " + where
	if empty := all - len(worked); empty > 0 {
		head += " (" + strconv.Itoa(empty) + " without GPU work, left out of the median)"
	}
	alt := []string{head + "; median step GPU span " + chart.Format(med) + " ms."}
	if slowest == fastest {
		alt = append(alt, "One step ran GPU work: step "+strconv.FormatInt(steps[slowest].step, 10)+", "+stepText(series, parts(steps[slowest]))+".")
	} else {
		alt = append(alt,
			"Slowest: step "+strconv.FormatInt(steps[slowest].step, 10)+", "+stepText(series, parts(steps[slowest]))+".",
			"Fastest: step "+strconv.FormatInt(steps[fastest].step, 10)+", "+stepText(series, parts(steps[fastest]))+".")
		if firstClipped {
			alt[len(alt)-1] += " The capture's first step, step " + strconv.FormatInt(steps[0].step, 10) + ", is shorter on the GPU (" + chart.Format(totals[0]) +
				" ms) but is left out: no GPU work precedes it in the trace, so its GPU span starts at its own first GPU operation and holds none of the host time before it."
		}
	}
	alt = append(alt, "Over all steps: "+strings.Join(shares, ", ")+".")
	if split {
		alt = append(alt, stepIdleText)
	} else {
		alt = append(alt, "Idle time is not split by cause here: the sync and gap rows of this rank do not say which step they fall in (they lie outside every step, or a long job's single-file report merged them over steps to stay small).")
	}
	if len(shown) < all {
		alt = append(alt, "The chart draws "+strconv.Itoa(len(shown))+" evenly sampled steps, the first and the last included.")
	}
	c.Desc = strings.Join(idleNotes(alt, &evidence.Evidence{Tables: b.Tables}, false), "\n")
	return Chart{ID: "steps", Title: c.Title, Alt: c.Desc, SVG: c.SVG()}
}

// stepText writes a step's parts (one per series) in words.
func stepText(series []chart.Series, v []float64) string {
	total := 0.0
	parts := make([]string, len(series))
	for j, s := range series {
		parts[j] = s.Name + " " + chart.Format(v[j]) + " ms"
		total += v[j]
	}
	return strings.Join(parts, ", ") + " (step's GPU span " + chart.Format(total) + " ms)"
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}

// median of vs (sorting it); 0 for none.
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	sort.Float64s(vs)
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2]
	}
	return (vs[n/2-1] + vs[n/2]) / 2
}

func minMaxBy[T any](xs []T, key func(T) float64) (lo, hi int) {
	for i, x := range xs {
		if key(x) < key(xs[lo]) {
			lo = i
		}
		if key(x) > key(xs[hi]) {
			hi = i
		}
	}
	return lo, hi
}

// sortedClasses lists the classes with time, in classOrder then by name.
func sortedClasses(sums map[string]int64) []string {
	var cs []string
	for cl, ns := range sums {
		if ns > 0 {
			cs = append(cs, cl)
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		oi, iok := classOrder[cs[i]]
		oj, jok := classOrder[cs[j]]
		if iok != jok {
			return iok
		}
		if iok && oi != oj {
			return oi < oj
		}
		return cs[i] < cs[j]
	})
	return cs
}

func className(cl string) string {
	if n, ok := classNames[cl]; ok {
		return n
	}
	if cl == "" {
		return "unclassified"
	}
	return cl
}

// classColor is the class's colour; unknown classes take the remaining
// Okabe-Ito colours in turn.
func classColor(cl string, j int) string {
	if c, ok := classColors[cl]; ok {
		return c
	}
	extra := []string{chart.Orange, chart.SkyBlue, chart.Yellow, chart.Black}
	return extra[j%len(extra)]
}

// AreaCharts returns the charts that picture one evidence area (as
// %evidence names it: evidence.AreaPreset) for filter f: ranks draws GPU
// time per rank, kernels the kernel classes and the top kernels, steps the
// step time per step (which needs the ranks area's per-step rows, present
// when every area was collected). Other areas, and areas without data,
// have none; the result is never nil.
func AreaCharts(area string, ev *evidence.Evidence, b *evidence.Bundle, f evidence.Filter) []Chart {
	var cs []Chart
	switch evidence.AreaPreset(area) {
	case "ranks":
		cs = []Chart{rankChart(ev, b, f)}
	case "kernels":
		cs = []Chart{classChart(ev, f), kernelChart(ev, f)}
	case "steps":
		cs = []Chart{stepChart(b, f)}
	}
	out := []Chart{}
	for _, c := range cs {
		if c.SVG != "" {
			out = append(out, c)
		}
	}
	return out
}

// crossSeries are the parts of the cross-view chart's two bars: the GPU's
// time (busy, then idle by the cause of its gap) and the launching
// threads' (working, in sync calls, waiting), parts with one cause sharing
// a colour.
var crossSeries = []chart.Series{
	{Name: "GPU busy / host working", Color: chart.Blue, Short: "busy/working"},
	{Name: "sync: GPU idle opened by a sync call / host in sync calls, polling the device or launching into a full queue", Color: chart.ReddishPurple, Short: "sync"},
	{Name: "waiting: GPU idle while the host waited / host waiting", Color: chart.Orange, Short: "waiting"},
	{Name: "GPU idle: launched late while the host worked", Color: chart.Vermillion, Short: "launched late"},
	{Name: "GPU idle: work already queued (the device between kernels, or a dependency)", Color: chart.SkyBlue, Short: "queued"},
	{Name: "other (GPU idle no launch ends, idle the capture gate leaves out, or outside the GPU span / host outside these or outside the GPU span)", Color: chart.Grey, Short: "other"},
}

// CrossViewChart draws the cross-check of r: the GPU's wall time split into
// busy time and idle time by the cause of each gap, beside the launching
// threads' time inside the GPU span (working, blocked in sync calls,
// waiting), summed over the slice's ranks. Chart.SVG is "" when the slice
// has no wall time.
func CrossViewChart(r *crossview.Result) Chart {
	if r == nil || r.Check.Metrics.WallNs <= 0 {
		return Chart{}
	}
	m := r.Check.Metrics
	// The wall outside the GPU span (before the first GPU operation, after
	// the last) and the idle the capture gate leaves out are no gap of any
	// cause: they join the other part.
	gpu := []float64{nsMs(m.BusyNs), nsMs(m.GapSyncNs), nsMs(m.GapWaitNs), nsMs(m.GapHostNs), nsMs(m.GapDeviceNs), nsMs(m.GapOtherNs + m.EdgeIdleNs + m.LeftOutIdleNs)}
	// The host's classes are measured inside the GPU span, as the GPU's
	// busy and idle time: the wall outside it joins the host's other part.
	hostRest := max(m.WallNs-m.HostNs(), 0)
	host := []float64{nsMs(m.HostWorkNs), nsMs(m.HostSyncNs), nsMs(m.HostWaitNs), 0, 0, nsMs(hostRest)}
	ranks := "the slice's rank"
	if m.Ranks > 1 {
		ranks = "the slice's " + strconv.Itoa(m.Ranks) + " ranks"
	}
	slice := "all traces"
	if r.Slice.Trace != "" {
		slice = "trace " + r.Slice.Trace
	}
	if r.Slice.HasRank {
		slice += ", rank " + strconv.Itoa(r.Slice.Rank)
	}
	if r.Slice.Phase != "" {
		slice += ", phase " + r.Slice.Phase
	}
	c := chart.Bars{ID: "tb-chart-crossview", Unit: "ms", ValueAxis: "time, summed over " + ranks, Series: crossSeries,
		Bars: []chart.Bar{
			{Label: "GPU", Full: "GPU (busy, then idle by cause)", Values: gpu},
			{Label: "host (launching threads)", Full: "host launching threads (self time by class)", Values: host},
		}}
	c.Title = "GPU busy vs host: where the GPU's wall time went and what the launching threads did (ms) — " + slice
	if r.Check.Verdict != "" {
		c.Title += "; verdict " + r.Check.Verdict
	}
	parts := func(vs []float64, names []string) string {
		var out []string
		for i, n := range names {
			if n != "" {
				out = append(out, n+" "+chart.Format(vs[i])+" ms")
			}
		}
		return strings.Join(out, ", ")
	}
	alt := []string{
		"GPU, wall " + chart.Format(nsMs(m.WallNs)) + " ms summed over " + ranks + ": " +
			parts(gpu, []string{"busy", "idle opened by a sync call", "idle while the host waited for work", "idle, launched late while the host worked", "idle with work already queued (the device between kernels, or a dependency)", "other idle, left out (start-up, held) and outside the GPU span"}) + ".",
		"Launching threads, inside the GPU span: " + parts(host, []string{"working", "in sync calls, polling the device or launching into a full queue", "waiting", "", "", "outside these or outside the GPU span"}) + ".",
	}
	if m.HostNs() > m.SpanNs() {
		alt = append(alt, "The launching threads' time adds up past the GPU span: each of the "+strconv.Itoa(m.LaunchThreads)+" launching threads counts its own time in it.")
	}
	c.Desc = strings.Join(alt, "\n")
	return Chart{ID: "crossview", Title: c.Title, Alt: c.Desc, SVG: c.SVG()}
}
