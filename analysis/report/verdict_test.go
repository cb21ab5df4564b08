package report

import (
	"bytes"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/findings"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/internal/testutil"
)

// TestDemoteReachesTheEvidenceTable: an issue the cross-check caps to a
// hypothesis reads hypothesis in the Evidence table's interpretation too,
// not confirmed next to an issue marked (hypothesis).
func TestDemoteReachesTheEvidenceTable(t *testing.T) {
	title := "Host syncs drain the GPU and leave it idle until the next launch"
	d := &Doc{
		Confirmed: []string{title + ": the gap starts inside the sync", "Host copies go through pageable memory and block the host"},
		Evidence: []EvidenceRow{
			{Area: "Synchronization waits", Interpretation: title + " (critical, confirmed); see the issues above."},
			{Area: "Memory copies", Interpretation: "Host copies go through pageable memory and block the host (minor, confirmed); see the issues above."},
		},
	}
	demote(d, title)
	if got := d.Evidence[0].Interpretation; got != title+" (critical, hypothesis); see the issues above." {
		t.Errorf("sync row = %q, want the issue as a hypothesis", got)
	}
	if got := d.Evidence[1].Interpretation; !strings.Contains(got, "(minor, confirmed)") {
		t.Errorf("another issue's row changed: %q", got)
	}
	if len(d.Confirmed) != 1 || len(d.Hypotheses) != 1 || !strings.HasPrefix(d.Hypotheses[0], title) {
		t.Errorf("Confirmed %q, Hypotheses %q: want the sync claim moved", d.Confirmed, d.Hypotheses)
	}
}

// Expected Impact states each critical issue as a share of the time its
// finding measured it on, never as shares of one slice; issues sharing one
// GPU idle time count it once, and a finding without a measured share says
// so instead of printing its ranking weight.
func TestExpectedImpactNamesEachShare(t *testing.T) {
	crit := []evidence.Finding{
		{Rule: "comm_not_overlapped", Impact: 0.59, ImpactOf: "the GPU span (trace t, rank 1, whole trace)"},
		{Rule: "host_bound_idle", Impact: 0.758, ImpactOf: "the GPU span the rules judge (trace t, rank 7, whole trace)"},
		{Rule: "launch_bound", Impact: 0.758, ImpactOf: "the GPU span (trace t, rank 7, whole trace)"},
		{Rule: "kernel_slow_instances", Impact: 0.05},
	}
	got := expectedImpact(crit)
	testutil.Contains(t, "expected impact", got,
		"issue 1 up to 59.0% of the GPU span (trace t, rank 1, whole trace)",
		"issue 2 up to 75.8% of the GPU span the rules judge (trace t, rank 7, whole trace)",
		"issue 3 is part of the same GPU idle time as issue 2",
		"issue 4: its share of time is not measured",
		"shares of different times, so they do not add up")
	if strings.Contains(got, "5.0%") {
		t.Errorf("a ranking weight is printed as a share:\n%s", got)
	}
	one := expectedImpact(crit[:1])
	if want := "The critical issue accounts for up to 59.0% of the GPU span (trace t, rank 1, whole trace)"; !strings.HasPrefix(one, want) {
		t.Errorf("one issue: %q, want prefix %q", one, want)
	}
	// A fix that reaches less than the finding accounts for says so, and
	// bounds the gain by its reach (xdit_sd35_mi300x: a replay of the
	// compiled regions, not the eager text encoders).
	reached := crit[0]
	reached.FixReach, reached.FixReachOf = 0.312, "the GPU idle inside the compiled regions"
	testutil.Contains(t, "fix reach", expectedImpact([]evidence.Finding{reached}),
		"up to 59.0% of the GPU span (trace t, rank 1, whole trace); the fix offered reaches at most 31.2% of that same span (the GPU idle inside the compiled regions), so applying it should shorten that time by at most 31.2% of the span")
	testutil.Contains(t, "fix reach of issue 1", expectedImpact([]evidence.Finding{reached, crit[1]}),
		"issue 1 up to 59.0% of the GPU span (trace t, rank 1, whole trace), its fix at most 31.2% (the GPU idle inside the compiled regions)")
	// A fix that removes more than the finding's share says what, after it.
	beyond := crit[0]
	beyond.Beyond = "its fix also runs the model once instead of 5 times"
	testutil.Contains(t, "beyond, one issue", expectedImpact([]evidence.Finding{beyond}),
		"(trace t, rank 1, whole trace); fixing it should shorten that time by at most that share, and its fix also runs the model once instead of 5 times.")
	testutil.Contains(t, "beyond, issue 1", expectedImpact([]evidence.Finding{beyond, crit[1]}),
		"issue 1 up to 59.0% of the GPU span (trace t, rank 1, whole trace); its fix also runs the model once instead of 5 times; issue 2",
		"by at most its share (and the GPU work its fix also removes)")
	reached.FixReach = 0.7 // more than the finding's share: nothing to say
	if got := expectedImpact([]evidence.Finding{reached}); strings.Contains(got, "fix offered reaches") {
		t.Errorf("a reach above the impact is stated: %q", got)
	}
}

// TestFollowUpImpactMeasured: without a critical issue, Expected Impact
// gives the largest follow-up's measured share instead of promising small
// gains (trace_diff_control_a100: 18.9% of its GPU span in exposed
// communication, below the critical 25%).
func TestFollowUpImpactMeasured(t *testing.T) {
	minor := []evidence.Finding{
		{Rule: "host_bound_idle", Title: "The GPU waits for the CPU to launch work", Impact: 0.143, ImpactOf: "the GPU span (trace t, rank 3, whole trace)"},
		{Rule: "comm_not_overlapped", Title: "Communication is exposed: computation does not hide it", Impact: 0.189, ImpactOf: "the GPU span (trace t, rank 3, whole trace)"},
	}
	got := followUpImpact(minor)
	if want := "No critical issue. The largest follow-up (Communication is exposed: computation does not hide it) accounts for up to 18.9% of the GPU span (trace t, rank 3, whole trace)."; !strings.Contains(got, want) || strings.Contains(got, "small gains") {
		t.Errorf("follow-up impact %q, want it to contain %q", got, want)
	}
	if got := followUpImpact(nil); !strings.Contains(got, "no follow-up") {
		t.Errorf("no finding: %q", got)
	}
	// A follow-up whose fix is another capture names no lever
	// (event_sync_multi_stream: 94.6% of a 19.5 ms span of 6 GPU events).
	capped := minor[1]
	capped.Impact, capped.Fix = 0.946, "None from this capture (only 6 GPU events over 19.5 ms: too little to judge steady state): profile the steady state."
	if got := followUpImpact([]evidence.Finding{minor[0], capped}); !strings.Contains(got, "The largest follow-up (The GPU waits for the CPU to launch work) accounts for up to 14.3%") {
		t.Errorf("a follow-up without a fix named as the largest: %q", got)
	}
	if got := followUpImpact([]evidence.Finding{capped}); !strings.Contains(got, "no lever from this capture") || strings.Contains(got, "94.6%") {
		t.Errorf("only follow-ups without a fix: %q", got)
	}
}

// TestReferEqualFixes: an issue whose fix is word for word a critical
// issue's above it refers to that issue instead of repeating the fix; a
// different fix with the same code refers to that issue for the code; a
// different fix, or the same text with another snippet, stays.
func TestReferEqualFixes(t *testing.T) {
	fix, snip := "Profile decode steps without Python stacks.", "vllm serve MODEL"
	d := &Doc{
		Critical: []Issue{
			{ID: "launch_bound", Fix: fix, Snippet: snip},
			{ID: "host_bound_idle", Fix: fix, Snippet: snip},
			{ID: "other", Fix: fix, Snippet: "another snippet"},
			{ID: "same_code", Fix: "Fix the input pipeline first.", Snippet: snip},
		},
		FollowUps: []Issue{{ID: "minor", Fix: fix, Snippet: snip}, {ID: "own", Fix: "Something else."}},
	}
	referEqualFixes(d)
	want := []struct{ fix, snippet string }{
		{fix, snip},
		{"Issue 1's fix above applies here as well.", ""},
		{fix, "another snippet"},
		{"Fix the input pipeline first. The code is issue 1's, above.", ""},
		{"Issue 1's fix above applies here as well.", ""},
		{"Something else.", ""},
	}
	got := append(append([]Issue{}, d.Critical...), d.FollowUps...)
	for i, w := range want {
		if got[i].Fix != w.fix || got[i].Snippet != w.snippet {
			t.Errorf("issue %s: fix %q snippet %q, want %q %q", got[i].ID, got[i].Fix, got[i].Snippet, w.fix, w.snippet)
		}
	}
}

