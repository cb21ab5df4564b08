package buildtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tracebook/tracebook/internal/testutil"
)

// VLLMTrace is the 48 MB (uncompressed) vLLM H100 trace of the shared
// collection, relative to its root.
const VLLMTrace = "tracemap/vllm_h100_tp4_rank0"

var (
	cliOnce sync.Once
	cliPath string
	cliErr  error
	cliOut  []byte
)

// CLI returns the path of the tracebook command (the repository's main
// package, without the viewer tag), built once per test binary into a
// temporary folder that lives until the process exits.
func CLI(t testing.TB) string {
	t.Helper()
	root := testutil.RepoRoot(t)
	cliOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tracebook-cli-")
		if err != nil {
			cliErr = err
			return
		}
		cliPath = filepath.Join(dir, "tracebook")
		cliOut, cliErr = goBuild(root, nil, "-o", cliPath, ".")
	})
	if cliErr != nil {
		t.Fatalf("building the tracebook command: %v\n%s", cliErr, cliOut)
	}
	return cliPath
}

// TraceReport runs `tracebook report PATHS -o FILE` and returns the written
// report (a page without the viewer module: callers take its bundle with
// wasm.Extract and write their own page around it).
func TraceReport(t testing.TB, paths ...string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "report.html")
	cmd := exec.Command(CLI(t), append(append([]string{"report"}, paths...), "-o", out)...)
	cmd.Dir = t.TempDir()
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tracebook report %v: %v\n%s", paths, err, msg)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return page
}

// VLLMReport returns the report of the shared vLLM trace (VLLMTrace), or
// nil where the shared collection is absent. $TRACEBOOK_VLLM_REPORT, when
// set, names a report of it already written (tracebook report ... -o FILE),
// which saves building the command.
func VLLMReport(t testing.TB) []byte {
	t.Helper()
	if p := os.Getenv("TRACEBOOK_VLLM_REPORT"); p != "" {
		page, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return page
	}
	dir := filepath.Join(testutil.RepoRoot(t), "..", "shared", "traces", VLLMTrace)
	if _, err := os.Stat(dir); err != nil {
		return nil
	}
	return TraceReport(t, dir)
}
