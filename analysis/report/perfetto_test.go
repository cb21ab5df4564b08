package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/findings"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/internal/testutil"
)

// cols names a hand-built table's columns.
var cols = testutil.Columns

// TestStormWindowCarriesItsSubject: a short_kernel_storm finding's window
// is the step with the most time in the rank's tiny kernel names, and
// carries those names (the Subject its Perfetto marks read) through the
// report's source encoding.
func TestStormWindowCarriesItsSubject(t *testing.T) {
	tiny := "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>>(int)"
	gemm := "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64"
	kernel := func(step int64, name string, n, dur int64) []any {
		h := evidence.Hist{evidence.BucketOf(dur): n}
		return []any{"t", int64(0), step, "", int64(7), name, "COMP", n, n * dur, dur, dur, h.String()}
	}
	b := evidence.NewBundle()
	b.Traces = &table.Table{Columns: cols("trace rank rank_source producer platform gpu_model has_graphs has_sync_events has_python_stacks"),
		Rows: [][]any{{"t", int64(0), "filename", "profiler_step", "cuda", "NVIDIA H100 80GB HBM3", false, true, false}}}
	b.Tables["ranks"] = &table.Table{Columns: cols("trace rank step phase events busy_ns idle_ns compute_ns comm_ns comm_comp_ns step_ns"), Rows: [][]any{
		{"t", int64(0), int64(1), "", int64(2000), int64(12_500_000), int64(500_000), int64(12_500_000), int64(0), int64(12_500_000), int64(13_000_000)},
		{"t", int64(0), int64(2), "", int64(2000), int64(12_500_000), int64(500_000), int64(12_500_000), int64(0), int64(12_500_000), int64(13_000_000)},
	}}
	// Step 2 runs more of the tiny kernel (2000 of 5 us) than step 1 (1000).
	b.Tables["kernels"] = &table.Table{Columns: cols("trace rank step phase stream name class count total_ns min_ns max_ns hist"), Rows: [][]any{
		kernel(1, tiny, 1000, 5_000), kernel(1, gemm, 5, 1_000_000),
		kernel(2, tiny, 2000, 5_000), kernel(2, gemm, 5, 1_000_000),
	}}
	b.Tables["workload"] = &table.Table{Columns: cols("trace rank feature example count total_ns"), Rows: [][]any{
		{"t", int64(0), "cpu_ops", "cpu_ops", int64(1), int64(0)}, {"t", int64(0), "backward", "backward", int64(1), int64(0)}}}
	b.Tables["steps"] = &table.Table{Columns: cols("trace rank step start_ns wall_ns"), Rows: [][]any{
		{"t", int64(0), int64(1), int64(0), int64(13_000_000)}, {"t", int64(0), int64(2), int64(13_000_000), int64(13_000_000)}}}
	var w *Window
	for _, x := range PlanWindows(b) {
		if x.Rule == "short_kernel_storm" {
			w = &x
		}
	}
	if w == nil {
		t.Fatalf("no window for a short_kernel_storm finding: %+v", ShownFindings(b))
	}
	if w.Step != 2 || !strings.Contains(w.Basis, "step 2 has the largest GPU time in tiny kernels") || !strings.HasSuffix(w.Basis, ": 10.000 ms") {
		t.Errorf("window step %d, basis %q: want step 2 with its 10 ms of tiny kernels", w.Step, w.Basis)
	}
	if w.Subject == nil || strings.Join(w.Subject.Names, "|") != tiny {
		t.Fatalf("window subject %+v, want the tiny kernel's name", w.Subject)
	}
	data, err := EncodeSource(&Source{Bundle: b, Windows: []Window{*w}})
	if err != nil {
		t.Fatal(err)
	}
	src, err := DecodeSource(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := src.Windows[0].Subject; got == nil || strings.Join(got.Names, "|") != tiny {
		t.Errorf("decoded window subject %+v, want the tiny kernel's name", got)
	}
}

// A step that holds excluded start-up or held idle is named so: its own
// figure keeps that idle, which the finding's numbers leave out (b200_eager:
// step 0's 72.5 ms of host wait against the finding's 63.8 ms).
func TestExcludedOverlaps(t *testing.T) {
	b := evidence.NewBundle()
	b.Tables["capture"] = &table.Table{Columns: []table.Column{{Name: "trace"}, {Name: "rank"}, {Name: "kind"}, {Name: "idle_ns"}, {Name: "first_ns"}, {Name: "last_ns"}},
		Rows: [][]any{
			{"t", int64(0), "first_op", int64(9_000_000), int64(1_000_000), int64(90_000_000)},
			{"t", int64(0), "excluded", int64(9_000_000), int64(1_000_000), int64(9_000_000)},
		}}
	for _, c := range []struct {
		rank       int
		start, end int64
		want       bool
	}{{0, 0, 87_000_000, true}, {0, 10_000_000, 20_000_000, false}, {1, 0, 87_000_000, false}} {
		if got := excludedOverlaps(b, "t", c.rank, c.start, c.end); got != c.want {
			t.Errorf("rank %d [%d, %d): %v, want %v", c.rank, c.start, c.end, got, c.want)
		}
	}
}

// A sync finding whose syncs opened no GPU gap points at the step that
// blocked the host longest, and says that is what it measures
// (trace_diff_test_v100 called 101 ms of blocked time a "GPU gap").
func TestSyncWindowWithoutGaps(t *testing.T) {
	b := evidence.NewBundle()
	b.Traces = &table.Table{Columns: cols("trace rank rank_source producer platform gpu_model has_graphs has_sync_events has_python_stacks"),
		Rows: [][]any{{"t", int64(0), "filename", "profiler_step", "cuda", "Tesla V100-SXM2-16GB", false, true, false}}}
	b.Tables["steps"] = &table.Table{Columns: cols("trace rank step start_ns wall_ns"), Rows: [][]any{
		{"t", int64(0), int64(1), int64(0), int64(13_000_000)}, {"t", int64(0), int64(2), int64(13_000_000), int64(13_000_000)}}}
	sync := func(gap int64) *table.Table {
		return &table.Table{Columns: cols("trace rank step phase blocking pageable count bytes blocked_ns held_ns gpu_gap_ns"), Rows: [][]any{
			{"t", int64(0), int64(1), "", true, false, int64(5), int64(0), int64(2_000_000), int64(0), int64(0)},
			{"t", int64(0), int64(2), "", true, false, int64(5), int64(0), int64(6_000_000), int64(0), gap},
		}}
	}
	f := evidence.Finding{Rule: "sync_bound_loop", Trace: "t", Rank: 0}
	for _, c := range []struct {
		gap  int64
		want string
	}{{0, "step 2 has the largest host time blocked in syncs (they opened no GPU gap) of rank 0: 6.000 ms"}, {1_000_000, "step 2 has the largest GPU gap opened by host syncs of rank 0: 1.000 ms"}} {
		b.Tables["sync"] = sync(c.gap)
		w := planWindow(b, evidence.Rollup(b, evidence.Filter{}), nil, f)
		if !strings.HasPrefix(w.Basis, c.want) {
			t.Errorf("gap %d: basis %q, want %q", c.gap, w.Basis, c.want)
		}
	}
}

// TestGapInspectsLeaveOutQueuedGaps: the guide points at the three largest
// GPU gaps that are not the device's own time between queued kernels
// (crossview.KernelWaitMaxNs), however many shorter ones the cross-check
// lists.
func TestGapInspectsLeaveOutQueuedGaps(t *testing.T) {
	us := int64(1_000)
	for _, tc := range []struct {
		name string
		durs []int64 // the cross-check's top gaps, longest first
		want []int64 // the gaps the guide points at
	}{
		{"back to back", []int64{12 * us, 10 * us, 3 * us}, nil},
		{"one real gap", []int64{408 * us, 16 * us, 14 * us}, []int64{408 * us}},
		{"the threshold", []int64{crossview.KernelWaitMaxNs, crossview.KernelWaitMaxNs - 1}, []int64{crossview.KernelWaitMaxNs}},
		{"at most three", []int64{5000 * us, 4000 * us, 3000 * us, 2000 * us}, []int64{5000 * us, 4000 * us, 3000 * us}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var gaps []crossview.Gap
			for i, d := range tc.durs {
				gaps = append(gaps, crossview.Gap{Trace: "t", Cause: "device", StartNs: int64(i) * 1_000_000, DurNs: d})
			}
			var got []int64
			for _, in := range gapInspects(&crossview.Result{Check: crossview.Check{TopGaps: gaps}}) {
				got = append(got, in.EndNs-in.StartNs)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("guide points at gaps of %v ns, want %v", got, tc.want)
			}
		})
	}
}

