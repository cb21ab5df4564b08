package wasm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/internal/buildtest"
	"github.com/tracebook/tracebook/wasm"
	"github.com/tracebook/tracebook/wasm/internal/cdp"
)

// Browser is one report opened from file:// in headless Chromium, with the
// network requests it made.
type Browser struct {
	t    *testing.T
	ctx  context.Context
	page *cdp.Conn
}

// requireChromium skips a browser test where Chromium is absent (before
// the test builds what it would open).
func requireChromium(t testing.TB) {
	t.Helper()
	if cdp.Find() == "" {
		t.Skip("chromium not found (/usr/bin/chromium): skipping the browser test")
	}
}

// openPage writes page as name in a new temporary directory and opens it
// in Chromium (OpenInChromium); it returns the page's path too.
func openPage(t *testing.T, name string, page []byte) (*Browser, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	return OpenInChromium(t, path), path
}

// WaitReady waits until the viewer is ready and checks that the module's
// first rendering equals the static page (what names it: report, diff).
func (b *Browser) WaitReady(what string) {
	b.t.Helper()
	if s := b.WaitState("static"); s != "ready" {
		b.t.Fatalf("data-viewer-state = %q (%s), want ready", s, b.Eval(`document.getElementById("tb-status").textContent`))
	}
	if p := b.Eval(`document.getElementById("tb-root").getAttribute("data-viewer-parity")`); p != "same" {
		b.t.Errorf("the module's first rendering differs from the static %s in the browser: parity %q", what, p)
	}
}

