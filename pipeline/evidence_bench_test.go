//go:build cgo && unix

package pipeline_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/internal/testutil"
	"github.com/tracebook/tracebook/pipeline"
)

// BenchmarkCollectEvidence times every area on the two large shared traces
// once they are loaded: hta/mtia_single_rank (87 MB of JSON) and the
// tracemap vLLM H100 rank (48 MB). The first iteration logs each area's time.
func BenchmarkCollectEvidence(b *testing.B) {
	for _, set := range []string{"hta/mtia_single_rank", "tracemap/vllm_h100_tp4_rank0"} {
		b.Run(filepath.Base(set), func(b *testing.B) {
			db := openDB(b)
			ctx := context.Background()
			if _, err := db.Load(ctx, []string{filepath.Join(testutil.SharedTraces(b), set)}, trace.LoadOptions{Name: "t"}, nil); err != nil {
				b.Fatal(err)
			}
			for _, area := range evidence.Areas {
				start := time.Now()
				if _, err := pipeline.CollectEvidence(ctx, db, []string{area}, evidence.Filter{}, nil); err != nil {
					b.Fatal(err)
				}
				b.Logf("%s %-8s %v", set, area, time.Since(start).Round(time.Millisecond))
			}
			b.ResetTimer()
			c0 := testutil.CPUTime()
			for i := 0; i < b.N; i++ {
				if _, err := pipeline.CollectEvidence(ctx, db, []string{"all"}, evidence.Filter{}, nil); err != nil {
					b.Fatal(err)
				}
			}
			// CPU time is what a shared machine cannot inflate: wall time there
			// grows with the load, CPU time much less.
			b.ReportMetric(float64(testutil.CPUTime()-c0)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}
