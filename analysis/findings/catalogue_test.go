package findings_test

import (
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/findings"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/sql"
)

// TestRuleRows: every rule is one complete row: an anchor that
// sql/perfetto_anchor.sql finds, and a per-step measure and marks, or a
// reason (None) for each one it lacks, and no stale reason.
func TestRuleRows(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range findings.Rules {
		if r.ID == "" || seen[r.ID] {
			t.Errorf("rule %q: empty or duplicated ID", r.ID)
		}
		seen[r.ID] = true
		if findings.RuleOf(r.ID) == nil || findings.RuleOf(r.ID).ID != r.ID {
			t.Errorf("RuleOf(%q) does not find its row", r.ID)
		}
		if r.Doc == "" || len(r.Thresholds) == 0 {
			t.Errorf("rule %s: no doc or no threshold", r.ID)
		}
		if _, ok := findings.AnchorWords[r.Anchor]; !ok {
			t.Errorf("rule %s: anchor %q is not a kind of sql/perfetto_anchor.sql", r.ID, r.Anchor)
		}
		if s := r.Step; s != nil && (s.What == "" || s.Values == nil) {
			t.Errorf("rule %s: per-step measure without its name or values", r.ID)
		}
		if m := r.Marks; m != nil {
			if m.Event == nil && m.Gap == nil {
				t.Errorf("rule %s: marks that pick nothing", r.ID)
			}
			if m.Event != nil && (m.Named.Prefix == "" || m.Named.What == "") {
				t.Errorf("rule %s: flagged events without a name or a what", r.ID)
			}
			if m.Gap != nil && (m.GapNamed.Prefix == "" || m.GapNamed.What == "") {
				t.Errorf("rule %s: flagged gaps without a name or a what", r.ID)
			}
			if (m.During != nil || m.Launch != nil) && m.Event == nil {
				t.Errorf("rule %s: During or Launch without Event", r.ID)
			}
		}
		switch r.Constraint {
		case "", crossview.VerdictHost, crossview.VerdictSync, crossview.VerdictComm, crossview.VerdictGPU:
		default:
			t.Errorf("rule %s: constraint %q is no verdict of the cross-check", r.ID, r.Constraint)
		}
		switch lacks := r.Step == nil || r.Marks == nil; {
		case lacks && r.None == "":
			t.Errorf("rule %s: no per-step measure or no marks, and None does not say why", r.ID)
		case !lacks && r.None != "":
			t.Errorf("rule %s: None %q on a row that has both its measure and its marks", r.ID, r.None)
		}
	}
	if findings.RuleOf("no_such_rule") != nil {
		t.Error("RuleOf found a rule that does not exist")
	}
}

// TestAnchorKinds: AnchorWords names exactly the anchor kinds that
// sql/perfetto_anchor.sql documents and selects, and the marked anchors,
// which it does not.
func TestAnchorKinds(t *testing.T) {
	p, ok := sql.Lookup(sql.PerfettoAnchor)
	if !ok {
		t.Fatal("no perfetto_anchor preset")
	}
	var doc string
	for _, c := range p.Columns {
		if c.Name == "anchor" {
			doc = c.Doc
		}
	}
	documented := regexp.MustCompile(`[a-z_]+`).FindAllString(strings.ReplaceAll(doc, " or ", ", "), -1)
	// The preset's kernel_name and host_name rows are no anchor of their
	// own: the marked anchors are found among them.
	want := []string{"kernel_name", "host_name"}
	for k := range findings.AnchorWords {
		if !findings.MarkedAnchors[k] {
			want = append(want, k)
		}
	}
	sort.Strings(want)
	sort.Strings(documented)
	if strings.Join(documented, ",") != strings.Join(want, ",") {
		t.Errorf("perfetto_anchor.sql documents anchors %v, findings.AnchorWords has %v", documented, want)
	}
	for _, k := range want {
		if !strings.Contains(p.SQL, "'"+k+"'") {
			t.Errorf("perfetto_anchor.sql selects no %q anchor", k)
		}
	}
}

