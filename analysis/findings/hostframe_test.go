package findings_test

import (
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/findings"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/internal/testutil"
)

// hostBound judges a one-rank bundle of the producer whose GPU idles 60 ms
// of 100 ms, 55 ms of it host waits, with or without graph replays and
// Python stacks, and returns its host-bound finding with what the fix
// rewrite needs.
func hostBound(t *testing.T, producer string, graphs, stacks bool) (evidence.Finding, *evidence.Evidence, *findings.Gate) {
	t.Helper()
	return hostBoundOn(t, producer, graphs, stacks, "")
}

// hostBoundOn is hostBound for a trace captured on day (YYYY-MM-DD; ""
// leaves the traces table without base_time_ns).
func hostBoundOn(t *testing.T, producer string, graphs, stacks bool, day string) (evidence.Finding, *evidence.Evidence, *findings.Gate) {
	t.Helper()
	b := bundle(producer, "cuda", "NVIDIA H100 80GB HBM3", 40_000_000, 60_000_000, map[string]*table.Table{"gaps": gapsTable(55_000_000)})
	b.Traces.Rows[0][6], b.Traces.Rows[0][8] = graphs, stacks
	if day != "" {
		b.Traces.Columns = append(b.Traces.Columns, table.Column{Name: "base_time_ns"})
		b.Traces.Rows[0] = append(b.Traces.Rows[0], testutil.UnixDay(t, day))
	}
	ev := evidence.Rollup(b, evidence.Filter{})
	fs, gate := findings.Judge(ev, nil)
	for _, f := range fs {
		if f.Rule == "host_bound_idle" {
			return f, ev, gate
		}
	}
	t.Fatalf("%s: no host-bound finding: %s", producer, rules(fs))
	return evidence.Finding{}, nil, nil
}

