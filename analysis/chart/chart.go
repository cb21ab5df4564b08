// Package chart draws the report's charts as SVG text: bar charts whose bars
// are stacked series, laid out as rows (one per rank or kernel, the value
// along x) or as columns (one per step, the value along y), each with a
// title, a legend, an axis in the chart's unit, reference marks (a median)
// and a text alternative; and timelines (timeline.go), lanes of coloured
// segments under a time axis with highlighted bands, a small Perfetto-like
// view. Read measures a chart back from its SVG, for tests.
//
// The package writes markup only. What to chart and the numbers are the
// caller's (analysis/report builds the charts from the evidence). Every
// string is escaped as XML text, so a trace's kernel name stays text; the
// SVG uses presentation attributes only (no style attribute, no script), so
// it passes a Content-Security-Policy that allows no inline style, and the
// same bytes work inline in HTML and as an image (a data: URI in Markdown).
//
// It uses the standard library only and builds for GOOS=wasip1: the offline
// viewer redraws the charts when the reader changes the filter.
package chart

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tracebook/tracebook/analysis/table"
)

// The Okabe-Ito palette: eight colours that readers with any common form of
// colour blindness tell apart (Okabe & Ito, "Color Universal Design", 2008).
// Grey is added for "nothing ran" (GPU idle).
const (
	Black         = "#000000"
	Orange        = "#E69F00"
	SkyBlue       = "#56B4E9"
	BluishGreen   = "#009E73"
	Yellow        = "#F0E442"
	Blue          = "#0072B2"
	Vermillion    = "#D55E00"
	ReddishPurple = "#CC79A7"
	Grey          = "#BBBBBB"
)

// Width is the default width of a chart in pixels: the text stays readable
// when the chart is shown 900 px wide, its natural size.
const Width = 900

// Font sizes in pixels, and the width of a character relative to the font
// size that layout assumes (a conservative average for sans-serif text;
// East Asian wide characters count double).
const (
	FontSize  = 12
	TitleSize = 15
	CharWidth = 0.62
)

// Series is one stacked part of every bar, with its legend name and colour.
type Series struct {
	Name  string
	Color string
	// Short names the series in each bar's tooltip; "" means Name.
	Short string
}

// Bar is one bar: a row of a horizontal chart or a column of a vertical one.
type Bar struct {
	// Label is the category label on the axis; shortened in the middle
	// when it does not fit.
	Label string
	// Full is the full name, shown in the bar's tooltip (its SVG <title>);
	// "" means Label.
	Full string
	// Values holds one value per series, in the chart's unit. Negative,
	// NaN and infinite values draw as 0.
	Values []float64
	// Text is what a horizontal bar shows past its end; "" shows the
	// total with the unit.
	Text string
	// Bold draws the label in bold (the selected rank).
	Bold bool
}

// Mark is a reference line across the bars at a value (a median).
type Mark struct {
	Value float64
	Label string
}

// Bars is a bar chart. The zero value of each optional field is a sensible
// default: 900 px wide, horizontal, no marks.
type Bars struct {
	// ID prefixes the ids of the chart's title and description, which
	// must be unique in an HTML page that holds several charts.
	ID string
	// Title says what the chart shows and for which slice; it wraps.
	Title string
	// Desc is the text alternative: the numbers behind the chart in words.
	Desc string
	// Unit is the values' unit ("ms"); ValueAxis names the value axis
	// ("GPU time") and CategoryAxis the other one ("step"), both optional.
	Unit         string
	ValueAxis    string
	CategoryAxis string
	Series       []Series
	Bars         []Bar
	// Vertical draws one column per bar (for steps) instead of one row.
	Vertical bool
	Marks    []Mark
	// Width in pixels; 0 means Width.
	Width int
}

// layout constants (pixels).
const (
	pad       = 12
	titleLine = 19
	legendH   = 20
	rowH      = 22
	barH      = 16
	colPlotH  = 220
	// maxLabelChars is the most characters a row label shows, and
	// maxLabelW its widest (pixels); maxTextW is the widest text past a bar.
	maxLabelChars = 40
	maxLabelW     = 300
	maxTextW      = 200
)

