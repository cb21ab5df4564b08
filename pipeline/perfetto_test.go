//go:build cgo

package pipeline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/perfetto"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/internal/duck"
	"github.com/tracebook/tracebook/pipeline"
	"github.com/tracebook/tracebook/sql"
)

// base is where the planted traces start, in microseconds (Kineto writes
// epoch-like timestamps).
const base = 1_700_000_000_000.0

// plantedSteps writes five 9.8 ms training steps, 10 ms apart, whose ten
// GEMMs keep the GPU busy; in step 3 the GEMMs are short and a .item()
// blocks the host: a 5 ms cudaStreamSynchronize drains the GPU (its last
// GEMM ends 3.1 ms into the step), which then idles 5.1 ms until the next
// kernel. Step 1 has a short sync of its own that opens no gap. With steps
// false the ProfilerStep annotations are left out.
func plantedSteps(t *testing.T, steps bool) string {
	k := newKT(0, 1, "NVIDIA H100 80GB HBM3")
	if !steps {
		k.op("cpu_op", "aten::empty", base, 1) // the trace starts at base either way
	}
	for s := 1; s <= 5; s++ {
		at := base + float64(s-1)*10000
		if steps {
			k.op("user_annotation", "ProfilerStep#"+itoa(s), at, 9800)
		}
		k.op("cpu_op", "aten::mm", at+5, 200)
		if s != 3 {
			for i := 0; i < 10; i++ {
				k.kernel("sm90_xmma_gemm_bf16", 7, at+10+float64(i)*15, at+100+float64(i)*970, 950)
			}
		}
		switch s {
		case 1:
			k.x("cuda_runtime", "cudaStreamSynchronize", 100, 100, at+3000, 200, map[string]any{"correlation": 90001})
		case 3:
			// The host blocks 5 ms in .item() while the queued kernels run
			// (to 8 ms), then works 1 ms before it launches again: the
			// sync opened a 1.1 ms gap.
			for i := 0; i < 10; i++ {
				k.kernel("sm90_xmma_gemm_bf16", 7, at+10+float64(i)*15, at+100+float64(i)*790, 790)
			}
			k.op("cpu_op", "aten::item", at+3000, 5200)
			k.op("cpu_op", "aten::_local_scalar_dense", at+3005, 5190)
			k.x("cuda_runtime", "cudaStreamSynchronize", 100, 100, at+3030, 5000, map[string]any{"correlation": 90003})
			k.op("cpu_op", "aten::mm", at+9000, 200)
			k.kernel("sm90_xmma_gemm_bf16", 7, at+9010, at+9100, 500)
		}
	}
	return k.write(t, t.TempDir(), "planted.json")
}

// reportOf loads paths and collects the report with its Perfetto files,
// as the CLI does: the windows' rows are read, the database closed, and
// the files made without it.
//
// The timelines and the Perfetto files are made from the same rows: each
// window's are read once.
func reportOf(t *testing.T, budget int, paths ...string) *report.Source {
	t.Helper()
	db := &countingDB{DB: openDB(t)}
	ctx := context.Background()
	if _, err := db.Load(ctx, paths, trace.LoadOptions{Name: "t"}, nil); err != nil {
		t.Fatalf("Load: %v", err)
	}
	src, err := pipeline.CollectReport(ctx, db, evidence.Filter{}, nil)
	if err != nil {
		t.Fatalf("CollectReport: %v", err)
	}
	if err := pipeline.ReadPerfettoRows(ctx, db, src); err != nil {
		t.Fatalf("ReadPerfettoRows: %v", err)
	}
	db.Close()
	if err := pipeline.AddPerfetto(ctx, nil, src, budget); err != nil {
		t.Fatalf("AddPerfetto without the database: %v", err)
	}
	windows := map[report.WindowKey]bool{}
	for _, w := range src.Windows {
		windows[w.Key()] = true
	}
	if n := int(db.perfetto.Load()); n != len(windows) {
		t.Errorf("sql/perfetto.sql ran %d times for %d windows", n, len(windows))
	}
	return src
}

