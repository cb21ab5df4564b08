package wasm_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/perfetto"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/internal/buildtest"
	"github.com/tracebook/tracebook/wasm"
)

// perfettoRows builds rows in the shape of sql/perfetto.sql: n kernels
// (named after name(i)) and a sync call, from t0 (ns).
func perfettoRows(t0 int64, n int, name func(i int) string) *table.Table {
	cols := []string{"row_kind", "pid", "tid", "kind", "api", "cat", "name", "label", "sort_index", "ts_ns", "dur_ns",
		"correlation", "external_id", "stream", "device", "bytes", "graph_id", "class", "total", "python", "python_kept"}
	t := &table.Table{Name: "perfetto"}
	for _, c := range cols {
		t.Columns = append(t.Columns, table.Column{Name: c})
	}
	row := func(v map[string]any) {
		r := make([]any, len(cols))
		for i, c := range cols {
			r[i] = v[c]
		}
		t.Rows = append(t.Rows, r)
	}
	row(map[string]any{"row_kind": "origin", "ts_ns": t0, "total": int64(n + 1), "python": int64(0), "python_kept": true})
	row(map[string]any{"row_kind": "event", "pid": "100", "tid": "100", "kind": "runtime", "api": "sync", "cat": "cuda_runtime",
		"name": "cudaStreamSynchronize", "ts_ns": t0 + 1_000_000, "dur_ns": int64(1_200_000)})
	row(map[string]any{"row_kind": "process", "pid": "0", "name": "GPU " + buildtest.Hostile})
	for i := 0; i < n; i++ {
		row(map[string]any{"row_kind": "event", "pid": "0", "tid": "7", "kind": "kernel", "cat": "kernel", "name": name(i),
			"ts_ns": t0 + int64(i)*1_733, "dur_ns": int64(100 + i%977), "correlation": int64(10_000 + i), "stream": int64(7), "class": "COMP"})
	}
	return t
}

// perfettoSource is the sample report's source with the Perfetto windows
// of its findings and their files.
func perfettoSource(t *testing.T) *report.Source {
	t.Helper()
	src, err := report.DecodeSource(buildtest.SampleBundle(t))
	if err != nil {
		t.Fatal(err)
	}
	// The sample has no steps: the windows centre on the longest sync call,
	// clamped to the rank's 5 ms.
	anchors := &table.Table{Columns: []table.Column{{Name: "anchor"}, {Name: "name"}, {Name: "start_ns"}, {Name: "dur_ns"}},
		Rows: [][]any{{"sync", "cudaStreamSynchronize", int64(1_000_000), int64(1_200_000)}}}
	shown := report.ShownFindings(src.Bundle)
	var ins []perfetto.Input
	for _, w := range report.PlanWindows(src.Bundle) {
		report.PlaceAnchor(&w, anchors, 5_000_000)
		src.Windows = append(src.Windows, w)
		ins = append(ins, perfetto.Input{Window: w, Finding: shown[w.N-1],
			Rows: perfettoRows(0, 50, func(i int) string { return "gemm_" + buildtest.Hostile })})
	}
	if len(ins) == 0 {
		t.Fatal("the sample report shows no finding")
	}
	src.Perfetto = perfetto.Files(ins, perfetto.ReportBudget)
	return src
}

// perfettoPage writes the single-file report of src with its files.
func perfettoPage(t *testing.T, src *report.Source, mod []byte) []byte {
	t.Helper()
	data, err := report.EncodeOffline(src)
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := wasm.WriteReport(&page, data, report.View{}, wasm.Options{Module: mod, Perfetto: src.Perfetto}); err != nil {
		t.Fatal(err)
	}
	return page.Bytes()
}

