package report

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/findings"
	"github.com/tracebook/tracebook/analysis/table"
)

// Source is what a report is made from: the evidence bundle and the
// cross-views computed for slices of the same traces (the first for the
// bundle's own filter; more, e.g. one per rank, let the viewer show the
// tree of the rank it filters on). CrossViews may be empty.
//
// GenerateView keeps the rollups it computed in the Source, so that a
// second view with the same filter (another sort, another threshold) skips
// the rollup; a Source is therefore not safe for concurrent use.
type Source struct {
	Bundle     *evidence.Bundle
	CrossViews []*crossview.Result
	// Windows are the Perfetto windows of the findings the report shows
	// for the bundle's filter (PlanWindows); each issue names its own.
	Windows []Window
	// Perfetto holds the saved traces of those windows when the engine
	// made them (pipeline.AddPerfetto). It is not encoded: the single-file
	// report embeds the files beside the source.
	Perfetto []PerfettoFile
	// WindowRows are the rows the engine read for each window's Perfetto
	// file and timeline (sql/perfetto.sql), by window: pipeline.AddTimelines
	// keeps them for pipeline.AddPerfetto, which reads the same windows.
	// Not encoded.
	WindowRows map[WindowKey]*table.Table

	rollups map[evidence.Filter]*evidence.Evidence
}

// maxRollups bounds the rollups a Source keeps.
const maxRollups = 16

// rollup returns the bundle's evidence for f, computed once per filter.
func (src *Source) rollup(b *evidence.Bundle, f evidence.Filter) *evidence.Evidence {
	if ev, ok := src.rollups[f]; ok {
		return ev
	}
	ev := evidence.Rollup(b, f)
	if src.rollups == nil || len(src.rollups) >= maxRollups {
		src.rollups = map[evidence.Filter]*evidence.Evidence{}
	}
	src.rollups[f] = ev
	return ev
}

// Generate writes the report of bundle b, for the filter it was collected
// under and the default thresholds, in format f.
func Generate(w io.Writer, b *evidence.Bundle, f Format) error {
	return GenerateView(w, &Source{Bundle: b}, View{Filter: b.Filter}, f)
}

// GenerateView writes the report of src for view v: the evidence rolled up
// for v's filter, the findings ranked with v's thresholds, the GPU tree of
// the matching cross-view, the tables sorted and capped, the tree folded as
// v says. This is the whole pipeline, top to bottom; the native code and the
// viewer module both run it.
func GenerateView(w io.Writer, src *Source, v View, f Format) error {
	b := src.Bundle
	if b == nil {
		b = evidence.NewBundle()
	}
	ev := src.rollup(b, v.Filter)
	found, gate := findings.Judge(ev, thresholdsFor(b, v))
	cv, exact := pickCrossView(src.CrossViews, v.Filter)
	cv = unread(cv, gate)
	found = capCallStacks(found, cv)
	found = nameHostFrames(found, cv, v.Filter, ev, gate, thresholdsFor(b, v))
	eagerStepReach(found, b, ev)
	d := build(b, ev, found, gate, v)
	callStackSetting(d, cv)
	d.Charts = Charts(ev, b, v.Filter)
	if why, _ := gate.Void(); why != "" && len(d.Charts) > 0 {
		// sampled_2of128's charts drew 180 ms of host-wait idle a step
		// under a summary that calls its gaps no idle time.
		d.ChartsNote = "Read these charts with care: " + why + ". No time in them is the workload's; see Capture quality."
	}
	if len(src.Windows) > 0 {
		crit, minor := shown(found)
		attachWindows(d, b, ev, thresholdsFor(b, v), src.Windows, crit, minor)
		addTimelines(d, gate)
	}
	d.GPUTree = gpuTree(cv)
	if cv != nil && !exact && d.GPUTree != nil {
		d.GPUTree.Where += " (the cross-view was computed for this slice, not for the current filter)"
	}
	label, capped := crossLabel(cv, gate)
	d.CPUCheck = cpuCheck(cv, label, capped)
	if d.GPUTree == nil {
		d.NoTree = "this bundle carries no cross-view"
		if cv != nil && cv.GPU.TotalNs <= 0 {
			d.NoTree = "the slice holds no GPU activity record, no kernel, copy or memset, so there is no GPU time to attribute to the host"
		}
		for _, g := range b.Gaps {
			if g.Kind == "no_crossview" && g.Why != "" {
				// The cross-view failed: say why where the tree and the
				// cross-check would be, not only among the gaps.
				d.NoTree = g.Why
				if cv == nil {
					d.CPUCheck = "No cross-view: " + g.Why + "."
				}
			}
		}
	}
	d.Controls.Rules = knobs(thresholdsFor(b, v))
	if cv != nil {
		if why, _ := gate.Void(); why == "" {
			// A sampled or counter capture's gaps are no idle time.
			d.Perfetto = append(d.Perfetto, gapInspects(cv)...)
		}
		d.Gaps = append(d.Gaps, crossViewGaps(b, cv)...)
		switch {
		case cv.Check.Verdict == "":
		case cv.Check.Rule == crossview.NoSteadyState.Name:
			d.KeyFindings = append(d.KeyFindings, "Cross-view verdict: none: "+gate.NoReading(cv.Slice.Trace, sliceRank(cv))+" (see the CPU cross-check).")
		case cv.Check.Rule == crossview.OneStream.Name:
			d.KeyFindings = append(d.KeyFindings, "Cross-view verdict: none for one GPU stream of several: its idle time is not the device's (see the CPU cross-check).")
		case gate.Inconclusive() != "":
			// Not the workload's constraint: the window shows no steady state.
			d.KeyFindings = append(d.KeyFindings, "Cross-view verdict: none for the workload, the capture being inconclusive (see the Executive Summary); the CPU cross-check above reads this window alone as "+cv.Check.Verdict+".")
		default:
			d.KeyFindings = append(d.KeyFindings, "Cross-view verdict: "+cv.Check.Verdict+" ("+orDash(label)+"); the CPU cross-check above gives the numbers.")
		}
	}
	if len(d.Gaps) > 0 {
		d.Summary = append(d.Summary, strconv.Itoa(len(d.Gaps))+" evidence gap(s) limit what this trace can show; see Evidence Gaps.")
	}
	crit, _ := shown(found)
	reconcile(d, cv, label, capped, crit)
	ddpFix(d, b, cv)
	d.Gaps = append(d.Gaps, selfCheck(d)...)
	applyView(d, v)
	return Print(w, d, f)
}