// OpenInChromium writes nothing: it opens path and waits until the root's
// data-viewer-state leaves "static". It skips when Chromium is absent.
func OpenInChromium(t *testing.T, path string) *Browser {
	t.Helper()
	requireChromium(t)
	bin := cdp.Find()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	// Chromium's helper processes may still write into the profile for a
	// moment after the browser exits: remove it with retries rather than
	// through t.TempDir, whose cleanup fails the test on a busy directory.
	profile, err := os.MkdirTemp("", "tracebook-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for i := 0; i < 20 && os.RemoveAll(profile) != nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	})
	br, err := cdp.Start(ctx, bin, profile)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(br.Close)
	page, err := br.Page()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { page.Close() })
	for _, m := range []string{"Network.enable", "Page.enable", "Runtime.enable"} {
		if err := page.Call(ctx, m, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := page.Call(ctx, "Page.navigate", map[string]any{"url": "file://" + path}, nil); err != nil {
		t.Fatal(err)
	}
	b := &Browser{t: t, ctx: ctx, page: page}
	b.WaitState("static")
	return b
}

// State returns the root's data-viewer-state.
func (b *Browser) State() string {
	var s string
	raw, err := b.page.Eval(b.ctx, `(document.getElementById("tb-root")||{getAttribute(){return ""}}).getAttribute("data-viewer-state")`)
	if err == nil {
		json.Unmarshal(raw, &s)
	}
	return s
}

// WaitState waits until the state is neither "" nor not.
func (b *Browser) WaitState(not string) string {
	b.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if s := b.State(); s != "" && s != not {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.t.Fatalf("data-viewer-state stayed %q", b.State())
	return ""
}

// Eval evaluates expr and decodes its value into a string.
func (b *Browser) Eval(expr string) string {
	b.t.Helper()
	raw, err := b.page.Eval(b.ctx, expr)
	if err != nil {
		b.t.Fatal(err)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return string(raw)
	}
	return s
}

// Requests returns the URLs the page requested other than the report itself.
func (b *Browser) Requests(self string) []string {
	var out []string
	for _, e := range b.page.Events("Network.requestWillBeSent") {
		var p struct {
			Request struct {
				URL string `json:"url"`
			} `json:"request"`
		}
		json.Unmarshal(e.Params, &p)
		if p.Request.URL != "file://"+self {
			out = append(out, p.Request.URL)
		}
	}
	return out
}

func TestReportInChromium(t *testing.T) {
	requireChromium(t)
	mod := buildtest.Module(t)
	var page bytes.Buffer
	if err := wasm.WriteReport(&page, buildtest.SampleBundle(t), report.View{}, wasm.Options{Module: mod}); err != nil {
		t.Fatal(err)
	}
	b, path := openPage(t, "report.html", page.Bytes())
	b.WaitReady("report")
	// The hostile kernel name shows as text, and no script of the trace ran.
	if got := b.Eval(`String(document.querySelectorAll("[data-tb-issue]").length)`); got == "0" {
		t.Errorf("the sample's sync finding is missing on all ranks")
	}
	if got := b.Eval(`document.querySelector(".tb-kernel").textContent`); !strings.Contains(got, buildtest.Hostile) {
		t.Errorf("kernel leaf = %q, want it to contain the name as text", got)
	}
	nIssues := b.Eval(`String(document.querySelectorAll("[data-tb-issue]").length)`)
	if n := b.Eval(`String(document.querySelectorAll("#tb-slot img, #tb-slot script").length)`); n != "0" {
		t.Errorf("%s img/script elements came from trace names", n)
	}
	// Change the rank filter: the module re-renders with rank 1 selected.
	b.Eval(`(function(){var s=document.querySelector('select[data-tb="rank"]');s.value="1";s.dispatchEvent(new Event("change",{bubbles:true}));return "";})()`)
	if got := b.Eval(`document.querySelector('select[data-tb="rank"]').value`); got != "1" {
		t.Errorf("after choosing rank 1 the re-rendered select shows %q", got)
	}
	// The sample's critical finding is on rank 0: on rank 1 the findings change.
	if got := b.Eval(`String(document.querySelectorAll("[data-tb-issue]").length)`); got == nIssues {
		t.Errorf("after choosing rank 1 the findings did not change (%s issues before and after)", got)
	}
	if s := b.State(); s != "ready" {
		t.Errorf("after the rank change data-viewer-state = %q", s)
	}
	// Back to all ranks, then raise the sync rule's critical threshold: the
	// sync issue drops out of the critical block.
	b.Eval(`(function(){var s=document.querySelector('select[data-tb="rank"]');s.value="";s.dispatchEvent(new Event("change",{bubbles:true}));return "";})()`)
	critBefore := b.Eval(`String(document.querySelectorAll(".tb-issue").length)`)
	b.Eval(`(function(){var i=document.querySelector('input[data-tb-rule="sync_gap_critical"]');i.value="0.9";i.dispatchEvent(new Event("change",{bubbles:true}));return "";})()`)
	if got := b.Eval(`String(document.querySelectorAll(".tb-issue").length)`); got == critBefore {
		t.Errorf("raising sync_gap_critical to 0.9 left %s critical issues", got)
	}
	if got := b.Eval(`document.querySelector('input[data-tb-rule="sync_gap_critical"]').value`); got != "0.9" {
		t.Errorf("the threshold input shows %q after the change, want 0.9", got)
	}
	// Sort the kernels table by count: the header shows the order.
	b.Eval(`(function(){document.querySelector('button[data-tb-sort="kernels"][data-tb-col="count"]').click();return "";})()`)
	if got := b.Eval(`document.querySelector('button[data-tb-sort="kernels"][data-tb-col="count"]').textContent`); !strings.HasSuffix(got, "▼") {
		t.Errorf("after sorting by count the header reads %q, want a ▼", got)
	}
	if s := b.State(); s != "ready" {
		t.Errorf("after the interactions data-viewer-state = %q", s)
	}
	if reqs := b.Requests(path); len(reqs) != 0 {
		t.Errorf("the report made %d requests, want none: %v", len(reqs), reqs)
	}
}

// TestReportInChromiumWithoutModule: a report or a diff page whose module is
// missing says so in the page, naming what it is, and marks itself failed;
// the static content stays.
func TestReportInChromiumWithoutModule(t *testing.T) {
	requireChromium(t)
	none := wasm.Options{Module: []byte{}}
	for _, tc := range []struct {
		kind   string
		write  func(w *bytes.Buffer) error
		static string // a selector the static content matches
	}{
		{"report", func(w *bytes.Buffer) error {
			return wasm.WriteReport(w, buildtest.SampleBundle(t), report.View{}, none)
		}, "#tb-slot h2"},
		{"diff", func(w *bytes.Buffer) error {
			return wasm.WriteDiff(w, buildtest.SampleDiffInput(t), report.View{}, none)
		}, "#tb-slot .tb-diff"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			var page bytes.Buffer
			if err := tc.write(&page); err != nil {
				t.Fatal(err)
			}
			b, _ := openPage(t, tc.kind+".html", page.Bytes())
			if s := b.WaitState("static"); s != "failed" {
				t.Fatalf("data-viewer-state = %q, want failed", s)
			}
			msg := b.Eval(`document.getElementById("tb-status").textContent`)
			if !strings.Contains(msg, "this "+tc.kind+" was written by a tracebook built without the viewer module") ||
				!strings.Contains(msg, "The static "+tc.kind+" below stays readable") {
				t.Errorf("status = %q, want it to say the %s's module is missing", msg, tc.kind)
			}
			if n := b.Eval(`String(document.querySelectorAll("` + tc.static + `").length)`); n == "0" {
				t.Errorf("the static %s is gone", tc.kind)
			}
		})
	}
}