// The next lever names the heaviest compute or memory kernel, never a
// communication kernel (its time includes waiting for the other ranks),
// and no kernel at all from a capture with under a millisecond of kernels.
func TestNextLeverFromKernels(t *testing.T) {
	kernels := func(rows ...[]any) *evidence.Evidence {
		return &evidence.Evidence{Tables: evidence.Tables{"kernels": &table.Table{Columns: testutil.Columns("name class total_ns"), Rows: rows}}}
	}
	for _, c := range []struct {
		name      string
		ev        *evidence.Evidence
		want, not []string
	}{
		{"compute kernel", kernels([]any{"gemm", "COMP", int64(6e6)}, []any{"copy", "MEM", int64(4e6)}),
			[]string{"the kernel gemm holds 60.0% of the kernels' summed time (10.000 ms", "Nsight Compute"}, []string{"communication"}},
		{"a collective holds more", kernels([]any{"ncclDevKernel_AllReduce", "COMM", int64(8e6)}, []any{"gemm", "COMP", int64(2e6)}),
			[]string{"the kernel gemm holds 20.0%", "communication kernel ncclDevKernel_AllReduce holds more (80.0%)", "no instance in this slice splits from transfer: load the traces of every rank"}, []string{"the collectives area splits"}},
		{"a collective holds more, matched across ranks", func() *evidence.Evidence {
			ev := kernels([]any{"ncclDevKernel_AllReduce", "COMM", int64(8e6)}, []any{"gemm", "COMP", int64(2e6)})
			ev.Tables["collectives"] = &table.Table{Columns: testutil.Columns("collective matched"), Rows: [][]any{{"all_reduce", int64(3)}}}
			return ev
		}(), []string{"its time includes waiting for the other ranks: the collectives area splits it into wait and transfer"}, []string{"no instance"}},
		{"a copy holds more (trace_diff_control_a100)", kernels([]any{"Memcpy HtoD (Pinned -> Device)", "MEM", int64(8e6)}, []any{"gemm", "COMP", int64(2e6)}),
			[]string{"the kernel gemm holds 20.0%", "The copy Memcpy HtoD (Pinned -> Device) holds 80.0%: a copy is no kernel to profile"}, []string{"kernel Memcpy"}},
		{"only copies", kernels([]any{"Memcpy DtoD (Device -> Device)", "MEM", int64(8e6)}),
			[]string{"Every GPU operation is a copy or memset", "Memcpy DtoD"}, []string{"Nsight Compute"}},
		{"only collectives", kernels([]any{"ncclDevKernel_AllReduce", "COMM", int64(8e6)}),
			[]string{"Every kernel is a communication kernel", "Its time may include waiting for the other ranks"}, []string{"Nsight Compute"}},
		{"a tiny capture", kernels([]any{"FillFunctor", "COMP", int64(8_000)}, []any{"gemm", "COMP", int64(21_000)}),
			[]string{"0.029 ms of kernel time, too little"}, []string{"FillFunctor", "Nsight Compute"}},
		// cpu_only: steps and operators, no GPU work (its gloo all-reduces);
		// the step's self time is no operator's, and out of the share.
		{"no GPU work", &evidence.Evidence{Tables: evidence.Tables{"ops": &table.Table{Columns: testutil.Columns("name self_ns"),
			Rows: [][]any{{"ProfilerStep#551", int64(9e6)}, {"gloo:all_reduce", int64(6e6)}, {"aten::mm", int64(2e6)}}}}},
			[]string{"no GPU work, so the next lever is on the host", "gloo:all_reduce (6.000 ms, 75.0% of the 8.000 ms operators' self time", "a collective gloo runs on the CPU"}, []string{"step annotations", "ProfilerStep"}},
		// cpu_only as loaded: gloo:all_reduce is a user annotation, and
		// still the collective, not a scope around operators.
		{"no GPU work, the gloo range an annotation", &evidence.Evidence{Tables: evidence.Tables{"ops": &table.Table{Columns: testutil.Columns("name annotation self_ns"),
			Rows: [][]any{{"gloo:all_reduce", true, int64(2_135e6)}, {"ProfilerStep#551", true, int64(210e6)}, {"aten::empty", false, int64(4_000)}}}}},
			[]string{"the CPU operator with the most self time is gloo:all_reduce", "ms operators' self time, summed over every host thread (threads that run side by side add up)"}, []string{"aten::empty"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, _ := nextFromKernels(c.ev, nil, "Nsight Compute (ncu)")
			containsAll(t, got, c.want, c.not)
		})
	}
}

// The next lever's copy sentence says what a copy costs only where the
// kernels' streams show it: copies on the rank's compute stream run in line
// with its kernels (trace_diff_test_v100: 4,645 DtoD copies on stream 7,
// the compute stream), copies on a stream of their own beside them; rows
// without a stream, or copies on the compute stream and another, say
// nothing of the cost.
func TestNextLeverCopyStream(t *testing.T) {
	const dtod = "Memcpy DtoD (Device -> Device)"
	row := func(rank, stream int64, name, class string, ns int64) []any {
		return []any{"t", rank, int64(1), "", stream, name, class, ns}
	}
	inLine := "the compute stream, in line with its kernels and serialised with them, so their time adds to the step"
	for _, c := range []struct {
		name      string
		cols      string
		rows      [][]any
		want, not []string
	}{
		{"on the compute stream (trace_diff_test_v100)", "trace rank step phase stream name class total_ns",
			[][]any{row(0, 7, "gemm", "COMP", 5e6), row(0, 7, dtod, "MEM", 6e6), row(0, 20, "other", "COMP", 1e6)},
			[]string{"the memcpy area gives its bandwidth and stream (its copies run on stream 7, " + inLine + ")."}, []string{"costs little"}},
		{"on a stream of its own", "trace rank step phase stream name class total_ns",
			[][]any{row(0, 7, "gemm", "COMP", 5e6), row(0, 20, dtod, "MEM", 6e6)},
			[]string{"(its copies run on stream 20, not the compute stream 7: a copy beside compute costs little)."}, []string{"in line"}},
		{"each rank on its compute stream", "trace rank step phase stream name class total_ns",
			[][]any{row(0, 7, "gemm", "COMP", 5e6), row(0, 7, dtod, "MEM", 6e6), row(1, 9, "gemm", "COMP", 5e6), row(1, 9, dtod, "MEM", 6e6)},
			[]string{"(its copies run on each rank's compute stream, in line"}, []string{"costs little"}},
		{"on the compute stream and another: nothing of the cost", "trace rank step phase stream name class total_ns",
			[][]any{row(0, 7, "gemm", "COMP", 5e6), row(0, 7, dtod, "MEM", 3e6), row(0, 20, dtod, "MEM", 3e6)},
			[]string{"the memcpy area gives its bandwidth and stream."}, []string{"costs little", "in line", "(its copies"}},
		{"no stream column: nothing of the cost", "trace rank step phase name class total_ns",
			[][]any{{"t", int64(0), int64(1), "", "gemm", "COMP", int64(5e6)}, {"t", int64(0), int64(1), "", dtod, "MEM", int64(6e6)}},
			[]string{"the memcpy area gives its bandwidth and stream."}, []string{"costs little", "in line", "(its copies"}},
		{"only copies: no compute stream to compare", "trace rank step phase stream name class total_ns",
			[][]any{row(0, 7, dtod, "MEM", 6e6)},
			[]string{"Every GPU operation is a copy or memset", "the memcpy area gives its bandwidth and stream."}, []string{"costs little", "in line"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := evidence.NewBundle()
			b.Tables["kernels"] = &table.Table{Columns: testutil.Columns(c.cols), Rows: c.rows}
			got, _ := nextFromKernels(evidence.Rollup(b, evidence.Filter{}), b.Table("kernels"), "Nsight Compute (ncu)")
			containsAll(t, got, c.want, c.not)
		})
	}
	// A view of the copy's stream alone still names the rank's compute
	// stream, not the copy's as the one the view shows.
	b := evidence.NewBundle()
	b.Tables["kernels"] = &table.Table{Columns: testutil.Columns("trace rank step phase stream name class total_ns"),
		Rows: [][]any{row(0, 7, "gemm", "COMP", 5e6), row(0, 20, "other", "COMP", 1e6), row(0, 20, dtod, "MEM", 6e6)}}
	got, _ := nextFromKernels(evidence.Rollup(b, evidence.Filter{HasStream: true, Stream: 20}), b.Table("kernels"), "Nsight Compute (ncu)")
	if w := "(its copies run on stream 20, not the compute stream 7: a copy beside compute costs little)."; !strings.Contains(got, w) {
		t.Errorf("stream 20's view: missing %q in %q", w, got)
	}
}

// A sync-bound cross-check over a slice whose top issue is host-side (the
// DataLoader on the loop's thread, host-bound idle) is the same idle seen
// from where it begins, not another constraint.
func TestReconcileSyncOverHostIssue(t *testing.T) {
	cv := &crossview.Result{Check: crossview.Check{Verdict: crossview.VerdictSync, Label: crossview.Confirmed, Metrics: crossview.Metrics{GPUTimeNs: 1}}}
	for _, c := range []struct {
		top, want string
	}{
		{"dataloader_share", "the GPU's idle gaps open inside sync calls and last until the host launches again"},
		{"host_bound_idle", "the GPU's idle gaps open inside sync calls and last until the host launches again"},
		{"fp32_no_tensor_cores", "The CPU cross-check names another constraint for this slice: sync-bound (confirmed)"},
	} {
		d := &Doc{}
		reconcile(d, cv, crossview.Confirmed, "", []evidence.Finding{{Rule: c.top, Status: "hypothesis", Severity: "critical"}})
		if got := strings.Join(d.Summary, "\n"); !strings.Contains(got, c.want) {
			t.Errorf("top issue %s: summary %q, want %q", c.top, got, c.want)
		}
	}
}

// Python stacks recorded as the operators' Call stack args (2021 format)
// inflate host time as python_function events do: the host-bound findings
// are at most hypotheses there too, and the others keep their status.
func TestCapCallStacks(t *testing.T) {
	found := func() []evidence.Finding {
		return []evidence.Finding{{Rule: "host_bound_idle", Status: "confirmed"}, {Rule: "launch_bound", Status: "confirmed"}, {Rule: "pageable_copies", Status: "confirmed"}}
	}
	cv := func(frames, callStacks int64) *crossview.Result {
		return &crossview.Result{Check: crossview.Check{Metrics: crossview.Metrics{PythonFrames: frames, CallStackOps: callStacks}}}
	}
	for _, c := range []struct {
		name string
		cv   *crossview.Result
		want []string
	}{
		{"call stacks", cv(0, 11_910), []string{"hypothesis", "hypothesis", "confirmed"}},
		{"no stacks", cv(0, 0), []string{"confirmed", "confirmed", "confirmed"}},
		{"python frames: the capture gate's", cv(500, 0), []string{"confirmed", "confirmed", "confirmed"}},
		{"no cross-view", nil, []string{"confirmed", "confirmed", "confirmed"}},
	} {
		fs := capCallStacks(found(), c.cv)
		for i, f := range fs {
			if f.Status != c.want[i] {
				t.Errorf("%s: %s is %s, want %s", c.name, f.Rule, f.Status, c.want[i])
			}
		}
		if c.want[0] == "hypothesis" && !strings.Contains(fs[0].Caveat, "Call stack args of 11910 operators") {
			t.Errorf("%s: caveat %q does not say why", c.name, fs[0].Caveat)
		}
	}
}