func TestPerfettoEmbedded(t *testing.T) {
	src := perfettoSource(t)
	page := perfettoPage(t, src, []byte{0x1f, 0x8b, 0})
	got, err := wasm.ExtractPerfetto(page)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(src.Perfetto) {
		t.Fatalf("%d files read back, %d written", len(got), len(src.Perfetto))
	}
	for _, f := range src.Perfetto {
		if !bytes.Equal(got[f.Name], f.JSON) {
			t.Errorf("file %s differs after the round trip", f.Name)
		}
		if !json.Valid(got[f.Name]) {
			t.Errorf("file %s is not valid JSON", f.Name)
		}
	}
	s := string(page)
	if !strings.Contains(s, "'"+wasm.Hash(wasm.PerfettoJS)+"'") {
		t.Error("the CSP does not list the Perfetto saver's hash")
	}
	// Each shown issue with a window has its button and its window in words
	// in the static report (no JavaScript needed to know where to look).
	for _, w := range src.Windows {
		if !strings.Contains(s, `data-tb-perfetto="`+w.File+`"`) {
			t.Errorf("no button for %s", w.File)
		}
	}
	if !regexp.MustCompile(`Open in Perfetto: trace sample, rank 0, no steps, 0\.000 ms \.\. 5\.000 ms from the trace start`).MatchString(s) {
		t.Errorf("the static report does not name the window: %q", regexp.MustCompile(`Open in Perfetto: [^;]*`).FindAllString(s, -1))
	}
	if strings.Contains(s, buildtest.Hostile) {
		t.Error("a hostile name reached the page unescaped")
	}
	// Without files the saver is still there (a button then says the file
	// is not embedded), and no data element.
	bare := perfettoPage(t, &report.Source{Bundle: src.Bundle, Windows: src.Windows}, []byte{0x1f, 0x8b, 0})
	if bytes.Contains(bare, []byte(`id="tb-perfetto-files"`)) || !bytes.Contains(bare, []byte(wasm.PerfettoJS)) {
		t.Error("a report without files: want the saver and no data element")
	}
}

func TestPerfettoJSIsInlineSafe(t *testing.T) {
	js := wasm.PerfettoJS
	if strings.Contains(strings.ToLower(js), "</script") || strings.Contains(js, "<!--") {
		t.Error("perfetto.js must not contain </script or <!-- (it is inlined in a <script> element)")
	}
	for _, banned := range []string{"fetch(", "XMLHttpRequest", "WebSocket", "import(", "eval(", "sendBeacon", "window.open"} {
		if strings.Contains(js, banned) {
			t.Errorf("perfetto.js contains %q: the report must not reach the network or evaluate strings", banned)
		}
	}
}

// TestReportSizeWithPerfetto: the 8-rank, 1,000-step report stays under
// 3 MB with five findings' Perfetto files cut to the report's budget, each
// from a window that compresses badly.
func TestReportSizeWithPerfetto(t *testing.T) {
	mod := buildtest.Module(t)
	src := &report.Source{Bundle: buildtest.SyntheticBundle(8, 1000)}
	rules := []string{"sync_bound_loop", "host_bound_idle", "launch_bound", "rank_straggler", "pageable_copies"}
	var ins []perfetto.Input
	for i, rule := range rules {
		w := report.Window{N: i + 1, File: report.FileName(i+1, rule), Rule: rule, Trace: "synthetic", Rank: i, Step: 500,
			FirstStep: 499, LastStep: 501, StartNs: 1_000_000_000, EndNs: 1_030_000_000, FocusStartNs: 1_010_000_000, FocusEndNs: 1_020_000_000,
			Basis: "step 500", Placed: true}
		in := perfetto.Input{Window: w, Rows: perfettoRows(1_700_000_000_000_000_000, perfetto.DefaultMaxEvents, func(k int) string {
			h := fnv.New64a()
			fmt.Fprintf(h, "%d/%d", i, k)
			return fmt.Sprintf("kernel_%x_%x", h.Sum64(), h.Sum64()>>7)
		})}
		// Each finding's timeline too, at its largest: every lane the
		// timeline keeps, each with as many spans as it keeps. The window
		// of the finding the report shows is on its rank, so that its
		// timeline is drawn in the page.
		w.Timeline = fullTimeline(w.EndNs - w.StartNs)
		if pw := report.PlanWindows(src.Bundle); len(pw) > 0 && pw[0].Rule == rule {
			w.Trace, w.Rank = pw[0].Trace, pw[0].Rank
		}
		in.Window = w
		src.Windows = append(src.Windows, w)
		ins = append(ins, in)
	}
	// As the CLI does: the files take what the page without them leaves.
	bare := perfettoPage(t, src, mod)
	src.Perfetto = perfetto.Files(ins, perfetto.PageBudget(len(bare)))
	page := perfettoPage(t, src, mod)
	var files int
	for _, f := range src.Perfetto {
		files += len(f.JSON)
	}
	// The bare page of this worst case is itself about 3 MB (3.003 MB
	// with a 1.706 MB module, 3.008 with a 1.724 MB one, 3.011 with a
	// 1.732 MB one): the files may add at most 1.5% to it.
	const limit = 3_070_000
	t.Logf("8 ranks x 1000 steps with %d Perfetto files (%d bytes of JSON, budget %d bytes gzip): report %d bytes (%d without the files)",
		len(src.Perfetto), files, perfetto.PageBudget(len(bare)), len(page), len(bare))
	if len(page) > limit {
		t.Errorf("report is %d bytes, want at most %d", len(page), limit)
	}
	for _, f := range src.Perfetto {
		var head struct {
			Tracebook struct {
				Capped bool   `json:"capped"`
				Note   string `json:"note"`
			} `json:"tracebook"`
		}
		if err := json.Unmarshal(f.JSON, &head); err != nil {
			t.Fatal(err)
		}
		if !head.Tracebook.Capped || !strings.Contains(head.Tracebook.Note, "size budget") {
			t.Errorf("%s: a file cut to the budget must say so: %q", f.Name, head.Tracebook.Note)
		}
	}
}

