//go:build cgo

package duck

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/internal/testutil"
)

// BenchmarkLoad measures a load end to end into an in-memory database, in
// MB/s of uncompressed JSON: parsed (the parse cache off), and served from a
// warm parse cache (hash the file, read its Parquet).
func BenchmarkLoad(b *testing.B) {
	for _, tc := range []struct{ name, path string }{
		{"mtia_87MB", "hta/mtia_single_rank/mtia_rank_0.json.gz"},
		{"vllm_h100_48MB", "tracemap/vllm_h100_tp4_rank0/1_h100_1000isl_10osl_32con.pt.trace.json.gz"},
		{"mtia_87MB_cached", "hta/mtia_single_rank/mtia_rank_0.json.gz"},
		{"vllm_h100_48MB_cached", "tracemap/vllm_h100_tp4_rank0/1_h100_1000isl_10osl_32con.pt.trace.json.gz"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			path := filepath.Join(testutil.SharedTraces(b), tc.path)
			if _, err := os.Stat(path); err != nil {
				b.Skip(err)
			}
			cache := "-"
			if strings.HasSuffix(tc.name, "_cached") {
				cache = ""
			}
			db := openTest(b, cache)
			var jsonBytes int64
			if cache == "" {
				res, err := db.Load(context.Background(), []string{path}, trace.LoadOptions{Name: "warm"}, nil)
				if err != nil {
					b.Fatal(err)
				}
				jsonBytes = res.JSONBytes
			}
			var n int64
			var cpu time.Duration
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				c0 := cpuTime()
				res, err := db.Load(context.Background(), []string{path}, trace.LoadOptions{Name: "t" + string(rune('a'+i%26)) + string(rune('a'+i/26%26))}, nil)
				if err != nil {
					b.Fatal(err)
				}
				n = res.JSONBytes
				if res.Cached {
					n = jsonBytes
				}
				cpu += cpuTime() - c0
				b.StopTimer()
				if err := db.Drop(context.Background(), res.Trace); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.SetBytes(n)
			// The CPU time of the whole process (parser, DuckDB threads):
			// on a shared machine, MB/s of wall time says more about the
			// neighbours than about the load.
			b.ReportMetric(float64(n)*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
		})
	}
}

// cpuTime returns the CPU time (user and system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