// DDP's buffer broadcast in the forward opens the longest gaps of
// nccl_data_a100 (aten::unflatten_dense_tensors under
// DistributedDataParallel.forward): the host-side fixes name
// broadcast_buffers=False, where the operators show DDP and only there.
func TestDDPBufferFix(t *testing.T) {
	cv := &crossview.Result{Check: crossview.Check{TopGaps: []crossview.Gap{
		{DurNs: 15_700_000, Host: []string{"aten::unflatten_dense_tensors", "aten::narrow", "aten::slice"}},
		{DurNs: 7_600_000, Host: []string{"DistributedDataParallel.forward", "aten::unflatten_dense_tensors"}},
		{DurNs: 2_000_000, Host: []string{"ProfilerStep#3", "aten::conv2d"}},
	}}}
	for _, ddp := range []bool{true, false} {
		b := evidence.NewBundle()
		wl := &table.Table{Columns: []table.Column{{Name: "trace"}, {Name: "rank"}, {Name: "feature"}}}
		if ddp {
			wl.Rows = [][]any{{"t", int64(0), "ddp"}}
		}
		b.Tables["workload"] = wl
		d := &Doc{Critical: []Issue{{ID: "host_bound_idle", Fix: "Shorten the CPU work.", Snippet: "model = torch.compile(model)"}, {ID: "pageable_copies", Fix: "Pin."}}}
		ddpFix(d, b, cv)
		named := strings.Contains(d.Critical[0].Fix, "2 of the cross-check's 3 longest GPU gaps (23.300 ms) open while DDP broadcasts") &&
			strings.HasSuffix(d.Critical[0].Snippet, "broadcast_buffers=False)") && strings.HasPrefix(d.Critical[0].Snippet, "model = torch.compile")
		if named != ddp || strings.Contains(d.Critical[1].Fix, "broadcast") {
			t.Errorf("DDP %v: fixes %q / %q, snippet %q", ddp, d.Critical[0].Fix, d.Critical[1].Fix, d.Critical[0].Snippet)
		}
	}
}

// DDP copies each gradient out of its bucket after the bucket's
// all-reduce (nccl_data_a100: 483 copy_bucket_to_grad calls): the
// host-side fixes name gradient_as_bucket_view=True, where the operators
// show DDP and only there, in one DDP line with the buffer broadcast's
// argument where both apply.
func TestDDPBucketViewFix(t *testing.T) {
	for _, tc := range []struct {
		ddp, broadcast bool
		snippet        string
	}{
		{true, false, "model = DDP(model, device_ids=[rank], gradient_as_bucket_view=True)"},
		{true, true, "model = DDP(model, device_ids=[rank], broadcast_buffers=False, gradient_as_bucket_view=True)"},
		{false, false, ""},
	} {
		b := evidence.NewBundle()
		wl := &table.Table{Columns: []table.Column{{Name: "trace"}, {Name: "rank"}, {Name: "feature"}}}
		if tc.ddp {
			wl.Rows = [][]any{{"t", int64(0), "ddp"}}
		}
		b.Tables["workload"] = wl
		b.Tables["ops"] = &table.Table{Columns: []table.Column{{Name: "trace"}, {Name: "rank"}, {Name: "name"}, {Name: "count"}, {Name: "incl_ns"}},
			Rows: [][]any{{"t", int64(0), "torch.distributed.ddp.reducer::copy_bucket_to_grad", int64(483), int64(26_400_000)}}}
		var cv *crossview.Result
		if tc.broadcast {
			cv = &crossview.Result{Check: crossview.Check{TopGaps: []crossview.Gap{{DurNs: 15_700_000, Host: []string{"aten::unflatten_dense_tensors"}}}}}
		}
		d := &Doc{Critical: []Issue{{ID: "host_bound_idle", Fix: "Shorten the CPU work."}}}
		ddpFix(d, b, cv)
		named := strings.Contains(d.Critical[0].Fix, "(483 torch.distributed.ddp.reducer::copy_bucket_to_grad calls, 26.400 ms of host time in the slice")
		if named != tc.ddp || d.Critical[0].Snippet != tc.snippet {
			t.Errorf("DDP %v, broadcast %v: fix %q, snippet %q", tc.ddp, tc.broadcast, d.Critical[0].Fix, d.Critical[0].Snippet)
		}
	}
}

// TestIdleUncaused: a slice without a critical issue says where a rank idles
// past the host-wait threshold while no finding names a cause on it, and
// says nothing where a finding does or the idle is below the threshold.
func TestIdleUncaused(t *testing.T) {
	mk := func(busy, idle, hw int64) *evidence.Evidence {
		b := evidence.NewBundle()
		var cols []table.Column
		for _, c := range []string{"trace", "rank", "step", "phase", "busy_ns", "idle_ns", "host_wait_ns"} {
			cols = append(cols, table.Column{Name: c})
		}
		b.Tables["ranks"] = &table.Table{Name: "ranks", Columns: cols, Rows: [][]any{{"job", int64(0), int64(-1), "", busy, idle, hw}}}
		return evidence.Rollup(b, evidence.Filter{})
	}
	hostBound := evidence.Finding{Rule: "host_bound_idle", Trace: "job", Rank: 0}
	other := evidence.Finding{Rule: "memory_peak", Trace: "job", Rank: 0}
	cases := []struct {
		name           string
		busy, idle, hw int64
		found          []evidence.Finding
		want           string // a part of the line; "" for no line
	}{
		{"idle, no cause", 60e6, 40e6, 4e6, nil, "idle 40.000 ms, 40.0% of the 100.000 ms span the rules judge (rank 0 of job), and no rule names the cause: host waits (launch calls that started after the GPU went idle) are 10.0% of it"},
		{"idle, a finding that does not name idle", 60e6, 40e6, 4e6, []evidence.Finding{other}, "no rule names the cause"},
		{"idle named by a rule", 60e6, 40e6, 4e6, []evidence.Finding{hostBound}, ""},
		{"idle below the threshold", 95e6, 5e6, 0, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := idleUncaused(mk(tc.busy, tc.idle, tc.hw), nil, tc.found, 0.10)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want a line with %q", got, tc.want)
			}
		})
	}
}

// A cross-check verdict that the top issue does not share is named in the
// summary even where a lower critical issue shares it (dlrm_8rank: host-
// bound issue 1, communication-bound cross-check, issue 2 exposed
// communication), and beside a comm-bound reading the summary says how
// much of that issue's communication is waiting for late ranks.
func TestReconcileLowerIssueSharesVerdict(t *testing.T) {
	cv := &crossview.Result{Check: crossview.Check{Verdict: crossview.VerdictComm, Label: crossview.Hypothesis, Metrics: crossview.Metrics{GPUTimeNs: 1}}}
	comm := evidence.Finding{Rule: "comm_not_overlapped", Status: "confirmed", Severity: "critical", Rank: 1,
		Title:       "Rank 1's exposed communication is mostly waiting for late ranks to arrive, not transfer",
		Observation: "Communication kernels took 11.3 ms. Of its 8 matched collective instances (11.3 ms), 11.1 ms (98.1%) was waiting for the last rank to arrive and 0.211 ms transfer after it. Rank 7 arrived last in 4 of them.",
		Wait:        "of rank 1's 11.3 ms of matched collective time, 11.1 ms (98.1%) was waiting for late ranks to arrive and 0.211 ms transfer"}
	d := &Doc{}
	reconcile(d, cv, crossview.Hypothesis, "", []evidence.Finding{{Rule: "host_bound_idle", Status: "confirmed", Severity: "critical"}, comm})
	got := strings.Join(d.Summary, "\n")
	for _, w := range []string{
		"The CPU cross-check reads this slice differently, as a hypothesis: communication-bound (hypothesis), the constraint of issue 2",
		"Issue 2 qualifies that reading: of rank 1's 11.3 ms of matched collective time, 11.1 ms (98.1%) was waiting for late ranks to arrive and 0.211 ms transfer",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("summary %q, want %q", got, w)
		}
	}
	// The top issue sharing the reading leaves the summary alone.
	d = &Doc{}
	reconcile(d, cv, crossview.Hypothesis, "", []evidence.Finding{comm, {Rule: "host_bound_idle", Status: "confirmed", Severity: "critical"}})
	if len(d.Summary) != 0 {
		t.Errorf("top issue shares the verdict, summary %q", d.Summary)
	}
	// Transfer-dominated communication gets no skew sentence.
	comm.Title, comm.Observation, comm.Wait = "Communication is exposed: computation does not hide it", "Communication kernels took 11.3 ms.", ""
	d = &Doc{}
	reconcile(d, cv, crossview.Hypothesis, "", []evidence.Finding{{Rule: "host_bound_idle", Status: "confirmed", Severity: "critical"}, comm})
	if got := strings.Join(d.Summary, "\n"); !strings.Contains(got, "reads this slice differently") || strings.Contains(got, "qualifies") {
		t.Errorf("transfer-bound issue 2, summary %q", got)
	}
}

// A cross-check reading that only a follow-up shares names that
// follow-up and says the rules rate it under their critical threshold
// (resnet50_num_workers_4: fp32 GEMMs on the SIMT path first, a
// host/launch-bound cross-check).
func TestReconcileFollowUpSharesVerdict(t *testing.T) {
	cv := &crossview.Result{Check: crossview.Check{Verdict: crossview.VerdictHost, Label: crossview.Hypothesis, Metrics: crossview.Metrics{GPUTimeNs: 1}}}
	d := &Doc{FollowUps: []Issue{{ID: "launch_bound", Title: "Kernels are shorter than their launches"}, {ID: "host_bound_idle", Title: "The GPU waits for the CPU to launch work"}}}
	reconcile(d, cv, crossview.Hypothesis, "", []evidence.Finding{{Rule: "fp32_simt", Status: "confirmed", Severity: "critical"}})
	got := strings.Join(d.Summary, "\n")
	if !strings.Contains(got, "host/launch-bound (hypothesis), the constraint of follow-up 1 (Kernels are shorter than their launches), which the rules rate below their critical threshold") {
		t.Errorf("summary %q", got)
	}
}

// A launching thread waiting for the DataLoader's workers is the
// cross-check's waiting-for-work and the DataLoader issue's wait: the
// summary ties the two (resnet_2080ti, issue 2).
func TestReconcileWaitingIsTheDataLoader(t *testing.T) {
	cv := &crossview.Result{Check: crossview.Check{Verdict: crossview.VerdictWaiting, Label: crossview.Confirmed, Metrics: crossview.Metrics{GPUTimeNs: 1}}}
	d := &Doc{}
	reconcile(d, cv, crossview.Confirmed, "", []evidence.Finding{{Rule: "host_bound_idle", Status: "confirmed", Severity: "critical"}, {Rule: "dataloader_share", Status: "hypothesis", Severity: "critical"}})
	if got := strings.Join(d.Summary, "\n"); !strings.Contains(got, "waiting-for-work (confirmed), the constraint of issue 2") {
		t.Errorf("summary %q", got)
	}
}

// The kernel profiler the next lever names runs on the traces' platform:
// neither Nsight nor rocprof on an MTIA device (mtia_single_rank).
func TestKernelProfilerOfThePlatform(t *testing.T) {
	for _, c := range []struct {
		platforms []string
		want      string
	}{
		{[]string{"cuda"}, "Nsight Compute (ncu)"},
		{[]string{"rocm"}, "rocprof-compute (rocprofv3 counters)"},
		{[]string{"mtia"}, "the MTIA toolchain's kernel profiler"},
		{[]string{"cuda", "rocm"}, "the platform's kernel profiler (Nsight Compute on CUDA, rocprof-compute on ROCm)"},
	} {
		var traces []TraceMeta
		for _, p := range c.platforms {
			traces = append(traces, TraceMeta{Capture: []string{"platform " + p}})
		}
		if got := kernelProfiler(traces); got != c.want {
			t.Errorf("%v: %q, want %q", c.platforms, got, c.want)
		}
	}
}