// SVG returns the chart as a standalone SVG document (no XML declaration),
// or "" when there is nothing to draw: no bar, or no series.
func (c *Bars) SVG() string {
	if len(c.Bars) == 0 || len(c.Series) == 0 {
		return ""
	}
	w := c.Width
	if w <= 0 {
		w = Width
	}
	d := &drawing{w: float64(w)}
	y := d.header(c)
	if c.Vertical {
		d.columns(c, y)
	} else {
		d.rows(c, y)
	}
	return d.finish(c)
}

// drawing accumulates a chart's body; finish wraps it in the <svg> element.
type drawing struct {
	w, h float64
	b    strings.Builder
}

func (d *drawing) p(ss ...string) {
	for _, s := range ss {
		d.b.WriteString(s)
	}
}

// header draws the title lines and the legend and returns the y below them.
func (d *drawing) header(c *Bars) float64 {
	y := float64(pad)
	for _, line := range wrap(c.Title, d.w-2*pad, TitleSize, 3) {
		y += titleLine
		d.p(`<text x="`, num(pad), `" y="`, num(y-4), `" font-size="`, num(TitleSize), `" font-weight="bold">`, Escape(line), "</text>\n")
	}
	y += 6
	// The legend: a swatch and a name per series, wrapping.
	x := float64(pad)
	y += legendH
	for _, s := range c.Series {
		name := fit(s.Name, d.w-2*pad-20)
		iw := 16 + TextWidth(name, FontSize) + 18
		if x > pad && x+iw > d.w-pad {
			x = pad
			y += legendH
		}
		d.p(`<rect x="`, num(x), `" y="`, num(y-11), `" width="12" height="12" fill="`, Escape(s.Color), `"/>`)
		d.p(`<text x="`, num(x+16), `" y="`, num(y-1), `">`, Escape(name), "</text>\n")
		x += iw
	}
	// Then the marks: a dashed line and the mark's label.
	for _, m := range c.Marks {
		name := fit(m.Label, d.w-2*pad-30)
		iw := 24 + TextWidth(name, FontSize) + 18
		if x > pad && x+iw > d.w-pad {
			x = pad
			y += legendH
		}
		d.p(`<line x1="`, num(x), `" y1="`, num(y-5), `" x2="`, num(x+20), `" y2="`, num(y-5), `" stroke="`, Black, `" stroke-width="1.5" stroke-dasharray="5 3"/>`)
		d.p(`<text x="`, num(x+24), `" y="`, num(y-1), `">`, Escape(name), "</text>\n")
		x += iw
	}
	return y + 8
}

