package wasm_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/internal/buildtest"
	"github.com/tracebook/tracebook/wasm"
	"github.com/tracebook/tracebook/wasm/host"
)

var (
	blobElement     = regexp.MustCompile(`(<script type="application/octet-stream" id="tb-(?:bundle|module)") data-encoding="gzip\+base85">([^<]*)</script>`)
	perfettoElement = regexp.MustCompile(`(<script type="application/json" id="tb-perfetto-files") data-encoding="gzip\+base85">([^<]*)</script>`)
)

// base64Page rewrites a page as a tracebook from before base85 wrote it:
// each blob (the bundle, the module, the Perfetto files' parts) in
// gzip+base64, so marked.
func base64Page(t *testing.T, page []byte) []byte {
	t.Helper()
	rebase := func(s string) string {
		raw, err := wasm.Base85Decode(s)
		if err != nil {
			t.Fatal(err)
		}
		return base64.StdEncoding.EncodeToString(raw)
	}
	n := 0
	page = blobElement.ReplaceAllFunc(page, func(m []byte) []byte {
		n++
		g := blobElement.FindSubmatch(m)
		return []byte(string(g[1]) + ` data-encoding="gzip+base64">` + rebase(string(g[2])) + "</script>")
	})
	if n == 0 {
		t.Fatal("no gzip+base85 blob in the page")
	}
	return perfettoElement.ReplaceAllFunc(page, func(m []byte) []byte {
		g := perfettoElement.FindSubmatch(m)
		var doc struct {
			Files  map[string][2]string `json:"files"`
			Bodies map[string]string    `json:"bodies"`
		}
		if err := json.Unmarshal(g[2], &doc); err != nil {
			t.Fatal(err)
		}
		for k, f := range doc.Files {
			doc.Files[k] = [2]string{rebase(f[0]), f[1]}
		}
		for k, b := range doc.Bodies {
			doc.Bodies[k] = rebase(b)
		}
		j, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		return []byte(string(g[1]) + ` data-encoding="gzip+base64">` + string(j) + "</script>")
	})
}

// TestPageBlobsAreBase85: the bundle, the module and the Perfetto files are
// marked gzip+base85 and hold only the alphabet's characters, so nothing in
// them can close or comment out their element.
func TestPageBlobsAreBase85(t *testing.T) {
	src := perfettoSource(t)
	page := string(perfettoPage(t, src, []byte{0x1f, 0x8b, 1, 2, 3}))
	for _, id := range []string{"tb-bundle", "tb-module", "tb-perfetto-files"} {
		if !strings.Contains(page, ` id="`+id+`" data-encoding="gzip+base85">`) {
			t.Errorf("#%s is not marked gzip+base85", id)
		}
	}
	if strings.Contains(page, `data-encoding="gzip+base64"`) {
		t.Error("the page still says gzip+base64")
	}
	for _, m := range blobElement.FindAllStringSubmatch(page, -1) {
		if strings.Trim(m[2], wasm.Base85Alphabet) != "" {
			t.Errorf("%s: characters outside the alphabet", m[1])
		}
	}
	m := perfettoElement.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no #tb-perfetto-files")
	}
	var doc struct {
		Files  map[string][2]string `json:"files"`
		Bodies map[string]string    `json:"bodies"`
	}
	if err := json.Unmarshal([]byte(m[2]), &doc); err != nil {
		t.Fatal(err)
	}
	for k, b := range doc.Bodies {
		if strings.Trim(b, wasm.Base85Alphabet) != "" || !strings.Contains(m[2], `"`+b+`"`) {
			t.Errorf("Perfetto body %s: characters outside the alphabet, or escaped in the JSON", k)
		}
	}
}

// TestExtractBase64Page: reports and diffs written before base85 (gzip+base64)
// still read back, Perfetto files included, and `tracebook report --check`
// (host.Check) still passes on them.
func TestExtractBase64Page(t *testing.T) {
	mod := buildtest.Module(t)
	src := perfettoSource(t)
	page := perfettoPage(t, src, mod)
	old := base64Page(t, page)
	if bytes.Contains(old, []byte(`data-encoding="gzip+base85"`)) || !bytes.Contains(old, []byte(`id="tb-perfetto-files" data-encoding="gzip+base64"`)) {
		t.Fatal("base64Page did not rewrite the page")
	}
	want, err := wasm.Extract(page)
	if err != nil {
		t.Fatal(err)
	}
	got, err := wasm.Extract(old)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bundle, want.Bundle) || !bytes.Equal(got.Module, mod) || !bytes.Equal(want.Module, mod) {
		t.Error("the base64 page does not read back as the base85 one")
	}
	files, err := wasm.ExtractPerfetto(old)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range src.Perfetto {
		if !bytes.Equal(files[f.Name], f.JSON) {
			t.Errorf("Perfetto file %s of the base64 page does not read back", f.Name)
		}
	}
	if err := host.Check(context.Background(), old, nil); err != nil {
		t.Errorf("check of the base64 page: %v", err)
	}
	var diffPage bytes.Buffer
	if err := wasm.WriteDiff(&diffPage, buildtest.SampleDiffInput(t), report.View{}, wasm.Options{Module: []byte{0x1f, 0x8b, 9}}); err != nil {
		t.Fatal(err)
	}
	d, err := wasm.ExtractDiff(base64Page(t, diffPage.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(d.Bundle, buildtest.SampleDiffInput(t)) || !bytes.Equal(d.Module, []byte{0x1f, 0x8b, 9}) {
		t.Error("the base64 diff page does not read back")
	}
}
