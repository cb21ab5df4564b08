package report

import (
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/chart"
	"github.com/tracebook/tracebook/analysis/findings"
)

// Timeline is the picture of a finding's Perfetto window that the report
// draws beside the saved file: the busy intervals of the rank's host
// threads and GPU streams, merged where they would be narrower than a
// pixel of the chart, and the finding's flagged intervals (the same ones
// the saved file's "tracebook findings" track holds). analysis/perfetto
// builds it from the rows of sql/perfetto.sql (perfetto.Timeline); it
// travels in the Window, so the viewer draws it for any filter.
type Timeline struct {
	// Lanes: the host threads first, then the GPU streams, at most
	// MaxHostLanes and MaxGPULanes of them (the busiest).
	Lanes []TimelineLane `msgpack:"lanes" json:"lanes"`
	// Marks are the finding's flagged intervals, merged; MarkWhat says
	// what they are.
	Marks    []Span `msgpack:"marks" json:"marks"`
	MarkWhat string `msgpack:"mark_what" json:"mark_what"`
	// MarksNs is the exact length of the union of the flagged intervals
	// in the window (Marks are merged to the drawing's resolution, which
	// widens them); 0 in an older source, where Marks' sum stands in.
	MarksNs int64 `msgpack:"marks_ns,omitempty" json:"marks_ns,omitempty"`
	// HostLanes and GPULanes count the window's lanes before the cap.
	HostLanes int `msgpack:"host_lanes" json:"host_lanes"`
	GPULanes  int `msgpack:"gpu_lanes" json:"gpu_lanes"`
	// Events is the number of events drawn (before merging), InWindow the
	// events of the window (the rows' cap and python frames left out).
	Events   int `msgpack:"events" json:"events"`
	InWindow int `msgpack:"in_window" json:"in_window"`
}

// TimelineLane is one host thread or GPU stream.
type TimelineLane struct {
	Name string `msgpack:"name" json:"name"`
	GPU  bool   `msgpack:"gpu" json:"gpu"`
	// BusyNs is the union of the lane's events in the window.
	BusyNs int64  `msgpack:"busy_ns" json:"busy_ns"`
	Spans  []Span `msgpack:"spans" json:"spans"`
}

// Span is a busy interval: its start from the window's start and its
// length in ns, and what ran (a SpanKind). It encodes as a 3-element
// array, which keeps a timeline of a few hundred spans small.
type Span struct {
	_msgpack struct{} `msgpack:",as_array"`
	StartNs  int64    `json:"start_ns"`
	DurNs    int64    `json:"dur_ns"`
	Kind     SpanKind `json:"kind"`
}

// SpanKind says what ran in a span.
type SpanKind int8

// The span kinds, in the order of timelineKinds.
const (
	SpanCompute SpanKind = iota // compute kernels
	SpanComm                    // communication kernels
	SpanMem                     // GPU copies and memsets
	SpanHostOp                  // CPU operators, annotations, python frames
	SpanLaunch                  // runtime and driver calls (launches)
	SpanSync                    // host sync calls (the host blocked)
	SpanMark                    // the finding's flagged intervals
)

// MaxHostLanes and MaxGPULanes cap the timeline's lanes; MaxSpans caps a
// lane's spans (merging more of the short gaps until it fits).
const (
	MaxHostLanes = 3
	MaxGPULanes  = 4
	MaxSpans     = 160
)

// timelineKinds colour the span kinds.
var timelineKinds = []chart.Series{
	{Name: "compute kernel", Color: chart.Blue},
	{Name: "communication kernel", Color: chart.Vermillion},
	{Name: "copy/memset", Color: chart.BluishGreen},
	{Name: "CPU op", Color: chart.SkyBlue},
	{Name: "runtime call", Color: chart.Orange},
	{Name: "sync call", Color: chart.ReddishPurple},
	{Name: "finding", Color: chart.Black},
}