// TestNameHostFrameVLLM: with CUDA graphs on, where the longest gaps sit
// picks the branch of the vLLM host fix. In the model's forward
// (vllm_mi300x_tp4_rank0: llama.py(374) forward) async scheduling hides
// them only up to a step's GPU time (two batches in flight: the next
// step's forward runs while the GPU finishes this one), so the fix
// re-profiles without Python stacks and names the frame; in the scheduler
// it is the async-scheduling fix.
func TestNameHostFrameVLLM(t *testing.T) {
	fwd := findings.HostFrame{Name: "vllm/model_executor/models/llama.py(374): forward",
		Stack: []string{"torch/nn/modules/module.py(1755): _call_impl", "vllm/model_executor/models/llama.py(565): forward", "vllm/compilation/decorators.py(167): __call__", "vllm/model_executor/models/llama.py(374): forward"},
		Leaf:  true, Gaps: 5, Of: 5, Ns: 30_000_000, IdleNs: 60_000_000}
	f, ev, gate := hostBound(t, "vllm", true, true)
	before := f.Fix
	if !strings.Contains(before, "If it is the scheduler between steps") {
		t.Fatalf("unnamed fix is not the two-branch one: %q", before)
	}
	if !findings.NameHostFrame(&f, ev, nil, gate, fwd) {
		t.Fatal("the host fix was not rewritten")
	}
	for _, want := range []string{"inside the model's forward, in vllm/model_executor/models/llama.py(374): forward", "Async scheduling keeps two batches in flight", "it hides these gaps up to a step's GPU time, and what exceeds that stays (check that async scheduling is on", "profile again without them first", "no deeper frame was open"} {
		if !strings.Contains(f.Fix, want) {
			t.Errorf("forward fix lacks %q: %q", want, f.Fix)
		}
	}
	// The frame is vLLM's compiled entry (decorators.py called it): the
	// decorator skips Dynamo's guards, so they are not offered as the cause.
	if !strings.Contains(f.Fix, "runs it without Dynamo's guard checks") || strings.Contains(f.Fix, "such as torch.compile's guard checks") {
		t.Errorf("forward fix of vLLM's compiled entry: %q", f.Fix)
	}
	if strings.Contains(f.Fix, "If it is the scheduler") || strings.Contains(f.Fix, "does not hide these gaps") || !strings.Contains(f.Snippet, "torch_profiler_with_stack\": false") {
		t.Errorf("forward fix still offers the scheduler branch: %q / %q", f.Fix, f.Snippet)
	}
	if !strings.Contains(f.Observation, "At the middle of each of the cross-check's 5 longest GPU gaps on this rank (together 30.0 ms, 50.0% of its 60.0 ms of GPU idle), the launching thread was working in vllm/model_executor/models/llama.py(374): forward, with no deeper frame open.") {
		t.Errorf("observation does not name the frame with its base: %q", f.Observation)
	}

	// A trace captured before vLLM had VLLM_TORCH_PROFILER_WITH_STACK
	// (vLLM #21803) ran a worker that wrote with_stack=True into its
	// profiler call: its re-profile edits that call
	// (vllm_mi300x_tp4_rank0, captured on 2025-05-14); a later one gets
	// --profiler-config first, the environment variable before v0.13.
	for _, c := range []struct{ day, want, not string }{
		{"2025-05-14", "torch.profiler.profile(..., with_stack=False)  # in vllm/v1/worker/gpu_worker.py", "--profiler-config '"},
		{"2025-09-01", "vllm serve MODEL --profiler-config '", "gpu_worker.py"},
		{"2026-01-20", "vllm serve MODEL --profiler-config '", "VLLM_TORCH_PROFILER_DIR=DIR"},
	} {
		f, ev, gate := hostBoundOn(t, "vllm", true, true, c.day)
		findings.NameHostFrame(&f, ev, nil, gate, fwd)
		if !strings.Contains(f.Snippet, c.want) || strings.Contains(f.Snippet, c.not) {
			t.Errorf("captured on %s: snippet %q, want one with %q", c.day, f.Snippet, c.want)
		}
	}

	sched := findings.HostFrame{Name: "vllm/v1/core/sched/scheduler.py(431): schedule",
		Stack: []string{"vllm/v1/engine/core.py(226): step", "vllm/v1/core/sched/scheduler.py(431): schedule"}, Gaps: 3, Of: 5, Ns: 20_000_000, IdleNs: 60_000_000}
	f, ev, gate = hostBound(t, "vllm", true, true)
	findings.NameHostFrame(&f, ev, nil, gate, sched)
	if !strings.Contains(f.Fix, "they sit in the scheduler between steps (vllm/v1/core/sched/scheduler.py(431): schedule)") ||
		!strings.Contains(f.Fix, "async scheduling is on") || strings.Contains(f.Fix, "model's forward") || !strings.Contains(f.Snippet, "--async-scheduling") {
		t.Errorf("scheduler fix: %q / %q", f.Fix, f.Snippet)
	}
	if !strings.Contains(f.Observation, "At the middle of 3 of the cross-check's 5 longest GPU gaps") {
		t.Errorf("observation: %q", f.Observation)
	}

	// A frame that tells neither keeps both branches, naming it.
	other := findings.HostFrame{Name: "vllm/v1/worker/gpu_model_runner.py(1000): execute_model", Stack: []string{"vllm/v1/worker/gpu_model_runner.py(1000): execute_model"},
		Gaps: 2, Of: 5, Ns: 20_000_000, IdleNs: 60_000_000}
	f, ev, gate = hostBound(t, "vllm", true, false)
	findings.NameHostFrame(&f, ev, nil, gate, other)
	if !strings.Contains(f.Fix, "the longest sit in vllm/v1/worker/gpu_model_runner.py(1000): execute_model. If that is the scheduler between steps") {
		t.Errorf("undecided fix: %q", f.Fix)
	}
}

