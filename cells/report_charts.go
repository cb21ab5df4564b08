package cells

import (
	"context"
	"html"
	"regexp"
	"strings"

	"github.com/tracebook/tracebook/analysis/perfetto"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/sql"
)

// MIMESVG is the MIME type of a chart: an SVG document.
const MIMESVG = "image/svg+xml"

// chartImage matches a chart in the Markdown report: an image whose source
// is the data: URI of its SVG, its alt text (the chart's title) Markdown
// escaped.
var chartImage = regexp.MustCompile(`!\[((?:[^\\\]\n]|\\.)*)\]\(data:image/svg\+xml;base64,[A-Za-z0-9+/=]*\)`)

var mdEscape = regexp.MustCompile(`\\(.)`)

// plainReport is the Markdown report as text/plain: each chart image, a
// data: URI of thousands of base64 characters, becomes "[chart: title]", so
// a terminal (jupyter console) shows words; the text alternative listed
// under each image stays.
func plainReport(md string) string {
	return chartImage.ReplaceAllStringFunc(md, func(img string) string {
		title := chartImage.FindStringSubmatch(img)[1]
		return "[chart: " + mdEscape.ReplaceAllString(title, "$1") + "]"
	})
}

// addChartSVG adds the first chart to a MIME bundle as image/svg+xml, for
// front ends that show an SVG but not Markdown images. A bundle holds one
// value per MIME type; the Markdown report embeds every chart.
func addChartSVG(data map[string]any, charts []report.Chart) {
	if len(charts) > 0 && charts[0].SVG != "" {
		data[MIMESVG] = charts[0].SVG
	}
}

// AddTimelines gives each window of src its timeline (the picture of the
// window's host threads and GPU streams that the report draws beside the
// Perfetto file): the window's rows are read as AddPerfetto reads them
// (windowRows), and perfetto.Timeline reduces them. When the rows cannot
// be read, the windows keep no timeline rather than failing the report.
func AddTimelines(ctx context.Context, eng Engine, src *report.Source) {
	if eng == nil || len(src.Windows) == 0 {
		return
	}
	p, ok := sql.Lookup(sql.Perfetto)
	if !ok {
		return
	}
	shown := report.ShownFindings(src.Bundle)
	var placed []report.Window
	for _, w := range src.Windows {
		if w.Placed && w.EndNs > w.StartNs {
			placed = append(placed, w)
		}
	}
	rows, err := windowRows(ctx, eng, p.SQL, placed)
	if err != nil {
		return
	}
	for i := range src.Windows {
		w := &src.Windows[i]
		t := rows[windowKeyOf(*w)]
		if t == nil {
			continue
		}
		in := perfetto.Input{Window: *w, Rows: t}
		if w.N >= 1 && w.N <= len(shown) {
			in.Finding = shown[w.N-1]
		}
		w.Timeline = perfetto.Timeline(in)
	}
}

// addCharts puts charts into a result whose text/html shows a table or a
// tree: the first chart's SVG as image/svg+xml (front ends that render an
// image but not the HTML, nbconvert to PDF), and every chart inline in the
// text/html before the rest, which is what JupyterLab and the classic
// Notebook show (they prefer text/html to image/svg+xml). The SVG is
// package chart's: every string in it is escaped.
func addCharts(res *Result, charts []report.Chart) {
	var drawn []report.Chart
	for _, c := range charts {
		if c.SVG != "" {
			drawn = append(drawn, c)
		}
	}
	if res == nil || len(drawn) == 0 {
		return
	}
	charts = drawn
	addChartSVG(res.Data, charts)
	var figs strings.Builder
	for _, c := range charts {
		figs.WriteString(`<figure class="tb-chart" data-tb-chart="` + html.EscapeString(c.ID) + `"">` + "\n" + c.SVG + "</figure>\n")
	}
	if h, ok := res.Data[MIMEHTML].(string); ok {
		res.Data[MIMEHTML] = figs.String() + h
	}
}
