package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/internal/testutil"
)

// llamaStack is the launching thread's stack at the middle of the longest
// gaps of vllm_mi300x_tp4_rank0: the model's forward, before its compiled
// graph is entered.
var llamaStack = []string{"torch/nn/modules/module.py(1755): _call_impl", "vllm/model_executor/models/llama.py(565): forward",
	"vllm/compilation/decorators.py(167): __call__", "vllm/model_executor/models/llama.py(374): forward"}

// stacksOf gives each late-launch gap of gaps a HostStack of its own, as
// Check.HostStacks would hold them unsummed: of its rank's gaps in gaps.
func stacksOf(gaps []crossview.Gap) []crossview.HostStack {
	of := map[int]int{}
	for _, g := range gaps {
		of[g.Rank]++
	}
	var out []crossview.HostStack
	for _, g := range gaps {
		if g.Cause == crossview.CauseHost {
			out = append(out, crossview.HostStack{Trace: g.Trace, Rank: g.Rank, Host: g.Host, Gaps: 1, Ns: g.DurNs, Of: of[g.Rank]})
		}
	}
	return out
}

func TestHostFrameOf(t *testing.T) {
	gap := func(rank int, cause string, ms int64, host ...string) crossview.Gap {
		return crossview.Gap{Trace: "t", Rank: rank, Cause: cause, DurNs: ms * 1_000_000, Host: host}
	}
	five := func(host ...string) []crossview.Gap {
		var out []crossview.Gap
		for _, ms := range []int64{28, 28, 28, 27, 27} {
			out = append(out, gap(0, "host", ms, host...))
		}
		return out
	}
	// vllm_mi300x_tp4_rank0: five gaps, 138 ms of 278 ms idle, in llama.py(374).
	at, ok := hostFrameOf(stacksOf(five(llamaStack...)), "t", 0, 278_000_000, 0)
	if !ok || at.Name != llamaStack[3] || !at.Leaf || at.Gaps != 5 || at.Of != 5 || at.Ns != 138_000_000 || at.IdleNs != 278_000_000 || len(at.Stack) != 4 {
		t.Errorf("llama: %+v %v", at, ok)
	}
	// Under a quarter of the idle: nothing named.
	if at, ok := hostFrameOf(stacksOf(five(llamaStack...)), "t", 0, 600_000_000, 0); ok {
		t.Errorf("138 of 600 ms named %+v", at)
	}
	// Idle left out by the capture gate that the gaps may lie in: nothing
	// named; a negligible amount (under 1% of the gaps) does not matter and
	// leaves the base the judged idle.
	if at, ok := hostFrameOf(stacksOf(five(llamaStack...)), "t", 0, 278_000_000, 9_000_000); ok {
		t.Errorf("gaps beside 9 ms of start-up idle named %+v", at)
	}
	if at, ok := hostFrameOf(stacksOf(five(llamaStack...)), "t", 0, 278_000_000, 2_000); !ok || at.IdleNs != 277_998_000 {
		t.Errorf("2 µs of start-up idle: %+v %v", at, ok)
	}
	// An operator's callees belong to it: nccl_data_a100's stacks name
	// aten::unflatten_dense_tensors, not the aten::slice at the middle.
	ops := []crossview.Gap{
		gap(0, "host", 16, "aten::unflatten_dense_tensors", "aten::narrow", "aten::slice", "aten::as_strided"),
		gap(0, "host", 15, "DistributedDataParallel.forward", "aten::unflatten_dense_tensors", "aten::narrow", "aten::slice"),
		gap(0, "host", 8, "## forward ##", "DistributedDataParallel.forward", "aten::unflatten_dense_tensors", "aten::narrow"),
	}
	if at, ok := hostFrameOf(stacksOf(ops), "t", 0, 60_000_000, 0); !ok || at.Name != "aten::unflatten_dense_tensors" || at.Leaf || at.Gaps != 3 {
		t.Errorf("operators: %+v %v", at, ok)
	}
	// The deepest frame of most of the time, though not in the largest gap.
	nested := []crossview.Gap{gap(0, "host", 40, "outer.py(1): run"), gap(0, "host", 30, "outer.py(1): run", "inner.py(2): work"), gap(0, "host", 30, "outer.py(1): run", "inner.py(2): work")}
	if at, ok := hostFrameOf(stacksOf(nested), "t", 0, 100_000_000, 0); !ok || at.Name != "inner.py(2): work" || at.Ns != 60_000_000 {
		t.Errorf("nested: %+v %v", at, ok)
	}
	// No frame holds most of the late-launch time; other ranks', other
	// causes' and step annotations do not count; one gap is not a pattern.
	for name, gaps := range map[string][]crossview.Gap{
		"split":      {gap(0, "host", 30, "a.py(1): f"), gap(0, "host", 30, "b.py(1): g"), gap(0, "host", 25, "c.py(1): h")},
		"other rank": {gap(1, "host", 30, "a.py(1): f"), gap(1, "host", 30, "a.py(1): f")},
		"sync cause": {gap(0, "sync", 30, "a.py(1): f"), gap(0, "device", 30, "a.py(1): f")},
		"steps":      {gap(0, "host", 30, "ProfilerStep#1"), gap(0, "host", 30, "ProfilerStep#1")},
		"one gap":    {gap(0, "host", 60, "a.py(1): f"), gap(0, "host", 1, "b.py(1): g")},
		"no frame":   {gap(0, "host", 30), gap(0, "host", 30), gap(0, "host", 20, "a.py(1): f"), gap(0, "host", 20, "a.py(1): f")},
	} {
		if at, ok := hostFrameOf(stacksOf(gaps), "t", 0, 100_000_000, 0); ok {
			t.Errorf("%s: named %+v", name, at)
		}
	}
}

