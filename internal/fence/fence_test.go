package fence

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/internal/testutil"
)

const module = "github.com/tracebook/tracebook"

// deps lists the packages that pattern reaches, test files excluded.
func deps(t *testing.T, pattern string, env ...string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", pattern)
	cmd.Dir = testutil.RepoRoot(t)
	cmd.Env = append(cmd.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "matched no packages") {
			return nil
		}
		t.Fatalf("go list -deps %s: %v\n%s", pattern, err, out)
	}
	return strings.Fields(string(out))
}

// forbidden returns the first dependency whose path contains one of bad.
func forbidden(pkgs []string, bad []string) (string, bool) {
	for _, p := range pkgs {
		for _, b := range bad {
			if p == b || strings.HasPrefix(p, b+"/") {
				return p, true
			}
		}
	}
	return "", false
}

func TestFence(t *testing.T) {
	heavy := []string{
		"runtime/cgo",
		"github.com/duckdb",
		"github.com/marcboeker",
		"github.com/go-zeromq",
		module + "/internal/duck",
		module + "/kernel",
	}
	tests := []struct {
		pattern string
		bad     []string
	}{
		{"./analysis/...", heavy},
		{"./sql/...", heavy},
		{"./pipeline/...", heavy},
		{"./cells/...", heavy},
		{"./kernel/...", []string{"github.com/duckdb", module + "/internal/duck", module + "/pipeline", module + "/cells", module + "/analysis"}},
	}
	for _, tc := range tests {
		t.Run(tc.pattern, func(t *testing.T) {
			pkgs := deps(t, tc.pattern)
			if len(pkgs) == 0 {
				t.Skipf("%s has no packages yet", tc.pattern)
			}
			if p, ok := forbidden(pkgs, tc.bad); ok {
				t.Errorf("%s reaches %s; the layering of docs/DESIGN.md forbids it", tc.pattern, p)
			}
		})
	}
}

// TestAnalysisBuildsForWasm checks that the analysis core builds for the
// viewer's target.
func TestAnalysisBuildsForWasm(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	cmd := exec.Command("go", "build", "./analysis/...")
	cmd.Dir = testutil.RepoRoot(t)
	cmd.Env = append(cmd.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=wasip1 GOARCH=wasm go build ./analysis/...: %v\n%s", err, out)
	}
}

// TestWasmViewerReachesNoCgo checks the viewer's dependencies for its own target.
func TestWasmViewerReachesNoCgo(t *testing.T) {
	pkgs := deps(t, "./wasm/...", "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if len(pkgs) == 0 {
		t.Skip("no viewer packages yet")
	}
	if p, ok := forbidden(pkgs, []string{"github.com/duckdb", "github.com/go-zeromq", module + "/internal/duck", module + "/kernel"}); ok {
		t.Errorf("the viewer reaches %s", p)
	}
}

// TestWasmViewerLinksNoRegexp: package regexp and its Unicode tables were
// 131 KB of the viewer module's gzip; the analysis core's patterns go
// through analysis/internal/rx instead (its tests hold them to regexp's
// meaning).
func TestWasmViewerLinksNoRegexp(t *testing.T) {
	pkgs := deps(t, "./wasm/viewer", "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if len(pkgs) == 0 {
		t.Fatal("go list found no ./wasm/viewer package")
	}
	if p, ok := forbidden(pkgs, []string{"regexp"}); ok {
		t.Errorf("the viewer links %s: use analysis/internal/rx for the core's patterns", p)
	}
}