// countingDB counts its runs of sql/perfetto.sql.
type countingDB struct {
	*duck.DB
	perfetto atomic.Int32
}

func (c *countingDB) Query(ctx context.Context, query string, maxRows int, args ...any) (*table.Table, error) {
	if p, _ := sql.Lookup(sql.Perfetto); query == p.SQL {
		c.perfetto.Add(1)
	}
	return c.DB.Query(ctx, query, maxRows, args...)
}

// exported reads a Perfetto file back with tracebook's own importer.
func exported(t *testing.T, data []byte) []trace.Event {
	t.Helper()
	if !json.Valid(data) {
		t.Fatalf("the export is not valid JSON")
	}
	var evs []trace.Event
	if _, err := trace.Parse(bytes.NewReader(data), "export.json", trace.LoadOptions{}, func(e *trace.Event) error {
		evs = append(evs, *e)
		return nil
	}); err != nil {
		t.Fatalf("tracebook's importer rejects the export: %v", err)
	}
	return evs
}

func ns(us float64) int64 { return int64(us * 1000) }

func TestPerfettoWorstStep(t *testing.T) {
	src := reportOf(t, 0, plantedSteps(t, true))
	if len(src.Windows) == 0 || len(src.Perfetto) != len(src.Windows) {
		t.Fatalf("%d windows, %d files", len(src.Windows), len(src.Perfetto))
	}
	w := src.Windows[0]
	// Step 3 opened the largest gap: the window is steps 2..4 on rank 0,
	// from step 2's start to step 4's end (from the trace's first event).
	if w.Rule != "sync_bound_loop" || w.N != 1 || w.File != "finding-1-sync_bound_loop.json" || w.Rank != 0 ||
		w.Step != 3 || w.FirstStep != 2 || w.LastStep != 4 {
		for _, f := range src.Bundle.Findings {
			t.Logf("%s %s %s %.3f: %s", f.Rule, f.Severity, f.Status, f.Impact, f.Observation)
		}
		t.Fatalf("window %+v", w)
	}
	if w.StartNs != 10_000_000 || w.EndNs != 39_800_000 || w.FocusStartNs != 20_000_000 || w.FocusEndNs != 29_800_000 {
		t.Errorf("window %d..%d, focus %d..%d; want 10 ms..39.8 ms, step 3 at 20 ms..29.8 ms", w.StartNs, w.EndNs, w.FocusStartNs, w.FocusEndNs)
	}
	if !strings.Contains(w.Basis, "step 3 has the largest GPU gap opened by host syncs") {
		t.Errorf("basis %q", w.Basis)
	}
	f := src.Perfetto[0]
	if f.Name != w.File {
		t.Errorf("file %q for window %q", f.Name, w.File)
	}
	evs := exported(t, f.JSON)
	t0, w0, w1 := ns(base), ns(base)+w.StartNs, ns(base)+w.EndNs
	var finding, blocked, idle *trace.Event
	stepsSeen := map[string]bool{}
	for i := range evs {
		e := &evs[i]
		if e.Cat == "tracebook" {
			switch e.Name {
			case "Host syncs drain the GPU and leave it idle until the next launch":
				finding = e
			case "host blocked: cudaStreamSynchronize":
				if e.DurNs == 5_000_000 {
					blocked = e
				}
			case "GPU idle after cudaStreamSynchronize":
				idle = e
			}
			continue
		}
		if e.Ph != "X" {
			continue
		}
		// Every event of the trace overlaps the window: nothing of step 1 or 5.
		if e.TsNs >= w1 || e.TsNs+e.DurNs < w0 {
			t.Errorf("%s at %d+%d lies outside the window %d..%d", e.Name, e.TsNs-t0, e.DurNs, w.StartNs, w.EndNs)
		}
		if strings.HasPrefix(e.Name, "ProfilerStep#") {
			stepsSeen[e.Name] = true
		}
	}
	if len(stepsSeen) != 3 || !stepsSeen["ProfilerStep#2"] || !stepsSeen["ProfilerStep#3"] || !stepsSeen["ProfilerStep#4"] {
		t.Errorf("steps in the export: %v, want 2, 3 and 4", stepsSeen)
	}
	if finding == nil || blocked == nil || idle == nil {
		t.Fatalf("finding track: finding %v, sync %v, gap %v", finding != nil, blocked != nil, idle != nil)
	}
	if finding.TsNs != t0+20_000_000 || finding.DurNs != 9_800_000 {
		t.Errorf("the finding slice is %d+%d, want step 3 (20 ms + 9.8 ms)", finding.TsNs-t0, finding.DurNs)
	}
	// The flagged intervals are exact: the sync call, and the gap from the
	// GPU's drain (28.0 ms into the trace) to the next kernel (29.1 ms).
	if blocked.TsNs != t0+ns(23030) {
		t.Errorf("flagged sync at %d", blocked.TsNs-t0)
	}
	if idle.TsNs != t0+ns(28000) || idle.DurNs != ns(1100) {
		t.Errorf("flagged gap %d+%d, want %d+%d", idle.TsNs-t0, idle.DurNs, ns(28000), ns(1100))
	}
	for _, m := range []*trace.Event{blocked, idle} {
		if m.TsNs < finding.TsNs || m.TsNs+m.DurNs > finding.TsNs+finding.DurNs {
			t.Errorf("the finding slice does not cover %s", m.Name)
		}
	}
}

