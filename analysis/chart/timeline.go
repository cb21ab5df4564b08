package chart

import (
	"math"
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/table"
)

// Timeline is a small Perfetto-like view of a time window: one lane per
// host thread or GPU stream (or any track), each a row of segments coloured
// by kind, under a time axis, with bands that highlight ranges across every
// lane (a finding's worst step). The caller merges events that would be
// narrower than a pixel and caps the lanes; the chart draws what it gets.
type Timeline struct {
	// ID prefixes the ids of the chart's title and description.
	ID string
	// Title says what the chart shows and for which slice; it wraps.
	Title string
	// Desc is the text alternative.
	Desc string
	// Unit is the time unit of the segments ("ms"); Axis names the time
	// axis ("time from the window start").
	Unit, Axis string
	// End is the window's length in Unit: the axis runs from 0 to End.
	End float64
	// Kinds colour the segments (Segment.Kind indexes it) and fill the
	// legend.
	Kinds []Series
	Lanes []Lane
	Bands []Band
	// Width in pixels; 0 means Width.
	Width int
}

// Lane is one row: a label and its segments.
type Lane struct {
	// Label names the lane on the axis, shortened in the middle; Full is
	// its tooltip ("" means Label).
	Label, Full string
	Segments    []Segment
	// Busy is the lane's busy time the tooltip gives, in the chart's
	// unit; 0 means the time the segments cover (the caller knows it
	// exactly where segments were merged for drawing).
	Busy float64
	// Bold draws the label in bold (the finding's own lane).
	Bold bool
}

// Segment is a busy interval of a lane, in the axis unit from 0.
type Segment struct {
	From, To float64
	Kind     int
}

// Band highlights From..To across every lane; Label names it in the legend.
type Band struct {
	From, To float64
	Label    string
}

// BandColor fills the bands (Okabe-Ito yellow, translucent).
const BandColor = Yellow

const (
	laneH     = 14
	laneRow   = 19
	maxLaneW  = 230 // widest lane label (pixels)
	laneChars = 36  // most characters a lane label shows
)

// SVG returns the timeline as a standalone SVG document, or "" when there
// is nothing to draw (no lane, no kind or no length).
func (c *Timeline) SVG() string {
	if len(c.Lanes) == 0 || len(c.Kinds) == 0 || !(c.End > 0) || math.IsInf(c.End, 0) {
		return ""
	}
	w := c.Width
	if w <= 0 {
		w = Width
	}
	d := &drawing{w: float64(w)}
	legend := &Bars{Title: c.Title, Series: c.Kinds}
	y := d.header(legend)
	// The bands' legend entries: a swatch each, after the kinds.
	x := float64(pad)
	if len(c.Bands) > 0 {
		y += legendH - 8
		for _, b := range c.Bands {
			name := fit(b.Label, d.w-2*pad-20)
			d.p(`<rect x="`, num(x), `" y="`, num(y-11), `" width="12" height="12" fill="`, BandColor, `" fill-opacity="0.45" stroke="#888"/>`)
			d.p(`<text x="`, num(x+16), `" y="`, num(y-1), `">`, Escape(name), "</text>\n")
			x += 16 + TextWidth(name, FontSize) + 18
			if x > d.w-pad-100 {
				x = pad
				y += legendH
			}
		}
		y += 8
	}
	labels := make([]string, len(c.Lanes))
	labelW := 0.0
	for i, l := range c.Lanes {
		labels[i] = fit(table.ShortenMiddle(l.Label, laneChars), maxLaneW)
		labelW = math.Max(labelW, TextWidth(labels[i], FontSize))
	}
	step, top := ticks(c.End)
	x0 := pad + labelW + 8
	x1 := d.w - pad - TextWidth(Format(top), FontSize)/2
	scale := (x1 - x0) / top
	plotTop := y
	plotBottom := plotTop + float64(len(c.Lanes))*laneRow
	d.xAxis(x0, x1, plotTop, plotBottom, step, top, axisTitle(c.Axis, c.Unit))
	// The lanes' light tracks, then the bands over them, then the
	// segments over both.
	for i := range c.Lanes {
		ly := plotTop + float64(i)*laneRow + (laneRow-laneH)/2
		d.p(`<rect x="`, num(x0), `" y="`, num(ly), `" width="`, num(x1-x0), `" height="`, num(laneH), `" fill="#f0f1f4"/>`)
	}
	d.p("\n")
	for _, b := range c.Bands {
		from, to := clamp(b.From, 0, top), clamp(b.To, 0, top)
		if to <= from {
			continue
		}
		d.p(`<rect data-band="`, Format(from), " ", Format(to), `" x="`, num(x0+from*scale), `" y="`, num(plotTop-2), `" width="`, num((to-from)*scale),
			`" height="`, num(plotBottom-plotTop+2), `" fill="`, BandColor, `" fill-opacity="0.45"/>`, "\n")
	}
	var path strings.Builder
	for i, l := range c.Lanes {
		ly := plotTop + float64(i)*laneRow + (laneRow-laneH)/2
		busy := l.Busy
		if !(busy > 0) || math.IsInf(busy, 0) {
			busy = 0
			for _, s := range l.Segments {
				busy += math.Max(clamp(s.To, 0, top)-clamp(s.From, 0, top), 0)
			}
		}
		full := l.Full
		if full == "" {
			full = l.Label
		}
		d.p(`<g data-lane="`, strconv.Itoa(i), `"><title>`, Escape(full+": busy "+Format(busy)+unitSuffix(c.Unit)), "</title>")
		weight := ""
		if l.Bold {
			weight = ` font-weight="bold"`
		}
		d.p(`<text x="`, num(x0-6), `" y="`, num(ly+laneH-3), `" text-anchor="end"`, weight, `>`, Escape(labels[i]), "</text>")
		// One path per kind: each segment a horizontal stroke the lane's
		// height (butt caps: it ends where the segment ends), the most
		// compact form of a row of rectangles.
		mid := num(ly + laneH/2)
		for k, kind := range c.Kinds {
			path.Reset()
			for _, s := range l.Segments {
				if s.Kind != k {
					continue
				}
				from, to := clamp(s.From, 0, top), clamp(s.To, 0, top)
				if !(to > from) {
					continue
				}
				sx := x0 + from*scale
				sw := math.Max((to-from)*scale, 0.5) // a lone short event stays visible
				path.WriteString("M" + num(sx) + " " + mid + "h" + num(sw))
			}
			if path.Len() > 0 {
				d.p(`<path data-s="`, strconv.Itoa(k), `" fill="none" stroke="`, Escape(kind.Color), `" stroke-width="`, num(laneH), `" d="`, path.String(), `"/>`)
			}
		}
		d.p("</g>\n")
	}
	d.h = plotBottom + 32 + pad
	return d.finish(&Bars{ID: c.ID, Title: c.Title, Desc: c.Desc})
}

// clamp bounds v to lo..hi; NaN becomes lo.
func clamp(v, lo, hi float64) float64 {
	if math.IsNaN(v) || v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}
