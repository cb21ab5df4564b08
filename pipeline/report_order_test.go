//go:build cgo

package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/internal/duck"
	"github.com/tracebook/tracebook/internal/testutil"
	"github.com/tracebook/tracebook/sql"
)

// A report whose slice is too large to build its cross-views while the
// evidence runs builds them first, under a lower DuckDB memory limit, and
// collects the same source: the cross-view of the filter and one per rank
// (8 ranks of dlrm_8rank), the same evidence, which waited encoded while
// the cross-views were built (evidence.Bundle.Park).
func TestCollectReportLargeSliceSameSource(t *testing.T) {
	db, ctx := dlrmFile(t)
	collect := func(lean int) []byte {
		t.Helper()
		defer func(old, park int) { leanCrossViewFrames, parkRows = old, park }(leanCrossViewFrames, parkRows)
		leanCrossViewFrames = lean
		parkRows = 0 // the large slice's evidence waits encoded, every table of it
		src, err := CollectReport(ctx, db, evidence.Filter{}, nil)
		if err != nil {
			t.Fatalf("CollectReport (lean %d): %v", lean, err)
		}
		if len(src.CrossViews) != 9 {
			t.Errorf("lean %d: %d cross-views, want 9 (the filter's and 8 ranks')", lean, len(src.CrossViews))
		}
		b, err := report.EncodeSource(src)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	concurrent, first := collect(1<<30), collect(0)
	if !bytes.Equal(concurrent, first) {
		t.Error("the cross-views built first give another report source than built alongside the evidence")
	}
	// A limit under which DuckDB runs out of memory is followed by the next.
	defer func(old []int, lean int) { largeSliceMemoryMB, leanCrossViewFrames = old, lean }(largeSliceMemoryMB, leanCrossViewFrames)
	leanCrossViewFrames = 0 // the frames stream
	if _, err := crossViews(ctx, db, evidence.Filter{}, nil, "1MB"); err == nil || !strings.Contains(err.Error(), "Out of Memory Error") {
		t.Fatalf("cross-views under 1 MB: %v, want DuckDB out of memory", err)
	}
	largeSliceMemoryMB = []int{1, 512}
	defer func(old int) { opBytes = old }(opBytes)
	opBytes = 0 // 1 MB is tried first, whatever the operations
	if retried := collect(0); !bytes.Equal(retried, first) {
		t.Error("the cross-views and evidence built after running out of memory under 1 MB give another report source")
	}
	// The frames' query that runs out of memory under its own limit runs
	// again under the database's, and no frame is read twice.
	defer func(old int) { framesMemoryMB = old }(framesMemoryMB)
	framesMemoryMB = 1
	p, _ := sql.Lookup("crossview")
	frames := func() error {
		_, err := db.Query(ctx, "SELECT count(*) FROM ("+framesInStartOrder(p.SQL, true)+")", 0, "", -1)
		return err
	}
	if err := db.WithMemoryLimit(ctx, framesLimit(0), frames); !outOfMemory(err) {
		t.Fatalf("the frames' query under 1 MB: %v, want DuckDB out of memory", err)
	}
	largeSliceMemoryMB = []int{512}
	if again := collect(0); !bytes.Equal(again, first) {
		t.Error("the frames read again after running out of memory under 1 MB give another report source")
	}
	// The evidence runs under the limits too: alone, 1 MB is too little.
	if _, err := CollectEvidence(ctx, db, []string{"all"}, evidence.Filter{}, nil, "1MB"); !outOfMemory(err) {
		t.Errorf("evidence under 1 MB: %v, want DuckDB out of memory", err)
	}
}

// The cross-views streamed from DuckDB (the frames pass through once, in
// start order, and are never held) equal the ones built from every row held
// in an Input, slice by slice: the whole job, each rank, a window, a step
// and a phase; on traces of four kinds (8-rank training, vLLM piecewise
// graphs, SGLang decode, and a 2021-format one whose operators carry Call
// stacks), from an in-memory database and from a file.
func TestCrossViewsStreamedEqualHeld(t *testing.T) {
	defer func(old int) { leanCrossViewFrames = old }(leanCrossViewFrames)
	leanCrossViewFrames = 0 // every slice streams
	for _, set := range []string{"param/dlrm_8rank", "tracelens/vllm_prefilldecode_piecewise_mi300x", "tracelens/sglang_qwen3_decode_mi300x", "kineto/resnet50_num_workers_0"} {
		for _, path := range []string{"", "t.duckdb"} {
			t.Run(set+"/"+path, func(t *testing.T) {
				if path != "" {
					path = filepath.Join(t.TempDir(), path)
				}
				db, err := duck.Open(path, duck.Options{CacheDir: "-", Threads: 2, MemoryLimit: "512MB"})
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				ctx := context.Background()
				if _, err := db.Load(ctx, []string{filepath.Join(testutil.Testdata(t), set)}, trace.LoadOptions{Name: "t"}, nil); err != nil {
					t.Fatal(err)
				}
				if _, ok := Engine(db).(RowStreamer); !ok {
					t.Fatal("duck.DB does not stream rows")
				}
				slices := []crossview.Slice{{}, {WindowStartNs: 1_000_000, WindowEndNs: 9_000_000}, {Step: 2, HasStep: true}, {Phase: "decode"}}
				ranks, err := db.Query(ctx, "SELECT DISTINCT rank FROM traces ORDER BY rank", 0)
				if err != nil {
					t.Fatal(err)
				}
				for r := range ranks.Rows {
					slices = append(slices, crossview.Slice{Rank: int(evidence.Int(ranks, r, "rank")), HasRank: true})
				}
				streamed, serrs, err := CrossViews(ctx, db, evidence.Filter{}, slices, crossview.DefaultOptions())
				if err != nil {
					t.Fatal(err)
				}
				in, err := CrossViewInput(ctx, db, evidence.Filter{Phase: "decode"}) // the steps too
				if err != nil {
					t.Fatal(err)
				}
				if len(in.Frames) == 0 || len(in.Ops) == 0 {
					t.Fatalf("%d frames, %d ops held", len(in.Frames), len(in.Ops))
				}
				held, herrs := crossview.BuildAll(in, slices, crossview.DefaultOptions())
				for i := range slices {
					if fmt.Sprint(serrs[i]) != fmt.Sprint(herrs[i]) {
						t.Errorf("slice %+v: streamed error %v, held %v", slices[i], serrs[i], herrs[i])
						continue
					}
					a, _ := json.Marshal(streamed[i])
					b, _ := json.Marshal(held[i])
					if !bytes.Equal(a, b) {
						t.Errorf("slice %+v: the streamed cross-view differs from the held one:\n%s", slices[i], testutil.Diff(string(b), string(a)))
					}
				}
				if streamed[0] == nil || streamed[0].GPU.TotalNs == 0 || len(streamed[0].CPU.Roots) == 0 {
					t.Errorf("the whole job's cross-view is empty: %+v", streamed[0])
				}
			})
		}
	}
}

// A report whose cross-view fails stands without a call tree, and says
// why where the tree and the CPU cross-check would be.
func TestCollectReportNoTree(t *testing.T) {
	db, ctx := dlrmFile(t)
	src, err := CollectReport(ctx, db, evidence.Filter{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// What CollectReport does with a cross-view error.
	src.CrossViews = nil
	src.Bundle.AddGap(evidence.Gap{Kind: "no_crossview", Rank: -1, What: "no GPU call tree", Why: "the cross-view query ran out of memory"})
	var md bytes.Buffer
	if err := report.GenerateView(&md, src, report.View{Filter: src.Bundle.Filter}, report.Markdown); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"GPU profile**: not available (the cross-view query ran out of memory)", "No cross-view: the cross-view query ran out of memory"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the report does not say %q", want)
		}
	}
}

// dlrmFile opens a database file holding dlrm_8rank (8 ranks) as trace "t",
// with the memory limit a file gets from the CLI.
func dlrmFile(t *testing.T) (*duck.DB, context.Context) {
	t.Helper()
	db, err := duck.Open(filepath.Join(t.TempDir(), "t.duckdb"), duck.Options{CacheDir: "-", Threads: 2, MemoryLimit: "512MB"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	if _, err := db.Load(ctx, []string{filepath.Join(testutil.Testdata(t), "param/dlrm_8rank")}, trace.LoadOptions{Name: "t"}, nil); err != nil {
		t.Fatal(err)
	}
	return db, ctx
}

// A small slice's statements run on one DuckDB thread each while its
// cross-view runs beside the evidence, a large slice's on every thread;
// DuckDB has its threads back after either.
func TestCollectReportThreads(t *testing.T) {
	db, ctx := dlrmFile(t)
	seen := &threadsDB{DB: db, t: t}
	for _, tc := range []struct {
		lean int
		want string
	}{{1 << 30, "1"}, {0, "2"}} {
		defer func(old int) { leanCrossViewFrames = old }(leanCrossViewFrames)
		leanCrossViewFrames = tc.lean
		seen.threads = map[string]bool{}
		if _, err := CollectReport(ctx, seen, evidence.Filter{}, nil); err != nil {
			t.Fatalf("CollectReport (lean %d): %v", tc.lean, err)
		}
		if len(seen.threads) != 1 || !seen.threads[tc.want] {
			t.Errorf("lean %d: the evidence presets ran on %v DuckDB threads, want %s", tc.lean, seen.threads, tc.want)
		}
		if got := seen.setting(ctx); got != "2" {
			t.Errorf("lean %d: DuckDB has %s threads after the report, want 2", tc.lean, got)
		}
	}
}

// threadsDB records DuckDB's thread count as each evidence preset starts.
type threadsDB struct {
	*duck.DB
	t       *testing.T
	mu      sync.Mutex
	threads map[string]bool
}

func (d *threadsDB) Query(ctx context.Context, query string, maxRows int, args ...any) (*table.Table, error) {
	if strings.Contains(query, "CREATE OR REPLACE TABLE evidence_") {
		n := d.setting(ctx)
		d.mu.Lock()
		d.threads[n] = true
		d.mu.Unlock()
	}
	return d.DB.Query(ctx, query, maxRows, args...)
}

func (d *threadsDB) setting(ctx context.Context) string {
	t, err := d.DB.Query(ctx, `SELECT current_setting('threads')::VARCHAR AS n`, 0)
	if err != nil || len(t.Rows) != 1 {
		d.t.Errorf("reading DuckDB's threads: %v", err)
		return ""
	}
	return fmt.Sprint(t.Rows[0][0])
}

// A large slice's memory limits start from the first that holds its GPU
// operations at opBytes each, and keep the last (128 MB is 128,000,000
// bytes to DuckDB: 290,909 operations at 440 bytes).
func TestLargeSliceLimits(t *testing.T) {
	for _, tc := range []struct {
		ops  int
		want []string
	}{
		{0, []string{"128MB", "256MB", "512MB", "1024MB"}},
		{290_000, []string{"128MB", "256MB", "512MB", "1024MB"}},
		{290_910, []string{"256MB", "512MB", "1024MB"}},
		{400_000, []string{"256MB", "512MB", "1024MB"}},
		{3_500_000, []string{"512MB", "1024MB"}},
	} {
		if got := largeSliceLimits(tc.ops); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("largeSliceLimits(%d) = %v, want %v", tc.ops, got, tc.want)
		}
	}
}

// A small slice's presets run one at a time (presetWorkers, set to 1)
// beside its cross-view, and two at a time once the cross-view is done.
func TestCollectReportSlots(t *testing.T) {
	db, ctx := dlrmFile(t)
	defer func(old int) { presetWorkers = old }(presetWorkers)
	presetWorkers = 1
	s := &slotsDB{DB: db, presetsDone: make(chan struct{}, 64)}
	if _, err := CollectReport(ctx, s, evidence.Filter{}, nil); err != nil {
		t.Fatal(err)
	}
	if s.maxDuring != 1 || s.maxAfter != 2 {
		t.Errorf("at most %d presets at once while the cross-view ran and %d after it, want 1 and 2", s.maxDuring, s.maxAfter)
	}
}

// slotsDB holds the cross-view's first query (the one QueryEach that
// reads row_kind) until three evidence presets have run, and records how many presets run at once until its
// queries are done and after.
type slotsDB struct {
	*duck.DB
	presetsDone chan struct{}
	held        sync.Once

	mu                  sync.Mutex
	running             int
	cvDone              bool
	maxDuring, maxAfter int
}

func (d *slotsDB) QueryEach(ctx context.Context, query string, start func([]string) error, each func(table.Cells) error, args ...any) error {
	if !strings.Contains(query, "row_kind") {
		// An area's pass input (analysis/pass), not the cross-view.
		return d.DB.QueryEach(ctx, query, start, each, args...)
	}
	d.held.Do(func() {
		for range 3 {
			select {
			case <-d.presetsDone:
			case <-time.After(10 * time.Second):
			}
		}
	})
	err := d.DB.QueryEach(ctx, query, start, each, args...)
	d.mu.Lock()
	d.cvDone = true
	d.mu.Unlock()
	return err
}

func (d *slotsDB) Query(ctx context.Context, query string, maxRows int, args ...any) (*table.Table, error) {
	preset := strings.Contains(query, "CREATE OR REPLACE TABLE evidence_") && !strings.Contains(query, "TABLE evidence_base_")
	if !preset {
		return d.DB.Query(ctx, query, maxRows, args...)
	}
	d.mu.Lock()
	d.running++
	if !d.cvDone {
		d.maxDuring = max(d.maxDuring, d.running)
	} else {
		d.maxAfter = max(d.maxAfter, d.running)
	}
	d.mu.Unlock()
	time.Sleep(20 * time.Millisecond) // long enough for a second preset to start beside it
	t, err := d.DB.Query(ctx, query, maxRows, args...)
	d.mu.Lock()
	d.running--
	d.mu.Unlock()
	d.presetsDone <- struct{}{}
	return t, err
}