// capCallStacks caps the host-bound findings at a hypothesis where the
// cross-view found python stacks recorded as the operators' "Call stack"
// args (a 2021-format capture with with_stack=True): the stack capture
// inflated host time as the python_function events do, which the findings'
// capture gate caps but does not see here (the traces table knows only
// python_function events).
func capCallStacks(found []evidence.Finding, cv *crossview.Result) []evidence.Finding {
	if cv == nil || cv.Check.Metrics.CallStackOps == 0 || cv.Check.Metrics.PythonFrames > 0 {
		return found
	}
	why := fmt.Sprintf("Python stacks were captured as the Call stack args of %d operators (with_stack=True): stack capture %s.", cv.Check.Metrics.CallStackOps, findings.StackCapLimit)
	for i := range found {
		f := &found[i]
		if (f.Rule == "host_bound_idle" || f.Rule == "launch_bound") && f.Status == "confirmed" {
			f.Status = "hypothesis"
			f.Caveat = strings.TrimSpace(f.Caveat + " " + why)
		}
	}
	return found
}

// callStackSetting lists python stacks among the capture settings of a
// one-trace slice whose operators carry "Call stack" args (capCallStacks:
// the 2021-format capture of with_stack=True, which the traces table does
// not see; resnet50_num_workers_0: 14,994 operators), as the cross-check
// that caps its verdict on them says.
func callStackSetting(d *Doc, cv *crossview.Result) {
	if cv == nil || cv.Check.Metrics.CallStackOps == 0 || len(d.Traces) != 1 {
		return
	}
	m := &d.Traces[0]
	if slices.Contains(m.Capture, stacksSetting) {
		return
	}
	m.Capture = append(m.Capture, fmt.Sprintf("%s, as the Call stack args of %s operators", stacksSetting, fmtInt(cv.Check.Metrics.CallStackOps)))
}

// unread gives cv no host/device reading where the capture gate finds its
// window no run of the workload (findings.Gate.NoReading: a graph capture,
// a counter capture); cv itself is left as it is.
func unread(cv *crossview.Result, gate *findings.Gate) *crossview.Result {
	if cv == nil {
		return nil
	}
	why := gate.NoReading(cv.Slice.Trace, sliceRank(cv))
	if why == "" {
		return cv
	}
	c := *cv
	c.Check = cv.Check.Unread(why)
	return &c
}

// sliceRank is the rank of cv's slice, -1 for every rank.
func sliceRank(cv *crossview.Result) int {
	if cv.Slice.HasRank {
		return cv.Slice.Rank
	}
	return -1
}

// pickCrossView returns the cross-view whose slice has the filter's rank
// and phase (exact), else the first one.
func pickCrossView(cvs []*crossview.Result, f evidence.Filter) (*crossview.Result, bool) {
	for _, cv := range cvs {
		s := cv.Slice
		if s.HasRank == f.HasRank && (!f.HasRank || s.Rank == f.Rank) && s.Phase == f.Phase {
			return cv, true
		}
	}
	if len(cvs) > 0 {
		return cvs[0], false
	}
	return nil, false
}

