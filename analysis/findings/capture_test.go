package findings_test

import (
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/findings"
	"github.com/tracebook/tracebook/analysis/table"
)

// captureTable builds capture rows: kind, name, count, total, max, idle, span.
func captureTable(rows ...[]any) *table.Table {
	t := &table.Table{Columns: cols("trace rank kind name count total_ns max_ns idle_ns span_ns first_ns last_ns")}
	for _, r := range rows {
		t.Rows = append(t.Rows, append([]any{"t", int64(0)}, append(r, int64(0), int64(1))...))
	}
	return t
}

func capRow(kind, name string, count, total, max, idle, span int64) []any {
	return []any{kind, name, count, total, max, idle, span}
}

// artifactDetail is the detail of the gate's artifact of kind ("" for none).
func artifactDetail(g *findings.Gate, kind string) string {
	for _, a := range g.Artifacts {
		if a.Kind == kind {
			return a.Detail
		}
	}
	return ""
}

// withEvents sets the GPU event count of the bundle's one ranks row.
func withEvents(b *evidence.Bundle, n int64) *evidence.Bundle {
	t := b.Tables["ranks"]
	t.Columns = append(t.Columns, table.Column{Name: "events"})
	t.Rows[0] = append(t.Rows[0], n)
	return b
}

func TestGate(t *testing.T) {
	hostWait := map[string]*table.Table{"gaps": gapsTable(55_000_000)}
	cases := []struct {
		name    string
		capture *table.Table
		events  int64
		want    string // rules(fs)
		caveat  string // in the first finding's Caveat
		gone    bool   // no finding at all
	}{
		{name: "clean", events: 1000, want: "host_bound_idle:critical:confirmed"},
		{name: "counter replay drops every timing finding", events: 1000,
			capture: captureTable(capRow("counter_range", "k", 77, 77e6, 1e6, 0, 0)), gone: true},
		{name: "too few GPU events", events: 12, want: "host_bound_idle:minor:hypothesis", caveat: "too little to judge steady state"},
		{name: "start-up idle leaves the judged slice", events: 1000,
			capture: captureTable(capRow("first_use", "cudaFree", 1, 50e6, 50e6, 50e6, 50e6), capRow("excluded", "", 1, 50e6, 50e6, 50e6, 50e6)),
			// 10 ms idle of a 50 ms steady span: host wait 10/50 = 20%, minor.
			want: "host_bound_idle:minor:hypothesis", caveat: "start-up or held intervals"},
		{name: "graph capture over the whole span", events: 1000,
			capture: captureTable(capRow("graph_capture", "capture_32_FULL", 4, 99e6, 98e6, 59e6, 99e6)),
			want:    "host_bound_idle:minor:hypothesis", caveat: "a CUDA graph capture (start-up), not the loop: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tabs := map[string]*table.Table{}
			for k, v := range hostWait {
				tabs[k] = v
			}
			if tc.capture != nil {
				tabs["capture"] = tc.capture
			}
			b := withEvents(bundle("profiler_step", "cuda", "NVIDIA H100 80GB HBM3", 40_000_000, 60_000_000, tabs), tc.events)
			fs := eval(b, nil)
			if tc.gone {
				if len(fs) != 0 {
					t.Fatalf("findings despite the gate: %s", rules(fs))
				}
				return
			}
			if rules(fs) != tc.want {
				t.Fatalf("got %s, want %s (%+v)", rules(fs), tc.want, fs)
			}
			if !strings.Contains(fs[0].Caveat, tc.caveat) || (tc.caveat == "") != (fs[0].Caveat == "") {
				t.Errorf("caveat %q, want one with %q", fs[0].Caveat, tc.caveat)
			}
		})
	}
}

// A rank whose operators' External ids range over many times their count
// holds a sample of its events: no timing finding stands, and the
// cross-check gets no reading (sampled_2of128: 2,302 operators over
// 169,484 ids). A complete trace's ids range over about its operators.
func TestGateSampledTrace(t *testing.T) {
	for _, c := range []struct {
		ops, span int64
		sampled   bool
	}{
		{2302, 169_484, true},
		{40506, 40890, false}, // trace_diff_control_a100
		{70, 545, false},      // amd_mi250_minitoy: too few operators to tell
	} {
		ov := &table.Table{Columns: cols("trace rank op_ids op_id_span"), Rows: [][]any{{"t", int64(0), c.ops, c.span}}}
		b := withEvents(bundle("profiler_step", "cuda", "NVIDIA H100 80GB HBM3", 40_000_000, 60_000_000,
			map[string]*table.Table{"gaps": gapsTable(55_000_000), "overview": ov}), 1000)
		fs := eval(b, nil)
		g := findings.Assess(evidence.Rollup(b, evidence.Filter{}))
		got := len(g.Artifacts) == 1 && g.Artifacts[0].Kind == "sampled"
		if got != c.sampled || (len(fs) == 0) != c.sampled {
			t.Errorf("%d operators over %d ids: sampled %v, findings %s; want sampled %v", c.ops, c.span, got, rules(fs), c.sampled)
		}
		if c.sampled && !strings.Contains(g.Artifacts[0].Detail, "about one in 73") {
			t.Errorf("detail %q", g.Artifacts[0].Detail)
		}
		// What to capture instead is the sample's own: no counter
		// collection to turn off (the next lever had said so).
		why, recapture := g.Void()
		if c.sampled && (!strings.Contains(why, "sampled or filtered") || !strings.Contains(recapture, "before a tool sampled") || strings.Contains(recapture, "counter")) {
			t.Errorf("Void() = %q, %q", why, recapture)
		}
		if !c.sampled && (why != "" || recapture != "") {
			t.Errorf("Void() = %q, %q for a complete trace", why, recapture)
		}
	}
}

