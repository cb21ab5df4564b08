package buildtest

import (
	"strconv"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/table"
)

func cols(spec ...string) []table.Column {
	var out []table.Column
	for i := 0; i+1 < len(spec); i += 2 {
		typ := "BIGINT"
		switch spec[i+1] {
		case "TEXT":
			typ = "VARCHAR"
		case "BOOL":
			typ = "BOOLEAN"
		}
		out = append(out, table.Column{Name: spec[i], Type: typ, Unit: spec[i+1]})
	}
	return out
}

// SyntheticBundle returns a bundle shaped like the evidence of a vLLM job
// with the given ranks and steps (alternating prefill and decode steps), the
// preset columns of sql/*.sql and realistic cardinalities: 20 kernels and 20
// operators per step and rank, sync calls, copies, gaps, launches.
func SyntheticBundle(ranks, steps int) *evidence.Bundle {
	b := evidence.NewBundle()
	const tr = "vllm_llama_tp8"
	b.Traces = &table.Table{Name: "traces", Columns: cols("trace", "TEXT", "path", "TEXT", "rank", "INT", "producer", "TEXT",
		"platform", "TEXT", "gpu_model", "TEXT", "has_sync_events", "BOOL", "has_graphs", "BOOL", "has_steps", "BOOL",
		"events", "COUNT", "first_ts_ns", "TIMESTAMP_NS", "last_end_ns", "TIMESTAMP_NS")}
	kern := cols("trace", "TEXT", "rank", "INT", "step", "INT", "phase", "TEXT", "stream", "INT", "name", "TEXT", "class", "TEXT",
		"count", "COUNT", "total_ns", "DURATION_NS", "min_ns", "DURATION_NS", "max_ns", "DURATION_NS", "hist", "HIST")
	ops := cols("trace", "TEXT", "rank", "INT", "step", "INT", "phase", "TEXT", "name", "TEXT", "count", "COUNT",
		"incl_ns", "DURATION_NS", "self_ns", "DURATION_NS", "max_ns", "DURATION_NS", "launches", "COUNT", "gpu_events", "COUNT", "gpu_ns", "DURATION_NS")
	syncT := cols("trace", "TEXT", "rank", "INT", "step", "INT", "phase", "TEXT", "stream", "INT", "call", "TEXT", "op", "TEXT",
		"trigger", "TEXT", "direction", "TEXT", "pageable", "BOOL", "blocking", "BOOL", "count", "COUNT", "blocked_ns", "DURATION_NS",
		"max_blocked_ns", "DURATION_NS", "gaps", "COUNT", "gpu_gap_ns", "DURATION_NS", "max_gap_ns", "DURATION_NS", "bytes", "BYTES")
	gapsT := cols("trace", "TEXT", "rank", "INT", "step", "INT", "phase", "TEXT", "stream", "INT", "category", "TEXT",
		"count", "COUNT", "idle_ns", "DURATION_NS", "max_ns", "DURATION_NS", "max_at_ns", "TIMESTAMP_NS", "hist", "HIST")
	launchT := cols("trace", "TEXT", "rank", "INT", "step", "INT", "phase", "TEXT", "stream", "INT", "call", "TEXT",
		"launches", "COUNT", "with_gpu", "COUNT", "cpu_ns", "DURATION_NS", "gpu_ns", "DURATION_NS", "delay_ns", "DURATION_NS",
		"hta_delay_ns", "DURATION_NS", "short", "COUNT", "short_cpu_ns", "DURATION_NS", "runtime_outliers", "COUNT",
		"delay_outliers", "COUNT", "cpu_hist", "HIST", "delay_hist", "HIST")
	ranksT := cols("trace", "TEXT", "rank", "INT", "step", "INT", "phase", "TEXT", "events", "COUNT", "first_ns", "TIMESTAMP_NS",
		"last_ns", "TIMESTAMP_NS", "busy_ns", "DURATION_NS", "idle_ns", "DURATION_NS", "compute_ns", "DURATION_NS", "comm_ns", "DURATION_NS",
		"mem_ns", "DURATION_NS", "comm_comp_ns", "DURATION_NS", "kernel_ns", "DURATION_NS", "step_ns", "DURATION_NS")
	stepsT := cols("trace", "TEXT", "rank", "INT", "step", "INT", "phase", "TEXT", "source", "TEXT", "hypothesis", "BOOL",
		"name", "TEXT", "start_ns", "TIMESTAMP_NS", "wall_ns", "DURATION_NS", "ctx_req", "COUNT", "ctx_tok", "COUNT",
		"gen_req", "COUNT", "gen_tok", "COUNT", "gpu_events", "COUNT", "gpu_busy_ns", "DURATION_NS", "kernel_ns", "DURATION_NS", "host_gap_ns", "DURATION_NS")
	tk := &table.Table{Name: "kernels", Columns: kern}
	to := &table.Table{Name: "ops", Columns: ops}
	ts := &table.Table{Name: "sync", Columns: syncT}
	tg := &table.Table{Name: "gaps", Columns: gapsT}
	tl := &table.Table{Name: "launch", Columns: launchT}
	trk := &table.Table{Name: "ranks", Columns: ranksT}
	tst := &table.Table{Name: "steps", Columns: stepsT}
	kernels := make([]string, 20)
	opsN := make([]string, 20)
	for i := range kernels {
		kernels[i] = "void vllm::kernel_" + strconv.Itoa(i) + "<c10::BFloat16, 128, 64, true>(c10::BFloat16*, c10::BFloat16 const*, int)"
		opsN[i] = "aten::op_" + strconv.Itoa(i)
	}
	seed := uint64(7)
	rnd := func(n int64) int64 {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int64((seed>>33)%uint64(n)) + 1
	}
	for r := 0; r < ranks; r++ {
		rk := int64(r)
		t0 := int64(0)
		b.Traces.Rows = append(b.Traces.Rows, []any{tr, "traces/vllm/rank-" + strconv.Itoa(r) + ".pt.trace.json.gz", rk, "vllm", "cuda",
			"NVIDIA H100 80GB HBM3", true, false, true, int64(2000 * steps), int64(0), int64(steps) * 30_000_000})
		for s := 0; s < steps; s++ {
			st := int64(s)
			phase := "decode"
			if s%8 == 0 {
				phase = "prefill"
			}
			wall := 20_000_000 + rnd(10_000_000)
			busy := wall * 8 / 10
			for i, k := range kernels {
				n := rnd(8)
				tot := n * (1000 + rnd(50_000))
				tk.Rows = append(tk.Rows, []any{tr, rk, st, phase, int64(7), k, []string{"COMP", "COMM", "MEM"}[i%3], n, tot, tot / n / 2, tot / n * 2, strconv.Itoa(80+i%20) + ":" + strconv.FormatInt(n, 10)})
			}
			for _, o := range opsN {
				n := rnd(6)
				to.Rows = append(to.Rows, []any{tr, rk, st, phase, o, n, n * 40_000, n * 10_000, 50_000 + rnd(1000), n, n, n * 20_000})
			}
			ts.Rows = append(ts.Rows, []any{tr, rk, st, phase, int64(7), "cudaStreamSynchronize", "aten::item", "item", "DtoH", false, true,
				int64(1), rnd(2_000_000), rnd(2_000_000), int64(1), rnd(1_500_000), rnd(1_500_000), int64(4)})
			for _, cat := range []string{"host_wait", "kernel_wait", "other"} {
				tg.Rows = append(tg.Rows, []any{tr, rk, st, phase, int64(7), cat, rnd(50), rnd(3_000_000), rnd(500_000), t0 + rnd(wall), "60:3 70:5"})
			}
			tl.Rows = append(tl.Rows, []any{tr, rk, st, phase, int64(7), "cudaLaunchKernel", int64(100), int64(100), rnd(800_000), rnd(900_000),
				rnd(500_000), rnd(400_000), rnd(60), rnd(200_000), rnd(3), rnd(3), "90:50 100:50", "95:100"})
			trk.Rows = append(trk.Rows, []any{tr, rk, st, phase, int64(2000), t0, t0 + wall, busy, wall - busy, busy * 9 / 10, busy / 20, busy / 50, busy / 40, busy, wall})
			tst.Rows = append(tst.Rows, []any{tr, rk, st, phase, "execute_tokens", false, "execute_context_1(1024)_generation_31(31)",
				t0, wall, int64(1), int64(1024), int64(31), int64(31), int64(200), busy, busy, rnd(200_000)})
			t0 += wall + 100_000
		}
	}
	for _, t := range []*table.Table{tk, to, ts, tg, tl, trk, tst} {
		t.Total = int64(len(t.Rows))
		b.Tables[t.Name] = t
	}
	return b
}
