package cells

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/chart"
	"github.com/tracebook/tracebook/analysis/report"
)

// TestPlainReport: in text/plain each chart image of the Markdown report
// becomes its title in words; the rest of the report stays as it is.
func TestPlainReport(t *testing.T) {
	title := `GPU time of void k<<script>alert(1)</script>>](x) [a]`
	c := chart.Bars{Title: title, Desc: "rank 0: 1 ms", Unit: "ms", Series: []chart.Series{{Name: "compute", Color: chart.Blue}},
		Bars: []chart.Bar{{Label: "rank 0", Values: []float64{1}}}}
	charts := []report.Chart{{ID: "ranks", Title: title, Alt: "rank 0: 1 ms", SVG: c.SVG()}, {ID: "steps", Title: "second", Alt: "x", SVG: c.SVG()}}
	var md bytes.Buffer
	if err := report.Print(&md, &report.Doc{Title: "T", Summary: []string{"S"}, Charts: charts}, report.Markdown); err != nil {
		t.Fatal(err)
	}
	got := plainReport(md.String())
	if strings.Contains(got, "data:image") || strings.Contains(got, "base64") {
		t.Errorf("plainReport left a data: URI:\n%s", got)
	}
	for _, want := range []string{"[chart: " + title + "]", "[chart: second]", "- rank 0: 1 ms", "## Executive Summary"} {
		if !strings.Contains(got, want) {
			t.Errorf("plainReport lacks %q:\n%s", want, got)
		}
	}
	if plainReport("no chart here ![x](https://e/x.svg)") != "no chart here ![x](https://e/x.svg)" {
		t.Error("plainReport changed an image that is not a chart")
	}

	data := map[string]any{}
	addChartSVG(data, charts)
	if data[MIMESVG] != charts[0].SVG {
		t.Error("addChartSVG did not add the first chart as image/svg+xml")
	}
	data = map[string]any{}
	addChartSVG(data, nil)
	if _, ok := data[MIMESVG]; ok {
		t.Error("addChartSVG added image/svg+xml without a chart")
	}
}
