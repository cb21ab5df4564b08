package evidence_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/table"
)

// TestRanksNumSMs checks RankInfo.GPUNumSMs: read from gpu_num_sms (the
// first file of a rank that has it), 0 when NULL and when the table has no
// such column.
func TestRanksNumSMs(t *testing.T) {
	tests := []struct {
		what string
		tb   *table.Table
		want map[string]int
	}{
		{"with the column", &table.Table{Name: "traces", Columns: cols("trace", "rank", "gpu_model", "gpu_num_sms"), Rows: [][]any{
			{"a", int64(0), nil, int32(304)},
			{"a", int64(1), nil, nil}, // a second file of rank 1 has it
			{"a", int64(1), nil, int32(304)},
			{"a", int64(2), nil, nil},
			{"b", int64(0), "NVIDIA H100 80GB HBM3", int64(132)},
		}}, map[string]int{"a/0": 304, "a/1": 304, "a/2": 0, "b/0": 132}},
		{"an older table", &table.Table{Name: "traces", Columns: cols("trace", "rank", "gpu_model"), Rows: [][]any{{"c", int64(0), "NVIDIA H100"}}},
			map[string]int{"c/0": 0}},
	}
	for _, tc := range tests {
		got := map[string]int{}
		for _, ri := range evidence.Ranks(tc.tb) {
			got[fmt.Sprintf("%s/%d", ri.Trace, ri.Rank)] = ri.GPUNumSMs
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: GPUNumSMs = %v, want %v", tc.what, got, tc.want)
		}
	}
}

// TestRanksComputeCapability checks RankInfo.CCMajor/CCMinor: read from
// gpu_cc_major/gpu_cc_minor (the first file of a rank that has them), -1
// when NULL and when the table predates the columns.
func TestRanksComputeCapability(t *testing.T) {
	withCC := &table.Table{Name: "traces", Columns: cols("trace", "rank", "gpu_model", "gpu_cc_major", "gpu_cc_minor"), Rows: [][]any{
		{"a", int64(0), "Tesla V100-SXM2-32GB", int64(7), int64(0)},
		{"a", int64(1), nil, nil, nil}, // a second file of rank 1 has them
		{"a", int64(1), "Tesla V100-SXM2-32GB", int64(7), int64(0)},
		{"a", int64(2), nil, nil, nil},
		{"b", int64(0), "", int64(9), nil}, // half a capability is none
	}}
	old := &table.Table{Name: "traces", Columns: cols("trace", "rank", "gpu_model"), Rows: [][]any{{"c", int64(0), "NVIDIA H100"}}}
	type cc struct{ major, minor int }
	want := map[string]cc{"a/0": {7, 0}, "a/1": {7, 0}, "a/2": {-1, -1}, "b/0": {-1, -1}, "c/0": {-1, -1}}
	for _, tb := range []*table.Table{withCC, old} {
		for _, ri := range evidence.Ranks(tb) {
			key := fmt.Sprintf("%s/%d", ri.Trace, ri.Rank)
			if got := (cc{ri.CCMajor, ri.CCMinor}); got != want[key] {
				t.Errorf("Ranks() %s: CC = %d.%d, want %d.%d", key, got.major, got.minor, want[key].major, want[key].minor)
			}
			delete(want, key)
		}
	}
	if len(want) != 0 {
		t.Errorf("Ranks() left out %v", want)
	}
}

