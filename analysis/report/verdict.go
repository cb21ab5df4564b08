package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/findings"
	"github.com/tracebook/tracebook/analysis/internal/rx"
)

// One report, one verdict: the cross-check's label is capped by the same
// capture gate as the findings, the Executive Summary takes the lower of the
// top issue's and the cross-check's confidence when both name the same
// constraint and says so when they name different ones, and a self-check
// lists any share above 100% or a summary that disagrees with its issues.

// ruleVerdict is the cross-check verdict that names the same constraint as
// a finding rule (its row's Constraint in findings.Rules); "" when none does.
func ruleVerdict(rule string) string {
	if r := findings.RuleOf(rule); r != nil {
		return r.Constraint
	}
	return ""
}

// sharesVerdict: the finding of rule reads the slice as verdict does: its
// constraint, or the verdict the catalogue says it shares.
func sharesVerdict(rule, verdict string) bool {
	r := findings.RuleOf(rule)
	return r != nil && verdict != "" && (r.Constraint == verdict || r.Shares == verdict)
}

// verdictRule is the finding rule the capture gate consults for a
// cross-check verdict.
var verdictRule = map[string]string{
	crossview.VerdictHost:    "host_bound_idle",
	crossview.VerdictWaiting: "host_bound_idle",
	crossview.VerdictSync:    "sync_bound_loop",
	crossview.VerdictComm:    "comm_not_overlapped",
}

// crossLabel returns the cross-check's confidence after the capture gate,
// and why the gate lowered it ("" when it did not). An inconclusive
// capture caps every verdict, a hypothesis too (it is then said why); a
// rule the capture limits caps a confirmed one.
func crossLabel(cv *crossview.Result, gate *findings.Gate) (label, capped string) {
	if cv == nil || cv.Check.Unreadable() {
		return "", "" // no reading: nothing to cap
	}
	label = cv.Check.Label
	why := gate.Inconclusive()
	if why == "" && label == crossview.Confirmed {
		rank := -1
		if cv.Slice.HasRank {
			rank = cv.Slice.Rank
		}
		if rule := verdictRule[cv.Check.Verdict]; rule != "" {
			why = gate.Limited(cv.Slice.Trace, rank, rule)
		}
	}
	if why == "" {
		return label, ""
	}
	if label == crossview.Confirmed {
		label = crossview.Hypothesis
	}
	return label, why
}

// lateRanks says whether critical issue i is communication that the
// collectives' matching shows waiting for late ranks (Finding.Wait), beside
// a host-bound cross-check: ranks whose hosts launch late arrive late, so
// the host-bound reading explains that wait rather than outweighing it, and
// the matching across ranks, which one rank's cross-check cannot see,
// stays its mechanism (dlrm_8rank: rank 1's all_to_all, 98.1% waiting for
// ranks that began the step later, while the ranks' GPUs wait on their
// hosts).
func lateRanks(is *Issue, crit []evidence.Finding, i int, want, verdict string) bool {
	return want == crossview.VerdictComm && verdict == crossview.VerdictHost &&
		i < len(crit) && crit[i].Title == is.Title && crit[i].Wait != ""
}

