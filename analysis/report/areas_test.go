package report

import (
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/internal/testutil"
)

func col(name, typ, unit string) table.Column { return table.Column{Name: name, Type: typ, Unit: unit} }

// areaEvidence is the rolled-up evidence of one rank: a blocking sync call
// named with markup, two kernels, no step, and a one-rank gap.
func areaEvidence() *evidence.Evidence {
	return &evidence.Evidence{
		Tables: evidence.Tables{
			"ranks": {Name: "ranks", Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"),
				col("busy_ns", "BIGINT", "DURATION_NS"), col("idle_ns", "BIGINT", "DURATION_NS"), col("compute_ns", "BIGINT", "DURATION_NS")},
				Rows: [][]any{{"job", int64(0), int64(6_000_000), int64(4_000_000), int64(5_000_000)}}},
			"sync": {Name: "sync", Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"), col("call", "VARCHAR", "TEXT"),
				col("op", "VARCHAR", "TEXT"), col("blocking", "BOOLEAN", "BOOL"), col("count", "BIGINT", "COUNT"), col("blocked_ns", "BIGINT", "DURATION_NS"),
				col("gaps", "BIGINT", "COUNT"), col("gpu_gap_ns", "BIGINT", "DURATION_NS")},
				Rows: [][]any{
					{"job", int64(0), "cudaStreamSynchronize", "<script>alert(1)</script>", true, int64(3), int64(2_500_000), int64(2), int64(1_000_000)},
					{"job", int64(0), "cudaStreamWaitEvent", "", false, int64(40), int64(9_000_000), int64(0), int64(0)},
				}},
			"kernels": {Name: "kernels", Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"), col("name", "VARCHAR", "TEXT"),
				col("class", "VARCHAR", "TEXT"), col("total_ns", "BIGINT", "DURATION_NS")},
				Rows: [][]any{{"job", int64(0), "gemm", "COMP", int64(3_000_000)}, {"job", int64(0), "nccl", "COMM", int64(1_000_000)}}},
			"steps": {Name: "steps", Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"), col("wall_ns", "BIGINT", "DURATION_NS")}},
		},
		Gaps: []evidence.Gap{
			{Kind: evidence.GapSingleRank, Trace: "job", Rank: -1, What: "rank imbalance", Why: "only one rank was loaded"},
			{Kind: evidence.GapNoSteps, Trace: "job", Rank: 0, What: "per-step evidence", Why: "no step annotations"},
		},
	}
}

// TestEvidenceRows: one row per area with evidence, in the areas' order;
// the key number with what it is a share of and on which rank; a finding
// that cites the area interprets it; an area the trace cannot show is a
// gap, never a zero.
func TestEvidenceRows(t *testing.T) {
	found := []evidence.Finding{{Rule: "sync_bound_loop", Title: "Host syncs stall the GPU", Severity: "critical", Status: "confirmed",
		Evidence: []evidence.Ref{{Preset: "sync"}}}}
	rows := evidenceRows(areaEvidence(), found, "")
	var areas []string
	byArea := map[string]EvidenceRow{}
	for _, r := range rows {
		areas = append(areas, r.Area)
		byArea[r.Area] = r
	}
	// ops, memcpy and gaps were not collected: gaps that say so; launch and
	// overlap are shown only where collected.
	want := "Synchronization waits,GPU kernel hotspots,CPU operator hotspots,Rank imbalance,Memory copies,Prefill/decode and steps,Idle gaps"
	if got := strings.Join(areas, ","); got != want {
		t.Fatalf("areas %s, want %s", got, want)
	}
	tests := []struct {
		area     string
		gap      bool
		evidence []string
		interp   string
	}{
		{"Synchronization waits", false, []string{"2.500 ms in 3 blocking calls", "rank 0", "25.0% of the 10.000 ms wall time", "opened 2 GPU gaps, 1.000 ms of GPU idle time"}, "Host syncs stall the GPU (critical, confirmed)"},
		{"GPU kernel hotspots", false, []string{"Top kernel gemm: 3.000 ms, 75.0% of the 4.000 ms summed kernel time (rank 0)", "COMP 75.0%, COMM 25.0%"}, "No rule flags this area"},
		{"Rank imbalance", true, []string{"Gap: rank imbalance cannot be shown."}, "only one rank was loaded"},
		{"Prefill/decode and steps", true, []string{"Gap: per-step evidence"}, "no step annotations"},
		{"CPU operator hotspots", true, []string{"Gap: the ops area"}, "not collected"},
		{"Idle gaps", false, []string{"GPU idle 4.000 ms, 40.0% of the 10.000 ms GPU span (rank 0)"}, "No rule flags this area"},
	}
	for _, tc := range tests {
		r := byArea[tc.area]
		if r.Gap != tc.gap {
			t.Errorf("%s: gap %v, want %v (%q)", tc.area, r.Gap, tc.gap, r.Evidence)
		}
		for _, w := range tc.evidence {
			if !strings.Contains(r.Evidence, w) {
				t.Errorf("%s: evidence %q lacks %q", tc.area, r.Evidence, w)
			}
		}
		if !strings.Contains(r.Interpretation, tc.interp) {
			t.Errorf("%s: interpretation %q lacks %q", tc.area, r.Interpretation, tc.interp)
		}
		if r.Gap && (strings.Contains(r.Evidence, "0.000") || strings.Contains(r.Evidence, " 0 ")) {
			t.Errorf("%s: a gap shows a zero: %q", tc.area, r.Evidence)
		}
	}
}

