package pipeline

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/pass"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/internal/duck"
	"github.com/tracebook/tracebook/internal/testutil"
	"github.com/tracebook/tracebook/sql"
)

// passAreas are the areas analysis/pass computes.
func passAreas(t *testing.T) []sql.Preset {
	var ps []sql.Preset
	for _, p := range sql.Presets() {
		if _, ok := pass.For(p.Name); ok {
			if _, ok := p.PassInput(); !ok {
				t.Fatalf("%s has a pass but no PASS line", p.Name)
			}
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		t.Fatal("no area has a pass")
	}
	return ps
}

// checkPasses compares, for the slice f of what db holds, each pass's
// table with its preset's SQL: the same columns, types and rows in the
// same order.
func checkPasses(t *testing.T, db *duck.DB, f evidence.Filter) {
	t.Helper()
	ctx := context.Background()
	if err := BuildEvidenceBase(ctx, db, f); err != nil {
		t.Fatal(err)
	}
	args := Params(f)
	for _, p := range passAreas(t) {
		body := strings.TrimRight(strings.TrimSpace(p.SQL), ";")
		want, err := db.Query(ctx, body, 0, args[:paramCount(body)]...)
		if err != nil {
			t.Fatalf("%s SQL: %v", p.Name, err)
		}
		got, ok, err := runPass(ctx, db, p, args)
		if err != nil || !ok {
			t.Fatalf("%s pass: ran %v, %v", p.Name, ok, err)
		}
		stored, err := db.Query(ctx, "SELECT * FROM evidence_"+p.Name, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			what string
			t    *table.Table
		}{{"pass", got}, {"stored pass", stored}} {
			if !reflect.DeepEqual(c.t.Columns, want.Columns) {
				t.Fatalf("%s %s columns %v, SQL %v", p.Name, c.what, c.t.Columns, want.Columns)
			}
			if len(c.t.Rows) != len(want.Rows) {
				t.Fatalf("%s %s: %d rows, SQL %d", p.Name, c.what, len(c.t.Rows), len(want.Rows))
			}
			for i := range want.Rows {
				if !reflect.DeepEqual(c.t.Rows[i], want.Rows[i]) {
					t.Fatalf("%s %s row %d:\n got %v\nwant %v", p.Name, c.what, i, c.t.Rows[i], want.Rows[i])
				}
			}
		}
	}
}

func openPassDB(t *testing.T) *duck.DB {
	db, err := duck.Open("", duck.Options{CacheDir: "-", Threads: 2, MemoryLimit: "2GB"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestPassMatchesSQL holds every pass equal to its preset's SQL on the
// trace sets of testdata, on two of them loaded together, on every shared
// trace set and on a window of two of them.
func TestPassMatchesSQL(t *testing.T) {
	local := testutil.Testdata(t)
	sets, _ := filepath.Glob(filepath.Join(local, "*", "*"))
	for _, dir := range sets {
		rel, _ := filepath.Rel(local, dir)
		t.Run("testdata/"+filepath.ToSlash(rel), func(t *testing.T) {
			db := openPassDB(t)
			if _, err := db.Load(context.Background(), []string{dir}, trace.LoadOptions{Name: "t"}, nil); err != nil {
				t.Fatal(err)
			}
			checkPasses(t, db, evidence.Filter{})
		})
	}
	t.Run("two traces", func(t *testing.T) {
		db := openPassDB(t)
		for name, set := range map[string]string{"a": "kineto/resnet50_num_workers_0", "b": "hta/critical_path_alexnet"} {
			if _, err := db.Load(context.Background(), []string{filepath.Join(local, set)}, trace.LoadOptions{Name: name}, nil); err != nil {
				t.Fatal(err)
			}
		}
		checkPasses(t, db, evidence.Filter{})
	})
	if testing.Short() {
		t.Skip("-short: not the shared trace sets")
	}
	root := testutil.SharedTraces(t)
	for _, set := range testutil.TraceSets(t) {
		t.Run(set, func(t *testing.T) {
			db := openPassDB(t)
			if _, err := db.Load(context.Background(), []string{filepath.Join(root, set)}, trace.LoadOptions{Name: "t"}, nil); err != nil {
				t.Skipf("not loaded: %v", err)
			}
			checkPasses(t, db, evidence.Filter{})
			switch set {
			case "hta/trace_diff_control_a100", "param/dlrm_8rank":
				checkPasses(t, db, evidence.Filter{Trace: "t", Rank: 1, HasRank: true, WindowStartNs: 50e6, WindowEndNs: 400e6})
			}
		})
	}
}
