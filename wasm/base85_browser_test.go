package wasm_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/internal/buildtest"
	"github.com/tracebook/tracebook/wasm"
)

// loaderBase85 is the source of the loader's base85 decoder: from its
// alphabet to the end of function base85.
func loaderBase85(t *testing.T, js string) string {
	t.Helper()
	i := strings.Index(js, "  var B85 = ")
	end := "    return out.subarray(0, at);\n  }\n"
	j := strings.Index(js, end)
	if i < 0 || j < i {
		t.Fatal("no base85 decoder (var B85 ... function base85) in the script")
	}
	return js[i : j+len(end)]
}

// TestPerfettoJSDecodesAsLoader: perfetto.js has no base85 decoder of its
// own: it uses the loader's, and the loader's alphabet is base85.go's.
func TestPerfettoJSDecodesAsLoader(t *testing.T) {
	if strings.Contains(wasm.PerfettoJS, "var B85") || !strings.Contains(wasm.PerfettoJS, "window.tracebookBase85(") {
		t.Error("perfetto.js must decode with the loader's base85 (window.tracebookBase85), not a copy")
	}
	if !strings.Contains(wasm.Loader, "window.tracebookBase85 = base85;") {
		t.Error("loader.js does not expose its base85 decoder")
	}
	if !strings.Contains(wasm.Loader, `var B85 = "`+wasm.Base85Alphabet+`";`) {
		t.Error("loader.js's alphabet is not base85.go's")
	}
}

// fnv32 is the FNV-1a hash the browser test computes on both sides.
func fnv32(b []byte) uint32 {
	h := uint32(2166136261)
	for _, c := range b {
		h = (h ^ uint32(c)) * 16777619
	}
	return h
}

// TestBase85InChromium: the loader's decoder, run in Chromium, decodes what
// base85.go encodes (the vectors, every length up to 41, a 2 MB blob read
// from an element as the loader reads one), rejects what base85.go rejects,
// and decodes the 2 MB blob in well under 100 ms.
func TestBase85InChromium(t *testing.T) {
	requireChromium(t)
	r := rand.New(rand.NewSource(85))
	big := make([]byte, 2<<20)
	r.Read(big)
	var page bytes.Buffer
	if err := wasm.WriteReport(&page, buildtest.SampleBundle(t), report.View{}, wasm.Options{Module: []byte{}}); err != nil {
		t.Fatal(err)
	}
	// The blob goes before the loader, which marks the page failed (it has
	// no module) only once the parser has read the blob whole.
	html := strings.Replace(page.String(), "<body>\n",
		"<body>\n"+`<script type="application/octet-stream" id="tb-test-blob" data-encoding="gzip+base85">`+wasm.Base85Encode(big)+"</script>\n", 1)
	b, _ := openPage(t, "base85.html", []byte(html))
	if s := b.WaitState("static"); s != "failed" {
		t.Fatalf("data-viewer-state = %q, want failed (the page has no module)", s)
	}
	dec := loaderBase85(t, wasm.Loader)
	hexOf := "function hex(u){var s='';for(var i=0;i<u.length;i++)s+=(u[i]<16?'0':'')+u[i].toString(16);return s;}"
	run := func(body string) string {
		return b.Eval("(function(){\"use strict\";\n" + dec + hexOf + "\n" + body + "\n})()")
	}
	var cases []string
	var want []string
	add := func(raw []byte) {
		cases = append(cases, wasm.Base85Encode(raw))
		want = append(want, hex.EncodeToString(raw))
	}
	for n := 0; n <= 41; n++ {
		raw := make([]byte, n)
		r.Read(raw)
		add(raw)
		add(bytes.Repeat([]byte{0xff}, n))
	}
	add([]byte("\x86\x4f\xd2\x6f\xb5\x59\xf7\x5b"))
	in, _ := json.Marshal(cases)
	got := run("var c=" + string(in) + ",o=[];for(var i=0;i<c.length;i++)o.push(hex(base85(c[i])));return JSON.stringify(o);")
	var out []string
	if err := json.Unmarshal([]byte(got), &out); err != nil {
		t.Fatalf("%v: %.300s", err, got)
	}
	for i := range want {
		if i >= len(out) || out[i] != want[i] {
			t.Errorf("JS base85(%q) = %q, want %q", cases[i], out[min(i, len(out)-1)], want[i])
		}
	}
	for _, ws := range []string{" Hel\tlo\r\nWor ld\f", "HelloWor\nld", "HelloWorld "} {
		q, _ := json.Marshal(ws)
		if got := run(`return hex(base85(` + string(q) + `));`); got != "864fd26fb559f75b" {
			t.Errorf("JS base85(%q) = %q, want 864fd26fb559f75b", ws, got)
		}
	}
	for _, bad := range []string{"0", "00000a", "%nSc1", "#####", "%nSd", "Hello<orld", "Hello,orld", "HelloWorl\u00e9"} {
		if _, err := wasm.Base85Decode(bad); err == nil {
			t.Fatalf("base85.go accepts %q", bad)
		}
		q, _ := json.Marshal(bad)
		if got := run("try{base85(" + string(q) + ");return 'accepted';}catch(e){return 'threw';}"); got != "threw" {
			t.Errorf("JS base85(%q) %s, want it to throw as base85.go fails", bad, got)
		}
	}
	// The 2 MB blob, from the element's text as the loader reads it: the
	// best of five runs.
	res := run(`var text=document.getElementById("tb-test-blob").textContent,best=1e9,u;
for(var k=0;k<5;k++){var t0=performance.now();u=base85(text);best=Math.min(best,performance.now()-t0);}
var h=2166136261;for(var i=0;i<u.length;i++)h=Math.imul(h^u[i],16777619)>>>0;
return JSON.stringify({n:u.length,h:h,ms:best});`)
	var m struct {
		N  int     `json:"n"`
		H  uint32  `json:"h"`
		MS float64 `json:"ms"`
	}
	if err := json.Unmarshal([]byte(res), &m); err != nil {
		t.Fatalf("%v: %s", err, res)
	}
	if m.N != len(big) || m.H != fnv32(big) {
		t.Errorf("JS decoded the 2 MB blob to %d bytes, hash %08x; want %d, %08x", m.N, m.H, len(big), fnv32(big))
	}
	t.Logf("JS base85: %d bytes decoded in %.1f ms (best of 5)", m.N, m.MS)
	if m.MS > 100 {
		t.Errorf("JS base85 took %.1f ms for 2 MB, want well under 100 ms", m.MS)
	}
}