// rows draws a horizontal chart from y down.
func (d *drawing) rows(c *Bars, y float64) {
	labels := make([]string, len(c.Bars))
	for i, b := range c.Bars {
		labels[i] = b.Label
	}
	labels = fitApart(labels, maxLabelChars, maxLabelW)
	labelW := 0.0
	for _, l := range labels {
		labelW = math.Max(labelW, TextWidth(l, FontSize))
	}
	totals, maxV := totalsOf(c)
	texts := make([]string, len(c.Bars))
	textW := 0.0
	for i, b := range c.Bars {
		texts[i] = b.Text
		if texts[i] == "" {
			texts[i] = Format(totals[i]) + unitSuffix(c.Unit)
		}
		texts[i] = fit(texts[i], maxTextW)
		textW = math.Max(textW, TextWidth(texts[i], FontSize))
	}
	for _, m := range c.Marks {
		maxV = math.Max(maxV, finite(m.Value))
	}
	step, top := ticks(maxV)
	x0 := pad + labelW + 8
	x1 := d.w - pad - math.Max(textW+6, TextWidth(Format(top), FontSize)/2)
	scale := (x1 - x0) / top
	plotTop := y
	plotBottom := plotTop + float64(len(c.Bars))*rowH
	// The value axis first, so that the bars draw over its grid lines.
	d.xAxis(x0, x1, plotTop, plotBottom, step, top, axisTitle(c.ValueAxis, c.Unit))
	for i, b := range c.Bars {
		by := plotTop + float64(i)*rowH + (rowH-barH)/2
		d.p(`<g data-bar="`, strconv.Itoa(i), `"><title>`, Escape(tooltip(c, b, totals[i])), "</title>")
		x := x0
		for j, s := range c.Series {
			v := value(b, j)
			if v <= 0 {
				continue
			}
			bw := v * scale
			d.p(`<rect data-s="`, strconv.Itoa(j), `" x="`, num(x), `" y="`, num(by), `" width="`, num(bw), `" height="`, num(barH), `" fill="`, Escape(s.Color), `"/>`)
			x += bw
		}
		weight := ""
		if b.Bold {
			weight = ` font-weight="bold"`
		}
		d.p(`<text x="`, num(x0-6), `" y="`, num(by+barH-4), `" text-anchor="end"`, weight, `>`, Escape(labels[i]), "</text>")
		d.p(`<text x="`, num(x0+totals[i]*scale+4), `" y="`, num(by+barH-4), `">`, Escape(texts[i]), "</text></g>\n")
	}
	// Marks: a dashed line over every bar (the legend names it).
	for _, m := range c.Marks {
		mx := x0 + finite(m.Value)*scale
		d.p(`<line data-mark="`, Format(finite(m.Value)), `" x1="`, num(mx), `" y1="`, num(plotTop-3), `" x2="`, num(mx), `" y2="`, num(plotBottom+3), `" stroke="`, Black, `" stroke-width="1.5" stroke-dasharray="5 3"/>`, "\n")
	}
	d.h = plotBottom + 32 + pad
}

