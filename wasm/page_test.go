package wasm_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/internal/buildtest"
	"github.com/tracebook/tracebook/wasm"
)

func writePage(t *testing.T, module []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := wasm.WriteReport(&b, buildtest.SampleBundle(t), report.View{}, wasm.Options{Module: module}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestWriteReportCSP(t *testing.T) {
	page := writePage(t, []byte{0x1f, 0x8b, 0})
	m := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]+)">`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no Content-Security-Policy meta")
	}
	csp := m[1]
	for _, want := range []string{"default-src 'none'", "'wasm-unsafe-eval'", "connect-src 'none'", "img-src data:"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	// Every executable inline script and every style element is hashed in the CSP.
	scriptSrc := regexp.MustCompile(`script-src [^;]*`).FindString(csp)
	for _, s := range regexp.MustCompile(`(?s)<script>(.*?)</script>`).FindAllStringSubmatch(page, -1) {
		if h := wasm.Hash(s[1]); !strings.Contains(scriptSrc, "'"+h+"'") {
			t.Errorf("inline script hash %s not in script-src of %q", h, csp)
		}
	}
	for _, s := range regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindAllStringSubmatch(page, -1) {
		if h := wasm.Hash(s[1]); !strings.Contains(csp, "style-src '"+h+"'") {
			t.Errorf("style hash %s not in style-src of %q", h, csp)
		}
	}
	if strings.Contains(page, " style=") {
		t.Error("the page has a style attribute, which the CSP blocks")
	}
}

func TestWriteReportEscapes(t *testing.T) {
	page := writePage(t, nil)
	if strings.Contains(page, buildtest.Hostile) || strings.Contains(page, "<img src=x") || strings.Contains(page, "<script>alert") {
		t.Error("a name from the trace reached the page unescaped")
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the hostile name is not shown as text")
	}
}

func TestWriteReportWithoutModule(t *testing.T) {
	page := writePage(t, []byte{})
	if wasm.Module() == nil && !strings.Contains(page, "built without the viewer module") {
		t.Error("a report without the module must say the interactive part is missing")
	}
	if strings.Contains(page, `id="tb-module"`) && wasm.Module() == nil {
		t.Error("a report without a module carries a module element")
	}
}

func TestExtractRoundTrip(t *testing.T) {
	mod := []byte{0x1f, 0x8b, 1, 2, 3}
	page := writePage(t, mod)
	p, err := wasm.Extract([]byte(page))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(p.Bundle, buildtest.SampleBundle(t)) {
		t.Error("Extract: bundle differs from the one written")
	}
	if !bytes.Equal(p.Module, mod) {
		t.Error("Extract: module differs from the one written")
	}
	var frag bytes.Buffer
	if err := report.RenderBundle(&frag, p.Bundle, p.View, report.HTMLFragment); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(frag.Bytes(), p.Static) {
		t.Error("Extract: static fragment differs from the native rendering")
	}
}
