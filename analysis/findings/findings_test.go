package findings_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/findings"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/internal/testutil"
)

// cols names a hand-built table's columns.
var cols = testutil.Columns

// bundle builds a one-rank bundle: producer, platform, device name, GPU busy
// and idle time, and the extra tables given.
func bundle(producer, platform, gpu string, busy, idle int64, tables map[string]*table.Table) *evidence.Bundle {
	b := evidence.NewBundle()
	b.Traces = &table.Table{Columns: cols("trace rank rank_source producer platform gpu_model has_graphs has_sync_events has_python_stacks"),
		Rows: [][]any{{"t", int64(0), "filename", producer, platform, gpu, false, true, false}}}
	b.Tables["ranks"] = &table.Table{Columns: cols("trace rank step phase busy_ns idle_ns compute_ns comm_ns comm_comp_ns step_ns"),
		Rows: [][]any{{"t", int64(0), int64(1), "", busy, idle, busy, int64(0), busy, busy + idle}}}
	for k, v := range tables {
		b.Tables[k] = v
	}
	return b
}

func eval(b *evidence.Bundle, th evidence.Thresholds) []evidence.Finding {
	return findings.Evaluate(evidence.Rollup(b, evidence.Filter{}), th)
}

func rules(fs []evidence.Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Rule+":"+f.Severity+":"+f.Status)
	}
	return strings.Join(out, " ")
}

func memcpyTable(src string) *table.Table {
	return &table.Table{Columns: cols("trace rank step phase stream kind direction src dst call sync count bytes total_ns host_ns max_ns"),
		Rows: [][]any{{"t", int64(0), int64(1), "", int64(7), "memcpy", "HtoD", src, "Device", "cudaMemcpyAsync", false, int64(1), int64(64 << 20), int64(5_000_000), int64(6_000_000), int64(5_000_000)}}}
}

func TestHealthyHasNoFinding(t *testing.T) {
	b := bundle("profiler_step", "cuda", "NVIDIA H100 80GB HBM3", 95_000_000, 5_000_000, nil)
	if fs := eval(b, nil); len(fs) != 0 {
		t.Errorf("healthy trace: %s", rules(fs))
	}
}

func TestPageableScope(t *testing.T) {
	// Training: critical, DataLoader advice.
	fs := eval(bundle("profiler_step", "cuda", "H100", 20_000_000, 1_000_000, map[string]*table.Table{"memcpy": memcpyTable("Pageable")}), nil)
	if rules(fs) != "pageable_copies:critical:confirmed" || !strings.Contains(fs[0].Snippet, "pin_memory=True") {
		t.Fatalf("training: %s %+v", rules(fs), fs)
	}
	// vLLM: the same copy, no DataLoader advice.
	fs = eval(bundle("vllm", "cuda", "H100", 20_000_000, 1_000_000, map[string]*table.Table{"memcpy": memcpyTable("Pageable")}), nil)
	if len(fs) != 1 || strings.Contains(fs[0].Fix+fs[0].Snippet, "DataLoader") {
		t.Errorf("vllm pageable fix: %+v", fs)
	}
	// A platform that does not name the memory kind: no pageable finding.
	fs = eval(bundle("profiler_step", "rocm", "MI300X", 20_000_000, 1_000_000, map[string]*table.Table{"memcpy": memcpyTable("")}), nil)
	if len(fs) != 0 {
		t.Errorf("unnamed memory kind: %s", rules(fs))
	}
	// The sync area shows the calls opened almost no GPU idle: the
	// observation splits the blocked time into the copies' own GPU time
	// and the wait for the work queued ahead of them, and says pinning
	// frees host time, not GPU time.
	syncRows := func(gapNs int64) *table.Table {
		return &table.Table{Columns: cols("trace rank step phase stream call op trigger direction pageable blocking edge count blocked_ns max_blocked_ns gaps gpu_gap_ns"),
			Rows: [][]any{{"t", int64(0), int64(1), "", int64(7), "cudaMemcpy", "aten::copy_", "copy", "HtoD", true, true, false, int64(1), int64(6_000_000), int64(6_000_000), int64(1), gapNs}}}
	}
	for gap, want := range map[int64]bool{40_000: true, 3_000_000: false} {
		fs = eval(bundle("profiler_step", "cuda", "H100", 20_000_000, 1_000_000, map[string]*table.Table{"memcpy": memcpyTable("Pageable"), "sync": syncRows(gap)}), nil)
		f := find(fs, "pageable_copies")
		if f == nil {
			t.Fatalf("gap %d: no pageable finding: %s", gap, rules(fs))
		}
		if got := strings.Contains(f.Observation, "the GPU was busy through most of the blocked time: the copies themselves ran 5.0 ms of it, and for the other 1.0 ms the calls waited for the work queued ahead of them on the stream. Pinned buffers copied with non_blocking=True end both waits, which frees host time"); got != want {
			t.Errorf("gap %d ns of 6 ms blocked: host-time sentence %v, want %v: %s", gap, got, want, f.Observation)
		}
		// The impact is then what the GPU can gain: the copies' 5 ms and
		// the 0.04 ms gap of the 21 ms span, not the 6 ms blocked; a
		// critical threshold between the two makes the finding minor.
		wantImpact, wantSev := 6.0/21, "critical"
		if want {
			wantImpact, wantSev = 5.04/21, "minor"
			if !strings.Contains(f.Observation, "On the GPU side the step gains at most the copies' own 5.0 ms and the gaps they opened, 24.0% of the GPU span the rules judge, and the copies' part only where they run on a stream of their own beside the kernels") {
				t.Errorf("gap %d: no GPU-side bound: %s", gap, f.Observation)
			}
		}
		// That bound rests on copying beside the kernels: the fix then
		// copies on a stream of its own, where x.to() alone would queue
		// the copy in line with them.
		if got := strings.Contains(f.Snippet, "torch.cuda.stream(copy)"); got != want {
			t.Errorf("gap %d: side-stream snippet %v, want %v: %s", gap, got, want, f.Snippet)
		}
		// The sync area's rows are the same calls: the finding cites it,
		// so that area's evidence row names the finding.
		if refs := fmt.Sprint(f.Evidence); !strings.Contains(refs, "sync [pageable=true, rank=0]") {
			t.Errorf("gap %d: no sync reference: %s", gap, refs)
		}
		if math.Abs(f.Impact-wantImpact) > 1e-9 {
			t.Errorf("gap %d: impact %v, want %v", gap, f.Impact, wantImpact)
		}
		fs = eval(bundle("profiler_step", "cuda", "H100", 20_000_000, 1_000_000, map[string]*table.Table{"memcpy": memcpyTable("Pageable"), "sync": syncRows(gap)}),
			evidence.Thresholds{"pageable_critical": 0.26})
		if f := find(fs, "pageable_copies"); f == nil || f.Severity != wantSev {
			t.Errorf("gap %d, critical at 26%%: %s, want %s", gap, rules(fs), wantSev)
		}
	}
	// A threshold raised by the viewer turns it minor.
	fs = eval(bundle("profiler_step", "cuda", "H100", 20_000_000, 1_000_000, map[string]*table.Table{"memcpy": memcpyTable("Pageable")}), evidence.Thresholds{"pageable_critical": 0.5})
	if rules(fs) != "pageable_copies:minor:confirmed" {
		t.Errorf("override: %s", rules(fs))
	}
}

func gapsTable(hostWait int64) *table.Table {
	return &table.Table{Columns: cols("trace rank step phase stream category count idle_ns max_ns max_at_ns hist"),
		Rows: [][]any{{"t", int64(0), int64(1), "", int64(7), "host_wait", int64(100), hostWait, int64(1_000_000), int64(0), "150:100"}}}
}

func TestHostBoundAndGraphUnderRecording(t *testing.T) {
	b := bundle("vllm", "cuda", "H100", 40_000_000, 60_000_000, map[string]*table.Table{"gaps": gapsTable(55_000_000)})
	fs := eval(b, nil)
	if rules(fs) != "host_bound_idle:critical:confirmed" {
		t.Fatalf("host bound: %s", rules(fs))
	}
	if !strings.Contains(fs[0].Fix, "async scheduling") || strings.Contains(fs[0].Fix, "torch.compile") {
		t.Errorf("vllm host-bound fix out of scope: %q %q", fs[0].Fix, fs[0].Snippet)
	}
	// Graph replay under-recorded: an evidence gap, never an idle finding.
	b.Tables["graphs"] = &table.Table{Columns: cols("trace rank step phase graph launches empty_launches kernels min_per_launch max_per_launch gpu_ns"),
		Rows: [][]any{{"t", int64(0), int64(1), "", int64(-1), int64(100), int64(90), int64(100), int64(0), int64(10), int64(1000)}}}
	evidence.DetectGaps(b)
	found := false
	for _, g := range b.Gaps {
		found = found || g.Kind == evidence.GapGraphUnderRecord
	}
	if !found {
		t.Fatalf("no under-recording gap: %+v", b.Gaps)
	}
	if fs := eval(b, nil); len(fs) != 0 {
		t.Errorf("idle finding despite under-recording: %s", rules(fs))
	}
}

// A rank whose Kineto log says CUPTI stopped early (its GPU activity
// buffers full) may miss GPU records: no idle finding is made on it.
func TestHostBoundRecordsLost(t *testing.T) {
	b := bundle("profiler_step", "cuda", "NVIDIA H100 80GB HBM3", 40_000_000, 60_000_000, map[string]*table.Table{"gaps": gapsTable(55_000_000)})
	if fs := eval(b, nil); !strings.Contains(rules(fs), "host_bound_idle") {
		t.Fatalf("host bound: %s", rules(fs))
	}
	tr := b.Traces
	tr.Columns = append(tr.Columns, table.Column{Name: "cupti_stopped_early", Type: "INTEGER"})
	for i := range tr.Rows {
		tr.Rows[i] = append(tr.Rows[i], int64(1))
	}
	b.Gaps = nil
	evidence.DetectGaps(b)
	if fs := eval(b, nil); strings.Contains(rules(fs), "host_bound_idle") {
		t.Errorf("idle finding with GPU records lost: %s", rules(fs))
	}
}

// workloadTable is a workload area of rows (trace, rank, feature,
// example, count, total_ns, covered_ns).
func workloadTable(rows [][]any) *table.Table {
	return &table.Table{Columns: cols("trace rank feature example count total_ns covered_ns"), Rows: rows}
}