// A trace without steps: the window is the longest sync call with 10 ms
// either side.
func TestPerfettoWithoutSteps(t *testing.T) {
	src := reportOf(t, perfetto.ReportBudget, plantedSteps(t, false))
	var w *report.Window
	for i := range src.Windows {
		if src.Windows[i].Rule == "sync_bound_loop" {
			w = &src.Windows[i]
		}
	}
	if w == nil {
		t.Fatalf("no sync window: %+v", src.Windows)
	}
	if w.Step != -1 || w.Anchor != "sync" || w.FocusStartNs != ns(23030) || w.FocusEndNs != ns(28030) ||
		w.StartNs != ns(13030) || w.EndNs != ns(38030) {
		t.Errorf("window %+v", *w)
	}
	if !strings.Contains(w.Basis, "rank 0's blocking sync call that opened the longest GPU gap (or the longest such call) (cudaStreamSynchronize, 5.000 ms)") {
		t.Errorf("basis %q", w.Basis)
	}
	var md bytes.Buffer
	if err := report.GenerateView(&md, src, report.View{Filter: src.Bundle.Filter}, report.Markdown); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "Open in Perfetto: trace t, rank 0, no steps, 13.030 ms .. 38.030 ms from the trace start") ||
		!strings.Contains(md.String(), "`"+w.File+"`") {
		t.Errorf("the Markdown report does not name the window:\n%s", md.String())
	}
}

// The two presets return exactly the columns their headers document, in
// that order.
func TestPerfettoPresetsDocumented(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	if _, err := db.Load(ctx, []string{plantedSteps(t, true)}, trace.LoadOptions{Name: "t"}, nil); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		preset string
		args   []any
	}{
		{sql.Perfetto, []any{"t", 0, int64(10_000_000), int64(39_800_000), int64(100), int64(10)}},
		{sql.PerfettoAnchor, []any{"t", 0, 0, 0}},
	}
	for _, tc := range tests {
		p, ok := sql.Lookup(tc.preset)
		if !ok {
			t.Fatalf("preset %s missing", tc.preset)
		}
		res, err := db.Query(ctx, p.SQL, 0, tc.args...)
		if err != nil {
			t.Fatalf("%s: %v", tc.preset, err)
		}
		var got, want []string
		for _, c := range res.Columns {
			got = append(got, c.Name)
		}
		for _, c := range p.Columns {
			want = append(want, c.Name)
			if c.Doc == "" || c.Unit == "" {
				t.Errorf("%s: column %s lacks its doc or unit", tc.preset, c.Name)
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s returns %v, its header documents %v", tc.preset, got, want)
		}
		if len(res.Rows) == 0 {
			t.Errorf("%s returned no row", tc.preset)
		}
	}
}