// TestEvidenceSectionEscapes: a name with markup in the summary is text in
// HTML and in Markdown; the preset tables are folded in HTML and follow a
// sub-heading in Markdown.
func TestEvidenceSectionEscapes(t *testing.T) {
	ev := areaEvidence()
	d := &Doc{Evidence: evidenceRows(ev, nil, ""), Tables: []table.Table{*ev.Tables["sync"]}, OneTrace: true}
	var h, md strings.Builder
	if err := printHTML(&h, d); err != nil {
		t.Fatal(err)
	}
	if err := printMarkdown(&md, d); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(h.String(), "<script>") || !strings.Contains(h.String(), "from &lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("HTML summary does not escape the operator name:\n%s", h.String())
	}
	if !strings.Contains(md.String(), `from \<script\>alert(1)\</script\>`) {
		t.Errorf("Markdown summary does not escape the operator name:\n%s", md.String())
	}
	for _, w := range []string{`<th scope="col">Area</th><th scope="col">Evidence</th><th scope="col">Interpretation</th>`,
		`<details class="tb-presets" data-tb-node="evidence-tables"><summary>The preset tables (1)</summary>`,
		`data-tb-col="blocked_ns">blocked (ms)</button>`, `<td class="tb-num">2.500</td>`} {
		if !strings.Contains(h.String(), w) {
			t.Errorf("HTML lacks %s", w)
		}
	}
	if strings.Contains(h.String(), `data-tb-col="trace"`) {
		t.Error("HTML shows the trace column with one trace in scope")
	}
	i, j := strings.Index(md.String(), "| Area | Evidence | Interpretation |"), strings.Index(md.String(), "### Preset tables")
	if i < 0 || j < i {
		t.Errorf("Markdown: summary at %d, preset tables heading at %d", i, j)
	}
	// Unfolded when the view says so.
	d.Controls.Open = []string{evidenceTablesID}
	h.Reset()
	if err := printHTML(&h, d); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.String(), `data-tb-node="evidence-tables" open>`) {
		t.Error("preset tables stay folded with evidence-tables in Open")
	}
}

// TestReportTraceColumn: the report's tables show the trace column only
// when more than one trace is in scope.
func TestReportTraceColumn(t *testing.T) {
	for _, tc := range []struct {
		name     string
		oneTrace bool
		want     bool
	}{{"one trace", true, false}, {"two traces", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			d := &Doc{Tables: []table.Table{*areaEvidence().Tables["sync"]}, OneTrace: tc.oneTrace}
			var h, md strings.Builder
			if err := printHTML(&h, d); err != nil {
				t.Fatal(err)
			}
			if err := printMarkdown(&md, d); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(h.String(), `data-tb-col="trace"`); got != tc.want {
				t.Errorf("HTML trace column: %v, want %v", got, tc.want)
			}
			if got := strings.Contains(md.String(), "| trace | rank |"); got != tc.want {
				t.Errorf("Markdown trace column: %v, want %v\n%s", got, tc.want, md.String())
			}
		})
	}
}

// A copy row of 0 bytes is a trace without byte counts: the Memory copies
// row says so instead of "moved 0 bytes".
func TestMemcpyBytesUnknown(t *testing.T) {
	memcpy := func(rows ...[]any) *table.Table {
		return &table.Table{Name: "memcpy", Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"),
			col("count", "BIGINT", "COUNT"), col("bytes", "BIGINT", "BYTES"), col("total_ns", "BIGINT", "DURATION_NS")}, Rows: rows}
	}
	for _, c := range []struct {
		name      string
		t         *table.Table
		want, not string
	}{
		{"sized", memcpy([]any{"job", int64(0), int64(2), int64(4096), int64(1_000)}), "2 copies and memsets moved 4,096 bytes", "byte count"},
		{"none blocking", memcpy([]any{"job", int64(0), int64(2), int64(4096), int64(1_000)}), "none blocked the host", "0 blocked"},
		{"no byte count", memcpy([]any{"job", int64(0), int64(2), int64(0), int64(1_000)}), "2 copies and memsets (the trace gives no byte count) ran in", "moved"},
		{"some without", memcpy([]any{"job", int64(0), int64(2), int64(4096), int64(1_000)}, []any{"job", int64(0), int64(3), int64(0), int64(1_000)}),
			"5 copies and memsets moved at least 4,096 bytes (3 without a byte count)", "moved 4,096"},
		// Async copies to pageable memory block as synchronous ones do
		// (trace_diff_control_a100: 60 DtoH copies from Async calls).
		{"pageable", pagedMemcpy(), "5 blocked the host: 2 from synchronous calls, 4 to or from pageable host memory", "0 blocked"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev := areaEvidence()
			ev.Tables["memcpy"] = c.t
			var row EvidenceRow
			for _, r := range evidenceRows(ev, nil, "") {
				if r.Area == "Memory copies" {
					row = r
				}
			}
			if !strings.Contains(row.Evidence, c.want) || strings.Contains(row.Evidence, c.not) {
				t.Errorf("evidence %q: want %q, not %q", row.Evidence, c.want, c.not)
			}
		})
	}
}

