package wasm_test

import (
	"bytes"
	"testing"

	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/internal/buildtest"
	"github.com/tracebook/tracebook/wasm"
)

// TestChartsRedrawInChromium: in the browser, choosing a rank redraws the
// charts through the module: the rank chart shows the chosen rank in bold,
// and back on all ranks none; the charts' SVG is in the page as SVG
// elements (not text), with no script from a trace name.
func TestChartsRedrawInChromium(t *testing.T) {
	requireChromium(t)
	mod := buildtest.Module(t)
	var page bytes.Buffer
	if err := wasm.WriteReport(&page, buildtest.SampleBundle(t), report.View{}, wasm.Options{Module: mod}); err != nil {
		t.Fatal(err)
	}
	b, _ := openPage(t, "report.html", page.Bytes())
	b.WaitReady("report")
	boldRank := `(function(){var t=document.querySelector('figure[data-tb-chart="ranks"] svg text[font-weight="bold"][text-anchor="end"]');return t?t.textContent:"";})()`
	charts := `String(document.querySelectorAll("#tb-slot figure.tb-chart > svg").length)`
	n := b.Eval(charts)
	if n == "0" {
		t.Fatal("no chart drawn as SVG in the page")
	}
	if got := b.Eval(boldRank); got != "" {
		t.Errorf("all ranks: the rank chart has %q in bold", got)
	}
	pick := func(v string) {
		b.Eval(`(function(){var s=document.querySelector('select[data-tb="rank"]');s.value="` + v + `";s.dispatchEvent(new Event("change",{bubbles:true}));return "";})()`)
	}
	pick("1")
	if got := b.Eval(boldRank); got != "rank 1" {
		t.Errorf("after choosing rank 1 the rank chart has %q in bold, want rank 1", got)
	}
	pick("0")
	if got := b.Eval(boldRank); got != "rank 0" {
		t.Errorf("after choosing rank 0 the rank chart has %q in bold, want rank 0", got)
	}
	pick("")
	if got := b.Eval(boldRank); got != "" {
		t.Errorf("back on all ranks the rank chart has %q in bold", got)
	}
	if got := b.Eval(charts); got != n {
		t.Errorf("back on all ranks %s charts, first %s", got, n)
	}
	if got := b.Eval(`String(document.querySelectorAll("#tb-slot svg script, #tb-slot svg foreignObject").length)`); got != "0" {
		t.Errorf("%s script or foreignObject elements inside the charts", got)
	}
	if s := b.State(); s != "ready" {
		t.Errorf("after the rank changes data-viewer-state = %q", s)
	}
}
