package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/diff"
	"github.com/tracebook/tracebook/cells"
	"github.com/tracebook/tracebook/internal/buildtest"
	"github.com/tracebook/tracebook/internal/testutil"
	"github.com/tracebook/tracebook/wasm"
	"github.com/tracebook/tracebook/wasm/host"
)

// The hand-built pair of analysis/diff/testdata: the planted aten::item sync
// is gone in the fixed trace. The CLI writes the headline, the Markdown and
// the offline page, and the same trace twice shows no change.
func TestDiffCommand(t *testing.T) {
	base, test := "../analysis/diff/testdata/planted_sync.json", "../analysis/diff/testdata/fixed.json"
	dir := t.TempDir()
	md, page := filepath.Join(dir, "d.md"), filepath.Join(dir, "d.html")
	out := runOK(t, "diff", base, test, "--md", md, "-o", page)
	if !strings.Contains(out, "step time 13.540 ms → 8.540 ms/step (−5.000 ms (−36.9%), significant") || !strings.Contains(out, "1 resolved, 0 new") {
		t.Errorf("headline = %s", out)
	}
	mdText, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range []string{string(mdText), string(html)} {
		if !strings.Contains(doc, "RESOLVED sync_bound_loop") {
			t.Errorf("the resolved finding is missing:\n%.600s", doc)
		}
	}
	// The page is the viewer's: the diff's input and (in a viewer build)
	// the module, which re-renders it; its static diff is the native one.
	staticIsNative(t, html, "the -o page")
	if !bytes.Contains(html, []byte(`data-tb-kind="diff"`)) || !bytes.Contains(html, []byte(`<select data-tb="rank">`)) {
		t.Error("the page is not a diff page with controls")
	}
	ctxDiff := runOK(t, "diff", base, test, "--base-context", "tp=2", "--test-context", "tp=4")
	if !strings.Contains(ctxDiff, "DIFFERENT CONTEXTS") || !strings.Contains(ctxDiff, "%context tp: base 2, test 4") {
		t.Errorf("context diff:\n%.600s", ctxDiff)
	}
	same := runOK(t, "diff", base, base)
	if !strings.Contains(same, "No significant change.") || !strings.Contains(same, "0 resolved, 0 new") {
		t.Errorf("self diff:\n%.800s", same)
	}
}

// TestDiffGolden compares the Markdown diff of pairs of small real traces
// with golden files (testdata/diff/<pair>.md.golden), the commands run from
// the repository's root as TestReportGolden's are. Under -update it also
// writes each pair's encoded input, gzip-compressed
// (analysis/diff/testdata/golden/<pair>.input.msgpack.gz), for the viewer
// parity tests (wasm/host) and analysis/diff's chart test.
func TestDiffGolden(t *testing.T) {
	tests := []struct {
		name       string
		base, test string
		args       []string
	}{
		{"planted_sync_fixed", "analysis/diff/testdata/planted_sync.json", "analysis/diff/testdata/fixed.json", nil},
		{"dlrm_8rank_self", "testdata/param/dlrm_8rank", "testdata/param/dlrm_8rank", nil},
		{"vllm_piecewise_full", "testdata/tracelens/vllm_prefilldecode_piecewise_mi300x/graph_execution.json.gz", "testdata/tracelens/vllm_decode_full_mi300x/graph_execution.json.gz", nil},
	}
	t.Chdir("..")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			md := filepath.Join(t.TempDir(), "d.md")
			runOK(t, append([]string{"diff", tc.base, tc.test, "--md", md}, tc.args...)...)
			got, err := os.ReadFile(md)
			if err != nil {
				t.Fatal(err)
			}
			testutil.Golden(t, filepath.Join("cli", "testdata", "diff", tc.name+".md.golden"), got)
			if *testutil.Update {
				f, _, err := cells.ParseFilter(tc.args)
				if err != nil {
					t.Fatal(err)
				}
				in, err := collectDiff(context.Background(), tc.base, tc.test, f, nil, nil, true, loadFlags{}, io.Discard)
				if err != nil {
					t.Fatal(err)
				}
				data, err := diff.EncodeInput(in)
				if err != nil {
					t.Fatal(err)
				}
				var gz bytes.Buffer
				zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
				zw.Write(data)
				zw.Close()
				testutil.Golden(t, filepath.Join("analysis", "diff", "testdata", "golden", tc.name+".input.msgpack.gz"), gz.Bytes())
			}
		})
	}
}

