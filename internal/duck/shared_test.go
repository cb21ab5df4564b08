//go:build cgo

package duck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/internal/testutil"
)

// fileStats is the part of ../shared/traces/stats.json the tests check.
type fileStats struct {
	Path      string           `json:"path"`
	JSONBytes int64            `json:"uncompressed_bytes"`
	PhCounts  map[string]int64 `json:"ph_counts"`
	CatCounts map[string]int64 `json:"cat_counts"`
}

func sharedStats(t testing.TB) (string, []fileStats) {
	t.Helper()
	dir := testutil.SharedTraces(t)
	b, err := os.ReadFile(filepath.Join(dir, "stats.json"))
	if err != nil {
		t.Fatal(err)
	}
	var stats []fileStats
	if err := json.Unmarshal(b, &stats); err != nil {
		t.Fatal(err)
	}
	return dir, stats
}

// counts renders a map as sorted key=value lines.
func counts(m map[string]int64) string {
	var lines []string
	for k, v := range m {
		lines = append(lines, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestSharedTracesMatchStats loads every shared trace and checks the events
// per cat and per ph that DuckDB holds against stats.json (metadata events,
// ph M, are not events: they land in threads and traces).
func TestSharedTracesMatchStats(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 680 MB of JSON")
	}
	dir, stats := sharedStats(t)
	db := openTest(t, "-")
	ctx := context.Background()
	for _, st := range stats {
		t.Run(st.Path, func(t *testing.T) {
			res := load(t, db, trace.LoadOptions{Name: st.Path}, filepath.Join(dir, st.Path))
			defer db.Drop(ctx, st.Path)
			if res.JSONBytes != st.JSONBytes {
				t.Errorf("JSONBytes = %d, want %d", res.JSONBytes, st.JSONBytes)
			}
			wantCat, wantPh := map[string]int64{}, map[string]int64{}
			for k, v := range st.CatCounts {
				if !strings.HasPrefix(k, "<M:") {
					wantCat[k] = v
				}
			}
			for k, v := range st.PhCounts {
				if k != "M" {
					wantPh[k] = v
				}
			}
			gotCat, gotPh := map[string]int64{}, map[string]int64{}
			for _, r := range query(t, db, `SELECT coalesce(cat, '<none>'), count(*) FROM events WHERE trace = ? GROUP BY 1`, st.Path).Rows {
				gotCat[r[0].(string)] = r[1].(int64)
			}
			for _, r := range query(t, db, `SELECT ph, count(*) FROM events WHERE trace = ? GROUP BY 1`, st.Path).Rows {
				gotPh[r[0].(string)] = r[1].(int64)
			}
			if g, w := counts(gotCat), counts(wantCat); g != w {
				t.Errorf("events per cat:\n%s", testutil.Diff(w, g))
			}
			if g, w := counts(gotPh), counts(wantPh); g != w {
				t.Errorf("events per ph:\n%s", testutil.Diff(w, g))
			}
			var n int64
			for _, v := range wantPh {
				n += v
			}
			tr := query(t, db, `SELECT sum(events) FROM traces WHERE trace = ?`, st.Path)
			if got := tr.Rows[0][0]; got != n || res.Events != n {
				t.Errorf("traces.events = %v, LoadResult.Events = %d, want %d", got, res.Events, n)
			}
		})
	}
}

// TestDLRMEightRanks loads the per-rank files of one job as one trace.
func TestDLRMEightRanks(t *testing.T) {
	dir := filepath.Join(testutil.SharedTraces(t), "param", "dlrm_8rank")
	db := openTest(t, "-")
	res := load(t, db, trace.LoadOptions{}, dir)
	if res.Trace != "dlrm_8rank" || res.Files != 8 || fmt.Sprint(res.Ranks) != "[0 1 2 3 4 5 6 7]" {
		t.Errorf("Load(dlrm_8rank) = %+v", res)
	}
	got := csv(query(t, db, `SELECT rank, count(*) FROM kernels GROUP BY 1 ORDER BY 1`))
	want := "0,245\n1,310\n2,246\n3,315\n4,251\n5,245\n6,246\n7,246\n"
	if got != want {
		t.Errorf("kernels per rank:\n%s", testutil.Diff(want, got))
	}
	got = csv(query(t, db, `SELECT count(*), count(DISTINCT rank), count(DISTINCT file_id), min(world_size), max(world_size) FROM traces`))
	if got != "8,8,8,8,8\n" {
		t.Errorf("traces rows: %q", got)
	}
}

// snapshot summarises everything the database holds.
func snapshot(t testing.TB, db *DB) string {
	t.Helper()
	return csv(query(t, db, `SELECT 'traces', count(*) FROM traces UNION ALL SELECT 'events', count(*) FROM events
		UNION ALL SELECT 'threads', count(*) FROM threads UNION ALL SELECT 'names', count(DISTINCT trace) FROM events ORDER BY 1`))
}

func TestLoadIsAtomic(t *testing.T) {
	db := openTest(t, "-")
	load(t, db, trace.LoadOptions{}, tiny)
	before := snapshot(t, db)

	good, err := os.ReadFile(tiny)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// A job whose second file breaks after some events: the first file's
	// events must not stay.
	if err := os.WriteFile(filepath.Join(dir, "rank-0.json"), good, 0o644); err != nil {
		t.Fatal(err)
	}
	cut := strings.Index(string(good), `{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2"`)
	bad := append(append([]byte{}, good[:cut]...), []byte(`{"ph": "X", "ts": }`)...)
	if err := os.WriteFile(filepath.Join(dir, "rank-1.json"), bad, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = db.Load(context.Background(), []string{dir}, trace.LoadOptions{Name: "broken"}, nil)
	if err == nil {
		t.Fatal("Load(corrupt) = nil")
	}
	var pe *trace.ParseError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "rank-1.json") || !strings.Contains(err.Error(), "offset") {
		t.Errorf("Load(corrupt) = %v, want a ParseError naming the file and the offset", err)
	}
	if after := snapshot(t, db); after != before {
		t.Errorf("a failed load changed the database:\nbefore %q\nafter  %q", before, after)
	}
	// A truncated gzip stream.
	gz := filepath.Join(testutil.SharedTraces(t), "param/dlrm_8rank/worker0_step_12.1694128201545.pt.trace.json.gz")
	b, err := os.ReadFile(gz)
	if err != nil {
		t.Fatal(err)
	}
	trunc := filepath.Join(dir, "trunc.json.gz")
	if err := os.WriteFile(trunc, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Load(context.Background(), []string{trunc}, trace.LoadOptions{}, nil); err == nil || !strings.Contains(err.Error(), "trunc.json.gz") {
		t.Errorf("Load(truncated gzip) = %v", err)
	}
	if after := snapshot(t, db); after != before {
		t.Errorf("a failed load changed the database:\nbefore %q\nafter  %q", before, after)
	}
	// The database still works, with its threads setting restored, and the
	// good trace loads again under another name.
	if got := csv(query(t, db, `SELECT current_setting('threads') = ?`, db.threads)); got != "true\n" {
		t.Errorf("threads not restored after a failed load")
	}
	load(t, db, trace.LoadOptions{Name: "again"}, tiny)
}

func TestParseCache(t *testing.T) {
	dir := filepath.Join(testutil.SharedTraces(t), "param", "dlrm_8rank")
	cache := t.TempDir()
	db := openTest(t, cache)
	first := load(t, db, trace.LoadOptions{Name: "first"}, dir)
	if first.Cached || first.JSONBytes == 0 {
		t.Errorf("first load: %+v, want parsed", first)
	}
	db.WaitCache()
	entries, _ := filepath.Glob(filepath.Join(cache, "*.parquet"))
	if len(entries) != 8 {
		t.Errorf("cache holds %d parquet files, want 8", len(entries))
	}
	// A second database (a kernel restart) reads the cache.
	db2 := openTest(t, cache)
	for _, d := range []*DB{db, db2} {
		second := load(t, d, trace.LoadOptions{Name: "second"}, dir)
		if !second.Cached || second.JSONBytes != 0 || second.Events != first.Events || fmt.Sprint(second.Ranks) != fmt.Sprint(first.Ranks) {
			t.Errorf("second load: %+v, want served from the cache, like %+v", second, first)
		}
	}
	load(t, db2, trace.LoadOptions{Name: "first"}, filepath.Join(dir, "*.json.gz"))
	for _, d := range []*DB{db, db2} {
		for _, tbl := range []string{"events", "traces", "threads"} {
			q := fmt.Sprintf(`SELECT count(*) FROM (
				(SELECT * EXCLUDE (trace) FROM %[1]s WHERE trace = 'first' EXCEPT ALL SELECT * EXCLUDE (trace) FROM %[1]s WHERE trace = 'second')
				UNION ALL
				(SELECT * EXCLUDE (trace) FROM %[1]s WHERE trace = 'second' EXCEPT ALL SELECT * EXCLUDE (trace) FROM %[1]s WHERE trace = 'first'))`, tbl)
			if got := csv(query(t, d, q)); got != "0\n" {
				t.Errorf("%s: rows from the cache differ from parsed rows: %s", tbl, got)
			}
		}
	}
}

func TestCancel(t *testing.T) {
	path := filepath.Join(testutil.SharedTraces(t), "hta/mtia_single_rank/mtia_rank_0.json.gz")
	db := openTest(t, "-")
	before := snapshot(t, db)
	ctx, cancel := context.WithCancel(context.Background())
	var cancelled time.Time
	time.AfterFunc(150*time.Millisecond, func() { cancelled = time.Now(); cancel() })
	_, err := db.Load(ctx, []string{path}, trace.LoadOptions{}, nil)
	returned := time.Now()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Load(cancelled) = %v, want context.Canceled", err)
	}
	if d := returned.Sub(cancelled); d > time.Second {
		t.Errorf("Load returned %v after the cancel, want < 1s", d)
	}
	if after := snapshot(t, db); after != before {
		t.Errorf("a cancelled load changed the database: %q", after)
	}
	load(t, db, trace.LoadOptions{}, tiny)
}

func TestWindowAndSteps(t *testing.T) {
	db := openTest(t, "-")
	tests := []struct {
		opts trace.LoadOptions
		want string
	}{
		{trace.LoadOptions{Name: "w", WindowStartNs: 20_000, WindowEndNs: 60_000},
			"Memcpy HtoD (Pageable -> Device)\nMemset (Device)\nProfilerStep#1\nmodel.py(10): forward\nsgemm_128x64\n"},
		{trace.LoadOptions{Name: "s2", FirstStep: 2, LastStep: 2}, "ProfilerStep#2\naten::add\nmodel.py(10): forward\n"},
		{trace.LoadOptions{Name: "s1", FirstStep: 1, LastStep: 1}, "9\n"},
	}
	for _, tc := range tests {
		res := load(t, db, tc.opts, tiny)
		q := `SELECT name FROM events WHERE trace = ? ORDER BY name`
		if strings.HasPrefix(tc.want, "9") {
			q = `SELECT count(*) FROM events WHERE trace = ?`
		}
		if got := csv(query(t, db, q, tc.opts.Name)); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.opts.Name, got, tc.want)
		}
		tr := query(t, db, `SELECT events, slice FROM traces WHERE trace = ?`, tc.opts.Name)
		if tr.Rows[0][0] != res.Events || tr.Rows[0][1] == nil {
			t.Errorf("%s: traces row %v, LoadResult.Events %d", tc.opts.Name, tr.Rows[0], res.Events)
		}
	}
	if got := csv(query(t, db, `SELECT trace, slice FROM traces ORDER BY 1`)); got != "s1,steps 1..1\ns2,steps 2..2\nw,window 0.02ms..0.06ms\n" {
		t.Errorf("slices: %q", got)
	}
	// No events in the range.
	if _, err := db.Load(context.Background(), []string{tiny}, trace.LoadOptions{Name: "none", FirstStep: 7, LastStep: 9}, nil); err == nil {
		t.Error("Load(steps 7..9) = nil, want an error")
	}
}

