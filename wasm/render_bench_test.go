package wasm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/internal/buildtest"
	"github.com/tracebook/tracebook/internal/testutil"
	"github.com/tracebook/tracebook/wasm"
	"github.com/tracebook/tracebook/wasm/host"
	"github.com/tracebook/tracebook/wasm/internal/cdp"
)

// The viewer's speed, measured on three reports: the sample bundle, the
// synthetic 8-rank x 1,000-step job (compacted as `tracebook report` writes
// it) and the shared 48 MB vLLM trace (run through `tracebook report`).
// "first" is the first rendering of a report (decode the bundle, roll it
// up, render: under wazero load_bundle then render_view, as the page
// does); "load" is load_bundle alone; "rerank" is the rendering after the
// rank filter changes, in a viewer that has already rendered the first view. Run with
//
//	go test ./wasm -run XXX -bench Render -benchtime 5x
//	go test ./wasm -run XXX -bench Chromium -benchtime 3x
//
// Nothing here asserts a time: the figures are benchmark metrics.

type renderCase struct {
	name   string
	bundle []byte      // report.EncodeOffline / what the page carries
	first  report.View // the view the report was written for
	rerank report.View // the same view with the rank filter changed
}

var (
	casesMu sync.Mutex
	cases   = map[string]*renderCase{}
)

// benchCases returns the sample, the synthetic 8x1000 and (when the shared
// traces are present) the vLLM report, each built once per test binary.
func benchCases(b *testing.B) []*renderCase {
	b.Helper()
	casesMu.Lock()
	defer casesMu.Unlock()
	get := func(name string, mk func() ([]byte, report.View)) *renderCase {
		if c := cases[name]; c != nil {
			return c
		}
		data, v := mk()
		c := &renderCase{name: name, bundle: data, first: v, rerank: v}
		c.rerank.Filter.HasRank, c.rerank.Filter.Rank = true, lastRank(b, data)
		cases[name] = c
		return c
	}
	out := []*renderCase{
		get("sample", func() ([]byte, report.View) { return buildtest.SampleBundle(b), report.View{} }),
		get("synthetic8x1000", func() ([]byte, report.View) {
			data, err := report.EncodeOffline(&report.Source{Bundle: buildtest.SyntheticBundle(8, 1000)})
			if err != nil {
				b.Fatal(err)
			}
			return data, report.View{}
		}),
	}
	if c := cases["vllm"]; c != nil {
		return append(out, c)
	}
	page := buildtest.VLLMReport(b)
	if page == nil {
		b.Logf("the shared vLLM trace (%s) is absent: measuring without it", buildtest.VLLMTrace)
		return out
	}
	p, err := wasm.Extract(page)
	if err != nil {
		b.Fatal(err)
	}
	return append(out, get("vllm", func() ([]byte, report.View) { return p.Bundle, p.View }))
}

// lastRank returns the highest rank of an encoded source's traces.
func lastRank(tb testing.TB, data []byte) int {
	src, err := report.DecodeSource(data)
	if err != nil {
		tb.Fatal(err)
	}
	r := 0
	for i := range src.Bundle.Traces.Rows {
		if x := int(evidence.Int(src.Bundle.Traces, i, "rank")); x > r {
			r = x
		}
	}
	return r
}

func viewJSON(tb testing.TB, v report.View) []byte {
	vj, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return vj
}

