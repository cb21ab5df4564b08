//go:build cgo

package pipeline_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
)

// ranks.host_wait_untraced_ns against a direct reading of its definition,
// over random host timelines: the launching threads' operators, runtime
// calls and python frames (long frames with short ones nested in them,
// short events about the edges of the long ones' union, instants of no
// length, on a 50 µs grid so that events touch and meet the 1 ms buckets
// the preset sorts by) merged as closed intervals; a silence is a gap of
// 1 ms or more between them, and each host-wait gap's silent part is summed.
// A second launching thread merges with the first; a thread that launches
// nothing does not count.
func TestHostWaitUntracedRandom(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			grid := func(lo, hi int) float64 { return float64(50 * (lo/50 + r.IntN((hi-lo)/50+1))) }
			k := newKT(0, 1, "NVIDIA H100 80GB HBM3")
			type iv struct{ s, e float64 }
			var host, gaps []iv // the launching threads' events and the host-wait gaps, µs
			py := 0
			add := func(cat, name string, tid int, ts, dur float64, counts bool) {
				args := map[string]any{}
				if cat == "python_function" {
					py++
					args["Python id"] = py
				}
				k.x(cat, name, 100, tid, ts, dur, args)
				if counts {
					host = append(host, iv{ts, ts + dur})
				}
			}
			const span = 200_000.0
			// The window: python frames count from the rank's first event
			// of another kind to its last.
			add("cpu_op", "aten::empty", 100, 0, 10, true)
			add("cpu_op", "aten::empty", 100, span, 10, true)
			for i := 0; i < 25; i++ {
				ts := grid(0, int(span)-6000)
				d := grid(1000, 5000)
				tid := 100
				if i%5 == 4 {
					tid = 200
				}
				add("python_function", "a.py(1): outer", tid, ts, d, true)
				for j := 0; j < 8; j++ {
					cs := ts + grid(0, int(d)-50)
					cd := min(grid(0, 900), ts+d-cs)
					add("python_function", "a.py(2): inner", tid, cs, cd, true)
				}
			}
			for i := 0; i < 120; i++ {
				tid := 100
				if i%7 == 6 {
					tid = 200
				}
				add("cpu_op", "aten::add", tid, grid(0, int(span)), grid(0, 950), true)
			}
			for i := 0; i < 40; i++ {
				add("python_function", "b.py(3): other", 300, grid(0, int(span)), grid(0, 3000), false)
			}
			// Kernels one after another on stream 7, each launched by a
			// 5 µs runtime call on thread 100 or 200.
			end := 0.0
			for at := 100.0; at < span-4000; {
				at += grid(0, 3000)
				tid := 100
				if r.IntN(4) == 0 {
					tid = 200
				}
				gts := max(at+grid(50, 600), end+grid(0, 300))
				gd := grid(50, 1500)
				k.corr++
				k.x("cuda_runtime", "cudaLaunchKernel", 100, tid, at, 5, map[string]any{"correlation": k.corr})
				k.x("kernel", "gemm", 0, 7, gts, gd, map[string]any{"stream": 7, "device": 0, "correlation": k.corr})
				host = append(host, iv{at, at + 5})
				// The host-wait gaps, as ranks finds them: the GPU idle
				// since end, the kernel's launching call after end.
				if end > 0 && at > end && gts > end {
					gaps = append(gaps, iv{end, gts})
				}
				end = max(end, gts+gd)
				at = gts
			}
			b := collect(t, k.write(t, t.TempDir(), "silence.json"))

			sort.Slice(host, func(i, j int) bool { return host[i].s < host[j].s || host[i].s == host[j].s && host[i].e < host[j].e })
			var sil []iv
			pe := host[0].e
			for _, h := range host[1:] {
				if h.s-pe >= 1000 {
					sil = append(sil, iv{pe, h.s})
				}
				pe = max(pe, h.e)
			}
			var want int64
			for _, g := range gaps {
				for _, s := range sil {
					if lo, hi := max(g.s, s.s), min(g.e, s.e); hi > lo {
						want += int64((hi - lo) * 1000)
					}
				}
			}
			rk := b.Table("ranks")
			if got := sumCol(rk, "host_wait_untraced_ns"); got != want || len(sil) == 0 {
				t.Errorf("host_wait_untraced_ns = %d, want %d (%d silences)", got, want, len(sil))
			}
			t.Logf("%d silences, %d host-wait gaps, %d ns untraced", len(sil), len(gaps), want)
		})
	}
}