// TestNameHostFrameOthers: SGLang's forward branch, a training rank's frame
// to shorten first, and a frame that leaves the fix alone where it is not
// the host fix's own.
func TestNameHostFrameOthers(t *testing.T) {
	at := findings.HostFrame{Name: "sglang/srt/layers/logits_processor.py(120): forward", Stack: []string{"sglang/srt/layers/logits_processor.py(120): forward"},
		Gaps: 4, Of: 5, Ns: 30_000_000, IdleNs: 60_000_000}
	f, ev, gate := hostBound(t, "sglang", true, false)
	findings.NameHostFrame(&f, ev, nil, gate, at)
	if !strings.Contains(f.Fix, "the gaps sit inside the model's forward, in sglang/srt/layers/logits_processor.py(120): forward") || !strings.Contains(f.Fix, "the overlap scheduler overlaps") || strings.Contains(f.Fix, "Python stacks were captured") {
		t.Errorf("sglang forward fix: %q", f.Fix)
	}

	at = findings.HostFrame{Name: "<built-in function zoom_shift>", Stack: []string{"scipy/ndimage/_interpolation.py(739): zoom", "<built-in function zoom_shift>"},
		Leaf: true, Gaps: 4, Of: 5, Ns: 30_000_000, IdleNs: 60_000_000}
	f, ev, gate = hostBound(t, "profiler_step", false, false)
	findings.NameHostFrame(&f, ev, nil, gate, at)
	if !strings.HasPrefix(f.Fix, "Shorten the CPU work between launches, first <built-in function zoom_shift> (called from scipy/ndimage/_interpolation.py(739): zoom), where the longest gaps sit;") {
		t.Errorf("training fix: %q", f.Fix)
	}

	// Code Inductor generated is no frame to shorten by hand.
	at = findings.HostFrame{Name: "/tmp/torchinductor_root/ov/cov463q.py(2533): call", Stack: []string{"/tmp/torchinductor_root/ov/cov463q.py(2533): call"},
		Leaf: true, Gaps: 237, Of: 256, Ns: 130_000_000, IdleNs: 459_000_000}
	f, ev, gate = hostBound(t, "profiler_step", false, false)
	findings.NameHostFrame(&f, ev, nil, gate, at)
	if !strings.HasPrefix(f.Fix, "The longest gaps sit in /tmp/torchinductor_root/ov/cov463q.py(2533): call, the Python wrapper torch.compile's Inductor generated") || strings.Contains(f.Fix, "Shorten") {
		t.Errorf("inductor fix: %q", f.Fix)
	}
	f, ev, gate = hostBound(t, "profiler_step", false, true)
	findings.NameHostFrame(&f, ev, nil, gate, at)
	if !strings.Contains(f.Fix, "the Python tracer inflates exactly this Python") {
		t.Errorf("inductor fix with Python stacks: %q", f.Fix)
	}

	// A fix that is not the host fix's (here the capture gate's) stays.
	f, ev, gate = hostBound(t, "profiler_step", false, false)
	f.Fix = "None from this capture (...): profile the steady state."
	if findings.NameHostFrame(&f, ev, nil, gate, at) || f.Fix != "None from this capture (...): profile the steady state." || strings.Contains(f.Observation, "At the middle") {
		t.Errorf("a gate's fix was rewritten: %q / %q", f.Fix, f.Observation)
	}
}

// iter is the DataLoader's iterator range of a loop that loads on its
// own thread (num_workers=0).
const iter = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"

// loaderOps is an ops area whose one row is iter, ns long, in step 1.
func loaderOps(ns int64) *table.Table {
	return &table.Table{Columns: cols("trace rank step phase name count incl_ns self_ns max_ns launches gpu_events gpu_ns"),
		Rows: [][]any{{"t", int64(0), int64(1), "", iter, int64(1), ns, ns, ns, int64(0), int64(0), int64(0)}}}
}

// TestNameHostFrameDataLoader: a host-bound loop that mostly waits for its
// DataLoader names the frame of its longest gaps with the branch the
// evidence decides: inside the DataLoader's iterator (h100_owlv2: every
// zoom_shift call runs in enumerate(DataLoader)#_SingleProcessDataLoaderIter
// .__next__), worker processes hide it; outside, shorten it; the hedge
// only where neither is shown.
func TestNameHostFrameDataLoader(t *testing.T) {
	ops := loaderOps(60_000_000)
	b := bundle("profiler_step", "cuda", "H100", 40_000_000, 60_000_000, map[string]*table.Table{"gaps": gapsTable(55_000_000), "ops": ops})
	ev := evidence.Rollup(b, evidence.Filter{})
	fs, gate := findings.Judge(ev, nil)
	base := find(fs, "host_bound_idle")
	if base == nil {
		t.Fatalf("no host-bound finding: %s", rules(fs))
	}
	frame := findings.HostFrame{Name: "<built-in function zoom_shift>", Stack: []string{"scipy/ndimage/_interpolation.py(739): zoom", "<built-in function zoom_shift>"},
		Leaf: true, Gaps: 4, Of: 5, Ns: 30_000_000, IdleNs: 60_000_000}
	for _, c := range []struct {
		name        string
		loader      string
		notIn       bool
		want, unwnt string
	}{
		{"inside", iter, false, "which runs inside " + iter + " (the DataLoader's batches: dataset or collate code): loading in worker processes (num_workers > 0) hides it.", "elsewhere"},
		{"outside", "", true, "which runs outside the DataLoader's batches: shorten it.", "hides it"},
		{"undecided", "", false, "where it runs inside the DataLoader's batches (dataset or collate code), loading in worker processes hides it; elsewhere, shorten it.", "which runs"},
	} {
		f := *base
		at := frame
		at.Loader, at.NotInLoader = c.loader, c.notIn
		if !findings.NameHostFrame(&f, ev, nil, gate, at) {
			t.Fatalf("%s: fix not rewritten: %q", c.name, f.Fix)
		}
		if !strings.Contains(f.Fix, c.want) || strings.Contains(f.Fix, c.unwnt) {
			t.Errorf("%s: fix %q, want %q", c.name, f.Fix, c.want)
		}
	}
}