// pagedMemcpy is a memcpy table of 2 synchronous copies, 3 Async ones
// into pageable memory, 1 synchronous one from it and 4 pinned Async ones.
func pagedMemcpy() *table.Table {
	return &table.Table{Name: "memcpy", Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"),
		col("count", "BIGINT", "COUNT"), col("bytes", "BIGINT", "BYTES"), col("total_ns", "BIGINT", "DURATION_NS"),
		col("sync", "BOOLEAN", "BOOL"), col("src", "VARCHAR", "TEXT"), col("dst", "VARCHAR", "TEXT")},
		Rows: [][]any{
			{"job", int64(0), int64(1), int64(64), int64(1_000), true, "Device", "Device"},
			{"job", int64(0), int64(3), int64(64), int64(1_000), false, "Device", "Pageable"},
			{"job", int64(0), int64(1), int64(64), int64(1_000), true, "Pageable", "Device"},
			{"job", int64(0), int64(4), int64(64), int64(1_000), false, "Pinned", "Device"},
		}}
}

// The steps row names the steps preset's phases as they are: whether a
// ProfilerStep# loop trains is decided there (sql/evidence_base.sql), not
// again from the workload here.
func TestStepsRowPhaseIsThePresets(t *testing.T) {
	for _, c := range []struct {
		name     string
		phase    string
		features []string
		want     string
	}{
		{"inference", "inference", []string{"cpu_ops"}, "2 inference, 5.000 ms in all (median"},
		{"training", "train", []string{"cpu_ops", "backward"}, "2 train, 5.000 ms in all (median"},
		{"no operators", "train", nil, "2 train, 5.000 ms in all (median"},
		{"the preset's word stands", "train", []string{"cpu_ops"}, "2 train, 5.000 ms in all (median"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev := areaEvidence()
			ev.Tables["steps"] = &table.Table{Name: "steps", Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"),
				col("phase", "VARCHAR", "TEXT"), col("wall_ns", "BIGINT", "DURATION_NS")},
				Rows: [][]any{{"job", int64(0), c.phase, int64(2_000_000)}, {"job", int64(0), c.phase, int64(3_000_000)}}}
			wl := &table.Table{Name: "workload", Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"),
				col("feature", "VARCHAR", "TEXT"), col("example", "VARCHAR", "TEXT"), col("count", "BIGINT", "COUNT"), col("total_ns", "BIGINT", "DURATION_NS")}}
			for _, f := range c.features {
				wl.Rows = append(wl.Rows, []any{"job", int64(0), f, "x", int64(1), int64(1)})
			}
			ev.Tables["workload"] = wl
			ev.Gaps = nil
			got := ""
			for _, r := range evidenceRows(ev, nil, "") {
				if r.Area == "Prefill/decode and steps" {
					got = r.Evidence
				}
			}
			if !strings.Contains(got, c.want) {
				t.Errorf("steps row %q, want %q", got, c.want)
			}
		})
	}
}

// A step's time is its host annotation: when its GPU work took longer
// (vllm_prefilldecode_piecewise: a 26 ms annotation, 156 ms of GPU work),
// the steps row says so.
func TestStepsRowGPUBehind(t *testing.T) {
	for _, c := range []struct {
		busy int64
		want bool
	}{{156_000_000, true}, {20_000_000, false}} {
		ev := areaEvidence()
		ev.Tables["steps"] = &table.Table{Name: "steps", Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"),
			col("phase", "VARCHAR", "TEXT"), col("wall_ns", "BIGINT", "DURATION_NS"), col("gpu_busy_ns", "BIGINT", "DURATION_NS")},
			Rows: [][]any{{"job", int64(0), "mixed", int64(26_000_000), c.busy}}}
		ev.Gaps = nil
		got := evidenceOf(ev, "Prefill/decode and steps")
		if strings.Contains(got, "1 step's GPU work took longer than the step (156.000 ms") != c.want {
			t.Errorf("GPU busy %d ns: steps row %q", c.busy, got)
		}
	}
}

// A step without GPU work (a profiler's stub step) is left out of the
// steps row's median, as the step chart leaves it (amd_mi250_minitoy: 8.9
// ms and a 0.05 ms stub made a 4.7 ms median).
func TestStepsRowEmptyStep(t *testing.T) {
	ev := areaEvidence()
	ev.Tables["steps"] = &table.Table{Name: "steps", Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"),
		col("phase", "VARCHAR", "TEXT"), col("wall_ns", "BIGINT", "DURATION_NS"), col("gpu_events", "BIGINT", "COUNT")},
		Rows: [][]any{{"job", int64(0), "train", int64(9_000_000), int64(16)}, {"job", int64(0), "train", int64(50_000), int64(0)}}}
	ev.Gaps = nil
	got := evidenceOf(ev, "Prefill/decode and steps")
	if !strings.Contains(got, "1 train, 9.000 ms in all (median wall 9.000 ms") || !strings.Contains(got, "1 step without GPU work left out of the medians") {
		t.Errorf("steps row %q", got)
	}
}