// columns draws a vertical chart from y down.
func (d *drawing) columns(c *Bars, y float64) {
	totals, maxV := totalsOf(c)
	for _, m := range c.Marks {
		maxV = math.Max(maxV, finite(m.Value))
	}
	step, top := ticks(maxV)
	tickW := 0.0
	for k := 0; float64(k)*step <= top*(1+1e-9); k++ {
		tickW = math.Max(tickW, TextWidth(Format(float64(k)*step), FontSize))
	}
	at := axisTitle(c.ValueAxis, c.Unit)
	x0 := pad + tickW + 8
	x1 := d.w - pad
	y += 4
	if at != "" {
		// The value axis title sits above the axis, left-aligned.
		y += 12
		d.p(`<text x="`, num(pad), `" y="`, num(y), `">`, Escape(fit(at, d.w-2*pad)), "</text>\n")
		y += 8
	}
	plotTop := y + 6
	plotBottom := plotTop + colPlotH
	scale := colPlotH / top
	n := len(c.Bars)
	slot := (x1 - x0) / float64(n)
	bw := math.Min(slot*0.8, 56)
	if slot < 4 {
		bw = slot * 0.9
	}
	// Axis and grid first, so the bars draw over the grid lines.
	d.p(`<g data-axis="y">`)
	for k := 0; float64(k)*step <= top*(1+1e-9); k++ {
		v := float64(k) * step
		ty := plotBottom - v*scale
		d.p(`<line x1="`, num(x0), `" y1="`, num(ty), `" x2="`, num(x1), `" y2="`, num(ty), `" stroke="#ddd"/>`)
		d.p(`<text data-tick="`, Format(v), `" x="`, num(x0-4), `" y="`, num(ty+4), `" text-anchor="end">`, Format(v), "</text>")
	}
	d.p(`<line x1="`, num(x0), `" y1="`, num(plotBottom), `" x2="`, num(x1), `" y2="`, num(plotBottom), `" stroke="#555"/>`)
	d.p("</g>\n")
	// The columns: one path per series holding its part of every column
	// (a rect per part would repeat its attributes hundreds of times), then
	// over each column a transparent rect the plot's height that carries
	// the column's tooltip.
	xs := make([]string, n)
	stack := make([]float64, n) // the y each column's next part starts at
	for i := range c.Bars {
		xs[i] = num(x0 + float64(i)*slot + (slot-bw)/2)
		stack[i] = plotBottom
	}
	ws := num(bw)
	var path strings.Builder
	for j, s := range c.Series {
		path.Reset()
		for i, b := range c.Bars {
			v := value(b, j)
			if v <= 0 {
				continue
			}
			yb := stack[i]
			stack[i] = yb - v*scale
			path.WriteString("M" + xs[i] + " " + num(yb) + "V" + num(stack[i]) + "h" + ws + "V" + num(yb) + "z")
		}
		if path.Len() > 0 {
			d.p(`<path data-s="`, strconv.Itoa(j), `" fill="`, Escape(s.Color), `" d="`, path.String(), `"/>`, "\n")
		}
	}
	for i, b := range c.Bars {
		d.p(`<rect data-bar="`, strconv.Itoa(i), `" x="`, xs[i], `" y="`, num(plotTop), `" width="`, ws, `" height="`, num(colPlotH),
			`" fill-opacity="0"><title>`, Escape(tooltip(c, b, totals[i])), "</title></rect>\n")
	}
	// Category labels under the columns, every k-th so they do not overlap.
	const maxChars = 12
	lw := 0.0
	for _, b := range c.Bars {
		lw = math.Max(lw, TextWidth(table.ShortenMiddle(b.Label, maxChars), FontSize))
	}
	k := int(math.Ceil((lw + 10) / slot))
	if k < 1 {
		k = 1
	}
	d.p(`<g data-axis="x">`)
	for i := 0; i < n; i += k {
		l := table.ShortenMiddle(c.Bars[i].Label, maxChars)
		cx := x0 + (float64(i)+0.5)*slot
		half := TextWidth(l, FontSize) / 2
		cx = math.Min(math.Max(cx, pad+half), d.w-pad-half)
		d.p(`<text x="`, num(cx), `" y="`, num(plotBottom+15), `" text-anchor="middle">`, Escape(l), "</text>")
	}
	d.p("</g>\n")
	bottom := plotBottom + 15
	if c.CategoryAxis != "" {
		bottom += 16
		d.centred(c.CategoryAxis, (x0+x1)/2, bottom)
	}
	for _, m := range c.Marks {
		my := plotBottom - finite(m.Value)*scale
		d.p(`<line data-mark="`, Format(finite(m.Value)), `" x1="`, num(x0), `" y1="`, num(my), `" x2="`, num(x1), `" y2="`, num(my), `" stroke="`, Black, `" stroke-width="1.5" stroke-dasharray="5 3"/>`, "\n")
	}
	d.h = bottom + pad
}

// centred writes a line of text centred on x at baseline y, shortened to
// stay inside the chart.
// xAxis draws a horizontal value axis from x0 to x1 under a plot from
// plotTop to plotBottom: a grid line, a tick and its label every step up to
// top, the axis line, and title ("" for none) centred below.
func (d *drawing) xAxis(x0, x1, plotTop, plotBottom, step, top float64, title string) {
	scale := (x1 - x0) / top
	d.p(`<g data-axis="x">`)
	for k := 0; float64(k)*step <= top*(1+1e-9); k++ {
		v := float64(k) * step
		tx := x0 + v*scale
		d.p(`<line x1="`, num(tx), `" y1="`, num(plotTop), `" x2="`, num(tx), `" y2="`, num(plotBottom+4), `" stroke="#ddd"/>`)
		d.p(`<text data-tick="`, Format(v), `" x="`, num(tx), `" y="`, num(plotBottom+16), `" text-anchor="middle">`, Format(v), "</text>")
	}
	d.p(`<line x1="`, num(x0), `" y1="`, num(plotBottom), `" x2="`, num(x1), `" y2="`, num(plotBottom), `" stroke="#555"/>`)
	d.p("</g>\n")
	if title != "" {
		d.centred(title, (x0+x1)/2, plotBottom+32)
	}
}

