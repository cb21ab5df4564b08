package report

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/device"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/findings"
	"github.com/tracebook/tracebook/analysis/internal/rx"
	"github.com/tracebook/tracebook/analysis/table"
)

// build fills a Doc from a bundle whose evidence and findings are already
// those of the view (rolled up and ranked).
func build(b *evidence.Bundle, ev *evidence.Evidence, found []evidence.Finding, gate *findings.Gate, v View) *Doc {
	d := &Doc{
		Title:       "TorchProfiler Trace Report",
		Scope:       scopeText(v.Filter) + streamScope(b, v.Filter),
		Summary:     []string{},
		Traces:      traceMetas(b, v.Filter),
		Capture:     []string{},
		KeyFindings: []string{},
		Critical:    []Issue{},
		FollowUps:   []Issue{},
		Confirmed:   []string{},
		Hypotheses:  []string{},
		Perfetto:    []Inspect{},
		Gaps:        []string{},
		Evidence:    []EvidenceRow{},
		Tables:      []table.Table{},
		Controls:    Controls{Ranks: []int{}, Phases: []string{}, Rules: []Knob{}, Sort: map[string]string{}, Open: []string{}},
	}
	producer := ""
	for _, t := range d.Traces {
		if t.Producer != "" && t.Producer != "unknown" {
			producer = t.Producer
		}
	}
	switch producer {
	case "vllm":
		d.Title = "vLLM Trace Report"
	case "sglang":
		d.Title = "SGLang Trace Report"
	}

	crit, minor := shown(found)
	for _, f := range crit {
		d.Critical = append(d.Critical, issue(f))
	}
	for i, f := range minor {
		if i == MaxFollowUps {
			break
		}
		d.FollowUps = append(d.FollowUps, issue(f))
	}
	referEqualFixes(d)
	// A finding past the issues shown (MaxCritical, MaxFollowUps) is listed
	// below with its numbers, which no issue above gives
	// (resnet50_num_workers_4's pageable copies).
	listed := map[string]bool{}
	for _, f := range shownOf(found) {
		listed[f.Rule+"\x00"+f.Title] = true
	}
	for _, f := range found {
		claim := f.Title
		if f.Mechanism != "" {
			claim += ": " + f.Mechanism
		}
		if !listed[f.Rule+"\x00"+f.Title] {
			if !strings.HasSuffix(claim, ".") {
				claim += "."
			}
			claim += " Not among the issues above (past the report's limit): " + firstSentence(f.Observation)
		}
		if f.Status == "confirmed" {
			d.Confirmed = append(d.Confirmed, claim)
		} else {
			h := claim
			if f.Refute != "" {
				h += " (refuted if: " + f.Refute + ")"
			}
			if f.Caveat != "" {
				// A capped finding's limits go with it wherever it is
				// listed, not only in the issues above.
				h += " Confidence capped: " + f.Caveat
			}
			d.Hypotheses = append(d.Hypotheses, h)
		}
	}

	// Executive summary and key findings.
	ranks := 0
	var spanNs, events int64
	device := ""
	for _, t := range d.Traces {
		ranks += len(t.Ranks)
		events += t.Events
		if t.SpanNs > spanNs {
			spanNs = t.SpanNs
		}
		if device == "" {
			device = t.Device
		}
	}
	if len(d.Critical) > 0 {
		top := d.Critical[0]
		d.Summary = append(d.Summary, bottleneckPrefix+top.Title+" ("+statusWord(top.Confirmed)+"). "+firstSentence(crit[0].Observation))
		if len(d.Critical) > 1 {
			d.Summary = append(d.Summary, moreIssuesLine(len(d.Critical)-1, len(d.FollowUps)))
		}
		if f := crit[0]; f.Rank >= 0 && len(stepsOf(ev, f.Trace, f.Rank)) == 1 {
			d.Summary = append(d.Summary, oneStepLine(ev, f.Trace, f.Rank, "the verdict", "recurs"))
		}
	} else {
		d.Summary = append(d.Summary, noCriticalLine(d.FollowUps, gate.Inconclusive() != "", noGPUWork(ev)))
		if trace, rank, ok := oneRank(ev); ok && len(stepsOf(ev, trace, rank)) == 1 {
			// vllm_decode_full_mi300x: one decode step, read as the loop.
			d.Summary = append(d.Summary, oneStepLine(ev, trace, rank, "what this report reads", "holds for the others"))
		}
	}
	if line := oneRequestLine(b, ev); line != "" {
		d.Summary = append(d.Summary, line)
	}
	if len(d.Critical) == 0 && gate.Inconclusive() == "" {
		if line := idleUncaused(ev, gate, found, thresholdsFor(b, v)["host_wait_minor"]); line != "" {
			d.Summary = append(d.Summary, line)
		}
	}
	for _, a := range gate.Artifacts {
		d.Capture = append(d.Capture, a.Title+": "+a.Detail)
	}
	if why := gate.Inconclusive(); why != "" {
		d.Summary = append([]string{"Inconclusive: " + capFirst(why) + ". No finding here can be critical; see Capture quality."}, d.Summary...)
	} else if ex, span, n := gate.Excluded(); ex > 0 && span > 0 && ex*1000 >= span { // under 0.1% the line would read 0.0%
		of := "the GPU span"
		if n > 1 {
			of = "the GPU spans of the " + strconv.Itoa(n) + " ranks, summed"
		}
		idle := fmtPct(float64(ex)/float64(span)) + " of " + of + " (" + fmtMs(ex) + " of " + fmtMs(span) + ") is time inside start-up or held work in which the GPU ran none of the trace's work (idle, or running work it did not record)"
		for _, a := range gate.Artifacts {
			if a.PrevBatch && 10*a.IdleNs >= 9*ex {
				// sglang_qwen3_prefilldecode_mi300x: 493 ms before the step's
				// own work, most likely the previous batch.
				idle = fmtPct(float64(ex)/float64(span)) + " of " + of + " (" + fmtMs(ex) + " of " + fmtMs(span) + ") is time at the capture's start in which the GPU most likely ran SGLang's previous batch (its overlap scheduler), not the trace's work"
			}
		}
		judged := "they judge the remaining " + fmtMs(span-ex) + "; see Capture quality."
		if a, ok := recurringHold(gate); ok {
			// A hold in step after step is the loop's own stall: it comes
			// right after the bottleneck the rules name, and before it when
			// the idle left out is half the GPU span or more, more than
			// anything the rules judge can be.
			what := "a dependency on another stream or a peer, or work the trace did not record"
			if a.GraphIdleNs > 0 {
				// negative_queue_length_a100: 616 of the 664 ms end at nodes
				// of the compiled backward's CUDA graph replays.
				what = fmtPct(float64(a.GraphIdleNs)/float64(a.IdleNs)) + " of it ends at nodes of graph replays launched long before: the replays ran nodes the trace does not record, or waited on a dependency before or inside the graph"
			}
			line := idle + ", and the held part recurs: " + strconv.FormatInt(a.Steps, 10) + " of the " + strconv.FormatInt(a.OfAll, 10) +
				" steps of rank " + strconv.Itoa(a.Rank) + " of " + a.Trace + " hold 1 ms or more of it at once, with the work already launched." +
				" So it belongs to the loop, not to the capture, but the trace does not show what held the device, a stall or work it did not record (" + what + "); the rules cannot judge its cause and leave it out: " + judged
			at := min(1, len(d.Summary))
			if 2*ex >= span {
				// negative_queue_length_a100: 54% of the span held, step
				// after step, against exposed communication of 15% of it.
				at = 0
				if len(d.Critical) > 0 {
					line += " That hold outweighs anything they judge: the bottleneck named next is the largest of the rest, not the loop's."
				}
			}
			d.Summary = slices.Insert(d.Summary, at, line)
		} else {
			d.Summary = append(d.Summary, idle+", which the rules leave out: "+judged)
		}
	} else if len(d.Capture) > 0 {
		d.Summary = append(d.Summary, strconv.Itoa(len(d.Capture))+" capture artifact(s) found; see Capture quality.")
	}
	what := orUnknown(producer) + " workload"
	if producer == evidence.ProducerProfilerStep || producer == "" {
		// The producer label comes from step annotations; the operators say
		// whether anything trained, and without them nothing does.
		if producer == evidence.ProducerProfilerStep {
			what = "ProfilerStep# loop workload (no CPU operator says whether it trains)"
		}
		for _, t := range d.Traces {
			if len(t.Ranks) == 0 {
				continue
			}
			if w := findings.ReadWorkload(ev, t.Name, t.Ranks[0]); w.Known && (w.Operators || w.Training) {
				what = w.Phase() + " workload"
			}
			break
		}
	}
	if device != "" {
		what += " on " + device
	}
	what += ", " + strconv.Itoa(ranks) + " rank(s), " + fmtInt(events) + " events over " + fmtMs(spanNs) + "."
	d.KeyFindings = append(d.KeyFindings, what)
	if len(d.Critical) > 0 {
		var titles []string
		for _, is := range d.Critical {
			titles = append(titles, is.Title)
		}
		d.KeyFindings = append(d.KeyFindings, "Dominant pattern: "+strings.Join(titles, "; ")+".")
	}
	sums, total := familySums(ev)
	if fam := kernelFamilies(sums, total); fam != "" {
		void, _ := gate.Void()
		if void != "" {
			// A sample's kernels are no measure of the workload's time
			// (sampled_2of128: about one event in 73 kept).
			fam = "As the trace holds them, not as the workload ran (see Capture quality): " + strings.ToLower(fam[:1]) + fam[1:]
		}
		fam += uploadShare(gate, sums, total)
		d.KeyFindings = append(d.KeyFindings, fam)
		if c := commOverlap(ev, sums, total); c != "" && void == "" {
			d.KeyFindings = append(d.KeyFindings, c)
		}
	}
	if g := gemmRoofline(ev, d.Traces); g != "" {
		d.KeyFindings = append(d.KeyFindings, g)
	}
	if e := eagerFirstStep(b, ev); e != "" {
		d.KeyFindings = append(d.KeyFindings, e)
	}

	// Expected impact: what the critical issues account for, qualitatively.
	if len(crit) > 0 {
		d.Impact = expectedImpact(crit)
	} else {
		d.Impact = followUpImpact(minor)
	}

	// Perfetto inspection guide: each issue's place in the trace.
	for _, f := range append(crit, minor...) {
		d.Perfetto = append(d.Perfetto, inspect(b, ev, f))
		if len(d.Perfetto) == MaxCritical+MaxFollowUps {
			break
		}
	}

	for _, g := range b.Gaps {
		s := g.What
		if g.Why != "" {
			s += ": " + g.Why
		}
		where := g.Trace
		if g.Rank >= 0 {
			where += " rank " + strconv.Itoa(g.Rank)
		}
		if strings.TrimSpace(where) != "" {
			s += " (" + strings.TrimSpace(where) + ")"
		}
		d.Gaps = append(d.Gaps, s)
	}

	voidWhy, recapture := gate.Void()
	lever := followUpLever(minor)
	switch {
	case len(crit) > 0 && crit[0].Verify != "":
		d.NextLever = "Apply the fix of issue 1 (" + crit[0].Title + ") and verify: " + crit[0].Verify + " Then re-run the report on the new trace: the next issue in line becomes the lever."
	case len(crit) > 0:
		d.NextLever = "Apply the fix of issue 1 (" + crit[0].Title + "), capture a new trace with the same settings and re-run the report: the next issue in line becomes the lever."
	case voidWhy != "":
		// No time in such a capture names a lever: a counter capture's
		// operators hold the kernel replays too (cupti_profiler:
		// aten::cudnn_convolution's 4,918 ms lie inside the range
		// profiler's ranges); a sampled trace keeps one event in 73
		// (sampled_2of128). What to capture instead is the limit's own.
		d.NextLever = "No lever can be named from this capture: " + voidWhy + ". " + recapture
	case gate.Inconclusive() != "":
		// The Expected Impact of such a capture names no lever, and no
		// kernel is named here either: its window shows little of the
		// loop's own work (critical_path_alexnet: the heaviest kernel held
		// 4% of a window whose copies were the weights' one upload before
		// the loop).
		why := gate.Inconclusive()
		d.NextLever = "No lever can be named from this capture: " + why + "."
		if !findings.SaysWhatToProfile(why) {
			d.NextLever += " Profile steady-state steps after warm-up and re-run the report."
		}
	case lever != "":
		d.NextLever = lever
	default:
		var kernel string
		d.NextLever, kernel = nextFromKernels(ev, b.Table("kernels"), kernelProfiler(d.Traces))
		d.NextLever += fp4Note(b, kernel)
		d.NextLever += aiterNote(ev, d.Traces)
		d.NextLever += decodeGEMMNote(ev, kernel)
		if kernel != "" {
			_, world := rankCount(ev)
			d.NextLeverCmd = kernelProfileCmd(d.Traces, kernel, world, benchShape(b, ev))
		}
	}

	// The Evidence summary, then the tables, in the areas' order, without
	// histogram columns.
	void, _ := gate.Void()
	d.Evidence = evidenceRows(ev, found, void)
	d.OneTrace = len(d.Traces) <= 1 || ev.Filter.Trace != ""
	for _, area := range evidence.Areas {
		t := ev.Tables[area]
		if t == nil || len(t.Rows) == 0 {
			continue
		}
		d.Tables = append(d.Tables, reportTable(area, t))
		if _, ok := d.Controls.Sort[area]; !ok {
			if s := defaultSort(t); s != "" {
				d.Controls.Sort[area] = s
			}
		}
	}

	d.Controls.Ranks, d.Controls.Phases = ranksAndPhases(b)
	return d
}