// TestFiringRulesHaveRows: every finding Evaluate returns names a row.
func TestFiringRulesHaveRows(t *testing.T) {
	kernels := &table.Table{Columns: cols("trace rank step phase stream name class count total_ns min_ns max_ns hist"),
		Rows: [][]any{{"t", int64(0), int64(1), "", int64(7), "volta_sgemm_128x64_nn", "COMP", int64(10), int64(60_000_000), int64(1), int64(9_000_000), ""}}}
	gaps := &table.Table{Columns: cols("trace rank step phase stream category count idle_ns max_ns max_at_ns hist"),
		Rows: [][]any{{"t", int64(0), int64(1), "", int64(7), "host_wait", int64(10), int64(40_000_000), int64(9_000_000), int64(0), ""}}}
	fs := eval(bundle("profiler_step", "cuda", "Tesla V100-SXM2-16GB", 60_000_000, 40_000_000, map[string]*table.Table{"kernels": kernels, "gaps": gaps}), nil)
	if len(fs) < 2 {
		t.Fatalf("want the fp32 and host-wait findings, got %s", rules(fs))
	}
	for _, f := range fs {
		if findings.RuleOf(f.Rule) == nil {
			t.Errorf("finding of rule %q has no row", f.Rule)
		}
	}
}

// stepOf runs rule's per-step measure for subject s over a bundle holding
// the one row given (step 0 of rank 0 of trace t) in area and reports
// whether the measure counted it.
func stepOf(t *testing.T, rule string, s findings.Subject, area, columns string, row ...any) bool {
	t.Helper()
	r := findings.RuleOf(rule)
	if r == nil || r.Step == nil {
		t.Fatalf("rule %s has no per-step measure", rule)
	}
	b := evidence.NewBundle()
	b.Tables[area] = &table.Table{Columns: cols("trace rank step " + columns), Rows: [][]any{append([]any{"t", int64(0), int64(0)}, row...)}}
	_, vals := r.Step.Measure(b, "t", 0, s)
	return vals[0] != 0
}

// flags reports whether rule's marks flag e for subject s.
func flags(rule string, e findings.Event, s findings.Subject) bool {
	return findings.RuleOf(rule).Marks.Event(e, s)
}