// fullTimeline is the largest timeline a window of length ns can carry:
// report.MaxHostLanes host and report.MaxGPULanes GPU lanes and the
// finding's marks, each with report.MaxSpans spans of alternating kinds.
func fullTimeline(ns int64) *report.Timeline {
	spans := func(kinds ...report.SpanKind) []report.Span {
		out := make([]report.Span, report.MaxSpans)
		step := ns / int64(report.MaxSpans)
		for i := range out {
			out[i] = report.Span{StartNs: int64(i) * step, DurNs: step / 2, Kind: kinds[i%len(kinds)]}
		}
		return out
	}
	tl := &report.Timeline{Marks: spans(report.SpanMark), MarkWhat: "the host waits in this call",
		HostLanes: report.MaxHostLanes, GPULanes: report.MaxGPULanes, Events: 20000, InWindow: 20000}
	for i := 0; i < report.MaxHostLanes; i++ {
		tl.Lanes = append(tl.Lanes, report.TimelineLane{Name: fmt.Sprintf("python3 %s (thread %d)", buildtest.Hostile, 100+i), BusyNs: ns / 2,
			Spans: spans(report.SpanHostOp, report.SpanLaunch, report.SpanSync)})
	}
	for i := 0; i < report.MaxGPULanes; i++ {
		tl.Lanes = append(tl.Lanes, report.TimelineLane{Name: fmt.Sprintf("GPU 0 stream %d", 7+i), GPU: true, BusyNs: ns / 2,
			Spans: spans(report.SpanCompute, report.SpanComm, report.SpanMem)})
	}
	return tl
}

// Findings on one window share one stored body; each file reads back whole.
func TestPerfettoSharedBody(t *testing.T) {
	src := perfettoSource(t)
	rows := perfettoRows(0, 200, func(i int) string { return "gemm" })
	var ins []perfetto.Input
	for i, rule := range []string{"sync_bound_loop", "host_bound_idle", "launch_bound"} {
		w := report.Window{N: i + 1, File: report.FileName(i+1, rule), Rule: rule, Trace: "sample", Rank: 0,
			Step: -1, FirstStep: -1, LastStep: -1, EndNs: 5_000_000, FocusEndNs: 1_000_000, Placed: true}
		ins = append(ins, perfetto.Input{Window: w, Rows: rows})
	}
	src.Perfetto = perfetto.Files(ins, perfetto.ReportBudget)
	page := perfettoPage(t, src, []byte{0x1f, 0x8b, 0})
	m := regexp.MustCompile(`<script type="application/json" id="tb-perfetto-files"[^>]*>(.*?)</script>`).FindSubmatch(page)
	if m == nil {
		t.Fatal("no #tb-perfetto-files")
	}
	var doc struct {
		Files  map[string][2]string `json:"files"`
		Bodies map[string]string    `json:"bodies"`
	}
	if err := json.Unmarshal(m[1], &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Files) != 3 || len(doc.Bodies) != 1 {
		t.Errorf("%d files, %d bodies: want 3 files sharing 1 body", len(doc.Files), len(doc.Bodies))
	}
	got, err := wasm.ExtractPerfetto(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range src.Perfetto {
		if !bytes.Equal(got[f.Name], f.JSON) {
			t.Errorf("%s does not read back whole", f.Name)
		}
	}
}
