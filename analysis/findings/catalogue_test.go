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
// sql/perfetto_anchor.sql documents and selects.
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
	var want []string
	for k := range findings.AnchorWords {
		want = append(want, k)
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
	fs := eval(bundle("training", "cuda", "Tesla V100-SXM2-16GB", 60_000_000, 40_000_000, map[string]*table.Table{"kernels": kernels, "gaps": gaps}), nil)
	if len(fs) < 2 {
		t.Fatalf("want the fp32 and host-wait findings, got %s", rules(fs))
	}
	for _, f := range fs {
		if findings.RuleOf(f.Rule) == nil {
			t.Errorf("finding of rule %q has no row", f.Rule)
		}
	}
}

// stepOf runs rule's per-step measure over a bundle holding the one row
// given (step 0 of rank 0 of trace t) in area and reports whether the
// measure counted it.
func stepOf(t *testing.T, rule, area, columns string, row ...any) bool {
	t.Helper()
	r := findings.RuleOf(rule)
	if r == nil || r.Step == nil {
		t.Fatalf("rule %s has no per-step measure", rule)
	}
	b := evidence.NewBundle()
	b.Tables[area] = &table.Table{Columns: cols("trace rank step " + columns), Rows: [][]any{append([]any{"t", int64(0), int64(0)}, row...)}}
	return r.Step.Values(b, "t", 0)[0] != 0
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
	for _, n := range kernelNames {
		counted := stepOf(t, "fp32_no_tensor_cores", "kernels", "name total_ns", n, int64(1000))
		flagged := findings.RuleOf("fp32_no_tensor_cores").Marks.Event(findings.Event{Kind: "kernel", Name: n, Class: "COMP"})
		if counted != flagged {
			t.Errorf("fp32_no_tensor_cores: %q counted by the measure %v, flagged %v", n, counted, flagged)
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
		counted := stepOf(t, "pageable_copies", "memcpy", "src dst host_ns", c.src, c.dst, int64(1000))
		flagged := findings.RuleOf("pageable_copies").Marks.Event(findings.Event{Kind: "gpu_memcpy", Name: c.name})
		if counted != flagged {
			t.Errorf("pageable_copies: %q counted by the measure %v, flagged %v", c.name, counted, flagged)
		}
	}
	for _, rule := range []string{"host_bound_idle", "launch_bound"} {
		for _, cat := range []string{"host_wait", "kernel_wait", "other"} {
			counted := stepOf(t, rule, "gaps", "category idle_ns", cat, int64(1000))
			if flagged := findings.RuleOf(rule).Marks.Gap(cat); counted != flagged {
				t.Errorf("%s: gap category %s counted by the measure %v, flagged %v", rule, cat, counted, flagged)
			}
		}
	}
	for _, n := range []string{"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "enumerate(DataPipe)#ShardingFilter", "DataLoader", "aten::copy_"} {
		counted := stepOf(t, "dataloader_share", "ops", "name incl_ns", n, int64(1000))
		if flagged := findings.RuleOf("dataloader_share").Marks.Event(findings.Event{Kind: "cpu_op", Name: n}); counted != flagged {
			t.Errorf("dataloader_share: %q counted by the measure %v, flagged %v", n, counted, flagged)
		}
	}
	// The sync area's blocking column is tb_sync_call of views.sql with
	// the copy check; SyncBlocking is its Go side (analysis/crossview's
	// classify_sql_test.go runs both over the same calls).
	calls := []struct {
		kind, api, name, copy string
		blocking              bool
	}{
		{"runtime", "sync", "cudaStreamSynchronize", "", true},
		{"runtime", "sync", "cudaStreamWaitEvent", "", false},
		{"runtime", "memcpy", "cudaMemcpy", "Memcpy HtoD (Pinned -> Device)", true},
		{"runtime", "memcpy", "hipMemcpyWithStream", "", true},
		{"runtime", "memcpy", "cudaMemcpyAsync", "Memcpy DtoH (Device -> Pinned)", true},
		{"runtime", "memcpy", "cudaMemcpyAsync", "Memcpy HtoD (Pageable -> Device)", true},
		{"runtime", "memcpy", "cudaMemcpyAsync", "Memcpy HtoD (Pinned -> Device)", false},
		{"runtime", "launch", "cudaLaunchKernel", "", false},
		{"cpu_op", "", "aten::item", "", false},
	}
	for _, c := range calls {
		counted := stepOf(t, "sync_bound_loop", "sync", "blocking blocked_ns gpu_gap_ns", c.blocking, int64(1000), int64(0))
		flagged := findings.SyncBlocking(findings.Event{Kind: c.kind, API: c.api, Name: c.name, Copy: c.copy})
		if counted != flagged {
			t.Errorf("sync_bound_loop: %s (copy %q) counted by the measure %v, flagged %v", c.name, c.copy, counted, flagged)
		}
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
		{"t", int64(0), "training", "cuda"}, {"t", int64(1), "training", "cuda"}, {"t", int64(2), "training", "cuda"}, {"t", int64(3), "training", "cuda"}}}
	b.Tables["ranks"] = &table.Table{Columns: cols("trace rank step phase busy_ns idle_ns compute_ns comm_ns comm_comp_ns step_ns"), Rows: [][]any{
		{"t", int64(0), int64(0), "", int64(10_000_000), int64(0), int64(10_000_000), int64(0), int64(10_000_000), int64(0)},
		{"t", int64(1), int64(0), "", int64(20_000_000), int64(0), int64(20_000_000), int64(0), int64(20_000_000), int64(0)},
		{"t", int64(2), int64(0), "", int64(30_000_000), int64(0), int64(30_000_000), int64(0), int64(30_000_000), int64(0)},
		{"t", int64(3), int64(0), "", int64(0), int64(0), int64(0), int64(0), int64(0), int64(0)},
	}}
	if got := findings.RuleOf("rank_straggler").Step.Values(b, "t", 2)[0]; got != 10_000_000 {
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
