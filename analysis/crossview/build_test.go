package crossview

import (
	"bytes"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/internal/testutil"
	"github.com/vmihailenco/msgpack/v5"
)

// fixture builds rows by hand: one rank, one launching thread.
type fixture struct {
	in   Input
	next int64
}

func newFixture() *fixture { return &fixture{in: Input{Origins: map[string]int64{"t": 0}}, next: 1} }

// u is the fixtures' time unit: times are written in microseconds.
const u = 1000

// frame adds a host frame and returns its id. parent is the frame it is
// meant to nest in, for the reader: Build finds it by time containment.
func (f *fixture) frame(parent int64, kind, api, name string, ts, dur int64) int64 {
	_ = parent
	ts, dur = ts*u, dur*u
	id := f.next
	f.next++
	k, ok := ParseHostKind(kind)
	if !ok {
		panic("fixture: no host kind " + kind)
	}
	f.in.Frames = append(f.in.Frames, Frame{ID: id, Thread: f.in.ThreadID("t", 0, "1/1"), Kind: k,
		GraphLaunch: api == "graph_launch", Name: name, TsNs: ts, DurNs: dur})
	return id
}

// last returns the frame added last.
func (f *fixture) last() *Frame { return &f.in.Frames[len(f.in.Frames)-1] }

// on puts frame id, the frame added last, on thread th, and returns id.
func (f *fixture) on(id int64, th int32) int64 { f.last().Thread = th; return id }

// op adds a GPU operation with the class the preset would give it: the
// fixtures' kernels are all computation.
func (f *fixture) op(launch int64, kind, name string, ts, dur int64) {
	ts, dur = ts*u, dur*u
	id := f.next
	f.next++
	class := ClassComp
	if kind != "kernel" {
		class = ClassMem
	}
	k, ok := ParseOpKind(kind)
	if !ok {
		panic("fixture: no GPU operation kind " + kind)
	}
	f.in.Ops = append(f.in.Ops, Op{ID: id, Launch: launch, TraceID: f.in.TextID("t"), Stream: 7, Kind: k, NameID: f.in.TextID(name), TsNs: ts, DurNs: dur, Class: class})
}

// blocking marks frame id as blocking the host, as the preset rates scalar
// reads, synchronize calls and copies that wait.
func (f *fixture) blocking(id int64) {
	for i := range f.in.Frames {
		if f.in.Frames[i].ID == id {
			f.in.Frames[i].Blocking = true
		}
	}
}

// small is a step of a training-like loop: a python frame calling a matmul,
// a scalar read that syncs, a graph launch replayed twice (the second
// replay recorded only part of its kernels), and a memset nothing launched.
func small() *fixture {
	f := newFixture()
	root := f.frame(0, "python", "", "train.py(10): <module>", 0, 1000)
	step := f.frame(root, "python", "", "train.py(20): step", 0, 1000)
	mm := f.frame(step, "cpu_op", "", "aten::mm", 10, 40)
	l1 := f.frame(mm, "runtime", "launch", "cudaLaunchKernel", 20, 10)
	f.op(l1, "kernel", "sm90_gemm", 40, 200)
	item := f.frame(step, "cpu_op", "", "aten::item", 60, 200)
	dense := f.frame(item, "cpu_op", "", "aten::_local_scalar_dense", 61, 198)
	cp := f.frame(dense, "runtime", "memcpy", "cudaMemcpyAsync", 62, 196)
	f.op(cp, "gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", 241, 10)
	f.blocking(item)
	f.blocking(dense)
	f.blocking(cp)
	g := f.frame(step, "python", "", "model.py(5): forward", 300, 400)
	gl1 := f.frame(g, "runtime", "graph_launch", "cudaGraphLaunch", 310, 20)
	f.op(gl1, "kernel", "k_a", 320, 50)
	f.op(gl1, "kernel", "k_b", 370, 50)
	f.op(gl1, "kernel", "k_c", 420, 50)
	gl2 := f.frame(g, "runtime", "graph_launch", "cudaGraphLaunch", 500, 20)
	f.op(gl2, "kernel", "k_a", 520, 50)
	f.op(gl2, "kernel", "k_b", 570, 50)
	// The trace records the graph id: the two launches replay one graph.
	for i := len(f.in.Ops) - 5; i < len(f.in.Ops); i++ {
		f.in.Ops[i].GraphID = 1
	}
	f.op(0, "gpu_memset", "Memset (Device)", 800, 5)
	return f
}