// TestHostFrameInReport: the report of a vLLM rank whose GPU waits on the
// host with CUDA graphs on gives the host-bound issue the frame of its
// longest gaps and the forward branch of the fix (vllm_mi300x_tp4_rank0);
// without a cross-view it keeps both branches.
func TestHostFrameInReport(t *testing.T) {
	b := evidence.NewBundle()
	b.Traces = &table.Table{Columns: testutil.Columns("trace rank rank_source producer platform gpu_model has_graphs has_sync_events has_python_stacks"),
		Rows: [][]any{{"t", int64(0), "filename", "vllm", "rocm", "AMD Instinct MI300X", true, true, false}}}
	b.Tables["ranks"] = &table.Table{Columns: testutil.Columns("trace rank step phase busy_ns idle_ns compute_ns comm_ns comm_comp_ns step_ns"),
		Rows: [][]any{{"t", int64(0), int64(1), "", int64(290_000_000), int64(278_000_000), int64(214_000_000), int64(76_000_000), int64(0), int64(568_000_000)}}}
	b.Tables["gaps"] = &table.Table{Columns: testutil.Columns("trace rank step phase stream category count idle_ns max_ns max_at_ns hist"),
		Rows: [][]any{{"t", int64(0), int64(1), "", int64(7), "host_wait", int64(100), int64(270_000_000), int64(28_000_000), int64(0), "150:100"}}}
	var gaps []crossview.Gap
	for _, ms := range []int64{28, 28, 28, 27, 27} {
		gaps = append(gaps, crossview.Gap{Trace: "t", Cause: "host", DurNs: ms * 1_000_000, Host: llamaStack, HostClass: "working"})
	}
	render := func(cvs []*crossview.Result) string {
		var buf bytes.Buffer
		if err := GenerateView(&buf, &Source{Bundle: b, CrossViews: cvs}, View{}, Markdown); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	md := render([]*crossview.Result{{Check: crossview.Check{TopGaps: gaps, HostStacks: stacksOf(gaps)}}})
	for _, want := range []string{
		"At the middle of each of the cross-check's 5 longest GPU gaps on this rank (together 138 ms, 49.6% of its 278 ms of GPU idle), the launching thread was working in vllm/model_executor/models/llama.py(374): forward, with no deeper frame open.",
		"they sit inside the model's forward, in vllm/model_executor/models/llama.py(374): forward, not in the scheduler between steps",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(md, "If it is the scheduler between steps") {
		t.Error("the named frame left both branches in the fix")
	}
	// The same gaps in a window the view does not show: nothing named.
	if md := render([]*crossview.Result{{Slice: crossview.Slice{WindowStartNs: 1, WindowEndNs: 2}, Check: crossview.Check{TopGaps: gaps, HostStacks: stacksOf(gaps)}}}); strings.Contains(md, "At the middle of") || !strings.Contains(md, "If it is the scheduler between steps") {
		t.Error("gaps of another window named a frame")
	}
	if md := render(nil); strings.Contains(md, "At the middle of") || !strings.Contains(md, "If it is the scheduler between steps") {
		t.Error("without a cross-view the fix changed")
	}
}

// The gaps keep the innermost 4 frames: a DataLoader iterator among them
// decides the fix's branch, and where it is cut off the frame's ancestry
// in the CPU view tree decides it (h100_owlv2: zoom_shift under
// enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__); time both
// inside and outside, or no node, decides nothing.
func TestHostFrameDataLoader(t *testing.T) {
	const iter = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
	zoom := []string{"scipy/ndimage/_interpolation.py(739): zoom", "<built-in function zoom_shift>"}
	gap := func(host ...string) crossview.Gap {
		return crossview.Gap{Trace: "t", Cause: "host", DurNs: 100_000_000, Host: host}
	}
	at, ok := hostFrameOf(stacksOf([]crossview.Gap{gap(append([]string{iter, "fetch.py(25): fetch"}, zoom...)...), gap(append([]string{iter, "x.py(1): f"}, zoom...)...)}), "t", 0, 250_000_000, 0)
	if !ok || at.Name != zoom[1] || at.Loader != iter {
		t.Errorf("iterator in the gaps' stacks: %+v %v", at, ok)
	}
	at, ok = hostFrameOf(stacksOf([]crossview.Gap{gap(append([]string{iter, "fetch.py(25): fetch"}, zoom...)...), gap(append([]string{"a.py(1): g", "x.py(1): f"}, zoom...)...)}), "t", 0, 250_000_000, 0)
	if !ok || at.Loader != "" {
		t.Errorf("iterator in one gap's stack only: %+v %v", at, ok)
	}

	node := func(name string, ns int64, via []string, ch ...*crossview.Node) *crossview.Node {
		return &crossview.Node{Name: name, Ns: ns, Via: via, Children: ch}
	}
	leaf := func(ns int64) *crossview.Node {
		return node(zoom[1], ns, []string{zoom[0]})
	}
	inside := node("main.py(1): run", 500, nil, node(iter, 500, []string{"dataloader.py(703): __next__"}, node("fetch.py(25): fetch", 500, nil, leaf(500))))
	outside := node("main.py(1): run", 100, nil, node("post.py(9): resize", 100, nil, leaf(100)))
	for _, c := range []struct {
		name   string
		roots  []*crossview.Node
		loader string
		notIn  bool
	}{
		{"inside", []*crossview.Node{inside}, iter, false},
		{"outside", []*crossview.Node{outside}, "", true},
		{"both", []*crossview.Node{inside, outside}, "", false},
		{"absent", []*crossview.Node{node("main.py(1): run", 1, nil)}, "", false},
	} {
		loader, notIn := loaderAround(&crossview.Tree{Roots: c.roots}, zoom)
		if loader != c.loader || notIn != c.notIn {
			t.Errorf("%s: loader %q notIn %v, want %q %v", c.name, loader, notIn, c.loader, c.notIn)
		}
	}
}

// On a TorchRec rank, the host fix (compile the dense modules) does not
// reach the late-launch gaps that sit in the sparse side: their share of
// the gaps the cross-check reads comes off the finding's share
// (dlrm_8rank rank 7: 35.9%, 75.0% → 48.1%); without TorchRec, or where
// the stacks read too little of the idle, nothing.
func TestTorchRecReach(t *testing.T) {
	tc := func(n string) table.Column { return table.Column{Name: n} }
	evOf := func(torchrec bool) *evidence.Evidence {
		wl := &table.Table{Columns: []table.Column{tc("trace"), tc("rank"), tc("feature"), tc("example"), tc("count"), tc("total_ns")},
			Rows: [][]any{{"t", int64(7), "cpu_ops", "aten::mm", int64(10), int64(1)}}}
		if torchrec {
			wl.Rows = append(wl.Rows, []any{"t", int64(7), "torchrec", "## sparse_data_dist ##", int64(3), int64(1)})
		}
		return &evidence.Evidence{Tables: evidence.Tables{"workload": wl}}
	}
	stacks := []crossview.HostStack{
		{Trace: "t", Rank: 7, Host: []string{"ProfilerStep#10", "## sparse_data_dist ##"}, Gaps: 3, Ns: 400_000},
		{Trace: "t", Rank: 7, Host: []string{"## forward ##", "DistributedDataParallel.forward", "## PooledEmbeddingsAwaitable wait() ##"}, Gaps: 1, Ns: 100_000},
		{Trace: "t", Rank: 7, Host: []string{"ProfilerStep#10", "## forward ##", "aten::addmm"}, Gaps: 6, Ns: 1_500_000},
		{Trace: "t", Rank: 3, Host: []string{"## sparse_data_dist ##"}, Gaps: 6, Ns: 9_000_000},
	}
	base := evidence.Finding{Rule: "host_bound_idle", Trace: "t", Rank: 7, Impact: 0.75, ImpactOf: "the GPU span the rules judge (trace t, rank 7, whole trace)"}
	f := base
	torchrecReach(&f, stacks, evOf(true), 4_000_000)
	if f.FixReach < 0.5624 || f.FixReach > 0.5626 || !strings.Contains(f.FixReachOf, "25.0% of the 2.000 ms in the rank's longest late-launch gaps, whose stacks the cross-check keeps, sit in its input dist") {
		t.Errorf("TorchRec rank: reach %.4f (%s), want 0.5625", f.FixReach, f.FixReachOf)
	}
	for name, c := range map[string]struct {
		ev   *evidence.Evidence
		idle int64
	}{"no TorchRec": {evOf(false), 4_000_000}, "stacks under a quarter of the idle": {evOf(true), 9_000_000}} {
		f := base
		torchrecReach(&f, stacks, c.ev, c.idle)
		if f.FixReach != 0 || f.FixReachOf != "" {
			t.Errorf("%s: reach %v (%s)", name, f.FixReach, f.FixReachOf)
		}
	}
}
