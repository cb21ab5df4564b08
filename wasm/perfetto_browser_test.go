package wasm_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tracebook/tracebook/internal/buildtest"
)

// TestPerfettoSaveInChromium: in the interactive report (the module has
// re-rendered the findings), a click on a finding's Perfetto button makes a
// blob holding exactly the embedded Chrome trace and saves it as
// finding-N-<rule>.json, with no network request.
func TestPerfettoSaveInChromium(t *testing.T) {
	requireChromium(t)
	src := perfettoSource(t)
	b, path := openPage(t, "report.html", perfettoPage(t, src, buildtest.Module(t)))
	downloads := filepath.Join(filepath.Dir(path), "downloads")
	if err := os.MkdirAll(downloads, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := b.page.Call(b.ctx, "Browser.setDownloadBehavior", map[string]any{"behavior": "allow", "downloadPath": downloads}, nil); err != nil {
		t.Fatalf("Browser.setDownloadBehavior: %v", err)
	}
	b.WaitReady("report with its Perfetto lines")
	want := src.Perfetto[0]
	sel := `button[data-tb-perfetto="` + want.Name + `"]`
	if n := b.Eval(`String(document.querySelectorAll('` + sel + `').length)`); n != "1" {
		t.Fatalf("%s buttons for %s in the rendered report, want 1", n, want.Name)
	}
	// Keep the blobs the page makes, then click.
	b.Eval(`(function(){window.tbBlobs=[];var o=URL.createObjectURL;URL.createObjectURL=function(x){window.tbBlobs.push(x);return o.call(URL,x);};return "";})()`)
	b.Eval(`(function(){document.querySelector('` + sel + `').click();return "";})()`)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && b.Eval(`document.querySelector('`+sel+`').getAttribute("data-tb-saved") || ""`) == "" {
		time.Sleep(50 * time.Millisecond)
	}
	if got := b.Eval(`document.querySelector('` + sel + `').getAttribute("data-tb-saved") || ""`); got != want.Name {
		t.Fatalf("data-tb-saved = %q, want %q (note: %q)", got, want.Name, b.Eval(`(document.querySelector("[data-tb-perfetto-note]")||{}).textContent||""`))
	}
	blob := b.Eval(`window.tbBlobs.length === 1 ? window.tbBlobs[0].text() : "blobs: " + window.tbBlobs.length`)
	if blob != string(want.JSON) {
		t.Errorf("the saved blob (%d bytes) is not the embedded file (%d bytes): %.200q", len(blob), len(want.JSON), blob)
	}
	if typ := b.Eval(`window.tbBlobs[0].type`); typ != "application/json" {
		t.Errorf("blob type %q", typ)
	}
	// The browser saved it under its name.
	saved := filepath.Join(downloads, want.Name)
	for time.Now().Before(deadline) {
		if data, err := os.ReadFile(saved); err == nil && len(data) == len(want.JSON) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	data, err := os.ReadFile(saved)
	if err != nil {
		entries, _ := os.ReadDir(downloads)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("no download %s: %v (directory holds %v)", want.Name, err, names)
	}
	if string(data) != string(want.JSON) || !json.Valid(data) {
		t.Errorf("the downloaded file differs from the embedded one")
	}
	// No request left the page (the blob: URL of the download is not one either).
	if reqs := b.Requests(path); len(reqs) != 0 {
		t.Errorf("the report made %d requests, want none: %v", len(reqs), reqs)
	}
}