// shown splits findings the way the report shows them: critical first by
// impact, at most MaxCritical, one per fix; the rest become follow-ups (of
// which the report shows MaxFollowUps), demoted criticals included.
func shown(found []evidence.Finding) (crit, minor []evidence.Finding) {
	for _, f := range found {
		if f.Severity == "critical" {
			crit = append(crit, f)
		} else {
			minor = append(minor, f)
		}
	}
	byImpact := func(fs []evidence.Finding) {
		sort.SliceStable(fs, func(i, j int) bool { return fs[i].Impact > fs[j].Impact })
	}
	byImpact(crit)
	byImpact(minor)
	// A critical issue whose fix is word for word one above it reads the
	// same constraint from another table (b200_eager: host waits and
	// vLLM's eager launches, one fix): one cause, one critical issue; it
	// follows as the first follow-up, which refers to that fix.
	var same []evidence.Finding
	kept := crit[:0:0]
	for _, f := range crit {
		dup := false
		for _, k := range kept {
			if f.Fix != "" && f.Fix == k.Fix && f.Snippet == k.Snippet {
				dup = true
				break
			}
		}
		if dup {
			same = append(same, f)
		} else {
			kept = append(kept, f)
		}
	}
	crit = kept
	if len(same) > 0 {
		minor = append(same, minor...)
	}
	if len(crit) > MaxCritical {
		minor = append(append([]evidence.Finding{}, crit[MaxCritical:]...), minor...)
		crit = crit[:MaxCritical]
	}
	return crit, minor
}

func issue(f evidence.Finding) Issue {
	is := Issue{ID: f.Rule, Title: f.Title, Observation: f.Observation, Fix: f.Fix, Snippet: f.Snippet,
		Confirmed: f.Status == "confirmed", Evidence: []string{}, Score: f.Impact}
	if f.Mechanism != "" {
		is.Observation += " Mechanism: " + f.Mechanism
	}
	if f.Caveat != "" {
		is.Observation += " Confidence capped: " + f.Caveat
	}
	seen := map[string]bool{}
	for _, r := range f.Evidence {
		ref := r.String()
		if !seen[ref] {
			seen[ref] = true
			is.Evidence = append(is.Evidence, ref)
		}
	}
	return is
}

// referEqualFixes gives an issue whose fix is word for word a critical
// issue's above it (two rules that read one constraint from two tables,
// e.g. short kernels and host waits) a reference to that issue instead of
// the same fix again; one whose fix differs but whose code is that
// issue's (a host-wait fix that sends the reader to the DataLoader issue
// first) a reference instead of the same code again.
func referEqualFixes(d *Doc) {
	refer := func(is *Issue, above []Issue) {
		for j, a := range above {
			n := strconv.Itoa(j + 1)
			switch {
			case is.Fix != "" && is.Fix == a.Fix && is.Snippet == a.Snippet:
				is.Fix = "Issue " + n + "'s fix above applies here as well."
				is.Snippet = ""
				return
			case is.Snippet != "" && is.Snippet == a.Snippet:
				is.Fix += " The code is issue " + n + "'s, above."
				is.Snippet = ""
				return
			}
		}
	}
	for i := range d.Critical {
		refer(&d.Critical[i], d.Critical[:i])
	}
	for i := range d.FollowUps {
		refer(&d.FollowUps[i], d.Critical)
	}
}

func statusWord(confirmed bool) string {
	if confirmed {
		return "confirmed"
	}
	return "hypothesis"
}

func scopeText(f evidence.Filter) string {
	var parts []string
	if f.Trace != "" {
		parts = append(parts, "trace "+f.Trace)
	} else {
		parts = append(parts, "all traces")
	}
	if f.HasRank {
		parts = append(parts, "rank "+strconv.Itoa(f.Rank))
	} else {
		parts = append(parts, "all ranks")
	}
	if f.WindowStartNs != 0 || f.WindowEndNs != 0 {
		parts = append(parts, table.Window(f.WindowStartNs, f.WindowEndNs))
	}
	if f.Phase != "" {
		parts = append(parts, "phase "+f.Phase)
	}
	if f.HasStep {
		parts = append(parts, "step "+strconv.Itoa(f.Step))
	}
	if f.HasStream {
		parts = append(parts, "stream "+strconv.FormatInt(f.Stream, 10))
	}
	return strings.Join(parts, ", ")
}

// streamScope says, for a filter of one stream, which evidence it
// narrows: the areas whose rows are per stream (and the call trees); the
// rank's GPU busy and idle time, the other areas and the findings on them
// count every stream. "" without a stream.
func streamScope(b *evidence.Bundle, f evidence.Filter) string {
	if !f.HasStream {
		return ""
	}
	var per []string
	for _, a := range evidence.Areas {
		if t := b.Tables[a]; t != nil && t.Col("stream") >= 0 {
			per = append(per, a)
		}
	}
	if len(per) == 0 {
		return " (no evidence area is per stream here: every figure counts every stream)"
	}
	return " (the stream narrows the " + joinAnd(per) + " evidence and the call trees; GPU busy and idle time, the other areas and the findings on them count every stream)"
}

// deviceText is the device line of a trace: the name deviceProperties
// gives, and, where that name does not tell the part (an empty name, as the
// vLLM MI300X traces write, or ROCm's generic "AMD Radeon Graphics"), the
// part its other properties identify (device.Identify: GFXIP 9.4, 304 CUs
// and 192 GiB are an MI300X), else the parts they fit, else the family its
// compute capability (GFXIP on ROCm) says, with its memory; an MTIA trace,
// which names no device, its platform; "" when neither tells anything.
func deviceText(name string, major, minor any, mem int64, sms int, platform string) string {
	if name == "" && platform == "mtia" {
		return "MTIA, Meta's accelerator (the trace names no model; Kineto records its work as GPU events, and this report calls it the GPU)"
	}
	if major == nil || minor == nil {
		return name
	}
	c := device.Identify(device.Props{Name: name, CCMajor: int(num(major)), CCMinor: int(num(minor)), NumSMs: sms, TotalMem: mem, Platform: platform})
	// A part the properties identify, or the parts they fit, are said
	// whether or not the capability table knows their family (an MI100,
	// gfx908, is named though its capabilities are not in the table).
	unnamed := ""
	if name == "" {
		unnamed = "; the trace names no device"
	}
	switch {
	case c.Model != "":
		model := "AMD " + c.Model // Radeon VII, Radeon Pro VII
		if strings.HasPrefix(c.Model, "MI") {
			model = "AMD Instinct " + c.Model
		}
		if name != "" {
			model = name + ": " + model
		}
		return model + " (" + c.Arch + ", identified from " + c.From + unnamed + ")"
	case len(c.Candidates) > 0:
		if name == "" {
			name = "AMD GPU"
			if c.Known {
				name = c.Family
			}
		}
		return name + " (" + c.Arch + "; " + c.From + " fit " + strings.Join(c.Candidates, " or ") + ": the model is not known" + unnamed + ")"
	}
	if !c.Known || c.Family == "" || !c.Inferred {
		return name
	}
	gib := ""
	if mem > 0 {
		gib = fmt.Sprintf("%.0f GiB", float64(mem)/(1<<30))
	}
	if name == "" {
		if gib != "" {
			gib += "; "
		}
		return c.Family + " (" + gib + "the trace names no device)"
	}
	if gib != "" {
		gib = "; " + gib
	}
	return name + " (" + c.Family + gib + ")"
}

// stacksSetting is the capture setting of python stacks.
const stacksSetting = "python stacks (with_stack)"

