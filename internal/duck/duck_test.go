//go:build cgo

package duck

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/internal/testutil"
)

// openTest opens an in-memory database with its cache in a temporary
// directory ("-" turns the cache off).
func openTest(t testing.TB, cacheDir string) *DB {
	t.Helper()
	if cacheDir == "" {
		cacheDir = t.TempDir()
	}
	threads, _ := strconv.Atoi(os.Getenv("TRACEBOOK_TEST_THREADS"))
	db, err := Open("", Options{CacheDir: cacheDir, MemoryLimit: "2GB", TempDirectory: t.TempDir(), Threads: threads})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func load(t testing.TB, db *DB, opts trace.LoadOptions, paths ...string) *trace.LoadResult {
	t.Helper()
	res, err := db.Load(context.Background(), paths, opts, nil)
	if err != nil {
		t.Fatalf("Load(%v) = %v", paths, err)
	}
	return res
}

func query(t testing.TB, db *DB, q string, args ...any) *table.Table {
	t.Helper()
	tb, err := db.Query(context.Background(), q, 0, args...)
	if err != nil {
		t.Fatalf("Query(%q) = %v", q, err)
	}
	return tb
}

// csv renders a table as comma-separated lines, for comparisons.
func csv(tb *table.Table) string {
	var b strings.Builder
	for _, r := range tb.Rows {
		for i, v := range r {
			if i > 0 {
				b.WriteByte(',')
			}
			if v == nil {
				b.WriteString("NULL")
			} else {
				fmt.Fprint(&b, v)
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

const tiny = "testdata/tiny.json"

func TestLoadTiny(t *testing.T) {
	db := openTest(t, "-")
	res := load(t, db, trace.LoadOptions{}, tiny)
	if res.Trace != "tiny" || res.Events != 12 || fmt.Sprint(res.Ranks) != "[3]" || res.Cached {
		t.Errorf("Load() = %+v", res)
	}
	tests := []struct{ q, want string }{
		{`SELECT kind, count(*) FROM events GROUP BY 1 ORDER BY 1`,
			"annotation,2\ncpu_op,2\nflow,2\ngpu_memcpy,1\ngpu_memset,1\ninstant,1\nkernel,1\npython,1\nruntime,1\n"},
		{`SELECT name, ts_ns, dur_ns, end_ns, rank, pid, tid, correlation, external_id, stream, device, grid, block, args->>'registers per thread' FROM kernels`,
			"sgemm_128x64,1010000,20500,1030500,3,0,7,42,2,7,0,[4,1,1],[128,1,1],64\n"},
		{`SELECT name, seq_no, correlation, args FROM cpu_ops ORDER BY ts_ns`,
			`aten::mm,7,NULL,{"Input Dims":[[2,3],[3,4]]}` + "\naten::add,NULL,NULL,NULL\n"},
		{`SELECT name, api, correlation FROM runtime`, "cudaLaunchKernel,launch,42\n"},
		{`SELECT name, direction, src_kind, dst_kind, bytes, mem_bw_gbps FROM memops ORDER BY ts_ns`,
			"Memcpy HtoD (Pageable -> Device),HtoD,Pageable,Device,4096,1.5\nMemset (Device),NULL,NULL,Device,64,NULL\n"},
		{`SELECT cat, flow_id, src_ts_ns, src_pid, dst_ts_ns, dst_pid, dst_tid FROM flows`, "ac2g,42,1002000,10,1010000,0,7\n"},
		{`SELECT python_id, python_parent_id FROM python_frames`, "5,4\n"},
		{`SELECT pid, tid, process_name, thread_name, labels FROM threads ORDER BY pid, tid NULLS FIRST`,
			"0,NULL,NULL,NULL,GPU 0\n0,7,NULL,stream 7 ,NULL\n10,NULL,python3,NULL,NULL\n"},
		{`SELECT trace, file_id, rank, rank_source, world_size, gpu_model, events, first_ts_ns, last_end_ns, format, producer, has_steps, metadata->>'$.distributedInfo.rank' FROM traces`,
			"tiny,0,3,distributed_info,4,NVIDIA H100 80GB HBM3,12,1000000,1300000,kineto,profiler_step,true,3\n"},
		{`SELECT count(DISTINCT idx), min(idx), max(idx) FROM events`, "12,0,11\n"},
	}
	for _, tc := range tests {
		if got := csv(query(t, db, tc.q)); got != tc.want {
			t.Errorf("%s:\ngot  %q\nwant %q", tc.q, got, tc.want)
		}
	}
}

func TestQueryCapAndTypes(t *testing.T) {
	db := openTest(t, "-")
	tb := query(t, db, `SELECT range AS i, range * 1.5 AS f, 'x' || range AS s, range % 2 = 0 AS b, NULL AS n,
		[range, 2] AS l, {'a': range} AS st, 12.50::DECIMAL(5,2) AS d, 7::HUGEINT AS h FROM range(10)`)
	_ = tb
	capped, err := db.Query(context.Background(), `SELECT * FROM range(10)`, 3)
	if err != nil {
		t.Fatal(err)
	}
	if capped.Total != 10 || len(capped.Rows) != 3 {
		t.Errorf("Query(maxRows 3): %d rows, total %d; want 3 of 10", len(capped.Rows), capped.Total)
	}
	for _, q := range []string{
		"-- a comment\nSELECT * FROM range(?) -- trailing\n;",
		"/* c */ WITH r AS (SELECT * FROM range(?)) SELECT * FROM r",
		"SELECT 1; SELECT * FROM range(12)", // not wrapped: read to the end
	} {
		var args []any
		if strings.Contains(q, "?") {
			args = append(args, 12)
		}
		c, err := db.Query(context.Background(), q, 5, args...)
		if err != nil {
			t.Errorf("Query(%q) = %v", q, err)
			continue
		}
		if c.Total != 12 || len(c.Rows) != 5 {
			t.Errorf("Query(%q, max 5) = %v rows of %v, %v; want 5 of 12", q, len(c.Rows), c.Total, err)
		}
	}
	if c, err := db.Query(context.Background(), "SELECT * FROM range(4)", 4); err != nil || c.Total != 4 || len(c.Rows) != 4 {
		t.Errorf("Query(4 rows, max 4) = %+v, %v", c, err)
	}
	got := fmt.Sprintf("%#v", tb.Rows[1])
	want := `[]interface {}{1, 1.5, "x1", false, interface {}(nil), "[1,2]", "{\"a\":1}", 12.5, 7}`
	if got != want {
		t.Errorf("row 1 = %s, want %s", got, want)
	}
	if tb.Columns[0].Type != "BIGINT" || tb.Columns[2].Type != "VARCHAR" {
		t.Errorf("column types = %+v", tb.Columns)
	}
}

// QueryEach hands over the rows Query returns, with the same values, and
// stops at the first error of its callback: from an in-memory database,
// and from one in a file. A sorted result of the types it reads from
// DuckDB's vectors is streamed and read so (a driver upgrade that hides
// its connection or its results fails here); one with a list column goes
// through the driver's rows, and an unsorted one from a file is stored
// and read in pages (here five of them).
func TestQueryEach(t *testing.T) {
	defer func(p, n int64) { eachPage, pagedEvents = p, n }(eachPage, pagedEvents)
	eachPage, pagedEvents = 1000, 0
	file, err := Open(filepath.Join(t.TempDir(), "each.duckdb"), Options{CacheDir: "-", TempDirectory: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	cellsOf := func(row table.Cells) []string {
		out := make([]string, row.Len())
		for c := range out {
			i, iok := row.Int(c)
			s, sok := row.Str(c)
			out[c] = fmt.Sprintf("%d,%v|%q,%v", i, iok, s, sok)
		}
		return out
	}
	for _, db := range []*DB{openTest(t, "-"), file} {
		ctx := context.Background()
		for _, tc := range []struct {
			q        string
			cols     []string
			chunks   bool
			streamed bool
		}{
			{`SELECT range AS i, range * 1.5 AS f, 'x' || range AS s, NULL AS n, [range, 2] AS l FROM range(?) ORDER BY i`,
				[]string{"i", "f", "s", "n", "l"}, false, false},
			{`SELECT range AS i, 'x' || range AS s FROM range(?)`, []string{"i", "s"}, true, false},
			{`SELECT range AS i, CAST(range % 100 AS INTEGER) AS i32, CAST(range % 7 AS TINYINT) AS i8, CAST(range % 300 AS USMALLINT) AS u16,
				CAST(range AS UBIGINT) + CAST(CASE WHEN range = 3 THEN 18446744073709551000 ELSE 0 END AS UBIGINT) AS u64,
				range % 2 = 0 AS b, range / 3.0 AS f, CAST(range / 4 AS FLOAT) AS f32,
				CASE WHEN range % 5 = 0 THEN NULL ELSE 'a longer text than twelve, número ' || range END AS s,
				CAST(CASE WHEN range % 3 = 0 THEN 'kernel' ELSE 'python' END AS tb_kind) AS k,
				CASE WHEN range % 4 = 0 THEN NULL ELSE range END AS n, 'short' AS c FROM range(?) ORDER BY i`,
				[]string{"i", "i32", "i8", "u16", "u64", "b", "f", "f32", "s", "k", "n", "c"}, true, true},
		} {
			want, err := db.Query(ctx, tc.q, 0, 5000)
			if err != nil {
				t.Fatal(err)
			}
			var cols []string
			var got [][]string
			chunks := true
			before := streamed.Load()
			err = db.QueryEach(ctx, tc.q, func(c []string) error { cols = c; return nil },
				func(row table.Cells) error {
					_, ok := row.(*chunkCells)
					chunks = chunks && ok
					got = append(got, cellsOf(row))
					return nil
				}, 5000)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(cols, tc.cols) {
				t.Errorf("%s: columns = %v", db.path, cols)
			}
			if got := streamed.Load() > before; got != tc.streamed {
				t.Errorf("%s: %v: streamed = %v, want %v", db.path, tc.cols, got, tc.streamed)
			}
			if chunks != tc.chunks {
				t.Errorf("%s: %v: read from DuckDB's vectors = %v, want %v", db.path, tc.cols, chunks, tc.chunks)
			}
			if len(got) != len(want.Rows) {
				t.Fatalf("%s: QueryEach: %d rows, Query: %d", db.path, len(got), len(want.Rows))
			}
			for r, row := range want.Rows {
				if w := cellsOf(table.Row(row)); !slices.Equal(got[r], w) {
					t.Fatalf("%s: row %d: QueryEach %v, Query %v", db.path, r, got[r], w)
				}
			}
		}
		q := `SELECT range AS i, range * 1.5 AS f, 'x' || range AS s, NULL AS n, [range, 2] AS l FROM range(?) ORDER BY i`
		// An empty result still names its columns.
		var cols []string
		if err := db.QueryEach(ctx, q, func(c []string) error { cols = c; return nil }, func(table.Cells) error { return errors.New("a row") }, 0); err != nil || len(cols) != 5 {
			t.Errorf("%s: QueryEach(no rows) = %v, columns %v", db.path, err, cols)
		}
		stop := errors.New("stop")
		n := 0
		err = db.QueryEach(ctx, q, func([]string) error { return nil }, func(table.Cells) error { n++; return stop }, 5000)
		if !errors.Is(err, stop) || n != 1 {
			t.Errorf("%s: QueryEach with a failing callback = %v after %d rows, want stop after 1", db.path, err, n)
		}
		if err := db.QueryEach(ctx, "SELECT * FROM nope", func([]string) error { return nil }, func(table.Cells) error { return nil }); err == nil ||
			!strings.Contains(err.Error(), "nope does not exist") {
			t.Errorf("%s: QueryEach(unknown table) = %v", db.path, err)
		}
	}
}

func TestQueryErrorIntact(t *testing.T) {
	db := openTest(t, "-")
	_, err := db.Query(context.Background(), "SELECT * FROM nope", 0)
	if err == nil || !strings.Contains(err.Error(), "Table with name nope does not exist") {
		t.Errorf("Query(unknown table) = %v", err)
	}
	_, err = db.Query(context.Background(), "SELEC 1", 0)
	if err == nil || !strings.Contains(err.Error(), "syntax error") {
		t.Errorf("Query(syntax error) = %v", err)
	}
}

func TestDuplicateNameAndDrop(t *testing.T) {
	db := openTest(t, "-")
	load(t, db, trace.LoadOptions{}, tiny)
	_, err := db.Load(context.Background(), []string{tiny}, trace.LoadOptions{}, nil)
	if err == nil || !strings.Contains(err.Error(), "already loaded") {
		t.Fatalf("second Load(same name) = %v, want ErrDuplicateTrace", err)
	}
	load(t, db, trace.LoadOptions{Name: "again"}, tiny)
	trs, err := db.Traces(context.Background())
	if err != nil || len(trs) != 2 || trs[0].Name != "again" || trs[1].Events != 12 {
		t.Fatalf("Traces() = %+v, %v", trs, err)
	}
	if err := db.Drop(context.Background(), "tiny"); err != nil {
		t.Fatal(err)
	}
	if got := csv(query(t, db, `SELECT DISTINCT trace FROM events UNION ALL SELECT DISTINCT trace FROM threads`)); got != "again\nagain\n" {
		t.Errorf("after Drop: %q", got)
	}
	if err := db.Drop(context.Background(), "tiny"); err == nil {
		t.Error("Drop(missing) = nil")
	}
}

func TestColumns(t *testing.T) {
	db := openTest(t, "-")
	cols, err := db.Columns(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"traces", "events", "threads", "kernels", "memops", "flows"} {
		if len(cols[name]) == 0 {
			t.Errorf("Columns()[%q] is empty", name)
		}
	}
	for _, c := range cols["kernels"] {
		if c.Name == "dur_ns" && (c.Unit != "DURATION_NS" || c.Doc == "") {
			t.Errorf("kernels.dur_ns = %+v, want the doc of events.dur_ns", c)
		}
	}
	_ = filepath.Join
}

// TestMergedFile: a merged file's ranks come from the process names, which
// follow the events; the traces table gets one row per rank.
func TestMergedFile(t *testing.T) {
	for _, cache := range []string{"-", ""} {
		db := openTest(t, cache)
		for i := range 2 {
			res := load(t, db, trace.LoadOptions{Name: fmt.Sprint("m", i)}, "testdata/merged.json")
			db.WaitCache()
			if fmt.Sprint(res.Ranks) != "[0 1]" || res.Events != 5 || res.Cached != (cache == "" && i == 1) {
				t.Errorf("Load(merged) = %+v", res)
			}
		}
		got := csv(query(t, db, `SELECT rank, pid, count(*) FROM events WHERE trace = 'm1' GROUP BY ALL ORDER BY ALL`))
		if want := "0,0,1\n0,100,1\n1,1,2\n1,200,1\n"; got != want {
			t.Errorf("cache %q: events per rank and pid:\n%s", cache, testutil.Diff(want, got))
		}
		got = csv(query(t, db, `SELECT rank, rank_source, tp, dp, pp, ep, events, first_ts_ns, last_end_ns FROM traces WHERE trace = 'm1' ORDER BY rank`))
		if want := "0,merged_prefix,0,0,0,0,2,10000,25000\n1,merged_prefix,1,0,0,0,3,11000,36000\n"; got != want {
			t.Errorf("cache %q: traces rows:\n%s", cache, testutil.Diff(want, got))
		}
		got = csv(query(t, db, `SELECT rank, pid, tid, process_name, thread_name FROM threads WHERE trace = 'm1' ORDER BY pid, tid NULLS FIRST`))
		if want := "0,0,NULL,[TP00-DP00-PP00-EP00] GPU 0,NULL\n1,1,NULL,[TP01-DP00-PP00-EP00] GPU 1,NULL\n0,100,NULL,[TP00-DP00-PP00-EP00] VllmWorker,NULL\n1,200,NULL,[TP01-DP00-PP00-EP00] VllmWorker,NULL\n1,200,1,NULL,python\n"; got != want {
			t.Errorf("cache %q: threads:\n%s", cache, testutil.Diff(want, got))
		}
	}
}

// TestParseCacheFormat checks that an entry written by another build (an
// older importer or schema) is parsed again instead of served, and then
// rewritten in the current format.
func TestParseCacheFormat(t *testing.T) {
	cache := t.TempDir()
	db := openTest(t, cache)
	if r := load(t, db, trace.LoadOptions{Name: "a"}, tiny); r.Cached {
		t.Fatalf("first load served from an empty cache: %+v", r)
	}
	db.WaitCache()
	entries, _ := filepath.Glob(filepath.Join(cache, "*.json"))
	if len(entries) != 1 {
		t.Fatalf("cache holds %d entries, want 1", len(entries))
	}
	b, err := os.ReadFile(entries[0])
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Replace(string(b), `"format":"`+cacheFormat+`"`, `"format":"importer-1-schema-000000000000"`, 1)
	if old == string(b) {
		t.Fatalf("entry does not record its format: %.200s", b)
	}
	if err := os.WriteFile(entries[0], []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := load(t, db, trace.LoadOptions{Name: "b"}, tiny); r.Cached {
		t.Errorf("an entry of another format was served: %+v", r)
	}
	db.WaitCache()
	if r := load(t, db, trace.LoadOptions{Name: "c"}, tiny); !r.Cached {
		t.Errorf("the rewritten entry was not served: %+v", r)
	}
}

// The parser's stream into a database file runs under the small
// loadMemoryLimit unless the database's own limit is lower (an in-memory
// database keeps its own), and loads put the database's limit back, also
// when they fail.
func TestLoadMemoryLimitRestored(t *testing.T) {
	for _, tc := range []struct{ file, explicit, during string }{
		{"t.duckdb", "", "122.0 MiB"},     // DuckDB's rendering of 128MB
		{"t.duckdb", "1GB", "122.0 MiB"},  // higher: lowered
		{"t.duckdb", "100MB", "95.3 MiB"}, // lower: kept
		{"t.duckdb", "0.1GB", "95.3 MiB"}, // the same, another way
		{"", "1GB", "953.6 MiB"},          // in memory: kept
	} {
		path := ""
		if tc.file != "" {
			path = filepath.Join(t.TempDir(), tc.file)
		}
		db, err := Open(path, Options{CacheDir: "-", MemoryLimit: tc.explicit})
		if err != nil {
			t.Fatal(err)
		}
		limit := func() string { return strings.TrimSpace(csv(query(t, db, `SELECT current_setting('memory_limit')`))) }
		before := limit()
		var during string
		if err := db.loadMemory(context.Background(), func() error { during = limit(); return nil }); err != nil {
			t.Fatal(err)
		}
		if during != tc.during {
			t.Errorf("%q, explicit %q: memory_limit %q while the stream runs, want %q", tc.file, tc.explicit, during, tc.during)
		}
		load(t, db, trace.LoadOptions{}, tiny)
		if _, err := db.Load(context.Background(), []string{"testdata/missing.json"}, trace.LoadOptions{}, nil); err == nil {
			t.Error("loading a missing file succeeded")
		}
		if after := limit(); after != before {
			t.Errorf("%q: memory_limit %q after loads, was %q (explicit %q)", tc.file, after, before, tc.explicit)
		}
		db.Close()
	}
}

// A load read back from the parse cache keeps the database's limit: DuckDB
// inserts the cache's Parquet on every thread, which the small limit stops.
func TestCacheLoadKeepsMemoryLimit(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "t.duckdb"), Options{CacheDir: t.TempDir(), MemoryLimit: "1GB"})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	limit := func() string { return strings.TrimSpace(csv(query(t, db, `SELECT current_setting('memory_limit')`))) }
	before := limit()
	load(t, db, trace.LoadOptions{Name: "a"}, tiny)
	db.WaitCache()
	var during []string
	r, err := db.Load(context.Background(), []string{tiny}, trace.LoadOptions{Name: "b"}, func(trace.Progress) { during = append(during, limit()) })
	if err != nil {
		t.Fatal(err)
	}
	if !r.Cached || len(during) == 0 {
		t.Fatalf("the second load was not read from the cache with progress: %+v, %d progress calls", r, len(during))
	}
	for _, d := range during {
		if d != before {
			t.Errorf("memory_limit %q during a load from the cache, want the database's %q", d, before)
		}
	}
}

// limitBytes reads the limits DuckDB takes.
func TestLimitBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"128MB", 128e6, true}, {"512MB", 512e6, true}, {"1GB", 1e9, true}, {"0.5 GB", 5e8, true},
		{"100MiB", 100 << 20, true}, {"2gib", 2 << 30, true}, {"12000MB", 12e9, true},
		{"", 0, false}, {"MB", 0, false}, {"12", 0, false}, {"12 apples", 0, false},
	} {
		if got, ok := limitBytes(tc.in); got != tc.want || ok != tc.ok {
			t.Errorf("limitBytes(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// WithMemoryLimit lowers a database file's limit while fn runs and puts it
// back, also when fn fails; an in-memory database keeps its limit.
func TestWithMemoryLimit(t *testing.T) {
	for _, path := range []string{filepath.Join(t.TempDir(), "t.duckdb"), ""} {
		db, err := Open(path, Options{CacheDir: "-", MemoryLimit: "1GB", TempDirectory: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		limit := func() string { return csv(query(t, db, `SELECT current_setting('memory_limit')`)) }
		before := limit()
		var during string
		failed := errors.New("fn failed")
		if err := db.WithMemoryLimit(context.Background(), "100MB", func() error { during = limit(); return failed }); err != failed {
			t.Errorf("WithMemoryLimit returned %v, want fn's error", err)
		}
		want := "95.3 MiB\n" // DuckDB's rendering of 100MB
		if path == "" {
			want = before
		}
		if during != want {
			t.Errorf("path %q: memory_limit %q while fn ran, want %q", path, during, want)
		}
		if after := limit(); after != before {
			t.Errorf("path %q: memory_limit %q after, was %q", path, after, before)
		}
		db.Close()
	}
}

// An event written without a ts keeps NULL times: a missing start is a gap,
// never time zero.
func TestEventWithoutTs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nots.json")
	doc := `{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"timed","pid":1,"tid":1,"ts":5,"dur":2},` +
		`{"ph":"X","cat":"cpu_op","name":"untimed","pid":1,"tid":1,"dur":3}]}`
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	db := openTest(t, "-")
	load(t, db, trace.LoadOptions{}, path)
	got := csv(query(t, db, `SELECT name, ts_ns, dur_ns, end_ns FROM events ORDER BY name`))
	if want := "timed,5000,2000,7000\nuntimed,NULL,3000,NULL\n"; got != want {
		t.Errorf("events:\ngot  %q\nwant %q", got, want)
	}
	if got := csv(query(t, db, `SELECT first_ts_ns, last_end_ns FROM traces`)); got != "5000,7000\n" {
		t.Errorf("traces span = %q, want 5000,7000", got)
	}
}

// A scratch database lives in a temporary directory until Close, and
// holds what a load puts in it like any database.
func TestScratchDatabase(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	db, err := Open("", Options{CacheDir: "-", Scratch: true, MemoryLimit: "256MB"})
	if err != nil {
		t.Fatal(err)
	}
	dirs, _ := filepath.Glob(filepath.Join(tmp, "tracebook-db-*", "traces.duckdb"))
	if len(dirs) != 1 {
		t.Fatalf("scratch database files: %v", dirs)
	}
	if db.Path() != "" {
		t.Errorf("Path() = %q, want \"\" for a scratch database", db.Path())
	}
	ctx := context.Background()
	if _, err := db.Load(ctx, []string{filepath.Join("testdata", "tiny.json")}, trace.LoadOptions{Name: "t"}, nil); err != nil {
		t.Fatal(err)
	}
	tb, err := db.Query(ctx, "SELECT count(*) AS n FROM events", 0)
	if err != nil || len(tb.Rows) != 1 || tb.Rows[0][0] != int64(12) {
		t.Fatalf("count: %v %v", tb, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "tracebook-db-*")); len(left) > 0 {
		t.Errorf("Close left %v", left)
	}

	// The directory of a process that died without Close goes at the next
	// scratch Open; one whose process lives, and one with no pid file,
	// stay.
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("no /proc: orphans are not detected here")
	}
	dead := filepath.Join(tmp, "tracebook-db-dead")
	alive := filepath.Join(tmp, "tracebook-db-alive")
	foreign := filepath.Join(tmp, "tracebook-db-foreign")
	for dir, pid := range map[string]string{dead: "2147483646", alive: strconv.Itoa(os.Getpid()), foreign: ""} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if pid != "" {
			if err := os.WriteFile(filepath.Join(dir, "pid"), []byte(pid), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	db, err = Open("", Options{CacheDir: "-", Scratch: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for dir, want := range map[string]bool{dead: false, alive: true, foreign: true} {
		if _, err := os.Stat(dir); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", filepath.Base(dir), err == nil, want)
		}
	}
}

// TestDiskFull: an error for a full disk says which disk and what to do,
// for a scratch database, a database file and an in-memory one, and keeps
// the error it wraps; any other error comes back as it was.
func TestDiskFull(t *testing.T) {
	full := errors.New(`IO Error: Could not write file "/t/x": No space left on device`)
	other := errors.New("Binder Error: no column x")
	tests := []struct {
		name string
		db   *DB
		err  error
		want string // the added line; "" = err unchanged
	}{
		{"scratch", &DB{scratch: "/t/tracebook-db-1", path: "/t/tracebook-db-1/traces.duckdb", tempDir: "/t/tracebook-db-1/tmp"}, full,
			"the disk under the scratch database (/t/tracebook-db-1) is full: free space there, or set TMPDIR to a folder on a larger disk before starting tracebook"},
		{"file", &DB{path: "/data/job.duckdb", tempDir: "/data/job.duckdb.tmp"}, full,
			"the disk under /data/job.duckdb (or under its spill directory /data/job.duckdb.tmp) is full: free space there, or use a database file on a larger disk"},
		{"memory", &DB{tempDir: "/t/tracebook-duckdb-2"}, full,
			"the disk under DuckDB's spill directory (/t/tracebook-duckdb-2) is full: free space there, or set TMPDIR to a folder on a larger disk before starting tracebook"},
		{"other error", &DB{path: "/data/job.duckdb"}, other, ""},
		{"no error", &DB{}, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.db.diskFull(tc.err)
			if tc.want == "" {
				if got != tc.err {
					t.Fatalf("diskFull(%v) = %v, want it unchanged", tc.err, got)
				}
				return
			}
			if !errors.Is(got, tc.err) {
				t.Errorf("diskFull does not wrap %v", tc.err)
			}
			if want := tc.err.Error() + "\n" + tc.want; got.Error() != want {
				t.Errorf("diskFull =\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestLoadOnFullDisk: a load that runs out of disk under a scratch
// database (a 2 MB tmpfs) fails with the full-disk hint, leaves the traces
// loaded before it as they were, and Close removes the scratch directory.
// It needs to mount a tmpfs (root, and a system that allows it).
func TestLoadOnFullDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: mounts a tmpfs")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2M", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s): a full disk is not tried", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	t.Setenv("TMPDIR", dir)
	db, err := Open("", Options{CacheDir: "-", Scratch: true, MemoryLimit: "256MB"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() }) // before the unmount
	ctx := context.Background()
	if _, err := db.Load(ctx, []string{filepath.Join("testdata", "tiny.json")}, trace.LoadOptions{Name: "t"}, nil); err != nil {
		t.Fatal(err)
	}
	// 200,000 kernels with names that barely compress: more than 2 MB in
	// the file.
	big := filepath.Join(t.TempDir(), "big.json")
	var b strings.Builder
	b.WriteString(`{"traceEvents":[`)
	for i := range 200_000 {
		if i > 0 {
			b.WriteByte(',')
		}
		h := uint64(i+1) * 0x9E3779B97F4A7C15
		fmt.Fprintf(&b, `{"ph":"X","cat":"kernel","name":"k%x%x","pid":0,"tid":7,"ts":%d,"dur":%d,"args":{"correlation":%d,"stream":7}}`, h, h*31, 1000+i*5, h%97, h>>40)
	}
	b.WriteString(`]}`)
	if err := os.WriteFile(big, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = db.Load(ctx, []string{big}, trace.LoadOptions{Name: "big"}, nil)
	if err == nil || !strings.Contains(err.Error(), "No space left on device") || !strings.Contains(err.Error(), "is full: free space there, or set TMPDIR") {
		t.Fatalf("load on a full disk: err = %v, want the full-disk hint", err)
	}
	tb, err := db.Query(ctx, "SELECT trace, count(*) AS n FROM events GROUP BY trace", 0)
	if err != nil || len(tb.Rows) != 1 || tb.Rows[0][0] != "t" || tb.Rows[0][1] != int64(12) {
		t.Fatalf("after the failed load: %v %v, want only trace t with its 12 events", tb, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "tracebook-db-*")); len(left) > 0 {
		t.Errorf("Close left %v", left)
	}
}

// TestInMemoryCompressed: an in-memory database keeps its tables in
// memoryCatalog on every connection, and a load leaves the events
// compressed there (the default in-memory catalog stores every segment
// uncompressed).
func TestInMemoryCompressed(t *testing.T) {
	db := openTest(t, "-")
	load(t, db, trace.LoadOptions{}, "../../testdata/kineto/resnet50_num_workers_0")
	ctx := context.Background()
	// Two connections at once: the second is new to the pool and must
	// see the same tables.
	var conns []*sql.Conn
	for range 2 {
		c, err := db.SQL().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	for i, c := range conns {
		var catalog string
		var n int
		if err := c.QueryRowContext(ctx, `SELECT current_database(), (SELECT count(*) FROM events)`).Scan(&catalog, &n); err != nil {
			t.Fatal(err)
		}
		if catalog != memoryCatalog || n == 0 {
			t.Errorf("connection %d: current_database() = %q with %d events, want %q and the loaded events", i, catalog, n, memoryCatalog)
		}
	}
	got := csv(query(t, db, `SELECT count(*) FILTER (WHERE compression <> 'Uncompressed') > count(*) / 2
		FROM pragma_storage_info('tb_events') WHERE segment_type <> 'VALIDITY'`))
	if got != "true\n" {
		t.Errorf("most of tb_events' segments are uncompressed after a load")
	}
}

// sortedLast tells the queries whose rows come out of a sort, the ones
// QueryEach streams.
func TestSortedLast(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want bool
	}{
		{"SELECT * FROM t ORDER BY a", true},
		{"SELECT a FROM (SELECT * FROM t ORDER BY a) WHERE a > 1", false},
		{"SELECT * FROM (\nSELECT 1 UNION ALL SELECT 2\n) WHERE x = 'frame' order by thread_id, ts_ns LIMIT 5", true},
		{"SELECT * FROM a UNION ALL SELECT * FROM b", false},
		{"SELECT count(*) FROM (SELECT 1)", false},
		{"SELECT * FROM a UNION ALL SELECT * FROM b -- no ORDER BY: a union", false},
		{"SELECT * FROM t\nORDER BY a -- the frames' order\nLIMIT 3", true},
	} {
		if got := sortedLast(tc.q); got != tc.want {
			t.Errorf("sortedLast(%q) = %v, want %v", tc.q, got, tc.want)
		}
	}
}

// An interrupt stops a streamed query within a second, in its sort and
// while its rows are read, and the connection serves the next query.
func TestQueryEachStreamCancel(t *testing.T) {
	db := openTest(t, "-")
	q := `SELECT range AS i, hash(range) AS h FROM range(?) ORDER BY h`
	for _, tc := range []struct {
		name string
		rows int64
		read bool // cancel once a row was read, else 100 ms after the start
	}{{"in the sort", 200_000_000, false}, {"while read", 1_000_000, true}} {
		ctx, cancel := context.WithCancel(context.Background())
		var cancelled time.Time
		if !tc.read {
			time.AfterFunc(100*time.Millisecond, func() { cancelled = time.Now(); cancel() })
		}
		before := streamed.Load()
		n := 0
		err := db.QueryEach(ctx, q, nil, func(table.Cells) error {
			if n++; tc.read && n == 1 {
				cancelled = time.Now()
				cancel()
			}
			return nil
		}, tc.rows)
		returned := time.Now()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: QueryEach(cancelled) = %v, want context.Canceled", tc.name, err)
		}
		if d := returned.Sub(cancelled); d > time.Second {
			t.Errorf("%s: QueryEach returned %v after the cancel, want < 1s", tc.name, d)
		}
		if tc.read && (streamed.Load() == before || int64(n) == tc.rows) {
			t.Errorf("%s: %d of %d rows read after the cancel, streamed %v", tc.name, n, tc.rows, streamed.Load() > before)
		}
	}
	n := 0
	if err := db.QueryEach(context.Background(), q, nil, func(table.Cells) error { n++; return nil }, int64(10)); err != nil || n != 10 {
		t.Errorf("QueryEach after the cancels = %v, %d rows, want 10", err, n)
	}
}

// A streamed query that fails while it runs returns DuckDB's own error,
// which the callers read (an out-of-memory error is retried under a
// higher limit).
func TestQueryEachStreamError(t *testing.T) {
	db := openTest(t, "-")
	before := streamed.Load()
	n := 0
	err := db.QueryEach(context.Background(), `SELECT range AS i, CAST(CASE WHEN range = 70000 THEN 'x' ELSE range::VARCHAR END AS INTEGER) AS bad FROM range(?) ORDER BY i`,
		nil, func(table.Cells) error { n++; return nil }, int64(100_000))
	if err == nil || !strings.Contains(err.Error(), "Conversion Error") {
		t.Errorf("QueryEach(a failing cast) = %v after %d rows, want DuckDB's Conversion Error", err, n)
	}
	if streamed.Load() != before {
		t.Errorf("the failed query counted as streamed")
	}
}

// TestASOFJoinMerges: an ASOF join whose left side DuckDB estimates at a
// few rows still merges its sorted sides (planSettings) instead of a
// nested loop over every row of the right side.
func TestASOFJoinMerges(t *testing.T) {
	db, err := Open("", Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	plan := csv(query(t, db, `EXPLAIN
		WITH l AS (SELECT range AS t FROM range(10) WHERE t % 7 = 3),
		r AS (SELECT range AS t, range * 2 AS v FROM range(100000))
		SELECT l.t, r.v FROM l ASOF LEFT JOIN r ON r.t <= l.t`))
	if !strings.Contains(plan, "ASOF_JOIN") || strings.Contains(plan, "NESTED_LOOP") {
		t.Errorf("a small left side's ASOF join is not merged:\n%s", plan)
	}
}

// TestHistMacro: tb_hist (sql/views.sql) writes a histogram's buckets in
// numeric order, negative ones first, whatever order the list holds.
func TestHistMacro(t *testing.T) {
	db, err := Open("", Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got := strings.TrimSpace(csv(query(t, db, `SELECT tb_hist([{'b': 12, 'n': 1}, {'b': -1, 'n': 2}, {'b': 3, 'n': 10}]),
		tb_hist(NULL::STRUCT(b INTEGER, n BIGINT)[]) IS NULL`)))
	if want := "-1:2 3:10 12:1,true"; got != want {
		t.Errorf("tb_hist = %q, want %q", got, want)
	}
}

// TestLoadFilesInOneStatement: the files of a job that all stream from the
// parser are stored by one statement (loadStreamed), each row with its own
// file's id and rank, in file order, as each file loaded on its own gives
// them; progress counts the events over the files, never going back.
func TestLoadFilesInOneStatement(t *testing.T) {
	good, err := os.ReadFile(tiny)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var paths []string
	for _, r := range []int{3, 5, 9} { // ranks that are not the files' ids
		p := filepath.Join(dir, fmt.Sprintf("rank-%d.json", r))
		if err := os.WriteFile(p, good, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	for _, file := range []bool{false, true} {
		t.Run(fmt.Sprintf("file=%v", file), func(t *testing.T) { testLoadFilesInOneStatement(t, dir, paths, file) })
	}
}

// testLoadFilesInOneStatement loads the job of paths (dir) into memory or
// into a database file (whose streams do not overlap their parses).
func testLoadFilesInOneStatement(t *testing.T, dir string, paths []string, file bool) {
	db := openTest(t, "-")
	if file {
		var err error
		if db, err = Open(filepath.Join(t.TempDir(), "job.duckdb"), Options{CacheDir: "-", TempDirectory: t.TempDir()}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
	}
	var events []int64
	if _, err := db.Load(context.Background(), []string{dir}, trace.LoadOptions{Name: "job"}, func(p trace.Progress) { events = append(events, p.Events) }); err != nil {
		t.Fatal(err)
	}
	got := csv(query(t, db, `SELECT file_id, rank, count(*), max(rowid) - min(rowid) + 1 FROM tb_events GROUP BY ALL ORDER BY min(rowid)`))
	// Each file alone, through the single file's statement.
	var want strings.Builder
	for i, p := range paths {
		one := openTest(t, "-")
		load(t, one, trace.LoadOptions{}, p)
		row := query(t, one, `SELECT rank, count(*) FROM tb_events GROUP BY ALL`).Rows
		if len(row) != 1 {
			t.Fatalf("%s alone: %v", p, row)
		}
		fmt.Fprintf(&want, "%d,%v,%v,%v\n", i, row[0][0], row[0][1], row[0][1])
	}
	if got != want.String() {
		t.Errorf("the job's files (file, rank, rows, rowid span):\n%s\nwant (each file alone):\n%s", got, want.String())
	}
	if !slices.IsSorted(events) || len(events) == 0 {
		t.Errorf("progress events = %v, want them growing", events)
	}
	total := query(t, db, `SELECT count(*) FROM tb_events`).Rows[0][0].(int64)
	if last := events[len(events)-1]; last != total {
		t.Errorf("progress ends at %d events, the job stored %d", last, total)
	}
}
