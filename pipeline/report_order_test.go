//go:build cgo

package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/internal/duck"
	"github.com/tracebook/tracebook/internal/testutil"
)

// A report whose slice is too large to build its cross-views while the
// evidence runs builds them first, under a lower DuckDB memory limit, and
// collects the same source: the cross-view of the filter and one per rank
// (8 ranks of dlrm_8rank), the same evidence.
func TestCollectReportLargeSliceSameSource(t *testing.T) {
	db, ctx := dlrmFile(t)
	collect := func(lean int) []byte {
		t.Helper()
		defer func(old int) { leanCrossViewFrames = old }(leanCrossViewFrames)
		leanCrossViewFrames = lean
		src, err := CollectReport(ctx, db, evidence.Filter{}, nil)
		if err != nil {
			t.Fatalf("CollectReport (lean %d): %v", lean, err)
		}
		if len(src.CrossViews) != 9 {
			t.Errorf("lean %d: %d cross-views, want 9 (the filter's and 8 ranks')", lean, len(src.CrossViews))
		}
		b, err := report.EncodeSource(src)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	concurrent, first := collect(1<<30), collect(0)
	if !bytes.Equal(concurrent, first) {
		t.Error("the cross-views built first give another report source than built alongside the evidence")
	}
}

// A slice with more host frames than one cross-view holds gets no cross-view
// and no read of its frames: the report stands without a call tree, and its
// gap says how many frames there are and how to narrow them.
func TestCollectReportTooManyFrames(t *testing.T) {
	db, ctx := dlrmFile(t)
	frames, _ := crossViewSize(ctx, db, "", -1)
	defer func(old int) { MaxCrossViewFrames = old }(MaxCrossViewFrames)
	MaxCrossViewFrames = frames - 1
	if _, err := CrossView(ctx, db, evidence.Filter{}, crossview.DefaultOptions()); err == nil || !strings.Contains(err.Error(), "host frames, more than") {
		t.Fatalf("CrossView over the cap: %v", err)
	}
	src, err := CollectReport(ctx, db, evidence.Filter{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(src.CrossViews) != 0 {
		t.Errorf("%d cross-views over the cap", len(src.CrossViews))
	}
	var why string
	for _, g := range src.Bundle.Gaps {
		if g.Kind == "no_crossview" {
			why = g.Why
		}
	}
	if !strings.Contains(why, fmt.Sprintf("%.1f M host frames", float64(frames)/1e6)) || !strings.Contains(why, "--window START..END") {
		t.Errorf("no_crossview gap: %q", why)
	}
	if len(src.Bundle.Tables) == 0 {
		t.Error("the report lost its evidence")
	}
	// The report says why where the tree and the cross-check would be.
	var md bytes.Buffer
	if err := report.GenerateView(&md, src, report.View{Filter: src.Bundle.Filter}, report.Markdown); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"GPU profile**: not available (the slice holds", "No cross-view: the slice holds"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the report does not say %q", want)
		}
	}
	// At the cap the cross-view is built.
	MaxCrossViewFrames = frames
	if _, err := CrossView(ctx, db, evidence.Filter{}, crossview.DefaultOptions()); err != nil {
		t.Errorf("CrossView at the cap: %v", err)
	}
}

// dlrmFile opens a database file holding dlrm_8rank (8 ranks) as trace "t",
// with the memory limit a file gets from the CLI.
func dlrmFile(t *testing.T) (*duck.DB, context.Context) {
	t.Helper()
	db, err := duck.Open(filepath.Join(t.TempDir(), "t.duckdb"), duck.Options{CacheDir: "-", Threads: 2, MemoryLimit: "512MB"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	if _, err := db.Load(ctx, []string{filepath.Join(testutil.Testdata(t), "param/dlrm_8rank")}, trace.LoadOptions{Name: "t"}, nil); err != nil {
		t.Fatal(err)
	}
	return db, ctx
}