// The next lever's profiler command: ncu on CUDA only, the kernel found by
// a regular expression over its demangled name that holds its readable part.
func TestKernelProfileCmd(t *testing.T) {
	cuda := []TraceMeta{{Capture: []string{"platform cuda"}}}
	rocm := []TraceMeta{{Capture: []string{"platform rocm"}}}
	for _, c := range []struct {
		traces     []TraceMeta
		name, want string // want: the regex; "" for no command
		demangled  string // what ncu matches, where name is mangled
	}{
		{cuda, "void cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_dptp128c_acc::GemmKernel>(dpsk::grouped_gemm::cuda::fp8_dptp128c_acc::GemmKernel::Params)",
			"dpsk::grouped_gemm::cuda::fp8_dptp128c_acc::GemmKernel", ""},
		{cuda, "void at::native::vectorized_elementwise_kernel<4, at::native::sigmoid_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}, std::array<char*, 2ul> >(int)",
			"sigmoid_kernel_cuda", ""},
		{cuda, "void fft2d_c2r_32x32<float, false, false, 0u, false, false>(float*, float2 const*, int)",
			`fft2d_c2r_32x32<float, false, false, 0u, false, false>`, ""},
		{cuda, "volta_sgemm_128x64_nn", "volta_sgemm_128x64_nn", ""},
		{cuda, "gemm'; rm -rf /", "", ""},
		// Written mangled (ns_resolution_v100's cuDNN kernel; vLLM's
		// activation kernel): ncu matches the demangled name, which holds
		// the qualified name KernelName reads, or the function an
		// argument names.
		{cuda, "_ZN19cutlass_cudnn_train6KernelINS_4conv6kernel23ImplicitGemmConvolutionINS1_11threadblock22ImplicitGemmMultistageIEEEEEEvNT_6ParamsE",
			"cutlass_cudnn_train::conv::kernel::ImplicitGemmConvolution",
			"void cutlass_cudnn_train::Kernel<cutlass_cudnn_train::conv::kernel::ImplicitGemmConvolution<cutlass_cudnn_train::conv::threadblock::ImplicitGemmMultistage<> > >(cutlass_cudnn_train::conv::kernel::ImplicitGemmConvolution<cutlass_cudnn_train::conv::threadblock::ImplicitGemmMultistage<> >::Params)"},
		{cuda, "_ZN4vllm18act_and_mul_kernelIN3c108BFloat16ETnPFT_RKS3_EXadL_ZNS_11silu_kernelIS2_EES3_S5_EELb1EEEvPS3_PS4_i",
			"silu_kernel",
			"void vllm::act_and_mul_kernel<c10::BFloat16, &vllm::silu_kernel<c10::BFloat16>, true>(c10::BFloat16*, c10::BFloat16 const*, int)"},
		{rocm, "Cijk_Ailk_Bljk_BBS_BH_MT128x128x32", "", ""},
	} {
		got := kernelProfileCmd(c.traces, c.name, 0, "")
		if c.want == "" {
			if got != "" {
				t.Errorf("%.40q: %q, want no command", c.name, got)
			}
			continue
		}
		if !strings.HasPrefix(got, "ncu --kernel-name-base demangled --kernel-name 'regex:") {
			t.Errorf("%.40q: %q", c.name, got)
			continue
		}
		re := strings.TrimPrefix(got, "ncu --kernel-name-base demangled --kernel-name 'regex:")
		re = re[:strings.IndexByte(re, '\'')]
		subject := c.name
		if c.demangled != "" {
			subject = c.demangled
		}
		if m, err := regexp.MatchString(re, subject); err != nil || !m || re != regexp.QuoteMeta(c.want) {
			t.Errorf("%.40q: regex %q (matches %v, %v), want %q", c.name, re, m, err, regexp.QuoteMeta(c.want))
		}
	}
	// A vLLM trace's kernel is profiled in vLLM's one-batch benchmark.
	vllm := []TraceMeta{{Producer: "vllm", Capture: []string{"platform cuda"}}}
	if got := kernelProfileCmd(vllm, "volta_sgemm_128x64_nn", 0, ""); !strings.Contains(got, "-o kernel vllm bench latency --model MODEL  #") {
		t.Errorf("vLLM: %q", got)
	}
	// A job of 4 ranks runs the benchmark split as the job did
	// (vllm_h100_tp4_rank0: a model that fits in no single GPU).
	if got := kernelProfileCmd(vllm, "volta_sgemm_128x64_nn", 4, " --batch-size 1 --input-len 1049 --output-len 10"); !strings.Contains(got, "-o kernel vllm bench latency --model MODEL --tensor-parallel-size 4 --batch-size 1 --input-len 1049 --output-len 10  # the tensor-parallel size is the trace's world size") || !strings.Contains(got, "the batch and lengths are the window's one sequence") {
		t.Errorf("vLLM, 4 ranks: %q", got)
	}
	sgl := []TraceMeta{{Producer: "sglang", Capture: []string{"platform cuda"}}}
	if got := kernelProfileCmd(sgl, "volta_sgemm_128x64_nn", 8, ""); !strings.Contains(got, "sglang.bench_one_batch --model-path MODEL --tp-size 8") {
		t.Errorf("SGLang, 8 ranks: %q", got)
	}
}

// Key Findings say where the kernel time goes, family by family, the
// largest first; families under 1% join other; none under a millisecond.
func TestKernelFamiliesLine(t *testing.T) {
	kernels := func(rows ...[]any) *evidence.Evidence {
		return &evidence.Evidence{Tables: evidence.Tables{"kernels": &table.Table{Columns: testutil.Columns("name class total_ns"), Rows: rows}}}
	}
	got := kernelFamilies(familySums(kernels(
		[]any{"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", "COMP", int64(6e6)},
		[]any{"ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "COMM", int64(3e6)},
		[]any{"void flash::flash_fwd_kernel<T>(P)", "COMP", int64(0.95e6)},
		[]any{"void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*)", "COMP", int64(0.04e6)},
		[]any{"Memset (Device)", "MEM", int64(0.01e6)},
	)))
	want := "GEMMs and convolutions 60.0%, communication 30.0%, attention 9.5%, other 0.5% of the 10.000 ms summed kernel time"
	if !strings.Contains(got, want) {
		t.Errorf("got %q, want %q in it", got, want)
	}
	if got := kernelFamilies(familySums(kernels([]any{"gemm", "COMP", int64(0.5e6)}))); got != "" {
		t.Errorf("under a millisecond: %q", got)
	}
}

// With no critical issue, a gpu-bound reading the cross-check rates a
// hypothesis is named in the summary with the busy share it rests on
// (sglang_qwen3_prefilldecode_mi300x: 99.7% of the span it judges), as a
// confirmed one is, with how the host was ahead of the GPU (its work
// queued behind the GPU, or its threads blocked on it); one the capture
// gate capped is not (the summary says
// the capture is inconclusive).
func TestReconcileNoCriticalIssue(t *testing.T) {
	m := crossview.Metrics{GPUTimeNs: 1, WallNs: 500_000_000, BusyNs: 498_500_000}
	queued, blocked := m, m
	queued.QueuedWhileBusyNs = 497_000_000
	blocked.BlockedWhileBusyNs = 50_000_000
	// trace_diff_control_a100: busy under the saturated mark, the host
	// ahead of it most of the span.
	ahead := crossview.Metrics{GPUTimeNs: 1, WallNs: 500_000_000, BusyNs: 418_000_000, IdleNs: 82_000_000, QueuedWhileBusyNs: 396_500_000}
	// Its busy time holds 87.9 ms of NCCL kernels running alone, which one
	// rank cannot split into waiting and transfer: the line says so.
	aheadComm := ahead
	aheadComm.CommExposedNs = 94_500_000
	for _, c := range []struct {
		label, capped string
		m             crossview.Metrics
		want          string
		rule          string
	}{
		{crossview.Hypothesis, "", ahead, "The CPU cross-check reads this slice as gpu-bound (hypothesis): the GPU was busy 83.6% of the 500.000 ms GPU span the cross-check judges, with work the host had launched waiting behind it for 79.3% of that span (the host ahead of it) and idle 16.4% of it, and no rule's finding crosses its critical threshold", "host-ahead"},
		{crossview.Hypothesis, "", aheadComm, "the GPU was busy 83.6% of the 500.000 ms GPU span the cross-check judges (94.500 ms of it communication kernels running alone, which may be waiting for other ranks rather than moving data), with work the host had launched", "host-ahead"},
		{crossview.Hypothesis, "", m, "The CPU cross-check reads this slice as gpu-bound (hypothesis): the GPU was busy 99.7% of the 500.000 ms GPU span the cross-check judges, and no rule's finding crosses its critical threshold", ""},
		{crossview.Confirmed, "", queued, "The CPU cross-check reads this slice as gpu-bound (confirmed): the GPU was busy 99.7% of the 500.000 ms GPU span the cross-check judges, with work the host had launched waiting behind it for 99.4% of that span (the host ahead of it), but no rule's finding crosses its critical threshold", ""},
		{crossview.Confirmed, "", blocked, "The CPU cross-check reads this slice as gpu-bound (confirmed): the GPU was busy 99.7% of the 500.000 ms GPU span the cross-check judges, with its launching threads blocked on it for 10.0% of that span (the host ahead of it), but no rule's finding", ""},
		{crossview.Hypothesis, "only 3 GPU events", m, "", ""},
	} {
		cv := &crossview.Result{Check: crossview.Check{Verdict: crossview.VerdictGPU, Label: c.label, Metrics: c.m, Rule: c.rule}}
		d := &Doc{}
		reconcile(d, cv, c.label, c.capped, nil)
		got := strings.Join(d.Summary, "\n")
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%s, capped %q: summary %q, want %q", c.label, c.capped, got, c.want)
		}
	}
}