// traceMetas reads the traces table: one TraceMeta per trace, its files'
// ranks, events and span together.
func traceMetas(b *evidence.Bundle, f evidence.Filter) []TraceMeta {
	out := []TraceMeta{}
	t := b.Traces
	if t == nil {
		return out
	}
	col := func(r []any, name string) any { return cell(r, t.Col(name)) }
	str := func(v any) string { s, _ := v.(string); return s }
	i64 := func(v any) int64 { return int64(num(v)) }
	boolean := func(v any) bool { x, _ := v.(bool); return x }
	byName := map[string]*TraceMeta{}
	var order []string
	type span struct{ first, last int64 }
	spans := map[string]*span{}
	paths := map[string]map[string]int{}
	outOfRange := map[string]int64{} // kineto_out_of_range summed over the trace's files
	for _, r := range t.Rows {
		name := str(col(r, "trace"))
		if f.HasRank && int(i64(col(r, "rank"))) != f.Rank {
			continue
		}
		m := byName[name]
		if m == nil {
			m = &TraceMeta{Name: name, Ranks: []int{}, Capture: []string{}}
			byName[name] = m
			order = append(order, name)
			spans[name] = &span{first: 1<<63 - 1}
			paths[name] = map[string]int{}
		}
		path := str(col(r, "path"))
		paths[name][path]++
		m.Events += i64(col(r, "events"))
		m.Ranks = append(m.Ranks, int(i64(col(r, "rank"))))
		if p := str(col(r, "producer")); p != "" && (m.Producer == "" || m.Producer == "unknown") {
			m.Producer = p
		}
		if m.Device == "" {
			m.Device = deviceText(str(col(r, "gpu_model")), col(r, "gpu_cc_major"), col(r, "gpu_cc_minor"), i64(col(r, "gpu_total_mem")), int(i64(col(r, "gpu_num_sms"))), str(col(r, "platform")))
		}
		sp := spans[name]
		if v := col(r, "first_ts_ns"); v != nil && i64(v) < sp.first {
			sp.first = i64(v)
		}
		if v := col(r, "last_end_ns"); v != nil && i64(v) > sp.last {
			sp.last = i64(v)
		}
		add := func(ok bool, s string) {
			if !ok {
				return
			}
			for _, c := range m.Capture {
				if c == s {
					return
				}
			}
			m.Capture = append(m.Capture, s)
		}
		add(boolean(col(r, "has_sync_events")), "cuda_sync events")
		add(t.Col("has_sync_events") >= 0 && !boolean(col(r, "has_sync_events")), "no cuda_sync events")
		add(boolean(col(r, "has_python_stacks")), stacksSetting)
		add(boolean(col(r, "has_graphs")), evidence.GraphNoun(str(col(r, "platform")))+"s")
		add(recordsShapes(b, name, int(i64(col(r, "rank")))), "operator shapes (record_shapes)")
		// The 2021-format resnet50 captures hold thousands of [memory]
		// events and no profile_memory field in their header.
		events := evidence.AllocatorEvents(b.Tables["memory"], name, int(i64(col(r, "rank")))) > 0
		add(events, "allocator events (profile_memory)")
		// vllm_decode_full_mi300x: the header says profile_memory, and the
		// trimmed file holds no [memory] event.
		add(!events && boolean(col(r, "profile_memory")), "profile_memory on (its header) but no allocator event in the file")
		add(boolean(col(r, "has_steps")), "step annotations")
		if pl := str(col(r, "platform")); pl != "" && pl != "unknown" {
			add(true, "platform "+pl)
		}
		if s := str(col(r, "slice")); s != "" {
			add(true, "partial load: "+s)
		}
		outOfRange[name] += i64(col(r, "kineto_out_of_range"))
	}
	for _, name := range order {
		m := byName[name]
		if n := outOfRange[name]; n > 0 {
			// ns_resolution_v100: 3,829 (Kineto's GenericActivityProfiler
			// drops a record that starts before the window or ends after it).
			m.Capture = append(m.Capture, "Kineto left out "+table.Int(n)+" activity records that began before the capture window or ended after it (Out-of-range in its log): a launch near the window's edges may have no GPU work in the trace")
		}
		sort.Ints(m.Ranks)
		m.Ranks = uniqInts(m.Ranks)
		var files []string
		for p := range paths[name] {
			files = append(files, p)
		}
		sort.Strings(files)
		m.File = strings.Join(files, ", ")
		if len(files) > 3 {
			m.File = files[0] + " and " + strconv.Itoa(len(files)-1) + " more files"
		}
		for _, p := range files {
			if strings.Contains(p, "merged_trace") || paths[name][p] > 1 {
				m.Merged = true
			}
		}
		if sp := spans[name]; sp.last > sp.first {
			m.SpanNs = sp.last - sp.first
		}
		if ns, ok := overviewSpan(b, name, f); ok {
			m.SpanNs = ns
		}
		out = append(out, *m)
	}
	return out
}

// overviewSpan is a trace's span as the overview area defines it (its
// ranks' first start to their last end, Kineto's Record Window End marker
// left out: vllm_graph_capture_full_mi300x's 59 ms, where the traces
// table's last end, the marker's, gives 119 ms); ok is false where the
// bundle has no overview row of the trace.
func overviewSpan(b *evidence.Bundle, trace string, f evidence.Filter) (ns int64, ok bool) {
	t := b.Tables["overview"]
	if t == nil || t.Col("first_ns") < 0 || t.Col("span_ns") < 0 {
		return 0, false
	}
	var lo, hi int64
	for r := range t.Rows {
		if evidence.Str(t, r, "trace") != trace || (f.HasRank && int(evidence.Int(t, r, "rank")) != f.Rank) {
			continue
		}
		first := evidence.Int(t, r, "first_ns")
		end := first + evidence.Int(t, r, "span_ns")
		if !ok || first < lo {
			lo = first
		}
		if !ok || end > hi {
			hi = end
		}
		ok = true
	}
	return hi - lo, ok && hi > lo
}