// measure runs b.N rounds of setup (untimed) and the work it returns
// (timed), and reports the work's CPU time besides the wall time: on a
// shared machine the CPU time moves less with the other load.
func measure(b *testing.B, setup func() (work, done func())) {
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		work, done := setup()
		c0 := testutil.CPUTime()
		b.StartTimer()
		work()
		b.StopTimer()
		cpu += testutil.CPUTime() - c0
		if done != nil {
			done()
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// BenchmarkRender times the report's rendering natively and in the module
// under wazero.
func BenchmarkRender(b *testing.B) {
	cs := benchCases(b)
	for _, c := range cs {
		b.Run("native/"+c.name+"/first", func(b *testing.B) {
			b.ReportAllocs()
			measure(b, func() (func(), func()) {
				return func() {
					var out bytes.Buffer
					if err := report.RenderBundle(&out, c.bundle, c.first, report.HTMLFragment); err != nil {
						b.Fatal(err)
					}
				}, nil
			})
		})
		b.Run("native/"+c.name+"/rerank", func(b *testing.B) {
			b.ReportAllocs()
			src, err := report.DecodeSource(c.bundle)
			if err != nil {
				b.Fatal(err)
			}
			measure(b, func() (func(), func()) {
				// A Source of its own keeps no rollup from the last round.
				s := &report.Source{Bundle: src.Bundle, CrossViews: src.CrossViews}
				var out bytes.Buffer
				if err := report.GenerateView(&out, s, c.first, report.HTMLFragment); err != nil {
					b.Fatal(err)
				}
				return func() {
					out.Reset()
					if err := report.GenerateView(&out, s, c.rerank, report.HTMLFragment); err != nil {
						b.Fatal(err)
					}
				}, nil
			})
		})
	}
	ctx := context.Background()
	mod := buildtest.Module(b)
	start := time.Now()
	v, err := host.New(ctx, mod)
	if err != nil {
		b.Fatal(err)
	}
	v.Close(ctx)
	b.Logf("wazero: compiling and instantiating the module (%d bytes gzip) took %v", len(mod), time.Since(start))
	b.Run("wazero/instantiate", func(b *testing.B) {
		measure(b, func() (func(), func()) {
			return func() {
				v, err := host.New(ctx, mod)
				if err != nil {
					b.Fatal(err)
				}
				v.Close(ctx)
			}, nil
		})
	})
	newViewer := func(b *testing.B) *host.Viewer {
		v, err := host.New(ctx, mod)
		if err != nil {
			b.Fatal(err)
		}
		return v
	}
	for _, c := range cs {
		first, rerank := viewJSON(b, c.first), viewJSON(b, c.rerank)
		load := func(b *testing.B, v *host.Viewer) {
			if err := v.Load(ctx, c.bundle); err != nil {
				b.Fatal(err)
			}
		}
		render := func(b *testing.B, v *host.Viewer, view []byte) {
			if _, err := v.RenderView(ctx, view); err != nil {
				b.Fatal(err)
			}
		}
		b.Run("wazero/"+c.name+"/load", func(b *testing.B) {
			measure(b, func() (func(), func()) {
				v := newViewer(b)
				return func() { load(b, v) }, func() { v.Close(ctx) }
			})
		})
		b.Run("wazero/"+c.name+"/first", func(b *testing.B) {
			measure(b, func() (func(), func()) {
				v := newViewer(b)
				return func() {
					load(b, v)
					render(b, v, first)
				}, func() { v.Close(ctx) }
			})
		})
		b.Run("wazero/"+c.name+"/rerank", func(b *testing.B) {
			measure(b, func() (func(), func()) {
				v := newViewer(b)
				load(b, v)
				render(b, v, first)
				return func() { render(b, v, rerank) }, func() { v.Close(ctx) }
			})
		})
	}
}

// readyProbe runs before any script of the page: it records when the
// root's data-viewer-state first becomes "ready" (ms since navigation
// start).
const readyProbe = `(function(){
  new MutationObserver(function(){
    var r = document.getElementById("tb-root");
    if (r && r.getAttribute("data-viewer-state") === "ready" && window.__tbReady === undefined) window.__tbReady = performance.now();
  }).observe(document, {subtree: true, attributes: true, attributeFilter: ["data-viewer-state"]});
})()`

// rerankProbe changes the rank select to its last option and returns the
// ms until the re-rendered report is laid out and the state is ready again.
const rerankProbe = `(async function(){
  var s = document.querySelector('select[data-tb="rank"]');
  var t0 = performance.now();
  s.value = s.options[s.options.length - 1].value;
  s.dispatchEvent(new Event("change", {bubbles: true}));
  var root = document.getElementById("tb-root");
  while (root.getAttribute("data-viewer-state") !== "ready") await new Promise(function(r){ setTimeout(r, 1); });
  document.body.getBoundingClientRect();
  return performance.now() - t0;
})()`

// pageState is what the benchmark polls in the page.
type pageState struct {
	State  string   `json:"s"` // data-viewer-state
	Ready  float64  `json:"t"` // readyProbe's time, ms
	Marks  [][2]any `json:"m"` // the loader's tb:* marks: name, ms
	Status string   `json:"e"` // #tb-status
}

const pageStateJS = `JSON.stringify({
  s: (document.getElementById("tb-root") || {getAttribute() { return ""; }}).getAttribute("data-viewer-state"),
  t: window.__tbReady || 0,
  m: performance.getEntriesByType("mark").filter(function (m) { return m.name.indexOf("tb:") === 0; }).map(function (m) { return [m.name, m.startTime]; }),
  e: (document.getElementById("tb-status") || {}).textContent
})`

// cpuTimes returns the page's main-thread and renderer-process CPU time in
// ms (the DevTools Performance domain's ThreadTime, which counts from the
// last navigation, and ProcessTime, which counts from the process start).
func cpuTimes(ctx context.Context, b *testing.B, page *cdp.Conn) (thread, process float64) {
	var res struct {
		Metrics []struct {
			Name  string  `json:"name"`
			Value float64 `json:"value"`
		} `json:"metrics"`
	}
	if err := page.Call(ctx, "Performance.getMetrics", nil, &res); err != nil {
		b.Fatal(err)
	}
	for _, m := range res.Metrics {
		switch m.Name {
		case "ThreadTime":
			thread = m.Value * 1000
		case "ProcessTime":
			process = m.Value * 1000
		}
	}
	return thread, process
}

// BenchmarkChromium opens each report from file:// in headless Chromium
// and reports the ms from navigation start to data-viewer-state="ready"
// (ready-ms) and the CPU time the page's main thread and its renderer
// process spent on the way (ready-thread-ms, ready-process-ms: on a shared
// machine these move less with the other load), the same for one
// re-render after a rank change (rerank-*), and the loader's own marks
// (performance.mark "tb:NAME", as NAME-ms).
func BenchmarkChromium(b *testing.B) {
	requireChromium(b)
	bin := cdp.Find()
	cs := benchCases(b)
	mod := buildtest.Module(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	profile, err := os.MkdirTemp("", "tracebook-chromium-")
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		for i := 0; i < 20 && os.RemoveAll(profile) != nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	}()
	br, err := cdp.Start(ctx, bin, profile)
	if err != nil {
		b.Fatal(err)
	}
	defer br.Close()
	page, err := br.Page()
	if err != nil {
		b.Fatal(err)
	}
	defer page.Close()
	for _, m := range []string{"Page.enable", "Runtime.enable", "Performance.enable"} {
		if err := page.Call(ctx, m, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
	if err := page.Call(ctx, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": readyProbe}, nil); err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	for _, c := range cs {
		var html bytes.Buffer
		if err := wasm.WriteReport(&html, c.bundle, c.first, wasm.Options{Module: mod}); err != nil {
			b.Fatal(err)
		}
		path := filepath.Join(dir, c.name+".html")
		if err := os.WriteFile(path, html.Bytes(), 0o644); err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			sums := map[string]float64{}
			for i := 0; i < b.N; i++ {
				_, process0 := cpuTimes(ctx, b, page)
				if err := page.Call(ctx, "Page.navigate", map[string]any{"url": "file://" + path}, nil); err != nil {
					b.Fatal(err)
				}
				deadline := time.Now().Add(2 * time.Minute)
				var st pageState
				for {
					raw, err := page.Eval(ctx, pageStateJS)
					if err != nil {
						b.Fatal(err)
					}
					var text string
					if err := json.Unmarshal(raw, &text); err != nil {
						b.Fatalf("page state: %s", raw)
					}
					st = pageState{}
					if err := json.Unmarshal([]byte(text), &st); err != nil {
						b.Fatalf("page state: %s", text)
					}
					if st.State == "failed" {
						b.Fatalf("the viewer failed: %s", st.Status)
					}
					if st.State == "ready" && st.Ready > 0 {
						break
					}
					if time.Now().After(deadline) {
						b.Fatalf("data-viewer-state stayed %q", st.State)
					}
					time.Sleep(20 * time.Millisecond)
				}
				thread1, process1 := cpuTimes(ctx, b, page)
				sums["ready-ms"] += st.Ready
				sums["ready-thread-ms"] += thread1 // counted from the navigation
				sums["ready-process-ms"] += process1 - process0
				for _, m := range st.Marks {
					name, _ := m[0].(string)
					at, _ := m[1].(float64)
					sums[strings.TrimPrefix(name, "tb:")+"-ms"] += at
				}
				raw, err := page.Eval(ctx, rerankProbe)
				if err != nil {
					b.Fatal(err)
				}
				var rr float64
				if err := json.Unmarshal(raw, &rr); err != nil {
					b.Fatalf("rerank probe returned %s", raw)
				}
				thread2, process2 := cpuTimes(ctx, b, page)
				sums["rerank-ms"] += rr
				sums["rerank-thread-ms"] += thread2 - thread1
				sums["rerank-process-ms"] += process2 - process1
			}
			for name, v := range sums {
				b.ReportMetric(v/float64(b.N), name)
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}
