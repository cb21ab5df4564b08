//go:build cgo

package duck

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/tracebook/tracebook/analysis/trace"
)

// eventsDigest is every column of every event, in a stable order: what two
// stores of the same events must agree on.
const eventsDigest = `SELECT trace, file_id, rank, pid, tid, ph, cat, kind::VARCHAR, api::VARCHAR, name, ts_ns, dur_ns,
	end_ns, correlation, external_id, python_id, python_parent_id, ev_idx, seq_no, fwd_tid, stream, device, bytes,
	mem_bw_gbps, graph_id, flow_id, grid, block, args::VARCHAR, idx FROM events ORDER BY trace, file_id, idx`

// The ENUMs of kind and api hold the importer's words, in alphabetical order
// (so that kind sorts as text does).
func TestKindAndAPIWords(t *testing.T) {
	db := openTest(t, "-")
	kinds := []string{}
	for _, k := range []trace.Kind{trace.KindKernel, trace.KindGPUMemcpy, trace.KindGPUMemset, trace.KindGPUSync,
		trace.KindGPUAnnotation, trace.KindCPUOp, trace.KindAnnotation, trace.KindPython, trace.KindRuntime,
		trace.KindDriver, trace.KindInstant, trace.KindCounter, trace.KindFlow, trace.KindOverhead, trace.KindOther} {
		kinds = append(kinds, string(k))
	}
	apis := []string{}
	for _, a := range []trace.API{trace.APILaunch, trace.APIGraphLaunch, trace.APISync, trace.APIMemcpy, trace.APIMemset, trace.APIOther} {
		apis = append(apis, string(a))
	}
	for typ, w := range map[string]struct{ named, listed []string }{
		"tb_kind": {kinds, wordStrings(trace.Kinds)},
		"tb_api":  {apis, wordStrings(trace.APIs)},
	} {
		want := slices.Sorted(slices.Values(w.named))
		got := strings.Split(strings.TrimSpace(csv(query(t, db, `SELECT unnest(enum_range(NULL::`+typ+`))`))), "\n")
		if !slices.Equal(got, want) {
			t.Errorf("%s = %v, want %v", typ, got, want)
		}
		// The scan's ENUMs are trace.Kinds and trace.APIs: the same words
		// in the same order, so that DuckDB stores them without a cast.
		if !slices.Equal(w.listed, want) {
			t.Errorf("trace's list for %s = %v, want %v", typ, w.listed, want)
		}
	}
}