// A phase's share of the step time stands before its medians, never after
// the median GPU busy time, where it read as the GPU's share (b200_eager:
// "median GPU busy 11.596 ms, 100.0% of the 87.413 ms step time").
func TestStepsRowShareOfPhase(t *testing.T) {
	ev := areaEvidence()
	ev.Tables["steps"] = &table.Table{Name: "steps", Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"),
		col("phase", "VARCHAR", "TEXT"), col("wall_ns", "BIGINT", "DURATION_NS"), col("gpu_busy_ns", "BIGINT", "DURATION_NS"), col("gpu_events", "BIGINT", "COUNT")},
		Rows: [][]any{{"job", int64(0), "prefill", int64(80_000_000), int64(10_000_000), int64(100)},
			{"job", int64(0), "decode", int64(20_000_000), int64(4_000_000), int64(50)}}}
	ev.Gaps = nil
	got := evidenceOf(ev, "Prefill/decode and steps")
	for _, want := range []string{"1 decode, 20.0% of the 100.000 ms step time (median wall 20.000 ms, median GPU busy 4.000 ms)",
		"1 prefill, 80.0% of the 100.000 ms step time (median wall 80.000 ms, median GPU busy 10.000 ms)"} {
		if !strings.Contains(got, want) {
			t.Errorf("steps row %q, want %q", got, want)
		}
	}
}

// A "## scope ##" range's self time is its thread outside every operator
// (nccl_data_a100: the main thread inside backward(), 308 ms): the hotspot
// is the first operator, the range named ahead of it.
func TestOpsRowSkipsScopeRanges(t *testing.T) {
	ev := areaEvidence()
	ev.Tables["ops"] = &table.Table{Name: "ops", Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"),
		col("name", "VARCHAR", "TEXT"), col("self_ns", "BIGINT", "DURATION_NS")},
		Rows: [][]any{{"job", int64(0), "## backward ##", int64(308_000_000)}, {"job", int64(0), "aten::empty", int64(52_000_000)}}}
	got := evidenceOf(ev, "CPU operator hotspots")
	if !strings.HasPrefix(got, "Most self time: aten::empty") || !strings.Contains(got, "## backward ## 308.000 ms") {
		t.Errorf("ops row %q", got)
	}
	// A user annotation of any name is a range too (train_h800_ep64's
	// pipeline stages, "dispatch(F)"), as the ops area's annotation column
	// says.
	ev.Tables["ops"] = &table.Table{Name: "ops", Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"),
		col("name", "VARCHAR", "TEXT"), col("annotation", "BOOLEAN", "BOOL"), col("self_ns", "BIGINT", "DURATION_NS")},
		Rows: [][]any{{"job", int64(0), "dispatch(F)", true, int64(67_000_000)}, {"job", int64(0), "aten::empty", false, int64(4_000_000)}}}
	got = evidenceOf(ev, "CPU operator hotspots")
	if !strings.HasPrefix(got, "Most self time: aten::empty") || !strings.Contains(got, "dispatch(F) 67.000 ms") {
		t.Errorf("ops row with an annotation %q", got)
	}
}

// Copy calls count among HTA's launches, but a pageable copy's time is a
// wait (resnet_2080ti: 123 copies, 2010 ms, beside 946 ms of kernel
// launches): the launches row gives them apart.
func TestLaunchRowCopiesApart(t *testing.T) {
	ev := areaEvidence()
	ev.Tables["launch"] = &table.Table{Name: "launch", Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"),
		col("call", "VARCHAR", "TEXT"), col("launches", "BIGINT", "COUNT"), col("cpu_ns", "BIGINT", "DURATION_NS"),
		col("short", "BIGINT", "COUNT"), col("delay_outliers", "BIGINT", "COUNT"), col("with_gpu", "BIGINT", "COUNT")},
		Rows: [][]any{{"job", int64(0), "cudaLaunchKernel", int64(9628), int64(946_000_000), int64(10), int64(2), int64(9628)},
			{"job", int64(0), "cudaMemcpyAsync", int64(123), int64(2_010_000_000), int64(0), int64(0), int64(120)}}}
	got := evidenceOf(ev, "Kernel launches")
	// Short launches out of the calls whose GPU work is in the trace, as
	// the launch-bound finding counts them (nccl_data_a100: 3,774, where
	// "all" said 3,777).
	if !strings.HasPrefix(got, "9,628 kernel launches took 946.000 ms of host time (mean 0.098 ms") ||
		!strings.Contains(got, "123 copy and memset calls took 2,010.000 ms more") ||
		!strings.Contains(got, "10 of the 9,748 calls whose GPU work is in the trace launched GPU work shorter") {
		t.Errorf("launch row %q", got)
	}
}

// The idle the capture area leaves out is not the host's, whatever HTA's
// per-stream split calls it (sglang_qwen3_decode: 463 ms held, 99.9%
// host_wait): the idle row says how much of it there is.
func TestIdleRowNamesExcludedIdle(t *testing.T) {
	ev := areaEvidence()
	ev.Tables["capture"] = &table.Table{Name: "capture", Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"),
		col("kind", "VARCHAR", "TEXT"), col("idle_ns", "BIGINT", "DURATION_NS")},
		Rows: [][]any{{"job", int64(0), "excluded", int64(20_000_000)}, {"job", int64(0), "held", int64(20_000_000)}}}
	got := evidenceOf(ev, "Idle gaps")
	if !strings.Contains(got, "20.000 ms of the idle lies in what Capture quality leaves out") {
		t.Errorf("idle row %q", got)
	}
}

