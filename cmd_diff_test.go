package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	if strings.Contains(strings.ToLower(string(html)), "<script") {
		t.Error("the offline diff holds a script")
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
