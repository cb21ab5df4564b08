//go:build cgo && unix

package crossview_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/internal/duck"
	"github.com/tracebook/tracebook/internal/testutil"
	"github.com/tracebook/tracebook/pipeline"
	"github.com/tracebook/tracebook/sql"
)

// loaded keeps one database per trace set for the whole test binary: the
// big traces take seconds to load.
var (
	loadedMu sync.Mutex
	loaded   = map[string]*duck.DB{}
)

// load opens an in-memory database with the trace set dir (relative to the
// shared trace collection) loaded, or skips.
func load(t testing.TB, dir string) *duck.DB {
	t.Helper()
	root := testutil.SharedTraces(t)
	loadedMu.Lock()
	defer loadedMu.Unlock()
	if db, ok := loaded[dir]; ok {
		return db
	}
	db, err := duck.Open("", duck.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Load(context.Background(), []string{filepath.Join(root, dir)}, trace.LoadOptions{}, nil); err != nil {
		t.Fatalf("loading %s: %v", dir, err)
	}
	loaded[dir] = db
	return db
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, db := range loaded {
		db.Close()
	}
	os.Exit(code)
}

func leafSum(nodes []*crossview.Node) int64 {
	var n int64
	for _, c := range nodes {
		n += c.SelfNs + leafSum(c.Children)
	}
	return n
}

// sumNamed sums the time of the nodes named name (a chain folded into a
// node counts under the node's own name only).
func sumNamed(nodes []*crossview.Node, name string) int64 {
	var n int64
	for _, c := range nodes {
		if c.Name == name {
			n += c.Ns
			continue
		}
		n += sumNamed(c.Children, name)
	}
	return n
}

// gpuTime is the GPU time of the whole trace, straight from the events table.
func gpuTime(t *testing.T, db *duck.DB) int64 {
	t.Helper()
	tb, err := db.Query(context.Background(), `SELECT coalesce(sum(dur_ns), 0) FROM events WHERE ph = 'X' AND kind IN ('kernel', 'gpu_memcpy', 'gpu_memset')`, 0)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := tb.Rows[0][0].(int64)
	if f, ok := tb.Rows[0][0].(float64); ok {
		v = int64(f)
	}
	return v
}

// TestEveryTraceAccountsForAllGPUTime: on every shared trace, the GPU
// view's leaves sum to the GPU time of the trace exactly, and the CPU view's
// self times to its total.
func TestEveryTraceAccountsForAllGPUTime(t *testing.T) {
	if testing.Short() {
		t.Skip("loads every shared trace")
	}
	for _, set := range testutil.TraceSets(t) {
		t.Run(strings.ReplaceAll(set, "/", "_"), func(t *testing.T) {
			db, err := duck.Open("", duck.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Load(context.Background(), []string{filepath.Join(testutil.SharedTraces(t), set)}, trace.LoadOptions{}, nil); err != nil {
				t.Skipf("the importer does not load %s: %v", set, err)
			}
			want := gpuTime(t, db)
			res, err := pipeline.CrossView(context.Background(), db, evidence.Filter{}, crossview.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			if res.GPU.TotalNs != want {
				t.Errorf("GPU.TotalNs = %d, want %d (events table)", res.GPU.TotalNs, want)
			}
			if got := leafSum(res.GPU.Roots); got != want {
				t.Errorf("GPU leaves sum to %d, want %d", got, want)
			}
			if got := leafSum(res.CPU.Roots); got != res.CPU.TotalNs {
				t.Errorf("CPU self times sum to %d, want %d", got, res.CPU.TotalNs)
			}
			if m := res.Check.Metrics; m.HostNs() > int64(m.LaunchThreads)*m.SpanNs() {
				t.Errorf("launching threads' host time %d ns exceeds %d launching thread(s) × the %d ns GPU span", m.HostNs(), m.LaunchThreads, m.SpanNs())
			}
			// Each launching thread's base is its own rank's span.
			if m := res.Check.Metrics; m.LaunchThreads > 0 && (m.HostNs() > m.LaunchSpanNs || m.LaunchSpanNs > int64(m.LaunchThreads)*m.SpanNs()) {
				t.Errorf("host time %d ns, launching threads' spans %d ns, %d threads × span %d ns: want host <= spans <= threads × span",
					m.HostNs(), m.LaunchSpanNs, m.LaunchThreads, m.SpanNs())
			}
			var noLaunch int64
			for _, r := range res.GPU.Roots {
				if r.Name == crossview.NoLaunchBucket {
					noLaunch = r.Ns
				}
			}
			byOperator := sumNamed(res.GPU.Roots, crossview.LaunchNotCaptured)
			t.Logf("%s: GPU %d ns (%.1f%% without a launching CPU event, %.1f%% linked to an operator by External id), verdict %s (%s)",
				set, want, 100*float64(noLaunch)/float64(max(want, 1)), 100*float64(byOperator)/float64(max(want, 1)), res.Check.Verdict, res.Check.Label)
		})
	}
}

// goldens: the top of both trees and the verdict.
var goldens = []struct {
	name, dir string
	filter    evidence.Filter
}{
	{"vllm_h100", "tracemap/vllm_h100_tp4_rank0", evidence.Filter{}},
	{"b200_eager", "tracelens/b200_eager", evidence.Filter{}},
	{"dlrm_rank0", "param/dlrm_8rank", evidence.Filter{Rank: 0, HasRank: true}},
	{"resnet50_2021", "kineto/resnet50_num_workers_0", evidence.Filter{}},
}

func TestGolden(t *testing.T) {
	for _, g := range goldens {
		t.Run(g.name, func(t *testing.T) {
			db := load(t, g.dir)
			res, err := pipeline.CrossView(context.Background(), db, g.filter, crossview.Options{Depth: 8, MinPct: 3})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := crossview.Write(&buf, res, crossview.FormatTree, ""); err != nil {
				t.Fatal(err)
			}
			testutil.Golden(t, filepath.Join("testdata", g.name+".tree.golden"), buf.Bytes())
			// The folded stacks of each view sum to its total: nothing is
			// lost between the tree and the flamegraph.
			for _, tr := range []*crossview.Tree{&res.GPU, &res.CPU} {
				var folded bytes.Buffer
				if err := crossview.Write(&folded, res, crossview.FormatFolded, tr.View); err != nil {
					t.Fatal(err)
				}
				var sum int64
				for _, line := range strings.Split(strings.TrimSpace(folded.String()), "\n") {
					n, err := strconv.ParseInt(line[strings.LastIndexByte(line, ' ')+1:], 10, 64)
					if err != nil {
						t.Fatalf("folded %s line %q: %v", tr.View, line, err)
					}
					sum += n
				}
				if sum != tr.TotalNs {
					t.Errorf("folded %s sums to %d, want %d", tr.View, sum, tr.TotalNs)
				}
			}
		})
	}
}

// TestHostTimeInGPUSpanOnSharedTraces: the cross-check measures the
// launching thread's host time in the GPU span, as the GPU's: alexnet's
// thread ran 43.4 s of wall around a 12.9 s GPU span, and b200_eager's
// python frames overlap a record_function range by 0.09 ms, which counted
// twice made its host time exceed the wall.
func TestHostTimeInGPUSpanOnSharedTraces(t *testing.T) {
	for _, dir := range []string{"hta/critical_path_alexnet", "tracelens/b200_eager"} {
		t.Run(strings.ReplaceAll(dir, "/", "_"), func(t *testing.T) {
			db := load(t, dir)
			res, err := pipeline.CrossView(context.Background(), db, evidence.Filter{}, crossview.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			m := res.Check.Metrics
			if m.LaunchThreads != 1 || m.EdgeIdleNs <= 0 {
				t.Fatalf("%d launching threads, %d ns of edges: want one thread and a wall past the GPU span", m.LaunchThreads, m.EdgeIdleNs)
			}
			if m.HostNs() > m.SpanNs() {
				t.Errorf("host time %d ns exceeds the %d ns GPU span of the one launching thread", m.HostNs(), m.SpanNs())
			}
			if m.BlockedWhileBusyNs > m.BusyNs {
				t.Errorf("blocked while busy %d ns exceeds busy %d ns", m.BlockedWhileBusyNs, m.BusyNs)
			}
			if m.QueuedWhileBusyNs > m.BusyNs {
				t.Errorf("queued while busy %d ns exceeds busy %d ns", m.QueuedWhileBusyNs, m.BusyNs)
			}
			if res.CPU.TotalNs > m.WallNs {
				t.Errorf("the CPU view's %d ns of one thread's self time exceed the %d ns wall", res.CPU.TotalNs, m.WallNs)
			}
		})
	}
}

// TestVLLMH100NotHostBound: the worker of the tracemap vLLM trace waits on
// the engine core and on its GPU; the host is not the constraint.
func TestVLLMH100NotHostBound(t *testing.T) {
	db := load(t, "tracemap/vllm_h100_tp4_rank0")
	res, err := pipeline.CrossView(context.Background(), db, evidence.Filter{}, crossview.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	c := res.Check
	if c.Verdict == crossview.VerdictHost {
		t.Errorf("verdict = %s (%s), want anything but host-bound: %s", c.Verdict, c.Label, c.Reason)
	}
	if len(c.Notes) == 0 || !strings.Contains(c.Notes[0], "stack capture inflates host time") {
		t.Errorf("notes = %q, want the stack-capture caveat first", c.Notes)
	}
	if find(res.GPU.Roots, crossview.NoLaunchBucket) == nil && res.Check.Metrics.GraphExpected == 0 {
		t.Error("no graph replays found in a FULL_AND_PIECEWISE vLLM trace")
	}
}

func find(nodes []*crossview.Node, name string) *crossview.Node {
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

// TestFilterChangesBothViews: a rank, a window and a phase each change the
// GPU view and the CPU view together.
func TestFilterChangesBothViews(t *testing.T) {
	cases := []struct {
		name, dir  string
		whole, sub evidence.Filter
	}{
		{"rank", "param/dlrm_8rank", evidence.Filter{}, evidence.Filter{Rank: 3, HasRank: true}},
		{"window", "tracemap/vllm_h100_tp4_rank0", evidence.Filter{}, evidence.Filter{WindowStartNs: 100e6, WindowEndNs: 150e6}},
		{"step", "tracelens/mi300x_resnet_act_checkpoint", evidence.Filter{}, evidence.Filter{Step: 16, HasStep: true}},
		// vLLM without step annotations: the steps preset falls back to
		// the python frames of execute_model (phase unknown).
		{"step_vllm", "tracemap/vllm_h100_tp4_rank0", evidence.Filter{}, evidence.Filter{Step: 5, HasStep: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db := load(t, tc.dir)
			whole, err := pipeline.CrossView(context.Background(), db, tc.whole, crossview.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			sub, err := pipeline.CrossView(context.Background(), db, tc.sub, crossview.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			if sub.GPU.TotalNs <= 0 || sub.CPU.TotalNs <= 0 {
				t.Fatalf("slice %+v: GPU %d CPU %d, want both non-empty (gaps %q)", tc.sub, sub.GPU.TotalNs, sub.CPU.TotalNs, sub.Gaps)
			}
			if sub.GPU.TotalNs >= whole.GPU.TotalNs || sub.CPU.TotalNs >= whole.CPU.TotalNs {
				t.Errorf("slice %+v: GPU %d of %d, CPU %d of %d: want both views smaller", tc.sub,
					sub.GPU.TotalNs, whole.GPU.TotalNs, sub.CPU.TotalNs, whole.CPU.TotalNs)
			}
			if got := leafSum(sub.GPU.Roots); got != sub.GPU.TotalNs {
				t.Errorf("slice leaves %d, total %d", got, sub.GPU.TotalNs)
			}
			if sub.Check.Metrics.WallNs >= whole.Check.Metrics.WallNs {
				t.Errorf("slice wall %d, whole %d", sub.Check.Metrics.WallNs, whole.Check.Metrics.WallNs)
			}
		})
	}
}

// TestPhaseSelectsBothViews: the b200 trace holds one prefill step that
// spans the trace: --phase prefill keeps both views whole, and --phase
// decode is an error that names the phase the steps have (an empty view
// would read as a slice with nothing to fix).
func TestPhaseSelectsBothViews(t *testing.T) {
	db := load(t, "tracelens/b200_eager")
	ctx := context.Background()
	whole, err := pipeline.CrossView(ctx, db, evidence.Filter{}, crossview.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	pre, err := pipeline.CrossView(ctx, db, evidence.Filter{Phase: "prefill"}, crossview.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if pre.GPU.TotalNs != whole.GPU.TotalNs || pre.CPU.TotalNs > whole.CPU.TotalNs || pre.CPU.TotalNs == 0 {
		t.Errorf("prefill: GPU %d of %d, CPU %d of %d", pre.GPU.TotalNs, whole.GPU.TotalNs, pre.CPU.TotalNs, whole.CPU.TotalNs)
	}
	_, err = pipeline.CrossView(ctx, db, evidence.Filter{Phase: "decode"}, crossview.DefaultOptions())
	var se *pipeline.SliceError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "holds no decode step (its steps' phases: prefill)") {
		t.Errorf("decode: error %v, want a SliceError naming the prefill phase", err)
	}
}

// BenchmarkCrossViewH100 times the cross-view after load on the 48 MB vLLM
// H100 trace (106k python frames): the preset's query, reading its rows and
// building both trees and the cross-check. It also reports the process's
// CPU time per run (DuckDB's threads included), steadier than wall time on
// a shared machine; the target is under a second.
func BenchmarkCrossViewH100(b *testing.B) {
	db := load(b, "tracemap/vllm_h100_tp4_rank0")
	ctx := context.Background()
	start := cpuTime()
	for b.Loop() {
		if _, err := pipeline.CrossView(ctx, db, evidence.Filter{}, crossview.DefaultOptions()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/1e6, "cpu-ms/op")
}

// cpuTime is the CPU time the process has used, DuckDB's threads included.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// linkTrace is a hand-written two-rank job for the preset's links. Rank 0
// has no python frames: its operator aten::mm carries a Call stack, and
// its kernels are linked by correlation (k_corr), by the External id of
// one operator (k_ext: its launch is missing), not at all because two
// operators share the External id (k_amb), or not at all because it was
// launched before the host capture (k_early: its correlation is lower than
// every runtime call's). Rank 1 copies each correlation id into External
// id, as some exporters do: k_copy's number collides with an operator's
// External id and must not link; its python frame turns Call stacks off.
var linkTrace = map[string]string{
	"rank0.json": `{"distributedInfo": {"rank": 0, "world_size": 2}, "traceEvents": [
{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 40, "args": {"External id": 7, "Call stack": "model.py(2): forward;train.py(1): <module>"}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 20, "dur": 5, "args": {"External id": 7, "correlation": 100}},
{"ph": "X", "cat": "kernel", "name": "k_corr", "pid": 0, "tid": 7, "ts": 40, "dur": 10, "args": {"External id": 7, "correlation": 100, "stream": 7}},
{"ph": "X", "cat": "kernel", "name": "k_ext", "pid": 0, "tid": 7, "ts": 60, "dur": 20, "args": {"External id": 7, "correlation": 101, "stream": 7}},
{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 100, "dur": 10, "args": {"External id": 8}},
{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 120, "dur": 10, "args": {"External id": 8}},
{"ph": "X", "cat": "kernel", "name": "k_amb", "pid": 0, "tid": 7, "ts": 140, "dur": 5, "args": {"External id": 8, "correlation": 102, "stream": 7}},
{"ph": "X", "cat": "kernel", "name": "k_early", "pid": 0, "tid": 7, "ts": 1, "dur": 3, "args": {"correlation": 50, "stream": 7}}
]}`,
	"rank1.json": `{"distributedInfo": {"rank": 1, "world_size": 2}, "traceEvents": [
{"ph": "X", "cat": "python_function", "name": "train.py(1): <module>", "pid": 1, "tid": 1, "ts": 0, "dur": 100, "args": {"Python id": 1}},
{"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1, "ts": 10, "dur": 10, "args": {"External id": 201, "Call stack": "train.py(1): <module>"}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 12, "dur": 5, "args": {"External id": 300, "correlation": 300}},
{"ph": "X", "cat": "kernel", "name": "k_r1", "pid": 0, "tid": 7, "ts": 30, "dur": 10, "args": {"External id": 300, "correlation": 300, "stream": 7}},
{"ph": "X", "cat": "kernel", "name": "k_copy", "pid": 0, "tid": 7, "ts": 50, "dur": 4, "args": {"External id": 201, "correlation": 201, "stream": 7}}
]}`,
}

// TestPresetLinks runs the crossview preset on linkTrace in DuckDB: each
// operation's link, the operator it names, which frames carry a Call
// stack, and the cross-view built from them.
func TestPresetLinks(t *testing.T) {
	dir := t.TempDir()
	for name, doc := range linkTrace {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db, err := duck.Open("", duck.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.Load(ctx, []string{dir}, trace.LoadOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	p, ok := sql.Lookup(sql.Crossview)
	if !ok {
		t.Fatal("no crossview preset")
	}
	tb, err := db.Query(ctx, p.SQL, 0, "", -1)
	if err != nil {
		t.Fatal(err)
	}
	in, err := crossview.FromTable(tb)
	if err != nil {
		t.Fatal(err)
	}
	names := map[int64]string{}
	var stacks []string
	for _, f := range in.Frames {
		names[f.ID] = fmt.Sprintf("%s@%d", f.Name, f.TsNs/1000)
		if f.CallStack != 0 {
			stacks = append(stacks, fmt.Sprintf("%d %s: %s", in.ThreadOf(&f).Rank, f.Name, in.CallStackOf(&f)))
		}
	}
	var got []string
	for _, o := range in.Ops {
		got = append(got, fmt.Sprintf("%d %s %s launch=%s operator=%s", o.Rank, in.OpName(&o), o.Link, names[o.Launch], names[o.Operator]))
	}
	sort.Strings(got)
	want := []string{
		"0 k_amb external_id_ambiguous launch= operator=",
		"0 k_corr correlation launch=cudaLaunchKernel@20 operator=",
		"0 k_early before_capture launch= operator=",
		"0 k_ext external_id launch= operator=aten::mm@10",
		"1 k_copy before_capture launch= operator=",
		"1 k_r1 correlation launch=cudaLaunchKernel@12 operator=",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("links:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
	if want := "0 aten::mm: model.py(2): forward;train.py(1): <module>"; strings.Join(stacks, "\n") != want {
		t.Errorf("call stacks = %q, want only %q (rank 1 has python frames)", stacks, want)
	}

	res, err := pipeline.CrossView(ctx, db, evidence.Filter{}, crossview.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := leafSum(res.GPU.Roots); got != res.GPU.TotalNs || got != (10+20+5+3+10+4)*1000 {
		t.Errorf("GPU leaves sum to %d, total %d, want 52 µs both", got, res.GPU.TotalNs)
	}
	if got, want := path(res.GPU.Roots, "k_ext"), "train.py(1): <module> ▸ model.py(2): forward ▸ aten::mm | [launch not captured] | k_ext"; got != want {
		t.Errorf("path to k_ext:\n got %q\nwant %q", got, want)
	}
	bucket := find(res.GPU.Roots, crossview.NoLaunchBucket)
	if bucket == nil || bucket.Ns != (5+3+4)*1000 {
		t.Errorf("bucket = %+v, want k_amb, k_early and k_copy (12 µs)", bucket)
	}
	testutil.Contains(t, "gaps", strings.Join(res.Gaps, "\n"),
		"1 GPU operations (0.020 ms, 38.5% of GPU time) have no runtime call in the trace but carry the External id of exactly one operator",
		"3 GPU operations (0.012 ms, 23.1% of GPU time) have no launching CPU event",
		"2 of them (0.007 ms) carry a correlation id lower than every runtime call",
		"1 of them (0.005 ms) carry an External id that several operators have")
	if m := res.Check.Metrics; m.CallStackOps != 1 {
		t.Errorf("CallStackOps = %d, want 1", m.CallStackOps)
	}
}

// path returns the lines from a root down to the first node named name,
// each line its folded chain and name joined by " ▸ ", lines by " | ".
func path(nodes []*crossview.Node, name string) string {
	for _, n := range nodes {
		line := strings.Join(append(append([]string{}, n.Via...), n.Name), " ▸ ")
		if n.Name == name {
			return line
		}
		if p := path(n.Children, name); p != "" {
			return line + " | " + p
		}
	}
	return ""
}
