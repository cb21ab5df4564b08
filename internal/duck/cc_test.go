//go:build cgo

package duck

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/internal/testutil"
)

// TestComputeCapabilityColumns loads real traces through the loader and
// checks gpu_cc_major/gpu_cc_minor, first parsed and then served from the
// parse cache, and what evidence.Ranks reads back from them.
func TestComputeCapabilityColumns(t *testing.T) {
	dir := testutil.SharedTraces(t)
	cache := t.TempDir()
	db := openTest(t, cache)
	traces := []struct {
		name, path string
		want       string // distinct (gpu_cc_major, gpu_cc_minor) rows
		major      int    // RankInfo.CCMajor / CCMinor of every rank
		minor      int
	}{
		// Tesla V100-SXM2-32GB: computeMajor 7, computeMinor 0, eight ranks.
		{"dlrm", filepath.Join(dir, "param", "dlrm_8rank"), "7,0\n", 7, 0},
		// No deviceProperties key at all.
		{"cpu_only", filepath.Join(dir, "hta", "cpu_only", "rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"), "NULL,NULL\n", -1, -1},
		// ROCm: the GFXIP version of gfx942, not Hopper's 9.0.
		{"mi300x", filepath.Join(dir, "tracelens", "xdit_sd35_mi300x", "profile_trace_rank_0.json.gz"), "9,4\n", 9, 4},
		// deviceProperties with a name and no computeMajor/computeMinor.
		{"tiny", tiny, "NULL,NULL\n", -1, -1},
	}
	for _, pass := range []string{"parsed", "cached"} {
		for _, tc := range traces {
			name := tc.name + "_" + pass
			res := load(t, db, trace.LoadOptions{Name: name}, tc.path)
			if res.Cached != (pass == "cached") {
				t.Errorf("%s: Cached = %v", name, res.Cached)
			}
			got := csv(query(t, db, `SELECT DISTINCT gpu_cc_major, gpu_cc_minor FROM traces WHERE trace = ?`, name))
			if got != tc.want {
				t.Errorf("%s: gpu_cc_major, gpu_cc_minor = %q, want %q", name, got, tc.want)
			}
			// What the evidence bundle reads (cells.collect: every column but metadata).
			tb := query(t, db, `SELECT * EXCLUDE (metadata) FROM traces WHERE trace = ? ORDER BY file_id, rank`, name)
			ranks := evidence.Ranks(tb)
			if len(ranks) == 0 || len(ranks) != len(res.Ranks) {
				t.Fatalf("%s: Ranks() = %d ranks, the load has %v", name, len(ranks), res.Ranks)
			}
			for _, ri := range ranks {
				if ri.CCMajor != tc.major || ri.CCMinor != tc.minor {
					t.Errorf("%s rank %d: RankInfo CC = %d.%d, want %d.%d", name, ri.Rank, ri.CCMajor, ri.CCMinor, tc.major, tc.minor)
				}
			}
		}
		db.WaitCache()
	}
}

// TestOldDatabaseGainsCCColumns opens a database file whose traces table
// predates gpu_cc_major/gpu_cc_minor: Open adds them (NULL in the old
// rows, last in the table), and a load fills them by name.
func TestOldDatabaseGainsCCColumns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.duckdb")
	opts := Options{CacheDir: "-", MemoryLimit: "2GB", TempDirectory: t.TempDir()}
	db, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	load(t, db, trace.LoadOptions{Name: "old"}, tiny)
	// What an older build left: the table without the two columns.
	for _, q := range []string{`ALTER TABLE traces DROP COLUMN gpu_cc_major`, `ALTER TABLE traces DROP COLUMN gpu_cc_minor`} {
		if _, err := db.SQL().ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = Open(path, opts)
	if err != nil {
		t.Fatalf("opening a database without the CC columns: %v", err)
	}
	defer db.Close()
	dir := testutil.SharedTraces(t)
	load(t, db, trace.LoadOptions{Name: "new"}, filepath.Join(dir, "param", "dlrm_8rank", "worker0_step_12.1694128201545.pt.trace.json.gz"))
	q := `SELECT trace, gpu_model, gpu_cc_major, gpu_cc_minor, events > 0 FROM traces ORDER BY trace`
	want := "new,Tesla V100-SXM2-32GB,7,0,true\nold,NVIDIA H100 80GB HBM3,NULL,NULL,true\n"
	if got := csv(query(t, db, q)); got != want {
		t.Errorf("%s:\ngot  %q\nwant %q", q, got, want)
	}
	q = `SELECT string_agg(column_name, ' ' ORDER BY column_index DESC) FROM (
		SELECT column_name, column_index FROM duckdb_columns() WHERE table_name = 'traces' ORDER BY column_index DESC LIMIT 2)`
	if got, want := csv(query(t, db, q)), "gpu_cc_minor gpu_cc_major\n"; got != want {
		t.Errorf("the added columns: got %q, want %q (last, as ADD COLUMN puts them)", got, want)
	}
}