func TestGatePythonStacksCapHostBound(t *testing.T) {
	b := withEvents(bundle("profiler_step", "cuda", "NVIDIA H100 80GB HBM3", 40_000_000, 60_000_000, map[string]*table.Table{"gaps": gapsTable(55_000_000)}), 1000)
	b.Traces.Rows[0][b.Traces.Col("has_python_stacks")] = true
	fs := eval(b, nil)
	if rules(fs) != "host_bound_idle:critical:hypothesis" || !strings.Contains(fs[0].Caveat, "Python tracer") {
		t.Fatalf("got %s %q", rules(fs), fs[0].Caveat)
	}
}

// The sync rows mark the syncs at the window's edge (sql/sync.sql's edge,
// the capture area's edge_sync by one definition): the sync rule leaves
// them out, explicit or issued by an operator.
func TestGateEdgeSyncIsNotTheLoops(t *testing.T) {
	sync := &table.Table{Columns: cols("trace rank step phase call op trigger direction pageable blocking edge count blocked_ns max_blocked_ns gaps gpu_gap_ns max_gap_ns bytes"),
		Rows: [][]any{{"t", int64(0), int64(-1), "", "cudaDeviceSynchronize", "", "explicit", "", false, true, false, int64(1), int64(30_000_000), int64(30_000_000), int64(0), int64(0), int64(0), int64(0)}}}
	tabs := map[string]*table.Table{"sync": sync}
	b := withEvents(bundle("profiler_step", "cuda", "NVIDIA H100 80GB HBM3", 95_000_000, 5_000_000, tabs), 1000)
	if fs := eval(b, nil); rules(fs) != "sync_bound_loop:minor:hypothesis" {
		t.Fatalf("without the edge mark: %s", rules(fs))
	}
	sync.Rows[0][sync.Col("edge")] = true
	tabs["capture"] = captureTable(capRow("edge_sync", "cudaDeviceSynchronize", 1, 30e6, 30e6, 0, 0))
	b = withEvents(bundle("profiler_step", "cuda", "NVIDIA H100 80GB HBM3", 95_000_000, 5_000_000, tabs), 1000)
	if fs := eval(b, nil); len(fs) != 0 {
		t.Errorf("the profiler's stop sync was reported: %s %+v", rules(fs), fs)
	}
	g := findings.Assess(evidence.Rollup(b, evidence.Filter{}))
	if len(g.Artifacts) != 1 || g.Artifacts[0].Kind != "edge_sync" {
		t.Errorf("artifacts: %+v", g.Artifacts)
	}
}

// The profiler-overhead artifact names the operator that paid for the
// event, with the operator's time (b200_eager: a 0.05 ms Lazy Function
// Loading inside a 2.5 ms aten::addmm).
func TestProfilerOverheadNamesTheOperator(t *testing.T) {
	capture := captureTable(capRow("profiler_overhead", "Lazy Function Loading in aten::addmm", 9, 10_800_000, 2_500_000, 9_000_000, 9_000_000))
	b := withEvents(bundle("profiler_step", "cuda", "NVIDIA B200", 40_000_000, 60_000_000, map[string]*table.Table{"capture": capture}), 1000)
	detail := artifactDetail(findings.Assess(evidence.Rollup(b, evidence.Filter{})), "profiler_overhead")
	if !strings.Contains(detail, "the longest operator, aten::addmm around a Lazy Function Loading event, took 2.5 ms") {
		t.Errorf("profiler overhead artifact: %q", detail)
	}
}