// reconcile makes the issues and the Executive Summary agree with the
// cross-check of the same slice: a confirmed issue whose constraint the
// cross-check rates a hypothesis, cannot attribute (inconclusive) or sees
// as another constraint is shown as a hypothesis, with why; a cross-check
// verdict that the top issue does not share is named in the summary, with
// the lower critical issue that shares it. With no critical issue the
// cross-check's reading is named as it stands, unless the capture gate
// lowered it (capped, crossLabel's why: the summary says the capture is
// inconclusive).
func reconcile(d *Doc, cv *crossview.Result, label, capped string, crit []evidence.Finding) {
	if cv == nil || cv.Check.Verdict == "" || cv.Check.Metrics.GPUTimeNs == 0 {
		return
	}
	if cv.Check.Rule == crossview.OneStream.Name {
		return // a reading of one stream says nothing of the rank's findings, which count every stream
	}
	verdict := cv.Check.Verdict + " (" + orDash(label) + ")"
	for i := range d.Critical {
		is := &d.Critical[i]
		want := ruleVerdict(is.ID)
		if !is.Confirmed || want == "" {
			continue
		}
		why := ""
		switch {
		case cv.Check.Verdict == crossview.VerdictInconclusive:
			why = "the CPU cross-check cannot attribute this slice's idle time to one cause (inconclusive)"
		case cv.Check.Verdict != want && cv.Check.Verdict != crossview.VerdictWaiting && label == crossview.Confirmed && !lateRanks(is, crit, i, want, cv.Check.Verdict):
			// Only a confirmed other constraint outweighs the issue's own
			// mechanism; a hypothesis is named in the summary instead.
			why = "the CPU cross-check names another constraint for this slice: " + verdict
		case label != crossview.Confirmed && want != crossview.VerdictComm &&
			(cv.Check.Verdict == want || cv.Check.Verdict == crossview.VerdictWaiting):
			// The cross-check never confirms communication (one rank cannot
			// see a peer's arrival); the collectives' matching is the
			// mechanism there.
			why = "the CPU cross-check rates this constraint a hypothesis"
		}
		if why == "" {
			continue
		}
		is.Confirmed = false
		is.Observation += " Confidence capped: " + why + "."
		demote(d, is.Title)
		if i == 0 {
			for k, s := range d.Summary {
				if strings.HasPrefix(s, bottleneckPrefix) {
					d.Summary[k] = strings.Replace(s, " (confirmed).", " (hypothesis: "+why+").", 1)
				}
			}
		}
	}
	if s := cv.Check.Metrics.SerialLaunch(); s != "" && len(crit) == 0 {
		// mtia_single_rank: no rule names the cause of its idle, and the
		// runtime's launch call holds the host until its work has run.
		// Said next to the summary's line on that idle, when it has one.
		if at := slices.IndexFunc(d.Summary, func(l string) bool { return strings.HasPrefix(l, idleUncausedPrefix) }); at >= 0 {
			d.Summary = slices.Insert(d.Summary, at+1, "The CPU cross-check reads that idle further: "+s+".")
		} else {
			d.Summary = append(d.Summary, "The CPU cross-check reads the GPU idle: "+s+".")
		}
		d.NextLever += serialHostLever(d.NextLever, cv.Check.Metrics)
	}
	if cv.Check.Verdict == crossview.VerdictInconclusive {
		return
	}
	if cv.Check.Verdict == crossview.VerdictHost && d.Impact != "" {
		for i, f := range crit {
			if r := findings.RuleOf(f.Rule); r == nil || r.Constraint != crossview.VerdictGPU {
				continue
			}
			// A kernel-side fix beside a host-bound reading: the step
			// shortens only until the host is the limit (resnet50_num_workers_4:
			// fp32 kernels 49.5% of the span, but the host issues the forward
			// in about 50 ms a step against 37 ms of its GPU work; _0's
			// is issue 2, after the DataLoader issue that shares the reading).
			which := "The critical issue's fix"
			if len(crit) > 1 {
				which = "Issue " + strconv.Itoa(i+1) + "'s fix"
			}
			d.Impact += " " + which + " makes kernels faster, but the CPU cross-check reads this slice as host/launch-bound (" + label +
				"): where the host launches no faster than the GPU runs, faster kernels shorten the step only until the host's own time is the limit, so the gain can be well below its share."
			break
		}
	}
	if len(crit) > 0 && sharesVerdict(crit[0].Rule, cv.Check.Verdict) {
		return
	}
	// The cross-check differs from the top issue: say so, naming a lower
	// critical issue that shares its reading, and beside a comm-bound
	// reading how much of that issue's communication is waiting for late
	// ranks (rank skew, not transfer).
	also, skew := "", ""
	for i, f := range crit {
		if i > 0 && sharesVerdict(f.Rule, cv.Check.Verdict) {
			also = ", the constraint of issue " + strconv.Itoa(i+1)
			if w := f.Wait; w != "" {
				skew = " Issue " + strconv.Itoa(i+1) + " qualifies that reading: " + w + ": a skew between the ranks, which overlap settings cannot hide."
			}
			break
		}
	}
	if also == "" {
		// A follow-up may share the reading: the rules saw the same
		// constraint, under its critical threshold (resnet50_num_workers_4:
		// host/launch-bound beside fp32 GEMMs on the SIMT path, whose
		// share of the span is larger).
		for i, f := range d.FollowUps {
			if sharesVerdict(f.ID, cv.Check.Verdict) {
				also = ", the constraint of follow-up " + strconv.Itoa(i+1) + " (" + f.Title + "), which the rules rate below their critical threshold in this slice"
				break
			}
		}
	}
	if label != crossview.Confirmed {
		switch {
		case len(crit) > 0:
			d.Summary = append(d.Summary, "The CPU cross-check reads this slice differently, as a hypothesis: "+verdict+also+"; see the cross-check for its numbers."+skew)
		case capped == "" && label == crossview.Hypothesis:
			// No rule flagged the slice, and the cross-check's reading is
			// the one the report has: said as the hypothesis it is, not
			// left to the cross-check alone (sglang_qwen3_prefilldecode_mi300x:
			// gpu-bound, the GPU busy 99.7% of the span it judges).
			d.Summary = append(d.Summary, "The CPU cross-check reads this slice as "+verdict+busyShare(cv)+", and no rule's finding crosses its critical threshold; the follow-ups and the cross-check give the numbers.")
		}
		return
	}
	if also != "" {
		d.Summary = append(d.Summary, "The CPU cross-check names another constraint for this slice: "+verdict+also+"; see the cross-check for its numbers."+skew)
		return
	}
	if len(crit) == 0 {
		d.Summary = append(d.Summary, "The CPU cross-check reads this slice as "+verdict+busyShare(cv)+", but no rule's finding crosses its critical threshold; the follow-ups and the cross-check give the numbers.")
		return
	}
	if cv.Check.Verdict == crossview.VerdictSync && ruleVerdict(crit[0].Rule) == crossview.VerdictHost {
		// A sync-opened gap lasts until the host launches again: the host
		// time issue 1 measures, seen from where the gap begins.
		d.Summary = append(d.Summary, "The CPU cross-check reads this slice as "+verdict+": the GPU's idle gaps open inside sync calls and last until the host launches again, the host time that issue 1 measures; removing the syncs alone leaves that time; see the cross-check for its numbers.")
		return
	}
	d.Summary = append(d.Summary, "The CPU cross-check names another constraint for this slice: "+verdict+"; see the cross-check for its numbers.")
}

