package cli

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/internal/testutil"
)

// A database written by `tracebook load` feeds every analysing command
// with --db alone, and what they print is what they print from the trace.
func TestDBFeedsEveryCommand(t *testing.T) {
	tr := filepath.Join("..", "testdata", "param", "dlrm_8rank")
	db := filepath.Join(t.TempDir(), "t.duckdb")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"load", tr, "--db", db, "--cache", "-", "-q"}, &stdout, &stderr); code != 0 {
		t.Fatalf("load exited %d: %s", code, stderr.String())
	}
	for _, args := range [][]string{
		{"evidence", "ranks", "--format", "csv"},
		{"crossview", "--depth", "3"},
		{"report", "--md", "report.md"},
	} {
		from := func(src ...string) string {
			dir := t.TempDir()
			var out, errb bytes.Buffer
			full := append(append(append([]string{}, args...), src...), "--cache", "-", "-q")
			for i, a := range full {
				if a == "report.md" {
					full[i] = filepath.Join(dir, a)
				}
			}
			if code := run(full, &out, &errb); code != 0 {
				t.Fatalf("%v exited %d: %s", full, code, errb.String())
			}
			if args[0] == "report" {
				b, err := os.ReadFile(filepath.Join(dir, "report.md"))
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
			return out.String()
		}
		want, got := from(tr), from("--db", db)
		if got != want {
			t.Errorf("%s --db differs from %s TRACE:\n%s", args[0], args[0], testutil.Diff(want, got))
		}
	}
}

// A trace past spillJSONBytes is analysed in a temporary database file,
// with the same result as in memory, and the file is gone afterwards.
func TestLargeTraceSpillsToATemporaryFile(t *testing.T) {
	tr := filepath.Join("..", "testdata", "hta", "critical_path_alexnet")
	report := func() string {
		out := filepath.Join(t.TempDir(), "r.md")
		var stdout, stderr bytes.Buffer
		if code := run([]string{"report", tr, "--md", out, "--cache", "-", "-q"}, &stdout, &stderr); code != 0 {
			t.Fatalf("report exited %d: %s", code, stderr.String())
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	inMemory := report()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	defer func(n int64) { spillJSONBytes = n }(spillJSONBytes)
	spillJSONBytes = 0
	if got := report(); got != inMemory {
		t.Errorf("the report from a temporary database file differs:\n%s", testutil.Diff(inMemory, got))
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "tracebook-db-*"))
	if len(left) > 0 {
		t.Errorf("temporary databases left behind: %v", left)
	}
}

func TestJSONBytes(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain := write("a.json", []byte(strings.Repeat("x", 1000)))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(strings.Repeat("{}", 50000)))
	zw.Close()
	packed := write("run/b.json.gz", gz.Bytes())
	write("run/notes.txt", []byte("not a trace"))
	tests := []struct {
		paths []string
		want  int64
	}{
		{[]string{plain}, 1000},
		{[]string{packed}, 100000},
		{[]string{filepath.Join(dir, "run")}, 100000},
		{[]string{filepath.Join(dir, "*.json")}, 1000},
		{[]string{plain, filepath.Join(dir, "run")}, 101000},
		{[]string{filepath.Join(dir, "missing.json")}, 0},
	}
	for _, tc := range tests {
		if got := jsonBytes(tc.paths); got != tc.want {
			t.Errorf("jsonBytes(%v) = %d, want %d", tc.paths, got, tc.want)
		}
	}
}

// One process per rank file, each writing its part of one job into the
// same Parquet dataset, gives the dataset every command reads as the
// job's folder: the report is the same.
func TestParquetDatasetWrittenPerRank(t *testing.T) {
	job := filepath.Join("..", "testdata", "param", "dlrm_8rank")
	files, err := filepath.Glob(filepath.Join(job, "*.json.gz"))
	if err != nil || len(files) != 8 {
		t.Fatalf("want the 8 rank files of %s: %v %v", job, files, err)
	}
	ds := filepath.Join(t.TempDir(), "dataset")
	done := make(chan error, len(files))
	for _, f := range files {
		go func() {
			var stdout, stderr bytes.Buffer
			if code := run([]string{"load", f, "--name", "dlrm_8rank", "--parquet", ds, "--cache", "-", "-q"}, &stdout, &stderr); code != 0 {
				done <- fmt.Errorf("load %s exited %d: %s", f, code, stderr.String())
				return
			}
			done <- nil
		}()
	}
	for range files {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	report := func(src string) string {
		out := filepath.Join(t.TempDir(), "r.md")
		var stdout, stderr bytes.Buffer
		if code := run([]string{"report", src, "--md", out, "--cache", "-", "-q"}, &stdout, &stderr); code != 0 {
			t.Fatalf("report %s exited %d: %s", src, code, stderr.String())
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	want := report(job)
	got := report(ds)
	// The traces table names each file as it was loaded: one per process.
	got = strings.ReplaceAll(got, "../testdata/param/dlrm_8rank/", "")
	want = strings.ReplaceAll(want, "../testdata/param/dlrm_8rank/", "")
	if got != want {
		t.Errorf("the report of the dataset differs from the folder's:\n%s", testutil.Diff(want, got))
	}

	// A dataset loads into a database once: a second load of the same
	// trace fails and leaves it as it was.
	db := filepath.Join(t.TempDir(), "t.duckdb")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"load", ds, "--db", db, "-q"}, &stdout, &stderr); code != 0 {
		t.Fatalf("load of the dataset exited %d: %s", code, stderr.String())
	}
	if !strings.HasPrefix(stdout.String(), "dlrm_8rank: 26202 events, 8 file(s), ranks 0–7 ") {
		t.Errorf("load of the dataset: %q", stdout.String())
	}
	stderr.Reset()
	if code := run([]string{"load", ds, "--db", db, "-q"}, &stdout, &stderr); code == 0 || !strings.Contains(stderr.String(), "already loaded") {
		t.Errorf("a second load of the dataset: exit %d, %q", code, stderr.String())
	}
	stdout.Reset()
	if code := run([]string{"query", "--db", db, "-e", "SELECT count(*) FROM events"}, &stdout, &stderr); code != 0 || stdout.String() != "count_star()\n26202\n" {
		t.Errorf("after the failed load: exit %d, %q", code, stdout.String())
	}
	// A part missing its events is refused, not loaded short.
	parts, _ := filepath.Glob(filepath.Join(ds, "trace=*", "rank=3", "events.parquet"))
	if len(parts) != 1 {
		t.Fatalf("rank 3's events: %v", parts)
	}
	if err := os.Rename(parts[0], parts[0]+".gone"); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if code := run([]string{"query", ds, "-e", "SELECT 1"}, &stdout, &stderr); code == 0 || !strings.Contains(stderr.String(), "incomplete dataset") {
		t.Errorf("a dataset missing rank 3's events: exit %d, %q", code, stderr.String())
	}
}
