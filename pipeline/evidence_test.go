//go:build cgo

package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/findings"
	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/internal/duck"
	"github.com/tracebook/tracebook/internal/testutil"
	"github.com/tracebook/tracebook/pipeline"
)

// kt builds a small Kineto trace: times in microseconds, as Kineto writes them.
type kt struct {
	rank, world int
	device      string
	events      []map[string]any
	corr, ext   int
}

func newKT(rank, world int, device string) *kt {
	return &kt{rank: rank, world: world, device: device, corr: 1000, ext: 1}
}

func (k *kt) x(cat, name string, pid, tid any, ts, dur float64, args map[string]any) {
	e := map[string]any{"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
	if args != nil {
		e["args"] = args
	}
	k.events = append(k.events, e)
}

// op adds a CPU operator (or user annotation) on the main thread.
func (k *kt) op(cat, name string, ts, dur float64) int {
	k.ext++
	k.x(cat, name, 100, 100, ts, dur, map[string]any{"External id": k.ext})
	return k.ext
}

// launch adds a runtime call at ts (dur) and the GPU op it launches.
func (k *kt) launch(call string, ts, dur float64, gcat, gname string, stream int, gts, gdur float64, extra map[string]any) {
	k.corr++
	k.x("cuda_runtime", call, 100, 100, ts, dur, map[string]any{"correlation": k.corr, "External id": k.ext})
	args := map[string]any{"stream": stream, "device": 0, "correlation": k.corr, "External id": k.ext}
	for key, v := range extra {
		args[key] = v
	}
	k.x(gcat, gname, 0, stream, gts, gdur, args)
}

func (k *kt) kernel(name string, stream int, launchTs, gts, gdur float64) {
	k.launch("cudaLaunchKernel", launchTs, 5, "kernel", name, stream, gts, gdur, nil)
}

func (k *kt) write(t *testing.T, dir, name string) string {
	t.Helper()
	doc := map[string]any{
		"schemaVersion":    1,
		"deviceProperties": []any{map[string]any{"id": 0, "name": k.device, "totalGlobalMem": 85018279936, "computeMajor": 9, "computeMinor": 0}},
		"distributedInfo":  map[string]any{"backend": "nccl", "rank": k.rank, "world_size": k.world},
		"traceEvents":      k.events,
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The engine must satisfy the interface the pipeline runs over.
var _ pipeline.Engine = (*duck.DB)(nil)

func openDB(t testing.TB) *duck.DB {
	t.Helper()
	db, err := duck.Open("", duck.Options{CacheDir: "-", Threads: 2, MemoryLimit: "2GB"})
	if err != nil {
		t.Fatalf("duck.Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// collect loads paths as one trace and collects every area.
func collect(t *testing.T, paths ...string) *evidence.Bundle {
	t.Helper()
	db := openDB(t)
	ctx := context.Background()
	if _, err := db.Load(ctx, paths, trace.LoadOptions{Name: "t"}, nil); err != nil {
		t.Fatalf("Load: %v", err)
	}
	b, err := pipeline.CollectEvidence(ctx, db, []string{"all"}, evidence.Filter{}, map[string]string{"tp": "1"})
	if err != nil {
		t.Fatalf("CollectEvidence: %v", err)
	}
	// evidence_<area> tables are kept.
	if tb, err := db.Query(ctx, "SELECT count(*) AS n FROM evidence_kernels", 0); err != nil || len(tb.Rows) != 1 {
		t.Errorf("evidence_kernels not kept: %v", err)
	}
	return b
}

// summary renders the findings as "rule severity status rank" lines.
func summary(fs []evidence.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, strings.Join([]string{f.Rule, f.Severity, f.Status, "rank" + itoa(f.Rank)}, " "))
	}
	return out
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

func wantFindings(t *testing.T, b *evidence.Bundle, want ...string) {
	t.Helper()
	got := summary(b.Findings)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n got  %q\n want %q", got, want)
		for _, f := range b.Findings {
			t.Logf("%s: %s | %s", f.Rule, f.Observation, f.Fix)
		}
	}
}

// A 5 ms cudaStreamSynchronize under aten::item drains the GPU; the host
// then works 2 ms before launching again. 51 GPU events: enough for the
// capture gate to judge.
func TestFindingsPlantedItemSync(t *testing.T) {
	k := newKT(0, 1, "NVIDIA H100 80GB HBM3")
	k.op("user_annotation", "ProfilerStep#1", 0, 13000)
	k.op("cpu_op", "aten::mm", 5, 200)
	for i := 0; i < 25; i++ {
		k.kernel("sm90_xmma_gemm_bf16", 7, 10+float64(i)*10, 100+float64(i)*200, 200)
	}
	k.op("cpu_op", "aten::item", 300, 5200)
	k.op("cpu_op", "aten::_local_scalar_dense", 305, 5190)
	k.launch("cudaMemcpyAsync", 310, 10, "gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", 7, 5100, 2, map[string]any{"bytes": 4})
	k.x("cuda_runtime", "cudaStreamSynchronize", 100, 100, 330, 5000, map[string]any{"correlation": 99999})
	k.op("cpu_op", "aten::mm", 7400, 200)
	for i := 0; i < 25; i++ {
		k.kernel("sm90_xmma_gemm_bf16", 7, 7410+float64(i)*10, 7500+float64(i)*200, 200)
	}
	b := collect(t, k.write(t, t.TempDir(), "item.json"))
	wantFindings(t, b, "sync_bound_loop critical confirmed rank0", "host_bound_idle minor confirmed rank0")
	f := b.Findings[0]
	if !strings.Contains(f.Observation, "aten::item") || !strings.Contains(f.Observation, "cudaStreamSynchronize") {
		t.Errorf("observation does not name the call and the operator: %s", f.Observation)
	}
	if !strings.Contains(f.Observation, "rank 0") || !strings.Contains(f.Observation, "of the GPU span") {
		t.Errorf("observation lacks its context: %s", f.Observation)
	}
	if f.Snippet == "" || strings.Contains(f.Fix, "DataLoader") {
		t.Errorf("fix = %q / %q", f.Fix, f.Snippet)
	}
	// The sync row: one call, 5 ms blocked, a 2.4 ms gap (5102 us -> 7500 us).
	ev := evidence.Rollup(b, evidence.Filter{})
	s := ev.Table("sync")
	found := false
	for r := range s.Rows {
		if evidence.Str(s, r, "call") == "cudaStreamSynchronize" {
			found = true
			if evidence.Str(s, r, "op") != "aten::item" || evidence.Str(s, r, "trigger") != "item" ||
				evidence.Int(s, r, "blocked_ns") != 5_000_000 || evidence.Int(s, r, "gpu_gap_ns") != 2_398_000 {
				t.Errorf("sync row = %v", s.Rows[r])
			}
		}
	}
	if !found {
		t.Error("no cudaStreamSynchronize row")
	}
}

// A pageable 64 MB host-to-device copy blocks the host 6 ms; another stream
// keeps the GPU busy, so no gap follows.
func TestFindingsPageableCopy(t *testing.T) {
	k := newKT(0, 1, "NVIDIA H100 80GB HBM3")
	k.op("user_annotation", "ProfilerStep#1", 0, 27000)
	k.op("cpu_op", "aten::mm", 20, 20)
	k.kernel("sm90_xmma_gemm_bf16", 8, 30, 200, 6800)
	k.op("cpu_op", "aten::to", 100, 6050)
	k.op("cpu_op", "aten::copy_", 102, 6040)
	k.launch("cudaMemcpyAsync", 110, 6000, "gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 7, 500, 5500,
		map[string]any{"bytes": 64 << 20, "memory bandwidth (GB/s)": 12.2})
	for i := 0; i < 50; i++ {
		k.kernel("sm90_xmma_gemm_bf16", 7, 6120+float64(i)*10, 6200+float64(i)*400, 400)
	}
	b := collect(t, k.write(t, t.TempDir(), "pageable.json"))
	wantFindings(t, b, "pageable_copies critical confirmed rank0")
	if f := b.Findings[0]; !strings.Contains(f.Snippet, "pin_memory=True") || !strings.Contains(f.Observation, "67.1 MB") {
		t.Errorf("pageable finding: %s | %s", f.Observation, f.Snippet)
	}
}

// Four ranks; rank 2 computes 15 ms where the others compute 10 ms, and the
// all-reduce ends together on every rank.
func TestFindingsStraggler(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for r := 0; r < 4; r++ {
		k := newKT(r, 4, "NVIDIA H100 80GB HBM3")
		a := 10000.0
		if r == 2 {
			a = 15000
		}
		k.op("user_annotation", "ProfilerStep#1", 0, 22000)
		k.op("cpu_op", "aten::mm", 5, 20)
		for i := 0; i < 50; i++ { // enough GPU events for the capture gate to judge
			k.kernel("sm90_xmma_gemm_bf16", 7, 10+float64(i)*0.5, 10+float64(i)*a/50, a/50)
		}
		k.op("cpu_op", "nccl:all_reduce", 40, 20)
		k.kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 9, 45, a+100, 16100-(a+100))
		k.op("cpu_op", "aten::mm", 70, 20)
		k.kernel("sm90_xmma_gemm_bf16", 7, 75, a+100, 6000)
		paths = append(paths, k.write(t, dir, "worker"+itoa(r)+".json"))
	}
	b := collect(t, paths...)
	wantFindings(t, b, "rank_straggler critical confirmed rank2")
	if f := b.Findings[0]; !strings.Contains(f.Observation, "Rank 2") || !strings.Contains(f.Observation, "of 4 ranks") {
		t.Errorf("straggler observation: %s", f.Observation)
	}
}

// A vLLM worker with one decode-only step and one prefill-only step.
func TestStepsDecodeOnlyVLLM(t *testing.T) {
	k := newKT(0, 1, "NVIDIA H100 80GB HBM3")
	k.op("user_annotation", "execute_context_0(0)_generation_32(32)", 0, 5000)
	k.launch("cudaGraphLaunch", 10, 20, "kernel", "flash_fwd_splitkv_kernel", 7, 100, 4800, nil)
	k.op("user_annotation", "execute_context_2(1000)_generation_0(0)", 5100, 9000)
	k.op("cpu_op", "aten::mm", 5110, 100)
	for i := 0; i < 8; i++ {
		k.kernel("sm90_xmma_gemm_bf16", 7, 5120+float64(i)*10, 5200+float64(i)*1100, 1100)
	}
	b := collect(t, k.write(t, t.TempDir(), "vllm-rank-0.json"))
	st := b.Table("steps")
	var got []string
	for r := range st.Rows {
		got = append(got, strings.Join([]string{itoa(int(evidence.Int(st, r, "step"))), evidence.Str(st, r, "phase"),
			itoa(int(evidence.Int(st, r, "ctx_req"))), itoa(int(evidence.Int(st, r, "ctx_tok"))),
			itoa(int(evidence.Int(st, r, "gen_req"))), itoa(int(evidence.Int(st, r, "gen_tok"))), evidence.Str(st, r, "source")}, " "))
	}
	want := []string{"0 decode 0 0 32 32 execute_tokens", "1 prefill 2 1000 0 0 execute_tokens"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("steps = %q, want %q", got, want)
	}
	// The decode phase's evidence holds only the graph-launched kernel.
	ev := evidence.Rollup(b, evidence.Filter{Phase: "decode"})
	kn := ev.Table("kernels")
	if len(kn.Rows) != 1 || evidence.Str(kn, 0, "name") != "flash_fwd_splitkv_kernel" {
		t.Errorf("decode kernels = %v", kn.Rows)
	}
	for _, f := range b.Findings {
		if f.Severity == "critical" {
			t.Errorf("critical finding on a busy vLLM trace: %s %s", f.Rule, f.Observation)
		}
		if strings.Contains(f.Fix+f.Snippet, "DataLoader") {
			t.Errorf("DataLoader advice for vLLM: %s", f.Fix)
		}
	}
	if b.Traces == nil || evidence.Ranks(b.Traces)[0].Producer != "vllm" {
		t.Errorf("producer not vllm: %v", b.Traces)
	}
}

// ProfilerStep#N steps are train only where the loop trains: an inference
// loop under torch.profiler writes them too (h100_owlv2, xdit_sd35). With no
// CPU operator that computes (none, or bare allocations: cpu_only) the loop
// cannot be told apart and its phase is unknown; an optimizer step alone
// still says train.
func TestStepsProfilerStepPhase(t *testing.T) {
	for _, c := range []struct {
		name string
		ops  [][2]string // cat, name: host events inside each step
		want string
	}{
		{"forward only", [][2]string{{"cpu_op", "aten::mm"}}, "inference"},
		{"backward operator", [][2]string{{"cpu_op", "aten::mm"}, {"cpu_op", "MmBackward0"}}, "train"},
		{"autograd engine", [][2]string{{"cpu_op", "aten::mm"}, {"cpu_op", "autograd::engine::evaluate_function: MmBackward0"}}, "train"},
		{"optimizer step", [][2]string{{"cpu_op", "aten::mm"}, {"user_annotation", "Optimizer.step#SGD.step"}}, "train"},
		{"no operators", nil, "unknown"},
		{"allocations only", [][2]string{{"cpu_op", "aten::empty"}}, "unknown"},
		{"optimizer step alone", [][2]string{{"user_annotation", "Optimizer.step#SGD.step"}}, "train"},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := newKT(0, 1, "NVIDIA H100 80GB HBM3")
			for s := 0; s < 2; s++ {
				base := float64(s) * 1000
				k.op("user_annotation", "ProfilerStep#"+itoa(s+1), base, 900)
				for i, o := range c.ops {
					k.op(o[0], o[1], base+10+float64(i)*100, 50)
				}
				k.kernel("sm90_xmma_gemm_bf16", 7, base+500, base+600, 200)
			}
			b := collect(t, k.write(t, t.TempDir(), "loop.json"))
			st := b.Table("steps")
			var got []string
			for r := range st.Rows {
				got = append(got, evidence.Str(st, r, "phase")+"/"+evidence.Str(st, r, "source"))
			}
			if want := c.want + "/profiler_step"; strings.Join(got, " ") != want+" "+want {
				t.Errorf("steps = %q, want two %s", got, want)
			}
		})
	}
}

// A training loop profiled without a schedule has no ProfilerStep#: its
// iterations end where its optimizer steps end (with_gpu_user_annotation,
// resnet_2080ti). The first starts at the rank's first event (the aten::mm
// at 110 µs); a ProfilerStep# loop keeps its own steps.
func TestStepsFromOptimizerSteps(t *testing.T) {
	for _, profilerSteps := range []bool{false, true} {
		k := newKT(0, 1, "NVIDIA H100 80GB HBM3")
		for s := 0; s < 3; s++ {
			base := 100 + float64(s)*1000
			if profilerSteps {
				k.op("user_annotation", "ProfilerStep#"+itoa(s+1), base, 990)
			}
			k.op("cpu_op", "aten::mm", base+10, 50)
			k.kernel("sm90_xmma_gemm_bf16", 7, base+20, base+100, 200)
			// Two optimizers step in each iteration (a GAN's): the
			// iterations end where the least name's steps end, each
			// counted once though it is recorded twice.
			k.op("user_annotation", "Optimizer.step#Adam.step", base+500, 100) // ends at +600
			k.op("cpu_op", "Optimizer.step#Adam.step", base+500, 100)
			k.op("user_annotation", "Optimizer.step#SGD.step", base+800, 100)
		}
		b := collect(t, k.write(t, t.TempDir(), "loop.json"))
		st := b.Table("steps")
		var got []string
		for r := range st.Rows {
			got = append(got, fmt.Sprintf("%d:%s/%s/%v@%d+%d", evidence.Int(st, r, "step"), evidence.Str(st, r, "phase"), evidence.Str(st, r, "source"),
				evidence.Bool(st, r, "hypothesis"), evidence.Int(st, r, "start_ns")/1000, evidence.Int(st, r, "wall_ns")/1000))
		}
		want := "0:train/optimizer_step/true@0+590 1:train/optimizer_step/true@590+1000 2:train/optimizer_step/true@1590+1000"
		if profilerSteps {
			want = "1:train/profiler_step/false@0+990 2:train/profiler_step/false@1000+990 3:train/profiler_step/false@2000+990"
		}
		if strings.Join(got, " ") != want {
			t.Errorf("profiler steps %v: steps = %q, want %q", profilerSteps, got, want)
		}
	}
}

// A healthy training trace: long kernels back to back, short launches, no syncs.
func TestFindingsHealthyTrace(t *testing.T) {
	k := newKT(0, 1, "NVIDIA H100 80GB HBM3")
	for s := 0; s < 3; s++ {
		base := float64(s) * 10000
		k.op("user_annotation", "ProfilerStep#"+itoa(s+1), base, 10000)
		k.op("cpu_op", "aten::mm", base+5, 100)
		for i := 0; i < 10; i++ {
			k.kernel("sm90_xmma_gemm_bf16", 7, base+10+float64(i)*10, base+200+float64(i)*980, 975)
		}
	}
	b := collect(t, k.write(t, t.TempDir(), "healthy.json"))
	for _, f := range b.Findings {
		if f.Severity == "critical" {
			t.Errorf("critical finding on a healthy trace: %s: %s", f.Rule, f.Observation)
		}
	}
	kinds := map[evidence.GapKind]bool{}
	for _, g := range b.Gaps {
		kinds[g.Kind] = true
	}
	for _, want := range []evidence.GapKind{evidence.GapNoSyncEvents, evidence.GapNoPythonStacks} {
		if !kinds[want] {
			t.Errorf("missing evidence gap %s in %v", want, b.Gaps)
		}
	}
	// Its distributed info says world size 1: no other rank to load.
	if kinds[evidence.GapSingleRank] {
		t.Errorf("a world-size-1 job has the single-rank gap: %v", b.Gaps)
	}
	// The bundle survives the codec byte for byte.
	enc, err := evidence.Encode(b)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := evidence.Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	enc2, _ := evidence.Encode(dec)
	if string(enc) != string(enc2) {
		t.Error("bundle codec round trip differs")
	}
	areas := make([]string, 0, len(b.Tables))
	for a := range b.Tables {
		areas = append(areas, a)
	}
	sort.Strings(areas)
	if strings.Join(areas, " ") != "capture collectives gaps graphs kernels launch memcpy memory ops overlap overview ranks steps sync workload" {
		t.Errorf("areas = %v", areas)
	}
}

// evidence_base_events leaves python frames and flow events out; overview
// still counts every event of the filter, python frames included, and takes
// its first start and span over them: the figures equal a direct count over
// events, for the whole capture and for a window.
func TestOverviewCountsPythonFrames(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	dir := filepath.Join(testutil.Testdata(t), "tracelens", "vllm_prefilldecode_piecewise_mi300x")
	if _, err := db.Load(ctx, []string{dir}, trace.LoadOptions{Name: "t"}, nil); err != nil {
		t.Fatal(err)
	}
	const direct = `WITH t0 AS (SELECT min(first_ts_ns) AS t0 FROM traces)
		SELECT count(*) AS events, count(*) FILTER (WHERE kind = 'python') AS python_events,
		  min(ts_ns) - any_value(t0.t0) AS first_ns, max(end_ns) - min(ts_ns) AS span_ns
		FROM events, t0 WHERE kind NOT IN ('flow', 'counter')
		  AND ($1::BIGINT <= 0 OR ts_ns - t0.t0 >= $1::BIGINT) AND ($2::BIGINT <= 0 OR ts_ns - t0.t0 < $2::BIGINT)`
	for _, f := range []evidence.Filter{{}, {WindowStartNs: 20e6, WindowEndNs: 60e6}} {
		b, err := pipeline.CollectEvidence(ctx, db, []string{"overview"}, f, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := db.Query(ctx, direct, 0, f.WindowStartNs, f.WindowEndNs)
		if err != nil {
			t.Fatal(err)
		}
		ov := b.Tables["overview"]
		if len(ov.Rows) != 1 {
			t.Fatalf("window %d..%d: %d overview rows, want 1", f.WindowStartNs, f.WindowEndNs, len(ov.Rows))
		}
		if py := evidence.Int(ov, 0, "python_events"); py == 0 {
			t.Errorf("window %d..%d: no python frames counted", f.WindowStartNs, f.WindowEndNs)
		}
		for _, col := range []string{"events", "python_events", "first_ns", "span_ns"} {
			if got, w := evidence.Int(ov, 0, col), evidence.Int(want, 0, col); got != w {
				t.Errorf("window %d..%d: overview %s = %d, events say %d", f.WindowStartNs, f.WindowEndNs, col, got, w)
			}
		}
	}
}

// capture's counter_range rows are the cuda_profiler_range events of the
// filter, as the events view holds them, in and out of a window.
func TestCaptureCounterRange(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	dir := filepath.Join(testutil.SharedTraces(t), "hta", "cupti_profiler")
	if _, err := db.Load(ctx, []string{dir}, trace.LoadOptions{Name: "t"}, nil); err != nil {
		t.Fatal(err)
	}
	const direct = `WITH t0 AS (SELECT min(first_ts_ns) AS t0 FROM traces)
		SELECT count(*) AS count, coalesce(sum(end_ns - ts_ns), 0) AS total_ns,
		  min(ts_ns) - any_value(t0.t0) AS first_ns, max(end_ns) - any_value(t0.t0) AS last_ns
		FROM events, t0 WHERE cat = 'cuda_profiler_range' AND ts_ns IS NOT NULL
		  AND ($1::BIGINT <= 0 OR ts_ns - t0.t0 >= $1::BIGINT) AND ($2::BIGINT <= 0 OR ts_ns - t0.t0 < $2::BIGINT)`
	all, err := db.Query(ctx, direct, 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := evidence.Int(all, 0, "count")
	if n == 0 {
		t.Fatal("cupti_profiler holds no cuda_profiler_range event")
	}
	// A window that starts after the first range: fewer of them, or none.
	w := evidence.Int(all, 0, "first_ns") + 1
	for _, f := range []evidence.Filter{{}, {WindowStartNs: w}, {Trace: "t", WindowEndNs: w}} {
		b, err := pipeline.CollectEvidence(ctx, db, []string{"capture"}, f, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := db.Query(ctx, direct, 0, f.WindowStartNs, f.WindowEndNs)
		if err != nil {
			t.Fatal(err)
		}
		ct, row := b.Tables["capture"], -1
		for r := range ct.Rows {
			if evidence.Str(ct, r, "kind") == "counter_range" {
				row = r
			}
		}
		if wn := evidence.Int(want, 0, "count"); row < 0 {
			if wn != 0 {
				t.Errorf("filter %+v: no counter_range row, the events hold %d", f, wn)
			}
			continue
		}
		for _, col := range []string{"count", "total_ns", "first_ns", "last_ns"} {
			if got, wv := evidence.Int(ct, row, col), evidence.Int(want, 0, col); got != wv {
				t.Errorf("filter %+v: counter_range %s = %d, events say %d", f, col, got, wv)
			}
		}
	}
}

// One area's findings state the report's bases: the rules' host-side
// shares take the rank's wall time from the overview area, which a
// collection of one area brings along (vllm_h100's sync finding said 13.7%
// of a 262 ms "wall" alone, 7.9% of 422 ms in the report).
func TestOneAreaCollectsTheRulesBases(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	if _, err := db.Load(ctx, []string{filepath.Join(testutil.Testdata(t), "kineto", "resnet50_num_workers_0")}, trace.LoadOptions{Name: "t"}, nil); err != nil {
		t.Fatalf("Load: %v", err)
	}
	b, err := pipeline.CollectEvidence(ctx, db, []string{"sync"}, evidence.Filter{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, area := range []string{"sync", "ranks", "overview"} {
		if b.Table(area) == nil {
			t.Errorf("collecting sync alone: no %s table", area)
		}
	}
}

// One area's findings are the report's: the launch-bound rule weighs the
// gaps area's launch waits over the span the capture area leaves, which a
// collection of the launch area brings along (`tracebook evidence launch`
// had said "at most 0.0% of that span" where the report said 13.1%). The
// findings are evaluated with launch_explains_min at 0: this trace's
// launch calls take a fifth of its idle, under the default, which leaves
// launch-bound out of both.
func TestOneAreaFindingsAsTheReports(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	if _, err := db.Load(ctx, []string{filepath.Join(testutil.Testdata(t), "kineto", "resnet50_num_workers_0")}, trace.LoadOptions{Name: "t"}, nil); err != nil {
		t.Fatalf("Load: %v", err)
	}
	all, err := pipeline.CollectEvidence(ctx, db, []string{"all"}, evidence.Filter{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for area, rule := range map[string]string{"launch": "launch_bound", "memcpy": "pageable_copies", "gaps": "host_bound_idle"} {
		one, err := pipeline.CollectEvidence(ctx, db, []string{area}, evidence.Filter{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		find := func(b *evidence.Bundle) *evidence.Finding {
			fs := findings.Evaluate(evidence.Rollup(b, evidence.Filter{}), evidence.Thresholds{"launch_explains_min": 0})
			for i := range fs {
				if fs[i].Rule == rule {
					return &fs[i]
				}
			}
			return nil
		}
		want, got := find(all), find(one)
		switch {
		case want == nil:
			t.Errorf("%s: the report has no %s finding", area, rule)
		case got == nil:
			t.Errorf("%s alone: no %s finding", area, rule)
		case got.Observation != want.Observation || got.Severity != want.Severity || got.Status != want.Status:
			t.Errorf("%s alone:\n%s %s: %s\nthe report's:\n%s %s: %s", area, got.Severity, got.Status, got.Observation, want.Severity, want.Status, want.Observation)
		}
	}
}

// TestKernelWaitOneThreshold: the cross-check splits queued-work idle at
// the same kernel-wait threshold as the gaps and perfetto presets
// (sql/views.sql's tb_kernel_wait_ns).
func TestKernelWaitOneThreshold(t *testing.T) {
	db := openDB(t)
	var ns int64
	if err := db.SQL().QueryRowContext(context.Background(), "SELECT tb_kernel_wait_ns()").Scan(&ns); err != nil {
		t.Fatal(err)
	}
	if ns != crossview.KernelWaitMaxNs {
		t.Errorf("tb_kernel_wait_ns() = %d, crossview.KernelWaitMaxNs = %d: one threshold, two values", ns, crossview.KernelWaitMaxNs)
	}
}