// HTA's per-stream split is given for the stream with the most gaps: a
// stream of a few kernels a step idles through the others' work
// (vllm_h100: stream 171, 10 all-gathers, 172.7 ms of "host_wait" beside
// the main stream's 28.7 ms), so its idle is given apart, as not GPU idle.
func TestIdleRowSplitsTheMainStream(t *testing.T) {
	ev := areaEvidence()
	gaps := func(rows ...[]any) *table.Table {
		return &table.Table{Name: "gaps", Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"),
			col("stream", "BIGINT", "INT"), col("category", "VARCHAR", "TEXT"), col("count", "BIGINT", "COUNT"), col("idle_ns", "BIGINT", "DURATION_NS")}, Rows: rows}
	}
	ev.Tables["gaps"] = gaps([]any{"job", int64(0), int64(7), "host_wait", int64(100), int64(15_000_000)},
		[]any{"job", int64(0), int64(7), "kernel_wait", int64(13_000), int64(13_000_000)},
		[]any{"job", int64(0), int64(171), "host_wait", int64(9), int64(172_000_000)})
	got := evidenceOf(ev, "Idle gaps")
	if !strings.Contains(got, "Per-stream idle (HTA's split, each stream apart; its kernel_wait is a gap under 30 µs, the default its code applies to its µs timestamps) on stream 7, the one with the most gaps (13,100): 28.000 ms, host_wait 53.6%, kernel_wait 46.4%.") ||
		!strings.Contains(got, "The other stream idles 172.000 ms more in 9 gaps") || strings.Contains(got, "summed over streams") {
		t.Errorf("idle row %q", got)
	}
	ev.Tables["gaps"] = gaps([]any{"job", int64(0), int64(7), "host_wait", int64(100), int64(15_000_000)})
	got = evidenceOf(ev, "Idle gaps")
	if !strings.Contains(got, "on stream 7 (100 gaps): 15.000 ms, host_wait 100.0%.") || strings.Contains(got, "other stream") {
		t.Errorf("idle row, one stream %q", got)
	}
}

// A synchronous copy's wait is its operator's self time: the hotspot row
// says how much of it the host spent blocked (sglang_qwen3_decode_mi300x:
// aten::copy_, 463 ms, one hipMemcpyWithStream the sync area names under
// aten::copy_; vLLM's names aten::to, the operator around it).
func TestOpsRowBlockedSelfTime(t *testing.T) {
	ev := areaEvidence()
	ev.Tables["ops"] = &table.Table{Name: "ops", Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"),
		col("name", "VARCHAR", "TEXT"), col("self_ns", "BIGINT", "DURATION_NS")},
		Rows: [][]any{{"job", int64(0), "aten::copy_", int64(88_000_000)}, {"job", int64(0), "aten::mm", int64(50_000_000)}}}
	sync := func(op string, edge bool) *table.Table {
		return &table.Table{Name: "sync", Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"),
			col("call", "VARCHAR", "TEXT"), col("op", "VARCHAR", "TEXT"), col("trigger", "VARCHAR", "TEXT"), col("blocking", "BOOLEAN", "BOOL"),
			col("edge", "BOOLEAN", "BOOL"), col("blocked_ns", "BIGINT", "DURATION_NS")},
			Rows: [][]any{{"job", int64(0), "hipMemcpyWithStream", op, "copy", true, edge, int64(86_500_000)}}}
	}
	for _, op := range []string{"aten::copy_", "aten::to"} {
		ev.Tables["sync"] = sync(op, false)
		if got := evidenceOf(ev, "CPU operator hotspots"); !strings.Contains(got, "Of aten::copy_'s self time, up to 86.500 ms is the host blocked in synchronous runtime calls inside it") {
			t.Errorf("sync under %s: ops row %q", op, got)
		}
	}
	ev.Tables["sync"] = sync("aten::to", true)
	if got := evidenceOf(ev, "CPU operator hotspots"); strings.Contains(got, "blocked") {
		t.Errorf("an edge sync counted: ops row %q", got)
	}
}

// MTIA writes its device transfers as dma_request kernels, with no copy
// event: the memory row says they are there instead of "no copy".
func TestMemcpyRowNamesTransferKernels(t *testing.T) {
	ev := areaEvidence()
	ev.Tables["memcpy"] = &table.Table{Name: "memcpy", Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"),
		col("count", "BIGINT", "COUNT")}}
	ev.Tables["kernels"] = &table.Table{Name: "kernels", Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"),
		col("name", "VARCHAR", "TEXT"), col("class", "VARCHAR", "TEXT"), col("count", "BIGINT", "COUNT"), col("total_ns", "BIGINT", "DURATION_NS")},
		Rows: [][]any{{"job", int64(0), "fc-dtype_Float", "COMP", int64(127), int64(5_752_000_000)},
			{"job", int64(0), "dma_request", "MEM", int64(22_179), int64(422_716_000)}}}
	got := evidenceOf(ev, "Memory copies")
	if !strings.Contains(got, "22,179 device transfers written as kernels (dma_request, 422.716 ms)") {
		t.Errorf("memory row %q", got)
	}
}

// A finding past the report's follow-ups is not "above": the row says
// the report does not list it (trace_diff_control_a100's sync finding).
func TestInterpretationPastTheIssues(t *testing.T) {
	var found []evidence.Finding
	for i, title := range []string{"A", "B", "C"} {
		found = append(found, evidence.Finding{Rule: "r" + title, Title: title, Severity: "minor", Status: "confirmed", Impact: float64(3 - i),
			Evidence: []evidence.Ref{{Preset: "gaps"}}})
	}
	cites := func(r evidence.Ref) bool { return r.Preset == "gaps" }
	got := interpretation(cites, found, shownOf(found))
	if !strings.HasPrefix(got, "A (minor, confirmed); B (minor, confirmed); see the issues above. C (minor, confirmed): past the issues the report lists") {
		t.Errorf("interpretation %q", got)
	}
}