// SerialHostShare is the share of the GPU span that the GPU idle outside
// every launch call (crossview.Metrics.IdleNoLaunchNs) must reach, where
// launches are serialised, for the next lever to name the host side beside
// a kernel (our choice: a tenth of the span, a lever of its own).
const SerialHostShare = 0.10

// serialHostLever is the host side of a kernel lever (gpuSideLever) where
// the launch calls return only once their kernel has run
// (crossview.Metrics.SerialLaunch): the device idles while the host works
// between the calls, and that idle is a lever beside the kernel's
// (mtia_single_rank: 4,578 ms, 34.3% of the span, beside an fc kernel of
// 5,752 ms). "" where the lever is another, or that idle is under
// SerialHostShare of the span.
func serialHostLever(lever string, m crossview.Metrics) string {
	span := m.SpanNs()
	if !strings.HasPrefix(lever, gpuSideLever) || span <= 0 || float64(m.IdleNoLaunchNs) < SerialHostShare*float64(span) {
		return ""
	}
	return " The host side: as the launch calls return only once their kernel has run (a hypothesis, see the Executive Summary), the device idled " +
		fmtMs(m.IdleNoLaunchNs) + " while no launch call was open, " + fmtPct(float64(m.IdleNoLaunchNs)/float64(span)) + " of the " + fmtMs(span) +
		" GPU span: the host's own work between launches, a lever beside the kernel's. Fewer launches (larger or fused operators) or less host work between them shorten it; the CPU operator hotspots say where that host time goes."
}

// busyShare is what a gpu-bound reading rests on, for the summary: ": the
// GPU was busy 99.7% of the 494.050 ms GPU span the cross-check judges",
// and where the reading is confirmed, how the host was ahead of the GPU;
// "" for the other verdicts, whose numbers the cross-check gives.
func busyShare(cv *crossview.Result) string {
	if cv.Check.Verdict != crossview.VerdictGPU {
		return ""
	}
	m := cv.Check.Metrics
	s := ": the GPU was busy " + share(m.BusyNs, m.SpanNs(), "GPU span the cross-check judges")
	if m.Comm() >= ExposedCommInBusy {
		// trace_diff_control_a100: 87.9 ms of NCCL kernels ran alone, 18.9%
		// of its span, and one rank of eight is loaded.
		s += " (" + fmtMs(m.CommExposedNs) + " of it communication kernels running alone, which may be waiting for other ranks rather than moving data)"
	}
	queued := ", with work the host had launched waiting behind it for " + fmtPct(m.Queued()) + " of that span (the host ahead of it)"
	if cv.Check.Rule == "host-ahead" {
		// Busy under the saturated mark: the queue behind it is what
		// makes the GPU the constraint, and the idle is the rest.
		return s + queued + " and idle " + fmtPct(m.Idle()) + " of it"
	}
	if cv.Check.Label != crossview.Confirmed {
		return s
	}
	if m.Queued() >= crossview.QueuedAhead {
		return s + queued
	}
	return s + ", with its launching threads blocked on it for " + fmtPct(m.Blocked()) + " of that span (the host ahead of it)"
}

