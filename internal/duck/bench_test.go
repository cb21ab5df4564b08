//go:build cgo

package duck

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/internal/testutil"
)

// BenchmarkLoad measures a load end to end (hash, parse, store; the parse
// cache off) in MB/s of uncompressed JSON.
func BenchmarkLoad(b *testing.B) {
	for _, tc := range []struct{ name, path string }{
		{"mtia_87MB", "hta/mtia_single_rank/mtia_rank_0.json.gz"},
		{"vllm_h100_48MB", "tracemap/vllm_h100_tp4_rank0/1_h100_1000isl_10osl_32con.pt.trace.json.gz"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			path := filepath.Join(testutil.SharedTraces(b), tc.path)
			if _, err := os.Stat(path); err != nil {
				b.Skip(err)
			}
			db := openTest(b, "-")
			var n int64
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				res, err := db.Load(context.Background(), []string{path}, trace.LoadOptions{Name: "t" + string(rune('a'+i%26)) + string(rune('a'+i/26%26))}, nil)
				if err != nil {
					b.Fatal(err)
				}
				n = res.JSONBytes
				b.StopTimer()
				if err := db.Drop(context.Background(), res.Trace); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.SetBytes(n)
		})
	}
}