func TestNoCriticalLine(t *testing.T) {
	up := []Issue{{Title: "The GPU waits for the CPU to launch work"}}
	for _, c := range []struct {
		name                string
		followUps           []Issue
		inconclusive, noGPU bool
		want                string
	}{
		{"follow-ups", up, false, false, "No critical bottleneck in this slice; the largest minor issue: The GPU waits for the CPU to launch work."},
		{"follow-ups, inconclusive capture", up, true, false, "What the rules flagged is under To consider, each capped to a hypothesis by the capture; the first: The GPU waits for the CPU to launch work."},
		{"nothing flagged", nil, false, false, "No rule flagged this slice: nothing crosses a threshold with the evidence the trace can show."},
		{"nothing flagged, inconclusive capture", nil, true, false, "No rule flagged this slice: nothing crosses a threshold with the evidence the trace can show."},
		// torch1.13.1_legacy_smallnet: a CPU-only run, which no rule judges.
		{"no GPU work", nil, false, true, "No rule could judge this slice: it holds no GPU work, and the rules judge the GPU's time (see Evidence Gaps); Next lever reads the CPU operators instead."},
		// cupti_profiler: a counter capture, inconclusive, whose kernels are
		// range records: the first line says why nothing is read.
		{"no GPU work, inconclusive capture", nil, true, true, "No rule flagged this slice: nothing crosses a threshold with the evidence the trace can show."},
	} {
		if got := noCriticalLine(c.followUps, c.inconclusive, c.noGPU); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestMoreIssuesLine(t *testing.T) {
	for _, c := range []struct {
		more, followUps int
		want            string
	}{
		{2, 2, "2 more critical issue(s) and 2 follow-up(s) below, each with a fix."},
		{1, 0, "1 more critical issue(s) below, each with a fix."},
	} {
		if got := moreIssuesLine(c.more, c.followUps); got != c.want {
			t.Errorf("moreIssuesLine(%d, %d) = %q, want %q", c.more, c.followUps, got, c.want)
		}
	}
}

// A confirmed host-bound cross-check does not cap communication that the
// collectives' matching shows waiting for late ranks: ranks whose hosts
// launch late arrive late (dlrm_8rank: the 8 ranks' GPUs wait on their
// hosts, and rank 1's all_to_all waits 98.1% for the last rank). Exposed
// communication without that matching is capped as before.
func TestReconcileHostBoundKeepsLateRanks(t *testing.T) {
	cv := &crossview.Result{Check: crossview.Check{Verdict: crossview.VerdictHost, Label: crossview.Confirmed, Metrics: crossview.Metrics{GPUTimeNs: 1}}}
	for _, tc := range []struct {
		wait      string
		confirmed bool
	}{
		{"of rank 1's 11.3 ms of matched collective time, 11.1 ms (98.1%) was waiting for late ranks to arrive and 0.211 ms transfer", true},
		{"", false},
	} {
		comm := evidence.Finding{Rule: "comm_not_overlapped", Status: "confirmed", Severity: "critical", Rank: 1,
			Title: "Rank 1's exposed communication is mostly waiting for late ranks to arrive, not transfer", Wait: tc.wait}
		d := &Doc{Critical: []Issue{{ID: comm.Rule, Title: comm.Title, Confirmed: true}}}
		reconcile(d, cv, crossview.Confirmed, "", []evidence.Finding{comm})
		if got := d.Critical[0].Confirmed; got != tc.confirmed {
			t.Errorf("wait %q: confirmed = %v, want %v (%s)", tc.wait, got, tc.confirmed, d.Critical[0].Observation)
		}
	}
}

// containsAll fails t for each text of want missing from got and each of
// not found in it.
func containsAll(t *testing.T, got string, want, not []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in %q", w, got)
		}
	}
	for _, n := range not {
		if strings.Contains(got, n) {
			t.Errorf("unexpected %q in %q", n, got)
		}
	}
}

// With no critical issue, launch calls that hold the host until their
// kernel has run (mtia_single_rank) explain the idle the summary's line
// leaves uncaused: the cross-check's reading follows that line, and an
// inconclusive verdict does not silence it; a critical issue does.
func TestReconcileSerialLaunch(t *testing.T) {
	m := crossview.Metrics{GPUTimeNs: 10, WallNs: 100, BusyNs: 50, IdleNs: 50, LaunchedKernelNs: 10, SyncLaunchNs: 10, IdleNoLaunchNs: 40}
	for _, c := range []struct {
		crit []evidence.Finding
		want bool
	}{
		{nil, true},
		{[]evidence.Finding{{Rule: "host_bound_idle", Status: "hypothesis", Severity: "critical"}}, false},
	} {
		cv := &crossview.Result{Check: crossview.Check{Verdict: crossview.VerdictInconclusive, Metrics: m}}
		d := &Doc{Summary: []string{"No rule flagged this slice.", idleUncausedPrefix + "50 ms.", "2 capture artifact(s) found."}}
		reconcile(d, cv, "", "", c.crit)
		got := len(d.Summary) == 4 && strings.HasPrefix(d.Summary[2], "The CPU cross-check reads that idle further: launch calls return only once their kernel has run: 100.0%") &&
			strings.Contains(d.Summary[2], "80.0% of the GPU idle")
		if got != c.want {
			t.Errorf("%d critical: summary %q", len(c.crit), d.Summary)
		}
	}
}

// A share measured with python stacks on rests on host time the stack
// capture inflated (b200_eager: 84.6% of its GPU span in host waits):
// Expected Impact says so beside the share; another cap adds nothing.
func TestImpactTracerInflated(t *testing.T) {
	f := evidence.Finding{Rule: "host_bound_idle", Title: "The GPU waits for the CPU to launch work", Severity: "critical", Status: "hypothesis",
		Impact: 0.846, ImpactOf: "the GPU span the rules judge (trace t, rank 0, whole trace)",
		Caveat: "Python stacks were captured (with_stack=True): the Python tracer " + findings.StackCapLimit + "."}
	const inflated = "84.6% of the GPU span the rules judge (trace t, rank 0, whole trace), measured with Python stacks on, whose tracer inflates the host time it rests on: less without them"
	testutil.Contains(t, "python stacks", expectedImpact([]evidence.Finding{f}), inflated)
	f.Caveat = "Only 6 GPU events over 19.5 ms: too little to judge steady state."
	if got := expectedImpact([]evidence.Finding{f}); strings.Contains(got, "Python stacks") {
		t.Errorf("another cap names the Python stacks: %q", got)
	}
}

// A rank's only step in which kernels were loaded on their first launch
// (b200_eager: 9 Lazy Function Loading events in its one prefill) is
// called cold; other profiler overhead, another rank's, or none is not.
func TestColdStep(t *testing.T) {
	capture := func(trace string, rank int64, kind, name string) *evidence.Evidence {
		return &evidence.Evidence{Tables: evidence.Tables{"capture": &table.Table{Columns: testutil.Columns("trace rank kind name"),
			Rows: [][]any{{trace, rank, kind, name}}}}}
	}
	for _, c := range []struct {
		name string
		ev   *evidence.Evidence
		want bool
	}{
		{"lazy loading", capture("t", 0, "profiler_overhead", "Lazy Function Loading in aten::addmm"), true},
		{"buffer flush", capture("t", 0, "profiler_overhead", "Buffer Flush in aten::mm"), false},
		{"another rank", capture("t", 1, "profiler_overhead", "Lazy Function Loading in aten::addmm"), false},
		{"another kind", capture("t", 0, "first_use", "Lazy Function Loading"), false},
		{"no capture area", &evidence.Evidence{}, false},
	} {
		if got := coldStep(c.ev, "t", 0) != ""; got != c.want {
			t.Errorf("%s: cold %v, want %v", c.name, got, c.want)
		}
	}
}

// The Key Findings line that sets the slice's bf16 and fp16 GEMMs against
// the device's roofline: their throughput and peak shares on a part whose
// peaks are known (an H100 SXM: 989 TFLOP/s, 3.35 TB/s), the near-roof
// sentence at NearRoof of it, no shares where the part is unknown or the
// ranks' parts differ, nothing under a millisecond of GEMM work.
func TestGEMMRoofline(t *testing.T) {
	h100 := []any{"NVIDIA H100 80GB HBM3", int64(9), int64(0), "cuda"}
	unknown := []any{"", nil, nil, "cuda"}
	for _, c := range []struct {
		name    string
		devices [][]any    // per rank
		gemm    [][2]int64 // per rank: GPU ns, FLOPs (bytes: FLOPs/1000)
		want    []string   // "" alone: no line
		notWant []string
	}{
		{"compute-bound, far from the roof", [][]any{h100}, [][2]int64{{10_000_000, 2_967_000_000_000}},
			[]string{"GEMMs against the roofline (the bf16 and fp16 aten::mm, addmm, bmm and baddbmm calls whose shapes were recorded: 3 calls, 10.000 ms of their GPU work, 50.0% of the summed kernel time): 3.0 TFLOP at 296.7 TFLOP/s, 30.0% of the GPU's dense BF16/FP16 peak of 989 TFLOP/s (NVIDIA H100 80GB HBM3), and at least 3.0 GB moved at 0.30 TB/s, 8.9% of its 3.35 TB/s: so they ran at no less than 30.0% of the roofline"},
			[]string{"little to give"}},
		{"far from the roof: no headroom claimed", [][]any{h100}, [][2]int64{{10_000_000, 2_967_000_000_000}},
			[]string{"A lower floor does not show headroom by itself"}, nil},
		{"at the roof's share", [][]any{h100}, [][2]int64{{10_000_000, 5_934_000_000_000}},
			[]string{"no less than 60.0% of the roofline", "a kernel-level lever on these GEMMs has little to give"}, []string{"A lower floor"}},
		{"two ranks, one part: summed", [][]any{h100, h100}, [][2]int64{{5_000_000, 1_483_500_000_000}, {5_000_000, 1_483_500_000_000}},
			[]string{"6 calls, 10.000 ms", "30.0% of the GPU's dense BF16/FP16 peak"}, nil},
		{"unknown part: no shares", [][]any{unknown}, [][2]int64{{10_000_000, 2_967_000_000_000}},
			[]string{"296.7 TFLOP/s", "the device's peaks are not known here"}, []string{"roofline their shapes allow"}},
		{"parts differ: no shares", [][]any{h100, unknown}, [][2]int64{{5_000_000, 1_483_500_000_000}, {5_000_000, 1_483_500_000_000}},
			[]string{"the device's peaks are not known here"}, nil},
		{"parts differ, the unknown first: no shares", [][]any{unknown, h100}, [][2]int64{{5_000_000, 1_483_500_000_000}, {5_000_000, 1_483_500_000_000}},
			[]string{"the device's peaks are not known here"}, nil},
		{"under a millisecond", [][]any{h100}, [][2]int64{{999_999, 296_700_000_000}}, []string{""}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			traces := &table.Table{Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"),
				col("gpu_model", "VARCHAR", "TEXT"), col("gpu_cc_major", "BIGINT", "INT"), col("gpu_cc_minor", "BIGINT", "INT"), col("platform", "VARCHAR", "TEXT")}}
			work := &table.Table{Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"), col("feature", "VARCHAR", "TEXT"),
				col("example", "VARCHAR", "TEXT"), col("count", "BIGINT", "COUNT"), col("total_ns", "BIGINT", "DURATION_NS"),
				col("gemm_flops", "BIGINT", "COUNT"), col("gemm_bytes", "BIGINT", "BYTES")}}
			var ranks []int
			var gpuNs int64
			for r, d := range c.devices {
				traces.Rows = append(traces.Rows, append([]any{"t", int64(r)}, d...))
				g := c.gemm[r]
				work.Rows = append(work.Rows, []any{"t", int64(r), "gemm_shapes", "aten::mm", int64(3), g[0], g[1], g[1] / 1000})
				ranks = append(ranks, r)
				gpuNs += g[0]
			}
			kernels := &table.Table{Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"), col("name", "VARCHAR", "TEXT"),
				col("class", "VARCHAR", "TEXT"), col("total_ns", "BIGINT", "DURATION_NS")},
				Rows: [][]any{{"t", int64(0), "gemm", "COMP", 2 * gpuNs}}}
			ev := &evidence.Evidence{Traces: traces, Tables: evidence.Tables{"workload": work, "kernels": kernels}}
			got := gemmRoofline(ev, []TraceMeta{{Name: "t", Ranks: ranks}})
			for _, w := range c.want {
				if w == "" && got != "" || !strings.Contains(got, w) {
					t.Errorf("line %q, want %q", got, w)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(got, w) {
					t.Errorf("line %q has %q", got, w)
				}
			}
		})
	}
}