// In a transformers ChunkPipeline (h100_owlv2's zero-shot object
// detection) the DataLoader has one worker at most, whatever num_workers
// says: the fix for preprocessing inside its batches does not offer more
// workers, it says the one worker overlaps it and doing it once per image
// leaves one run of it.
func TestNameHostFrameChunkPipeline(t *testing.T) {
	ops := loaderOps(60_000_000)
	wl := &table.Table{Columns: cols("trace rank feature example count total_ns"), Rows: [][]any{
		{"t", int64(0), "hf_pipeline", "transformers/pipelines/base.py(1300): __call__", int64(1), int64(1000)},
		{"t", int64(0), "hf_chunk_pipeline", "transformers/pipelines/zero_shot_object_detection.py(120): __call__", int64(1), int64(1000)},
		{"t", int64(0), "dataloader_single", iter, int64(1), int64(60_000_000)},
	}}
	b := bundle("profiler_step", "cuda", "H100", 40_000_000, 60_000_000, map[string]*table.Table{"gaps": gapsTable(55_000_000), "ops": ops, "workload": wl})
	ev := evidence.Rollup(b, evidence.Filter{})
	fs, gate := findings.Judge(ev, nil)
	f := find(fs, "host_bound_idle")
	if f == nil {
		t.Fatalf("no host-bound finding: %s", rules(fs))
	}
	at := findings.HostFrame{Name: "<built-in function zoom_shift>", Stack: []string{"scipy/ndimage/_interpolation.py(739): zoom", "<built-in function zoom_shift>"},
		Leaf: true, Gaps: 4, Of: 5, Ns: 30_000_000, IdleNs: 60_000_000, Loader: iter}
	if !findings.NameHostFrame(f, ev, nil, gate, at) {
		t.Fatalf("fix not rewritten: %q", f.Fix)
	}
	if !strings.Contains(f.Fix, "the one worker this ChunkPipeline allows overlaps it with the model") || strings.Contains(f.Fix, "num_workers > 0") {
		t.Errorf("fix %q", f.Fix)
	}
}

// TestHostFixDataLoaderOnce: a training loop that loads on its own thread
// is told so once. Where the DataLoader issue is raised, the host fix
// points to it and does not repeat its fix (dlrm_8rank had read "see the
// DataLoader issue; and load batches in DataLoader worker processes");
// where the loader's share is small, the host fix says it; where no
// loader call lies inside the GPU span (no dataloader_gpu_idle row:
// dlrm_8rank's loads before its first GPU work), none of the idle is the
// loader's and the fix names none.
func TestHostFixDataLoaderOnce(t *testing.T) {
	for _, c := range []struct {
		loaderNs  int64
		inSpan    bool
		want, not string
	}{
		{9_000_000, true, "on the training thread (num_workers=0): see the DataLoader issue", "and load batches"},
		{500_000, true, "and load batches in DataLoader worker processes, not on the training thread", "see the DataLoader issue"},
		{9_000_000, false, "", "DataLoader"},
	} {
		ops := loaderOps(c.loaderNs)
		wl := &table.Table{Columns: cols("trace rank feature example count total_ns covered_ns"), Rows: [][]any{
			{"t", int64(0), "backward", "NllLossBackward", int64(1), int64(1000), nil},
			{"t", int64(0), "dataloader_single", iter, int64(1), c.loaderNs, nil},
		}}
		if c.inSpan {
			wl.Rows = append(wl.Rows, []any{"t", int64(0), "dataloader_gpu_idle", iter, int64(1), c.loaderNs / 2, c.loaderNs})
		}
		b := bundle("profiler_step", "cuda", "NVIDIA H100 80GB HBM3", 40_000_000, 60_000_000,
			map[string]*table.Table{"gaps": gapsTable(55_000_000), "ops": ops, "workload": wl})
		f := find(eval(b, nil), "host_bound_idle")
		if f == nil || !strings.Contains(f.Fix, c.want) || strings.Contains(f.Fix, c.not) {
			t.Errorf("DataLoader %d ns: host fix %+v, want %q and not %q", c.loaderNs, f, c.want, c.not)
		}
	}
}