// A host call that waited for work the trace does not show, begun at the
// trace's start, waited for work launched before the capture
// (sglang_qwen3_prefilldecode_mi300x: a 493 ms hipMemcpyWithStream begun
// 0.17 ms in, before a prefill step busy 493 ms); begun later, it is not
// read that way, nor as the rest of one clipped step when it lasts more
// than twice the busiest step's GPU time. With SGLang's overlap scheduler
// on, it most likely waited for the previous batch, which the scheduler
// keeps in flight, so no capture start avoids it; one longer than the
// steps' GPU work was a larger batch (sglang_qwen3_decode_mi300x: 463 ms
// before a decode step busy 9.8 ms, after a 32k-token prefill).
func TestHeldWaitAtCaptureStart(t *testing.T) {
	for _, c := range []struct {
		first, stepBusy int64
		overlap         bool // SGLang with its overlap scheduler's frames
		want, longer    bool
	}{{170_000, 0, false, true, false}, {170_000, 493_000_000, false, true, false}, {170_000, 9_800_000, false, false, true},
		{5_000_000, 9_800_000, false, false, false}, {170_000, 493_000_000, true, true, false}, {170_000, 9_800_000, true, true, true}} {
		capture := captureTable(capRow("held_wait", "hipMemcpyWithStream", 1, 493_000_000, 493_000_000, 493_000_000, 493_000_000),
			capRow("held", "resolve_future_token_ids_kernel", 1, 50_000_000, 50_000_000, 50_000_000, 50_000_000))
		capture.Rows[0][capture.Col("first_ns")] = c.first
		capture.Rows[1][capture.Col("first_ns")] = c.first
		tabs := map[string]*table.Table{"capture": capture}
		if c.stepBusy > 0 {
			tabs["steps"] = &table.Table{Columns: cols("trace rank step phase source hypothesis name gpu_busy_ns"),
				Rows: [][]any{{"t", int64(0), int64(0), "decode", "sglang", false, "step[DECODE bs=32]", c.stepBusy}}}
		}
		producer := "profiler_step"
		if c.overlap {
			producer = "sglang"
			tabs["workload"] = workloadTable([][]any{{"t", int64(0), "sglang_overlap", "sglang/srt/managers/overlap_utils.py(121): alloc_future_indices", int64(1), int64(10_000), nil}})
		}
		b := withEvents(bundle(producer, "rocm", "AMD Instinct MI300X", 40_000_000, 60_000_000, tabs), 1000)
		detail := artifactDetail(findings.Assess(evidence.Rollup(b, evidence.Filter{})), "held_wait")
		if detail == "" {
			t.Fatalf("first at %d ns: no held_wait artifact", c.first)
		}
		got := strings.Contains(detail, "launched before the capture began")
		if got != c.want || (c.want && !strings.Contains(detail, "The first began 0.170 ms after the trace's first event")) {
			t.Errorf("first at %d ns, step busy %d ns: %q", c.first, c.stepBusy, detail)
		}
		if longer := strings.Contains(detail, "more than 2 times the GPU busy time of the rank's longest step (9.8 ms): longer than the rest of one step the capture clipped could run"); longer != (c.longer && !c.overlap) {
			t.Errorf("first at %d ns, step busy %d ns: longer than a step %v, want %v: %q", c.first, c.stepBusy, longer, c.longer && !c.overlap, detail)
		}
		// The overlap scheduler keeps a batch in flight: the wait is the
		// previous batch's, and no capture start avoids it; past the
		// steps' GPU work, a larger batch's.
		overlap := strings.Contains(detail, "waited for the previous batch's GPU work") && strings.Contains(detail, "starting the capture between steps does not avoid this")
		larger := strings.Contains(detail, "The longest waited 493 ms, 50 times the GPU busy time of the rank's longest step (9.8 ms): what it waited for ran before the window began")
		if overlap != c.overlap || larger != (c.overlap && c.longer) || (c.overlap && strings.Contains(detail, "the rest of a step it clipped")) ||
			(c.overlap && strings.Contains(detail, "Start the capture between steps")) {
			t.Errorf("first at %d ns, overlap scheduler %v: %q", c.first, c.overlap, detail)
		}
		// The held interval the same wait covers reads alike.
		held := artifactDetail(findings.Assess(evidence.Rollup(b, evidence.Filter{})), "held")
		if got := strings.Contains(held, "the device was most likely running the previous batch"); got != (c.overlap && c.first < 1_000_000) {
			t.Errorf("first at %d ns, overlap scheduler %v: held %q", c.first, c.overlap, held)
		}
	}
}