// The one-step line names the step's phase where the steps area gives one.
func TestStepPhase(t *testing.T) {
	for _, c := range []struct{ phase, want string }{
		{"prefill", " (a prefill step)"},
		{"decode", " (a decode step)"},
		{"mixed", " (a mixed step: prefill and decode in one batch)"},
		{"inference", " (an inference step)"},
		{"unknown", ""},
		{"", ""},
	} {
		steps := &table.Table{Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"), col("step", "BIGINT", "INT"), col("phase", "VARCHAR", "TEXT")},
			Rows: [][]any{{"t", int64(0), int64(-1), ""}, {"t", int64(0), int64(3), c.phase}}}
		ev := &evidence.Evidence{Tables: evidence.Tables{"steps": steps}}
		if got := stepPhase(ev, "t", 0); got != c.want {
			t.Errorf("phase %q: %q, want %q", c.phase, got, c.want)
		}
		if got := stepPhase(ev, "t", 1); got != "" {
			t.Errorf("another rank: %q", got)
		}
	}
	// A train step: with or without an optimizer step (train_h800_ep64:
	// one forward and backward chunk pair, no optimizer).
	steps := &table.Table{Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"), col("step", "BIGINT", "INT"), col("phase", "VARCHAR", "TEXT")},
		Rows: [][]any{{"t", int64(0), int64(1), "train"}}}
	wl := &table.Table{Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"), col("feature", "VARCHAR", "TEXT"), col("example", "VARCHAR", "TEXT")},
		Rows: [][]any{{"t", int64(0), "backward", "autograd::engine::evaluate_function: MmBackward0"}}}
	ev := &evidence.Evidence{Tables: evidence.Tables{"steps": steps, "workload": wl}}
	if got, want := stepPhase(ev, "t", 0), " (training work: forward and backward but no optimizer step, so it may be a section of an iteration, such as a pipeline schedule's, not a whole one)"; got != want {
		t.Errorf("train step without an optimizer: %q, want %q", got, want)
	}
	wl.Rows = append(wl.Rows, []any{"t", int64(0), "optimizer", "Optimizer.step#AdamW.step"})
	if got, want := stepPhase(ev, "t", 0), " (a train step)"; got != want {
		t.Errorf("train step with an optimizer: %q, want %q", got, want)
	}
}

// The workload's GEMM columns, which only gemm_shapes fills, are left out
// of a report table that shows no such row, and kept where one does.
func TestReportTableFeatureColumns(t *testing.T) {
	cols := []table.Column{col("trace", "VARCHAR", "TEXT"), col("feature", "VARCHAR", "TEXT"), col("count", "BIGINT", "COUNT"),
		col("gemm_flops", "BIGINT", "COUNT"), col("gemm_bytes", "BIGINT", "BYTES")}
	names := func(tb table.Table) string {
		var out []string
		for _, c := range tb.Columns {
			out = append(out, c.Name)
		}
		return strings.Join(out, " ")
	}
	none := &table.Table{Columns: cols, Rows: [][]any{{"t", "cpu_ops", int64(3), nil, nil}}}
	if got := names(reportTable("workload", none)); got != "trace feature count" {
		t.Errorf("no gemm_shapes row: columns %q", got)
	}
	some := &table.Table{Columns: cols, Rows: [][]any{{"t", "cpu_ops", int64(3), nil, nil}, {"t", "gemm_shapes", int64(2), int64(10), int64(20)}}}
	if tb := reportTable("workload", some); names(tb) != "trace feature count gemm_flops gemm_bytes" || tb.Rows[1][3] != int64(10) {
		t.Errorf("a gemm_shapes row: columns %q, rows %v", names(tb), tb.Rows)
	}
}

// Two critical findings with one fix read one constraint from two tables
// (b200_eager: host waits and vLLM's eager launches): the second follows as
// the first follow-up; a third critical with its own fix stays critical.
func TestShownOneCriticalPerFix(t *testing.T) {
	fs := []evidence.Finding{
		{Rule: "launch_bound", Severity: "critical", Impact: 0.80, Fix: "Drop --enforce-eager.", Snippet: "vllm serve MODEL"},
		{Rule: "host_bound_idle", Severity: "critical", Impact: 0.85, Fix: "Drop --enforce-eager.", Snippet: "vllm serve MODEL"},
		{Rule: "sync_bound_loop", Severity: "critical", Impact: 0.30, Fix: "Read back less often."},
		{Rule: "pageable_copies", Severity: "minor", Impact: 0.50, Fix: "Pin."},
	}
	crit, minor := shown(fs)
	var c, m []string
	for _, f := range crit {
		c = append(c, f.Rule)
	}
	for _, f := range minor {
		m = append(m, f.Rule)
	}
	if got, want := strings.Join(c, " "), "host_bound_idle sync_bound_loop"; got != want {
		t.Errorf("critical %q, want %q", got, want)
	}
	if got, want := strings.Join(m, " "), "launch_bound pageable_copies"; got != want {
		t.Errorf("follow-ups %q, want %q", got, want)
	}
}

// Without a critical issue, a follow-up with a fix that accounts for a
// tenth of its base or more is the next lever (trace_diff_test_v100: fp32
// GEMMs, 26.8% of the span); a smaller one, or one whose fix is another
// capture, leaves the lever to the kernels.
func TestFollowUpLever(t *testing.T) {
	f := evidence.Finding{Rule: "fp32_no_tensor_cores", Severity: "minor", Title: "fp32 GEMMs bypass the tensor cores", Impact: 0.268,
		ImpactOf: "the GPU span (trace t, rank 1, whole trace)", Fix: "Train with AMP.", Verify: "Re-profile: h884 kernels."}
	want := "No issue is critical; the largest follow-up (fp32 GEMMs bypass the tensor cores, up to 26.8% of the GPU span (trace t, rank 1, whole trace)) is the next lever: apply its fix and verify: Re-profile: h884 kernels. Then re-run the report on the new trace."
	if got := followUpLever([]evidence.Finding{f}); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	small := f
	small.Impact = 0.05
	if got := followUpLever([]evidence.Finding{small}); got != "" {
		t.Errorf("a 5%% follow-up is the lever: %q", got)
	}
}

// The tree's root names the busy time it sets against the streams' summed
// time: of the GPU, or of several ranks' GPUs, summed (dlrm_8rank).
func TestGPUTreeRootBusy(t *testing.T) {
	for ranks, want := range map[int]string{
		1: "GPU operation time, summed over concurrent streams (the GPU was busy 50.000 ms)",
		8: "GPU operation time, summed over concurrent streams (the 8 ranks' GPUs were busy 50.000 ms, summed)",
	} {
		r := &crossview.Result{GPU: crossview.Tree{TotalNs: 60_000_000, Roots: []*crossview.Node{{Name: "k", Ns: 60_000_000}}},
			Check: crossview.Check{Metrics: crossview.Metrics{Ranks: ranks, BusyNs: 50_000_000}}}
		if got := gpuTree(r).Root.Name; got != want {
			t.Errorf("%d ranks: %q, want %q", ranks, got, want)
		}
	}
}

// A kernel whose name says FP4 weights, on a device without FP4 matrix
// instructions (vllm_decode_full_mi300x's MXFP4 MoE GEMM on CDNA3), gets
// the note that it dequantises them; on Blackwell, or for another kernel,
// none.
func TestFP4Note(t *testing.T) {
	bundleOn := func(gpu string, major, minor int64) *evidence.Bundle {
		b := evidence.NewBundle()
		b.Traces = &table.Table{Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "BIGINT", "INT"), col("gpu_model", "VARCHAR", "TEXT"),
			col("cc_major", "BIGINT", "INT"), col("cc_minor", "BIGINT", "INT"), col("platform", "VARCHAR", "TEXT")},
			Rows: [][]any{{"t", int64(0), gpu, major, minor, "rocm"}}}
		return b
	}
	const k = "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1"
	if got := fp4Note(bundleOn("AMD Instinct MI300X", 9, 4), k); !strings.Contains(got, "Its name says FP4 weights, for which CDNA3") || !strings.Contains(got, "dequantises") {
		t.Errorf("MI300X: %q", got)
	}
	if got := fp4Note(bundleOn("NVIDIA B200", 10, 0), k); got != "" {
		t.Errorf("B200: %q", got)
	}
	if got := fp4Note(bundleOn("AMD Instinct MI300X", 9, 4), "Cijk_Alik_Bljk_BBS_BH"); got != "" {
		t.Errorf("a bf16 GEMM: %q", got)
	}
}