// A finding the collected report did not show (the viewer re-ranked the
// findings for another view) gets the window PlanWindows would choose, or
// none where the rank has no steps, and its line names the command that
// writes the file instead of a button that would save nothing.
func TestPerfettoWindowForAnotherView(t *testing.T) {
	for _, tc := range []struct {
		steps bool
		want  string
	}{
		{true, "Open in Perfetto: trace t, rank 0, steps 2..4 (worst 3)"},
		{false, "Open in Perfetto: this report holds no window for this finding; `tracebook report TRACE --rank 0 --perfetto DIR` places one around rank 0's blocking sync call that opened the longest GPU gap (or the longest such call) and writes its file."},
	} {
		src := reportOf(t, perfetto.ReportBudget, plantedSteps(t, tc.steps))
		// The sync finding's window was collected for another view: only
		// another rule's is in this report.
		var kept []report.Window
		for _, w := range src.Windows {
			if w.Rule == "sync_bound_loop" {
				w.Rule = "another_rule"
				kept = append(kept, w)
			}
		}
		if len(kept) == 0 {
			t.Fatalf("steps %v: no sync window: %+v", tc.steps, src.Windows)
		}
		src.Windows = kept
		for _, f := range []report.Format{report.Markdown, report.HTMLFragment} {
			var out bytes.Buffer
			if err := report.GenerateView(&out, src, report.View{Filter: src.Bundle.Filter}, f); err != nil {
				t.Fatal(err)
			}
			got := out.String()
			want := tc.want
			if f == report.HTMLFragment {
				want = strings.ReplaceAll(want, "`", "")
				want = strings.Replace(want, "tracebook report", "<code>tracebook report", 1)
				want = strings.Replace(want, " DIR ", " DIR</code> ", 1)
			}
			if !strings.Contains(got, want) {
				t.Errorf("steps %v, format %v: no line %q in\n%s", tc.steps, f, want, got)
			}
			if tc.steps && !strings.Contains(got, "This report holds no file for it (it was collected for another view)") {
				t.Errorf("steps %v, format %v: the line does not say the file is missing:\n%s", tc.steps, f, got)
			}
			if strings.Contains(got, "data-tb-perfetto") {
				t.Errorf("steps %v, format %v: a button for a file the report does not hold", tc.steps, f)
			}
		}
	}
}

// TestAddPerfettoNeedsRowsOrDatabase: without a database, AddPerfetto
// makes the files from rows already read, and says so when a window's
// rows are missing rather than failing on the nil engine.
func TestAddPerfettoNeedsRowsOrDatabase(t *testing.T) {
	src := reportOf(t, 0, plantedSteps(t, true))
	files := src.Perfetto
	src.Perfetto, src.WindowRows = nil, nil
	err := pipeline.AddPerfetto(context.Background(), nil, src, 0)
	if err == nil || !strings.Contains(err.Error(), "no database") {
		t.Errorf("AddPerfetto(nil engine, rows unread) = %v, want a no-database error", err)
	}
	if len(files) == 0 || src.Perfetto != nil {
		t.Errorf("%d files before; %d after the failed call, want none", len(files), len(src.Perfetto))
	}
}