// The missing-sync-events gap tells a capture older than the device's sync
// events (the 2021 format, or a capture date before 2023-06) that its
// PyTorch could not have recorded them (resnet50_num_workers_4 had been
// told to set an option its PyTorch 1.8-1.10 does not have).
func TestGapSyncEventsEra(t *testing.T) {
	day := func(s string) int64 {
		d, err := time.Parse("2006-01-02", s)
		if err != nil {
			t.Fatal(err)
		}
		return d.UnixNano()
	}
	b := &evidence.Bundle{
		Traces: &table.Table{Name: "traces", Columns: cols("trace", "rank", "format", "base_time_ns", "first_ts_ns", "has_sync_events"), Rows: [][]any{
			{"old_format", int64(0), "kineto_2021", nil, int64(1_000), false},
			{"old_date", int64(0), "kineto", day("2022-11-30"), int64(1_000), false},
			{"new_date", int64(0), "kineto", day("2024-05-14"), int64(1_000), false},
			{"no_date", int64(0), "kineto", nil, int64(1_000), false},
			{"has_them", int64(0), "kineto", day("2022-11-30"), int64(1_000), true},
		}},
		Tables: evidence.Tables{"overview": &table.Table{Columns: cols("trace", "rank", "kernels"), Rows: [][]any{
			{"old_format", int64(0), int64(5)}, {"old_date", int64(0), int64(5)}, {"new_date", int64(0), int64(5)},
			{"no_date", int64(0), int64(5)}, {"has_them", int64(0), int64(5)},
		}}},
	}
	evidence.DetectGaps(b)
	want := map[string]string{"old_format": "captured before", "old_date": "captured before", "new_date": "captured without", "no_date": "captured without"}
	for _, g := range b.Gaps {
		if g.Kind != evidence.GapNoSyncEvents {
			continue
		}
		w, ok := want[g.Trace]
		if !ok {
			t.Errorf("%s: unexpected sync-events gap: %s", g.Trace, g.Why)
			continue
		}
		if !strings.HasPrefix(g.Why, w) {
			t.Errorf("%s: why = %q, want it to start %q", g.Trace, g.Why, w)
		}
		delete(want, g.Trace)
	}
	if len(want) != 0 {
		t.Errorf("no sync-events gap for %v", want)
	}
}

// A trace without [memory] events whose header says profile_memory was on
// is not told to turn it on (vllm_decode_full_mi300x: "profile_memory": 1).
func TestGapMemoryEventsProfiled(t *testing.T) {
	b := &evidence.Bundle{
		Traces: &table.Table{Name: "traces", Columns: cols("trace", "rank", "profile_memory"), Rows: [][]any{
			{"on", int64(0), true}, {"off", int64(0), false}, {"unsaid", int64(0), nil},
		}},
		Tables: evidence.Tables{"memory": &table.Table{Columns: cols("trace", "rank", "allocs", "frees")}},
	}
	why := gapWhy(b, evidence.GapNoMemoryEvents)
	if !strings.Contains(why["on"], "header says profile_memory was on") || strings.Contains(why["on"], "collect with profile_memory=True") {
		t.Errorf("profiled trace: %q", why["on"])
	}
	for _, tr := range []string{"off", "unsaid"} {
		if !strings.Contains(why[tr], "collect with profile_memory=True") {
			t.Errorf("%s: %q", tr, why[tr])
		}
	}
}

// cols are columns of the given names, with no types.
func cols(names ...string) []table.Column {
	var out []table.Column
	for _, n := range names {
		out = append(out, table.Column{Name: n})
	}
	return out
}

// A trace the legacy autograd profiler wrote is told to use a Kineto
// build, not to set options its exporter ignores
// (torch1.13.1_legacy_smallnet).
func TestGapLegacyProfiler(t *testing.T) {
	b := &evidence.Bundle{
		Traces: &table.Table{Name: "traces", Columns: cols("trace", "rank", "format", "has_python_stacks"), Rows: [][]any{
			{"old", int64(0), "legacy", false}, {"new", int64(0), "kineto", false},
		}},
		Tables: evidence.Tables{
			"overview": &table.Table{Columns: cols("trace", "rank", "kernels"), Rows: [][]any{{"old", int64(0), int64(0)}, {"new", int64(0), int64(0)}}},
			"memory":   &table.Table{Columns: cols("trace", "rank", "allocs", "frees")},
		},
	}
	evidence.DetectGaps(b)
	for _, g := range b.Gaps {
		if g.Kind != evidence.GapNoGPUEvents && g.Kind != evidence.GapNoPythonStacks && g.Kind != evidence.GapNoMemoryEvents {
			continue
		}
		legacy := strings.Contains(g.Why, "legacy autograd profiler")
		if legacy != (g.Trace == "old") || (g.Trace == "old" && strings.Contains(g.Why, "=True")) {
			t.Errorf("%s %s: %q", g.Trace, g.Kind, g.Why)
		}
	}
}

