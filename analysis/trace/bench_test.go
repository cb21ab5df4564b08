package trace

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tracebook/tracebook/internal/testutil"
)

// benchTraces are the largest shared traces.
var benchTraces = []string{
	"hta/mtia_single_rank/mtia_rank_0.json.gz",
	"tracemap/vllm_h100_tp4_rank0/1_h100_1000isl_10osl_32con.pt.trace.json.gz",
	"tracelens/xdit_sd35_mi300x/profile_trace_rank_0.json.gz",
}

func readGunzipped(b *testing.B, path string) []byte {
	b.Helper()
	if _, err := os.Stat(path); err != nil {
		b.Skipf("%s: %v", path, err)
	}
	return testutil.ReadGzip(b, path)
}

// BenchmarkParse measures the parser alone: the JSON is already
// uncompressed in memory. MB/s is uncompressed JSON.
func BenchmarkParse(b *testing.B) {
	dir := testutil.SharedTraces(b)
	for _, rel := range benchTraces {
		b.Run(filepath.Base(filepath.Dir(rel)), func(b *testing.B) {
			data := readGunzipped(b, filepath.Join(dir, rel))
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := testutil.CPUTime()
			for b.Loop() {
				if _, err := Parse(bytes.NewReader(data), rel, LoadOptions{}, func(*Event) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu0, int64(len(data)))
		})
	}
}

// BenchmarkParseFile measures the import from the .json.gz file on disk:
// reading, hashing, gunzip and parsing. MB/s is uncompressed JSON.
func BenchmarkParseFile(b *testing.B) {
	dir := testutil.SharedTraces(b)
	for _, rel := range benchTraces {
		b.Run(filepath.Base(filepath.Dir(rel)), func(b *testing.B) {
			path := filepath.Join(dir, rel)
			fi, err := ParseFile(path, LoadOptions{}, nil, nil)
			if err != nil {
				b.Skipf("%s: %v", path, err)
			}
			b.SetBytes(fi.JSONBytes)
			b.ResetTimer()
			cpu0 := testutil.CPUTime()
			for b.Loop() {
				if _, err := ParseFile(path, LoadOptions{}, func(*Event) error { return nil }, nil); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu0, fi.JSONBytes)
		})
	}
}

// reportCPU reports MB of JSON per CPU-second (all threads: reading,
// hashing, gunzip and parsing), a figure that other processes sharing the
// machine disturb much less than MB/s of wall time.
func reportCPU(b *testing.B, cpu0 time.Duration, bytesPerOp int64) {
	cpu := testutil.CPUTime() - cpu0
	if cpu0 == 0 || cpu <= 0 {
		return
	}
	b.ReportMetric(float64(bytesPerOp)*float64(b.N)/cpu.Seconds()/1e6, "MB/cpu-s")
}

// BenchmarkParseEscapes measures the importer on names, categories and ids
// that hold escapes, the path that unescapes into scratch memory (the real
// traces above have few). MB/s is JSON.
func BenchmarkParseEscapes(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString(`{"traceEvents":[`)
	for i := range 20000 {
		if i > 0 {
			buf.WriteByte(',')
		}
		fmt.Fprintf(&buf, `{"ph":"X","cat":"cpu_op","name":"aten::\"op\" %d \u00e9\ud83d\ude00\tfn\\path\/x","pid":"rank \u0030","tid":"th\u0072ead %d","ts":%d,"dur":3,"args":{"k":"v"}}`, i%50, i%4, i*5)
	}
	buf.WriteString(`]}`)
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(bytes.NewReader(data), "escapes.json", LoadOptions{}, func(*Event) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