// The pageable-copy share is of the span the other rules judge: start-up
// idle left out of it raises the share (critical_path_alexnet: 57 ms
// blocked was 0.4% of the 12996 ms window, 23% of the 244 ms judged).
func TestPageableShareOfJudgedSpan(t *testing.T) {
	cases := []struct {
		name    string
		capture *table.Table
		impact  float64
		text    string // in the Observation
	}{
		{name: "whole span judged", impact: 0.06, text: "blocked the host for 6.0 ms (6.0% of the GPU span of 100 ms) for 5.0 ms of GPU copy time"},
		{name: "start-up idle left out",
			capture: captureTable(capRow("first_use", "cudaFree", 1, 50e6, 50e6, 50e6, 50e6), capRow("excluded", "", 1, 50e6, 50e6, 50e6, 50e6)),
			impact:  0.12, text: "blocked the host for 6.0 ms (12.0% of the GPU span the rules judge, 50.0 ms of 100 ms (start-up and held intervals left out)) for 5.0 ms"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tabs := map[string]*table.Table{"memcpy": memcpyTable("Pageable")}
			if tc.capture != nil {
				tabs["capture"] = tc.capture
			}
			b := withEvents(bundle("profiler_step", "cuda", "NVIDIA H100 80GB HBM3", 40_000_000, 60_000_000, tabs), 1000)
			var f *evidence.Finding
			for _, x := range eval(b, nil) {
				if x.Rule == "pageable_copies" {
					f = &x
				}
			}
			if f == nil {
				t.Fatal("no pageable_copies finding")
			}
			if d := f.Impact - tc.impact; d > 1e-9 || d < -1e-9 {
				t.Errorf("impact %v, want %v", f.Impact, tc.impact)
			}
			if !strings.HasPrefix(f.ImpactOf, "the GPU span the rules judge (") {
				t.Errorf("impact of %q", f.ImpactOf)
			}
			if !strings.Contains(f.Observation, tc.text) || !strings.HasPrefix(f.Observation, "1 HtoD copy moved") {
				t.Errorf("observation %q, want %q", f.Observation, tc.text)
			}
		})
	}
}

// A file whose Ev Idx numbers (PyTorch numbers every event from 0) leave
// many out is an excerpt of a longer trace: Capture quality says so, and
// a late first GPU work is put down to the events cut from its start
// (vllm_decode_full_mi300x: 101 held, its first 1,414,018 cut away;
// cpu_only: 15 held of 7,479; a complete trace lacks none).
func TestGateExcerpt(t *testing.T) {
	for _, c := range []struct {
		name                    string
		ops, ids                int64 // op_ids, op_id_span
		held, missing, before   int64
		want, notWant, lateWant string
	}{
		{name: "complete", ops: 22395, ids: 22395, held: 22395},
		{name: "a few dropped", ops: 50000, ids: 50000, held: 50000, missing: 90},
		{name: "holes", ops: 4, ids: 4, held: 15, missing: 7464,
			want: "holds 15 of the numbers up to its highest (trace t, rank 0, whole trace): 7,464 of them are missing between its events, and its first numbers are there", notWant: "cut from a longer trace", lateWant: "its launching call returned"},
		{name: "cut at its start", ops: 100, ids: 100, held: 101, missing: 1_414_018, before: 1_414_018,
			want: "the 1,414,018 before its first event are missing", lateWant: "first 1,414,018 events were cut away"},
		{name: "both", ops: 100, ids: 100, held: 643, missing: 6000, before: 5272,
			want: "6,000 are missing, 5,272 of them before its first event", lateWant: "first 5,272 events were cut away"},
		// A sampled trace says so on its own (sampled_2of128).
		{name: "sampled", ops: 2302, ids: 169_484, held: 2367, missing: 251_606, before: 43_201},
	} {
		t.Run(c.name, func(t *testing.T) {
			ov := &table.Table{Columns: cols("trace rank op_ids op_id_span indexed index_missing index_before"),
				Rows: [][]any{{"t", int64(0), c.ops, c.ids, c.held, c.missing, c.before}}}
			tabs := map[string]*table.Table{"gaps": gapsTable(55_000_000), "overview": ov,
				"capture": captureTable(capRow("late_start", "Memcpy DtoD (Device -> Device)", 1, 7_800_000, 7_800_000, 0, 0))}
			b := withEvents(bundle("vllm", "rocm", "AMD Instinct MI300X", 40_000_000, 60_000_000, tabs), 1000)
			g := findings.Assess(evidence.Rollup(b, evidence.Filter{}))
			got := artifactDetail(g, "excerpt")
			if (got != "") != (c.want != "") || !strings.Contains(got, c.want) || (c.notWant != "" && strings.Contains(got, c.notWant)) {
				t.Errorf("excerpt detail %q, want one with %q", got, c.want)
			}
			late := artifactDetail(g, "late_start")
			if c.name == "sampled" {
				return // the sampled trace's late start is not read
			}
			if strings.Contains(late, "were cut away") != strings.Contains(c.lateWant, "were cut away") || !strings.Contains(late, c.lateWant) {
				t.Errorf("late start %q, want one with %q", late, c.lateWant)
			}
		})
	}
}