// A legacy trace without GPU activity whose operators include oneDNN's CPU
// kernels is a run on the CPU: its gap says so and gives no GPU run's
// advice; one without them says both (torch1.13.1_legacy_smallnet).
func TestGapLegacyCPURun(t *testing.T) {
	for _, op := range []string{"aten::mkldnn_convolution", "aten::conv2d"} {
		b := &evidence.Bundle{
			Traces: &table.Table{Name: "traces", Columns: cols("trace", "rank", "format"), Rows: [][]any{{"old", int64(0), "legacy"}}},
			Tables: evidence.Tables{
				"overview": &table.Table{Columns: cols("trace", "rank", "kernels"), Rows: [][]any{{"old", int64(0), int64(0)}}},
				"ops":      &table.Table{Columns: cols("trace", "rank", "name"), Rows: [][]any{{"old", int64(0), op}}},
			},
		}
		evidence.DetectGaps(b)
		cpu := evidence.IsCPUBackendOp(op)
		n := 0
		for _, g := range b.Gaps {
			if g.Kind != evidence.GapNoGPUEvents {
				continue
			}
			n++
			if strings.Contains(g.Why, "a run on the CPU: its operators include "+op) != cpu || strings.Contains(g.Why, "for a GPU run") == cpu {
				t.Errorf("%s: %q", op, g.Why)
			}
		}
		if n != 1 {
			t.Errorf("%s: %d no-GPU gaps, want 1: %+v", op, n, b.Gaps)
		}
	}
}

// An MTIA trace is not told to set CUPTI's enable_cuda_sync_events
// (mtia_single_rank).
func TestGapSyncEventsMTIA(t *testing.T) {
	b := &evidence.Bundle{
		Traces: &table.Table{Name: "traces", Columns: cols("trace", "rank", "platform", "has_sync_events"), Rows: [][]any{
			{"m", int64(0), "mtia", false}, {"c", int64(0), "cuda", false},
		}},
		Tables: evidence.Tables{"overview": &table.Table{Columns: cols("trace", "rank", "kernels"), Rows: [][]any{{"m", int64(0), int64(5)}, {"c", int64(0), int64(5)}}}},
	}
	why := gapWhy(b, evidence.GapNoSyncEvents)
	if !strings.Contains(why["m"], "this MTIA trace has no such option") || strings.Contains(why["m"], "collect with") {
		t.Errorf("mtia: %q", why["m"])
	}
	if !strings.Contains(why["c"], "collect with torch.profiler._ExperimentalConfig(enable_cuda_sync_events=True)") {
		t.Errorf("cuda: %q", why["c"])
	}
}

// gapWhy detects b's gaps and returns the Why of each trace's gap of kind.
func gapWhy(b *evidence.Bundle, kind evidence.GapKind) map[string]string {
	evidence.DetectGaps(b)
	why := map[string]string{}
	for _, g := range b.Gaps {
		if g.Kind == kind {
			why[g.Trace] = g.Why
		}
	}
	return why
}

// One rank loaded is a gap only where the job had more: a trace whose
// distributed info says world size 1 has no other rank to load
// (mtia_single_rank, ns_resolution_v100); one that says 8 is, and one that
// says nothing is where it communicates (a collective, or communication
// kernel time), not where it does not (h100_owlv2, a single-GPU pipeline).
func TestGapSingleRankOfAJob(t *testing.T) {
	b := &evidence.Bundle{
		Traces: &table.Table{Name: "traces", Columns: cols("trace", "rank", "world_size"), Rows: [][]any{
			{"alone", int64(0), int64(1)}, {"of8", int64(3), int64(8)}, {"unsaid", int64(0), nil},
			{"unsaid_comm_kernels", int64(0), nil}, {"unsaid_silent", int64(0), nil},
		}},
		Tables: map[string]*table.Table{
			"collectives": {Columns: cols("trace", "rank", "collective"), Rows: [][]any{{"unsaid", int64(0), "all_reduce"}}},
			"ranks": {Columns: cols("trace", "rank", "comm_ns"), Rows: [][]any{
				{"unsaid_comm_kernels", int64(0), int64(5_000)}, {"unsaid_silent", int64(0), int64(0)}, {"alone", int64(0), int64(5_000)}}},
		},
	}
	why := gapWhy(b, evidence.GapSingleRank)
	for _, tr := range []string{"alone", "unsaid_silent"} {
		if _, ok := why[tr]; ok {
			t.Errorf("%s: single-rank gap %q", tr, why[tr])
		}
	}
	for _, tr := range []string{"of8", "unsaid", "unsaid_comm_kernels"} {
		if !strings.Contains(why[tr], "load the per-rank files") {
			t.Errorf("%s: single-rank gap %q", tr, why[tr])
		}
	}
}

