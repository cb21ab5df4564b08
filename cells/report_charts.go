package cells

import (
	"html"
	"regexp"
	"strings"

	"github.com/tracebook/tracebook/analysis/report"
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
