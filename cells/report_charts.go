package cells

import (
	"context"
	"html"
	"regexp"
	"strings"
	"sync"

	"github.com/tracebook/tracebook/analysis/perfetto"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/analysis/table"
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
// Perfetto file): sql/perfetto.sql runs once per distinct window, a few at
// once as AddPerfetto runs them, with the cap of the saved files, and
// perfetto.Timeline reduces its rows. A window whose rows cannot be read
// keeps no timeline rather than failing the report.
func AddTimelines(ctx context.Context, eng Engine, src *report.Source) {
	if eng == nil || len(src.Windows) == 0 {
		return
	}
	p, ok := sql.Lookup(sql.Perfetto)
	if !ok {
		return
	}
	shown := report.ShownFindings(src.Bundle)
	type key [4]any
	keyOf := func(w *report.Window) key { return key{w.Trace, w.Rank, w.StartNs, w.EndNs} }
	idx := map[key]int{}
	var order []*report.Window
	for i := range src.Windows {
		w := &src.Windows[i]
		if _, seen := idx[keyOf(w)]; w.Placed && w.EndNs > w.StartNs && !seen {
			idx[keyOf(w)] = len(order)
			order = append(order, w)
		}
	}
	rows := make([]*table.Table, len(order))
	sem := make(chan struct{}, presetWorkers)
	var wg sync.WaitGroup
	for i, w := range order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			t, err := eng.Query(ctx, p.SQL, 0, w.Trace, w.Rank, w.StartNs, w.EndNs,
				int64(perfetto.DefaultMaxEvents), int64(perfetto.DefaultMaxPython))
			if err == nil {
				rows[i] = t
			}
		}()
	}
	wg.Wait()
	for i := range src.Windows {
		w := &src.Windows[i]
		k, ok := idx[keyOf(w)]
		if !ok || rows[k] == nil {
			continue
		}
		in := perfetto.Input{Window: *w, Rows: rows[k]}
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
