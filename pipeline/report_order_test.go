//go:build cgo

package pipeline

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

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
	db, err := duck.Open(filepath.Join(t.TempDir(), "t.duckdb"), duck.Options{CacheDir: "-", Threads: 2, MemoryLimit: "512MB"})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.Load(ctx, []string{filepath.Join(testutil.Testdata(t), "param/dlrm_8rank")}, trace.LoadOptions{Name: "t"}, nil); err != nil {
		t.Fatal(err)
	}
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