// A first-use runtime call inside an operator is its self time: the row
// says how much of the self times the capture area leaves out
// (amd_mi250_minitoy: a 6.5 ms first hipLaunchKernel in aten::add_).
func TestOpsRowNamesFirstUse(t *testing.T) {
	ev := areaEvidence()
	ev.Tables["ops"] = &table.Table{Name: "ops", Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"),
		col("name", "VARCHAR", "TEXT"), col("self_ns", "BIGINT", "DURATION_NS")},
		Rows: [][]any{{"job", int64(0), "aten::add_", int64(6_614_000)}, {"job", int64(0), "aten::mm", int64(1_000_000)}}}
	ev.Tables["capture"] = &table.Table{Name: "capture", Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"),
		col("kind", "VARCHAR", "TEXT"), col("name", "VARCHAR", "TEXT"), col("count", "BIGINT", "COUNT"), col("total_ns", "BIGINT", "DURATION_NS")},
		Rows: [][]any{{"job", int64(0), "first_use", "hipLaunchKernel", int64(1), int64(6_543_000)}}}
	got := evidenceOf(ev, "CPU operator hotspots")
	if !strings.Contains(got, "These self times include 6.543 ms in 1 first-use runtime call (e.g. hipLaunchKernel)") {
		t.Errorf("ops row %q", got)
	}
}

// evidenceOf is the Evidence text of the row of one area.
func evidenceOf(ev *evidence.Evidence, area string) string {
	for _, r := range evidenceRows(ev, nil, "") {
		if r.Area == area {
			return r.Evidence
		}
	}
	return ""
}

// A CUPTI counter capture replays each kernel inside its launch: the rows
// of host times say their times are the replay's (cupti_profiler:
// cudaLaunchKernel 22-146 ms each), the others do not.
func TestCounterCaptureHostRows(t *testing.T) {
	ev := areaEvidence()
	ev.Tables["ops"] = &table.Table{Name: "ops", Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"),
		col("name", "VARCHAR", "TEXT"), col("self_ns", "BIGINT", "DURATION_NS")},
		Rows: [][]any{{"job", int64(0), "aten::cudnn_convolution", int64(4_917_000_000)}}}
	ev.Tables["capture"] = &table.Table{Name: "capture", Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"),
		col("kind", "VARCHAR", "TEXT"), col("count", "BIGINT", "COUNT")}, Rows: [][]any{{"job", int64(0), "counter_range", int64(77)}}}
	for _, r := range evidenceRows(ev, nil, "") {
		limited := strings.Contains(r.Interpretation, "these host times are the replay's")
		host := r.Area == "CPU operator hotspots" || r.Area == "Kernel launches" || r.Area == "Synchronization waits" || r.Area == "Memory copies"
		if limited != (host && !r.Gap) {
			t.Errorf("%s: replay caveat %v: %q", r.Area, limited, r.Interpretation)
		}
	}
}

// A device the trace does not name, or names generically, is worded from
// its capability and memory; a named part stays its name, and without a
// capability nothing is guessed.
func TestDeviceText(t *testing.T) {
	for _, c := range []struct {
		name         string
		major, minor any
		mem          int64
		sms          int
		platform     string
		want         string
	}{
		{"", int64(9), int64(4), 206141652992, 304, "rocm", "AMD Instinct MI300X (gfx942, identified from GFXIP 9.4, 304 CUs, 192 GiB; the trace names no device)"}, // vllm_decode_full_mi300x
		{"", int64(9), int64(4), 206141652992, 0, "rocm", "CDNA3 (gfx942, from GFXIP 9.4) (192 GiB; the trace names no device)"},
		{"", int64(9), int64(0), 32 << 30, 120, "rocm", "AMD Instinct MI100 (gfx908, identified from GFXIP 9.0, 120 CUs, 32 GiB; the trace names no device)"}, // a family outside the capability table
		{"", int64(9), int64(0), 16 << 30, 60, "rocm", "AMD GPU (gfx906; GFXIP 9.0, 60 CUs, 16 GiB fit MI50 16GB or Radeon Pro VII or Radeon VII: the model is not known; the trace names no device)"},
		{"", int64(9), int64(4), 206141652992, 152, "rocm", "CDNA3 (gfx942, from GFXIP 9.4) (192 GiB; the trace names no device)"}, // a partitioned MI300X: no part fits
		{"", int64(9), int64(4), 0, 0, "rocm", "CDNA3 (gfx942, from GFXIP 9.4) (the trace names no device)"},
		{"AMD Radeon Graphics", int64(9), int64(0), 68702699520, 104, "rocm", "AMD Radeon Graphics (gfx90a; GFXIP 9.0, 104 CUs, 64 GiB fit MI250 or MI210: the model is not known)"}, // amd_mi250_minitoy
		{"AMD Radeon Graphics", int64(9), int64(0), 68702699520, 0, "rocm", "AMD Radeon Graphics (CDNA2 (gfx90a, from GFXIP 9.0); 64 GiB)"},
		{"AMD Instinct MI300X", int64(9), int64(4), 206141652992, 304, "rocm", "AMD Instinct MI300X"},
		{"NVIDIA H100 80GB HBM3", int64(9), int64(0), 0, 132, "cuda", "NVIDIA H100 80GB HBM3"},
		{"", nil, nil, 206141652992, 0, "rocm", ""},
		{"", int64(-1), int64(-1), 0, 0, "cuda", ""},
		{"", nil, nil, 0, 0, "mtia", "MTIA, Meta's accelerator (the trace names no model; Kineto records its work as GPU events, and this report calls it the GPU)"}, // mtia_single_rank
	} {
		if got := deviceText(c.name, c.major, c.minor, c.mem, c.sms, c.platform); got != c.want {
			t.Errorf("deviceText(%q, %v, %v, %d, %d, %s) = %q, want %q", c.name, c.major, c.minor, c.mem, c.sms, c.platform, got, c.want)
		}
	}
}