// TestMeasureAndMarksAgree: a rule's per-step measure counts an instance
// exactly when its marks flag the same instance in a Perfetto window: the
// evidence rows and the window's events are judged by one predicate.
func TestMeasureAndMarksAgree(t *testing.T) {
	kernelNames := []string{
		"volta_sgemm_128x64_nn", "ampere_sgemm_64x32_sliced1x4_tn", "void cutlass::Kernel<cutlass_80_simt_sgemm_128x64_8x5_nn_align1>(Params)",
		"volta_h884gemm_64x64_ldg8_nn", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
		"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int, at::native::FillFunctor<float>)",
	}
	kernelNames = append(kernelNames, "void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_tn_align1>(Params)",
		"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_tn_align1>(Params)", "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_tn_align4>(Params)")
	for _, rule := range []string{"fp32_no_tensor_cores", "misaligned_gemm"} {
		for _, n := range kernelNames {
			counted := stepOf(t, rule, findings.Subject{}, "kernels", "name total_ns", n, int64(1000))
			flagged := flags(rule, findings.Event{Kind: "kernel", Name: n, Class: "COMP"}, findings.Subject{})
			if counted != flagged {
				t.Errorf("%s: %q counted by the measure %v, flagged %v", rule, n, counted, flagged)
			}
		}
	}
	// The memcpy area's src and dst are what tb_copy_src and tb_copy_dst
	// give for the copy's name.
	copies := []struct{ name, src, dst string }{
		{"Memcpy HtoD (Pageable -> Device)", "Pageable", "Device"},
		{"Memcpy DtoH (Device -> Pageable)", "Device", "Pageable"},
		{"Memcpy HtoD (Pinned -> Device)", "Pinned", "Device"},
		{"Memcpy DtoD (Device -> Device)", "Device", "Device"},
		{"Memcpy HtoD", "", ""},
		{"Memcpy (Pageable)", "", ""},
	}
	for _, c := range copies {
		counted := stepOf(t, "pageable_copies", findings.Subject{}, "memcpy", "src dst host_ns", c.src, c.dst, int64(1000))
		flagged := flags("pageable_copies", findings.Event{Kind: "gpu_memcpy", Name: c.name, SrcKind: c.src, DstKind: c.dst}, findings.Subject{})
		if counted != flagged {
			t.Errorf("pageable_copies: %q counted by the measure %v, flagged %v", c.name, counted, flagged)
		}
	}
	for _, rule := range []string{"host_bound_idle", "launch_bound"} {
		for _, cat := range []string{"host_wait", "kernel_wait", "other"} {
			counted := stepOf(t, rule, findings.Subject{}, "gaps", "category idle_ns", cat, int64(1000))
			if flagged := findings.RuleOf(rule).Marks.Gap(cat); counted != flagged {
				t.Errorf("%s: gap category %s counted by the measure %v, flagged %v", rule, cat, counted, flagged)
			}
		}
	}
	for _, n := range []string{"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "enumerate(DataPipe)#ShardingFilter", "DataLoader", "aten::copy_"} {
		counted := stepOf(t, "dataloader_share", findings.Subject{}, "ops", "name incl_ns", n, int64(1000))
		if flagged := flags("dataloader_share", findings.Event{Kind: "cpu_op", Name: n}, findings.Subject{}); counted != flagged {
			t.Errorf("dataloader_share: %q counted by the measure %v, flagged %v", n, counted, flagged)
		}
	}
	// The sync area's blocking column and the Perfetto rows' sync rating
	// are both tb_sync_call of views.sql with the copy check
	// (analysis/crossview's classify_sql_test.go runs both over the same
	// calls): the measure counts a call exactly when the marks flag it.
	for _, blocking := range []bool{true, false} {
		counted := stepOf(t, "sync_bound_loop", findings.Subject{}, "sync", "blocking blocked_ns gpu_gap_ns", blocking, int64(1000), int64(0))
		rating := ""
		if blocking {
			rating = "blocking"
		}
		if flagged := findings.SyncBlocking(findings.Event{Kind: "runtime", API: "sync", Name: "cudaStreamSynchronize", Sync: rating}); counted != flagged {
			t.Errorf("sync_bound_loop: a call rated %q counted by the measure %v, flagged %v", rating, counted, flagged)
		}
	}
	// Pageable copies larger than pageable_min_bytes are the pageable-copy
	// finding's: the sync finding's measure and marks leave them out, as
	// its rule does (the Subject carries the threshold).
	r := findings.RuleOf("sync_bound_loop")
	subj := r.Subject(nil, findings.Defaults(), evidence.Finding{})
	sized := []struct {
		copy, src, dst string // the copy's name and the kinds tb_copy_src and tb_copy_dst give
		pageable       bool
		bytes          int64
		counted        bool
	}{
		{"Memcpy HtoD (Pageable -> Device)", "Pageable", "Device", true, 1 << 20, false},
		{"Memcpy HtoD (Pageable -> Device)", "Pageable", "Device", true, 4096, true},
		{"Memcpy DtoH (Device -> Pageable)", "Device", "Pageable", true, 4, true},
		{"Memcpy DtoH (Device -> Pinned)", "Device", "Pinned", false, 1 << 20, true},
	}
	for _, c := range sized {
		counted := stepOf(t, "sync_bound_loop", subj, "sync", "blocking pageable count bytes blocked_ns gpu_gap_ns", true, c.pageable, int64(1), c.bytes, int64(1000), int64(0))
		flagged := r.Marks.Event(findings.Event{Kind: "runtime", API: "memcpy", Name: "cudaMemcpyAsync", Sync: "blocking",
			SrcKind: c.src, DstKind: c.dst, CopyBytes: c.bytes}, subj)
		if counted != c.counted || flagged != c.counted {
			t.Errorf("sync_bound_loop: %s of %d bytes counted by the measure %v, flagged %v, want %v", c.copy, c.bytes, counted, flagged, c.counted)
		}
	}
}