// TestKinetoRecordCounts: RankInfo sums the out-of-range records over a
// rank's files and reads CUPTI stopped early from any of them; a rank whose
// collection stopped early has the gpu_records_lost gap, the others none.
func TestKinetoRecordCounts(t *testing.T) {
	tb := &table.Table{Name: "traces", Columns: cols("trace", "rank", "gpu_model", "kineto_out_of_range", "cupti_stopped_early"), Rows: [][]any{
		{"a", int64(0), "NVIDIA H100 80GB HBM3", int64(3829), int64(0)},
		{"a", int64(1), "NVIDIA H100 80GB HBM3", int64(10), nil},
		{"a", int64(1), "NVIDIA H100 80GB HBM3", int64(5), int64(1)},
		{"a", int64(2), "NVIDIA H100 80GB HBM3", nil, nil},
	}}
	got := map[int]string{}
	for _, ri := range evidence.Ranks(tb) {
		got[ri.Rank] = fmt.Sprint(ri.OutOfRange, ri.CuptiStoppedEarly)
	}
	if want := map[int]string{0: "3829 false", 1: "15 true", 2: "0 false"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("record counts %v, want %v", got, want)
	}
	b := evidence.NewBundle()
	b.Traces = tb
	evidence.DetectGaps(b)
	var lost []string
	for _, g := range b.Gaps {
		if g.Kind == evidence.GapGPURecordsLost {
			lost = append(lost, fmt.Sprintf("%s/%d", g.Trace, g.Rank))
			if !strings.Contains(g.Why, "CUPTI stopped early") {
				t.Errorf("gap says %q", g.Why)
			}
		}
	}
	if fmt.Sprint(lost) != "[a/1]" {
		t.Errorf("gpu_records_lost gaps %v, want [a/1]", lost)
	}
}

// An inferred step's gap says where its steps came from (resnet_2080ti:
// the optimizer's steps, not vLLM's frames).
func TestInferredStepsSource(t *testing.T) {
	for source, want := range map[string]string{
		"optimizer_step":       "steps come from the ends of the optimizer's steps (Optimizer.step#...), the first from the rank's first event (no step annotation)",
		"python_execute_model": "steps come from vLLM's python execute_model frames (no step annotation)",
	} {
		b := evidence.NewBundle()
		b.Traces = &table.Table{Columns: []table.Column{{Name: "trace"}, {Name: "rank"}}, Rows: [][]any{{"t", int64(0)}}}
		b.Tables["steps"] = &table.Table{Columns: []table.Column{{Name: "trace"}, {Name: "rank"}, {Name: "step"}, {Name: "source"}, {Name: "hypothesis"}},
			Rows: [][]any{{"t", int64(0), int64(0), source, true}}}
		evidence.DetectGaps(b)
		found := false
		for _, g := range b.Gaps {
			if g.Kind == evidence.GapStepsHypothesis {
				found = true
				if !strings.HasPrefix(g.Why, want) {
					t.Errorf("%s: %q, want it to open with %q", source, g.Why, want)
				}
			}
		}
		if !found {
			t.Errorf("%s: no inferred-steps gap", source)
		}
	}
}

// TestGapRankDefaultedInAJob: a file whose rank defaulted to 0 leaves a gap
// where it is part of a job (it communicates), not where it is one process
// that communicates with no one (h100_owlv2).
func TestGapRankDefaultedInAJob(t *testing.T) {
	b := &evidence.Bundle{
		Traces: &table.Table{Name: "traces", Columns: cols("trace", "rank", "rank_source"), Rows: [][]any{
			{"alone", int64(0), "default"}, {"job", int64(0), "default"},
		}},
		Tables: map[string]*table.Table{
			"ranks": {Columns: cols("trace", "rank", "comm_ns"), Rows: [][]any{{"alone", int64(0), int64(0)}, {"job", int64(0), int64(5_000)}}},
		},
	}
	why := gapWhy(b, evidence.GapRankDefaulted)
	if _, ok := why["alone"]; ok {
		t.Errorf("one process: rank-defaulted gap %q", why["alone"])
	}
	if !strings.Contains(why["job"], "the rank defaulted to 0") {
		t.Errorf("a rank of a job: rank-defaulted gap %q", why["job"])
	}
}

func TestRankInfoServing(t *testing.T) {
	for producer, want := range map[string]bool{"vllm": true, "sglang": true, evidence.ProducerProfilerStep: false, "": false, "vllm_bench": false} {
		if got := (evidence.RankInfo{Producer: producer}).Serving(); got != want {
			t.Errorf("producer %q: Serving() = %v, want %v", producer, got, want)
		}
	}
}