// TestPerfettoRowOrderMatchesDuckDB checks that perfetto.SortRows orders
// sql/perfetto.sql's rows as DuckDB's ORDER BY of the same keys does (the
// query leaves the sort to Go): on a real training trace (its events, gaps,
// processes and threads), the keys come in the same sequence.
func TestPerfettoRowOrderMatchesDuckDB(t *testing.T) {
	path := "../testdata/kineto/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
	db := openDB(t)
	ctx := context.Background()
	if _, err := db.Load(ctx, []string{path}, trace.LoadOptions{Name: "t"}, nil); err != nil {
		t.Fatalf("Load: %v", err)
	}
	p, ok := sql.Lookup(sql.Perfetto)
	if !ok {
		t.Fatal("sql/perfetto.sql is missing")
	}
	const keys = "row_kind, ts_ns, pid, tid, name, dur_ns DESC, correlation, external_id, kind"
	args := []any{"t", 0, int64(0), int64(1) << 62, int64(perfetto.DefaultMaxEvents), int64(perfetto.DefaultMaxPython)}
	got, err := db.Query(ctx, p.SQL, 0, args...)
	if err != nil {
		t.Fatalf("perfetto.sql: %v", err)
	}
	want, err := db.Query(ctx, strings.TrimRight(strings.TrimSpace(p.SQL), ";")+"\nORDER BY "+keys, 0, args...)
	if err != nil {
		t.Fatalf("perfetto.sql ordered: %v", err)
	}
	perfetto.SortRows(got)
	if len(got.Rows) != len(want.Rows) || len(got.Rows) < 100 {
		t.Fatalf("%d rows sorted in Go, %d by DuckDB; want the same, and at least 100", len(got.Rows), len(want.Rows))
	}
	kinds := map[any]bool{}
	keyOf := func(tb *table.Table, r []any) []any {
		var k []any
		for _, c := range strings.Split(strings.ReplaceAll(keys, " DESC", ""), ", ") {
			k = append(k, r[tb.Col(c)])
		}
		return k
	}
	for i := range want.Rows {
		kinds[want.Rows[i][want.Col("row_kind")]] = true
		if g, w := keyOf(got, got.Rows[i]), keyOf(want, want.Rows[i]); !reflect.DeepEqual(g, w) {
			t.Fatalf("row %d: Go's order gives keys %v, DuckDB's %v", i, g, w)
		}
	}
	for _, k := range []string{"event", "gap", "process", "thread", "origin"} {
		if !kinds[k] {
			t.Errorf("no %s row: the comparison did not cover that row kind", k)
		}
	}

	// Rows that each key decides: NULL in every key, durations that tie
	// on the keys before them, strings that sort by bytes ('10' < '2',
	// 'Z' < 'a'), and times above 2^53 ns that a float would merge.
	crafted := `SELECT * FROM (VALUES
		('event', 1700000000000000002, '1', '1', 'k', 5, 1, 1, 'kernel'),
		('event', 1700000000000000001, '1', '1', 'k', 5, 1, 1, 'kernel'),
		('event', 1700000000000000001, '1', '1', 'k', 9, 1, 1, 'kernel'),
		('event', 1700000000000000001, '1', '1', 'k', NULL, 1, 1, 'kernel'),
		('event', 1700000000000000001, '1', '1', 'Z', 5, 1, 1, 'kernel'),
		('event', 1700000000000000001, '1', '1', 'a', 5, 1, 1, 'kernel'),
		('event', 1700000000000000001, '1', '1', NULL, 5, 1, 1, 'kernel'),
		('event', 1700000000000000001, '1', '1', 'k', 5, NULL, 1, 'kernel'),
		('event', 1700000000000000001, '1', '1', 'k', 5, 0, NULL, 'cpu_op'),
		('event', 1700000000000000001, '1', '1', 'k', 5, 0, 2, NULL),
		('event', 1700000000000000001, '10', NULL, 'k', 5, 1, 1, 'kernel'),
		('event', 1700000000000000001, '2', '1', 'k', 5, 1, 1, 'kernel'),
		('event', NULL, '2', '1', 'k', 5, 1, 1, 'kernel'),
		('gap', 1700000000000000001, NULL, NULL, NULL, 3, NULL, NULL, 'other'),
		('thread', NULL, '1', '2', 'b', NULL, NULL, NULL, NULL),
		('thread', NULL, '1', '10', 'b', NULL, NULL, NULL, NULL)
	) v(row_kind, ts_ns, pid, tid, name, dur_ns, correlation, external_id, kind)`
	got, err = db.Query(ctx, crafted, 0)
	if err != nil {
		t.Fatalf("crafted rows: %v", err)
	}
	want, err = db.Query(ctx, crafted+"\nORDER BY "+keys, 0)
	if err != nil {
		t.Fatalf("crafted rows ordered: %v", err)
	}
	perfetto.SortRows(got)
	if !reflect.DeepEqual(got.Rows, want.Rows) {
		t.Errorf("crafted rows: Go's order\n%v\nDuckDB's\n%v", got.Rows, want.Rows)
	}
}