func kernelsTable(name string, total int64) *table.Table {
	return &table.Table{Columns: cols("trace rank step phase stream name class count total_ns min_ns max_ns hist"),
		Rows: [][]any{{"t", int64(0), int64(1), "", int64(7), name, "COMP", int64(10), total, total / 10, total / 10, ""}}}
}

func TestTensorCoreScope(t *testing.T) {
	k := map[string]*table.Table{"kernels": kernelsTable("volta_sgemm_128x64_nn", 50_000_000)}
	if fs := eval(bundle("profiler_step", "cuda", "Tesla V100-SXM2-32GB", 90_000_000, 0, k), nil); rules(fs) != "fp32_no_tensor_cores:critical:confirmed" {
		t.Errorf("sgemm on V100: %s", rules(fs))
	} else if strings.Contains(fs[0].Observation, "It stays a follow-up") {
		t.Errorf("a critical finding says it stays a follow-up: %s", fs[0].Observation)
	}
	// The same share with the GPU busy 40% of its span: a follow-up, which
	// says why (resnet_2080ti: 48.0%, under a critical 6.4% issue).
	if fs := eval(bundle("profiler_step", "cuda", "Tesla V100-SXM2-32GB", 40_000_000, 60_000_000, map[string]*table.Table{"kernels": kernelsTable("volta_sgemm_128x64_nn", 35_000_000)}), nil); rules(fs) != "fp32_no_tensor_cores:minor:confirmed" {
		t.Errorf("sgemm on a V100 busy 40%%: %s", rules(fs))
	} else {
		testutil.Contains(t, "busy gate", fs[0].Observation, "It stays a follow-up: a kernel lever is critical only with the GPU busy at least 50.0% of the span the rules judge (here 40.0%)")
	}
	if fs := eval(bundle("profiler_step", "cuda", "", 90_000_000, 0, k), nil); len(fs) != 0 {
		t.Errorf("tensor-core verdict from a blank device name: %s", rules(fs))
	}
	if fs := eval(bundle("profiler_step", "rocm", "AMD Instinct MI300X", 90_000_000, 0, k), nil); len(fs) != 0 {
		t.Errorf("CUDA-only verdict on ROCm: %s", rules(fs))
	}
	tc := map[string]*table.Table{"kernels": kernelsTable("sm90_xmma_gemm_bf16bf16_bf16f32", 50_000_000)}
	if fs := eval(bundle("profiler_step", "cuda", "H100", 90_000_000, 0, tc), nil); len(fs) != 0 {
		t.Errorf("tensor-core GEMM flagged: %s", rules(fs))
	}
}

func TestDataLoaderOnlyForTraining(t *testing.T) {
	ops := &table.Table{Columns: cols("trace rank step phase name count incl_ns self_ns max_ns launches gpu_events gpu_ns"),
		Rows: [][]any{{"t", int64(0), int64(1), "", "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", int64(1), int64(30_000_000), int64(30_000_000), int64(30_000_000), int64(0), int64(0), int64(0)}}}
	fs := eval(bundle("profiler_step", "cuda", "H100", 90_000_000, 10_000_000, map[string]*table.Table{"ops": ops}), nil)
	if rules(fs) != "dataloader_share:critical:hypothesis" || !strings.Contains(fs[0].Snippet, "num_workers") {
		t.Errorf("training dataloader: %s", rules(fs))
	}
	if fs := eval(bundle("vllm", "cuda", "H100", 90_000_000, 10_000_000, map[string]*table.Table{"ops": ops}), nil); len(fs) != 0 {
		t.Errorf("DataLoader finding for vLLM: %s", rules(fs))
	}
}

