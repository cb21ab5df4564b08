package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/cells"
	"github.com/tracebook/tracebook/internal/duck"
	"github.com/tracebook/tracebook/internal/testutil"
	"github.com/tracebook/tracebook/wasm"
)

// vllmTrace is the 48 MB (uncompressed) vLLM H100 trace of the shared collection.
const vllmTrace = "tracemap/vllm_h100_tp4_rank0"

// BenchmarkReportVLLM times `tracebook report` on the 48 MB vLLM trace, load
// included (no parse cache), and reports each phase in ms/op:
//
//	go test -run XXX -bench ReportVLLM -benchtime 1x .
func BenchmarkReportVLLM(b *testing.B) {
	dir := filepath.Join(testutil.SharedTraces(b), vllmTrace)
	ctx := context.Background()
	var load, ev, cv, rep time.Duration
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
		bundle, err := cells.CollectEvidence(ctx, db, []string{"all"}, evidence.Filter{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		ev += time.Since(start)
		start = time.Now()
		res, err := cells.CrossView(ctx, db, evidence.Filter{}, crossview.DefaultOptions())
		if err != nil {
			b.Fatal(err)
		}
		cv += time.Since(start)
		start = time.Now()
		src := &report.Source{Bundle: bundle, CrossViews: []*crossview.Result{res}}
		var md, page bytes.Buffer
		if err := report.GenerateView(&md, src, report.View{}, report.Markdown); err != nil {
			b.Fatal(err)
		}
		data, err := report.EncodeOffline(src)
		if err != nil {
			b.Fatal(err)
		}
		if err := wasm.WriteReport(&page, data, report.View{}, wasm.Options{}); err != nil {
			b.Fatal(err)
		}
		rep += time.Since(start)
		db.Close()
	}
	n := float64(b.N)
	b.ReportMetric(float64(load.Milliseconds())/n, "load-ms/op")
	b.ReportMetric(float64(ev.Milliseconds())/n, "evidence-ms/op")
	b.ReportMetric(float64(cv.Milliseconds())/n, "crossview-ms/op")
	b.ReportMetric(float64(rep.Milliseconds())/n, "report-ms/op")
}