// A vLLM rank whose steps carry no phase, whose first step replays no graph
// with at least twice the GPU work of the later, graph-replaying ones
// (vllm_h100_tp4_rank0: 83.9 ms against 16.5 ms): Key Findings say it most
// likely ran a prefill; with a graph in the first step, or another
// producer, nothing.
func TestEagerFirstStep(t *testing.T) {
	tc := func(n string) table.Column { return table.Column{Name: n} }
	build := func(producer string, firstLaunches int64) (*evidence.Bundle, *evidence.Evidence) {
		b := evidence.NewBundle()
		b.Traces = &table.Table{Columns: []table.Column{tc("trace"), tc("rank"), tc("producer")}, Rows: [][]any{{"t", int64(0), producer}}}
		st := &table.Table{Columns: []table.Column{tc("trace"), tc("rank"), tc("step"), tc("phase"), tc("start_ns"), tc("gpu_busy_ns")}}
		gr := &table.Table{Columns: []table.Column{tc("trace"), tc("rank"), tc("step"), tc("launches")}}
		st.Rows = append(st.Rows, []any{"t", int64(0), int64(0), "unknown", int64(0), int64(83_900_000)})
		gr.Rows = append(gr.Rows, []any{"t", int64(0), int64(0), firstLaunches})
		for i := int64(1); i <= 9; i++ {
			st.Rows = append(st.Rows, []any{"t", int64(0), i, "unknown", i * 20_000_000, int64(16_500_000)})
			gr.Rows = append(gr.Rows, []any{"t", int64(0), i, int64(81)})
		}
		b.Tables["steps"], b.Tables["graphs"] = st, gr
		ev := &evidence.Evidence{Tables: evidence.Tables{"ranks": &table.Table{Columns: []table.Column{tc("trace"), tc("rank")}, Rows: [][]any{{"t", int64(0)}}}}}
		return b, ev
	}
	b, ev := build("vllm", 0)
	want := "Step 0 ran eagerly, replaying no CUDA graph, with 83.900 ms of GPU work, against a median of 16.500 ms for the 9 later steps that replay graphs (81 graph launches a step, most often): most likely a batch above the graphs' capture sizes, such as a prefill"
	if got := eagerFirstStep(b, ev); !strings.HasPrefix(got, want) {
		t.Errorf("got %q\nwant %q...", got, want)
	}
	if b, ev := build("vllm", 81); eagerFirstStep(b, ev) != "" {
		t.Error("a first step that replays graphs is read as eager")
	}
	if b, ev := build("sglang", 0); eagerFirstStep(b, ev) != "" {
		t.Error("another producer's steps are read as vLLM's")
	}
	// With the steps' KV-cache writes (reshape_and_cache's grid), the
	// tokens say what the steps were: 1,049 then 1 a step.
	b, ev = build("vllm", 0)
	st := b.Tables["steps"]
	st.Columns = append(st.Columns, tc("kv_tokens"))
	for i := range st.Rows {
		kv := int64(1)
		if i == 0 {
			kv = 1049
		}
		st.Rows[i] = append(st.Rows[i], kv)
	}
	testutil.Contains(t, "tokens", eagerFirstStep(b, ev), "it wrote 1,049 tokens to the KV cache", "most likely a prefill above the graphs' capture sizes",
		"which wrote 1 token each: one sequence decoding, a batch of 1")
	// The summary says the window is one sequence served alone.
	testutil.Contains(t, "one request", oneRequestLine(b, ev), "The window holds one sequence: a prefill of 1,049 tokens, then 9 decode steps of 1 token each",
		"capture under the load")
	st.Rows[3][len(st.Rows[3])-1] = int64(4) // a decode step of 4 sequences
	if line := oneRequestLine(b, ev); line != "" {
		t.Errorf("a batch of 4 in one step read as one sequence: %q", line)
	}
	st.Rows[3][len(st.Rows[3])-1] = int64(1)
	// The eager step's share of the host-wait idle in the rank's steps
	// (vllm_mi300x_tp4_rank0: 28.8 of 269.6 ms), which no graph mode
	// reaches; the idle outside every step (step -1) is not counted.
	if strings.Contains(eagerFirstStep(b, ev), "host-wait") {
		t.Error("a host-wait share without a ranks table")
	}
	rk := &table.Table{Columns: []table.Column{tc("trace"), tc("rank"), tc("step"), tc("host_wait_ns")}, Rows: [][]any{
		{"t", int64(0), int64(-1), int64(50_000_000)}, {"t", int64(0), int64(0), int64(28_000_000)}}}
	for i := int64(1); i <= 9; i++ {
		rk.Rows = append(rk.Rows, []any{"t", int64(0), i, int64(8_000_000)})
	}
	b.Tables["ranks"] = rk
	testutil.Contains(t, "host wait", eagerFirstStep(b, ev), "It holds 28.000 ms of the 100.000 ms of host-wait GPU idle in the rank's steps (28.0%)",
		"a batch above the capture sizes runs eagerly in every mode")
	// A host-bound finding whose fix offers FULL graphs reaches the
	// graph-replaying steps' part of its share only: 72 of the 100 ms.
	found := []evidence.Finding{
		{Rule: "host_bound_idle", Trace: "t", Rank: 0, Impact: 0.5, Fix: findings.FullGraphsReplay + ", without that Python"},
		{Rule: "host_bound_idle", Trace: "t", Rank: 0, Impact: 0.5, Fix: "Turn CUDA graphs on"},
		{Rule: "host_bound_idle", Trace: "u", Rank: 0, Impact: 0.5, Fix: findings.FullGraphsReplay},
	}
	eagerStepReach(found, b, ev)
	if got := found[0].FixReach; math.Abs(got-0.36) > 1e-9 {
		t.Errorf("FULL graphs' reach %v, want 0.36", got)
	}
	testutil.Contains(t, "reach", found[0].FixReachOf, "step 0 ran eagerly", "28.000 ms of the 100.000 ms")
	if found[1].FixReach != 0 || found[2].FixReach != 0 {
		t.Errorf("reach set on another fix or trace: %v, %v", found[1].FixReach, found[2].FixReach)
	}
}

// Where aiter's tuned GEMM ran a tenth of the kernel time or more through
// torch (sglang_qwen3_prefilldecode_mi300x: 144 calls, 85% of it), the
// Next lever says to tune those shapes before a kernel profile; under a
// tenth, or without the frames, nothing.
func TestAiterNote(t *testing.T) {
	tc := func(n string) table.Column { return table.Column{Name: n} }
	evOf := func(gpu int64) *evidence.Evidence {
		wl := &table.Table{Columns: []table.Column{tc("trace"), tc("rank"), tc("feature"), tc("example"), tc("count"), tc("total_ns")}, Rows: [][]any{
			{"t", int64(0), "aiter_torch_gemm", "aiter/tuned_gemm.py(395): torch_gemm", int64(144), int64(3_900_000)},
			{"t", int64(0), "aiter_torch_gemm_gpu", "aiter/tuned_gemm.py(395): torch_gemm", int64(144), gpu},
		}}
		k := &table.Table{Columns: []table.Column{tc("trace"), tc("rank"), tc("name"), tc("class"), tc("total_ns")}, Rows: [][]any{
			{"t", int64(0), "Cijk_Alik_Bljk_BBS_BH", "COMP", int64(243_000_000)},
			{"t", int64(0), "other", "COMP", int64(250_000_000)},
		}}
		return &evidence.Evidence{Tables: evidence.Tables{"workload": wl, "kernels": k}}
	}
	traces := []TraceMeta{{Name: "t", Ranks: []int{0}}}
	testutil.Contains(t, "aiter", aiterNote(evOf(419_869_417), traces),
		"Of the kernels' summed time, 85.2% (419.869 ms) is the GPU work of 144 GEMMs that aiter's tuned GEMM (gemm_a16w16) ran through torch",
		"(a hypothesis: an entry can also name torch)", "AITER_TUNE_GEMM=1", "gemm_tuner.py", "AITER_CONFIG_GEMM_BF16")
	if got := aiterNote(evOf(40_000_000), traces); got != "" {
		t.Errorf("under a tenth of the kernel time: %q", got)
	}
	if got := aiterNote(&evidence.Evidence{Tables: evidence.Tables{"kernels": evOf(1).Tables["kernels"]}}, traces); got != "" {
		t.Errorf("without the frames: %q", got)
	}
}

// A kernel-side critical issue beside a host-bound cross-check: Expected
// Impact says the gain stops where the host is the limit
// (resnet50_num_workers_4: fp32 kernels on the SIMT path, 49.5% of the
// span, the host issuing the forward slower than the GPU runs it); a
// host-bound issue, or a gpu-bound reading, adds nothing.
func TestReconcileKernelLeverBesideHostBound(t *testing.T) {
	for _, c := range []struct {
		rule, verdict string
		want          bool
	}{
		{"fp32_no_tensor_cores", crossview.VerdictHost, true},
		{"fp32_no_tensor_cores", crossview.VerdictGPU, false},
		{"host_bound_idle", crossview.VerdictHost, false},
	} {
		cv := &crossview.Result{Check: crossview.Check{Verdict: c.verdict, Label: crossview.Hypothesis, Metrics: crossview.Metrics{GPUTimeNs: 1}}}
		d := &Doc{Impact: "The critical issue accounts for up to 49.5% of the GPU span."}
		reconcile(d, cv, crossview.Hypothesis, "", []evidence.Finding{{Rule: c.rule, Status: "confirmed", Severity: "critical"}})
		got := strings.Contains(d.Impact, "The critical issue's fix makes kernels faster, but the CPU cross-check reads this slice as host/launch-bound (hypothesis)")
		if got != c.want {
			t.Errorf("%s beside %s: %q", c.rule, c.verdict, d.Impact)
		}
	}
	// The kernel-side issue second, after one that shares the host-bound
	// reading (resnet50_num_workers_0: the DataLoader issue, then fp32).
	cv := &crossview.Result{Check: crossview.Check{Verdict: crossview.VerdictHost, Label: crossview.Hypothesis, Metrics: crossview.Metrics{GPUTimeNs: 1}}}
	d := &Doc{Impact: "What each critical issue accounts for: issue 1 up to 39.6%; issue 2 up to 39.6%."}
	reconcile(d, cv, crossview.Hypothesis, "", []evidence.Finding{{Rule: "dataloader_share", Status: "confirmed", Severity: "critical"}, {Rule: "fp32_no_tensor_cores", Status: "confirmed", Severity: "critical"}})
	if !strings.Contains(d.Impact, "Issue 2's fix makes kernels faster, but the CPU cross-check reads this slice as host/launch-bound (hypothesis)") {
		t.Errorf("issue 2 beside a host-bound reading: %q", d.Impact)
	}
}

