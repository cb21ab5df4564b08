package wasm_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/diff"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/internal/buildtest"
	"github.com/tracebook/tracebook/wasm"
)

func writeDiffPage(t *testing.T, view report.View, module []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := wasm.WriteDiff(&b, buildtest.SampleDiffInput(t), view, wasm.Options{Module: module}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The diff page is a report page around the diff: its CSP hashes its
// every script and style, nothing from the traces reaches it unescaped, and
// Extract reads back what was written.
func TestWriteDiff(t *testing.T) {
	view := report.View{Filter: evidence.Filter{Phase: "decode"}}
	page := writeDiffPage(t, view, []byte{0x1f, 0x8b, 0})
	m := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]+)">`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no Content-Security-Policy meta")
	}
	csp := m[1]
	if csp != wasm.DiffCSP() {
		t.Errorf("CSP = %q, want DiffCSP() %q", csp, wasm.DiffCSP())
	}
	for _, want := range []string{"default-src 'none'", "'wasm-unsafe-eval'", "connect-src 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	for _, s := range regexp.MustCompile(`(?s)<script>(.*?)</script>`).FindAllStringSubmatch(page, -1) {
		if h := wasm.Hash(s[1]); !strings.Contains(csp, "'"+h+"'") {
			t.Errorf("inline script hash %s not in %q", h, csp)
		}
	}
	styles := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindAllStringSubmatch(page, -1)
	if len(styles) != 1 || styles[0][1] != diff.Style || !strings.Contains(csp, "style-src '"+wasm.Hash(diff.Style)+"'") {
		t.Errorf("the page's style is not the diff's hashed style sheet (%d style elements)", len(styles))
	}
	if strings.Contains(page, " style=") {
		t.Error("the page has a style attribute, which the CSP blocks")
	}
	if strings.Contains(page, buildtest.Hostile) || strings.Contains(page, "<img src=x") {
		t.Error("a name from the traces reached the page unescaped")
	}
	if !strings.Contains(page, `id="tb-root" data-tb-kind="diff" data-viewer-state="static"`) {
		t.Error("the root does not say it is a diff page")
	}
	p, err := wasm.ExtractDiff([]byte(page))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(p.Bundle, buildtest.SampleDiffInput(t)) || p.View.Filter.Phase != "decode" || p.Kind != "diff" {
		t.Errorf("ExtractDiff: kind %q, view %+v, input of %d bytes: not what was written", p.Kind, p.View, len(p.Bundle))
	}
	var native bytes.Buffer
	if err := diff.RenderInput(&native, p.Bundle, view, diff.HTMLFragment); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(native.Bytes(), p.Static) {
		t.Error("the static diff is not the native rendering of the input for the view")
	}
	if !strings.Contains(string(p.Static), `<option value="decode" selected>decode</option>`) {
		t.Error("the static diff does not show the view's phase as chosen")
	}
	if _, err := wasm.Extract([]byte(page)); err == nil {
		t.Error("Extract(diff page) = nil error, want it refused as a report")
	}
	if static := writeDiffPage(t, report.View{}, []byte{}); !strings.Contains(static, "Static diff: this tracebook was built without the viewer module") {
		t.Error("a diff page without the module does not say so")
	}
}