// ExposedCommInBusy is the share of the GPU span that communication
// running alone must reach for busyShare to say that a gpu-bound reading's
// busy time holds it (our choice: a tenth, where the wait it may hide
// could move the reading).
const ExposedCommInBusy = 0.10

// demote moves the claim titled title from Confirmed evidence to the
// Hypotheses, and says hypothesis where the Evidence table's
// interpretations name it.
func demote(d *Doc, title string) {
	for i := range d.Evidence {
		for _, sev := range []string{"critical", "minor"} {
			d.Evidence[i].Interpretation = strings.ReplaceAll(d.Evidence[i].Interpretation,
				title+" ("+sev+", confirmed)", title+" ("+sev+", hypothesis)")
		}
	}
	kept := d.Confirmed[:0]
	for _, c := range d.Confirmed {
		if c == title || strings.HasPrefix(c, title+": ") {
			d.Hypotheses = append(d.Hypotheses, c)
			continue
		}
		kept = append(kept, c)
	}
	d.Confirmed = kept
}

// bottleneckPrefix opens the summary sentence that names the top issue.
const bottleneckPrefix = "Most likely bottleneck: "

var shareRE = rx.MustCompile(`\d+(?:\.\d+)?%`)

// selfCheck lists what the report would print wrongly: a share above 100%,
// or a summary whose confidence is not its top issue's.
func selfCheck(d *Doc) []string {
	var out []string
	texts := append([]string{d.CPUCheck, d.Impact}, d.Summary...)
	texts = append(texts, d.KeyFindings...)
	for _, is := range append(append([]Issue{}, d.Critical...), d.FollowUps...) {
		texts = append(texts, is.Observation)
	}
	for _, t := range texts {
		for _, m := range shareRE.FindAllString(t, -1) {
			if v, err := strconv.ParseFloat(strings.TrimSuffix(m, "%"), 64); err == nil && v > 100.05 {
				out = append(out, "report self-check: a share above 100% ("+m+") was printed in: "+firstSentence(t))
			}
		}
	}
	for _, s := range d.Summary {
		// The bottleneck's line opens the summary unless a recurring
		// stall larger than what the rules judge comes first.
		if len(d.Critical) > 0 && strings.HasPrefix(s, bottleneckPrefix) && strings.Contains(s, "(confirmed)") && !d.Critical[0].Confirmed {
			out = append(out, "report self-check: the summary calls the top issue confirmed, but the issue is a hypothesis")
		}
	}
	return out
}