// timelineChart draws issue n's window timeline; nil without one.
// excludedIdle is the GPU idle of the window's rank inside start-up and
// held intervals (findings.Gate.ExcludedIdle) where the issue's rule
// marks GPU idle gaps and judges idle time without it; the gaps are drawn
// as the trace has them, and the first lane's text then says so (where
// that idle is at least 1% of what the lane draws).
func timelineChart(n int, is *Issue, excludedIdle int64) *Chart {
	w := is.Window
	if w == nil || w.Timeline == nil || w.EndNs <= w.StartNs || len(w.Timeline.Lanes) == 0 {
		return nil
	}
	tl := w.Timeline
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	id := "tb-chart-timeline-" + strconv.Itoa(n)
	c := chart.Timeline{ID: id, Unit: "ms", Axis: "time from the window start", End: ms(w.EndNs - w.StartNs), Kinds: timelineKinds}
	spans := func(ss []Span) []chart.Segment {
		out := make([]chart.Segment, 0, len(ss))
		for _, s := range ss {
			out = append(out, chart.Segment{From: ms(s.StartNs), To: ms(s.StartNs + s.DurNs), Kind: int(s.Kind)})
		}
		return out
	}
	var alt []string
	if len(tl.Marks) > 0 {
		var total int64
		for _, s := range tl.Marks {
			total += s.DurNs
		}
		what := "the finding's intervals"
		if tl.MarkWhat != "" {
			what += " (" + tl.MarkWhat + ")"
		}
		if tl.MarksNs > 0 {
			total = tl.MarksNs
		}
		c.Lanes = append(c.Lanes, chart.Lane{Label: "finding", Full: "finding: " + oneLine(tl.MarkWhat), Bold: true, Segments: spans(tl.Marks), Busy: ms(total)})
		held := ""
		if excludedIdle > 0 && excludedIdle*100 >= total {
			// b200_eager: 65.070 ms of host-wait gaps drawn beside a
			// finding of 63.8 ms, which leaves out the 9.1 ms of idle
			// inside lazy kernel loading.
			held = ", as the trace has them (the finding's figure leaves out the GPU idle inside start-up and held intervals, " + fmtMs(excludedIdle) + " on this rank, which this lane draws where the window holds it; see Capture quality)"
		}
		alt = append(alt, "First lane: "+what+", "+fmtMs(total)+" in all"+held+"; at the drawing's resolution (about a pixel) they merge into "+strconv.Itoa(len(tl.Marks))+" drawn interval(s).")
	}
	for _, l := range tl.Lanes {
		c.Lanes = append(c.Lanes, chart.Lane{Label: l.Name, Full: oneLine(l.Name), Segments: spans(l.Spans), Busy: ms(l.BusyNs)})
		alt = append(alt, oneLine(l.Name)+": busy "+fmtMs(l.BusyNs)+" of the window's "+fmtMs(w.EndNs-w.StartNs)+".")
	}
	focus := "the finding's instance"
	if w.Step >= 0 {
		focus = "worst step " + strconv.Itoa(w.Step)
	}
	if w.FocusEndNs > w.FocusStartNs {
		c.Bands = []chart.Band{{From: ms(w.FocusStartNs - w.StartNs), To: ms(w.FocusEndNs - w.StartNs), Label: focus + " (shaded)"}}
		alt = append(alt, "Shaded: "+focus+", "+fmtMs(w.FocusStartNs-w.StartNs)+" .. "+fmtMs(w.FocusEndNs-w.StartNs)+" from the window start.")
	}
	host, gpu := 0, 0
	for _, l := range tl.Lanes {
		if l.GPU {
			gpu++
		} else {
			host++
		}
	}
	lanes := strconv.Itoa(host) + " host thread(s) and " + strconv.Itoa(gpu) + " GPU stream(s)"
	if host < tl.HostLanes || gpu < tl.GPULanes {
		lanes = "the busiest " + lanes + " of " + strconv.Itoa(tl.HostLanes) + " and " + strconv.Itoa(tl.GPULanes)
		alt = append(alt, "The window has "+strconv.Itoa(tl.HostLanes)+" host thread(s) and "+strconv.Itoa(tl.GPULanes)+" GPU stream(s); the busiest are drawn.")
	}
	if tl.Events < tl.InWindow {
		alt = append(alt, "The lanes draw the "+strconv.Itoa(tl.Events)+" longest of the window's "+strconv.Itoa(tl.InWindow)+" events.")
	}
	alt = append(alt, "Each lane is drawn at about a pixel's resolution: a pixel where any event lies is busy and shows what ran longest in it, "+
		"except that on host threads a sync call or runtime call covering half of it shows first.")
	c.Title = "Timeline of issue " + strconv.Itoa(n) + ": " + lanes + ", the finding's intervals on the first lane, " + focus + " shaded — " + w.Text()
	c.Desc = strings.Join(alt, "\n")
	svg := c.SVG()
	if svg == "" {
		return nil
	}
	return &Chart{ID: "timeline-" + strconv.Itoa(n), Title: c.Title, Alt: c.Desc, SVG: svg}
}

// addTimelines draws the timeline of every issue whose window has one,
// numbered as the report numbers them (critical issues, then follow-ups),
// with gate's idle left out of the rules that judge idle time.
func addTimelines(d *Doc, gate *findings.Gate) {
	n := 0
	for _, list := range [][]Issue{d.Critical, d.FollowUps} {
		for i := range list {
			n++
			var ex int64
			if w := list[i].Window; w != nil {
				if r := findings.RuleOf(list[i].ID); r != nil && r.Idle && r.Marks != nil && r.Marks.Gap != nil {
					ex = gate.ExcludedIdle(w.Trace, w.Rank)
				}
			}
			list[i].Timeline = timelineChart(n, &list[i], ex)
		}
	}
}