// TestHostFrameTracerDensity: where the launching thread recorded a python
// call every PyDenseNs of the frame's gaps or more often, the observation
// says the tracer's per-call cost is part of them, with the numbers of
// the evidence and the setting that turns stacks off
// (vllm_mi300x_tp4_rank0: 13,409 calls in 10 gaps of 261 ms, one every
// 19.4 us, covering 3.1 ms); sparser calls, or none, add nothing.
func TestHostFrameTracerDensity(t *testing.T) {
	fwd := findings.HostFrame{Name: "vllm/model_executor/models/llama.py(374): forward",
		Stack: []string{"vllm/compilation/decorators.py(167): __call__", "vllm/model_executor/models/llama.py(374): forward"},
		Leaf:  true, Gaps: 10, Of: 256, Ns: 261_000_000, IdleNs: 278_000_000}
	// vLLM before VLLM_TORCH_PROFILER_WITH_STACK (vLLM #21803): its
	// worker wrote with_stack=True into the profiler's call.
	const knob = "re-capture without stacks (vLLM: this trace's vLLM predates VLLM_TORCH_PROFILER_WITH_STACK (vLLM #21803, v0.10.1) and starts torch.profiler with with_stack=True written into its GPU worker (vllm/v1/worker/gpu_worker.py): set with_stack=False there, or profile on v0.10.1 or later with VLLM_TORCH_PROFILER_WITH_STACK=0; torch.profiler: with_stack=False) before reading them as the host's work."
	for _, c := range []struct {
		name          string
		producer, day string
		calls, ns     int64
		want          string // "": no tracer sentence
	}{
		{"dense, vLLM before its stack switch", "vllm", "2025-05-14", 13_409, 3_100_000,
			"The launching thread recorded 13,409 python calls inside these gaps, one every 19.5 µs, whose own time sums to 3.1 ms: with python stacks on, the profiler's per-call cost is part of each gap; " + knob},
		{"dense, later vLLM", "vllm", "2026-01-20", 13_409, 3_100_000,
			`re-capture without stacks (vLLM: "torch_profiler_with_stack": false in --profiler-config, VLLM_TORCH_PROFILER_WITH_STACK=0 before v0.13; torch.profiler: with_stack=False)`},
		{"dense, a training loop", "profiler_step", "", 13_409, 3_100_000,
			"re-capture without stacks (torch.profiler: with_stack=False) before reading"},
		{"one call per 50 us exactly", "vllm", "2025-05-14", 5_220, 1_000_000, "one every 50.0 µs"},
		{"sparser than one call per 50 us", "vllm", "2025-05-14", 5_219, 1_000_000, ""},
		{"no python calls", "vllm", "2025-05-14", 0, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, ev, gate := hostBoundOn(t, c.producer, c.producer == "vllm", true, c.day)
			at := fwd
			at.PyCalls, at.PyNs = c.calls, c.ns
			if !findings.NameHostFrame(&f, ev, nil, gate, at) {
				t.Fatalf("the host fix was not rewritten: %q", f.Fix)
			}
			frame := "the launching thread was working in vllm/model_executor/models/llama.py(374): forward, with no deeper frame open."
			if !strings.Contains(f.Observation, frame) {
				t.Errorf("observation lost the frame's sentence: %q", f.Observation)
			}
			got := strings.Contains(f.Observation, "python calls inside these gaps")
			switch {
			case c.want == "" && got:
				t.Errorf("observation adds the tracer sentence: %q", f.Observation)
			case c.want != "" && !strings.Contains(f.Observation, c.want):
				t.Errorf("observation %q, want %q", f.Observation, c.want)
			}
		})
	}
}