// A transformers ChunkPipeline is not told to add DataLoader workers it
// cannot have; zero-shot detection is told to encode the image once
// (h100_owlv2: 5 labels, each chunk preprocessing the same image).
func TestDataLoaderChunkPipeline(t *testing.T) {
	ops := &table.Table{Columns: cols("trace rank step phase name count incl_ns self_ns max_ns launches gpu_events gpu_ns"),
		Rows: [][]any{{"t", int64(0), int64(1), "", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", int64(1), int64(30_000_000), int64(30_000_000), int64(30_000_000), int64(0), int64(0), int64(0)}}}
	for _, c := range []struct {
		frame, want, not string
	}{
		{"transformers/pipelines/zero_shot_object_detection.py(65): __call__", "every label as one image's text queries", "num_workers=8"},
		{"transformers/pipelines/question_answering.py(300): __call__", "at most one worker whatever num_workers says", "num_workers=8"},
		{"transformers/pipelines/text_classification.py(150): __call__", "num_workers=8", "ChunkPipeline"},
	} {
		feature := "hf_pipeline"
		if !strings.Contains(c.frame, "text_classification") {
			feature = "hf_chunk_pipeline"
		}
		wl := &table.Table{Columns: cols("trace rank feature example count total_ns"), Rows: [][]any{
			{"t", int64(0), "dataloader_single", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", int64(1), int64(30_000_000)},
			{"t", int64(0), feature, c.frame, int64(5), int64(1000)},
		}}
		fs := eval(bundle("profiler_step", "cuda", "H100", 90_000_000, 10_000_000, map[string]*table.Table{"ops": ops, "workload": wl}), nil)
		f := find(fs, "dataloader_share")
		if f == nil || !strings.Contains(f.Fix+" "+f.Snippet, c.want) || strings.Contains(f.Fix+" "+f.Snippet, c.not) || strings.Contains(f.Fix, "The model then runs once per image") {
			t.Errorf("%s: %s %+v", c.frame, rules(fs), f)
		}
	}
	// With python stacks, the pipeline's _forward frames count the model's
	// runs: 5, one per label (h100_owlv2), which the fix then names.
	wl := &table.Table{Columns: cols("trace rank feature example count total_ns"), Rows: [][]any{
		{"t", int64(0), "dataloader_single", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", int64(1), int64(30_000_000)},
		{"t", int64(0), "hf_chunk_forward", "transformers/pipelines/zero_shot_object_detection.py(184): _forward", int64(5), int64(566_000_000)},
	}}
	fs := eval(bundle("profiler_step", "cuda", "H100", 90_000_000, 10_000_000, map[string]*table.Table{"ops": ops, "workload": wl}), nil)
	if f := find(fs, "dataloader_share"); f == nil || !strings.Contains(f.Fix, "every label as one image's text queries") ||
		!strings.Contains(f.Fix, "The model then runs once per image, not once per label: the trace ran it 5 times, each encoding the image again") {
		t.Errorf("zero-shot detection with its forwards counted: %s %+v", rules(fs), f)
	} else if f.Beyond != "" {
		t.Errorf("the runs' GPU work is not measured, yet Beyond says %q", f.Beyond)
	}
	// With the GPU work the runs launched, the fix's reach beyond the
	// DataLoader's share: all runs but one (Expected Impact says it).
	wl.Rows = append(wl.Rows, []any{"t", int64(0), "hf_chunk_forward_gpu", "transformers/pipelines/zero_shot_object_detection.py(184): _forward", int64(5), int64(50_000_000)})
	fs = eval(bundle("profiler_step", "cuda", "H100", 90_000_000, 10_000_000, map[string]*table.Table{"ops": ops, "workload": wl}), nil)
	if f := find(fs, "dataloader_share"); f == nil {
		t.Errorf("no DataLoader finding: %s", rules(fs))
	} else {
		testutil.Contains(t, "beyond", f.Beyond, "runs the model once instead of 5 times", "about 4 in 5 of the runs' 50.0 ms of GPU work: 40.0 ms, 40.0% of the GPU span", "a hypothesis")
	}
}

// A rank whose batches are copied from pinned memory is not told to pin
// them (dlrm_8rank: its batch copies read Pinned -> Device); pageable
// ones are.
func TestDataLoaderPinnedAlready(t *testing.T) {
	ops := &table.Table{Columns: cols("trace rank step phase name count incl_ns self_ns max_ns launches gpu_events gpu_ns"),
		Rows: [][]any{{"t", int64(0), int64(1), "", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", int64(1), int64(30_000_000), int64(30_000_000), int64(30_000_000), int64(0), int64(0), int64(0)}}}
	memcpy := func(pinned, pageable int64) *table.Table {
		return &table.Table{Columns: cols("trace rank step phase direction src dst bytes"), Rows: [][]any{
			{"t", int64(0), int64(1), "", "HtoD", "Pinned", "Device", pinned},
			{"t", int64(0), int64(1), "", "HtoD", "Pageable", "Device", pageable},
		}}
	}
	for _, c := range []struct {
		pinned, pageable int64
		pin              bool
	}{{19_592, 11_520, false}, {1_000, 115_000_000, true}} {
		fs := eval(bundle("profiler_step", "cuda", "H100", 90_000_000, 10_000_000, map[string]*table.Table{"ops": ops, "memcpy": memcpy(c.pinned, c.pageable)}), nil)
		f := find(fs, "dataloader_share")
		if f == nil || strings.Contains(f.Snippet, "pin_memory") != c.pin {
			t.Errorf("%d pinned, %d pageable bytes: %s %+v", c.pinned, c.pageable, rules(fs), f)
		}
	}
}

func TestCatalogue(t *testing.T) {
	names := map[string]bool{}
	for _, th := range findings.Catalogue {
		if names[th.Name] || th.Doc == "" {
			t.Errorf("threshold %q duplicated or undocumented", th.Name)
		}
		names[th.Name] = true
	}
	for _, r := range findings.Rules {
		for _, n := range r.Thresholds {
			if !names[n] {
				t.Errorf("rule %s reads unknown threshold %s", r.ID, n)
			}
		}
	}
}

func TestLaunchBoundEagerVLLM(t *testing.T) {
	launch := &table.Table{Columns: cols("trace rank step phase stream call launches with_gpu cpu_ns gpu_ns delay_ns hta_delay_ns short short_cpu_ns runtime_outliers delay_outliers cpu_hist delay_hist"),
		Rows: [][]any{{"t", int64(0), int64(1), "decode", int64(7), "cudaLaunchKernel", int64(1000), int64(1000), int64(8_000_000), int64(5_000_000), int64(9_000_000), int64(1_000_000), int64(800), int64(6_000_000), int64(0), int64(0), "", ""}}}
	gaps := &table.Table{Columns: cols("trace rank step phase stream category count idle_ns max_ns max_at_ns hist"),
		Rows: [][]any{{"t", int64(0), int64(1), "decode", int64(7), "kernel_wait", int64(900), int64(4_000_000), int64(20_000), int64(0), ""}}}
	tabs := map[string]*table.Table{"launch": launch, "gaps": gaps}
	fs := eval(bundle("vllm", "cuda", "H100", 6_000_000, 4_000_000, tabs), nil)
	if rules(fs) != "launch_bound:minor:confirmed" || !strings.Contains(fs[0].Fix, "--enforce-eager") {
		t.Fatalf("eager vLLM: %s %+v", rules(fs), fs)
	}
	// Steps larger than vLLM's largest default capture size run without
	// graphs even with graphs on: graphs are not the fix. One step within
	// the capture sizes, or one whose count is unknown, keeps the eager
	// verdict.
	steps := &table.Table{Columns: cols("trace rank step phase source hypothesis name ctx_tok gen_tok"),
		Rows: [][]any{
			{"t", int64(0), int64(0), "prefill", "execute_tokens", false, "execute_context_1(888)_generation_0(0)", int64(888), int64(0)},
			{"t", int64(0), int64(1), "mixed", "execute_tokens", false, "execute_context_1(600)_generation_3(3)", int64(600), int64(3)},
		}}
	tabs["steps"] = steps
	fs = eval(bundle("vllm", "cuda", "H100", 6_000_000, 4_000_000, tabs), nil)
	if rules(fs) != "launch_bound:minor:confirmed" || strings.Contains(fs[0].Fix, "--enforce-eager") ||
		!strings.Contains(fs[0].Title, "larger than its CUDA graphs") || !strings.Contains(fs[0].Observation, "the smallest 603") {
		t.Fatalf("oversize steps: %s %+v", rules(fs), fs)
	}
	// The same steps with the operators captured and compiled code a
	// sliver of the steps' time: the model ran uncompiled, what
	// --enforce-eager (or -O0) does; compiled code over a fifth of it keeps
	// the oversize verdict.
	for _, c := range []struct {
		compiled int64
		eager    bool
	}{{300_000, true}, {5_000_000, false}} {
		wall := &table.Table{Columns: cols("trace rank step phase source hypothesis name ctx_tok gen_tok wall_ns"),
			Rows: [][]any{
				{"t", int64(0), int64(0), "prefill", "execute_tokens", false, "execute_context_1(888)_generation_0(0)", int64(888), int64(0), int64(9_000_000)},
				{"t", int64(0), int64(1), "mixed", "execute_tokens", false, "execute_context_1(600)_generation_3(3)", int64(600), int64(3), int64(8_000_000)},
			}}
		// Nested compiled events sum to five times the time they cover:
		// the union is the compiled time (b200_eager: 2.8 ms summed, 0.63
		// ms covered).
		work := workloadTable([][]any{
			{"t", int64(0), "cpu_ops", "aten::addmm", int64(900), int64(6_000_000), nil},
			{"t", int64(0), "compiled", "## Call CompiledFxGraph ##", int64(2), 5 * c.compiled, c.compiled},
		})
		ts := map[string]*table.Table{"launch": launch, "gaps": gaps, "steps": wall, "workload": work}
		fs = eval(bundle("vllm", "cuda", "H100", 6_000_000, 4_000_000, ts), nil)
		eager := len(fs) == 1 && strings.Contains(fs[0].Title, "uncompiled") && strings.Contains(fs[0].Fix, "--enforce-eager") &&
			strings.Contains(fs[0].Observation, "Compiled code took 0.300 ms of the steps' 17.0 ms")
		if eager != c.eager || (!c.eager && (len(fs) != 1 || !strings.Contains(fs[0].Title, "larger than its CUDA graphs"))) {
			t.Errorf("compiled %d ns: eager %v, want %v: %s %+v", c.compiled, eager, c.eager, rules(fs), fs)
		}
	}
	for _, last := range [][]any{
		{"t", int64(0), int64(2), "decode", "execute_tokens", false, "execute_context_0(0)_generation_32(32)", int64(0), int64(32)},
		{"t", int64(0), int64(2), "unknown", "execute_new_cached", true, "execute_new_1_cached_0", nil, nil},
	} {
		steps.Rows = append(steps.Rows[:2], last)
		fs = eval(bundle("vllm", "cuda", "H100", 6_000_000, 4_000_000, tabs), nil)
		if len(fs) != 1 || !strings.Contains(fs[0].Fix, "--enforce-eager") {
			t.Errorf("with step %v: %s %+v", last[6], rules(fs), fs)
		}
	}
	delete(tabs, "steps")
	// Training: CUDA graphs through torch.compile.
	fs = eval(bundle("profiler_step", "rocm", "AMD Instinct MI300X", 6_000_000, 4_000_000, tabs), nil)
	if rules(fs) != "launch_bound:minor:confirmed" || !strings.Contains(fs[0].Snippet, `mode="reduce-overhead"`) {
		t.Errorf("training: %s %+v", rules(fs), fs)
	}
	if strings.Contains(fs[0].Fix, "Caveat") {
		t.Errorf("a graph caveat without host syncs: %s", fs[0].Fix)
	}
	if strings.Contains(fs[0].Observation, "inside enumerate(DataLoader)") {
		t.Errorf("a DataLoader named without one: %s", fs[0].Observation)
	}
	// A launching thread that mostly waits in its DataLoader: the launch
	// finding says that part of the idle is no launch's
	// (resnet50_num_workers_0).
	tabs["ops"] = &table.Table{Columns: cols("trace rank step phase name count incl_ns self_ns max_ns launches gpu_events gpu_ns"),
		Rows: [][]any{{"t", int64(0), int64(1), "", iter, int64(1), int64(5_000_000), int64(5_000_000), int64(5_000_000), int64(0), int64(0), int64(0)}}}
	fs = eval(bundle("profiler_step", "rocm", "AMD Instinct MI300X", 6_000_000, 4_000_000, tabs), nil)
	if f := find(fs, "launch_bound"); f == nil || !strings.Contains(f.Observation, "inside enumerate(DataLoader), where the GPU waits for batches") {
		t.Errorf("DataLoader-bound launches: %s %+v", rules(fs), fs)
	}
	delete(tabs, "ops")
	// Operators that block in host syncs: a graph cannot be captured
	// across them (dlrm_8rank's all-to-all splits read back with
	// aten::to); an explicit sync (the harness's) is not counted.
	tabs["sync"] = &table.Table{Columns: cols("trace rank step phase stream call op trigger direction pageable blocking count blocked_ns max_blocked_ns gaps gpu_gap_ns max_gap_ns bytes"),
		Rows: [][]any{
			{"t", int64(0), int64(1), "", int64(7), "cudaStreamSynchronize", "aten::to", "copy", "", false, true, int64(10), int64(100_000), int64(10_000), int64(0), int64(0), int64(0), int64(0)},
			{"t", int64(0), int64(-1), "", int64(7), "cudaDeviceSynchronize", "", "explicit", "", false, true, int64(1), int64(100_000), int64(100_000), int64(0), int64(0), int64(0), int64(0)},
		}}
	fs = eval(bundle("profiler_step", "rocm", "AMD Instinct MI300X", 6_000_000, 4_000_000, tabs), nil)
	if len(fs) == 0 || !strings.Contains(fs[0].Fix, "Caveat: the operators block in 10 host syncs, 10 of them under aten::to") {
		t.Errorf("graph fix with host syncs in the steps: %s %+v", rules(fs), fs)
	}
	// The same aten::to uploading the batch (pageable HtoD copies, the
	// syncs after them): the batch moves in before the model runs.
	tabs["sync"].Rows = append(tabs["sync"].Rows,
		[]any{"t", int64(0), int64(1), "", int64(7), "cudaMemcpyAsync", "aten::to", "copy", "HtoD", true, true, int64(10), int64(100_000), int64(10_000), int64(0), int64(0), int64(0), int64(1 << 20)})
	fs = eval(bundle("profiler_step", "rocm", "AMD Instinct MI300X", 6_000_000, 4_000_000, tabs), nil)
	if len(fs) == 0 || strings.Contains(fs[0].Fix, "Caveat") {
		t.Errorf("graph caveat for the batch's upload: %s %+v", rules(fs), fs)
	}
	// Uploads of scalars (6 bytes a copy) are the model's own code between
	// the launches, not the batch: they break the graph too
	// (with_gpu_user_annotation). Each copy and the stream sync after it
	// are one sync (trace_diff_control_a100 counted 120 for 60).
	tabs["sync"].Rows[2][17] = int64(60)
	fs = eval(bundle("profiler_step", "rocm", "AMD Instinct MI300X", 6_000_000, 4_000_000, tabs), nil)
	if len(fs) == 0 || !strings.Contains(fs[0].Fix, "Caveat: the operators block in 10 host syncs, 10 of them under aten::to") {
		t.Errorf("no graph caveat for scalar uploads between the launches: %s %+v", rules(fs), fs)
	}
	delete(tabs, "sync")
	// Past idle_critical it is critical.
	fs = eval(bundle("profiler_step", "cuda", "H100", 4_000_000, 6_000_000, tabs), nil)
	if rules(fs) != "launch_bound:critical:confirmed" {
		t.Errorf("critical: %s", rules(fs))
	}
	// A handful of launches is not evidence.
	launch.Rows[0][6], launch.Rows[0][7], launch.Rows[0][12] = int64(14), int64(14), int64(11)
	if fs := eval(bundle("sglang", "rocm", "MI300X", 6_000_000, 4_000_000, tabs), nil); len(fs) != 0 {
		t.Errorf("14 launches judged launch-bound: %s", rules(fs))
	}
}

// A sync inside aten::to gets the fix of its copies' direction: an upload
// from pageable memory is pinned and made non-blocking; a read back to the
// host goes to a pinned buffer read after an event.
func TestSyncFixFollowsCopyDirection(t *testing.T) {
	syncTable := func(dir string, bytes int64) *table.Table {
		c := cols("trace rank step phase stream call op trigger direction pageable blocking count blocked_ns max_blocked_ns gaps gpu_gap_ns max_gap_ns bytes")
		return &table.Table{Columns: c, Rows: [][]any{
			{"t", int64(0), int64(1), "", int64(7), "cudaStreamSynchronize", "aten::to", "copy", "", false, true, int64(10), int64(1_000_000), int64(100_000), int64(10), int64(5_000_000), int64(500_000), int64(0)},
			{"t", int64(0), int64(1), "", int64(7), "cudaMemcpyAsync", "aten::to", "copy", dir, true, true, int64(10), int64(3_000_000), int64(300_000), int64(0), int64(0), int64(0), bytes},
		}}
	}
	for _, tc := range []struct {
		dir       string
		bytes     int64
		want, not string
	}{
		{"HtoD", 1 << 20, "pin_memory=True", "pinned host buffer"},
		{"DtoH", 1 << 20, "pinned host buffer", "pin_memory=True"},
		// with_gpu_user_annotation: ten 6-byte uploads, scalars.
		{"HtoD", 60, "tiny host-to-device copies (6 bytes each", "pin_memory"},
		// h100_owlv2: aten::to reads back and uploads; each direction
		// gets its fix.
		{"both", 1 << 20, "After an upload (host to device from pageable memory", "pin_memory=True"},
	} {
		st := syncTable(tc.dir, tc.bytes)
		if tc.dir == "both" {
			st = syncTable("DtoH", tc.bytes)
			up := append([]any(nil), st.Rows[1]...)
			up[st.Col("direction")] = "HtoD"
			st.Rows = append(st.Rows, up)
		}
		fs := eval(bundle("profiler_step", "cuda", "H100", 20_000_000, 10_000_000, map[string]*table.Table{"sync": st}), nil)
		var fix string
		for _, f := range fs {
			if f.Rule == "sync_bound_loop" {
				fix = f.Fix + " " + f.Snippet
			}
		}
		if !strings.Contains(fix, tc.want) || strings.Contains(fix, tc.not) {
			t.Errorf("%s copies: sync fix %q (findings %s)", tc.dir, fix, rules(fs))
		}
	}
}

// The sync finding's numbers add up to the sync area's: it names the
// blocking calls it leaves to the pageable-copy finding, and the span its
// share is of; an upload with no DataLoader in the workload gets pinned
// buffers, not DataLoader(pin_memory=True).
func TestSyncObservationAddsUpToTheArea(t *testing.T) {
	c := cols("trace rank step phase stream call op trigger direction pageable blocking count blocked_ns max_blocked_ns gaps gpu_gap_ns max_gap_ns bytes")
	sync := &table.Table{Columns: c, Rows: [][]any{
		{"t", int64(0), int64(1), "", int64(7), "cudaStreamSynchronize", "aten::to", "copy", "", false, true, int64(16), int64(560_000), int64(100_000), int64(16), int64(5_000_000), int64(500_000), int64(0)},
		{"t", int64(0), int64(1), "", int64(7), "cudaMemcpyAsync", "aten::to", "copy", "HtoD", true, true, int64(16), int64(57_000_000), int64(35_000_000), int64(0), int64(0), int64(0), int64(244 << 20)},
	}}
	g := rig{producer: "unknown", gpu: "NVIDIA A100-SXM4-80GB", busy: 20_000_000, idle: 30_000_000, features: []string{"cpu_ops"}}
	b := g.bundle()
	b.Tables["sync"] = sync
	var f *evidence.Finding
	for _, x := range eval(b, nil) {
		if x.Rule == "sync_bound_loop" {
			f = &x
		}
	}
	if f == nil {
		t.Fatalf("no sync finding: %s", rules(eval(b, nil)))
	}
	for _, want := range []string{
		"16 blocking sync calls blocked the host for 0.560 ms",
		"10.0% of the GPU span of 50.0 ms",
		"The sync area's 32 blocking calls (57.6 ms blocked, 16 GPU gaps of 5.0 ms) also hold 16 large pageable copies (57.0 ms blocked), which the pageable-copy finding counts.",
	} {
		if !strings.Contains(f.Observation, want) {
			t.Errorf("observation lacks %q: %q", want, f.Observation)
		}
	}
	if fix := f.Fix + "\n" + f.Snippet; strings.Contains(fix, "DataLoader") || !strings.Contains(fix, "pin_memory=True") {
		t.Errorf("no DataLoader in the workload, yet the fix is %q", fix)
	}
	p := only(g, "pageable_copies", nil)
	b2 := g.bundle()
	b2.Tables["memcpy"] = memcpyTable("Pageable")
	for _, x := range eval(b2, nil) {
		if x.Rule == "pageable_copies" {
			p = append(p, x)
		}
	}
	if len(p) != 1 || !strings.Contains(p[0].Observation, "of the GPU span of 50.0 ms") {
		t.Errorf("the pageable finding's share does not name its span: %+v", p)
	}
}

// A sync finding whose calls opened GPU gaps too small to confirm it does
// not say that no gap is linked to them (its observation counts them).
func TestSyncTitleAgreesWithItsGaps(t *testing.T) {
	c := cols("trace rank step phase stream call op trigger direction pageable blocking count blocked_ns max_blocked_ns gaps gpu_gap_ns max_gap_ns bytes")
	for _, tc := range []struct {
		gaps, gapNs int64
		title       string
		small       bool // a smaller contributor that opened gaps
		prefix      string
	}{
		{5, 600_000, "The host blocks in syncs; the GPU gaps linked to them are small", false, ""},
		{0, 0, "The host blocks in syncs; no GPU gap is linked to them", false, "No GPU gap follows these calls"},
		{0, 0, "The host blocks in syncs; the GPU gaps linked to them are small", true, "No GPU gap follows the largest contributor's calls"},
	} {
		sync := &table.Table{Columns: c, Rows: [][]any{
			{"t", int64(0), int64(1), "", int64(7), "hipMemcpyWithStream", "aten::to", "copy", "HtoD", false, true, int64(5), int64(490_000_000), int64(490_000_000), tc.gaps, tc.gapNs, tc.gapNs, int64(380)},
		}}
		if tc.small {
			sync.Rows = append(sync.Rows, []any{"t", int64(0), int64(1), "", int64(7), "hipMemcpyWithStream", "aten::nonzero", "dynamic_shape", "DtoD", false, true, int64(7), int64(210_000), int64(48_000), int64(7), int64(210_000), int64(48_000), int64(4)})
		}
		fs := eval(bundle("sglang", "rocm", "AMD Instinct MI300X", 490_000_000, 500_000_000, map[string]*table.Table{"sync": sync}), nil)
		var title, obs, fix string
		for _, f := range fs {
			if f.Rule == "sync_bound_loop" {
				title, obs, fix = f.Title, f.Observation, f.Fix
			}
		}
		if title != tc.title {
			t.Errorf("%d gaps: title %q, want %q (observation %q)", tc.gaps, title, tc.title, obs)
		}
		// Without a GPU gap the host waited for a busy GPU (xdit's output
		// read-back at the step's end): the fix says removing it gains
		// the GPU nothing.
		if got := strings.HasPrefix(fix, "No GPU gap follows"); got != (tc.prefix != "") || !strings.HasPrefix(fix, tc.prefix) {
			t.Errorf("%d gaps (a smaller contributor with gaps: %v): fix %q, want it to start %q", tc.gaps, tc.small, fix, tc.prefix)
		}
	}
}

// SGLang's sync finding asks to check the overlap scheduler, unless the
// trace shows it running (sglang_qwen3_decode: its overlap_utils frames).
func TestSyncFixSGLangOverlap(t *testing.T) {
	c := cols("trace rank step phase stream call op trigger direction pageable blocking count blocked_ns max_blocked_ns gaps gpu_gap_ns max_gap_ns bytes")
	sync := &table.Table{Columns: c, Rows: [][]any{
		{"t", int64(0), int64(1), "", int64(7), "hipMemcpyWithStream", "aten::copy_", "copy", "DtoH", false, true, int64(10), int64(3_000_000), int64(300_000), int64(10), int64(1_500_000), int64(150_000), int64(40)},
	}}
	work := &table.Table{Columns: cols("trace rank feature example count total_ns"),
		Rows: [][]any{{"t", int64(0), "sglang_overlap", "sglang/srt/managers/overlap_utils.py(130): resolve_future", int64(5), int64(100_000)}}}
	for _, on := range []bool{false, true} {
		tabs := map[string]*table.Table{"sync": sync}
		if on {
			tabs["workload"] = work
		}
		for _, f := range eval(bundle("sglang", "rocm", "AMD Instinct MI300X", 5_000_000, 5_000_000, tabs), nil) {
			if f.Rule != "sync_bound_loop" {
				continue
			}
			if got := strings.Contains(f.Fix, "Check that SGLang's overlap scheduler is on"); got == on {
				t.Errorf("overlap frames %v: the fix asks to check the overlap scheduler: %s", on, f.Fix)
			}
			if on && !strings.Contains(f.Fix, "already on") {
				t.Errorf("the fix does not say the overlap scheduler is on: %s", f.Fix)
			}
		}
	}
}

// One sync call that opened one gap reads in the singular.
func TestSyncObservationSingular(t *testing.T) {
	c := cols("trace rank step phase stream call op trigger direction pageable blocking count blocked_ns max_blocked_ns gaps gpu_gap_ns max_gap_ns bytes")
	sync := &table.Table{Columns: c, Rows: [][]any{
		{"t", int64(0), int64(1), "", int64(7), "hipMemcpyWithStream", "aten::copy_", "copy", "DtoH", false, true, int64(1), int64(460_000_000), int64(460_000_000), int64(1), int64(150_000), int64(150_000), int64(4)},
	}}
	for _, f := range eval(bundle("sglang", "rocm", "AMD Instinct MI300X", 5_000_000, 5_000_000, map[string]*table.Table{"sync": sync}), nil) {
		if f.Rule != "sync_bound_loop" {
			continue
		}
		for _, want := range []string{"1 blocking sync call blocked", "opened 1 GPU gap totalling", "(1 call, 460 ms blocked"} {
			if !strings.Contains(f.Observation, want) {
				t.Errorf("observation lacks %q: %q", want, f.Observation)
			}
		}
		return
	}
	t.Error("no sync finding")
}

// A host-bound loop that mostly waits for its DataLoader gets the
// DataLoader's fix, for the iterator the trace shows: more or cheaper
// workers where workers exist, worker processes where none do.
func TestHostBoundDataLoaderSnippetFollowsIterator(t *testing.T) {
	for _, tc := range []struct{ iter, feature, want string }{
		{"_MultiProcessingDataLoaderIter", "dataloader_workers", "num_workers=2 * current"},
		{"_SingleProcessDataLoaderIter", "dataloader_single", "DataLoader(ds, batch_size=B, num_workers=8"},
		// A transformers pipeline builds the DataLoader: its call's knob.
		{"_SingleProcessDataLoaderIter", "dataloader_single hf_pipeline", "pipe(dataset, batch_size=B, num_workers=8)"},
	} {
		name := "enumerate(DataLoader)#" + tc.iter + ".__next__"
		ops := &table.Table{Columns: cols("trace rank step phase name count incl_ns self_ns max_ns launches gpu_events gpu_ns"),
			Rows: [][]any{{"t", int64(0), int64(1), "", name, int64(1), int64(60_000_000), int64(60_000_000), int64(60_000_000), int64(0), int64(0), int64(0)}}}
		wl := &table.Table{Columns: cols("trace rank feature example count total_ns"),
			Rows: [][]any{{"t", int64(0), "backward", "autograd::engine::evaluate_function", int64(1), int64(1000)}}}
		for _, feature := range strings.Fields(tc.feature) {
			wl.Rows = append(wl.Rows, []any{"t", int64(0), feature, name, int64(1), int64(1000)})
		}
		fs := eval(bundle("profiler_step", "cuda", "H100", 40_000_000, 60_000_000, map[string]*table.Table{"gaps": gapsTable(55_000_000), "ops": ops, "workload": wl}), nil)
		f := find(fs, "host_bound_idle")
		if f == nil {
			t.Fatalf("%s: no host_bound_idle: %s", tc.iter, rules(fs))
		}
		if !strings.Contains(f.Fix, "inside enumerate(DataLoader)") || !strings.Contains(f.Snippet, tc.want) {
			t.Errorf("%s: fix %q, snippet %q, want the DataLoader's with %q", tc.iter, f.Fix, f.Snippet, tc.want)
		}
	}
}

// TestAsyncSchedulingEra: a vLLM trace captured before --async-scheduling
// existed (June 2025) is told to upgrade, not to pass the flag; a later or
// undated one is told to check it is on.
func TestAsyncSchedulingEra(t *testing.T) {
	day := func(s string) int64 { return testutil.UnixDay(t, s) }
	for _, c := range []struct {
		name, platform string
		base           any // the traces table's base_time_ns
		flag, date     bool
		pip            bool // the upgrade goes through PyPI's (CUDA) wheel
	}{
		{"before the flag", "cuda", day("2025-04-01"), false, true, true},
		{"the day before", "cuda", day("2025-06-22"), false, true, true},
		{"before the flag, ROCm", "rocm", day("2025-04-01"), false, true, false},
		{"after the flag", "cuda", day("2025-09-01"), true, false, false},
		{"undated", "cuda", nil, true, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := bundle("vllm", c.platform, "H100", 40_000_000, 60_000_000, map[string]*table.Table{"gaps": gapsTable(55_000_000)})
			b.Traces.Columns = append(b.Traces.Columns, cols("base_time_ns")...)
			b.Traces.Rows[0] = append(b.Traces.Rows[0], c.base)
			b.Traces.Rows[0][b.Traces.Col("has_graphs")] = true // the fix that gives the flag's snippet
			fs := eval(b, nil)
			if len(fs) == 0 || fs[0].Rule != "host_bound_idle" {
				t.Fatalf("no host-bound finding: %s", rules(fs))
			}
			text := fs[0].Fix + "\n" + fs[0].Snippet
			if got := strings.Contains(text, "--async-scheduling  #"); got != c.flag {
				t.Errorf("snippet passes the flag: %v, want %v:\n%s", got, c.flag, text)
			}
			if got := strings.Contains(text, "captured on "); got != c.date {
				t.Errorf("names the capture date: %v, want %v:\n%s", got, c.date, text)
			}
			if got := strings.Contains(text, "pip install -U vllm"); got != c.pip {
				t.Errorf("upgrades through PyPI's CUDA wheel: %v, want %v:\n%s", got, c.pip, text)
			}
		})
	}
}

// Where host-bound and launch-bound both hold on a training rank, the
// launch-bound finding is ranked by what its launch calls can account for
// (at most their host time), so host work that fills most of the idle puts
// the host-bound finding first; where the calls account for under a
// quarter of the idle (nccl_data_a100: launch calls 36 ms of 503 ms idle)
// its refutation holds and it is left out. A serving engine's launch-bound
// finding keeps the launch waits, which its graphs or compiled forward
// remove with the host work between, and says how much of them the calls
// are. What the launches account for sets the severity too; a blocking
// copy call's time is a wait, not launch overhead.
func TestLaunchBoundRankedByLaunchTime(t *testing.T) {
	launchTable := func(cpu int64) *table.Table {
		return &table.Table{Columns: cols("trace rank step phase stream call launches with_gpu cpu_ns gpu_ns delay_ns hta_delay_ns short short_cpu_ns runtime_outliers delay_outliers cpu_hist delay_hist"),
			Rows: [][]any{{"t", int64(0), int64(1), "", int64(7), "cudaLaunchKernel", int64(1000), int64(1000), cpu, int64(2_000_000), int64(9_000_000), int64(1_000_000), int64(800), int64(400_000), int64(0), int64(0), "", ""},
				// Blocking copies: their calls' time is a wait, no launch overhead.
				{"t", int64(0), int64(1), "", int64(7), "cudaMemcpyAsync", int64(10), int64(10), int64(3_000_000), int64(100_000), int64(3_000_000), int64(0), int64(0), int64(0), int64(10), int64(0), "", ""}}}
	}
	gaps := &table.Table{Columns: cols("trace rank step phase stream category count idle_ns max_ns max_at_ns hist"),
		Rows: [][]any{{"t", int64(0), int64(1), "", int64(7), "host_wait", int64(900), int64(6_000_000), int64(20_000), int64(0), ""}}}
	for _, c := range []struct {
		producer string
		cpu      int64 // launch calls' host time, of 6 ms idle
		want     string
		obs      string // in the launch-bound observation
	}{
		{"profiler_step", 500_000, "host_bound_idle", ""},
		{"profiler_step", 2_000_000, "host_bound_idle launch_bound", "The kernel launch calls took 2.0 ms of host time: they account for at most 20.0% of that span."},
		{"vllm", 500_000, "launch_bound host_bound_idle", "The kernel launch calls took 0.500 ms of host time (8.3% of the 6.0 ms idle); 60.0% of that span are launch waits, 5.5 ms of them beyond the calls' own time: the host work between the launches (Python and operator dispatch)"},
	} {
		b := bundle(c.producer, "cuda", "H100", 4_000_000, 6_000_000, map[string]*table.Table{"launch": launchTable(c.cpu), "gaps": gaps})
		b.Tables["ranks"].Columns = append(b.Tables["ranks"].Columns, table.Column{Name: "host_wait_ns"})
		b.Tables["ranks"].Rows[0] = append(b.Tables["ranks"].Rows[0], int64(5_900_000))
		fs := eval(b, nil)
		var got []string
		for _, f := range fs {
			got = append(got, f.Rule)
			if f.Rule != "launch_bound" {
				continue
			}
			if !strings.Contains(f.Observation, c.obs) {
				t.Errorf("%s, %d ns of calls: observation %q lacks %q", c.producer, c.cpu, f.Observation, c.obs)
			}
			if c.producer == "profiler_step" && f.Impact > float64(c.cpu)/10_000_000+0.001 {
				t.Errorf("training launch-bound impact %.3f above its calls' share: %s", f.Impact, f.Observation)
			}
			// The GPU idles 60% of its span, but only the serving engine's
			// launch waits account for a critical share of it.
			if want := map[string]string{"profiler_step": "minor", "vllm": "critical"}[c.producer]; f.Severity != want {
				t.Errorf("%s launch-bound severity %s, want %s (impact %.3f)", c.producer, f.Severity, want, f.Impact)
			}
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%s, %d ns of calls: %s, want %s", c.producer, c.cpu, rules(fs), c.want)
		}
	}
}

// A trace captured before PyTorch 2.0 was released cannot have run
// torch.compile: the host-bound fix says so and offers no torch.compile.
// The same trace captured later keeps the advice, and so does one that
// runs AOTAutograd's CompiledFunction (df_index_resolver_v100, November
// 2022: functorch's aot_function on 1.13, or a 2.0 nightly's torch.compile),
// which is told to check its version.
func TestCaptureDateRulesOutTorchCompile(t *testing.T) {
	for _, c := range []struct {
		day         string
		aot, triton bool
		compile     bool // the fix offers torch.compile
		version     bool // and says to check the version
		wantInFix   string
	}{
		// Before 2.0, CUDA graphs by hand (PyTorch 1.10) remain.
		{"2022-11-30", false, false, false, false, "capture the static part of the step as a CUDA graph by hand (torch.cuda.graph"},
		{"2024-05-01", false, false, true, false, ""},
		// AOTAutograd with no Inductor kernel: its backend fuses nothing.
		{"2022-11-30", true, false, true, true, "by compiling the model's CompiledFunction region with Inductor instead (the model already runs AOTAutograd's CompiledFunction operators, and no Inductor (triton_) kernel ran: its backend fuses nothing"},
		// With Inductor kernels the model is compiled: no torch.compile.
		{"2022-11-30", true, true, false, false, "the model is already compiled"},
	} {
		tabs := map[string]*table.Table{"gaps": gapsTable(55_000_000)}
		if c.aot {
			tabs["workload"] = &table.Table{Columns: cols("trace rank feature example count total_ns"),
				Rows: [][]any{{"t", int64(0), "aot_autograd", "CompiledFunctionBackward", int64(5), int64(1000)}}}
			if c.triton {
				tabs["workload"].Rows = append(tabs["workload"].Rows, []any{"t", int64(0), "inductor_kernels", "triton_poi_fused_add_0", int64(5), int64(1000)})
			}
		}
		b := bundle("profiler_step", "cuda", "Tesla V100-SXM2-16GB", 40_000_000, 60_000_000, tabs)
		b.Traces.Columns = append(b.Traces.Columns, table.Column{Name: "base_time_ns"})
		b.Traces.Rows[0] = append(b.Traces.Rows[0], testutil.UnixDay(t, c.day))
		fs := eval(b, nil)
		if len(fs) == 0 {
			t.Fatalf("%s: no finding", c.day)
		}
		f := fs[0]
		said := strings.Contains(f.Fix, "captured on "+c.day+", before PyTorch 2.0 was released")
		if compiles := strings.Contains(f.Fix, "fuse the small operations "); compiles != c.compile || said != (!c.compile && !c.aot) ||
			c.version != strings.Contains(f.Fix, "check torch.__version__") || !strings.Contains(f.Fix, c.wantInFix) {
			t.Errorf("%s (AOTAutograd %v, Triton %v): fix %q", c.day, c.aot, c.triton, f.Fix)
		}
	}
}

// Pageable copies that are mostly read-backs (DtoH into pageable memory)
// get the read-back fix, not "pin the batches", which reaches only the
// uploads (h100_owlv2: 15.3 of 17.6 ms blocked in DtoH copies).
func TestPageableReadBacksGetTheReadBackFix(t *testing.T) {
	m := memcpyTable("Pageable")
	m.Rows = append(m.Rows, []any{"t", int64(0), int64(1), "", int64(7), "memcpy", "DtoH", "Device", "Pageable", "cudaMemcpyAsync", false, int64(4), int64(256 << 20), int64(9_000_000), int64(12_000_000), int64(3_000_000)})
	fs := eval(bundle("profiler_step", "cuda", "H100", 20_000_000, 1_000_000, map[string]*table.Table{"memcpy": m}), nil)
	f := find(fs, "pageable_copies")
	if f == nil || !strings.Contains(f.Fix, "Most of the blocked time (12.0 ms of 18.0 ms) is results read back") || !strings.Contains(f.Snippet, "pin_memory=True") {
		t.Fatalf("read-back fix: %+v", f)
	}
	// Uploads alone keep the upload fix.
	fs = eval(bundle("profiler_step", "cuda", "H100", 20_000_000, 1_000_000, map[string]*table.Table{"memcpy": memcpyTable("Pageable")}), nil)
	if f := find(fs, "pageable_copies"); f == nil || strings.Contains(f.Fix, "read back") {
		t.Errorf("upload fix: %+v", f)
	}
}

// The host-wait rule applies its own refutation: host-wait time in which no
// launching thread recorded anything (the ranks area's
// host_wait_untraced_ns) is no evidence of the GPU waiting on launches
// (event_sync_multi_stream: 18.4 of 19.1 ms). Where it is most of the host
// wait, the finding says the host's work is outside the profiler's view, as
// a minor hypothesis that asks for it to be recorded; where it is less, the
// host-wait finding leaves it out and says so.
func TestHostWaitUntraced(t *testing.T) {
	for _, c := range []struct {
		name      string
		untraced  int64
		wait      int64  // host_wait_ns; 55 ms where 0
		want      string // rules(fs)
		title     string
		impact    float64
		say, deny []string // in and not in the observation and fix
	}{
		{name: "traced", untraced: 0, want: "host_bound_idle:critical:confirmed", title: "The GPU waits for the CPU to launch work", impact: 0.55,
			say: []string{"(55.0 ms) were host waits"}, deny: []string{"left out", "records nothing"}},
		{name: "partly untraced", untraced: 10_000_000, want: "host_bound_idle:critical:confirmed", title: "The GPU waits for the CPU to launch work", impact: 0.45,
			say: []string{"(45.0 ms) were host waits", "Another 10.0 ms of host-wait gaps is left out"}},
		{name: "mostly untraced", untraced: 50_000_000, want: "host_bound_idle:minor:hypothesis", title: "The GPU idles while the host records nothing: work outside the profiler's view", impact: 0.50,
			say:  []string{"(50.0 ms) were gaps", "the host was idle too", "host waits with recorded host work are 5.0 ms", "None from this capture", "record_function", "with_stack=True"},
			deny: []string{"torch.compile", "were host waits"}},
		// Every idle nanosecond a host wait: the share is the idle's own,
		// said once (b200_eager).
		{name: "all of the idle", wait: 60_000_000, want: "host_bound_idle:critical:confirmed", title: "The GPU waits for the CPU to launch work", impact: 0.60,
			say: []string{"The GPU was idle 60.0 ms, 60.0% of its span (100 ms), all of it host waits: intervals after which"}, deny: []string{"were host waits", "left out"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := bundle("profiler_step", "cuda", "NVIDIA H100 80GB HBM3", 40_000_000, 60_000_000, map[string]*table.Table{"gaps": gapsTable(55_000_000)})
			rk := b.Tables["ranks"]
			rk.Columns = append(rk.Columns, cols("host_wait_ns host_wait_untraced_ns")...)
			wait := c.wait
			if wait == 0 {
				wait = 55_000_000
			}
			rk.Rows[0] = append(rk.Rows[0], wait, c.untraced)
			fs := eval(b, nil)
			if rules(fs) != c.want {
				t.Fatalf("got %s, want %s", rules(fs), c.want)
			}
			f := fs[0]
			if f.Title != c.title || f.Impact < c.impact-1e-9 || f.Impact > c.impact+1e-9 {
				t.Errorf("title %q impact %.3f, want %q %.3f", f.Title, f.Impact, c.title, c.impact)
			}
			text := f.Observation + " " + f.Fix
			for _, s := range c.say {
				if !strings.Contains(text, s) {
					t.Errorf("no %q in %s", s, text)
				}
			}
			for _, s := range c.deny {
				if strings.Contains(text, s) {
					t.Errorf("%q in %s", s, text)
				}
			}
		})
	}
}

// A capture too small to judge replaces every fix with "profile the steady
// state", but keeps what the untraced host-wait finding asks the next
// capture to record.
func TestHostWaitUntracedGated(t *testing.T) {
	b := bundle("profiler_step", "cuda", "NVIDIA H100 80GB HBM3", 40_000_000, 60_000_000, map[string]*table.Table{"gaps": gapsTable(55_000_000)})
	rk := b.Tables["ranks"]
	rk.Columns = append(rk.Columns, cols("host_wait_ns host_wait_untraced_ns events")...)
	rk.Rows[0] = append(rk.Rows[0], int64(55_000_000), int64(50_000_000), int64(11))
	fs := eval(b, nil)
	if rules(fs) != "host_bound_idle:minor:hypothesis" {
		t.Fatalf("got %s", rules(fs))
	}
	for _, s := range []string{"None from this capture (only 11 GPU events", "profile the steady state", "The trace does not show what the host did", "record_function"} {
		if !strings.Contains(fs[0].Fix, s) {
			t.Errorf("no %q in the fix: %s", s, fs[0].Fix)
		}
	}
}

// The DataLoader's share leaves the workers' start-up (the first batch)
// out of the DataLoader's time and of the loop's: the text names that base,
// in the DataLoader issue, its impact and the host-bound fix alike
// (resnet_2080ti: 6266 ms was 43.9% of the wall less the 1939 ms start-up,
// 38.7% of the whole wall).
func TestDataLoaderShareNamesItsBase(t *testing.T) {
	ops := &table.Table{Columns: cols("trace rank step phase name count incl_ns self_ns max_ns launches gpu_events gpu_ns"),
		Rows: [][]any{{"t", int64(0), int64(1), "", "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", int64(2), int64(60_000_000), int64(60_000_000), int64(20_000_000), int64(0), int64(0), int64(0)}}}
	capture := captureTable(capRow("loader_start", "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", 1, 20_000_000, 20_000_000, 0, 0))
	fs := eval(bundle("profiler_step", "cuda", "H100", 40_000_000, 60_000_000, map[string]*table.Table{"gaps": gapsTable(55_000_000), "ops": ops, "capture": capture}), nil)
	want := "50.0% of step time less the " + table.ProseMs(20_000_000) + " worker start-up"
	dl := find(fs, "dataloader_share")
	if dl == nil {
		t.Fatalf("no dataloader_share: %s", rules(fs))
	}
	if !strings.Contains(dl.Observation, want) || !strings.Contains(dl.ImpactText(), want) {
		t.Errorf("DataLoader issue %q, impact %q, want %q", dl.Observation, dl.ImpactText(), want)
	}
	if hb := find(fs, "host_bound_idle"); hb == nil || !strings.Contains(hb.Fix, want) {
		t.Errorf("host-bound fix does not name the base %q: %+v", want, hb)
	}
	// Steps inferred from the optimizer's step calls (resnet_2080ti has no
	// ProfilerStep#): the base says so, and that step 0 holds the start-up.
	inferred := "; the steps are inferred: each ends at an optimizer step, and step 0 holds all before the first, start-up included"
	for _, source := range []string{"profiler_step", "optimizer_step"} {
		steps := &table.Table{Columns: cols("trace rank step phase source hypothesis"),
			Rows: [][]any{{"t", int64(0), int64(1), "train", source, source == "optimizer_step"}}}
		fs := eval(bundle("profiler_step", "cuda", "H100", 40_000_000, 60_000_000, map[string]*table.Table{"gaps": gapsTable(55_000_000), "ops": ops, "capture": capture, "steps": steps}), nil)
		dl := find(fs, "dataloader_share")
		if dl == nil {
			t.Fatalf("%s: no dataloader_share: %s", source, rules(fs))
		}
		if got := strings.Contains(dl.Observation, want+inferred); got != (source == "optimizer_step") {
			t.Errorf("steps from %s: inferred clause %v: %s", source, got, dl.Observation)
		}
	}
}

// The host fix names zero_grad(set_to_none=True) where the optimizer's
// zero_grad ranges hold a tenth or more of the GPU idle
// (resnet50_num_workers_4: 38 ms of 187 ms), and not below that.
func TestHostFixZeroGrad(t *testing.T) {
	for _, c := range []struct {
		idle int64
		want bool
	}{{12_000_000, true}, {3_000_000, false}} {
		work := workloadTable([][]any{
			{"t", int64(0), "cpu_ops", "aten::conv2d", int64(900), int64(6_000_000), nil},
			{"t", int64(0), "backward", "ConvolutionBackward0", int64(300), int64(3_000_000), nil},
			{"t", int64(0), "zero_grad_gpu_idle", "Optimizer.zero_grad#SGD.zero_grad", int64(6), c.idle, c.idle + 1_000_000},
		})
		fs := eval(bundle("profiler_step", "cuda", "Tesla V100-SXM2-16GB", 40_000_000, 60_000_000,
			map[string]*table.Table{"gaps": gapsTable(55_000_000), "workload": work}), nil)
		var fix string
		for _, f := range fs {
			if f.Rule == "host_bound_idle" {
				fix = f.Fix
			}
		}
		if fix == "" {
			t.Fatalf("zero_grad idle %d ns: no host-bound finding: %s", c.idle, rules(fs))
		}
		got := strings.Contains(fix, "the optimizer's zero_grad holds 12.0 ms of the GPU idle (20.0% of 60.0 ms)") &&
			strings.Contains(fix, "optimizer.zero_grad(set_to_none=True) (PyTorch 1.7 or later, the default from 2.0)")
		if got != c.want {
			t.Errorf("zero_grad idle %d ns: names set_to_none %v, want %v: %s", c.idle, got, c.want, fix)
		}
	}
}

// A model compiled already is told to replay its compiled region as CUDA
// graphs; where much of the GPU idle lies outside the region (the eager
// text encoders of xdit_sd35_mi300x: 365 ms of its 459 ms inside), the fix
// says how much the replay reaches.
func TestHostFixCompiledIdle(t *testing.T) {
	for _, c := range []struct {
		inside int64
		want   bool
	}{{30_000_000, true}, {58_000_000, false}} {
		work := workloadTable([][]any{
			{"t", int64(0), "cpu_ops", "aten::mm", int64(900), int64(6_000_000), nil},
			{"t", int64(0), "compiled", "Torch-Compiled Region: 0/0", int64(4), int64(90_000_000), int64(90_000_000)},
			{"t", int64(0), "compiled_gpu_idle", "Torch-Compiled Region: 0/0", int64(4), c.inside, int64(90_000_000)},
		})
		ops := &table.Table{Columns: cols("trace rank step phase name count incl_ns self_ns"),
			Rows: [][]any{{"t", int64(0), int64(1), "", "Torch-Compiled Region: 0/0", int64(4), int64(90_000_000), int64(1_000_000)}}}
		fs := eval(bundle("profiler_step", "cuda", "NVIDIA H100 80GB HBM3", 40_000_000, 60_000_000,
			map[string]*table.Table{"gaps": gapsTable(55_000_000), "workload": work, "ops": ops}), nil)
		var fix string
		var reach float64
		for _, f := range fs {
			if f.Rule == "host_bound_idle" {
				fix, reach = f.Fix, f.FixReach
			}
		}
		// The reach as a share of the span the finding's impact is of:
		// 30 ms of 100 ms (busy 40, idle 60).
		if want := map[bool]float64{true: 0.3, false: 0}[c.want]; math.Abs(reach-want) > 1e-9 {
			t.Errorf("inside %d ns: FixReach %v, want %v", c.inside, reach, want)
		}
		if !strings.Contains(fix, "the model is already compiled, as one graph") {
			t.Fatalf("inside %d ns: no compiled-model host fix: %s %q", c.inside, rules(fs), fix)
		}
		got := strings.Contains(fix, "the replay reaches the GPU idle inside the compiled regions, 30.0 ms of the 60.0 ms (50.0%)")
		if got != c.want {
			t.Errorf("inside %d ns: says the replay's reach %v, want %v: %s", c.inside, got, c.want, fix)
		}
	}
}

// A host whose view operators take SlowViewOpNs or more on average, over
// SlowViewOpCalls or more calls, runs every operator slowly (nccl_data_a100:
// 24.6 µs over 2,265 calls): the host-bound finding says so with the
// figures, is capped at a hypothesis, and its fix opens by checking the
// host; fewer calls, a faster
// mean, or python stacks (whose fix re-profiles without them first) add
// nothing.
func TestHostFixSlowViews(t *testing.T) {
	const check = "Check the host before the code: its view operators took "
	for _, c := range []struct {
		name          string
		calls, meanNs int64
		stacks        bool
		launchNs      int64  // mean kernel launch call over 2,550 calls; 0 = no launch area
		want          string // "" = no slow-host sentence
		fastLaunches  bool   // the launch calls' speed is said to clear the CPU
	}{
		{"nccl_data_a100", 2_265, 24_600, false, 9_600, "took 24.6 µs on average over 2,265 calls", true},
		{"launch calls slow too", 2_265, 24_600, false, findings.UsualLaunchCallNs + 1, "took 24.6 µs on average over 2,265 calls", false},
		{"no launch area", 2_265, 24_600, false, 0, "took 24.6 µs on average over 2,265 calls", false},
		{"at the threshold", findings.SlowViewOpCalls, findings.SlowViewOpNs, false, findings.UsualLaunchCallNs, "took 10.0 µs on average over 200 calls", true},
		{"one call too few", findings.SlowViewOpCalls - 1, 30_000, false, 9_600, "", false},
		{"a nanosecond fast", 5_000, findings.SlowViewOpNs - 1, false, 9_600, "", false},
		{"python stacks", 2_265, 24_600, true, 9_600, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			work := workloadTable([][]any{
				{"t", int64(0), "cpu_ops", "aten::conv2d", int64(900), int64(6_000_000), nil},
				{"t", int64(0), "view_ops", "aten::view", c.calls, c.calls * c.meanNs, nil},
			})
			tabs := map[string]*table.Table{"gaps": gapsTable(55_000_000), "workload": work}
			if c.launchNs > 0 {
				tabs["launch"] = &table.Table{Columns: cols("trace rank step phase stream call launches with_gpu cpu_ns"),
					Rows: [][]any{{"t", int64(0), int64(1), "", int64(7), "cudaLaunchKernel", int64(2_550), int64(2_550), 2_550 * c.launchNs}}}
			}
			b := bundle("profiler_step", "cuda", "NVIDIA A100-SXM4-40GB", 40_000_000, 60_000_000, tabs)
			b.Traces.Rows[0][8] = c.stacks
			var f *evidence.Finding
			fs := eval(b, nil)
			for i := range fs {
				if fs[i].Rule == "host_bound_idle" {
					f = &fs[i]
				}
			}
			if f == nil {
				t.Fatalf("no host-bound finding: %s", rules(fs))
			}
			named := strings.Contains(f.Observation, "The host ran operators slowly: aten::view and aten::as_strided")
			checks := strings.HasPrefix(f.Fix, check)
			cites := false
			for _, r := range f.Evidence {
				cites = cites || (r.Preset == "workload" && r.Where["feature"] == "view_ops")
			}
			if c.want == "" {
				if named || checks || cites {
					t.Errorf("slow host named %v, fix checks the host %v, cites view_ops %v:\n%s\n%s", named, checks, cites, f.Observation, f.Fix)
				}
				return
			}
			if !named || !strings.Contains(f.Observation, c.want) || !checks || !cites {
				t.Errorf("want %q in the observation, the fix opening with the check and the view_ops row cited (%v):\n%s\n%s", c.want, cites, f.Observation, f.Fix)
			}
			if fast := strings.Contains(f.Observation, "a CPU slow across the board would slow both alike, so the likelier cost is in the operators' own path"); fast != c.fastLaunches {
				t.Errorf("launch calls clear the CPU %v, want %v:\n%s", fast, c.fastLaunches, f.Observation)
			}
			if f.Status != "hypothesis" || !strings.Contains(f.Caveat, "the host time the verdict rests on is inflated, by the profiler or a slow host") {
				t.Errorf("status %q, caveat %q: want a hypothesis capped for the slow host", f.Status, f.Caveat)
			}
		})
	}
}

// A torch.optim optimizer whose step holds OptimizerIdleShare or more of
// the GPU idle, on a rank with no multi-tensor operator, runs its for-loop
// implementation (dlrm_8rank's Adagrad: 64 launches for 16 dense
// parameters, 6.8% of rank 7's GPU idle): the host fix names foreach=True.
// Under the share, beside _foreach_ or _fused_ operators, or for an
// optimizer outside torch.optim (apex's FusedAdam) it says nothing.
func TestHostFixForeachOptimizer(t *testing.T) {
	const named = "the optimizer's step (Optimizer.step#Adagrad.step) holds 3.0 ms of the GPU idle (5.0% of 60.0 ms) and updates the parameters one at a time"
	for _, c := range []struct {
		name    string
		step    string
		idle    int64
		foreach bool
		want    string // "" = no optimizer clause
		day     string // the capture's date, "" = none in the trace; "vX.Y.Z": the PyTorch version it states instead
	}{
		{"at the share", "Optimizer.step#Adagrad.step", 3_000_000, false, named, ""},
		{"under the share", "Optimizer.step#Adagrad.step", 2_999_999, false, "", ""},
		{"foreach operators ran", "Optimizer.step#Adagrad.step", 12_000_000, true, "", ""},
		{"not a torch.optim class", "Optimizer.step#FusedAdam.step", 12_000_000, false, "", ""},
		{"SGD", "Optimizer.step#SGD.step", 12_000_000, false, "SGD(..., foreach=True) (an argument from PyTorch 1.12), the default on CUDA from PyTorch 2.0 when foreach is not set.", ""},
		// A stated PyTorch before 1.12 has no foreach argument to set.
		{"states PyTorch 1.10", "Optimizer.step#SGD.step", 12_000_000, false, "foreach is not set (the trace states PyTorch 1.10.2+cu113, which has no foreach argument: it needs an upgrade to 1.12 or later first)", "v1.10.2+cu113"},
		{"states PyTorch 1.13", "Optimizer.step#SGD.step", 12_000_000, false, "foreach is not set.", "v1.13.1"},
		// The capture's date says which PyTorch could have run it.
		{"captured before 2.0", "Optimizer.step#SGD.step", 12_000_000, false, "foreach is not set (this trace was captured on 2022-11-02, before PyTorch 2.0 was released (2023-03-15): set it explicitly)", "2022-11-02"},
		{"captured after 2.0 (dlrm_8rank)", "Optimizer.step#Adagrad.step", 12_000_000, false, "(this trace was captured on 2023-09-07, after PyTorch 2.0 was released: where its PyTorch is 2.0 or later, the default was turned off, by foreach=False in the code", "2023-09-07"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows := [][]any{
				{"t", int64(0), "cpu_ops", "aten::mm", int64(900), int64(6_000_000), nil},
				{"t", int64(0), "backward", "MmBackward0", int64(300), int64(3_000_000), nil},
				{"t", int64(0), "optimizer_gpu_idle", c.step, int64(1), c.idle, c.idle + 1_000_000},
			}
			if c.foreach {
				rows = append(rows, []any{"t", int64(0), "foreach_ops", "aten::_foreach_add_", int64(4), int64(400_000), nil})
			}
			if v, ok := strings.CutPrefix(c.day, "v"); ok {
				// A version the trace states, not a date.
				rows = append(rows, []any{"t", int64(0), "torch_version", v, int64(1), int64(0), nil})
			}
			work := workloadTable(rows)
			b := bundle("profiler_step", "cuda", "NVIDIA A100-SXM4-40GB", 40_000_000, 60_000_000,
				map[string]*table.Table{"gaps": gapsTable(55_000_000), "workload": work})
			if c.day != "" && !strings.HasPrefix(c.day, "v") {
				at, err := time.Parse("2006-01-02", c.day)
				if err != nil {
					t.Fatal(err)
				}
				b.Traces.Columns = append(b.Traces.Columns, table.Column{Name: "base_time_ns", Type: "BIGINT"})
				b.Traces.Rows[0] = append(b.Traces.Rows[0], at.Add(12*time.Hour).UnixNano())
			}
			fs := eval(b, nil)
			var fix string
			for _, f := range fs {
				if f.Rule == "host_bound_idle" {
					fix = f.Fix
				}
			}
			if fix == "" {
				t.Fatalf("no host-bound finding: %s", rules(fs))
			}
			got := strings.Contains(fix, "the optimizer's step")
			if (c.want == "") == got || (c.want != "" && !strings.Contains(fix, c.want)) {
				t.Errorf("want %q, fix: %s", c.want, fix)
			}
		})
	}
}

// A launch-bound loop whose trace format dates it before PyTorch 1.10 (its
// kineto categories: resnet50_num_workers_4, June 2021) gets CUDA graphs
// by hand as a fix that comes after an upgrade.
func TestGraphByHandAfterAnUpgrade(t *testing.T) {
	launch := &table.Table{Columns: cols("trace rank step phase stream call launches with_gpu cpu_ns gpu_ns delay_ns hta_delay_ns short short_cpu_ns runtime_outliers delay_outliers cpu_hist delay_hist"),
		Rows: [][]any{{"t", int64(0), int64(1), "", int64(7), "cudaLaunchKernel", int64(1000), int64(1000), int64(8_000_000), int64(5_000_000), int64(9_000_000), int64(1_000_000), int64(800), int64(6_000_000), int64(0), int64(0), "", ""}}}
	gaps := &table.Table{Columns: cols("trace rank step phase stream category count idle_ns max_ns max_at_ns hist"),
		Rows: [][]any{{"t", int64(0), int64(1), "", int64(7), "kernel_wait", int64(900), int64(4_000_000), int64(20_000), int64(0), ""}}}
	workload := &table.Table{Columns: cols("trace rank feature example count total_ns"),
		Rows: [][]any{{"t", int64(0), "legacy_categories", "aten::conv2d", int64(1), int64(0)}, {"t", int64(0), "backward", "autograd::engine::evaluate_function: ConvolutionBackward0", int64(1), int64(0)}}}
	fs := eval(bundle("profiler_step", "cuda", "Tesla V100-DGXS-32GB", 6_000_000, 4_000_000, map[string]*table.Table{"launch": launch, "gaps": gaps, "workload": workload}), nil)
	f := find(fs, "launch_bound")
	if f == nil || !strings.Contains(f.Fix, "as a CUDA graph by hand (torch.cuda.graph with static input buffers, PyTorch 1.10 or later: this trace's format dates it to about PyTorch 1.8-1.10, so it comes after an upgrade)") {
		t.Errorf("launch-bound fix of a 2021-era trace: %s %+v", rules(fs), f)
	}
}

// The DataLoader issue says when its wait is uneven: some steps held by
// the loader, others not (resnet_2080ti: 14 of 29 steps at 73-90%, 15
// under 6%), by the steps area's loader_ns; a loader that takes the same
// share of every step gets no such sentence.
func TestDataLoaderUnevenSteps(t *testing.T) {
	ops := &table.Table{Columns: cols("trace rank step phase name count incl_ns self_ns max_ns launches gpu_events gpu_ns"),
		Rows: [][]any{{"t", int64(0), int64(1), "", "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", int64(4), int64(36_000_000), int64(36_000_000), int64(20_000_000), int64(0), int64(0), int64(0)}}}
	for _, c := range []struct {
		loader []int64 // per step of 15 ms
		want   bool
	}{
		{[]int64{12_000_000, 100_000, 12_000_000, 0}, true},
		{[]int64{9_000_000, 9_000_000, 9_000_000, 9_000_000}, false},
	} {
		steps := &table.Table{Columns: cols("trace rank step phase wall_ns loader_ns")}
		for i, d := range c.loader {
			var v any = d
			if d == 0 {
				v = nil // a step without a DataLoader range
			}
			steps.Rows = append(steps.Rows, []any{"t", int64(0), int64(i), "train", int64(15_000_000), v})
		}
		fs := eval(bundle("profiler_step", "cuda", "H100", 40_000_000, 60_000_000, map[string]*table.Table{"gaps": gapsTable(55_000_000), "ops": ops, "steps": steps}), nil)
		dl := find(fs, "dataloader_share")
		if dl == nil {
			t.Fatalf("%v: no dataloader_share: %s", c.loader, rules(fs))
		}
		got := strings.Contains(dl.Observation, "The wait is uneven: in 2 of the 4 steps the DataLoader took a quarter of the step or more (the longest 12.0 ms), in 2 under a tenth")
		if got != c.want {
			t.Errorf("%v: uneven sentence %v, want %v: %s", c.loader, got, c.want, dl.Observation)
		}
	}
}

// TestDataLoaderSaysWhyUnconfirmed: a DataLoader finding that stays a
// hypothesis says why: none of the loading inside the GPU span (dlrm_8rank:
// the loads come before the window's first GPU operation), or the GPU
// busy through most of it.
func TestDataLoaderSaysWhyUnconfirmed(t *testing.T) {
	ops := &table.Table{Columns: cols("trace rank step phase name count incl_ns self_ns max_ns launches gpu_events gpu_ns"),
		Rows: [][]any{{"t", int64(0), int64(1), "", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", int64(4), int64(12_000_000), int64(12_000_000), int64(4_000_000), int64(0), int64(0), int64(0)}}}
	for _, c := range []struct {
		name       string
		idle, span int64 // dataloader_gpu_idle; span 0: no row
		status     string
		sentence   string
	}{
		{"outside the span", 0, 0, "hypothesis", "Not confirmed: none of the DataLoader's 12.0 ms lies inside the rank's GPU span"},
		{"GPU busy", 2_000_000, 10_000_000, "hypothesis", "Not confirmed: the GPU was idle 2.0 ms of the 10.0 ms of DataLoader calls inside the rank's GPU span (20.0%, under 50.0%)"},
		{"GPU idle", 8_000_000, 10_000_000, "confirmed", ""},
	} {
		rows := [][]any{{"t", int64(0), "dataloader_single", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", int64(4), int64(12_000_000), nil}}
		if c.span > 0 {
			rows = append(rows, []any{"t", int64(0), "dataloader_gpu_idle", "", int64(4), c.idle, c.span})
		}
		fs := eval(bundle("profiler_step", "cuda", "H100", 40_000_000, 60_000_000, map[string]*table.Table{"gaps": gapsTable(55_000_000), "ops": ops, "workload": workloadTable(rows)}), nil)
		dl := find(fs, "dataloader_share")
		if dl == nil {
			t.Fatalf("%s: no dataloader_share: %s", c.name, rules(fs))
		}
		if dl.Status != c.status || (c.sentence != "" && !strings.Contains(dl.Observation, c.sentence)) || (c.sentence == "" && strings.Contains(dl.Observation, "Not confirmed")) {
			t.Errorf("%s: %s: %s", c.name, dl.Status, dl.Observation)
		}
	}
}

// TestDataLoaderPrefetchedLead: where the first steps after the warm-up
// barely wait and the later ones wait a quarter or more (resnet_2080ti:
// steps 1 to 8 on batches loaded ahead during the start-up), the finding
// gives the later steps' share as the steady state; a loader on the
// loop's own thread has nothing loaded ahead and says nothing of it.
func TestDataLoaderPrefetchedLead(t *testing.T) {
	loader := []int64{100_000, 200_000, 100_000, 12_000_000, 11_000_000, 100_000, 13_000_000}
	for _, c := range []struct {
		iter, feature string
		want          bool
	}{{"_MultiProcessingDataLoaderIter", "dataloader_workers", true}, {"_SingleProcessDataLoaderIter", "dataloader_single", false}} {
		ops := &table.Table{Columns: cols("trace rank step phase name count incl_ns self_ns max_ns launches gpu_events gpu_ns"),
			Rows: [][]any{{"t", int64(0), int64(1), "", "enumerate(DataLoader)#" + c.iter + ".__next__", int64(7), int64(36_500_000), int64(36_500_000), int64(13_000_000), int64(0), int64(0), int64(0)}}}
		steps := &table.Table{Columns: cols("trace rank step phase wall_ns loader_ns")}
		for i, d := range loader {
			steps.Rows = append(steps.Rows, []any{"t", int64(0), int64(i), "train", int64(15_000_000), d})
		}
		work := workloadTable([][]any{{"t", int64(0), c.feature, "enumerate(DataLoader)#" + c.iter + ".__next__", int64(7), int64(36_500_000), nil}})
		fs := eval(bundle("profiler_step", "cuda", "H100", 40_000_000, 60_000_000, map[string]*table.Table{"gaps": gapsTable(55_000_000), "ops": ops, "steps": steps, "workload": work}), nil)
		dl := find(fs, "dataloader_share")
		if dl == nil {
			t.Fatalf("%s: no dataloader_share: %s", c.iter, rules(fs))
		}
		got := strings.Contains(dl.Observation, "In the first 3 steps (steps 0 to 2) it took under a tenth of each") &&
			strings.Contains(dl.Observation, "from step 3 on, the DataLoader took 60.2% of the 4 steps' 60.0 ms, the steady state")
		if got != c.want {
			t.Errorf("%s: lead sentence %v, want %v: %s", c.iter, got, c.want, dl.Observation)
		}
	}
}