func leafSum(nodes []*Node) int64 {
	var n int64
	for _, c := range nodes {
		n += c.SelfNs + leafSum(c.Children)
	}
	return n
}

func find(nodes []*Node, name string) *Node {
	for _, c := range nodes {
		if c.Name == name {
			return c
		}
		if x := find(c.Children, name); x != nil {
			return x
		}
	}
	return nil
}

func TestBuildSmall(t *testing.T) {
	f := small()
	res, err := Build(&f.in, Slice{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const gpu = (200 + 10 + 150 + 100 + 5) * u
	if res.GPU.TotalNs != gpu {
		t.Errorf("GPU.TotalNs = %d, want %d", res.GPU.TotalNs, gpu)
	}
	if got := leafSum(res.GPU.Roots); got != gpu {
		t.Errorf("GPU leaves sum to %d, want %d", got, gpu)
	}
	if b := find(res.GPU.Roots, NoLaunchBucket); b == nil || b.Ns != 5*u {
		t.Errorf("bucket = %+v, want 5 ns", b)
	}
	gl := find(res.GPU.Roots, "cudaGraphLaunch")
	if gl == nil || gl.Graph == nil {
		t.Fatalf("graph launch node = %+v", gl)
	}
	if *gl.Graph != (GraphReplay{Replays: 2, Recorded: 5, Expected: 6, Keyed: 2}) || !gl.Graph.Known() {
		t.Errorf("graph = %+v, want 2 replays, 5 of 6", *gl.Graph)
	}
	if k := find(gl.Children, "k_a"); k == nil || !k.NoCPUAttribution || k.Ns != 100*u || k.Count != 2 {
		t.Errorf("k_a = %+v", k)
	}
	item := find(res.GPU.Roots, "aten::item")
	if item == nil || !item.Sync || item.BlockedNs != 200*u {
		t.Errorf("aten::item = %+v, want a sync frame blocked 200 ns", item)
	}
	// aten::item is open (60..260 µs) when the device runs dry at 240
	// (until the copy at 241) and at 251 (until the graph's kernels at
	// 320): the outermost sync frame opened the second gap. The first
	// ends with a copy queued before it began: a wait on the queue, not the
	// sync's.
	if item.GapNs != 69*u {
		t.Errorf("aten::item opened %d ns of GPU idle, want 69 µs", item.GapNs)
	}
	if cp := find(res.GPU.Roots, "cudaMemcpyAsync"); cp == nil || !cp.Sync {
		t.Errorf("cudaMemcpyAsync (DtoH) = %+v, want a sync frame", cp)
	}
	// CPU view: every frame's self time, summing to the root's inclusive time.
	if res.CPU.TotalNs != 1000*u {
		t.Errorf("CPU.TotalNs = %d, want 1000 µs", res.CPU.TotalNs)
	}
	if got := leafSum(res.CPU.Roots); got != 1000*u {
		t.Errorf("CPU self times sum to %d, want 1000", got)
	}
	if cp := find(res.CPU.Roots, "cudaMemcpyAsync"); cp == nil || cp.SyncNs != 196*u {
		t.Errorf("CPU cudaMemcpyAsync = %+v, want 196 ns of sync", cp)
	}
	if m := res.Check.Metrics; m.GraphRecorded != 5 || m.GraphExpected != 6 || m.PythonFrames != 3 {
		t.Errorf("metrics = %+v", m)
	}
}

// TestOneStreamHasNoReading: a slice of one stream of a rank that ran
// work on another gets no host/device reading (its idle is not the
// device's); a slice of the rank's only stream is read as the whole is.
func TestOneStreamHasNoReading(t *testing.T) {
	f := small()
	whole, err := Build(&f.in, Slice{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	only, err := Build(&f.in, Slice{Stream: 7, HasStream: true}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if only.Check.Rule != whole.Check.Rule || only.Check.Unreadable() {
		t.Errorf("the rank's only stream: rule %q, want the whole's %q", only.Check.Rule, whole.Check.Rule)
	}
	f.in.Ops[0].Stream = 13 // the matmul's kernel runs on a second stream
	one, err := Build(&f.in, Slice{Stream: 7, HasStream: true}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := one.Check
	if c.Rule != OneStream.Name || c.Verdict != VerdictInconclusive || c.Label != "" || !c.Unreadable() ||
		!strings.Contains(c.Reason, "the slice is GPU stream 7, and its ranks ran work on other streams too (13)") {
		t.Errorf("one stream of two: rule %q, verdict %q, label %q, reason %q", c.Rule, c.Verdict, c.Label, c.Reason)
	}
}

func TestBuildWindowClips(t *testing.T) {
	f := small()
	// 0.3..0.6 ms.
	res, err := Build(&f.in, Slice{WindowStartNs: 300 * u, WindowEndNs: 600 * u}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Ops inside 300..600: k_a 320-370, k_b 370-420, k_c 420-470, k_a 520-570, k_b 570-620 (clipped to 30).
	const want = (50 + 50 + 50 + 50 + 30) * u
	if res.GPU.TotalNs != want || leafSum(res.GPU.Roots) != want {
		t.Errorf("GPU total %d, leaves %d, want %d", res.GPU.TotalNs, leafSum(res.GPU.Roots), want)
	}
	// Host time recorded in the window: the root covers it all.
	if res.CPU.TotalNs != 300*u || leafSum(res.CPU.Roots) != 300*u {
		t.Errorf("CPU total %d, leaves %d, want 300", res.CPU.TotalNs, leafSum(res.CPU.Roots))
	}
	// Busy: 320..470 and 520..600.
	if m := res.Check.Metrics; m.WallNs != 300*u || m.BusyNs != 230*u {
		t.Errorf("wall %d busy %d, want 300 and 230 µs", m.WallNs, m.BusyNs)
	}
}

func TestBuildSteps(t *testing.T) {
	f := small()
	f.in.Steps = []Step{
		{Trace: "t", Name: "execute_context_1(10)_generation_0(0)", Number: 0, Phase: "prefill", TsNs: 0, DurNs: 290 * u},
		{Trace: "t", Name: "execute_context_0(0)_generation_4(4)", Number: 1, Phase: "decode", TsNs: 290 * u, DurNs: 700 * u},
	}
	pre, err := Build(&f.in, Slice{Phase: "prefill"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dec, err := Build(&f.in, Slice{Phase: "decode"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Prefill: the matmul and the copy, launched in 0..290; decode: the
	// graph replays and the memset that nothing launched, which starts at
	// 800, inside the decode step.
	if pre.GPU.TotalNs != 210*u || dec.GPU.TotalNs != 255*u {
		t.Errorf("GPU prefill %d decode %d, want 210 and 255 µs", pre.GPU.TotalNs, dec.GPU.TotalNs)
	}
	if pre.CPU.TotalNs != 290*u || dec.CPU.TotalNs != 700*u {
		t.Errorf("CPU prefill %d decode %d, want 290 and 700", pre.CPU.TotalNs, dec.CPU.TotalNs)
	}
	if find(pre.GPU.Roots, "cudaGraphLaunch") != nil || find(dec.GPU.Roots, "aten::mm") != nil {
		t.Error("a view holds the other phase's frames")
	}
	none, err := Build(&f.in, Slice{Phase: "mixed"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if none.GPU.TotalNs != 0 || none.CPU.TotalNs != 0 {
		t.Errorf("mixed: GPU %d CPU %d, want an empty slice", none.GPU.TotalNs, none.CPU.TotalNs)
	}
}

func TestBuildNoSteps(t *testing.T) {
	f := small()
	res, err := Build(&f.in, Slice{Phase: "decode"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Gaps) == 0 || !strings.Contains(res.Gaps[0], "no step annotations") {
		t.Errorf("Gaps = %q, want the missing step annotations named", res.Gaps)
	}
}

func TestParentRepair(t *testing.T) {
	f := newFixture()
	a := f.frame(0, "python", "", "a", 0, 100)
	b := f.frame(a, "python", "", "b", 10, 20)
	// c claims b as parent but lies outside it: it belongs under a.
	c := f.frame(b, "cpu_op", "", "c", 50, 10)
	l := f.frame(c, "runtime", "launch", "cudaLaunchKernel", 52, 5)
	f.op(l, "kernel", "k", 60, 10)
	res, err := Build(&f.in, Slice{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// a ▸ c ▸ cudaLaunchKernel → k: one line, b nowhere.
	if l := find(res.GPU.Roots, "cudaLaunchKernel"); l == nil || strings.Join(l.Via, ",") != "a,c" {
		t.Errorf("cudaLaunchKernel = %+v, want it under a and c", l)
	}
}

func TestFoldAndDepth(t *testing.T) {
	f := newFixture()
	root := f.frame(0, "python", "", "root", 0, 10000)
	for i, w := range []int64{5000, 3000, 10, 9, 8} {
		name := string(rune('a' + i))
		fr := f.frame(root, "cpu_op", "", name, int64(i)*1000, 500)
		deep := f.frame(fr, "cpu_op", "", name+"_inner", int64(i)*1000+1, 400)
		l := f.frame(deep, "runtime", "launch", "cudaLaunchKernel", int64(i)*1000+2, 5)
		f.op(l, "kernel", "k_"+name, int64(i)*1000+10, w)
	}
	res, err := Build(&f.in, Slice{}, Options{MinPct: 1, Depth: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := leafSum(res.GPU.Roots), res.GPU.TotalNs; got != want {
		t.Errorf("leaves %d, total %d", got, want)
	}
	// a, b, and c (kept: a node shows at least three children), then d and e
	// folded into other. Depth 2: under each, the kernel leaf directly.
	r := res.GPU.Roots[0]
	var names []string
	for _, c := range r.Children {
		first := c.Name
		if len(c.Via) > 0 {
			first = c.Via[0]
		}
		names = append(names, first)
	}
	if strings.Join(names, ",") != "a,b,c,other (2 nodes)" || r.Children[3].Ns != 17*u {
		t.Fatalf("root children = %q (other %d ns), want a, b, c and other (17 µs)", names, r.Children[3].Ns)
	}
	if a := r.Children[0]; len(a.Children) != 1 || a.Children[0].Name != "k_a" {
		t.Errorf("a's children = %+v, want the kernel leaf", a.Children)
	}
}

func TestTextHTMLFolded(t *testing.T) {
	f := small()
	f.in.Frames[3].Name = "cudaLaunchKernel<script>alert(1)</script>"
	res, err := Build(&f.in, Slice{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ format, view string }{{FormatTree, ""}, {FormatFolded, "gpu"}, {FormatFolded, "cpu"}, {FormatHTML, ""}} {
		var buf bytes.Buffer
		if err := Write(&buf, res, tc.format, tc.view); err != nil {
			t.Fatal(err)
		}
		name := "small." + tc.format
		if tc.view != "" {
			name += "." + tc.view
		}
		testutil.Golden(t, filepath.Join("testdata", name+".golden"), buf.Bytes())
		if tc.format == FormatHTML {
			if strings.Contains(buf.String(), "<script") {
				t.Error("HTML holds an unescaped <script")
			}
		}
		if tc.format == FormatFolded {
			var sum int64
			for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
				k := strings.LastIndexByte(line, ' ')
				var n int64
				for _, c := range line[k+1:] {
					n = n*10 + int64(c-'0')
				}
				sum += n
			}
			tree := res.GPU.TotalNs
			if tc.view == "cpu" {
				tree = res.CPU.TotalNs
			}
			if sum != tree {
				t.Errorf("folded %s sums to %d, want %d", tc.view, sum, tree)
			}
		}
	}
	if err := Write(&bytes.Buffer{}, res, "svg", ""); err == nil || err.Error() != "unexpected output format svg" {
		t.Errorf("Write(svg) = %v", err)
	}
}

func TestMsgpackRoundTrip(t *testing.T) {
	f := small()
	res, err := Build(&f.in, Slice{}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	b, err := msgpack.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := msgpack.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	var x, y bytes.Buffer
	_ = Write(&x, res, FormatTree, "")
	_ = Write(&y, &back, FormatTree, "")
	if x.String() != y.String() {
		t.Errorf("the decoded Result draws differently:\n%s", testutil.Diff(x.String(), y.String()))
	}
}

func TestBuildErrors(t *testing.T) {
	if _, err := Build(&Input{}, Slice{}, Options{}); err != ErrNoInput {
		t.Errorf("Build(empty) = %v, want ErrNoInput", err)
	}
	f := small()
	_, err := Build(&f.in, Slice{WindowStartNs: 5e6, WindowEndNs: 1e6}, Options{})
	if err == nil || err.Error() != "crossview: window 5.000..1.000 ms is empty" {
		t.Errorf("Build(bad window) = %v", err)
	}
}

// A Stream takes the frames in their threads' start order and refuses one
// out of it; in that order it builds what Build builds.
func TestStreamOrder(t *testing.T) {
	f := small()
	want, err := Build(&f.in, Slice{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	prepare(&f.in)
	st := NewStream(&f.in, []Slice{{}}, Options{})
	order := startOrder(f.in.Frames)
	for _, i := range order {
		if err := st.Frame(&f.in.Frames[i]); err != nil {
			t.Fatal(err)
		}
	}
	res, errs := st.Results()
	if errs[0] != nil || !reflect.DeepEqual(res[0], want) {
		t.Errorf("streamed: %v, %+v; want %+v", errs[0], res[0], want)
	}
	st = NewStream(&f.in, []Slice{{}}, Options{})
	if err := st.Frame(&f.in.Frames[order[1]]); err != nil {
		t.Fatal(err)
	}
	if err := st.Frame(&f.in.Frames[order[0]]); err == nil || !strings.Contains(err.Error(), "start order") {
		t.Errorf("a frame out of order: %v", err)
	}
}

// Without graph ids, launches from one call site are one graph only where
// they replay the same kernels: a compiled function replays several graphs
// of different sizes from one site (negative_queue_length_a100), which are
// not under-recorded replays of the largest.
func TestGraphsOfOneSiteWithoutIDs(t *testing.T) {
	f := newFixture()
	root := f.frame(0, "python", "", "train.py(10): <module>", 0, 1000)
	for i, n := range []int{3, 1, 3, 1} {
		gl := f.frame(root, "runtime", "graph_launch", "cudaGraphLaunch", int64(100+200*i), 10)
		for j := range n {
			f.op(gl, "kernel", fmt.Sprintf("k%d_%d", n, j), int64(120+200*i+20*j), 10)
		}
	}
	res, err := Build(&f.in, Slice{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	gl := find(res.GPU.Roots, "cudaGraphLaunch")
	if gl == nil || gl.Graph == nil || gl.Graph.Replays != 4 || gl.Graph.Recorded != 8 || gl.Graph.Expected != 8 {
		t.Fatalf("graph launch node = %+v", gl)
	}
	if m := res.Check.Metrics; m.GraphExpected != m.GraphRecorded {
		t.Errorf("graph replays %d of %d recorded: two graphs of one site taken for one", m.GraphRecorded, m.GraphExpected)
	}
}

// TestGraphCoverageUnknownWithoutIDs: replays whose kernels carry no graph
// id are compared only with replays of the same kernels, so their
// coverage says nothing of what the trace left out: the views say it is
// unknown (negative_queue_length_a100, vllm_h100_tp4_rank0).
func TestGraphCoverageUnknownWithoutIDs(t *testing.T) {
	g := &GraphReplay{Replays: 35, Recorded: 300, Expected: 300}
	if g.Known() {
		t.Errorf("%+v: known without graph ids", *g)
	}
	got := nodeFacts(&Node{Name: "cudaGraphLaunch", Ns: 1, Graph: g}, "gpu", 1)
	if !strings.Contains(got, "no graph ids: whether every node was recorded is unknown") || strings.Contains(got, "(100.0%)") {
		t.Errorf("node facts: %s", got)
	}
}