// A serving engine's GEMM whose GPU work is mostly graph replays (decode
// steps) gets the decode arithmetic: about M FLOP per weight byte against
// the device's ridge point, and fewer weight bytes or a larger batch as
// the lever (vllm_h100_tp4_rank0); not for a quantized kernel, another
// producer, or replays under half the kernel time.
func TestDecodeGEMMNote(t *testing.T) {
	tc := func(n string) table.Column { return table.Column{Name: n} }
	const gemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
	evOf := func(producer, kernel string, replayed int64) *evidence.Evidence {
		return &evidence.Evidence{
			Traces: &table.Table{Columns: []table.Column{tc("trace"), tc("rank"), tc("producer"), tc("gpu_model")},
				Rows: [][]any{{"t", int64(0), producer, "NVIDIA H100 80GB HBM3"}}},
			Tables: evidence.Tables{
				"kernels": {Columns: []table.Column{tc("trace"), tc("rank"), tc("name"), tc("class"), tc("total_ns")},
					Rows: [][]any{{"t", int64(0), kernel, "COMP", int64(90_000_000)}, {"t", int64(0), "other", "COMP", int64(143_000_000)}}},
				"graphs": {Columns: []table.Column{tc("trace"), tc("rank"), tc("graph"), tc("launches"), tc("gpu_ns")},
					Rows: [][]any{{"t", int64(0), int64(-1), int64(729), replayed}, {"t", int64(0), int64(-2), int64(0), int64(50_000_000)}}},
			}}
	}
	testutil.Contains(t, "decode", decodeGEMMNote(evOf("vllm", gemm, 134_000_000), gemm),
		"Most of the kernel time (57.5%) is graph replays", "ridge point of about 295 FLOP/byte (989 TFLOP/s dense over 3.35 TB/s)",
		"FP8 weights, which its tensor cores run", "a hypothesis: the trace records no token counts")
	// The steps' KV-cache writes give M: 1 token a step.
	withKV := evOf("vllm", gemm, 134_000_000)
	withKV.Tables["steps"] = &table.Table{Columns: []table.Column{tc("trace"), tc("rank"), tc("step"), tc("kv_tokens")},
		Rows: [][]any{{"t", int64(0), int64(0), int64(1049)}, {"t", int64(0), int64(1), int64(1)}, {"t", int64(0), int64(2), int64(1)}, {"t", int64(0), int64(3), nil}}}
	got := decodeGEMMNote(withKV, gemm)
	testutil.Contains(t, "decode with tokens", got, "the steps wrote a median of 1 token to the KV cache", "M about 1, far under this GPU's ridge point", "so it is bound by reading its weights")
	if strings.Contains(got, "a hypothesis") {
		t.Errorf("a measured M is called a hypothesis: %q", got)
	}
	const fp4 = "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1"
	for name, got := range map[string]string{
		"a quantized kernel":       decodeGEMMNote(evOf("vllm", fp4, 134_000_000), fp4),
		"a training loop":          decodeGEMMNote(evOf("profiler_step", gemm, 134_000_000), gemm),
		"replays under half of it": decodeGEMMNote(evOf("vllm", gemm, 100_000_000), gemm),
		"a kernel that is no GEMM": decodeGEMMNote(evOf("vllm", "rms_norm_kernel", 134_000_000), "rms_norm_kernel"),
	} {
		if got != "" {
			t.Errorf("%s: %q", name, got)
		}
	}
}

// Where launches are serialised, a kernel lever gains its host side: the
// GPU idle outside every launch call, as a share of the span
// (mtia_single_rank: 4,578 ms of 13,331 ms), from SerialHostShare of it.
func TestSerialHostLever(t *testing.T) {
	kernel := gpuSideLever + "the kernel fc holds 74.4% of the kernels' summed time."
	m := crossview.Metrics{WallNs: 10_000_000_000, IdleNoLaunchNs: 3_000_000_000}
	testutil.Contains(t, "host side", serialHostLever(kernel, m), "The host side:", "the device idled 3,000.000 ms while no launch call was open, 30.0% of the 10,000.000 ms GPU span")
	tests := []struct {
		name  string
		lever string
		m     crossview.Metrics
	}{
		{"another lever", "Apply the fix of issue 1", m},
		{"under the share", kernel, crossview.Metrics{WallNs: 10_000_000_000, IdleNoLaunchNs: 900_000_000}},
		{"no span", kernel, crossview.Metrics{IdleNoLaunchNs: 900_000_000}},
	}
	for _, tt := range tests {
		if got := serialHostLever(tt.lever, tt.m); got != "" {
			t.Errorf("%s: %q, want none", tt.name, got)
		}
	}
}

// The Executive Summary's first sentence, the verdict, is set apart in the
// HTML (tb-lead); the sentences after it are plain paragraphs, and the
// Markdown is unchanged.
func TestSummaryLead(t *testing.T) {
	d := &Doc{Title: "T", Summary: []string{"Most likely bottleneck: <x>.", "2 capture artifact(s) found."}}
	var h, m bytes.Buffer
	if err := Print(&h, d, HTMLFragment); err != nil {
		t.Fatal(err)
	}
	if err := Print(&m, d, Markdown); err != nil {
		t.Fatal(err)
	}
	if html := h.String(); !strings.Contains(html, `<p class="tb-lead">Most likely bottleneck: &lt;x&gt;.</p>`) ||
		!strings.Contains(html, "<p>2 capture artifact(s) found.</p>") || strings.Count(html, "tb-lead") != 1 {
		t.Errorf("summary HTML:\n%s", html)
	}
	if strings.Contains(m.String(), "tb-lead") {
		t.Errorf("summary Markdown carries the HTML class:\n%s", m.String())
	}
}

// Where no rule names the cause of a rank's idle, the line names the
// optimizer's step when a quarter of that idle or more lies inside it
// (mtia_single_rank: 3,490 of 5,629 ms), and offers a multi-tensor
// optimizer only where the rank runs none.
func TestIdleUncausedOptimizer(t *testing.T) {
	for _, c := range []struct {
		name     string
		optIdle  int64
		foreach  bool
		want     string
		withHint bool
	}{
		{"a quarter or more", 20e6, false, "The largest block of it the trace names is the optimizer's step: 20.000 ms (50.0%) lies inside Optimizer.step#Adam.step (30.000 ms of it inside the GPU span)", true},
		{"foreach already", 20e6, true, "the rank already runs multi-tensor (foreach or fused) operators", false},
		{"under a quarter", 9e6, false, "", false},
	} {
		b := evidence.NewBundle()
		var rc, wc []table.Column
		for _, n := range []string{"trace", "rank", "step", "phase", "busy_ns", "idle_ns", "host_wait_ns"} {
			rc = append(rc, table.Column{Name: n})
		}
		for _, n := range []string{"trace", "rank", "feature", "example", "count", "total_ns", "covered_ns"} {
			wc = append(wc, table.Column{Name: n})
		}
		b.Tables["ranks"] = &table.Table{Name: "ranks", Columns: rc, Rows: [][]any{{"job", int64(0), int64(-1), "", int64(60e6), int64(40e6), int64(4e6)}}}
		rows := [][]any{{"job", int64(0), "optimizer_gpu_idle", "Optimizer.step#Adam.step", int64(1), c.optIdle, int64(30e6)}}
		if c.foreach {
			rows = append(rows, []any{"job", int64(0), "foreach_ops", "aten::_foreach_add_", int64(10), int64(1e6), nil})
		}
		b.Tables["workload"] = &table.Table{Name: "workload", Columns: wc, Rows: rows}
		got := idleUncaused(evidence.Rollup(b, evidence.Filter{}), nil, nil, 0.10)
		if c.want == "" {
			if strings.Contains(got, "optimizer") {
				t.Errorf("%s: %q", c.name, got)
			}
			continue
		}
		if !strings.Contains(got, c.want) || strings.Contains(got, "a multi-tensor (foreach) or fused optimizer does in a few launches") != c.withHint {
			t.Errorf("%s: %q", c.name, got)
		}
	}
}

// A follow-up says whether it is confirmed or a hypothesis, as an issue
// does (dlrm_8rank's DataLoader follow-up, a hypothesis, said neither).
func TestFollowUpStatus(t *testing.T) {
	d := &Doc{FollowUps: []Issue{{Observation: "Loader took 1.3 ms.", Fix: "Use workers."}, {Observation: "Syncs opened gaps.", Fix: "Defer them.", Confirmed: true}}}
	var md, html strings.Builder
	if err := printMarkdown(&md, d); err != nil {
		t.Fatal(err)
	}
	if err := printHTML(&html, d); err != nil {
		t.Fatal(err)
	}
	testutil.Contains(t, "markdown", md.String(), "- Loader took 1.3 ms. (hypothesis) -- **Fix:** Use workers.", "- Syncs opened gaps. (confirmed) -- **Fix:** Defer them.")
	testutil.Contains(t, "html", html.String(), `Loader took 1.3 ms. <span class="tb-tag">(hypothesis)</span> — <strong>Fix:</strong> Use workers.`)
}

// A one-step capture whose step covers under half of the rank's wall time
// says most of the window lies outside it (cpu_only: 210 of 1,290 ms);
// one that covers most of it rests on the step, as before.
func TestOneStepLineCoverage(t *testing.T) {
	tc := func(n string) table.Column { return table.Column{Name: n} }
	for _, c := range []struct {
		wall int64
		want string
	}{
		{210_000_000, "The capture holds one step of rank 0, which covers 210.000 ms of the rank's 1,290.000 ms (16.3%): most of the window lies outside it, and the verdict rests on the whole window; capture several steps to see whether it recurs."},
		{1_200_000_000, "The capture holds one step of rank 0: the verdict rests on that step alone; capture several to see whether it recurs."},
	} {
		b := evidence.NewBundle()
		b.Tables["steps"] = &table.Table{Name: "steps", Columns: []table.Column{tc("trace"), tc("rank"), tc("step"), tc("start_ns"), tc("wall_ns")},
			Rows: [][]any{{"job", int64(0), int64(551), int64(4_000_000), c.wall}}}
		b.Tables["overview"] = &table.Table{Name: "overview", Columns: []table.Column{tc("trace"), tc("rank"), tc("first_ns"), tc("span_ns")},
			Rows: [][]any{{"job", int64(0), int64(0), int64(1_290_000_000)}}}
		if got := oneStepLine(evidence.Rollup(b, evidence.Filter{}), "job", 0, "the verdict", "recurs"); got != c.want {
			t.Errorf("step of %d ns: %q, want %q", c.wall, got, c.want)
		}
	}
}