// TestBase64ReportInChromium: a report written before base85 (its blobs in
// gzip+base64) still becomes interactive, and its Perfetto files still
// save.
func TestBase64ReportInChromium(t *testing.T) {
	requireChromium(t)
	src := perfettoSource(t)
	b, path := openPage(t, "old-report.html", base64Page(t, perfettoPage(t, src, buildtest.Module(t))))
	b.WaitReady("report written in gzip+base64")
	want := src.Perfetto[0]
	sel := `button[data-tb-perfetto="` + want.Name + `"]`
	b.Eval(`(function(){window.tbBlobs=[];var o=URL.createObjectURL;URL.createObjectURL=function(x){window.tbBlobs.push(x);return o.call(URL,x);};return "";})()`)
	b.Eval(`(function(){document.querySelector('` + sel + `').click();return "";})()`)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && b.Eval(`document.querySelector('`+sel+`').getAttribute("data-tb-saved") || ""`) == "" {
		time.Sleep(50 * time.Millisecond)
	}
	if got := b.Eval(`document.querySelector('` + sel + `').getAttribute("data-tb-saved") || ""`); got != want.Name {
		t.Fatalf("data-tb-saved = %q, want %q (note: %q)", got, want.Name, b.Eval(`(document.querySelector("[data-tb-perfetto-note]")||{}).textContent||""`))
	}
	if blob := b.Eval(`window.tbBlobs.length === 1 ? window.tbBlobs[0].text() : "blobs: " + window.tbBlobs.length`); blob != string(want.JSON) {
		t.Errorf("the saved blob (%d bytes) is not the embedded file (%d bytes)", len(blob), len(want.JSON))
	}
	if reqs := b.Requests(path); len(reqs) != 0 {
		t.Errorf("the report made %d requests, want none: %v", len(reqs), reqs)
	}
}