// TestSubjectMeasureAndMarksAgree: for the rules whose predicate depends
// on the finding (elementwise_dominated's does not, but reads the class
// too), the measure counts a kernels row exactly when the marks flag the
// same kernel instance, for the Subject the report hands both.
func TestSubjectMeasureAndMarksAgree(t *testing.T) {
	add := "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>(int)"
	sum := "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIteratorBase&)::{lambda(float, float)#1}>, unsigned int, float, 4>>(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIteratorBase&)::{lambda(float, float)#1}>, unsigned int, float, 4>)"
	gemm := "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64"
	kernels := []struct{ name, class string }{
		{add, "COMP"}, {sum, "COMP"}, {add, "COMM"}, {gemm, "COMP"}, {"triton_poi_fused_add_0", "COMP"},
		{"void at::native::elementwise_kernel_helper(int)", "COMP"}, {"Memset (Device)", "MEM"},
	}
	kind := func(class string) string {
		if class == "MEM" {
			return "gpu_memset"
		}
		return "kernel"
	}
	for _, k := range kernels {
		counted := stepOf(t, "elementwise_dominated", findings.Subject{}, "kernels", "name class total_ns", k.name, k.class, int64(1000))
		if flagged := flags("elementwise_dominated", findings.Event{Kind: kind(k.class), Name: k.name, Class: k.class}, findings.Subject{}); counted != flagged {
			t.Errorf("elementwise_dominated: %q (%s) counted by the measure %v, flagged %v", k.name, k.class, counted, flagged)
		}
	}
	storm := findings.Subject{Names: []string{"Memset (Device)", "triton_poi_fused_add_0", add}}
	for _, k := range kernels {
		counted := stepOf(t, "short_kernel_storm", storm, "kernels", "name class total_ns", k.name, k.class, int64(1000))
		if flagged := flags("short_kernel_storm", findings.Event{Kind: kind(k.class), Name: k.name, Class: k.class}, storm); counted != flagged {
			t.Errorf("short_kernel_storm: %q (%s) counted by the measure %v, flagged %v", k.name, k.class, counted, flagged)
		}
	}
	// One instance per row: the measure counts it when its histogram
	// bucket is slow, the marks flag it by its exact duration.
	slow := findings.Subject{Names: []string{gemm}, FloorNs: 200_000}
	for _, name := range []string{gemm, add} {
		for _, dur := range []int64{1000, 190_000, 199_999, 200_000, 205_000, 215_000, 220_000, 400_000, 5_000_000} {
			h := evidence.Hist{evidence.BucketOf(dur): 1}
			counted := stepOf(t, "kernel_slow_instances", slow, "kernels", "name class count total_ns min_ns max_ns hist", name, "COMP", int64(1), dur, dur, dur, h.String())
			if flagged := flags("kernel_slow_instances", findings.Event{Kind: "kernel", Name: name, Class: "COMP", Dur: dur}, slow); counted != flagged {
				t.Errorf("kernel_slow_instances: %q of %d ns counted by the measure %v, flagged %v", name, dur, counted, flagged)
			}
		}
	}
}

// TestSubjectIsWhatTheRuleCounted: the Subject of a short_kernel_storm or
// kernel_slow_instances finding, read from the evidence the finding was
// judged on, makes the per-step measure add up to what the finding's
// observation counts.
func TestSubjectIsWhatTheRuleCounted(t *testing.T) {
	row := func(name string, n, dur int64, extra map[int64]int64) []any {
		h := evidence.Hist{evidence.BucketOf(dur): n}
		total, lo, hi := n*dur, dur, dur
		for d, c := range extra {
			h[evidence.BucketOf(d)] += c
			total, lo, hi, n = total+c*d, min(lo, d), max(hi, d), n+c
		}
		return []any{"t", int64(0), int64(1), "", int64(7), name, "COMP", n, total, lo, hi, h.String()}
	}
	gemm := "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64"
	tests := []struct {
		rule    string
		busy    int64
		kernels [][]any
		names   []string
		total   int64 // the measure summed over steps
		says    string
	}{
		// 3000 kernels of 5 us and 10 of 1 ms: 15 ms tiny.
		{"short_kernel_storm", 25_000_000, [][]any{row("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>>(int)", 3000, 5_000, nil), row(gemm, 10, 1_000_000, nil)},
			[]string{"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>>(int)"}, 15_000_000, "they took 15.0 ms"},
		// 95 instances at 100 us, 5 at 500 us: the 5 slow ones took about 2.5 ms.
		{"kernel_slow_instances", 20_000_000, [][]any{row(gemm, 95, 100_000, map[int64]int64{500_000: 5})}, []string{gemm}, 2_500_000, "they took about 2.5 ms"},
	}
	for _, tc := range tests {
		b := bundle("profiler_step", "cuda", "NVIDIA H100 80GB HBM3", tc.busy, 1_000_000,
			map[string]*table.Table{"kernels": {Columns: cols("trace rank step phase stream name class count total_ns min_ns max_ns hist"), Rows: tc.kernels}})
		ev := evidence.Rollup(b, evidence.Filter{})
		var f *evidence.Finding
		for _, x := range findings.Evaluate(ev, nil) {
			if x.Rule == tc.rule {
				f = &x
			}
		}
		if f == nil || !strings.Contains(f.Observation, tc.says) {
			t.Fatalf("%s: no finding that says %q: %+v", tc.rule, tc.says, f)
		}
		r := findings.RuleOf(tc.rule)
		s := r.Subject(ev, findings.Defaults(), *f)
		if strings.Join(s.Names, "|") != strings.Join(tc.names, "|") {
			t.Errorf("%s: Subject names %q, want %q", tc.rule, s.Names, tc.names)
		}
		var total int64
		for _, v := range r.Step.Values(b, "t", 0, s) {
			total += v
		}
		if total != tc.total {
			t.Errorf("%s: the measure adds up to %d ns, the finding counts %d", tc.rule, total, tc.total)
		}
	}
}

