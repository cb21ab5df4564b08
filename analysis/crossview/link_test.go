package crossview

import (
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/table"
)

func newTable(cols []string) *table.Table {
	t := &table.Table{}
	for _, c := range cols {
		t.Columns = append(t.Columns, table.Column{Name: c})
	}
	return t
}

// opLinked adds a GPU operation with no launching call, linked (or not) to
// an operator by External id, and the preset's word for its link.
func (f *fixture) opLinked(oper int64, link OpLink, kind, name string, ts, dur int64) {
	f.op(0, kind, name, ts, dur)
	o := &f.in.Ops[len(f.in.Ops)-1]
	o.Operator, o.Link = oper, link
}

// pathOf returns the lines from a root down to the first node named name,
// each line its folded chain and its name joined by " ▸ ", the lines by
// " | "; "" when no node has the name.
func pathOf(nodes []*Node, name string) string {
	for _, n := range nodes {
		line := strings.Join(append(append([]string{}, n.Via...), n.Name), " ▸ ")
		if n.Name == name {
			return line
		}
		if p := pathOf(n.Children, name); p != "" {
			return line + " | " + p
		}
	}
	return ""
}

// kindOf returns the kind of the first node named name, "" when none.
func kindOf(nodes []*Node, name string) string {
	if n := find(nodes, name); n != nil {
		return n.Kind
	}
	return ""
}