// A step wall far above its GPU busy time is said beside the median
// (sglang_qwen3_decode: a 466 ms decode step, 9.8 ms of GPU work, its host
// held in a copy): the wall is no measure of the step's GPU work.
func TestStepsRowMedianBusy(t *testing.T) {
	for _, c := range []struct {
		wall, busy int64
		want       bool
	}{{465_717_000, 9_773_000, true}, {20_000_000, 15_000_000, false}} {
		ev := areaEvidence()
		ev.Tables["steps"] = &table.Table{Name: "steps", Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"),
			col("phase", "VARCHAR", "TEXT"), col("wall_ns", "BIGINT", "DURATION_NS"), col("gpu_busy_ns", "BIGINT", "DURATION_NS"), col("gpu_events", "BIGINT", "COUNT")},
			Rows: [][]any{{"job", int64(0), "decode", c.wall, c.busy, int64(558)}}}
		ev.Gaps = nil
		got := evidenceOf(ev, "Prefill/decode and steps")
		if strings.Contains(got, "median GPU busy "+fmtMs(c.busy)) != c.want {
			t.Errorf("wall %d, busy %d ns: steps row %q", c.wall, c.busy, got)
		}
	}
}

// The rank comparison says when the trace holds only some of the job's
// ranks, and when its events are a sample (sampled_2of128: 2 of 128
// ranks, about one event in 73 kept).
func TestRankEvidenceCaveats(t *testing.T) {
	for _, c := range []struct {
		name      string
		world     int64
		void      string
		want, not []string
	}{
		{"whole job", 2, "", nil, []string{"of the job's", "Read with care"}},
		{"some ranks", 128, "", []string{"These are 2 of the job's 128 ranks"}, []string{"Read with care"}},
		{"sampled", 0, "the trace holds about one in 73 of the rank's events", []string{"Read with care: the trace holds about one in 73 of the rank's events, so these times are those of the events kept"}, []string{"of the job's"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev := areaEvidence()
			ev.Gaps = nil
			ranks := ev.Tables["ranks"]
			ranks.Rows = append(ranks.Rows, []any{"job", int64(1), int64(7_000_000), int64(3_000_000), int64(6_000_000)})
			ev.Traces = &table.Table{Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"), col("world_size", "BIGINT", "INT")},
				Rows: [][]any{{"job", int64(0), c.world}, {"job", int64(1), c.world}}}
			var row EvidenceRow
			for _, r := range evidenceRows(ev, nil, c.void) {
				if r.Area == "Rank imbalance" {
					row = r
				}
			}
			testutil.Contains(t, c.name, row.Evidence, append([]string{"Across 2 ranks"}, c.want...)...)
			for _, n := range c.not {
				if strings.Contains(row.Evidence, n) {
					t.Errorf("says %q: %s", n, row.Evidence)
				}
			}
		})
	}
}

// Trace Metadata's capture line gives the records Kineto left out as
// outside the capture window, summed over the trace's files
// (ns_resolution_v100: 3,829); none when the log gives none.
func TestTraceMetaOutOfRange(t *testing.T) {
	b := evidence.NewBundle()
	b.Traces = &table.Table{Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"), col("path", "VARCHAR", "TEXT"),
		col("kineto_out_of_range", "BIGINT", "COUNT")},
		Rows: [][]any{{"a", int64(0), "a0.json", int64(3000)}, {"a", int64(1), "a1.json", int64(829)}, {"b", int64(0), "b.json", nil}}}
	metas := traceMetas(b, evidence.Filter{})
	if len(metas) != 2 {
		t.Fatalf("%d traces", len(metas))
	}
	want := "Kineto left out 3,829 activity records that began before the capture window or ended after it"
	if got := strings.Join(metas[0].Capture, "; "); !strings.Contains(got, want) {
		t.Errorf("trace a: %q, want %q", got, want)
	}
	if got := strings.Join(metas[1].Capture, "; "); strings.Contains(got, "Kineto left out") {
		t.Errorf("trace b: %q", got)
	}
}

