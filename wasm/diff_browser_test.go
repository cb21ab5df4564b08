package wasm_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/internal/buildtest"
	"github.com/tracebook/tracebook/wasm"
)

// TestDiffInChromium opens a diff page from file:// in headless Chromium,
// waits for the module, changes the rank and the phase and sorts a change
// table, and wants the content to change with no network request.
func TestDiffInChromium(t *testing.T) {
	requireChromium(t)
	mod := buildtest.Module(t)
	var page bytes.Buffer
	if err := wasm.WriteDiff(&page, buildtest.SampleDiffInput(t), report.View{}, wasm.Options{Module: mod}); err != nil {
		t.Fatal(err)
	}
	b, path := openPage(t, "diff.html", page.Bytes())
	b.WaitReady("diff")
	if got := b.Eval(`document.querySelector("#tb-slot code.tb-kernel[title^='<script>']") ? "text" : "none"`); got != "text" {
		t.Error("the hostile kernel name is not shown as text in the kernels table")
	}
	if n := b.Eval(`String(document.querySelectorAll("#tb-slot img, #tb-slot script").length)`); n != "0" {
		t.Errorf("%s img/script elements came from trace names", n)
	}
	headline := `document.querySelector("#tb-slot .tb-diff > p").textContent`
	all := b.Eval(headline)
	choose := func(what, value string) {
		b.Eval(`(function(){var s=document.querySelector('select[data-tb="` + what + `"]');s.value="` + value + `";s.dispatchEvent(new Event("change",{bubbles:true}));return "";})()`)
	}
	// Rank 1: the module compares that rank's steps only.
	choose("rank", "1")
	if got := b.Eval(`document.querySelector('select[data-tb="rank"]').value`); got != "1" {
		t.Errorf("after choosing rank 1 the re-rendered select shows %q", got)
	}
	rank1 := b.Eval(headline)
	if rank1 == all {
		t.Errorf("the headline did not change with the rank: %s", rank1)
	}
	if !strings.Contains(b.Eval(`document.getElementById("tb-slot").textContent`), "rank filter: base rank 1 compared with test rank 1") {
		t.Error("the rank 1 diff does not say which ranks it compares")
	}
	// Then the decode phase of rank 1.
	choose("phase", "decode")
	if got := b.Eval(headline); got == rank1 {
		t.Errorf("the headline did not change with the phase: %s", got)
	}
	// Sort the step table by change: the header shows the order.
	b.Eval(`(function(){document.querySelector('button[data-tb-sort="step"][data-tb-col="change"]').click();return "";})()`)
	if got := b.Eval(`document.querySelector('button[data-tb-sort="step"][data-tb-col="change"]').textContent`); !strings.HasSuffix(got, "▼") {
		t.Errorf("after sorting by change the header reads %q, want a ▼", got)
	}
	if got := b.Eval(`document.querySelector('select[data-tb="phase"]').value`); got != "decode" {
		t.Errorf("after sorting, the phase select shows %q, want decode", got)
	}
	// A rank and phase the sample has no step of says so and keeps the controls.
	choose("phase", "")
	choose("rank", "")
	if got := b.Eval(headline); got != all {
		t.Errorf("back to every rank and phase, the headline reads %s, want %s", got, all)
	}
	if s := b.State(); s != "ready" {
		t.Errorf("after the interactions data-viewer-state = %q (%s)", s, b.Eval(`document.getElementById("tb-status").textContent`))
	}
	if !strings.Contains(b.Eval(`document.getElementById("tb-status").textContent`), "compares the two traces again") {
		t.Error("the status line is not the diff's")
	}
	if reqs := b.Requests(path); len(reqs) != 0 {
		t.Errorf("the diff page made %d requests, want none: %v", len(reqs), reqs)
	}
}