// TestMemoryPeakStep: memory_peak's per-step measure is the allocator's
// peak of each step, in bytes, as the rule reads it (device rows only).
func TestMemoryPeakStep(t *testing.T) {
	b := evidence.NewBundle()
	b.Tables["memory"] = &table.Table{Columns: cols("trace rank step phase device peak_allocated peak_reserved free_calls free_ns"), Rows: [][]any{
		{"t", int64(0), int64(1), "", int64(0), int64(10 << 30), int64(12 << 30), int64(0), int64(0)},
		{"t", int64(0), int64(2), "", int64(0), int64(15 << 30), int64(14 << 30), int64(0), int64(0)},
		{"t", int64(0), int64(2), "", int64(-1), int64(0), int64(0), int64(3), int64(1000)},
		{"t", int64(0), int64(-1), "", int64(0), int64(20 << 30), int64(20 << 30), int64(0), int64(0)},
	}}
	r := findings.RuleOf("memory_peak")
	if !r.Step.Bytes {
		t.Error("memory_peak's measure is not in bytes")
	}
	got := r.Step.Values(b, "t", 0, findings.Subject{})
	if len(got) != 2 || got[1] != 12<<30 || got[2] != 15<<30 {
		t.Errorf("memory_peak per step = %v, want step 1: 12 GiB, step 2: 15 GiB (the row outside every step left out)", got)
	}
}

// TestStragglerMedianOneDefinition: the ranks area's compute_vs_median_pct,
// the rank_straggler finding and its per-step measure take the same median
// rank (evidence.ComputeMedian): ranks without GPU busy time do not count.
func TestStragglerMedianOneDefinition(t *testing.T) {
	if m, n := evidence.ComputeMedian([]int64{10, 0, 30, 20}, []int64{5, 0, 5, 5}); m != 20 || n != 3 {
		t.Errorf("ComputeMedian(odd, one idle rank) = %v, %d; want 20, 3", m, n)
	}
	if m, n := evidence.ComputeMedian([]int64{10, 21}, []int64{1, 1}); m != 15.5 || n != 2 {
		t.Errorf("ComputeMedian(even) = %v, %d; want 15.5, 2", m, n)
	}
	// Four ranks in one step: rank 3 ran no GPU work. The median of ranks
	// 0-2 is 20 ms; with rank 3 it would be 15 ms.
	b := evidence.NewBundle()
	b.Traces = &table.Table{Columns: cols("trace rank producer platform"), Rows: [][]any{
		{"t", int64(0), "profiler_step", "cuda"}, {"t", int64(1), "profiler_step", "cuda"}, {"t", int64(2), "profiler_step", "cuda"}, {"t", int64(3), "profiler_step", "cuda"}}}
	b.Tables["ranks"] = &table.Table{Columns: cols("trace rank step phase busy_ns idle_ns compute_ns comm_ns comm_comp_ns step_ns"), Rows: [][]any{
		{"t", int64(0), int64(0), "", int64(10_000_000), int64(0), int64(10_000_000), int64(0), int64(10_000_000), int64(0)},
		{"t", int64(1), int64(0), "", int64(20_000_000), int64(0), int64(20_000_000), int64(0), int64(20_000_000), int64(0)},
		{"t", int64(2), int64(0), "", int64(30_000_000), int64(0), int64(30_000_000), int64(0), int64(30_000_000), int64(0)},
		{"t", int64(3), int64(0), "", int64(0), int64(0), int64(0), int64(0), int64(0), int64(0)},
	}}
	if got := findings.RuleOf("rank_straggler").Step.Values(b, "t", 2, findings.Subject{})[0]; got != 10_000_000 {
		t.Errorf("per-step excess of rank 2 = %d, want 10000000 (30 ms over the median 20 ms)", got)
	}
	ev := evidence.Rollup(b, evidence.Filter{})
	r := ev.Table("ranks")
	for i := range r.Rows {
		if evidence.Int(r, i, "rank") == 2 {
			if got := evidence.Float(r, i, "compute_vs_median_pct"); got != 50 {
				t.Errorf("compute_vs_median_pct of rank 2 = %v, want 50", got)
			}
		}
	}
	fs := findings.Evaluate(ev, nil)
	var found bool
	for _, f := range fs {
		if f.Rule == "rank_straggler" {
			found = true
			if f.Rank != 2 || !strings.Contains(f.Observation, "50.0% more than the median rank (20.0 ms) of 3 ranks") {
				t.Errorf("straggler finding: rank %d, %q", f.Rank, f.Observation)
			}
		}
	}
	if !found {
		t.Errorf("no straggler finding: %s", rules(fs))
	}
}