// ddpFix adds to the host-side issues' fixes what DDP's own host work
// shows, where the operators show DDP (the workload area's ddp feature):
//   - the buffer broadcast, where the cross-check's longest GPU gaps open
//     in it: with broadcast_buffers=True (DDP's default) every forward
//     flattens the module's buffers, broadcasts them from rank 0 and
//     unflattens them (nccl_data_a100: the six longest gaps, 70 ms of
//     503 ms idle, open in aten::unflatten_dense_tensors under
//     DistributedDataParallel.forward), which torch.compile does not
//     remove;
//   - the copies of each gradient out of its bucket after the bucket's
//     all-reduce (torch.distributed.ddp.reducer::copy_bucket_to_grad, a
//     copy launched per gradient: nccl_data_a100, 483 calls), which
//     gradient_as_bucket_view=True removes, the gradients then being
//     views of the buckets.
//
// The snippet is one DDP line with the arguments that apply.
func ddpFix(d *Doc, b *evidence.Bundle, cv *crossview.Result) {
	if !hasFeature(b, "ddp") {
		return
	}
	var n int
	var ns int64
	if cv != nil {
		for _, g := range cv.Check.TopGaps {
			for _, f := range g.Host {
				if strings.Contains(f, "flatten_dense_tensors") {
					n++
					ns += g.DurNs
					break
				}
			}
		}
	}
	var copies, copyNs int64
	if o := b.Table("ops"); o != nil {
		for r := range o.Rows {
			if evidence.Str(o, r, "name") == "torch.distributed.ddp.reducer::copy_bucket_to_grad" {
				copies += evidence.Int(o, r, "count")
				copyNs += evidence.Int(o, r, "incl_ns")
			}
		}
	}
	if n == 0 && copies == 0 {
		return
	}
	var args []string
	if n > 0 {
		args = append(args, "broadcast_buffers=False")
	}
	if copies > 0 {
		args = append(args, "gradient_as_bucket_view=True")
	}
	snippet := "model = DDP(model, device_ids=[rank], " + strings.Join(args, ", ") + ")"
	for i := range d.Critical {
		is := &d.Critical[i]
		if is.ID != "host_bound_idle" && is.ID != "launch_bound" {
			continue
		}
		if n > 0 {
			is.Fix += fmt.Sprintf(" %d of the cross-check's %d longest GPU gaps (%s) open while DDP broadcasts the module's buffers in the forward (aten::unflatten_dense_tensors): with broadcast_buffers=True, DDP's default, every forward copies rank 0's buffers (BatchNorm running statistics) to every rank, which torch.compile does not remove; pass broadcast_buffers=False where the ranks' buffers need not match each step.",
				n, len(cv.Check.TopGaps), fmtMs(ns))
			if slowViews(b) {
				// nccl_data_a100: the broadcast's gaps are its many small
				// operators, each inflated as every operator of that host is.
				is.Fix += " Its gaps are made of small operators, each as slow as every operator on this host (see the slow host above): the broadcast may cost far less once the host is checked."
			}
		}
		if copies > 0 {
			is.Fix += fmt.Sprintf(" DDP also copies each gradient out of its bucket after the bucket's all-reduce (%s torch.distributed.ddp.reducer::copy_bucket_to_grad calls, %s of host time in the slice, each launching a copy): gradient_as_bucket_view=True makes the gradients views of the buckets and removes those copies (code that replaces or detaches .grad in place must not then).",
				fmtInt(copies), fmtMs(copyNs))
		}
		switch {
		case is.Snippet == "":
			is.Snippet = snippet
		case strings.Count(is.Snippet, "\n") < 2:
			is.Snippet += "\n" + snippet
		}
	}
}

// slowViews reports whether the workload area shows a rank whose view
// operators are slow (findings.Workload.SlowViews).
func slowViews(b *evidence.Bundle) bool {
	t := b.Table("workload")
	if t == nil {
		return false
	}
	for r := range t.Rows {
		if evidence.Str(t, r, "feature") != "view_ops" {
			continue
		}
		if _, ok := (findings.Workload{ViewOps: evidence.Int(t, r, "count"), ViewOpsNs: evidence.Int(t, r, "total_ns")}).SlowViews(); ok {
			return true
		}
	}
	return false
}

// hasFeature reports whether the workload area shows feature on some rank.
func hasFeature(b *evidence.Bundle, feature string) bool {
	t := b.Table("workload")
	if t == nil {
		return false
	}
	for r := range t.Rows {
		if evidence.Str(t, r, "feature") == feature {
			return true
		}
	}
	return false
}

// JudgedCheck returns cv with the cross-check the report shows for it
// under gate, the capture gate of cv's slice: no host/device reading
// where the gate finds the window no run of the workload (a graph
// capture, a counter capture), the label capped where the capture caps
// the confidence (crossLabel; why, as a note), and a note naming the
// capture artifacts of the slice, which the rules (and the cross-check,
// given Input.LeftOut) leave out. `tracebook crossview` and %crossview
// show it, so that they read as the report's CPU cross-check of the same
// slice; cv itself is left as it is.
func JudgedCheck(cv *crossview.Result, gate *findings.Gate) *crossview.Result {
	if cv == nil || gate == nil {
		return cv
	}
	c := *unread(cv, gate)
	c.Check.Notes = slices.Clip(c.Check.Notes)
	c.Check.AlsoHolds = slices.Clip(c.Check.AlsoHolds)
	label, capped := crossLabel(&c, gate)
	if capped != "" {
		c.Check.Label = label
		c.Check.Notes = append(c.Check.Notes, "Confidence capped by the capture: "+capped)
	}
	var arts []string
	for _, a := range gate.Artifacts {
		if (c.Slice.Trace == "" || a.Trace == c.Slice.Trace) && !slices.Contains(arts, a.Title) {
			arts = append(arts, a.Title)
		}
	}
	if len(arts) > 0 {
		c.Check.Notes = append(c.Check.Notes, "Capture quality (what the rules leave out of the slice they judge or judge with care; the report details each): "+strings.Join(arts, "; "))
	}
	return &c
}
