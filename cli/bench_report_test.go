package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/internal/duck"
	"github.com/tracebook/tracebook/internal/testutil"
)

// vllmTrace is the 48 MB (uncompressed) vLLM H100 trace of the shared collection.
const vllmTrace = "tracemap/vllm_h100_tp4_rank0"

// BenchmarkReportVLLM times `tracebook report -o report.html` on the 48 MB
// vLLM trace, load included (no parse cache), through the command's own
// code, and reports its phases in ms/op: the load, the collection
// (evidence, cross-views and the findings' Perfetto files) and the page,
// and the CPU time of the whole (DuckDB's threads included).
//
//	go test -run XXX -bench ReportVLLM -benchtime 3x ./cli
func BenchmarkReportVLLM(b *testing.B) {
	dir := filepath.Join(testutil.SharedTraces(b), vllmTrace)
	ctx := context.Background()
	var load, collect, page time.Duration
	c0 := testutil.CPUTime()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		db, err := duck.Open("", duck.Options{CacheDir: "-"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := db.Load(ctx, []string{dir}, trace.LoadOptions{}, nil); err != nil {
			b.Fatal(err)
		}
		load += time.Since(start)
		start = time.Now()
		src, pg, err := collectLoaded(ctx, db, evidence.Filter{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		collect += time.Since(start)
		start = time.Now()
		if pg == nil {
			if pg, err = reportPage(src, report.View{}); err != nil {
				b.Fatal(err)
			}
		}
		var html bytes.Buffer
		if err := pg.Write(&html, src.Perfetto); err != nil {
			b.Fatal(err)
		}
		page += time.Since(start)
		db.Close()
	}
	n := float64(b.N)
	b.ReportMetric(float64((testutil.CPUTime()-c0).Milliseconds())/n, "cpu-ms/op")
	b.ReportMetric(float64(load.Milliseconds())/n, "load-ms/op")
	b.ReportMetric(float64(collect.Milliseconds())/n, "collect-ms/op")
	b.ReportMetric(float64(page.Milliseconds())/n, "page-ms/op")
}
