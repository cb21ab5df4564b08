package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/internal/testutil"
)

func TestQueryDLRMEightRanks(t *testing.T) {
	dir := filepath.Join(testutil.SharedTraces(t), "param", "dlrm_8rank")
	var stdout, stderr bytes.Buffer
	code := run([]string{"query", dir, "-e", "SELECT rank, count(*) FROM kernels GROUP BY 1 ORDER BY 1", "--cache", "-"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("query exited %d: %s", code, stderr.String())
	}
	want := "rank,count_star()\n0,245\n1,310\n2,246\n3,315\n4,251\n5,245\n6,246\n7,246\n"
	if got := stdout.String(); got != want {
		t.Errorf("query output:\n%s", testutil.Diff(want, got))
	}
}

func TestQueryFormats(t *testing.T) {
	tiny := filepath.Join("..", "internal", "duck", "testdata", "tiny.json")
	tests := []struct{ format, want string }{
		{"csv", "name,dur_ns\nsgemm_128x64,20500\n"},
		{"json", "[\n  {\"name\": \"sgemm_128x64\", \"dur_ns\": 20500}\n]\n"},
		{"md", "| name | dur_ns |\n|---|---:|\n| `sgemm_128x64` | 20500 |\n"},
	}
	for _, tc := range tests {
		var stdout, stderr bytes.Buffer
		if code := run([]string{"query", tiny, "--cache", "-", "--format", tc.format, "-e", "SELECT name, dur_ns FROM kernels"}, &stdout, &stderr); code != 0 {
			t.Fatalf("query --format %s exited %d: %s", tc.format, code, stderr.String())
		}
		if got := stdout.String(); got != tc.want {
			t.Errorf("--format %s:\n%s", tc.format, testutil.Diff(tc.want, got))
		}
	}
}

func TestLoadThenQueryDB(t *testing.T) {
	tiny := filepath.Join("..", "internal", "duck", "testdata", "tiny.json")
	db := filepath.Join(t.TempDir(), "t.duckdb")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"load", tiny, "--db", db, "--cache", "-", "--name", "mine"}, &stdout, &stderr); code != 0 {
		t.Fatalf("load exited %d: %s", code, stderr.String())
	}
	if !strings.HasPrefix(stdout.String(), "mine: 12 events") {
		t.Errorf("load output %q", stdout.String())
	}
	stdout.Reset()
	if code := run([]string{"query", "--db", db, "-e", "SELECT trace, count(*) FROM events GROUP BY 1"}, &stdout, &stderr); code != 0 {
		t.Fatalf("query --db exited %d: %s", code, stderr.String())
	}
	if got := stdout.String(); got != "trace,count_star()\nmine,12\n" {
		t.Errorf("query --db: %q", got)
	}
}

func TestQueryErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"query", "-e", "SELECT 1"}, "nothing to query"},
		{[]string{"query", "../internal/duck/testdata/tiny.json", "--cache", "-", "-e", "SELEC 1"}, "syntax error"},
		{[]string{"query", "nope.json", "--cache", "-", "-e", "SELECT 1"}, "nope.json"},
		{[]string{"load", "../internal/duck/testdata/tiny.json"}, "--db FILE.duckdb or --parquet DIR is required"},
		{[]string{"load", "--db", "x.duckdb", "--window", "5..2", "t.json"}, "--window"},
	}
	for _, tc := range tests {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		if code == 0 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want non-zero and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}

// TestAnalysisThreads: an analysis of traces held in memory opens DuckDB
// at analysisThreads and keeps it there through the load (no change of
// the count, which would purge DuckDB's allocator); the user's SQL, and
// an analysis of a database file, keep DuckDB's default.
func TestAnalysisThreads(t *testing.T) {
	tiny := filepath.Join("..", "internal", "duck", "testdata", "tiny.json")
	threads := func(f loadFlags, use dbUse) string {
		t.Helper()
		ctx, db, err := openTraces(context.Background(), f, []string{tiny}, use, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.load(ctx, []string{tiny}, trace.LoadOptions{}); err != nil {
			t.Fatal(err)
		}
		tb, err := db.Query(ctx, "SELECT current_setting('threads')::VARCHAR", 0)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(tb.Rows[0][0])
	}
	def := threads(loadFlags{cache: "-"}, forSQL)
	if got := threads(loadFlags{cache: "-"}, forAnalysis); got != fmt.Sprint(analysisThreads) {
		t.Errorf("analysis in memory: %s threads, want %d", got, analysisThreads)
	}
	file := loadFlags{cache: "-", db: filepath.Join(t.TempDir(), "t.duckdb")}
	if got := threads(file, forAnalysis); got != def {
		t.Errorf("analysis of a database file: %s threads, want the default %s", got, def)
	}
}