func (d *drawing) centred(s string, x, y float64) {
	s = fit(s, 2*math.Min(x-pad, d.w-pad-x))
	d.p(`<text x="`, num(x), `" y="`, num(y), `" text-anchor="middle">`, Escape(s), "</text>\n")
}

// fit shortens s in the middle to at most w pixels wide at FontSize.
func fit(s string, w float64) string { return fitSize(s, w, FontSize) }

// fitApart shortens labels to at most chars code points and w pixels
// each, apart: labels that would read alike show where they differ
// (table.ShortenDistinct), so that two bars never carry one label.
func fitApart(labels []string, chars int, w float64) []string {
	for n := chars; ; n-- {
		out := table.ShortenDistinct(labels, n)
		wide := false
		for _, l := range out {
			wide = wide || TextWidth(l, FontSize) > w
		}
		if !wide || n <= 3 {
			return out
		}
	}
}

// fitSize shortens s in the middle to at most w pixels wide at font size px.
func fitSize(s string, w, px float64) string {
	n := utf8.RuneCountInString(s)
	out := s
	for n > 3 && TextWidth(out, px) > w {
		// Drop at least one character, more when far too wide.
		drop := int((TextWidth(out, px) - w) / (2 * px))
		n -= max(drop, 1)
		out = table.ShortenMiddle(s, max(n, 3))
	}
	return out
}

// finish wraps the body in the <svg> element: its accessible name (<title>)
// and description (<desc>), a white background (dark notebook themes), the
// font.
func (d *drawing) finish(c *Bars) string {
	var out strings.Builder
	h := math.Ceil(d.h)
	id := Escape(c.ID)
	if id == "" {
		id = "chart"
	}
	out.Grow(d.b.Len() + 600)
	out.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ` + num(d.w) + " " + num(h) + `" width="` + num(d.w) + `" height="` + num(h) +
		`" role="img" aria-labelledby="` + id + `-t ` + id + `-d" font-family="system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif" font-size="` + num(FontSize) + `" fill="#1d2330">` + "\n")
	out.WriteString(`<title id="` + id + `-t">` + Escape(c.Title) + "</title>\n")
	out.WriteString(`<desc id="` + id + `-d">` + Escape(c.Desc) + "</desc>\n")
	out.WriteString(`<rect width="` + num(d.w) + `" height="` + num(h) + `" fill="#fff"/>` + "\n")
	out.WriteString(d.b.String())
	out.WriteString("</svg>\n")
	return out.String()
}

// tooltip is a bar's <title>: its full name, its total and, with more than
// one series, each part.
func tooltip(c *Bars, b Bar, total float64) string {
	name := b.Full
	if name == "" {
		name = b.Label
	}
	s := name + ": " + Format(total) + unitSuffix(c.Unit)
	if len(c.Series) > 1 {
		parts := make([]string, 0, len(c.Series))
		for j, se := range c.Series {
			n := se.Short
			if n == "" {
				n = se.Name
			}
			parts = append(parts, n+" "+Format(value(b, j)))
		}
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

func axisTitle(name, unit string) string {
	switch {
	case name != "" && unit != "":
		return name + " (" + unit + ")"
	case name != "":
		return name
	}
	return unit
}

func unitSuffix(unit string) string {
	if unit == "" {
		return ""
	}
	return " " + unit
}

// totalsOf returns each bar's total and the largest total.
func totalsOf(c *Bars) ([]float64, float64) {
	totals := make([]float64, len(c.Bars))
	maxV := 0.0
	for i, b := range c.Bars {
		for j := range c.Series {
			totals[i] += value(b, j)
		}
		maxV = math.Max(maxV, totals[i])
	}
	return totals, maxV
}

// value is bar b's value of series j, 0 when absent, negative or not finite.
func value(b Bar, j int) float64 {
	if j >= len(b.Values) {
		return 0
	}
	return finite(b.Values[j])
}

// finite maps NaN, infinities and negative values to 0.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0
	}
	return v
}