// TestHostWaitStepCapped: host-wait idle summed over a step's streams is
// at most the step's GPU idle time (the union of its streams), so the worst
// step is not the one with the most streams.
func TestHostWaitStepCapped(t *testing.T) {
	b := evidence.NewBundle()
	b.Tables["gaps"] = &table.Table{Columns: cols("trace rank step phase stream category count idle_ns"), Rows: [][]any{
		{"t", int64(0), int64(1), "", int64(7), "host_wait", int64(1), int64(30_000_000)},
		{"t", int64(0), int64(1), "", int64(8), "host_wait", int64(1), int64(30_000_000)},
		{"t", int64(0), int64(1), "", int64(9), "host_wait", int64(1), int64(30_000_000)},
		{"t", int64(0), int64(2), "", int64(7), "host_wait", int64(1), int64(50_000_000)},
	}}
	b.Tables["ranks"] = &table.Table{Columns: cols("trace rank step phase busy_ns idle_ns"), Rows: [][]any{
		{"t", int64(0), int64(1), "", int64(10_000_000), int64(40_000_000)},
		{"t", int64(0), int64(2), "", int64(10_000_000), int64(60_000_000)},
	}}
	got := findings.RuleOf("host_bound_idle").Step.Values(b, "t", 0, findings.Subject{})
	if got[1] != 40_000_000 || got[2] != 50_000_000 {
		t.Errorf("host-wait idle per step = %v, want step 1 capped at its 40 ms of idle, step 2 its 50 ms", got)
	}
}

// Of two ranks the median is their mean: the straggler finding names the
// other rank instead (sampled_2of128: "12.8% more than the median rank
// (241 ms) of 2 ranks" for 272 against 210 ms).
func TestStragglerOfTwoRanks(t *testing.T) {
	b := evidence.NewBundle()
	b.Traces = &table.Table{Columns: cols("trace rank producer platform"), Rows: [][]any{
		{"t", int64(0), "profiler_step", "cuda"}, {"t", int64(1), "profiler_step", "cuda"}}}
	b.Tables["ranks"] = &table.Table{Columns: cols("trace rank step phase busy_ns idle_ns compute_ns comm_ns comm_comp_ns step_ns"), Rows: [][]any{
		{"t", int64(0), int64(0), "", int64(21_000_000), int64(0), int64(21_000_000), int64(0), int64(21_000_000), int64(0)},
		{"t", int64(1), int64(0), "", int64(27_200_000), int64(0), int64(27_200_000), int64(0), int64(27_200_000), int64(0)},
	}}
	for _, f := range findings.Evaluate(evidence.Rollup(b, evidence.Filter{}), nil) {
		if f.Rule == "rank_straggler" {
			if f.Rank != 1 || !strings.Contains(f.Observation, "29.5% more than rank 0 (21.0 ms), the other of the 2 ranks loaded") {
				t.Errorf("straggler finding: rank %d, %q", f.Rank, f.Observation)
			}
			return
		}
	}
	t.Error("no straggler finding")
}