// EncodeSource encodes src for the viewer: a msgpack array of the bundle's
// own encoding (evidence.Encode) and the cross-views, and the Perfetto
// windows when there are any. A bare bundle encoding is also a valid source
// (DecodeSource reads all three forms).
func EncodeSource(src *Source) ([]byte, error) {
	bb, err := evidence.Encode(src.Bundle)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	enc.UseCompactInts(true)
	cvs := src.CrossViews
	if cvs == nil {
		cvs = []*crossview.Result{}
	}
	parts := []any{bb, cvs}
	if len(src.Windows) > 0 {
		parts = append(parts, src.Windows)
	}
	if err := enc.Encode(parts); err != nil {
		return nil, fmt.Errorf("report: encoding the source: %w", err)
	}
	return buf.Bytes(), nil
}

// DecodeSource reads what EncodeSource wrote, or a bare bundle encoding.
// Bytes that are neither give an error, never a panic: a source comes from
// a report's page or a notebook's output, and the msgpack library panics on
// some malformed input (FuzzDecodeSource).
func DecodeSource(data []byte) (src *Source, err error) {
	defer func() {
		if p := recover(); p != nil {
			src, err = nil, fmt.Errorf("report: decoding the source: malformed input (%v)", p)
		}
	}()
	// The library sizes what it allocates by the lengths it reads: only
	// lengths the bytes back reach it.
	if err := evidence.CheckMsgpack(data); err != nil {
		return nil, fmt.Errorf("report: decoding the source: %w", err)
	}
	if src, ok, err := decodeEnvelope(data); ok {
		return src, err
	}
	if len(data) > 0 && data[0] == 0x92 { // fixarray of 2: the envelope
		var parts struct {
			_msgpack   struct{} `msgpack:",as_array"`
			Bundle     []byte
			CrossViews []*crossview.Result
		}
		if err := msgpack.Unmarshal(data, &parts); err != nil {
			return nil, fmt.Errorf("report: decoding the source: %w", err)
		}
		b, err := evidence.Decode(parts.Bundle)
		if err != nil {
			return nil, err
		}
		return &Source{Bundle: b, CrossViews: parts.CrossViews}, nil
	}
	if len(data) > 0 && data[0] == 0x93 { // fixarray of 3: with the Perfetto windows
		var parts struct {
			_msgpack   struct{} `msgpack:",as_array"`
			Bundle     []byte
			CrossViews []*crossview.Result
			Windows    []Window
		}
		if err := msgpack.Unmarshal(data, &parts); err != nil {
			return nil, fmt.Errorf("report: decoding the source: %w", err)
		}
		b, err := evidence.Decode(parts.Bundle)
		if err != nil {
			return nil, err
		}
		return &Source{Bundle: b, CrossViews: parts.CrossViews, Windows: parts.Windows}, nil
	}
	b, err := evidence.Decode(data)
	if err != nil {
		return nil, err
	}
	return &Source{Bundle: b}, nil
}

// RenderBundle decodes an encoded source (EncodeSource, or a bare bundle)
// and writes its report for view v in format f.
func RenderBundle(w io.Writer, data []byte, v View, f Format) error {
	src, err := DecodeSource(data)
	if err != nil {
		return err
	}
	return GenerateView(w, src, v, f)
}

// findingsFor runs the rules on the rolled-up evidence with the bundle's
// thresholds overridden by the view's.
func findingsFor(b *evidence.Bundle, ev *evidence.Evidence, v View) []evidence.Finding {
	return findings.Evaluate(ev, thresholdsFor(b, v))
}

// thresholdsFor merges the defaults, the bundle's thresholds and the view's.
func thresholdsFor(b *evidence.Bundle, v View) evidence.Thresholds {
	th := findings.Defaults()
	for k, x := range b.Thresholds {
		th[k] = x
	}
	for k, x := range v.Thresholds {
		th[k] = x
	}
	return th
}

// knobs lists every threshold for the viewer's controls, with the value in
// force and the default.
func knobs(th evidence.Thresholds) []Knob {
	out := make([]Knob, 0, len(findings.Catalogue))
	for _, t := range findings.Catalogue {
		out = append(out, Knob{Rule: t.Name, Name: t.Name, Value: th[t.Name], Default: t.Default, Doc: t.Doc})
	}
	return out
}

// restatedGaps are the cross-view's gaps that restate a kind of the
// bundle's gaps: a slice that replays graphs has the bundle's
// GapGraphsHideKernel, one captured without python stacks its
// GapNoPythonStacks (which says how to collect them).
var restatedGaps = map[string]evidence.GapKind{
	crossview.GraphAttributionGap: evidence.GapGraphsHideKernel,
	crossview.NoPythonStacksGap:   evidence.GapNoPythonStacks,
}

// crossViewGaps are the cross-view's gaps that the bundle's do not state
// already (restatedGaps).
func crossViewGaps(b *evidence.Bundle, cv *crossview.Result) []string {
	kinds := map[evidence.GapKind]bool{}
	for _, g := range b.Gaps {
		kinds[g.Kind] = true
	}
	var out []string
	for _, g := range cv.Gaps {
		if k, ok := restatedGaps[g]; !ok || !kinds[k] {
			out = append(out, g)
		}
	}
	return out
}