func uniqInts(xs []int) []int {
	out := xs[:0]
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// featureColumns are columns that only some rows fill, NULL on every
// other: the workload area's that one feature fills (gemm_shapes), the
// sync area's dist_ns, which only ranks with TorchRec's input-dist ranges
// fill, the steps area's kv_tokens, only vLLM's, and its loader_ns, only
// a DataLoader's. A table that shows no such row leaves them out.
var featureColumns = map[string]bool{"gemm_flops": true, "gemm_bytes": true, "dist_ns": true, "kv_tokens": true, "loader_ns": true}

// reportTable copies an evidence table without its histogram columns, nor
// its feature columns where no row fills them.
func reportTable(name string, t *table.Table) table.Table {
	var keep []int
	out := table.Table{Name: name, Columns: []table.Column{}, Rows: make([][]any, 0, len(t.Rows)), Total: t.Total}
	for i, c := range t.Columns {
		if table.IsHist(c.Unit) || (featureColumns[c.Name] && emptyColumn(t, i)) {
			continue
		}
		keep = append(keep, i)
		out.Columns = append(out.Columns, c)
	}
	cells := make([]any, len(keep)*len(t.Rows)) // one allocation for all rows
	for k, r := range t.Rows {
		row := cells[k*len(keep) : (k+1)*len(keep) : (k+1)*len(keep)]
		for j, i := range keep {
			row[j] = cell(r, i)
		}
		out.Rows = append(out.Rows, row)
	}
	return out
}

// emptyColumn says whether column i is NULL in every row of t.
func emptyColumn(t *table.Table, i int) bool {
	for _, r := range t.Rows {
		if cell(r, i) != nil {
			return false
		}
	}
	return true
}

// defaultSort sorts a table by its first duration column, largest first.
func defaultSort(t *table.Table) string {
	for _, c := range t.Columns {
		if table.IsDuration(c.Unit) {
			return "-" + c.Name
		}
	}
	return ""
}

// ranksAndPhases lists the ranks and phases the bundle holds, for the
// viewer's controls.
func ranksAndPhases(b *evidence.Bundle) ([]int, []string) {
	rs := map[int]bool{}
	ps := map[string]bool{}
	if t := b.Traces; t != nil {
		for _, r := range t.Rows {
			rs[int(num(cell(r, t.Col("rank"))))] = true
		}
	}
	for _, t := range b.Tables {
		if t == nil {
			continue
		}
		ci, pi := t.Col("rank"), t.Col("phase")
		for _, r := range t.Rows {
			if ci >= 0 {
				if v := cell(r, ci); v != nil {
					rs[int(num(v))] = true
				}
			}
			if pi >= 0 {
				if s, ok := cell(r, pi).(string); ok && s != "" {
					ps[s] = true
				}
			}
		}
	}
	ranks := []int{}
	for r := range rs {
		ranks = append(ranks, r)
	}
	sort.Ints(ranks)
	phases := []string{}
	for p := range ps {
		phases = append(phases, p)
	}
	sort.Strings(phases)
	return ranks, phases
}

// inspect points the Perfetto guide at a finding's rank and step.
func inspect(b *evidence.Bundle, ev *evidence.Evidence, f evidence.Finding) Inspect {
	in := Inspect{What: f.Title, Process: "the host process", Thread: "the thread that launches kernels" + launchCallText(b, f.Trace, f.Rank)}
	if f.Rank >= 0 {
		in.Process = "rank " + strconv.Itoa(f.Rank) + " host process (and its GPU process for the streams)"
	}
	if t := ev.Table("steps"); t != nil && f.Step >= 0 {
		for _, r := range t.Rows {
			if int(num(cell(r, t.Col("step")))) == f.Step && (f.Rank < 0 || int(num(cell(r, t.Col("rank")))) == f.Rank) {
				in.StartNs = int64(num(cell(r, t.Col("start_ns"))))
				in.EndNs = in.StartNs + int64(num(cell(r, t.Col("wall_ns"))))
				in.What += " (step " + strconv.Itoa(f.Step) + ")"
				break
			}
		}
	}
	if in.EndNs == 0 {
		for _, m := range traceMetas(b, evidence.Filter{}) {
			if f.Trace == "" || m.Name == f.Trace {
				in.EndNs = m.SpanNs
				break
			}
		}
	}
	return in
}

// launchCallText names, in parentheses, the runtime call that launches
// kernels on the platform of a trace's rank (the trace's first rank for
// rank -1): cudaLaunchKernel on CUDA, hipLaunchKernel on ROCm; "" where
// the traces table does not say or the platform has neither.
func launchCallText(b *evidence.Bundle, trace string, rank int) string {
	switch evidence.PlatformOf(b.Traces, trace, rank) {
	case "cuda":
		return " (cudaLaunchKernel)"
	case "rocm":
		return " (hipLaunchKernel)"
	}
	return ""
}

// producerText is how Trace Metadata names a producer. The importer's
// profiler_step means ProfilerStep# annotations, which an inference loop under
// torch.profiler writes too: the Key Findings line says which it ran, from
// its operators.
func producerText(p string) string {
	if p == evidence.ProducerProfilerStep {
		return "a PyTorch profiler loop (ProfilerStep# steps; Key Findings says whether it trains)"
	}
	return orUnknown(p)
}

// nextFromKernels names the next lever when no rule fired: the compute or
// memory kernel with the most GPU time, as a share of the kernels' summed
// time. A communication kernel is no roofline target (its time includes
// waiting for the other ranks, which the collectives area splits off), and
// a capture with under leverMinNs of kernel time is too small to name one.
// perStream is the bundle's kernels table, whose rows keep the stream the
// rollup merges over: where a copy ran against the compute (copyStream).
// kernel is the computation kernel the lever names ("" for none).
func nextFromKernels(ev *evidence.Evidence, perStream *table.Table, profiler string) (lever, kernel string) {
	t := ev.Table("kernels")
	if t == nil || len(t.Rows) == 0 {
		// No GPU work (a CPU-only capture, a counter capture): the lever is
		// on the host, where the operators say what took the time.
		if o := ev.Table("ops"); o != nil {
			names, sums, total := byName(o, "name", "self_ns")
			isRange := scopeRanges(o)
			for _, n := range names {
				if isRange(n) {
					// A range's self time is its thread outside every
					// operator, no operator's work (cpu_only's
					// ProfilerStep#551: 210 ms of the 2,346).
					total -= sums[n]
				}
			}
			for _, n := range names {
				if !isRange(n) && total > 0 {
					head := "The trace holds no GPU work, so the next lever is on the host: the CPU operator with the most self time is " + name(n) + " (" +
						fmtMs(sums[n]) + ", " + share(sums[n], total, "operators' self time, summed over every host thread (threads that run side by side add up)") + ")"
					if strings.HasPrefix(n, "gloo:") {
						return head + ", a collective gloo runs on the CPU: its time includes waiting for the other ranks of the job, which only their traces, loaded together, tell from the transfer.", ""
					}
					if slices.ContainsFunc(names, evidence.IsCPUBackendOp) {
						// oneDNN's kernels: a run on the CPU, with no device to capture
						// (torch1.13.1_legacy_smallnet).
						return head + "; profile it: the run is on the CPU (its operators include oneDNN's aten::mkldnn_ kernels), so no device activity is missing.", ""
					}
					return head + "; profile it, or capture with the GPU activity to see the device.", ""
				}
			}
		}
		return "The trace holds no GPU work and no CPU operator time: capture with CPU and CUDA (or ROCm) activity to see the next lever.", ""
	}
	ni, ti, ci := t.Col("name"), t.Col("total_ns"), t.Col("class")
	work, comm, mem := map[string]int64{}, map[string]int64{}, map[string]int64{}
	var total int64
	for _, r := range t.Rows {
		n, _ := cell(r, ni).(string)
		v := int64(num(cell(r, ti)))
		switch class, _ := cell(r, ci).(string); class {
		case "COMM":
			comm[n] += v
		case "MEM":
			mem[n] += v // copies and memsets: no kernel to profile
		default:
			work[n] += v
		}
		total += v
	}
	if total < leverMinNs {
		return "The capture holds " + fmtMs(total) + " of kernel time, too little to name a kernel-level lever: capture steady-state steps of the workload.", ""
	}
	of := " of the kernels' summed time (" + fmtMs(total) + ", streams counted apart)"
	c, cNs := heaviest(comm)
	m, mNs := heaviest(mem)
	copyWhat := "copy " + m + " holds " + fmtPct(shareOf(mNs, total)) + ": a copy is no kernel to profile; the memcpy area gives its bandwidth and stream" +
		copyStream(perStream, ev.Filter, m) + "."
	copyNote := " The " + copyWhat
	if len(work) == 0 {
		if len(comm) == 0 {
			return "Every GPU operation is a copy or memset; the heaviest " + copyWhat, ""
		}
		s := "Every kernel is a communication kernel; the heaviest, " + c + ", holds " + fmtPct(shareOf(cNs, total)) + of +
			". " + commSplit(ev, "Its")
		if mNs > cNs {
			s += copyNote
		}
		return s, ""
	}
	w, wNs := heaviest(work)
	s := gpuSideLever + "the kernel " + name(findings.KernelName(w)) + " holds " + fmtPct(shareOf(wNs, total)) + of + ". Profile it with " + profiler +
		" to see whether it is memory- or compute-bound; that gate proves or refutes a kernel-level lever."
	if cNs > wNs {
		s += " The communication kernel " + name(findings.KernelName(c)) + " holds more (" + fmtPct(shareOf(cNs, total)) +
			"), but " + commSplit(ev, "its")
	}
	if mNs > wNs {
		s += copyNote
	}
	return s, w
}

// gpuSideLever begins the next lever that nextFromKernels names on the
// GPU side; reconcile adds the host side after it where launches are
// serialised (serialHostLever).
const gpuSideLever = "The GPU side: "

// copyStream says, as a parenthesis for the next lever's copy sentence,
// where the copies named m ran against the compute, from kernel rows that
// keep their stream (the bundle's; the rollup merges streams) under filter
// f. A rank's compute stream is the one with the most COMP time. Copies on
// it run in line with its kernels, so their time adds to the step
// (trace_diff_test_v100: 4,645 DtoD copies, 9.6% of kernel time, on stream
// 7 with the compute); copies on another stream run beside the compute,
// where a copy costs little. "" where the rows cannot tell: no stream
// column, a copy without a stream, a rank with no compute, the copies of a
// rank on several streams, or ranks that disagree. A stream filter is set
// aside: the compute stream is the rank's, whichever stream the view shows.
func copyStream(t *table.Table, f evidence.Filter, m string) string {
	if t == nil || t.Col("stream") < 0 {
		return ""
	}
	f.HasStream, f.Stream = false, 0
	type rankKey struct {
		trace string
		rank  int64
	}
	comp := map[rankKey]map[int64]int64{} // COMP time per stream
	copies := map[rankKey][]int64{}       // the streams m ran on
	for _, r := range f.Rows(t) {
		k := rankKey{evidence.Str(t, r, "trace"), evidence.Int(t, r, "rank")}
		st, ns := evidence.Int(t, r, "stream"), evidence.Int(t, r, "total_ns")
		switch {
		case evidence.Str(t, r, "class") == "COMP":
			if comp[k] == nil {
				comp[k] = map[int64]int64{}
			}
			comp[k][st] += ns
		case evidence.Str(t, r, "class") == "MEM" && evidence.Str(t, r, "name") == m && ns > 0 && !slices.Contains(copies[k], st):
			copies[k] = append(copies[k], st)
		}
	}
	if len(copies) == 0 {
		return ""
	}
	inLine, beside := 0, 0
	var p [2]int64               // a (copy stream, compute stream) pair
	pairs := map[[2]int64]bool{} // every pair: one names the streams
	for k, sts := range copies {
		if len(sts) != 1 || sts[0] < 0 {
			return ""
		}
		main, mainNs := int64(-1), int64(0)
		for st, ns := range comp[k] {
			if st >= 0 && (ns > mainNs || (ns == mainNs && st < main)) {
				main, mainNs = st, ns
			}
		}
		if mainNs == 0 {
			return ""
		}
		if sts[0] == main {
			inLine++
		} else {
			beside++
		}
		p = [2]int64{sts[0], main}
		pairs[p] = true
	}
	one := len(pairs) == 1
	switch {
	case inLine > 0 && beside > 0:
		return ""
	case inLine > 0 && one:
		return " (its copies run on stream " + strconv.FormatInt(p[0], 10) + ", the compute stream, in line with its kernels and serialised with them, so their time adds to the step)"
	case inLine > 0:
		return " (its copies run on each rank's compute stream, in line with its kernels and serialised with them, so their time adds to the step)"
	case one:
		return " (its copies run on stream " + strconv.FormatInt(p[0], 10) + ", not the compute stream " + strconv.FormatInt(p[1], 10) + ": a copy beside compute costs little)"
	}
	return " (its copies run on a stream apart from each rank's compute stream: a copy beside compute costs little)"
}

// kernelFamilies says where the slice's kernel time goes, family by family
// (sums and total: familySums), the largest first, each of at least 1% (the
// rest as other); "" under leverMinNs of kernel time.
func kernelFamilies(sums map[string]int64, total int64) string {
	if total < leverMinNs {
		return ""
	}
	fams := slices.Clone(findings.KernelFamilies)
	sort.SliceStable(fams, func(i, j int) bool { return sums[fams[i]] > sums[fams[j]] })
	var parts []string
	var rest int64
	for _, f := range fams {
		switch share := shareOf(sums[f], total); {
		case f == findings.FamilyOther || share < 0.01:
			rest += sums[f]
		default:
			parts = append(parts, f+" "+fmtPct(share))
		}
	}
	if rest > 0 && shareOf(rest, total) >= 0.001 {
		parts = append(parts, "other "+fmtPct(shareOf(rest, total)))
	}
	return "Where the kernel time goes (families read from the kernel names): " + strings.Join(parts, ", ") +
		" of the " + fmtMs(total) + " summed kernel time (streams counted apart)."
}

// uploadShare is the kernel-families line's sentence where copies take
// the largest share and a rank of the slice uploaded its data before any
// computation (the capture gate's upload artifact: every GPU copy of the
// rank ended before its first kernel): that share is a one-time cost, not
// the loop's (critical_path_alexnet: 83.8%, the 244 MB of AlexNet's
// weights). "" otherwise.
func uploadShare(gate *findings.Gate, sums map[string]int64, total int64) string {
	if gate == nil || total <= 0 {
		return ""
	}
	for _, f := range findings.KernelFamilies {
		if sums[f] > sums[findings.FamilyCopy] {
			return ""
		}
	}
	for _, a := range gate.Artifacts {
		if a.Kind == "upload" {
			return " The copies are the upload before any computation (see Capture quality): every copy of rank " + strconv.Itoa(a.Rank) + " ended before its first kernel, a one-time cost, not the loop's."
		}
	}
	return ""
}

// familySums is the slice's kernel time by family (findings.KernelFamily)
// and in all, summed over streams and ranks.
func familySums(ev *evidence.Evidence) (sums map[string]int64, total int64) {
	sums = map[string]int64{}
	t := ev.Table("kernels")
	if t == nil {
		return sums, 0
	}
	for r := range t.Rows {
		ns := evidence.Int(t, r, "total_ns")
		sums[findings.KernelFamily(evidence.Str(t, r, "class"), evidence.Str(t, r, "name"))] += ns
		total += ns
	}
	return sums, total
}

// commOverlapMinShare is the share of the summed kernel time that
// communication takes for the Key Findings to say how much of it ran
// beside computation (commOverlap).
const commOverlapMinShare = 0.10

// commOverlap says how much of the communication kernels' time ran beside
// computation (the overlap area), where communication is at least
// commOverlapMinShare of the summed kernel time: the families' line
// counts the kernels' time, which alone says nothing of what they cost
// the step (train_h800_ep64: communication 46.5% of the kernel time, no
// rule flagging it, 96.3% of it beside computation). A collective
// kernel's time counts its wait for the other ranks, which the line says
// rather than split (the collectives area does). sums and total are the
// kernel time by family (familySums). "" otherwise.
func commOverlap(ev *evidence.Evidence, sums map[string]int64, total int64) string {
	if total < leverMinNs || shareOf(sums[findings.FamilyComm], total) < commOverlapMinShare {
		return ""
	}
	t := ev.Table("overlap")
	if t == nil {
		return ""
	}
	var comm, overlap int64
	ranks := map[string]bool{}
	where := ""
	for r := range t.Rows {
		comm += evidence.Int(t, r, "comm_ns")
		overlap += evidence.Int(t, r, "overlap_ns")
		ranks[evidence.Str(t, r, "trace")+"\x00"+evidence.Str(t, r, "rank")] = true
		where = "rank " + evidence.Str(t, r, "rank") + ", streams merged"
	}
	if comm <= 0 {
		return ""
	}
	if len(ranks) > 1 {
		where = strconv.Itoa(len(ranks)) + " ranks summed, streams merged within each"
	}
	if overlap <= 0 {
		return "Communication kernels never ran beside computation: all " + fmtMs(comm) + " of them exposed (" + where + "), waiting for other ranks included."
	}
	share := fmtPct(shareOf(overlap, comm))
	if shareOf(overlap, comm) < 0.001 {
		share = "under 0.1%"
	}
	return "Communication kernels ran beside computation for " + share + " of their " + fmtMs(comm) +
		" (" + where + "): " + fmtMs(comm-overlap) + " exposed, waiting for other ranks included."
}

// stepPhase names the phase of a rank's steps for the one-step line: " (a
// prefill step)" (sglang_qwen3_prefilldecode_mi300x's one step[EXTEND]);
// "" where the steps area gives none, or an unknown phase.
func stepPhase(ev *evidence.Evidence, trace string, rank int) string {
	t := ev.Table("steps")
	if t == nil || t.Col("phase") < 0 {
		return ""
	}
	for r := range t.Rows {
		if evidence.Str(t, r, "trace") == trace && int(evidence.Int(t, r, "rank")) == rank && evidence.Int(t, r, "step") >= 0 {
			switch p := evidence.Str(t, r, "phase"); p {
			case "", "unknown":
			case "mixed":
				return " (a mixed step: prefill and decode in one batch)"
			case "train":
				// train_h800_ep64: DeepSeek's profile of one ProfilerStep
				// around the 1F1B section of a DualPipe schedule, with no
				// optimizer step: part of an iteration, not a whole one.
				if w := findings.ReadWorkload(ev, trace, rank); w.Known && w.Examples["optimizer"] == "" {
					return " (training work: forward and backward but no optimizer step, so it may be a section of an iteration, such as a pipeline schedule's, not a whole one)"
				}
				return " (a train step)"
			case "inference", "idle":
				return " (an " + p + " step)"
			default:
				return " (a " + p + " step)"
			}
		}
	}
	return ""
}

// eagerStep is a vLLM slice of one rank whose steps carry no phase (steps
// from python execute_model frames) and whose first step with GPU work
// replays no CUDA graph while at least two later ones do, with at least
// twice their median GPU busy time: that step most likely ran a batch
// above the graphs' capture sizes, such as a prefill (vllm_h100_tp4_rank0:
// step 0, 83.9 ms of GPU work and no graph, against 16.5 ms and 81 graph
// launches for each of steps 1-9).
type eagerStep struct {
	trace string
	rank  int
	step  int64
	busy  int64 // the eager step's GPU busy time
	med   int64 // the median of the graph-replaying steps'
	later int   // how many later steps replay graphs
	most  int64 // the graph launches a step, most often
	// kv is the tokens the eager step wrote to the KV cache (-1 unknown),
	// kvLo and kvHi the fewest and most of the graph-replaying steps'.
	kv, kvLo, kvHi int64
}

// oneSequence says whether the eager step and the steps after it are one
// sequence served alone: a prefill (more than twice the later steps'
// tokens), then decode steps that each wrote 1 token to the KV cache.
func (e eagerStep) oneSequence() bool {
	return e.kv > 2*e.kvHi && e.kvLo == 1 && e.kvHi == 1
}

// findEagerStep returns the slice's eager first step (eagerStep), ok false
// where there is none.
func findEagerStep(b *evidence.Bundle, ev *evidence.Evidence) (e eagerStep, ok bool) {
	trace, rank, ok := oneRank(ev)
	st, gr := b.Table("steps"), b.Table("graphs")
	if !ok || st == nil || gr == nil {
		return e, false
	}
	vllm := false
	for _, ri := range evidence.Ranks(b.Traces) {
		vllm = vllm || (ri.Trace == trace && ri.Rank == rank && ri.Producer == "vllm")
	}
	if !vllm {
		return e, false
	}
	launches := map[int64]int64{}
	for r := range gr.Rows {
		if evidence.Str(gr, r, "trace") == trace && int(evidence.Int(gr, r, "rank")) == rank {
			launches[evidence.Int(gr, r, "step")] += evidence.Int(gr, r, "launches")
		}
	}
	type step struct{ n, start, busy, kv int64 } // kv: tokens written to the KV cache, -1 unknown
	var steps []step
	for r := range st.Rows {
		if evidence.Str(st, r, "trace") != trace || int(evidence.Int(st, r, "rank")) != rank || evidence.Int(st, r, "step") < 0 {
			continue
		}
		if p := evidence.Str(st, r, "phase"); p != "" && p != "unknown" {
			return e, false // the steps say their phase
		}
		if busy := evidence.Int(st, r, "gpu_busy_ns"); busy > 0 {
			kv := int64(-1)
			if v, ok := cell(st.Rows[r], st.Col("kv_tokens")).(int64); ok {
				kv = v
			}
			steps = append(steps, step{evidence.Int(st, r, "step"), evidence.Int(st, r, "start_ns"), busy, kv})
		}
	}
	sort.Slice(steps, func(i, j int) bool { return steps[i].start < steps[j].start })
	if len(steps) < 3 || launches[steps[0].n] > 0 {
		return e, false
	}
	var busy []int64
	perStep := map[int64]int{}
	var kvs []int64 // the graph-replaying steps' KV-cache writes
	for _, s := range steps[1:] {
		if l := launches[s.n]; l > 0 {
			busy = append(busy, s.busy)
			perStep[l]++
			kvs = append(kvs, s.kv)
		}
	}
	if len(busy) < 2 {
		return e, false
	}
	med := medianInt(busy)
	if steps[0].busy < 2*med {
		return e, false
	}
	var most, mostN int64
	for l, n := range perStep {
		if int64(n) > mostN || (int64(n) == mostN && l < most) {
			most, mostN = l, int64(n)
		}
	}
	return eagerStep{trace: trace, rank: rank, step: steps[0].n, busy: steps[0].busy, med: med, later: len(busy), most: most,
		kv: steps[0].kv, kvLo: slices.Min(kvs), kvHi: slices.Max(kvs)}, true
}

// oneRequestLine is the summary's line on a serving window that holds one
// sequence: an eager prefill (findEagerStep) followed by decode steps
// that each wrote one token to the KV cache (vllm_h100_tp4_rank0 and
// vllm_mi300x_tp4_rank0: 1,049 tokens, then 1 a step). Every verdict of
// the report is then batch-1 serving's, whatever load the server was
// under. "" otherwise.
func oneRequestLine(b *evidence.Bundle, ev *evidence.Evidence) string {
	e, ok := findEagerStep(b, ev)
	if !ok || !e.oneSequence() {
		return ""
	}
	return fmt.Sprintf("The window holds one sequence: a prefill of %s tokens, then %d decode steps of 1 token each (a batch of 1, from the KV-cache writes of vLLM's reshape_and_cache kernels). What this report reads is that sequence served alone, whatever load the server was under: capture under the load to judge serving at its batch sizes.",
		table.Int(e.kv), e.later)
}

// eagerFirstStep is Key Findings' line on the slice's eager first step
// (findEagerStep): the kernel shares mix it with the graph-replaying steps.
// "" where there is none.
func eagerFirstStep(b *evidence.Bundle, ev *evidence.Evidence) string {
	e, ok := findEagerStep(b, ev)
	if !ok {
		return ""
	}
	if kv, lo, hi := e.kv, e.kvLo, e.kvHi; kv > 0 && lo > 0 && kv > 2*hi {
		// vllm_h100_tp4_rank0: 1,049 tokens, then 1 a step: one request's
		// prefill and its decode steps.
		later := table.Int(lo) + " to " + table.Int(hi) + " tokens each"
		if lo == hi {
			later = plural(lo, "token", "tokens") + " each"
			if e.oneSequence() {
				later += ": one sequence decoding, a batch of 1"
			}
		}
		return fmt.Sprintf("Step %d ran eagerly, replaying no CUDA graph: it wrote %s tokens to the KV cache (vLLM's reshape_and_cache kernels, one block per token), most likely a prefill above the graphs' capture sizes, with %s of GPU work, against a median of %s for the %d later steps that replay graphs (%s graph launches a step, most often), which wrote %s. The kernel shares above mix it with those steps.",
			e.step, table.Int(kv), fmtMs(e.busy), fmtMs(e.med), e.later, table.Int(e.most), later) + eagerHostWait(b, e)
	}
	return fmt.Sprintf("Step %d ran eagerly, replaying no CUDA graph, with %s of GPU work, against a median of %s for the %d later steps that replay graphs (%s graph launches a step, most often): most likely a batch above the graphs' capture sizes, such as a prefill (a hypothesis: vLLM's execute_model frames carry no token counts). The kernel shares above mix it with those steps.",
		e.step, fmtMs(e.busy), fmtMs(e.med), e.later, table.Int(e.most)) + eagerHostWait(b, e)
}

// eagerHostWaitNs is the eager step's host-wait GPU idle and that of every
// step of its rank (the ranks area's host_wait_ns, per step; the idle
// outside every step not counted).
func eagerHostWaitNs(b *evidence.Bundle, e eagerStep) (own, all int64) {
	t := b.Table("ranks")
	if t == nil || t.Col("host_wait_ns") < 0 {
		return 0, 0
	}
	for r := range t.Rows {
		if evidence.Str(t, r, "trace") != e.trace || int(evidence.Int(t, r, "rank")) != e.rank || evidence.Int(t, r, "step") < 0 {
			continue
		}
		hw := evidence.Int(t, r, "host_wait_ns")
		all += hw
		if evidence.Int(t, r, "step") == e.step {
			own += hw
		}
	}
	return own, all
}

// eagerStepReach bounds a host-bound finding whose fix offers vLLM's FULL
// graphs (findings.FullGraphsReplay) by the slice's eager first step
// (findEagerStep): its share of the rank's host-wait GPU idle in steps
// (eagerHostWaitNs) is taken off the finding's share, as no graph mode
// reaches a batch above the capture sizes (vllm_mi300x_tp4_rank0: step 0
// holds 28.8 ms of the 269.6 ms, so the fix reaches about 42% of the span,
// not 47%). Expected Impact states the bound (Finding.FixReach).
func eagerStepReach(found []evidence.Finding, b *evidence.Bundle, ev *evidence.Evidence) {
	e, ok := findEagerStep(b, ev)
	if !ok {
		return
	}
	own, all := eagerHostWaitNs(b, e)
	if own <= 0 || all <= 0 {
		return
	}
	for i := range found {
		f := &found[i]
		if f.Rule != "host_bound_idle" || f.FixReach > 0 || f.Impact <= 0 || f.Trace != e.trace || f.Rank != e.rank || !strings.Contains(f.Fix, findings.FullGraphsReplay) {
			continue
		}
		f.FixReach = f.Impact * float64(all-own) / float64(all)
		f.FixReachOf = fmt.Sprintf("the host waits of the steps that replay graphs, which FULL graphs reach: step %d ran eagerly, most likely a batch above the capture sizes, and no CUDA graph mode reaches its %s of the %s in the rank's steps; async scheduling hides host work only up to a step's GPU time",
			e.step, fmtMs(own), fmtMs(all))
	}
}

// eagerHostWait is eagerFirstStep's sentence on the eager step's share of
// the rank's host-wait GPU idle (eagerHostWaitNs), which no CUDA graph mode
// reaches: a batch above the capture sizes runs eagerly whatever the
// cudagraph_mode (vllm_mi300x_tp4_rank0: step 0 holds 28.8 ms of 269.6 ms,
// the rest the graph-replaying decode steps'). "" when the step holds none.
func eagerHostWait(b *evidence.Bundle, e eagerStep) string {
	own, all := eagerHostWaitNs(b, e)
	if own <= 0 || all <= 0 {
		return ""
	}
	return fmt.Sprintf(" It holds %s of the %s of host-wait GPU idle in the rank's steps (%s): a CUDA graph mode does not reach that part, as a batch above the capture sizes runs eagerly in every mode.",
		fmtMs(own), fmtMs(all), fmtPct(float64(own)/float64(all)))
}

// fp4Note is the next lever's sentence on a kernel whose name says FP4
// weights (MXFP4, NVFP4) on devices that all lack FP4 matrix instructions
// (vllm_decode_full_mi300x's gpt-oss MoE GEMM, _matmul_ogs_..._mxfp4, on
// CDNA3, whose matrix table lists no FP4 type): the kernel dequantises the
// weights in its loop, its math at the bf16 rate. "" otherwise, or where a
// device is unknown.
func fp4Note(b *evidence.Bundle, kernel string) string {
	k := strings.ToLower(kernel)
	if !strings.Contains(k, "mxfp4") && !strings.Contains(k, "nvfp4") {
		return ""
	}
	family := ""
	for _, ri := range evidence.Ranks(b.Traces) {
		c := device.Identify(ri.Props())
		if !c.Known || c.FP4 || (family != "" && c.Family != family) {
			return ""
		}
		family = c.Family
	}
	if family == "" {
		return ""
	}
	return " Its name says FP4 weights, for which " + family + " has no matrix instructions: most likely the kernel dequantises them in its loop (read from the name, not measured), so its matrix math runs at a 16-bit rate while its weights move as 4 bits."
}

// aiterNote is the next lever's sentence where aiter's tuned GEMM ran at
// least a tenth of the kernels' summed time through torch (the workload
// area's aiter_torch_gemm: F.linear, hipBLASLt's default heuristic), what
// its gemm_a16w16 does for a shape without a tuned entry: tuning those
// shapes comes before a kernel profile (sglang_qwen3_prefilldecode_mi300x:
// 144 calls, 85% of the kernel time).
func aiterNote(ev *evidence.Evidence, traces []TraceMeta) string {
	var calls, gpu, total int64
	for _, t := range traces {
		for _, r := range t.Ranks {
			w := findings.ReadWorkload(ev, t.Name, r)
			calls += w.AITERTorchGEMMs
			gpu += w.AITERTorchGEMMGPUNs
		}
	}
	if k := ev.Table("kernels"); k != nil {
		for r := range k.Rows {
			total += evidence.Int(k, r, "total_ns")
		}
	}
	if calls == 0 || total <= 0 || 10*gpu < total {
		return ""
	}
	return " Of the kernels' summed time, " + fmtPct(shareOf(gpu, total)) + " (" + fmtMs(gpu) + ") is the GPU work of " + strconv.FormatInt(calls, 10) +
		" GEMMs that aiter's tuned GEMM (gemm_a16w16) ran through torch (its torch_gemm: F.linear, hipBLASLt's default heuristic), which it does for a shape its tuned-config file has no entry for" +
		" (a hypothesis: an entry can also name torch). Before that profile, tune those shapes: a run with AITER_TUNE_GEMM=1 writes them to aiter/configs/bf16_untuned_gemm.csv," +
		" gradlib's gemm_tuner.py tunes them, and AITER_CONFIG_GEMM_BF16 points aiter at the tuned file; aiter looks an entry up by the exact token count M (padded a little), so the run that records them must see the batch sizes the server runs."
}

// decodeGEMMNote is the next lever's sentence on a GEMM kernel of a
// serving engine whose GPU work is mostly graph replays, its decode steps:
// a GEMM of M tokens does about M FLOP per byte of its 16-bit weights, so
// under the device's ridge point (dense BF16 peak over memory bandwidth)
// it is bound by reading the weights, which a kernel profile only
// confirms; fewer weight bytes or more tokens a step move it
// (vllm_h100_tp4_rank0: 63% of the kernel time in graph replays, the
// heaviest GEMM's; the H100's ridge about 295 FLOP/byte). "" where the
// slice is no serving engine's, the kernel no GEMM, the replays under half
// the kernel time, or the ranks' device not one part with known peaks.
func decodeGEMMNote(ev *evidence.Evidence, kernel string) string {
	k := ev.Table("kernels")
	if kernel == "" || k == nil || quantizedKernel(kernel) {
		return ""
	}
	var total int64
	gemm := false
	for r := range k.Rows {
		total += evidence.Int(k, r, "total_ns")
		if evidence.Str(k, r, "name") == kernel && findings.KernelFamily(evidence.Str(k, r, "class"), kernel) == findings.FamilyGEMM {
			gemm = true
		}
	}
	var replayed int64
	if g := ev.Table("graphs"); g != nil {
		for r := range g.Rows {
			if evidence.Int(g, r, "graph") != -2 {
				replayed += evidence.Int(g, r, "gpu_ns")
			}
		}
	}
	if !gemm || total <= 0 || 2*replayed < total {
		return ""
	}
	var caps device.Caps
	for i, ri := range evidence.Ranks(ev.Traces) {
		c := device.Identify(ri.Props())
		if !ri.Serving() || c.PeakTFLOPs <= 0 || c.MemTBs <= 0 || (i > 0 && (c.PeakTFLOPs != caps.PeakTFLOPs || c.MemTBs != caps.MemTBs)) {
			return ""
		}
		caps = c
	}
	if caps.PeakTFLOPs <= 0 {
		return ""
	}
	ridge := caps.PeakTFLOPs / caps.MemTBs
	fewer := "8- or 4-bit weight-only quantization (AWQ, GPTQ)"
	if caps.FP8 {
		fewer = "FP8 weights, which its tensor cores run"
	}
	head := fmt.Sprintf(" Most of the kernel time (%s) is graph replays, a serving engine's decode steps, whose GEMMs take as many rows as the step has tokens: a GEMM of M tokens does about M FLOP per byte of its 16-bit weights", fmtPct(shareOf(replayed, total)))
	roof := fmt.Sprintf("this GPU's ridge point of about %.0f FLOP/byte (%.0f TFLOP/s dense over %.2f TB/s)", ridge, caps.PeakTFLOPs, caps.MemTBs)
	then := " Then fewer weight bytes (" + fewer + ") or more tokens a step (a larger batch) move it, not the kernel's tuning."
	if m := stepTokens(ev); m > 0 && 4*float64(m) < ridge {
		// vllm_h100_tp4_rank0: 1 token a decode step.
		return head + fmt.Sprintf(", and the steps wrote a median of %s to the KV cache (vLLM's reshape_and_cache kernels, one block per token): M about %s, far under %s, so it is bound by reading its weights, which the profile's memory throughput shows.",
			plural(m, "token", "tokens"), table.Int(m), roof) + then
	}
	return head + ", and with M under " + roof + " it is bound by reading its weights (a hypothesis: the trace records no token counts; the profile's memory throughput tells)." + then
}

// stepTokens is the median of the steps' KV-cache writes (the steps
// area's kv_tokens: vLLM's reshape_and_cache grid), 0 where no step has one.
func stepTokens(ev *evidence.Evidence) int64 {
	t := ev.Table("steps")
	if t == nil || t.Col("kv_tokens") < 0 {
		return 0
	}
	var kv []int64
	for _, r := range t.Rows {
		if v, ok := cell(r, t.Col("kv_tokens")).(int64); ok && v > 0 {
			kv = append(kv, v)
		}
	}
	if len(kv) == 0 {
		return 0
	}
	return medianInt(kv)
}

// quantizedKernel says whether a kernel's name says its weights are under
// 16 bits (FP8, FP4, INT8, INT4 and the quantized GEMM kernels' names),
// which decodeGEMMNote's bytes do not describe.
func quantizedKernel(name string) bool {
	n := strings.ToLower(name)
	for _, q := range []string{"fp4", "fp8", "f8", "e4m3", "e5m2", "int8", "int4", "w4a", "w8a", "mxfp", "nvfp", "marlin", "awq", "gptq"} {
		if strings.Contains(n, q) {
			return true
		}
	}
	return false
}

// NearRoof: GEMMs at this share of the roofline or more (a floor,
// findings.GEMMWork.Roofline) leave a kernel-level lever little to give.
// Our choice: tuned vendor GEMMs reach about 60-80% of a dense peak on
// large shapes.
const NearRoof = 0.6

// gemmRoofline sets the slice's bf16 and fp16 GEMMs whose shapes were
// recorded (the workload area's gemm_shapes) against the device's dense
// BF16/FP16 peak and memory bandwidth (analysis/device): their throughput,
// and the floor on how close to the roofline they ran. The shares are said
// only where every rank's device is one part with known peaks; "" under
// leverMinNs of their GPU time.
func gemmRoofline(ev *evidence.Evidence, traces []TraceMeta) string {
	var g findings.GEMMWork
	var peak, mem float64
	part, seen, same := "", false, true
	infos := evidence.Ranks(ev.Traces)
	for _, t := range traces {
		for _, r := range t.Ranks {
			w := findings.ReadWorkload(ev, t.Name, r)
			if w.GEMM.Calls == 0 {
				continue
			}
			g.Add(w.GEMM)
			for _, ri := range infos {
				if ri.Trace != t.Name || ri.Rank != r {
					continue
				}
				c := device.Identify(ri.Props())
				name := c.Model
				if name == "" {
					name = ri.GPUModel
				}
				if !seen {
					part, peak, mem, seen = name, c.PeakTFLOPs, c.MemTBs, true
				} else if name != part || c.PeakTFLOPs != peak || c.MemTBs != mem {
					same = false
				}
			}
		}
	}
	if g.GPUNs < leverMinNs {
		return ""
	}
	var kernelNs int64
	if t := ev.Table("kernels"); t != nil {
		for r := range t.Rows {
			kernelNs += evidence.Int(t, r, "total_ns")
		}
	}
	ns := float64(g.GPUNs)
	s := "GEMMs against the roofline (the bf16 and fp16 aten::mm, addmm, bmm and baddbmm calls whose shapes were recorded: " +
		fmtInt(g.Calls) + " calls, " + fmtMs(g.GPUNs) + " of their GPU work"
	if kernelNs > 0 {
		s += ", " + fmtPct(shareOf(g.GPUNs, kernelNs)) + " of the summed kernel time"
	}
	s += fmt.Sprintf("): %.1f TFLOP at %.1f TFLOP/s", float64(g.FLOPs)/1e12, float64(g.FLOPs)/ns/1e3)
	bound, compute, memory, ok := g.Roofline(peak, mem)
	if !ok || !same {
		return s + fmt.Sprintf(", and at least %.1f GB moved at %.2f TB/s; the device's peaks are not known here, so no share of them is given.", float64(g.Bytes)/1e9, float64(g.Bytes)/ns/1e3)
	}
	if part != "" {
		part = " (" + part + ")"
	}
	s += fmt.Sprintf(", %s of the GPU's dense BF16/FP16 peak of %s TFLOP/s%s, and at least %.1f GB moved at %.2f TB/s, %s of its %g TB/s: so they ran at no less than %s of the roofline their shapes allow (a floor from the sums; a kernel profiler gives each kernel's own).",
		fmtPct(compute), fmtInt(int64(peak)), part, float64(g.Bytes)/1e9, float64(g.Bytes)/ns/1e3, fmtPct(memory), mem, fmtPct(bound))
	if bound >= NearRoof {
		s += " That close to a roof, a kernel-level lever on these GEMMs has little to give: fewer FLOPs or bytes (a precision the GPU runs faster, a smaller model) are the lever."
	} else {
		s += " A lower floor does not show headroom by itself: tuned GEMM libraries stay well under the dense peak on many shapes and parts, and how far a kernel is from its own best a kernel profiler tells."
	}
	return s
}

// kernelProfileCmd is the Nsight Compute command that profiles the kernel
// named name, for traces of the CUDA platform only ("" otherwise, or for
// a name no shell word can carry): a few of its launches, every section,
// found by a regular expression over the demangled name (ncu's
// --kernel-name-base demangled) that holds the part findings.KernelName
// keeps, or the op an at::native kernel runs; the serving engines'
// workload as their one-batch benchmark, a training script otherwise. A
// serving job of world ranks (its distributed info; 0 or 1: one) splits
// the model as the job did: the benchmark runs with that tensor-parallel
// size, as a model sharded over 4 GPUs does not fit in one
// (vllm_h100_tp4_rank0).
func kernelProfileCmd(traces []TraceMeta, name string, world int, shape string) string {
	if kernelProfiler(traces) != "Nsight Compute (ncu)" {
		return ""
	}
	token := findings.KernelName(name)
	if i := strings.Index(token, " ("); i > 0 && strings.HasSuffix(token, ")") {
		token = token[i+2 : len(token)-1] // at::native: the op it runs
	}
	if token == "" || !holdsName(name, token) || strings.ContainsAny(token, "'\n") {
		return ""
	}
	run := "python YOUR_SCRIPT.py"
	for _, t := range traces {
		switch t.Producer {
		case "vllm":
			run = "vllm bench latency --model MODEL" // the engine in one process run, not a server
			if world > 1 {
				run += " --tensor-parallel-size " + strconv.Itoa(world)
			}
			run += shape
		case "sglang":
			run = "python -m sglang.bench_one_batch --model-path MODEL"
			if world > 1 {
				run += " --tp-size " + strconv.Itoa(world)
			}
		}
	}
	var notes []string
	if world > 1 && run != "python YOUR_SCRIPT.py" {
		notes = append(notes, "the tensor-parallel size is the trace's world size: split it as the job did, if part of it was pipeline-parallel")
	}
	if shape != "" && strings.HasSuffix(run, shape) {
		notes = append(notes, "the batch and lengths are the window's one sequence")
	}
	if run != "python YOUR_SCRIPT.py" {
		// The engine's start-up runs the model first (a profiling run at
		// its largest batch, warm-up iterations): the first matching
		// launches are those, not the steps the trace measured.
		notes = append(notes, "the first launches that match are the engine's start-up and warm-up (its profiling run at the largest batch among them): add --launch-skip N to pass over them")
	}
	notes = append(notes, "then: ncu-ui kernel.ncu-rep")
	return "ncu --kernel-name-base demangled --kernel-name 'regex:" + rx.QuoteMeta(token) +
		"' --launch-count 3 --set full -o kernel " + run + "  # " + strings.Join(notes, "; ")
}

// benchShape is the batch vLLM's latency benchmark runs for the
// kernel-profiling command (kernelProfileCmd), where the window is one
// sequence served alone (findEagerStep: a prefill of N tokens, then
// decode steps of 1 token each): the benchmark's default batch of 8 and
// prompt of 32 tokens may choose other GEMM kernels than the named one
// (vllm_h100_tp4_rank0: --batch-size 1 --input-len 1049 --output-len 10).
// "" otherwise.
func benchShape(b *evidence.Bundle, ev *evidence.Evidence) string {
	e, ok := findEagerStep(b, ev)
	if !ok || !e.oneSequence() {
		return ""
	}
	return " --batch-size 1 --input-len " + strconv.FormatInt(e.kv, 10) + " --output-len " + strconv.Itoa(e.later+1)
}

// holdsName says whether the kernel name holds token, the part of it
// that kernelProfileCmd's regular expression looks for in ncu's demangled
// name: as written, or, in a name written mangled (_Z…, where
// findings.KernelName reads the qualified name), each of token's "::"
// parts, which a mangled name writes as they are, each after its length.
func holdsName(name, token string) bool {
	if strings.Contains(name, token) {
		return true
	}
	if !strings.HasPrefix(strings.TrimPrefix(name, "void "), "_Z") {
		return false
	}
	for _, part := range strings.Split(token, "::") {
		if part == "" || !strings.Contains(name, strconv.Itoa(len(part))+part) {
			return false
		}
	}
	return true
}

// commSplit says where a communication kernel's wait for the other ranks
// is told from its transfer: the collectives area, where it matched
// instances across ranks, else the traces of every rank loaded together.
func commSplit(ev *evidence.Evidence, its string) string {
	co := ev.Table("collectives")
	var matched int64
	if co != nil {
		for r := range co.Rows {
			matched += evidence.Int(co, r, "matched")
		}
	}
	if matched > 0 {
		return its + " time includes waiting for the other ranks: the collectives area splits it into wait and transfer."
	}
	return its + " time may include waiting for the other ranks, which no instance in this slice splits from transfer: load the traces of every rank of the job together (the collectives area then matches them)."
}

// leverMinNs is the kernel time under which the next lever names no kernel.
const leverMinNs = 1_000_000

// heaviest returns the name with the most time (ties: the first name in
// order), or "" and 0 for none.
func heaviest(sums map[string]int64) (string, int64) {
	best, bestNs := "", int64(0)
	for n, v := range sums {
		if best == "" || v > bestNs || (v == bestNs && n < best) {
			best, bestNs = n, v
		}
	}
	return best, bestNs
}

// kernelProfiler names the kernel profiler for the traces' platform: a
// CUDA tool is never offered for a ROCm trace, nor the other way round.
func kernelProfiler(traces []TraceMeta) string {
	cuda, rocm, mtia := false, false, false
	for _, t := range traces {
		for _, c := range t.Capture {
			cuda = cuda || c == "platform cuda"
			rocm = rocm || c == "platform rocm"
			mtia = mtia || c == "platform mtia"
		}
	}
	switch {
	case cuda && !rocm && !mtia:
		return "Nsight Compute (ncu)"
	case rocm && !cuda && !mtia:
		return "rocprof-compute (rocprofv3 counters)"
	case mtia && !cuda && !rocm:
		// Neither Nsight nor rocprof runs on an MTIA device.
		return "the MTIA toolchain's kernel profiler"
	default:
		return "the platform's kernel profiler (Nsight Compute on CUDA, rocprof-compute on ROCm)"
	}
}

func shareOf(a, b int64) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// firstSentence returns s up to its first ". " (the numbers and where they
// were measured), or all of s.
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

func capFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// expectedImpact states what each critical issue accounts for, each as a
// share of the time its own finding measured it on (Finding.ImpactOf: a
// rank's GPU span, the other ranks' span, the step time). Issues that are
// shares of the same GPU idle time are that idle counted once; the rest
// overlap in time and are shares of different times, so they are listed,
// never added.
func expectedImpact(crit []evidence.Finding) string {
	var parts []string
	idle := -1
	for i, f := range crit {
		n := "issue " + strconv.Itoa(i+1)
		if findings.SharesIdle(f.Rule) {
			if idle >= 0 {
				parts = append(parts, n+" is part of the same GPU idle time as issue "+strconv.Itoa(idle+1))
				continue
			}
			idle = i
		}
		if t := impactText(f); t != "" {
			if reaches(f) {
				t += ", its fix at most " + table.Pct(f.FixReach) + " (" + f.FixReachOf + ")"
			}
			if f.Beyond != "" {
				t += "; " + f.Beyond
			}
			parts = append(parts, n+" up to "+t)
		} else {
			parts = append(parts, n+": its share of time is not measured")
		}
	}
	if len(crit) == 1 {
		t := impactText(crit[0])
		if t == "" {
			return "The critical issue's share of time is not measured; fixing it should move the constraint to the next lever below."
		}
		if f := crit[0]; reaches(f) {
			return "The critical issue accounts for up to " + t + "; the fix offered reaches at most " + table.Pct(f.FixReach) + " of that same span (" + f.FixReachOf +
				"), so applying it should shorten that time by at most " + table.Pct(f.FixReach) + " of the span; the rest needs a lever of its own."
		}
		if f := crit[0]; f.Beyond != "" {
			return "The critical issue accounts for up to " + t + "; fixing it should shorten that time by at most that share, and " + f.Beyond + "."
		}
		return "The critical issue accounts for up to " + t + "; fixing it should shorten that time by at most that share and move the constraint to the next lever below."
	}
	first := "fixing issue 1 should shorten its time by at most its share"
	if crit[0].Beyond != "" {
		first += " (and the GPU work its fix also removes)"
	}
	return "What each critical issue accounts for: " + strings.Join(parts, "; ") +
		". They overlap in time and are shares of different times, so they do not add up; " + first + " and move the constraint to the next lever below."
}

// impactText is the finding's share with its base (Finding.ImpactText),
// and where the capture gate capped it for the Python tracer's cost
// (findings.TracerInflated), that the share includes that cost (b200_eager:
// 84.6% of its GPU span in host waits, captured with_stack=True).
func impactText(f evidence.Finding) string {
	t := f.ImpactText()
	if t != "" && findings.TracerInflated(f) {
		t += ", measured with Python stacks on, whose tracer inflates the host time it rests on: less without them"
	}
	return t
}

// reaches says whether a finding's fix states that it reaches less of the
// time than the finding accounts for (Finding.FixReach).
func reaches(f evidence.Finding) bool {
	return f.FixReach > 0 && f.FixReach < f.Impact && f.FixReachOf != ""
}

// followUpImpact is Expected Impact without a critical issue: what the
// largest follow-up accounts for, measured, rather than a promise of
// small gains (trace_diff_control_a100: exposed communication 18.9% of
// its GPU span, host waits 14.3%, both below their critical thresholds;
// a finding the capture caps at minor can account for more).
//
// A follow-up whose fix is another capture (findings.NoFix) names no lever:
// its share is what this window shows, not a gain (event_sync_multi_stream:
// 94.6% of a 19.5 ms span of 6 GPU events), so the largest follow-up with
// a fix is named, or none.
func followUpImpact(minor []evidence.Finding) string {
	if len(minor) == 0 {
		return "No critical issue and no follow-up: no rule names a lever in this slice, so no gain is estimated here (the Next lever below says where to look next)."
	}
	best, found := largestFollowUp(minor)
	if !found {
		return "No critical issue, and no lever from this capture: each follow-up's fix is another capture, so their shares describe this window, not what a change would gain."
	}
	if t := impactText(best); t != "" {
		return "No critical issue. The largest follow-up (" + best.Title + ") accounts for up to " + t + "."
	}
	return "No critical issue; the follow-ups' shares of time are not measured."
}

// followUpLever is the Next lever where no issue is critical and the
// largest follow-up with a fix accounts for FollowUpLever of its base or
// more: apply that fix; "" otherwise.
func followUpLever(minor []evidence.Finding) string {
	f, ok := largestFollowUp(minor)
	t := impactText(f)
	if !ok || f.Impact < FollowUpLever || t == "" || f.Verify == "" {
		return ""
	}
	return "No issue is critical; the largest follow-up (" + f.Title + ", up to " + t + ") is the next lever: apply its fix and verify: " + f.Verify + " Then re-run the report on the new trace."
}

// largestFollowUp is the follow-up with a fix (not another capture,
// findings.NoFix) that accounts for the most time; found is false where
// none has one.
func largestFollowUp(minor []evidence.Finding) (best evidence.Finding, found bool) {
	for _, f := range minor {
		if !findings.NoFix(f) && (!found || f.Impact > best.Impact) {
			best, found = f, true
		}
	}
	return best, found
}

// FollowUpLever: without a critical issue, a follow-up with a fix that
// accounts for this share of its base or more is the next lever, ahead of
// profiling a kernel (trace_diff_test_v100: fp32 GEMMs off the tensor
// cores, 26.8% of the span, against an embedding kernel's 6.2% of kernel
// time). Our choice: a tenth, the smallest minor share the rules report
// for most of them.
const FollowUpLever = 0.1

// idleUncausedPrefix begins idleUncaused's line.
const idleUncausedPrefix = "The GPU was idle "

// idleRules are the rules whose findings name a cause of GPU idle time.
var idleRules = map[string]bool{"host_bound_idle": true, "launch_bound": true, "sync_bound_loop": true, "pageable_copies": true,
	"comm_not_overlapped": true, "rank_straggler": true, "dataloader_share": true}

// idleUncaused says, for a slice without a critical issue, where a rank's GPU
// idles for at least th of the span the rules judge (the host-wait rule's own
// threshold, start-up and held idle left out as the rules leave it) while no
// finding names a cause on that rank, so that "no critical issue" does not
// read as a busy GPU. Idle and host wait are the ranks area's (HTA's
// definitions: work whose launching call the trace lacks is never host wait).
func idleUncaused(ev *evidence.Evidence, gate *findings.Gate, found []evidence.Finding, th float64) string {
	t := ev.Table("ranks")
	if t == nil || t.Col("host_wait_ns") < 0 {
		return ""
	}
	explained := func(trace string, rank int) bool {
		for _, f := range found {
			if idleRules[f.Rule] && f.Trace == trace && (f.Rank == rank || f.Rank < 0) {
				return true
			}
		}
		return false
	}
	best, share := -1, 0.0
	for r := range t.Rows {
		tr, rk := evidence.Str(t, r, "trace"), int(evidence.Int(t, r, "rank"))
		ex := gate.ExcludedIdle(tr, rk)
		busy, idle := evidence.Int(t, r, "busy_ns"), evidence.Int(t, r, "idle_ns")-ex
		if sh := shareOf(idle, busy+idle); sh >= th && sh > share && !explained(tr, rk) {
			best, share = r, sh
		}
	}
	if best < 0 {
		return ""
	}
	tr, rk := evidence.Str(t, best, "trace"), int(evidence.Int(t, best, "rank"))
	idle := evidence.Int(t, best, "idle_ns") - gate.ExcludedIdle(tr, rk)
	span := evidence.Int(t, best, "busy_ns") + idle
	hw := min(evidence.Int(t, best, "host_wait_ns"), idle)
	rest := "the rest waited on other streams, on dependencies or on work whose launching call the trace does not show"
	if nl := min(evidence.Int(t, best, "unlaunched_idle_ns"), idle-hw); float64(nl) >= UnlaunchedIdleNoted*float64(idle) {
		// mtia_single_rank: 4,633 ms of its 5,634 ms end at DMA
		// transfers recorded without a launch.
		rest = fmtPct(shareOf(nl, idle)) + " ends at work that has no launching call in the trace (launched before the window, or recorded without its launch, as device-side transfers can be), which the host-wait test cannot classify: an evidence gap, not a cause; the rest waited on other streams or on dependencies"
	}
	return idleUncausedPrefix + fmtMs(idle) + ", " + fmtPct(share) + " of the " + fmtMs(span) + " span the rules judge (rank " + strconv.Itoa(rk) +
		" of " + name(tr) + "), and no rule names the cause: host waits (launch calls that started after the GPU went idle) are " +
		fmtPct(shareOf(hw, idle)) + " of it; " + rest + ". The CPU cross-check and the Idle gaps row split it further." +
		optimizerIdle(ev, tr, rk, idle)
}

// UnlaunchedIdleNoted is the share of a rank's unexplained GPU idle that
// must end at work with no launching call (the ranks area's
// unlaunched_idle_ns) for idleUncaused to name it as a gap in the evidence
// (our choice: a tenth, below which it does not change the reading).
const UnlaunchedIdleNoted = 0.1

// OptimizerIdleShare is the share of a rank's unexplained GPU idle that
// its optimizer steps must hold for idleUncaused to name them (our
// choice: a quarter, the largest block a reader should look at first).
const OptimizerIdleShare = 0.25

// optimizerIdle is idleUncaused's sentence on the GPU idle inside the
// rank's outermost optimizer steps (the workload area's
// optimizer_gpu_idle), where it holds OptimizerIdleShare of idle or more
// (mtia_single_rank: 3,490 ms of its 5,629 ms, inside a 4,363 ms step).
func optimizerIdle(ev *evidence.Evidence, trace string, rank int, idle int64) string {
	w := findings.ReadWorkload(ev, trace, rank)
	if idle <= 0 || w.OptimizerIdleNs <= 0 || float64(w.OptimizerIdleNs) < OptimizerIdleShare*float64(idle) {
		return ""
	}
	in := min(w.OptimizerIdleNs, idle)
	line := " The largest block of it the trace names is the optimizer's step: " + fmtMs(in) + " (" + fmtPct(shareOf(in, idle)) + ") lies inside " + w.OptimizerStep +
		" (" + fmtMs(w.OptimizerSpanNs) + " of it inside the GPU span), where the host updates the parameters while the GPU waits"
	if w.Foreach {
		return line + "; the rank already runs multi-tensor (foreach or fused) operators, so the CPU operator hotspots say what else the step runs."
	}
	return line + ": most likely one parameter at a time (a hypothesis; the CPU operator hotspots say what it runs), which a multi-tensor (foreach) or fused optimizer does in a few launches where the platform has one."
}

// recurringHold is the held artifact that recurs step after step with the
// most GPU idle inside it, if any.
func recurringHold(gate *findings.Gate) (findings.Artifact, bool) {
	var best findings.Artifact
	ok := false
	for _, a := range gate.Artifacts {
		if a.Recurs && (!ok || a.IdleNs > best.IdleNs) {
			best, ok = a, true
		}
	}
	return best, ok
}

// noCriticalLine is the summary's sentence for a report with no critical
// issue. Where the capture gate found the capture inconclusive, the rules'
// findings were capped, not judged minor: the sentence says so rather than
// call the first follow-up the largest minor issue (amd_mi250_minitoy's 16
// GPU events, critical_path_alexnet's 168 ms judged of a 12.9 s span).
//
// A slice without GPU work (a CPU-only capture: torch1.13.1_legacy_smallnet)
// is not one the rules found healthy: they judge the GPU's time, so none
// could apply, and the sentence says so (unless the capture gate found the
// capture inconclusive, which the summary's first line says: a CUPTI
// counter capture's kernels are range records, not GPU operations).
func noCriticalLine(followUps []Issue, inconclusive, noGPU bool) string {
	switch {
	case len(followUps) > 0 && inconclusive:
		return "What the rules flagged is under To consider, each capped to a hypothesis by the capture; the first: " + followUps[0].Title + "."
	case len(followUps) > 0:
		return "No critical bottleneck in this slice; the largest minor issue: " + followUps[0].Title + "."
	case noGPU && !inconclusive:
		return "No rule could judge this slice: it holds no GPU work, and the rules judge the GPU's time (see Evidence Gaps); Next lever reads the CPU operators instead."
	}
	return "No rule flagged this slice: nothing crosses a threshold with the evidence the trace can show."
}

// noGPUWork says whether the overview area counts no GPU operation in the
// slice (false where the area is missing).
func noGPUWork(ev *evidence.Evidence) bool {
	t := ev.Table("overview")
	if t == nil || t.Col("gpu_events") < 0 {
		return false
	}
	for r := range t.Rows {
		if evidence.Int(t, r, "gpu_events") > 0 {
			return false
		}
	}
	return true
}

// coldStep is the sentence that calls a rank's only step cold where the
// capture area's longest profiler-overhead event on the rank is a Lazy
// Function Loading (a kernel's module loaded on its first launch: b200_eager,
// 9 of them inside its one prefill step); "" otherwise.
// oneStepLine is the summary's line on a rank whose capture holds one
// step: what (the verdict, or what the report reads) rests on it, and
// capturing several shows whether it (then) holds. A step that covers
// under half of the rank's wall time leaves most of the window outside
// it (cpu_only: ProfilerStep#551, 210 of 1,290 ms, beside gloo
// all-reduces to the window's end): the line says so, as the rules read
// the whole window. The step's extent is its host time or its GPU busy
// time, the longer: a decode step's GPU work runs after its host range
// (vllm_decode_full_mi300x: 2.4 ms of host, 10.7 ms of GPU work).
func oneStepLine(ev *evidence.Evidence, trace string, rank int, what, then string) string {
	line := "The capture holds one step of rank " + strconv.Itoa(rank) + stepPhase(ev, trace, rank)
	var extent int64
	if t := ev.Table("steps"); t != nil {
		for r := range t.Rows {
			if evidence.Str(t, r, "trace") == trace && int(evidence.Int(t, r, "rank")) == rank && evidence.Int(t, r, "step") >= 0 {
				extent = max(evidence.Int(t, r, "wall_ns"), evidence.Int(t, r, "gpu_busy_ns"))
			}
		}
	}
	if wall := findings.WallNs(ev, trace, rank, 0); wall > 0 && extent > 0 && 2*extent < wall {
		return line + ", which covers " + fmtMs(extent) + " of the rank's " + fmtMs(wall) + " (" + fmtPct(shareOf(extent, wall)) +
			"): most of the window lies outside it, and " + what + " rests on the whole window; capture several steps to see whether it " + then + "." + coldStep(ev, trace, rank)
	}
	return line + ": " + what + " rests on that step alone; capture several to see whether it " + then + "." + coldStep(ev, trace, rank)
}

func coldStep(ev *evidence.Evidence, trace string, rank int) string {
	t := ev.Table("capture")
	if t == nil {
		return ""
	}
	for r := range t.Rows {
		if evidence.Str(t, r, "trace") == trace && int(evidence.Int(t, r, "rank")) == rank &&
			evidence.Str(t, r, "kind") == "profiler_overhead" && strings.HasPrefix(evidence.Str(t, r, "name"), "Lazy Function Loading") {
			return " It is a cold step too: kernels were loaded on their first launch inside it (Lazy Function Loading), so the steps to capture are those after warm-up."
		}
	}
	return ""
}

// moreIssuesLine is the summary's count of the critical issues after the
// first (more, at least 1) and of the follow-ups, which it leaves out when
// there are none (b200_eager: "and 0 follow-up(s)").
func moreIssuesLine(more, followUps int) string {
	if followUps == 0 {
		return strconv.Itoa(more) + " more critical issue(s) below, each with a fix."
	}
	return strconv.Itoa(more) + " more critical issue(s) and " + strconv.Itoa(followUps) + " follow-up(s) below, each with a fix."
}

// joinAnd joins words as prose: "a", "a and b", "a, b and c".
func joinAnd(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// oneRank returns the slice's rank when the ranks area holds exactly one.
func oneRank(ev *evidence.Evidence) (trace string, rank int, ok bool) {
	t := ev.Table("ranks")
	if t == nil {
		return "", 0, false
	}
	seen := map[string]bool{}
	for r := range t.Rows {
		trace, rank = evidence.Str(t, r, "trace"), int(evidence.Int(t, r, "rank"))
		seen[trace+"\x00"+strconv.Itoa(rank)] = true
	}
	return trace, rank, len(seen) == 1
}

// recordsShapes tells whether the workload area saw the rank's operators
// carry their input shapes (its record_shapes feature).
func recordsShapes(b *evidence.Bundle, trace string, rank int) bool {
	t := b.Tables["workload"]
	if t == nil {
		return false
	}
	for r := range t.Rows {
		if evidence.Str(t, r, "feature") == "record_shapes" && evidence.Str(t, r, "trace") == trace && int(evidence.Int(t, r, "rank")) == rank {
			return true
		}
	}
	return false
}
