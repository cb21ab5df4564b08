package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/diff"
	"github.com/tracebook/tracebook/cells"
	"github.com/tracebook/tracebook/internal/testutil"
	"github.com/tracebook/tracebook/wasm"
)

// The hand-built pair of analysis/diff/testdata: the planted aten::item sync
// is gone in the fixed trace. The CLI writes the headline, the Markdown and
// the offline page, and the same trace twice shows no change.
func TestDiffCommand(t *testing.T) {
	base, test := "analysis/diff/testdata/planted_sync.json", "analysis/diff/testdata/fixed.json"
	dir := t.TempDir()
	md, page := filepath.Join(dir, "d.md"), filepath.Join(dir, "d.html")
	out := runOK(t, "diff", base, test, "--md", md, "-o", page)
	if !strings.Contains(out, "step time 13.54 ms → 8.54 ms/step (−5.00 ms (−36.9%), significant") || !strings.Contains(out, "1 resolved, 0 new") {
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
	parts, err := wasm.ExtractDiff(html)
	if err != nil {
		t.Fatal(err)
	}
	var native bytes.Buffer
	if err := diff.RenderInput(&native, parts.Bundle, parts.View, diff.HTMLFragment); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(native.Bytes(), parts.Static) {
		t.Error("the page's static diff is not the native rendering of its input")
	}
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
// with golden files (analysis/diff/testdata/golden/<pair>.md.golden). Under
// -update it also writes each pair's encoded input, gzip-compressed
// (<pair>.input.msgpack.gz), for the viewer parity tests (wasm/host).
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
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			md := filepath.Join(t.TempDir(), "d.md")
			runOK(t, append([]string{"diff", tc.base, tc.test, "--md", md}, tc.args...)...)
			got, err := os.ReadFile(md)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join("analysis", "diff", "testdata", "golden")
			testutil.Golden(t, filepath.Join(dir, tc.name+".md.golden"), got)
			if *testutil.Update {
				f, _, err := cells.ParseFilter(tc.args)
				if err != nil {
					t.Fatal(err)
				}
				in, err := collectDiff(context.Background(), tc.base, tc.test, f, nil, nil, true)
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
				testutil.Golden(t, filepath.Join(dir, tc.name+".input.msgpack.gz"), gz.Bytes())
			}
		})
	}
}