// TestSpillsToDisk loads a trace larger than the memory limit: DuckDB spills
// to the temporary directory instead of failing.
func TestSpillsToDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 87 MB of JSON")
	}
	path := filepath.Join(testutil.SharedTraces(t), "hta/mtia_single_rank/mtia_rank_0.json.gz")
	db, err := Open("", Options{CacheDir: "-", MemoryLimit: "24MB", TempDirectory: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res := load(t, db, trace.LoadOptions{}, path)
	if got := csv(query(t, db, `SELECT count(*) FROM events`)); got != fmt.Sprintf("%d\n", res.Events) {
		t.Errorf("events: %q, want %d", got, res.Events)
	}
	spilled := query(t, db, `SELECT sum(temporary_storage_bytes) FROM duckdb_memory()`).Rows[0][0]
	if n, ok := spilled.(float64); !ok || n <= 0 {
		if n, ok := spilled.(int64); !ok || n <= 0 {
			t.Errorf("temporary_storage_bytes = %v, want > 0", spilled)
		}
	}
}

// --steps numbers the steps as the evidence does (tb_step_family): on a
// rank the first family present wins (vLLM execute_* before SGLang step[...]
// before ProfilerStep#N before Optimizer.step#), numbered by order from 0
// except ProfilerStep#N.
func TestStepsFamilies(t *testing.T) {
	ev := func(name string, ts, dur int) string {
		return fmt.Sprintf(`{"ph":"X","cat":"user_annotation","name":%q,"pid":1,"tid":1,"ts":%d,"dur":%d},`, name, ts, dur) +
			fmt.Sprintf(`{"ph":"X","cat":"cpu_op","name":"op in %s","pid":1,"tid":1,"ts":%d,"dur":1}`, name, ts+1)
	}
	tests := []struct {
		name   string
		events []string
		step   int
		want   string
	}{
		{"sglang", []string{ev("step[DECODE bs=4]", 10, 5), ev("step[EXTEND bs=1 toks=9]", 20, 5), ev("step[DECODE bs=5]", 30, 5)},
			1, "op in step[EXTEND bs=1 toks=9]\nstep[EXTEND bs=1 toks=9]\n"},
		{"vllm before profiler steps", []string{ev("ProfilerStep#7", 0, 100), ev("execute_context_1(9)_generation_0(0)", 10, 5),
			ev("execute_context_0(0)_generation_2(2)", 20, 5)},
			1, "ProfilerStep#7\nexecute_context_0(0)_generation_2(2)\nop in execute_context_0(0)_generation_2(2)\n"},
		{"profiler steps by N", []string{ev("ProfilerStep#7", 10, 5), ev("ProfilerStep#8", 20, 5)},
			8, "ProfilerStep#8\nop in ProfilerStep#8\n"},
		// Without step annotations an iteration runs from one optimizer
		// step's end to the next's: step 1 is 15..35.
		{"optimizer steps", []string{ev("Optimizer.step#SGD.step", 10, 5), ev("Optimizer.step#SGD.step", 30, 5), ev("Optimizer.step#SGD.step", 50, 5)},
			1, "Optimizer.step#SGD.step\nop in Optimizer.step#SGD.step\n"},
	}
	db := openTest(t, "-")
	for i, tc := range tests {
		path := filepath.Join(t.TempDir(), fmt.Sprintf("f%d.json", i))
		if err := os.WriteFile(path, []byte(`{"traceEvents":[`+strings.Join(tc.events, ",")+`]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		load(t, db, trace.LoadOptions{Name: tc.name, FirstStep: tc.step, LastStep: tc.step}, path)
		if got := csv(query(t, db, `SELECT name FROM events WHERE trace = ? ORDER BY name`, tc.name)); got != tc.want {
			t.Errorf("%s: steps %d..%d hold\n%s\nwant\n%s", tc.name, tc.step, tc.step, got, tc.want)
		}
	}
}

// A trace read back from the parse cache, whose Parquet row groups DuckDB
// reads on every thread, keeps its events in file order: each event has
// the rowid a parse gives it (the cross-view's frame and operation ids).
// The 48 MB vLLM trace spans two row groups.
func TestCacheKeepsFileOrder(t *testing.T) {
	dir := testutil.SharedTraces(t)
	path := filepath.Join(dir, "tracemap/vllm_h100_tp4_rank0/1_h100_1000isl_10osl_32con.pt.trace.json.gz")
	order := `SELECT count(*), sum(hash(rowid, file_id, idx, name_id, ts_ns)) FROM tb_events`
	cache := t.TempDir()
	parsed := openTest(t, cache)
	load(t, parsed, trace.LoadOptions{}, path)
	parsed.WaitCache()
	want := csv(query(t, parsed, order))
	cached := openTest(t, cache)
	if r := load(t, cached, trace.LoadOptions{}, path); !r.Cached {
		t.Fatalf("the entry was not served: %+v", r)
	}
	if got := csv(query(t, cached, order)); got != want {
		t.Errorf("events from the cache, by rowid:\n%s\nwant\n%s", got, want)
	}
}
