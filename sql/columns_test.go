//go:build cgo

package sql_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/internal/duck"
	"github.com/tracebook/tracebook/internal/testutil"
	"github.com/tracebook/tracebook/pipeline"
	"github.com/tracebook/tracebook/sql"
)

// TestPresetColumnsDocumented is the header lint: every preset, run on
// DuckDB over a small trace of testdata/, returns exactly the columns its
// header documents, in that order, each with a doc and a unit; an
// undocumented column fails. The evidence areas run as %evidence runs them
// (pipeline.CollectEvidence); the other presets with their own parameters;
// evidence_base, which creates tables and returns none, is checked against
// the columns its CREATE statements document.
func TestPresetColumnsDocumented(t *testing.T) {
	db, err := duck.Open("", duck.Options{CacheDir: "-", Threads: 2, MemoryLimit: "2GB"})
	if err != nil {
		t.Fatalf("duck.Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	// Two ranks with steps, collectives, copies and syncs.
	dir := filepath.Join(testutil.RepoRoot(t), "testdata", "param", "dlrm_8rank")
	paths, _ := filepath.Glob(filepath.Join(dir, "worker[01]_*.json.gz"))
	if len(paths) != 2 {
		t.Fatalf("want ranks 0 and 1 of %s, found %v", dir, paths)
	}
	if _, err := db.Load(ctx, paths, trace.LoadOptions{Name: "t"}, nil); err != nil {
		t.Fatalf("Load: %v", err)
	}
	b, err := pipeline.CollectEvidence(ctx, db, []string{"all"}, evidence.Filter{}, nil)
	if err != nil {
		t.Fatalf("CollectEvidence: %v", err)
	}
	returned := map[string]*table.Table{}
	for _, area := range evidence.Areas {
		returned[area] = b.Tables[area]
	}
	others := map[string][]any{
		sql.Crossview:      {"t", 0},
		sql.Perfetto:       {"t", 0, int64(0), int64(20_000_000), int64(1000), int64(100)},
		sql.PerfettoAnchor: {"t", 0, 0, 0},
	}
	for name, args := range others {
		p, _ := sql.Lookup(name)
		res, err := db.Query(ctx, p.SQL, 0, args...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		returned[name] = res
	}

	for _, p := range sql.Presets() {
		if p.Name == "evidence_base" {
			checkObjects(ctx, t, db, p)
			continue
		}
		res, ok := returned[p.Name]
		if !ok || res == nil {
			t.Errorf("preset %s was not run: add it to this test", p.Name)
			continue
		}
		sameColumns(t, "preset "+p.Name, res, p.Columns)
	}
}

// checkObjects: the tables evidence_base creates have the columns its
// CREATE statements document.
func checkObjects(ctx context.Context, t *testing.T, db *duck.DB, p sql.Preset) {
	t.Helper()
	if len(p.Columns) != 0 {
		t.Errorf("%s returns no rows, yet its header documents columns %v", p.Name, p.Columns)
	}
	if len(p.Objects) == 0 {
		t.Errorf("%s creates no documented table", p.Name)
	}
	for _, o := range p.Objects {
		res, err := db.Query(ctx, "SELECT * FROM "+o.Name+" LIMIT 0", 0)
		if err != nil {
			t.Errorf("%s: %v", o.Name, err)
			continue
		}
		sameColumns(t, "table "+o.Name, res, o.Columns)
	}
}

// sameColumns checks that res has exactly the documented columns, in
// order, and that each documented column has a doc and a unit; what names
// the preset or the table in the errors.
func sameColumns(t *testing.T, what string, res *table.Table, doc []sql.ColumnDoc) {
	t.Helper()
	var got, want []string
	for _, c := range res.Columns {
		got = append(got, c.Name)
	}
	for _, c := range doc {
		want = append(want, c.Name)
		if c.Doc == "" || c.Unit == "" {
			t.Errorf("%s: column %s lacks its doc or its unit: %+v", what, c.Name, c)
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("%s returns %v\nits header documents %v", what, got, want)
	}
}
