package cli

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/tracebook/tracebook/internal/testutil"
)

// TestSynthScalesATrace checks that a synthetic trace of 3 copies holds three
// times the events and kernels of its source, with every copy's launches
// still linked to their own kernels only.
func TestSynthScalesATrace(t *testing.T) {
	src := filepath.Join(testutil.Testdata(t), "hta", "critical_path_alexnet", "benchmark_result_2869224_1695835535_trace.json.gz")
	out := filepath.Join(t.TempDir(), "x3.json.gz")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"synth", src, "-n", "3", "-o", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("synth exited %d: %s", code, stderr.String())
	}
	query := func(path string) string {
		t.Helper()
		var o, e bytes.Buffer
		q := "SELECT count(*), count(*) FILTER (kind = 'kernel'), count(DISTINCT correlation) FILTER (kind = 'kernel') FROM events"
		if code := run([]string{"query", path, "--cache", "-", "-e", q}, &o, &e); code != 0 {
			t.Fatalf("query %s exited %d: %s", path, code, e.String())
		}
		return o.String()
	}
	var n, k, c int
	if _, err := fmtSscan(query(src), &n, &k, &c); err != nil {
		t.Fatal(err)
	}
	var n3, k3, c3 int
	if _, err := fmtSscan(query(out), &n3, &k3, &c3); err != nil {
		t.Fatal(err)
	}
	if n3 != 3*n || k3 != 3*k || c3 != 3*c {
		t.Errorf("synth -n 3: events %d, kernels %d, kernel correlations %d; want 3× %d, %d, %d", n3, k3, c3, n, k, c)
	}
}

// fmtSscan reads the data row of a two-line CSV result into the given ints.
func fmtSscan(csv string, v ...*int) (int, error) {
	lines := bytes.Split(bytes.TrimSpace([]byte(csv)), []byte("\n"))
	row := bytes.ReplaceAll(lines[len(lines)-1], []byte(","), []byte(" "))
	return fmt.Sscan(string(row), toAny(v)...)
}

func toAny(v []*int) []any {
	out := make([]any, len(v))
	for i := range v {
		out[i] = v[i]
	}
	return out
}
