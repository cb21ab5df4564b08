//go:build cgo

package cells_test

import (
	"context"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/chart"
	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/cells"
)

// svgOf reads a result's image/svg+xml and checks it is in the text/html
// too (the notebook front ends show the HTML).
func svgOf(t *testing.T, what string, res *cells.Result) *chart.Reading {
	t.Helper()
	svg, _ := res.Data[cells.MIMESVG].(string)
	if svg == "" {
		t.Fatalf("%s: no image/svg+xml", what)
	}
	if h, _ := res.Data[cells.MIMEHTML].(string); !strings.Contains(h, svg) {
		t.Errorf("%s: the chart is not inline in the text/html", what)
	}
	r, err := chart.Read(svg)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if len(r.Bars) == 0 || r.Title == "" || r.Desc == "" {
		t.Errorf("%s: chart without bars, title or text alternative", what)
	}
	for _, tx := range r.Texts {
		if tx.Left < -0.05 || tx.Right > r.Width+0.05 || tx.Top < -0.05 || tx.Bottom > r.Height+0.05 {
			t.Errorf("%s: text %q outside the viewBox", what, tx.Text)
		}
	}
	return r
}

// TestIntegrationCharts: on resnet50 (testdata), %evidence ranks and
// kernels and %crossview return a chart as image/svg+xml beside their
// table or tree; the cross-view chart's GPU bar is the slice's wall time
// split (busy plus idle by cause); %report's Markdown embeds the step chart
// and a timeline beside each finding's Perfetto window, whose lanes draw
// inside the window.
func TestIntegrationCharts(t *testing.T) {
	s, dir := newSession(t)
	const rel = "kineto/resnet50_num_workers_0"
	need(t, dir, rel)
	s.Evidence, s.Crossview, s.Report = cells.EvidenceHook, cells.CrossViewHook(crossview.DefaultOptions()), cells.ReportHook(nil)
	run(t, s, "%trace load "+rel+" --name resnet")

	for _, area := range []string{"ranks", "kernels", "phases"} {
		res, err := s.Execute(context.Background(), "%evidence "+area, nil)
		if err != nil {
			t.Fatal(err)
		}
		svgOf(t, "%evidence "+area, res)
	}
	res, err := s.Execute(context.Background(), "%evidence sync", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Data[cells.MIMESVG]; ok {
		t.Error("evidence sync: a chart where none fits")
	}

	res = run(t, s, "%crossview")
	r := svgOf(t, "%crossview", res)
	if len(r.Bars) != 2 {
		t.Fatalf("%%crossview chart: %d bars, want GPU and host", len(r.Bars))
	}
	wall := regexp.MustCompile(`GPU, wall ([0-9,.]+) ms`).FindStringSubmatch(r.Desc)
	if wall == nil {
		t.Fatalf("%%crossview chart: the text alternative gives no wall time: %q", r.Desc)
	}
	gpu := 0.0
	for _, v := range r.Bars[0].Values {
		gpu += v
	}
	w, _ := strconv.ParseFloat(strings.ReplaceAll(wall[1], ",", ""), 64)
	if math.Abs(gpu-w) > 0.16/r.PerUnit+w*0.0051 {
		t.Errorf("%%crossview chart: the GPU bar draws %v ms, the wall time is %v ms", gpu, w)
	}

	res = run(t, s, "%report")
	md, _ := res.Data["text/markdown"].(string)
	if !strings.Contains(md, "![GPU span per step on rank 0") {
		t.Error("%report: no step chart")
	}
	timelines := regexp.MustCompile(`!\[Timeline of issue (\d+):`).FindAllStringSubmatch(md, -1)
	windows := strings.Count(md, "finding-")
	if len(timelines) == 0 || windows == 0 {
		t.Errorf("%%report: %d timelines for a report that names %d Perfetto files", len(timelines), windows)
	}
}