// ticks returns a round tick step and the axis maximum (a multiple of the
// step at or above max, at least one step). An all-zero chart gets the axis
// 0..1.
func ticks(max float64) (step, top float64) {
	if max <= 0 {
		return 0.25, 1
	}
	raw := max / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	switch r := raw / mag; {
	case r <= 1:
		step = mag
	case r <= 2:
		step = 2 * mag
	case r <= 2.5:
		step = 2.5 * mag
	case r <= 5:
		step = 5 * mag
	default:
		step = 10 * mag
	}
	top = math.Ceil(max/step*(1-1e-12)) * step
	if top < step {
		top = step
	}
	return step, top
}

// Format writes a value with the precision its size calls for: 12,345,
// 123.4, 12.34, 1.234, 0.123; 0 as "0".
func Format(v float64) string {
	v = finite(v)
	var s string
	switch {
	case v == 0:
		return "0"
	case v >= 100:
		return group(strconv.FormatFloat(v, 'f', 0, 64))
	case v >= 10:
		s = strconv.FormatFloat(v, 'f', 1, 64)
	case v >= 1:
		s = strconv.FormatFloat(v, 'f', 2, 64)
	case v >= 0.001:
		s = strconv.FormatFloat(v, 'f', 3, 64)
	default:
		return "<0.001"
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// group puts a comma between each group of three digits of an integer.
func group(s string) string {
	if len(s) <= 4 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// num writes a coordinate with at most one decimal (never NaN).
func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		v = 0
	}
	s := strconv.FormatFloat(math.Round(v*10)/10, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	if s == "-0" {
		s = "0"
	}
	return s
}

// TextWidth estimates the width in pixels of s at font size px.
func TextWidth(s string, px float64) float64 {
	w := 0.0
	for _, r := range s {
		if wide(r) {
			w += px
		} else {
			w += CharWidth * px
		}
	}
	return w
}

// wide reports whether r is an East Asian wide character or an emoji,
// drawn about one em wide.
func wide(r rune) bool {
	return r >= 0x1100 && (r <= 0x115f || (r >= 0x2e80 && r <= 0xa4cf) || (r >= 0xac00 && r <= 0xd7a3) ||
		(r >= 0xf900 && r <= 0xfaff) || (r >= 0xfe30 && r <= 0xfe4f) || (r >= 0xff00 && r <= 0xff60) ||
		(r >= 0xffe0 && r <= 0xffe6) || r >= 0x1f300)
}

// wrap splits s into lines at most width pixels wide at font size px, at
// most max lines (the last shortened); a word wider than a line is
// shortened.
func wrap(s string, width, px float64, maxLines int) []string {
	var lines []string
	cur := ""
	for _, word := range strings.Fields(s) {
		word = fitSize(word, width, px)
		switch {
		case cur == "":
			cur = word
		case TextWidth(cur+" "+word, px) <= width:
			cur += " " + word
		default:
			lines = append(lines, cur)
			cur = word
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	if len(lines) > maxLines {
		rest := strings.Join(lines[maxLines-1:], " ")
		lines = append(lines[:maxLines-1], fitSize(rest, width, px))
	}
	return lines
}

// Escape makes s XML text, valid in element content and in quoted
// attribute values: & < > " ' are escaped, line breaks and tabs become
// spaces, and characters XML does not allow (other control characters,
// U+FFFE, U+FFFF, invalid UTF-8) become U+FFFD or are dropped.
func Escape(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		case '\'':
			b.WriteString("&#39;")
		case '\t', '\n', '\r':
			b.WriteByte(' ')
		case 0xfffe, 0xffff:
			b.WriteRune(utf8.RuneError)
		default:
			if r < 0x20 {
				continue
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}