// TestStepSpread: a finding's step measure reads as every step's, some
// steps', or mostly one step's, and says nothing with fewer than three
// steps.
func TestStepSpread(t *testing.T) {
	m := &findings.StepMeasure{What: "host-wait GPU idle"}
	steps := func(n int) []stepRow {
		var out []stepRow
		for i := range n {
			out = append(out, stepRow{step: i, start: int64(i) * 50_000_000, wallNs: 45_000_000})
		}
		return out
	}
	cases := []struct {
		name  string
		steps int
		vals  map[int]int64
		want  string
	}{
		{"every step", 4, map[int]int64{0: 23_000_000, 1: 27_000_000, 2: 29_700_000, 3: 25_000_000},
			"Across steps, each of the rank's 4 steps holds some host-wait GPU idle: 23.0 ms to 29.7 ms a step (median 26.0 ms)"},
		{"some steps", 11, map[int]int64{0: 28_800_000, 1: 27_000_000, 2: 29_700_000, 3: 23_100_000},
			"Across steps, 4 of the rank's 11 steps hold some host-wait GPU idle: 23.1 ms to 29.7 ms a step (median 27.9 ms)"},
		{"one step", 5, map[int]int64{0: 42_400_000, 1: 9_000_000, 2: 8_000_000},
			"Across the rank's 5 steps, the host-wait GPU idle is mostly one step's: step 0 holds 42.4 ms of the steps' 59.4 ms (71.4%), the next most 9.0 ms"},
		{"an outlier", 5, map[int]int64{0: 59_600_000, 1: 59_500_000, 2: 59_700_000, 3: 59_600_000, 4: 119_000_000},
			"Across steps, each of the rank's 5 steps holds some host-wait GPU idle: 59.5 ms to 119 ms a step (median 59.6 ms); step 4 holds 119 ms, 2.0x the median: an outlier that the total mixes with the other steps'"},
		{"a top step close to the next, no outlier", 6, map[int]int64{0: 20_000_000, 1: 11_000_000, 2: 30_000_000, 3: 13_000_000, 4: 10_000_000, 5: 12_000_000},
			"Across steps, each of the rank's 6 steps holds some host-wait GPU idle: 10.0 ms to 30.0 ms a step (median 12.5 ms)"},
		{"two kinds of step, no outlier", 6, map[int]int64{0: 1_000_000, 1: 1_100_000, 2: 1_000_000, 3: 9_000_000, 4: 8_000_000, 5: 1_200_000},
			"Across steps, each of the rank's 6 steps holds some host-wait GPU idle: 1.0 ms to 9.0 ms a step (median 1.1 ms)"},
		{"rising", 6, map[int]int64{0: 9_600_000, 1: 12_000_000, 2: 14_200_000, 3: 14_500_000, 4: 18_800_000, 5: 17_400_000},
			"Across steps, each of the rank's 6 steps holds some host-wait GPU idle: 9.6 ms to 18.8 ms a step (median 14.3 ms); it tends to rise across the window's steps (the first third 10.8 ms a step on average, the last third 18.1 ms): not a steady state, and the total is of this window's steps"},
		{"steady with noise", 6, map[int]int64{0: 10_000_000, 1: 10_300_000, 2: 10_100_000, 3: 10_400_000, 4: 10_200_000, 5: 10_500_000},
			"Across steps, each of the rank's 6 steps holds some host-wait GPU idle: 10.0 ms to 10.5 ms a step (median 10.2 ms)"},
		{"only one step", 3, map[int]int64{2: 5_000_000},
			"Across the rank's 3 steps, the host-wait GPU idle is one step's: only step 2 holds any (5.0 ms)"},
		{"two steps say nothing", 2, map[int]int64{0: 1, 1: 1}, ""},
		{"nothing in any step", 3, map[int]int64{}, ""},
	}
	for _, c := range cases {
		if got := stepSpread(steps(c.steps), -1, c.vals, m); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
	// The warm-up step is left out, and the sentence says so.
	if got := stepSpread(steps(5), 0, map[int]int64{0: 90_000_000, 1: 10_000_000, 2: 11_000_000, 3: 12_000_000, 4: 10_000_000}, m); got != "Across steps, each of the rank's 4 steps after its warm-up step 0 holds some host-wait GPU idle: 10.0 ms to 12.0 ms a step (median 10.5 ms)" {
		t.Errorf("warm-up left out: %q", got)
	}
	bytes := &findings.StepMeasure{What: "pageable copy bytes", Bytes: true}
	if got := stepSpread(steps(3), -1, map[int]int64{0: 1000, 1: 1000, 2: 1000}, bytes); !strings.Contains(got, "1,000 bytes to 1,000 bytes") {
		t.Errorf("bytes: %q", got)
	}
}
