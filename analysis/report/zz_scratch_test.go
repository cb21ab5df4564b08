package report_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/internal/buildtest"
)

func TestScratchCharts(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.source.msgpack"))
	var html strings.Builder
	html.WriteString("<!DOCTYPE html><html><body style='width:900px;margin:0'>")
	add := func(name string, src *report.Source, v report.View) {
		cs := report.ChartsFor(src, v)
		for _, c := range cs {
			fmt.Printf("%s %s: %d bytes\n  %s\n  alt: %q\n", name, c.ID, len(c.SVG), c.Title, c.Alt)
			html.WriteString("<h3>" + name + " " + c.ID + "</h3>" + c.SVG)
		}
	}
	for _, f := range files {
		data, _ := os.ReadFile(f)
		src, err := report.DecodeSource(data)
		if err != nil {
			t.Fatal(err)
		}
		add(filepath.Base(f), src, report.View{Filter: src.Bundle.Filter})
	}
	syn := &report.Source{Bundle: buildtest.SyntheticBundle(8, 1000)}
	add("synthetic", syn, report.View{})
	add("synthetic-r3-decode", syn, report.View{Filter: evidence.Filter{Rank: 3, HasRank: true, Phase: "decode"}})
	html.WriteString("</body></html>")
	os.WriteFile("/tmp/charts/all.html", []byte(html.String()), 0o644)
}
