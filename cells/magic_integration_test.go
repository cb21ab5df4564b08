//go:build cgo

package cells_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/cells"
	"github.com/tracebook/tracebook/internal/testutil"
)

// pairDir copies the diff pair of analysis/diff/testdata into a temporary
// folder and returns it: planted_sync.json, six training steps each with a
// .item() that drains the GPU in a cudaStreamSynchronize, and fixed.json,
// the same steps without it (pipeline's TestDiffPairFiles writes them).
func pairDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"planted_sync.json", "fixed.json"} {
		b, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "analysis", "diff", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// %evidence through a session: every area shown, the bundle kept.
func TestEvidenceMagic(t *testing.T) {
	s := sessionIn(t, pairDir(t))
	s.Evidence = cells.EvidenceHook
	ctx := context.Background()
	if _, err := s.Execute(ctx, "%trace load planted_sync.json", nil); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	res, err := s.Execute(ctx, "%evidence all --rank 0", rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.texts) != len(evidence.Areas)-1 {
		t.Errorf("displayed %d areas before the result, want %d", len(rec.texts), len(evidence.Areas)-1)
	}
	if html, _ := res.Data[cells.MIMEHTML].(string); !strings.Contains(html, "evidence_"+evidence.Areas[len(evidence.Areas)-1]) || !strings.Contains(html, "<details>") {
		t.Errorf("result lacks the table name or the SQL: %.300s", html)
	}
	if b := s.Bundle(); b == nil || b.Table("kernels") == nil || !b.Filter.HasRank {
		t.Errorf("bundle not kept: %+v", b)
	}
	if _, err := s.Execute(ctx, "%evidence nope", nil); err == nil {
		t.Error("unknown area accepted")
	}
}

// %diff shows the diff as Markdown, text and script-free HTML, and writes
// the Markdown file; without a page writer, --html says that it needs one
// (package cli's test writes the interactive page through the real
// writer: cmd_diff_test.go).
func TestDiffMagic(t *testing.T) {
	dir := pairDir(t)
	s := sessionIn(t, dir)
	s.Diff = cells.DiffHook(nil)
	ctx := context.Background()
	for _, code := range []string{"%trace load planted_sync.json --name base", "%trace load fixed.json --name test"} {
		if _, err := s.Execute(ctx, code, nil); err != nil {
			t.Fatalf("%s: %v", code, err)
		}
	}
	res, err := s.Execute(ctx, "%diff base test --md diff.md", nil)
	if err != nil {
		t.Fatalf("%%diff: %v", err)
	}
	md, _ := res.Data["text/markdown"].(string)
	text, _ := res.Data[cells.MIMEText].(string)
	html, _ := res.Data[cells.MIMEHTML].(string)
	if !strings.Contains(md, "RESOLVED sync_bound_loop") || !strings.Contains(text, "Markdown diff written to "+filepath.Join(dir, "diff.md")) || !strings.Contains(html, "RESOLVED sync_bound_loop") {
		t.Errorf("outputs lack the resolved finding or the written file:\n%s\n%s", text, html)
	}
	if strings.Contains(strings.ToLower(html), "<script") {
		t.Error("the cell's HTML holds a script")
	}
	if file, err := os.ReadFile(filepath.Join(dir, "diff.md")); err != nil || string(file) != md {
		t.Errorf("diff.md = %q, %v; want the cell's Markdown", file, err)
	}
	_, err = s.Execute(ctx, "%diff base test --html diff.html", nil)
	var ee *cells.ExecError
	if !errors.As(err, &ee) || ee.EName != "NotAvailable" || !strings.HasPrefix(ee.EValue, "%diff --html needs a diff page writer") {
		t.Errorf("--html without a writer: err = %v, want a NotAvailable error saying --html needs a page writer", err)
	}
	if _, serr := os.Stat(filepath.Join(dir, "diff.html")); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("--html without a writer left a file: %v", serr)
	}
	// Contexts that differ are named at the top of the diff.
	if _, err := s.Execute(ctx, "%context tp=2", nil); err != nil {
		t.Fatal(err)
	}
	res, err = s.Execute(ctx, "%diff base test --base-context batch-size=32 --test-context batch-size=64,tp=4", nil)
	if err != nil {
		t.Fatalf("%%diff with contexts: %v", err)
	}
	md, _ = res.Data["text/markdown"].(string)
	head := strings.SplitN(md, "\n", 6)
	if len(head) < 5 || !strings.Contains(head[2], "DIFFERENT CONTEXTS") || !strings.Contains(md, "%context batch-size: base 32, test 64") || !strings.Contains(md, "%context tp: base 2, test 4") {
		t.Errorf("context warning:\n%.600s", md)
	}
	if _, err := s.Execute(ctx, "%diff base test --test-context tp=x", nil); err == nil || !strings.Contains(err.Error(), "not a positive integer") {
		t.Errorf("--test-context tp=x: err = %v", err)
	}
	if _, err := s.Execute(ctx, "%diff base", nil); err == nil || !strings.Contains(err.Error(), "two loaded traces") {
		t.Errorf("%%diff base: err = %v", err)
	}
}

// %report --perfetto DIR writes the findings' files: the planted sync's
// window as a Chrome trace holding the sync (pipeline's Perfetto tests read
// such files back with the importer).
func TestReportMagicPerfetto(t *testing.T) {
	dir := pairDir(t)
	s := sessionIn(t, dir)
	s.Report = cells.ReportHook(nil)
	ctx := context.Background()
	if _, err := s.Execute(ctx, "%trace load planted_sync.json", nil); err != nil {
		t.Fatal(err)
	}
	res, err := s.Execute(ctx, "%report --perfetto out", nil)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := res.Data[cells.MIMEText].(string)
	if !strings.Contains(text, "Perfetto file(s) written to "+filepath.Join(dir, "out")) {
		t.Errorf("the cell does not name the folder:\n%.300s", text)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "out", "finding-*-sync_bound_loop.json"))
	if len(files) != 1 {
		t.Fatalf("files of the sync finding = %q, want one", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(data) || !strings.Contains(string(data), "cudaStreamSynchronize") {
		t.Errorf("the written file is not a Chrome trace holding the sync: %.300s", data)
	}
}
