// Package wasm assembles the offline report: ONE self-contained HTML file
// that holds the report rendered natively (readable without JavaScript), the
// Bundle (msgpack, gzip + base85), the viewer module (gzip + base85) and the small
// loader that instantiates the module from file:// with no network, under a
// Content-Security-Policy that allows only the hashed inline script and style.
// The offline diff (WriteDiff) is the same kind of page around the diff's
// input (both sides' evidence) and the same module.
//
// The module itself is built from wasm/viewer by wasm/build.sh into
// wasm/viewer.wasm.gz and embedded only in a build with the viewer tag
// (module_viewer.go / module_noviewer.go); without it reports are static and
// say what is missing. Running the module under wazero is wasm/host's job.
package wasm

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/tracebook/tracebook/analysis/report"
)

//go:embed loader.js
var loaderJS string

// Loader is the JS loader with its WASI shim, inlined into every report
// (jsCode: without its comment lines).
var Loader = jsCode(loaderJS)

// jsCode is a script as a page inlines it: its lines but the blank ones
// and those that hold only a // comment. Every page carries the scripts;
// their comments are for this repository's readers (3.5 kB a page).
func jsCode(src string) string {
	var b strings.Builder
	for _, line := range strings.Split(src, "\n") {
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "//") {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// Module returns the embedded viewer module (gzip-compressed wasm), or nil
// in a build without the viewer tag.
func Module() []byte { return module }

// ErrNoModule says a build has no viewer module to embed.
var ErrNoModule = errors.New("this tracebook was built without the viewer module: run ./install.sh (wasm/build.sh, then go build -tags viewer)")

// Options tune WriteReport.
type Options struct {
	// Title of the page; the report's title when empty.
	Title string
	// Module overrides the embedded module (gzip-compressed wasm); tests
	// pass one they built. nil = Module().
	Module []byte
	// Perfetto are the findings' Perfetto files (report.Source.Perfetto),
	// embedded for the report's save buttons (perfetto.go); nil = none.
	Perfetto []report.PerfettoFile
}

// Markers around the parts of a written report that Extract reads back.
const (
	staticStart = "<!--tb-static-->"
	staticEnd   = "<!--/tb-static-->"
)

// WriteReport writes the single-file report for bundle (msgpack) and view:
// the fragment rendered natively, then the data and the loader.
func WriteReport(w io.Writer, bundle []byte, view report.View, opt Options) error {
	rp, err := NewReportPage(bundle, view, opt)
	if err != nil {
		return err
	}
	return rp.Write(w, opt.Perfetto)
}

// ReportPage is a report's page drawn but for its Perfetto files: the
// fragment rendered natively and the bundle compressed. Size says how much
// room the page leaves them (perfetto.PageBudget); Write writes it with the
// files that fit, without drawing the rest again.
type ReportPage struct {
	p          page
	head, foot string // the page around its tail (pageParts), drawn once
}

// NewReportPage draws the page WriteReport writes for bundle and view,
// without opt.Perfetto.
func NewReportPage(bundle []byte, view report.View, opt Options) (*ReportPage, error) {
	// The fragment and the bundle's compression do not depend on each
	// other: they are made side by side.
	var frag bytes.Buffer
	var gz []byte
	var gzErr error
	var wg sync.WaitGroup
	wg.Go(func() { gz, gzErr = gzipBytes(bundle) })
	fragErr := report.RenderBundle(&frag, bundle, view, report.HTMLFragment)
	wg.Wait()
	if err := errors.Join(fragErr, gzErr); err != nil {
		return nil, err
	}
	title := opt.Title
	if title == "" {
		title = "tracebook report"
	}
	rp := &ReportPage{p: page{kind: kindReport, noun: "report", title: title, style: report.Style,
		static: frag.Bytes(), view: view, data: bundle, dataGz: gz, module: opt.Module}}
	var err error
	if rp.head, rp.foot, err = pageParts(rp.p); err != nil {
		return nil, err
	}
	return rp, nil
}

// Size is the page's size in bytes with no Perfetto files.
func (rp *ReportPage) Size() (int, error) {
	tail, err := perfettoTail(nil)
	return len(rp.head) + len(tail) + len(rp.foot), err
}

// Write writes the page with files, the findings' Perfetto files.
func (rp *ReportPage) Write(w io.Writer, files []report.PerfettoFile) error {
	tail, err := perfettoTail(files)
	if err != nil {
		return err
	}
	if b, ok := w.(*bytes.Buffer); ok {
		// Once, for the whole page: grown by doubling, a buffer cleared
		// and copied 4 MB more for a 2 MB report.
		b.Grow(len(rp.head) + len(tail) + len(rp.foot))
	}
	for _, s := range []string{rp.head, tail, rp.foot} {
		if _, err := io.WriteString(w, s); err != nil {
			return err
		}
	}
	return nil
}

// The kinds of page, in the root's data-tb-kind: the loader calls the
// module's render for a report and render_diff for a diff.
const (
	kindReport = "report" // no attribute: the pages written before diffs had one
	kindDiff   = "diff"
)

// page is what writePage puts in a single-file page.
type page struct {
	kind   string
	noun   string // "report" or "diff", in the status line
	title  string
	style  string // the one style sheet, hashed in the CSP
	static []byte // the fragment rendered natively for view
	view   report.View
	data   []byte // msgpack: the module's first argument
	dataGz []byte // data gzip-compressed (gzipBytes), where the caller has it
	module []byte // gzip-compressed wasm; nil = Module()
	tail   string // elements before the loader: a report's Perfetto files and their saver
}

// ModuleText is a gzip-compressed module as a page carries it (#tb-module:
// gzip + base85). wasm/build.sh writes the embedded module's beside it
// (wasm/internal/moduletext), which a build with the viewer tag embeds too.
func ModuleText(gz []byte) string { return encodeBlob(gz) }

// embeddedBlob is the embedded module (Module) as a page carries it: the
// text built beside it (moduleText), else encoded here, once per process.
var embeddedBlob = sync.OnceValue(func() string { return blobOf(Module(), moduleText) })

// blobOf is ModuleText(gz), read from text where text is that: of its
// length, and ending with the encoding of gz's last group (the gzip
// trailer: the CRC-32 and size of the wasm). A text left from another
// build of the module is not, and gz is encoded again.
func blobOf(gz []byte, text string) string {
	if len(gz) > 0 && len(text) == base85EncodedLen(len(gz)) &&
		strings.HasSuffix(text, base85Encode(gz[(len(gz)-1)/4*4:])) {
		return text
	}
	return ModuleText(gz)
}

// writePage writes one self-contained page: the static fragment between
// the markers, the view (#tb-view, JSON), the data (#tb-bundle, gzip +
// base85, base85.go), the module (#tb-module, gzip + base85), the tail and
// the loader, under the CSP of the page's style.
func writePage(w io.Writer, p page) error {
	head, foot, err := pageParts(p)
	if err != nil {
		return err
	}
	for _, s := range []string{head, p.tail, foot} {
		if _, err := io.WriteString(w, s); err != nil {
			return err
		}
	}
	return nil
}

// pageParts draws the page writePage writes around its tail: all that
// comes before it (head) and the loader after it (foot).
func pageParts(p page) (head, foot string, err error) {
	mod := p.module
	if mod == nil {
		mod = Module()
	}
	viewJSON, err := json.Marshal(p.view) // escapes <, > and & as \u003c...
	if err != nil {
		return "", "", fmt.Errorf("encoding the view: %w", err)
	}
	kind := ""
	if p.kind != kindReport {
		kind = ` data-tb-kind="` + p.kind + `"`
	}
	gz := p.dataGz
	if gz == nil {
		if gz, err = gzipBytes(p.data); err != nil {
			return "", "", err
		}
	}

	var b strings.Builder
	// The module and the bundle are most of the head: grown once for them,
	// the builder copies neither again (the vLLM report's head is 2.5 MB).
	b.Grow(len(p.static) + base85EncodedLen(len(gz)) + base85EncodedLen(len(mod)) + 64<<10)
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
	b.WriteString(`<meta http-equiv="Content-Security-Policy" content="` + cspFor(p.style) + `">` + "\n")
	b.WriteString(`<meta name="viewport" content="width=device-width, initial-scale=1">` + "\n")
	b.WriteString("<title>" + htmlEscape(p.title) + "</title>\n<style>" + p.style + "</style>\n</head>\n<body>\n")
	b.WriteString(`<div class="tb-page" id="tb-root"` + kind + ` data-viewer-state="static">` + "\n")
	if len(mod) == 0 {
		b.WriteString(`<p class="tb-status" id="tb-status">Static ` + p.noun + `: this tracebook was built without the viewer module, so the controls below are inert. Build it with ./install.sh to get the interactive ` + p.noun + `.</p>` + "\n")
	} else {
		b.WriteString(`<p class="tb-status" id="tb-status">Static ` + p.noun + `, rendered natively. With JavaScript on, the embedded viewer module makes the controls live.</p>` + "\n")
	}
	b.WriteString(`<div id="tb-slot">` + staticStart)
	b.Write(p.static)
	b.WriteString(staticEnd + "</div>\n</div>\n")
	b.WriteString(`<script type="application/json" id="tb-view">` + string(viewJSON) + "</script>\n")
	b.WriteString(`<script type="application/octet-stream" id="tb-bundle" data-encoding="` + encodingBase85 + `">`)
	b.WriteString(encodeBlob(gz))
	b.WriteString("</script>\n")
	if len(mod) > 0 {
		b.WriteString(`<script type="application/octet-stream" id="tb-module" data-encoding="` + encodingBase85 + `">`)
		if p.module == nil {
			b.WriteString(embeddedBlob())
		} else {
			b.WriteString(encodeBlob(mod))
		}
		b.WriteString("</script>\n")
	}
	return b.String(), "<script>" + Loader + "</script>\n</body></html>\n", nil
}

// CSP is the report's Content-Security-Policy: nothing may load, the only
// scripts are the hashed loader (plus WebAssembly compilation) and the
// Perfetto saver, the only style the hashed style sheet.
func CSP() string { return cspFor(report.Style) }

// cspFor is the Content-Security-Policy of a page whose style sheet is style.
func cspFor(style string) string {
	return "default-src 'none'; script-src '" + Hash(Loader) + "' '" + Hash(PerfettoJS) + "' 'wasm-unsafe-eval'; style-src '" + Hash(style) +
		"'; connect-src 'none'; img-src data:; base-uri 'none'; form-action 'none'"
}

// Hash is the CSP source expression of an inline script or style: sha256-<base64>.
func Hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

// Parts are what Extract and ExtractDiff read back from a written page.
type Parts struct {
	Kind   string      // "report" or "diff"
	Static []byte      // the natively rendered fragment
	View   report.View // the view it was rendered for
	Bundle []byte      // msgpack: the report's source or the diff's input
	Module []byte      // gzip-compressed wasm; nil when the page has none
}

// Extract reads the parts of a report that WriteReport wrote.
func Extract(page []byte) (*Parts, error) {
	p, err := extract(page)
	if err != nil {
		return nil, err
	}
	if p.Kind != kindReport {
		return nil, fmt.Errorf("not a tracebook report but a %s page (tracebook %s --check reads it)", p.Kind, p.Kind)
	}
	return p, nil
}

// extract reads the parts of any page that writePage wrote.
func extract(page []byte) (*Parts, error) {
	s := string(page)
	p := Parts{Kind: kindReport}
	i := strings.Index(s, staticStart)
	j := strings.Index(s, staticEnd)
	if i < 0 || j < i {
		return nil, errors.New("not a tracebook report: the static report markers are missing")
	}
	if k := strings.Index(s[:i], `id="tb-root" data-tb-kind="`); k >= 0 {
		rest := s[k+len(`id="tb-root" data-tb-kind="`) : i]
		if e := strings.IndexByte(rest, '"'); e >= 0 {
			p.Kind = rest[:e]
		}
	}
	p.Static = []byte(s[i+len(staticStart) : j])
	viewJSON, ok := scriptText(s, "tb-view")
	if !ok {
		return nil, errors.New("not a tracebook report: the view is missing")
	}
	v, err := report.ParseView([]byte(viewJSON))
	if err != nil {
		return nil, err
	}
	p.View = v
	text, enc, ok := scriptElement(s, "tb-bundle")
	if !ok {
		return nil, errors.New("not a tracebook report: the bundle is missing")
	}
	gz, err := decodeBlob(text, enc)
	if err != nil {
		return nil, fmt.Errorf("decoding the bundle: %w", err)
	}
	if p.Bundle, err = gunzip(gz); err != nil {
		return nil, fmt.Errorf("decompressing the bundle: %w", err)
	}
	if m, enc, ok := scriptElement(s, "tb-module"); ok {
		if p.Module, err = decodeBlob(m, enc); err != nil {
			return nil, fmt.Errorf("decoding the module: %w", err)
		}
	}
	return &p, nil
}

// scriptText returns the text of the <script> element with the given id.
func scriptText(s, id string) (string, bool) {
	text, _, ok := scriptElement(s, id)
	return text, ok
}

// scriptElement returns the text of the <script> element with the given
// id and its data-encoding attribute ("" when it has none).
func scriptElement(s, id string) (text, encoding string, ok bool) {
	i := strings.Index(s, ` id="`+id+`"`)
	if i < 0 {
		return "", "", false
	}
	k := strings.IndexByte(s[i:], '>')
	if k < 0 {
		return "", "", false
	}
	const attr = ` data-encoding="`
	if a := strings.Index(s[i:i+k], attr); a >= 0 {
		rest := s[i+a+len(attr) : i+k]
		if e := strings.IndexByte(rest, '"'); e >= 0 {
			encoding = rest[:e]
		}
	}
	start := i + k + 1
	end := strings.Index(s[start:], "</script>")
	if end < 0 {
		return "", "", false
	}
	return s[start : start+end], encoding, true
}

func gzipBytes(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	return io.ReadAll(zr)
}

func htmlEscape(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")
	return r.Replace(s)
}