// TestRankEvidenceOneProcess: one process with no distributed info and no
// single-rank gap (it communicates with no one: h100_owlv2) has no other
// rank to compare, which the row says instead of a gap.
func TestRankEvidenceOneProcess(t *testing.T) {
	ev := areaEvidence()
	ev.Gaps = nil
	ev.Traces = &table.Table{Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT")}, Rows: [][]any{{"job", int64(0)}}}
	r := evidenceRows(ev, nil, "")
	for _, row := range r {
		if row.Area == "Rank imbalance" {
			if row.Gap || !strings.Contains(row.Evidence, "One process, whose trace states no world size (no distributedInfo, or one without it) and which ran no collective or communication kernel") {
				t.Errorf("one process: %+v", row)
			}
			return
		}
	}
	t.Error("no Rank imbalance row")
}

// Trace Metadata's span is the overview area's, Kineto's Record Window End
// marker left out (vllm_graph_capture_full_mi300x: 59 ms of work, the
// marker at 119 ms), over the ranks the filter keeps; without an overview
// row it is the traces table's.
func TestTraceMetaSpanIsOverviews(t *testing.T) {
	b := evidence.NewBundle()
	b.Traces = &table.Table{Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"), col("path", "VARCHAR", "TEXT"),
		col("first_ts_ns", "BIGINT", "TIMESTAMP_NS"), col("last_end_ns", "BIGINT", "TIMESTAMP_NS")},
		Rows: [][]any{{"a", int64(0), "a0.json", int64(0), int64(119_000_000)}, {"a", int64(1), "a1.json", int64(0), int64(119_000_000)}, {"b", int64(0), "b.json", int64(0), int64(50_000_000)}}}
	b.Tables["overview"] = &table.Table{Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"),
		col("first_ns", "BIGINT", "TIMESTAMP_NS"), col("span_ns", "BIGINT", "DURATION_NS")},
		Rows: [][]any{{"a", int64(0), int64(1_000_000), int64(59_000_000)}, {"a", int64(1), int64(2_000_000), int64(70_000_000)}}}
	for _, c := range []struct {
		f    evidence.Filter
		want map[string]int64
	}{
		{evidence.Filter{}, map[string]int64{"a": 71_000_000, "b": 50_000_000}},
		{evidence.Filter{Rank: 0, HasRank: true}, map[string]int64{"a": 59_000_000, "b": 50_000_000}},
	} {
		for _, m := range traceMetas(b, c.f) {
			if m.SpanNs != c.want[m.Name] {
				t.Errorf("filter %+v, trace %s: span %d, want %d", c.f, m.Name, m.SpanNs, c.want[m.Name])
			}
		}
	}
}

// One call that holds half the launches' host time or more (resnet_2080ti:
// a 726 ms first launch in 946 ms over 9,628 calls) is named, and the mean
// is the other calls'; a call under that share leaves the plain mean.
func TestLaunchRowLongestCallApart(t *testing.T) {
	for _, c := range []struct {
		longest int64
		want    string
	}{
		{726_000_000, "9,628 kernel launches took 946.000 ms of host time (rank 0), 726.000 ms of it in the longest call alone: the others' mean is 0.023 ms"},
		{400_000_000, "9,628 kernel launches took 946.000 ms of host time (mean 0.098 ms, rank 0)"},
	} {
		ev := areaEvidence()
		ev.Tables["launch"] = &table.Table{Name: "launch", Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"),
			col("call", "VARCHAR", "TEXT"), col("launches", "BIGINT", "COUNT"), col("cpu_ns", "BIGINT", "DURATION_NS"), col("max_cpu_ns", "BIGINT", "DURATION_NS"),
			col("short", "BIGINT", "COUNT"), col("delay_outliers", "BIGINT", "COUNT"), col("with_gpu", "BIGINT", "COUNT")},
			Rows: [][]any{{"job", int64(0), "cudaLaunchKernel", int64(9628), int64(946_000_000), c.longest, int64(10), int64(2), int64(9628)}}}
		if got := evidenceOf(ev, "Kernel launches"); !strings.HasPrefix(got, c.want) {
			t.Errorf("longest %d: launch row %q, want %q", c.longest, got, c.want)
		}
	}
}

// A critical finding that the report lists among the follow-ups (its fix
// word for word an issue's above: b200_eager's eager launches) is named
// as listed there, not as critical.
func TestInterpretationDemotedCritical(t *testing.T) {
	found := []evidence.Finding{
		{Rule: "host_bound_idle", Title: "A", Severity: "critical", Status: "hypothesis", Impact: 0.85, Fix: "Drop --enforce-eager.", Evidence: []evidence.Ref{{Preset: "gaps"}}},
		{Rule: "launch_bound", Title: "B", Severity: "critical", Status: "hypothesis", Impact: 0.80, Fix: "Drop --enforce-eager.", Evidence: []evidence.Ref{{Preset: "gaps"}}},
	}
	cites := func(r evidence.Ref) bool { return r.Preset == "gaps" }
	if got := interpretation(cites, found, shownOf(found)); !strings.HasPrefix(got, "A (critical, hypothesis); B (listed to consider, hypothesis); see the issues above.") {
		t.Errorf("interpretation %q", got)
	}
}

// The sync row's longest call is summed over the slice's ranks, as its
// totals are, and names the rank holding the most of it (dlrm_8rank:
// aten::to's cudaStreamSynchronize, 20.3 ms over 8 ranks, 6.6 ms rank 1's).
func TestSyncRowLongestSumsRanks(t *testing.T) {
	ev := areaEvidence()
	ev.Tables["sync"].Rows = [][]any{
		{"job", int64(0), "cudaStreamSynchronize", "aten::to", true, int64(10), int64(1_000_000), int64(0), int64(0)},
		{"job", int64(1), "cudaStreamSynchronize", "aten::to", true, int64(10), int64(6_622_000), int64(0), int64(0)},
		{"job", int64(1), "cudaDeviceSynchronize", "", true, int64(1), int64(7_000_000), int64(0), int64(0)},
	}
	if got := evidenceOf(ev, "Synchronization waits"); !strings.Contains(got, "Longest: cudaStreamSynchronize from aten::to, 7.622 ms in 20 calls on 2 ranks (rank 1 the most, 6.622 ms).") {
		t.Errorf("sync row %q", got)
	}
}
