// Package buildtest builds the viewer module for tests, once per test
// binary, so that `go test ./...` works from a clean clone without
// wasm/build.sh having run. Only _test.go files import it.
package buildtest

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/tracebook/tracebook/internal/testutil"
)

var (
	once   sync.Once
	module []byte // gzip-compressed
	raw    int
	err    error
	out    []byte
)

// ViewerFlags are the go build flags of the viewer module, wasm/build.sh's
// (TestBuildScriptFlags checks that it passes each). Inlining is off in
// the packages that mostly format text (findings, report, diff): the
// module is 5% smaller gzip-compressed (1,636,796 against 1,725,727 bytes)
// and renders as fast under wazero (8 runs, two alternating pairs: the
// 8x1000 synthetic report 0.93-0.94x the time, the vLLM one 0.96-1.43x
// first and 1.07-1.10x on a rank change, within the machine's noise);
// off everywhere it was 11% smaller and 1.5-2.8x slower.
var ViewerFlags = []string{"-buildmode=c-shared", "-trimpath", "-ldflags=-s -w",
	"-gcflags=github.com/tracebook/tracebook/analysis/findings=-l",
	"-gcflags=github.com/tracebook/tracebook/analysis/report=-l",
	"-gcflags=github.com/tracebook/tracebook/analysis/diff=-l"}

// Module returns the viewer module (gzip-compressed wasm), built with the
// same command as wasm/build.sh the first time a test asks for it. It skips
// the test when the go command is missing and fails it when the build fails.
func Module(t testing.TB) []byte {
	t.Helper()
	root := testutil.RepoRoot(t)
	once.Do(func() {
		dir, derr := os.MkdirTemp("", "tracebook-viewer-")
		if derr != nil {
			err = derr
			return
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "viewer.wasm")
		if out, err = goBuild(root, []string{"GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0"},
			append(slices.Clone(ViewerFlags), "-o", path, "./wasm/viewer")...); err != nil {
			return
		}
		wasmBytes, rerr := os.ReadFile(path)
		if rerr != nil {
			err = rerr
			return
		}
		raw = len(wasmBytes)
		module, err = Compress(path, wasmBytes)
	})
	if err != nil {
		if _, lerr := exec.LookPath("go"); lerr != nil {
			t.Skipf("go command not found, cannot build the viewer module: %v", lerr)
		}
		t.Fatalf("building the viewer module: %v\n%s", err, out)
	}
	return module
}

// RawSize is the size of the uncompressed module Module built.
func RawSize() int { return raw }

// goBuild runs `go build ARGS...` in root with env added to the
// environment and returns its combined output.
func goBuild(root string, env []string, args ...string) ([]byte, error) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(goCmd, append([]string{"build"}, args...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	return cmd.CombinedOutput()
}

// Compress gzips the module at path (whose bytes are wasmBytes) as
// wasm/build.sh does: with zopfli when it is installed (scripts/deps.sh
// installs it), which writes gzip that any inflater reads about 5% smaller
// than gzip -9 (the page carries the module: 8 ranks × 1,000 steps stay
// under 3 MB with it), else with the best level of compress/gzip.
func Compress(path string, wasmBytes []byte) ([]byte, error) {
	if z, err := exec.LookPath("zopfli"); err == nil {
		out, err := exec.Command(z, "-c", "--i5", path).Output()
		if err != nil {
			return nil, fmt.Errorf("zopfli %s: %w", path, err)
		}
		return out, nil
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(wasmBytes)
	zw.Close()
	return buf.Bytes(), nil
}