// TestDiffMagicPage runs %diff --html in a notebook session wired as the
// kernel's: the file is the interactive diff page `tracebook diff -o`
// writes (data-tb-kind="diff", the diff's input with the cross-views of
// each rank, the static diff the native rendering of that input), and the
// viewer module renders it byte for byte as the native code does
// (host.CheckDiff). A build without the viewer tag writes the page without
// the module and says so; the test then writes the small pair's page again
// with the module built for tests (buildtest.Module), through the same writer.
func TestDiffMagicPage(t *testing.T) {
	tests := []struct {
		name       string
		base, test string
		// slices are the slices of each side's cross-views, in order: the
		// collection filter's, then each rank's.
		slices []string
		// static is a line of the static diff.
		static string
		// module: write the page with the test-built module too, when the
		// build has none.
		module bool
	}{
		{"planted_sync_fixed", "analysis/diff/testdata/planted_sync.json", "analysis/diff/testdata/fixed.json",
			[]string{"all"}, "RESOLVED sync_bound_loop [rank 0]", true},
		{"dlrm_8rank_self", "testdata/param/dlrm_8rank", "testdata/param/dlrm_8rank",
			[]string{"all", "rank 0", "rank 1", "rank 2", "rank 3", "rank 4", "rank 5", "rank 6", "rank 7"}, "No significant change.", false},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s, db, err := newSession(sessionConfig{workDir: dir, cacheDir: "-", deterministic: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			root := testutil.RepoRoot(t)
			for _, code := range []string{"%trace load " + filepath.Join(root, tc.base) + " --name base", "%trace load " + filepath.Join(root, tc.test) + " --name test"} {
				if _, err := s.Execute(ctx, code, quietPublisher{}); err != nil {
					t.Fatalf("%s: %v", code, err)
				}
			}
			page, p := diffMagicPage(t, s, "wired.html")
			if !bytes.Contains(p.Static, []byte(tc.static)) {
				t.Errorf("the static diff lacks %q:\n%.800s", tc.static, p.Static)
			}
			in, err := diff.DecodeInput(p.Bundle)
			if err != nil {
				t.Fatal(err)
			}
			if in.Base.Name != "base" || in.Test.Name != "test" {
				t.Errorf("sides = %q, %q; want base, test", in.Base.Name, in.Test.Name)
			}
			for _, side := range []diff.InputSide{in.Base, in.Test} {
				if got := cvSlices(side.CrossViews); strings.Join(got, "|") != strings.Join(tc.slices, "|") {
					t.Errorf("%s cross-views = %q, want %q", side.Name, got, tc.slices)
				}
			}
			if wasm.Module() == nil {
				if !bytes.Contains(page, []byte("Static diff: this tracebook was built without the viewer module")) {
					t.Error("the page of a build without the viewer module does not say it is static")
				}
				if err := host.CheckDiff(ctx, page, nil); !errors.Is(err, wasm.ErrNoModule) {
					t.Errorf("CheckDiff of the page without a module = %v, want ErrNoModule", err)
				}
				if !tc.module {
					return
				}
				mod := buildtest.Module(t)
				s.Diff = cells.DiffHook(diffPageWriter(mod))
				page, p = diffMagicPage(t, s, "module.html")
				if !bytes.Equal(p.Module, mod) {
					t.Fatal("the page does not carry the module it was written with")
				}
			}
			if len(p.Module) == 0 || !bytes.Contains(page, []byte(`id="tb-module"`)) {
				t.Error("the page carries no viewer module")
			}
			if err := host.CheckDiff(ctx, page, nil); err != nil {
				t.Errorf("CheckDiff: %v", err)
			}
		})
	}
}

// diffMagicPage runs %diff base test --html name in s and returns the
// file and its parts, after checking that the cell names it, its root says
// it is a diff page and its static diff is the native rendering of its
// input.
func diffMagicPage(t *testing.T, s *cells.Session, name string) ([]byte, *wasm.Parts) {
	t.Helper()
	res, err := s.Execute(context.Background(), "%diff base test --html "+name, quietPublisher{})
	if err != nil {
		t.Fatalf("%%diff --html: %v", err)
	}
	path := filepath.Join(s.WorkDir(), name)
	if text, _ := res.Data[cells.MIMEText].(string); !strings.HasPrefix(text, "HTML diff written to "+path+" (") {
		t.Errorf("text/plain does not name the page:\n%.300s", text)
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, []byte(`data-tb-kind="diff"`)) || !bytes.Contains(page, []byte(`<select data-tb="rank">`)) {
		t.Errorf("%s is not a diff page with controls", name)
	}
	return page, staticIsNative(t, page, name)
}

// staticIsNative extracts a diff page's parts and checks that its static
// diff is the native rendering of its input.
func staticIsNative(t *testing.T, page []byte, what string) *wasm.Parts {
	t.Helper()
	parts, err := wasm.ExtractDiff(page)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	var native bytes.Buffer
	if err := diff.RenderInput(&native, parts.Bundle, parts.View, diff.HTMLFragment); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(native.Bytes(), parts.Static) {
		t.Errorf("%s: the static diff is not the native rendering of its input", what)
	}
	return parts
}

// cvSlices names the slices of cross-views: "all", "rank N" or "phase P".
func cvSlices(cvs []*crossview.Result) []string {
	var out []string
	for _, cv := range cvs {
		switch {
		case cv.Slice.HasRank:
			out = append(out, fmt.Sprintf("rank %d", cv.Slice.Rank))
		case cv.Slice.Phase != "":
			out = append(out, "phase "+cv.Slice.Phase)
		default:
			out = append(out, "all")
		}
	}
	return out
}
