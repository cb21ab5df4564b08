// Package testutil holds the few helpers the tests of every package share:
// where the repository and the shared trace collection are, golden files,
// and the process's CPU time for benchmarks. It is imported only from _test.go files.
package testutil

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tracebook/tracebook/analysis/table"
)

// Update is the one -update flag: golden files are rewritten instead of compared.
var Update = flag.Bool("update", false, "update golden files")

// RepoRoot returns the module root (the directory holding go.mod).
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// SharedTraces returns ../shared/traces beside the repository, or skips the
// test with a message where it is absent.
func SharedTraces(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(RepoRoot(t), "..", "shared", "traces")
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST.md")); err != nil {
		t.Skipf("shared trace collection not found at %s: skipping", dir)
	}
	return dir
}

// TraceSets returns the trace sets of the shared collection, as
// "source/set" folder names in order (tracemap/vllm_h100_tp4_rank0, ...),
// or skips the test when the collection is absent.
func TraceSets(t testing.TB) []string {
	t.Helper()
	root := SharedTraces(t)
	var sets []string
	sources, _ := os.ReadDir(root)
	for _, s := range sources {
		if !s.IsDir() {
			continue
		}
		subs, _ := os.ReadDir(filepath.Join(root, s.Name()))
		for _, d := range subs {
			if d.IsDir() {
				sets = append(sets, s.Name()+"/"+d.Name())
			}
		}
	}
	sort.Strings(sets)
	return sets
}

// Shared returns ../shared beside the repository, or skips the test.
func Shared(t testing.TB) string {
	t.Helper()
	return filepath.Dir(SharedTraces(t))
}

// Testdata returns the repository's top-level testdata folder.
func Testdata(t testing.TB) string {
	t.Helper()
	return filepath.Join(RepoRoot(t), "testdata")
}

// Golden compares got with the golden file at path, or rewrites it under -update.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (run with -update to accept):\n%s", path, Diff(string(want), string(got)))
	}
}

// Diff returns a short line diff of want and got: the first differing lines
// with their numbers.
func Diff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			fmt.Fprintf(&b, "line %d:\n  want %q\n  got  %q\n", i+1, w, g)
			if shown++; shown == 10 {
				b.WriteString("  ...\n")
				break
			}
		}
	}
	return b.String()
}

// Columns returns the columns named in spec (names separated by spaces),
// for tables a test builds by hand.
func Columns(spec string) []table.Column {
	var out []table.Column
	for _, n := range strings.Fields(spec) {
		out = append(out, table.Column{Name: n})
	}
	return out
}

// Contains reports, as test errors, each of wants that got lacks; what
// names got in the message ("gaps", "the observation").
func Contains(t testing.TB, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

// UnixDay is the Unix ns of a day written 2006-01-02 (midnight UTC).
func UnixDay(t testing.TB, day string) int64 {
	t.Helper()
	d, err := time.Parse("2006-01-02", day)
	if err != nil {
		t.Fatal(err)
	}
	return d.UnixNano()
}

// RoundTrip is what a fuzz target of a decoder checks on one input: decode
// either refuses data or returns a value that encode writes and decode
// reads back to the same encoding. A decoder that panics fails the caller
// as it is.
func RoundTrip[T any](t testing.TB, data []byte, decode func([]byte) (T, error), encode func(T) ([]byte, error)) {
	t.Helper()
	v, err := decode(data)
	if err != nil {
		return
	}
	enc, err := encode(v)
	if err != nil {
		t.Fatalf("a decoded value does not encode: %v", err)
	}
	again, err := decode(enc)
	if err != nil {
		t.Fatalf("a re-encoded value does not decode: %v", err)
	}
	if enc2, err := encode(again); err != nil || !bytes.Equal(enc, enc2) {
		t.Fatalf("the round trip changed the value (err %v)", err)
	}
}

// ReadGzip returns the uncompressed contents of the gzip file at path.
func ReadGzip(t testing.TB, path string) []byte {
	t.Helper()
	gz, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return Gunzip(t, gz)
}

// Gunzip returns gz uncompressed.
func Gunzip(t testing.TB, gz []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// AddSeeds adds every file that pattern (filepath.Glob) names to f's seed
// corpus, uncompressed where its name ends in .gz; none is an error.
func AddSeeds(f *testing.F, pattern string) {
	f.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil || len(paths) == 0 {
		f.Fatalf("no seeds match %s (%v)", pattern, err)
	}
	for _, p := range paths {
		if strings.HasSuffix(p, ".gz") {
			f.Add(ReadGzip(f, p))
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}