// TestExternalIDLink: an operation whose launching call the trace lacks
// hangs under the operator its External id names, below a
// "[launch not captured]" level; an ambiguous or missing link leaves it in
// the no-launch bucket, and the evidence gaps say which and why. The GPU
// view's leaves always sum to its total.
func TestExternalIDLink(t *testing.T) {
	tests := []struct {
		name  string
		build func(f *fixture, mm int64)
		// path: the GPU view's path to the kernel "k"; bucket: the GPU time
		// of the no-launch bucket, in µs.
		path   string
		bucket int64
		// gaps: substrings of the evidence gaps, in order of appearance; absent: substrings no gap holds.
		gaps   []string
		absent []string
	}{
		{
			name: "correlation",
			build: func(f *fixture, mm int64) {
				l := f.frame(mm, "runtime", "launch", "cudaLaunchKernel", 20, 10)
				f.op(l, "kernel", "k", 40, 100)
			},
			path:   "train.py(1): step ▸ aten::mm ▸ cudaLaunchKernel | k",
			absent: []string{"External id", NoLaunchBucket},
		},
		{
			name: "external id of one operator",
			build: func(f *fixture, mm int64) {
				f.opLinked(mm, LinkExternalID, "kernel", "k", 40, 100)
			},
			path: "train.py(1): step ▸ aten::mm ▸ " + LaunchNotCaptured + " | k",
			gaps: []string{`1 GPU operations (0.100 ms, 100.0% of GPU time) have no runtime call in the trace but carry the External id of exactly one operator: shown under that operator as "[launch not captured]"`},
		},
		{
			name: "external id shared by several operators",
			build: func(f *fixture, mm int64) {
				f.opLinked(0, LinkAmbiguous, "kernel", "k", 40, 100)
			},
			path:   NoLaunchBucket + " | k",
			bucket: 100,
			gaps:   []string{"shown under \"[no launching CPU event]\"; 1 of them (0.100 ms) carry an External id that several operators have: left unlinked"},
		},
		{
			name: "launched before the capture",
			build: func(f *fixture, mm int64) {
				f.opLinked(0, LinkBeforeCapture, "kernel", "k", 5, 100)
			},
			path:   NoLaunchBucket + " | k",
			bucket: 100,
			gaps:   []string{"1 of them (0.100 ms) carry a correlation id lower than every runtime call the trace captured on their rank: they were launched before the host capture began"},
		},
		{
			name: "operator of another rank",
			build: func(f *fixture, mm int64) {
				other := f.frame(0, "cpu_op", "", "aten::add", 0, 10)
				f.last().Thread = f.in.ThreadID("t", 1, "1/1")
				f.opLinked(other, LinkExternalID, "kernel", "k", 40, 100)
			},
			path:   NoLaunchBucket + " | k",
			bucket: 100,
		},
		{
			name: "mixed",
			build: func(f *fixture, mm int64) {
				l := f.frame(mm, "runtime", "launch", "cudaLaunchKernel", 20, 10)
				f.op(l, "kernel", "k0", 40, 100)
				f.opLinked(mm, LinkExternalID, "kernel", "k", 140, 50)
				f.opLinked(mm, LinkExternalID, "gpu_memset", "Memset (Device)", 190, 7)
				f.opLinked(0, LinkNone, "kernel", "k2", 300, 3)
			},
			path:   "train.py(1): step ▸ aten::mm | " + LaunchNotCaptured + " | k",
			bucket: 3,
			gaps:   []string{"2 GPU operations (0.057 ms, 35.6% of GPU time) have no runtime call", "1 GPU operations (0.003 ms, 1.9% of GPU time) have no launching CPU event"},
			absent: []string{"several operators", "before the host capture"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture()
			step := f.frame(0, "python", "", "train.py(1): step", 0, 1000)
			mm := f.frame(step, "cpu_op", "", "aten::mm", 10, 40)
			tc.build(f, mm)
			res, err := Build(&f.in, Slice{Rank: 0, HasRank: true}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := leafSum(res.GPU.Roots); got != res.GPU.TotalNs {
				t.Errorf("GPU leaves sum to %d, want %d", got, res.GPU.TotalNs)
			}
			if got := pathOf(res.GPU.Roots, "k"); got != tc.path {
				t.Errorf("path to k = %q, want %q", got, tc.path)
			}
			var bucket int64
			if b := find(res.GPU.Roots, NoLaunchBucket); b != nil {
				bucket = b.Ns
			}
			if bucket != tc.bucket*u {
				t.Errorf("bucket = %d ns, want %d µs", bucket, tc.bucket)
			}
			if k := kindOf(res.GPU.Roots, LaunchNotCaptured); k != "" && k != "bucket" {
				t.Errorf("%s has kind %q, want bucket", LaunchNotCaptured, k)
			}
			gaps := strings.Join(res.Gaps, "\n")
			at := 0
			for _, g := range tc.gaps {
				i := strings.Index(gaps[at:], g)
				if i < 0 {
					t.Errorf("gaps lack %q (in order):\n%s", g, gaps)
					break
				}
				at += i + len(g)
			}
			for _, g := range tc.absent {
				if strings.Contains(gaps, g) {
					t.Errorf("gaps hold %q:\n%s", g, gaps)
				}
			}
			// The CPU view has no such level: it is not a host event.
			if find(res.CPU.Roots, LaunchNotCaptured) != nil {
				t.Errorf("the CPU view holds %s", LaunchNotCaptured)
			}
		})
	}
}

// TestExternalIDLinkSlices: an operation linked by External id counts for
// the step its operator started in, and a gap it ends is the host's when
// the operator started after the device went idle (the launch lay inside
// the operator, so no earlier than its start); an operator that started
// before the gap proves nothing.
func TestExternalIDLinkSlices(t *testing.T) {
	tests := []struct {
		name    string
		operTs  int64 // the operator's start, µs; the kernel runs 500..600
		cause   string
		confirm bool
	}{
		{"operator after the gap began", 300, CauseHost, true},
		{"operator before the gap began", 100, CauseOther, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture()
			root := f.frame(0, "python", "", "train.py(1): loop", 0, 1000)
			mm := f.frame(root, "cpu_op", "", "aten::mm", 0, 10)
			l := f.frame(mm, "runtime", "launch", "cudaLaunchKernel", 2, 5)
			f.op(l, "kernel", "first", 10, 190) // busy 10..200, then idle until 500
			late := f.frame(root, "cpu_op", "", "aten::add", tc.operTs, 20)
			f.opLinked(late, LinkExternalID, "kernel", "k", 500, 100)
			res, err := Build(&f.in, Slice{}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var gap *Gap
			for i := range res.Check.TopGaps {
				if g := &res.Check.TopGaps[i]; g.StartNs == 200*u {
					gap = g
				}
			}
			if gap == nil || gap.DurNs != 300*u {
				t.Fatalf("gaps = %+v, want one at 200 µs of 300 µs", res.Check.TopGaps)
			}
			if gap.Cause != tc.cause {
				t.Errorf("cause = %s, want %s", gap.Cause, tc.cause)
			}
			m := res.Check.Metrics
			if got := m.GapConfirmedNs >= 300*u; got != tc.confirm {
				t.Errorf("confirmed idle %d ns: confirmed = %v, want %v", m.GapConfirmedNs, got, tc.confirm)
			}
		})
	}

	// Steps: the kernel runs in the second step, its operator started in
	// the first: it belongs to the first.
	f := newFixture()
	mm := f.frame(0, "cpu_op", "", "aten::mm", 100, 50)
	f.opLinked(mm, LinkExternalID, "kernel", "k", 600, 100)
	f.in.Steps = []Step{
		{Trace: "t", Name: "ProfilerStep#1", Number: 1, TsNs: 0, DurNs: 500 * u},
		{Trace: "t", Name: "ProfilerStep#2", Number: 2, TsNs: 500 * u, DurNs: 500 * u},
	}
	for _, tc := range []struct {
		step int
		want int64
	}{{1, 100 * u}, {2, 0}} {
		res, err := Build(&f.in, Slice{Step: tc.step, HasStep: true}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.GPU.TotalNs != tc.want {
			t.Errorf("step %d: GPU time %d, want %d", tc.step, res.GPU.TotalNs, tc.want)
		}
	}
}

// TestCallStackLevels: on a trace without python frames, the Call stack
// arg of operators gives the python levels above them (outermost first,
// kind call_stack), less those already drawn above an enclosing operator;
// a region (recorded in record_function's __enter__, or an annotation)
// gets none of its own, its callees their whole stacks.
func TestCallStackLevels(t *testing.T) {
	const (
		enter = "/x/site-packages/torch/autograd/profiler.py(614): __enter__"
		main  = "train.py(40): <module>"
		fwd   = "model.py(12): forward"
		lin   = "torch/nn/functional.py(7): linear"
	)
	stack := func(frames ...string) string { // outermost first in, innermost first out
		var r []string
		for i := len(frames) - 1; i >= 0; i-- {
			r = append(r, frames[i])
		}
		return strings.Join(r, ";")
	}
	type frameSpec struct {
		parent    int // index into the frames built so far, -1 = none
		kind      string
		name      string
		ts, dur   int64
		callStack string
	}
	tests := []struct {
		name   string
		frames []frameSpec
		// launch: index of the frame that launches the kernel "k" (through
		// a runtime call added under it).
		launch int
		path   string // the GPU view's path to "k"
		cpu    string // the CPU view's path to the frame named cpuOf
		cpuOf  string
		ops    int64 // Metrics.CallStackOps
	}{
		{
			name: "no call stack",
			frames: []frameSpec{
				{-1, "cpu_op", "aten::linear", 0, 100, ""},
			},
			launch: 0,
			path:   "aten::linear ▸ cudaLaunchKernel | k",
		},
		{
			name: "top-level operator",
			frames: []frameSpec{
				{-1, "cpu_op", "aten::linear", 0, 100, stack(main, fwd, lin)},
			},
			launch: 0,
			path:   main + " ▸ " + fwd + " ▸ " + lin + " ▸ aten::linear ▸ cudaLaunchKernel | k",
			cpu:    main + " ▸ " + fwd + " ▸ " + lin + " ▸ aten::linear",
			cpuOf:  "aten::linear",
			ops:    1,
		},
		{
			name: "nested operator with the same stack",
			frames: []frameSpec{
				{-1, "cpu_op", "aten::linear", 0, 100, stack(main, fwd, lin)},
				{0, "cpu_op", "aten::addmm", 10, 50, stack(main, fwd, lin)},
			},
			launch: 1,
			path:   main + " ▸ " + fwd + " ▸ " + lin + " ▸ aten::linear ▸ aten::addmm ▸ cudaLaunchKernel | k",
			ops:    2,
		},
		{
			name: "nested operator called from python",
			frames: []frameSpec{
				{-1, "cpu_op", "MyFunction", 0, 100, stack(main, fwd)},
				{0, "cpu_op", "aten::addmm", 10, 50, stack(main, fwd, "my.py(3): apply", lin)},
			},
			launch: 1,
			path:   main + " ▸ " + fwd + " ▸ MyFunction ▸ my.py(3): apply ▸ " + lin + " ▸ aten::addmm ▸ cudaLaunchKernel | k",
			ops:    2,
		},
		{
			name: "region",
			frames: []frameSpec{
				{-1, "cpu_op", "ProfilerStep#3", 0, 1000, stack(main, "torch/profiler/profiler.py(313): step", enter)},
				{0, "cpu_op", "aten::linear", 10, 100, stack(main, fwd, lin)},
			},
			launch: 1,
			path:   "ProfilerStep#3 ▸ " + main + " ▸ " + fwd + " ▸ " + lin + " ▸ aten::linear ▸ cudaLaunchKernel | k",
			cpu:    "ProfilerStep#3",
			cpuOf:  "ProfilerStep#3",
			ops:    2,
		},
		{
			name: "annotation",
			frames: []frameSpec{
				{-1, "annotation", "forward_pass", 0, 1000, stack(main, fwd)},
				{0, "cpu_op", "aten::linear", 10, 100, stack(main, fwd, lin)},
			},
			launch: 1,
			path:   "forward_pass ▸ " + main + " ▸ " + fwd + " ▸ " + lin + " ▸ aten::linear ▸ cudaLaunchKernel | k",
			ops:    2,
		},
		{
			name: "operator without a stack under one with",
			frames: []frameSpec{
				{-1, "cpu_op", "aten::linear", 0, 100, stack(main, fwd, lin)},
				{0, "cpu_op", "aten::addmm", 10, 50, ""},
			},
			launch: 1,
			path:   main + " ▸ " + fwd + " ▸ " + lin + " ▸ aten::linear ▸ aten::addmm ▸ cudaLaunchKernel | k",
			ops:    1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture()
			var ids []int64
			for _, s := range tc.frames {
				var parent int64
				if s.parent >= 0 {
					parent = ids[s.parent]
				}
				ids = append(ids, f.frame(parent, s.kind, "", s.name, s.ts, s.dur))
				f.last().CallStack = f.in.StackID(s.callStack)
			}
			lf := tc.frames[tc.launch]
			l := f.frame(ids[tc.launch], "runtime", "launch", "cudaLaunchKernel", lf.ts+1, 2)
			f.op(l, "kernel", "k", 2000, 100)
			res, err := Build(&f.in, Slice{}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := pathOf(res.GPU.Roots, "k"); got != tc.path {
				t.Errorf("GPU path to k:\n got %q\nwant %q", got, tc.path)
			}
			if tc.cpuOf != "" {
				if got := pathOf(res.CPU.Roots, tc.cpuOf); got != tc.cpu {
					t.Errorf("CPU path to %s:\n got %q\nwant %q", tc.cpuOf, got, tc.cpu)
				}
			}
			if got := leafSum(res.CPU.Roots); got != res.CPU.TotalNs {
				t.Errorf("CPU self times sum to %d, want %d", got, res.CPU.TotalNs)
			}
			m := res.Check.Metrics
			if m.CallStackOps != tc.ops {
				t.Errorf("CallStackOps = %d, want %d", m.CallStackOps, tc.ops)
			}
			if tc.ops > 0 {
				if !strings.Contains(strings.Join(res.Gaps, "\n"), `come from the "Call stack" arg of`) {
					t.Errorf("gaps do not say where the python frames come from: %q", res.Gaps)
				}
				if len(res.Check.Notes) == 0 || !strings.Contains(res.Check.Notes[0], "operators carry a Call stack") {
					t.Errorf("notes = %q, want the stack-capture caveat", res.Check.Notes)
				}
			} else if strings.Contains(strings.Join(res.Gaps, "\n"), "Call stack") {
				t.Errorf("gaps name a Call stack without one: %q", res.Gaps)
			}
		})
	}
}

// TestCallStackKind: the python levels from a Call stack are nodes of kind
// call_stack with no time of their own in the CPU view, counting the
// operators recorded under them.
func TestCallStackKind(t *testing.T) {
	f := newFixture()
	a := f.frame(0, "cpu_op", "", "aten::linear", 0, 100)
	f.last().CallStack = f.in.StackID("model.py(12): forward;train.py(40): <module>")
	b := f.frame(0, "cpu_op", "", "aten::copy_", 200, 100)
	f.last().CallStack = f.in.StackID("data.py(3): load;train.py(40): <module>")
	for i, fr := range []int64{a, b} {
		l := f.frame(fr, "runtime", "launch", "cudaLaunchKernel", int64(i)*200+10, 2)
		f.op(l, "kernel", "k", int64(i)*200+1000, 100)
	}
	res, err := Build(&f.in, Slice{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range []Tree{res.GPU, res.CPU} {
		n := find(tr.Roots, "train.py(40): <module>")
		if n == nil || n.Kind != KindCallStack || n.SelfNs != 0 || n.Count != 2 || len(n.Children) != 2 {
			t.Errorf("%s view: <module> = %+v, want a call_stack node of two operators, no time of its own", tr.View, n)
		}
	}
	var text strings.Builder
	if err := Write(&text, res, FormatTree, ""); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "Python frames above operators (call_stack) come from the \"Call stack\" arg of 2 operators") {
		t.Errorf("the text does not say where the python frames come from:\n%s", text.String())
	}
}

// TestStackCaptureCapsHostBound: host-bound is a hypothesis whenever stacks
// were captured, as python frames or as operators' Call stack.
func TestStackCaptureCapsHostBound(t *testing.T) {
	base := Metrics{WallNs: 1000, GPUTimeNs: 400, BusyNs: 400, IdleNs: 600, GapHostNs: 600, GapHostConfirmedNs: 600, GapConfirmedNs: 600}
	tests := []struct {
		name  string
		py    int64
		cs    int64
		label string
	}{
		{"no stacks", 0, 0, Confirmed},
		{"python frames", 10, 0, Hypothesis},
		{"call stacks", 0, 10, Hypothesis},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := base
			m.PythonFrames, m.CallStackOps = tc.py, tc.cs
			r, label := Decide(m)
			if r.Verdict != VerdictHost || label != tc.label {
				t.Errorf("Decide = %s (%s), want %s (%s)", r.Verdict, label, VerdictHost, tc.label)
			}
		})
	}
}

// TestFromTableLinkColumns: the preset's link columns fill Op.Operator,
// Op.Link and, through the stack rows, Frame.CallStack; a result without
// them reads as before.
func TestFromTableLinkColumns(t *testing.T) {
	const stack = "b.py(2): f;a.py(1): <module>"
	for _, withLinks := range []bool{true, false} {
		cols := append([]string{}, Columns...)
		if withLinks {
			cols = append(cols, LinkColumns...)
		}
		tb := newTable(cols)
		row := func(kind string, id, parent int64, evKind, name string, oper int64, link any, sid int64) []any {
			var class any
			if kind == "op" {
				class = ClassComp
			}
			r := []any{kind, "job", int64(0), id, parent, "1/1", evKind, nil, name, int64(10), int64(5), nil, nil, class, nil}
			if withLinks {
				r = append(r, oper, link, sid)
			}
			return r
		}
		tb.Rows = [][]any{
			row("frame", 1, 0, "cpu_op", "aten::empty", 0, nil, 0),
			row("frame", 3, 0, "cpu_op", "aten::mm", 0, nil, 1),
			row("op", 2, 0, "kernel", "k", 3, LinkExternalID, 0),
		}
		if withLinks {
			tb.Rows = append(tb.Rows, row("stack", 1, 0, "", stack, 0, nil, 0))
		}
		in, err := FromTable(tb)
		if err != nil {
			t.Fatal(err)
		}
		want := Op{ID: 2, Kind: OpKernel, TsNs: 10, DurNs: 5, Class: ClassComp}
		wantStacks := []string{"", ""}
		if withLinks {
			want.Operator, want.Link = 3, LinkExternalID
			wantStacks[1] = stack
		}
		if len(in.Ops) == 1 {
			want.TraceID, want.NameID = in.TextID("job"), in.TextID("k")
		}
		if len(in.Ops) != 1 || in.Ops[0] != want || in.OpTrace(&in.Ops[0]) != "job" || in.OpName(&in.Ops[0]) != "k" {
			t.Errorf("links %v: ops = %+v, want %+v", withLinks, in.Ops, want)
		}
		if len(in.Frames) != 2 || in.CallStackOf(&in.Frames[0]) != wantStacks[0] || in.CallStackOf(&in.Frames[1]) != wantStacks[1] {
			t.Errorf("links %v: frames = %+v, want call stacks %q", withLinks, in.Frames, wantStacks)
		}
	}

	// A frame that names a stack no row holds.
	tb := newTable(append(append([]string{}, Columns...), LinkColumns...))
	tb.Rows = [][]any{{"frame", "job", int64(0), int64(4), int64(0), "1/1", "cpu_op", nil, "aten::mm", int64(10), int64(5), nil, nil, nil, nil, int64(0), nil, int64(9)}}
	if _, err := FromTable(tb); err == nil || err.Error() != "crossview: frame 4 names call stack 9, which no stack row holds" {
		t.Errorf("FromTable(missing stack) = %v", err)
	}
}

func TestTrimInstallPrefix(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/home/u/env/lib/python3.7/site-packages/torch/nn/modules/module.py(1051): _call_impl", "torch/nn/modules/module.py(1051): _call_impl"},
		{"/usr/lib/python3/dist-packages/numpy/core/x.py(3): f", "numpy/core/x.py(3): f"},
		{"/a/site-packages/b/site-packages/c.py(1): g", "c.py(1): g"},
		{"resnet50_profiler_api.py(54): <module>", "resnet50_profiler_api.py(54): <module>"},
		// Only the file is trimmed, not a function name that holds the word.
		{"x.py(1): /site-packages/", "x.py(1): /site-packages/"},
	}
	for _, tc := range tests {
		if got := trimInstallPrefix(tc.in); got != tc.want {
			t.Errorf("trimInstallPrefix(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestSilentHostGap: a late launch's gap is the host's only where the
// launching thread recorded work through it. In a silence of HeldMinNs or
// more between its frames the host was idle too in the trace's view
// (event_sync_multi_stream: nothing recorded for 18.4 ms between two
// matmuls): that part is other, not host; shorter stretches between
// frames are the host's own work.
func TestSilentHostGap(t *testing.T) {
	tests := []struct {
		name        string
		silentUntil int64 // µs: the thread records nothing from 210 until then
		cause       string
		host, other int64 // µs of the gap 200..2500
	}{
		{"host recorded work through the gap", 220, CauseHost, 2300, 0},
		{"host silent through most of the gap", 2400, CauseOther, 110, 2190},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture()
			mm := f.frame(0, "cpu_op", "", "aten::mm", 0, 210)
			l := f.frame(mm, "runtime", "launch", "cudaLaunchKernel", 2, 5)
			f.op(l, "kernel", "first", 10, 190) // busy 10..200
			// Recorded host work from silentUntil up to the late launch.
			f.frame(0, "cpu_op", "", "aten::add", tc.silentUntil, 2490-tc.silentUntil)
			mm2 := f.frame(0, "cpu_op", "", "aten::mm", 2490, 20)
			l2 := f.frame(mm2, "runtime", "launch", "cudaLaunchKernel", 2491, 5)
			f.op(l2, "kernel", "k", 2500, 100)
			res, err := Build(&f.in, Slice{}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			m := res.Check.Metrics
			if m.GapHostNs != tc.host*u || m.GapOtherNs != tc.other*u {
				t.Errorf("host %d ns, other %d ns; want %d µs, %d µs", m.GapHostNs, m.GapOtherNs, tc.host, tc.other)
			}
			if len(res.Check.TopGaps) == 0 || res.Check.TopGaps[0].Cause != tc.cause {
				t.Errorf("top gaps %+v, want the longest of cause %s", res.Check.TopGaps, tc.cause)
			}
		})
	}
}
