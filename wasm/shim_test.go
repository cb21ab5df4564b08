package wasm_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/internal/buildtest"
	"github.com/tracebook/tracebook/internal/testutil"
	"github.com/tracebook/tracebook/wasm"
	"github.com/tracebook/tracebook/wasm/host"
)

// shimFunctions returns the names the loader's WASI shim defines.
func shimFunctions(t *testing.T) map[string]bool {
	t.Helper()
	src := wasm.Loader
	i := strings.Index(src, "var wasi = {")
	j := strings.Index(src[i:], "\n  };")
	if i < 0 || j < 0 {
		t.Fatal("loader.js: the `var wasi = {...};` shim object is missing")
	}
	names := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^    ([a-z_]+)\(`).FindAllStringSubmatch(src[i:i+j], -1) {
		names[m[1]] = true
	}
	return names
}

func TestShimImplementsEveryImport(t *testing.T) {
	mod := buildtest.Module(t)
	imports, err := host.Imports(context.Background(), mod)
	if err != nil {
		t.Fatal(err)
	}
	shim := shimFunctions(t)
	if len(imports) == 0 {
		t.Fatal("the module imports nothing: not a Go wasip1 module?")
	}
	for _, imp := range imports {
		module, name, _ := strings.Cut(imp, ".")
		if module != "wasi_snapshot_preview1" {
			t.Errorf("import %s: only wasi_snapshot_preview1 is shimmed", imp)
			continue
		}
		if !shim[name] {
			t.Errorf("import %s: loader.js's shim does not define %s", imp, name)
		}
	}
	t.Logf("module: %d bytes raw, %d bytes gzip; imports %v", buildtest.RawSize(), len(mod), imports)
}

func TestLoaderIsInlineSafe(t *testing.T) {
	if strings.Contains(strings.ToLower(wasm.Loader), "</script") || strings.Contains(wasm.Loader, "<!--") {
		t.Error("loader.js must not contain </script or <!-- (it is inlined in a <script> element)")
	}
	for _, banned := range []string{"fetch(", "XMLHttpRequest", "WebSocket", "import(", "eval("} {
		if strings.Contains(wasm.Loader, banned) {
			t.Errorf("loader.js contains %q: the report must not reach the network or evaluate strings", banned)
		}
	}
}

func TestModuleSize(t *testing.T) {
	mod := buildtest.Module(t)
	// The judgement rules (capture gate, collectives, levers, device table)
	// grew the core by about 130 KB gzip, and leaving package regexp out
	// (analysis/internal/rx) took 117 KB off it: 1.58 MB. The page stays
	// under its 3 MB target through the base85 encoding; the guard catches
	// a heavy package pulled into the viewer. The rules' own text has since
	// taken most of the room left (1.652 MB with the unfused-attention
	// lever); the page's 3 MB target is TestReportSize's. The AMD part
	// table (device.Identify) and the TorchRec and Volta fix texts took it
	// to 1.706 MB, the launch-queue and steady-state texts to 1.7195 MB.
	// Inlining off in the text packages (buildtest.ViewerFlags) took 89 KB
	// off: 1.637 MB. The slow-host, foreach-optimizer and align1-GEMM rules
	// took it to 1.651 MB; the queued-ahead verdict, the GEMM roofline and
	// the misaligned-shape texts to 1.661 MB; the audited judgement texts
	// (the custom all-reduce's wait tail, one critical issue per fix, the
	// follow-up lever, the compiled-backward all-reduce, the eager first
	// vLLM step) to 1.674 MB; the second audit's texts (piecewise graphs'
	// FULL lever, aiter's torch fallback, the zero-shot runs' reach, the
	// kernel lever beside a host-bound reading) to 1.679 MB; the eager
	// step's bound on the FULL-graphs fix and the serialised launches' host
	// lever to 1.691 MB; the third audit's texts (the fp32 lever's split by
	// launching operator and its graph replays, align1 folded into the
	// attention issue, the uneven DataLoader, the optimizer's idle) to
	// 1.710 MB; the fourth audit's (each issue's spread across steps, its
	// outlier and trend, the steady state after prefetched batches, graph
	// replays of unknown completeness, the split compiled DDP backward,
	// the window past Record Window End, one sequence served alone) to
	// 1.724 MB; the fifth audit's (the excerpt of a longer trace, the
	// launch fix where launches queue ahead, the allocator events' host
	// cost, the fp32 time graph replays ran, the names' split, the
	// compute launched before the window, a sample's sync row) to 1.732
	// MB.
	const limit = 1_740_000
	if len(mod) > limit {
		t.Errorf("viewer module is %d bytes gzip, want at most %d (keep heavy packages out of wasm/viewer)", len(mod), limit)
	}
	if env := os.Getenv("TRACEBOOK_REPORT_SIZES"); env != "" {
		t.Logf("module %d raw, %d gzip", buildtest.RawSize(), len(mod))
	}
}

// TestBuildScriptFlags: wasm/build.sh builds the module the tests build
// (buildtest.ViewerFlags): a flag in one and not the other would test a
// module the reports do not carry.
func TestBuildScriptFlags(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "wasm", "build.sh"))
	if err != nil {
		t.Fatal(err)
	}
	script := strings.ReplaceAll(string(b), `"`, "")
	for _, f := range buildtest.ViewerFlags {
		if !regexp.MustCompile(`(^|\s)` + regexp.QuoteMeta(f) + `(\s|$)`).MatchString(script) {
			t.Errorf("wasm/build.sh does not pass %s", f)
		}
	}
}