// TestNameHostFrameVLLMPiecewise: where the forward's gaps sit between
// piecewise graphs (vllm_mi300x_tp4_rank0: 729 launches of 6 to 13
// kernels), FULL graphs are the lever, which skip the forward's Python
// whatever the tracer added to it; a rank replaying one graph a step
// (FULL already) keeps the re-profile first.
func TestNameHostFrameVLLMPiecewise(t *testing.T) {
	fwd := findings.HostFrame{Name: "vllm/model_executor/models/llama.py(374): forward",
		Stack: []string{"vllm/model_executor/models/llama.py(565): forward", "vllm/compilation/decorators.py(167): __call__", "vllm/model_executor/models/llama.py(374): forward"},
		Leaf:  true, Gaps: 5, Of: 5, Ns: 30_000_000, IdleNs: 60_000_000}
	graphs := func(launches, lo, hi int64) *table.Table {
		return &table.Table{Columns: cols("trace rank graph launches empty_launches kernels min_per_launch max_per_launch gpu_ns"),
			Rows: [][]any{{"t", int64(0), int64(-1), launches, int64(0), launches * hi, lo, hi, int64(40_000_000)}}}
	}
	for _, c := range []struct {
		day              string
		launches, lo, hi int64
		want, not        []string
		snippet          string
	}{
		// Captured before the default and the setting: the upgrade is the
		// fix, and the snippet checks the version (a flag would do nothing).
		{"2025-05-14", 729, 6, 13, []string{"The graphs are piecewise (729 graph launches of 6 to 13 kernels each", "cudagraph_mode FULL_AND_PIECEWISE (vLLM's default from v0.11.0) or FULL_DECODE_ONLY",
			"(this trace was captured on 2025-05-14, before that default, and most likely before the cudagraph_mode setting itself: upgrade vLLM, and no flag is needed)", "it hides what stays of them up to a step's GPU time",
			"FULL graphs skip that Python either way, in the decode steps they replay; a step they do not replay (a prefill or a mixed batch past the capture sizes) keeps it", "such as the compiled code's entry before its graph runs"}, []string{"profile again without them first", "; shorten that"}, `vllm.__version__`},
		// Captured after it, yet piecewise: the setting is what to pass.
		{"2025-11-03", 729, 6, 13, []string{"The graphs are piecewise (729 graph launches of 6 to 13 kernels each"}, []string{"before that default"}, `"cudagraph_mode": "FULL_AND_PIECEWISE"`},
		{"2025-05-14", 1, 421, 421, []string{"profile again without them first", "it hides these gaps up to a step's GPU time"}, []string{"piecewise", "FULL_AND_PIECEWISE"}, "with_stack=False"},
	} {
		b := bundle("vllm", "cuda", "NVIDIA H100 80GB HBM3", 40_000_000, 60_000_000, map[string]*table.Table{"gaps": gapsTable(55_000_000), "graphs": graphs(c.launches, c.lo, c.hi)})
		b.Traces.Rows[0][6], b.Traces.Rows[0][8] = true, true
		b.Traces.Columns = append(b.Traces.Columns, table.Column{Name: "base_time_ns"})
		b.Traces.Rows[0] = append(b.Traces.Rows[0], testutil.UnixDay(t, c.day))
		ev := evidence.Rollup(b, evidence.Filter{})
		fs, gate := findings.Judge(ev, nil)
		f := find(fs, "host_bound_idle")
		if f == nil {
			t.Fatalf("%d launches: no host-bound finding: %s", c.launches, rules(fs))
		}
		findings.NameHostFrame(f, ev, nil, gate, fwd)
		testutil.Contains(t, "fix", f.Fix, c.want...)
		for _, n := range c.not {
			if strings.Contains(f.Fix, n) {
				t.Errorf("%d launches: fix says %q: %s", c.launches, n, f.Fix)
			}
		}
		if !strings.Contains(f.Snippet, c.snippet) {
			t.Errorf("%d launches: snippet %q, want %q", c.launches, f.Snippet, c.snippet)
		}
	}
}