// Strings are stored once: two traces of the same file share them, and the
// events view gives each event its own.
func TestStringsStoredOnce(t *testing.T) {
	db := openTest(t, "-")
	load(t, db, trace.LoadOptions{}, tiny)
	count := func() int64 { return query(t, db, `SELECT count(*) FROM tb_strings`).Rows[0][0].(int64) }
	one := count()
	load(t, db, trace.LoadOptions{Name: "again"}, tiny)
	if two := count(); two != one+1 {
		t.Errorf("tb_strings: %d rows after the first load, %d after the second, want one more (the name again)", one, two)
	}
	if got := csv(query(t, db, `SELECT count(*), count(DISTINCT id), min(id), max(id) = count(*) - 1,
		(SELECT len(strings) FROM tb_dict) = count(*) FROM tb_strings`)); !strings.HasSuffix(got, ",0,true,true\n") {
		t.Errorf("tb_strings ids (count, distinct, min, dense, tb_dict agrees) = %q", got)
	}
	a := csv(query(t, db, strings.Replace(eventsDigest, "FROM events", "FROM events WHERE trace = 'tiny'", 1)))
	b := csv(query(t, db, strings.Replace(eventsDigest, "FROM events", "FROM events WHERE trace = 'again'", 1)))
	if strings.ReplaceAll(b, "again,", "tiny,") != a {
		t.Errorf("the second load's events differ from the first's:\n%s\n%s", a, b)
	}
	for _, tbl := range []string{"tb_events", "tb_strings", "tb_dict"} {
		cols, err := db.Columns(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := cols[tbl]; ok {
			t.Errorf("Columns() lists %s, a table under the events view", tbl)
		}
	}
}

// A database written before the lean store, with an events table of
// strings, is converted when it is opened: the same events, in the same
// order, and it takes further loads.
func TestMigrateWideEvents(t *testing.T) {
	dir := t.TempDir()
	src := openTest(t, "-")
	load(t, src, trace.LoadOptions{}, tiny)
	load(t, src, trace.LoadOptions{}, "testdata/merged.json")
	want := csv(query(t, src, eventsDigest))

	// The old layout: events, traces and threads as plain tables.
	old := filepath.Join(dir, "old.duckdb")
	c, err := duckdb.NewConnector(old, nil)
	if err != nil {
		t.Fatal(err)
	}
	odb := sql.OpenDB(c)
	if _, err := odb.Exec(`CREATE TABLE events(trace VARCHAR NOT NULL, file_id INTEGER NOT NULL, rank INTEGER NOT NULL,
		pid VARCHAR, tid VARCHAR, ph VARCHAR NOT NULL, cat VARCHAR, kind VARCHAR NOT NULL, api VARCHAR, name VARCHAR,
		ts_ns BIGINT, dur_ns BIGINT NOT NULL, end_ns BIGINT, correlation BIGINT, external_id BIGINT, python_id BIGINT,
		python_parent_id BIGINT, ev_idx BIGINT, seq_no BIGINT, fwd_tid BIGINT, stream BIGINT, device BIGINT, bytes BIGINT,
		mem_bw_gbps DOUBLE, graph_id BIGINT, flow_id BIGINT, grid VARCHAR, block VARCHAR, args JSON, idx BIGINT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	odb.Close()
	if err := src.Exec(context.Background(), `ATTACH '`+old+`' AS old`); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO old.events SELECT * FROM events ORDER BY trace, file_id, idx`,
		`CREATE TABLE old.traces AS SELECT * FROM traces`,
		`CREATE TABLE old.threads AS SELECT * FROM threads`,
		`DETACH old`,
	} {
		if err := src.Exec(context.Background(), q); err != nil {
			t.Fatal(q, err)
		}
	}

	db, err := Open(old, Options{CacheDir: "-", TempDirectory: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := csv(query(t, db, eventsDigest)); got != want {
		t.Errorf("converted events:\n%s\nwant\n%s", got, want)
	}
	if got := csv(query(t, db, `SELECT table_type FROM information_schema.tables WHERE table_name = 'events'`)); got != "VIEW\n" {
		t.Errorf("events is a %q after the conversion, want a view", got)
	}
	// Its order: the rows of file 0 of tiny first, by idx.
	if got := csv(query(t, db, `SELECT idx FROM tb_events WHERE rowid < 3 ORDER BY rowid`)); got != "0\n1\n2\n" {
		t.Errorf("first rows' idx = %q", got)
	}
	load(t, db, trace.LoadOptions{Name: "third"}, tiny)
	if got := csv(query(t, db, `SELECT count(*) FROM events WHERE trace = 'third'`)); got != "12\n" {
		t.Errorf("a load after the conversion stored %q events, want 12", got)
	}
}

// A cache entry keeps the ids of the database that wrote it; a database
// whose ids differ maps them to its own and stores the same events. An
// entry with a damaged id list is a miss.
func TestCacheMapsIDs(t *testing.T) {
	cache := t.TempDir()
	writer := openTest(t, cache)
	load(t, writer, trace.LoadOptions{}, "testdata/merged.json") // other strings take the first ids
	load(t, writer, trace.LoadOptions{}, tiny)
	writer.WaitCache()
	want := csv(query(t, writer, strings.Replace(eventsDigest, "FROM events", "FROM events WHERE trace = 'tiny'", 1)))

	reader := openTest(t, cache)
	if r := load(t, reader, trace.LoadOptions{}, tiny); !r.Cached {
		t.Fatalf("the entry was not served: %+v", r)
	}
	if got := csv(query(t, reader, eventsDigest)); got != want {
		t.Errorf("events from the cache:\n%s\nwant\n%s", got, want)
	}

	entries, _ := filepath.Glob(filepath.Join(cache, "*.json"))
	for _, e := range entries {
		b, err := os.ReadFile(e)
		if err != nil {
			t.Fatal(err)
		}
		damaged := strings.Replace(string(b), `"ids":[`, `"ids":[1073741824,`, 1)
		damaged = strings.Replace(damaged, `"strings":[`, `"strings":["x",`, 1)
		if damaged == string(b) {
			t.Fatalf("entry %s has no ids: %.200s", e, b)
		}
		if err := os.WriteFile(e, []byte(damaged), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if r := load(t, openTest(t, cache), trace.LoadOptions{}, tiny); r.Cached {
		t.Errorf("an entry with an id past maxCacheID was served: %+v", r)
	}
}
