//go:build cgo

package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/diff"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/internal/testutil"
	"github.com/tracebook/tracebook/pipeline"
)

// writeStepsTrace writes a small Kineto training trace of six steps to
// dir/name. Each step launches a 5 ms GEMM, prepares the next batch on the
// host for 6 ms (plus 0, 50 or 100 µs of jitter) and launches a 2 ms GEMM.
// With planted, an aten::item between the two waits for the first GEMM in a
// 5 ms cudaStreamSynchronize, so the host prepares the batch only after the
// GPU has drained: the GPU idles through the preparation and the step takes
// 5 ms longer.
func writeStepsTrace(t *testing.T, dir, name string, planted bool) string {
	t.Helper()
	var events []map[string]any
	corr, ext := 1000, 1
	x := func(cat, name string, pid, tid any, ts, dur float64, args map[string]any) {
		e := map[string]any{"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
		if args != nil {
			e["args"] = args
		}
		events = append(events, e)
	}
	op := func(cat, name string, ts, dur float64) {
		ext++
		x(cat, name, 100, 100, ts, dur, map[string]any{"External id": ext})
	}
	// Each kernel is split into five back to back, so that the trace holds
	// enough GPU events (60) for the capture gate to judge it.
	kernel := func(name string, launch, gts, gdur float64) {
		for i := 0; i < 5; i++ {
			corr++
			x("cuda_runtime", "cudaLaunchKernel", 100, 100, launch+float64(i), 0.8, map[string]any{"correlation": corr, "External id": ext})
			x("kernel", name, 0, 7, gts+float64(i)*gdur/5, gdur/5, map[string]any{"stream": 7, "device": 0, "correlation": corr, "External id": ext})
		}
	}
	s := 0.0
	for k := 0; k < 6; k++ {
		jitter := float64(k%3) * 50
		prep := s + 40 // when the host starts preparing the next batch
		p := 8500 + jitter
		if planted {
			prep, p = s+5080, 13500+jitter
		}
		op("user_annotation", fmt.Sprintf("ProfilerStep#%d", k+1), s, p-10)
		op("cpu_op", "aten::mm", s+5, 20)
		kernel("sm90_xmma_gemm_bf16_a", s+10, s+30, 5000)
		if planted {
			op("cpu_op", "aten::item", s+40, 5030)
			op("cpu_op", "aten::_local_scalar_dense", s+45, 5020)
			corr++
			x("cuda_runtime", "cudaStreamSynchronize", 100, 100, s+50, 5000, map[string]any{"correlation": corr})
		}
		op("cpu_op", "aten::_prepare_batch", prep, 6000+jitter)
		op("cpu_op", "aten::mm", prep+6010+jitter, 20)
		kernel("sm90_xmma_gemm_bf16_b", prep+6020+jitter, prep+6040+jitter, 2000)
		s += p
	}
	doc := map[string]any{
		"schemaVersion":    1,
		"deviceProperties": []any{map[string]any{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85018279936, "computeMajor": 9, "computeMinor": 0}},
		"distributedInfo":  map[string]any{"backend": "nccl", "rank": 0, "world_size": 1},
		"traceEvents":      events,
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The hand-built pair is also kept as files, for the CLI's test and for
// trying `tracebook diff` by hand; -update rewrites them.
func TestDiffPairFiles(t *testing.T) {
	dir := t.TempDir()
	for name, planted := range map[string]bool{"planted_sync.json": true, "fixed.json": false} {
		b, err := os.ReadFile(writeStepsTrace(t, dir, name, planted))
		if err != nil {
			t.Fatal(err)
		}
		testutil.Golden(t, filepath.Join(testutil.RepoRoot(t), "analysis", "diff", "testdata", name), b)
	}
}

// loadDiff loads base and test under the names "base" and "test" and
// compares them.
func loadDiff(t *testing.T, base, test string, f evidence.Filter) *diff.Diff {
	t.Helper()
	db := openDB(t)
	ctx := context.Background()
	for name, p := range map[string]string{"base": base, "test": test} {
		if _, err := db.Load(ctx, []string{p}, trace.LoadOptions{Name: name}, nil); err != nil {
			t.Fatalf("Load(%s): %v", p, err)
		}
	}
	d, err := pipeline.CollectDiff(ctx, db, "base", "test", f, nil, nil)
	if err != nil {
		t.Fatalf("CollectDiff: %v", err)
	}
	return d
}

func changeOf(t *testing.T, d *diff.Diff, group, name string) diff.Change {
	t.Helper()
	for _, c := range d.Changes {
		if c.Group == group && c.Name == name {
			return c
		}
	}
	t.Fatalf("no change %s/%s in %+v", group, name, d.Changes)
	return diff.Change{}
}

func findingsByStatus(d *diff.Diff) map[string][]string {
	out := map[string][]string{}
	for _, f := range d.Findings {
		out[f.Status] = append(out[f.Status], f.Rule)
	}
	return out
}

// The planted sync is removed: its finding is resolved, and the step time
// drops by the 5 ms the sync cost.
func TestDiffPlantedSyncResolved(t *testing.T) {
	dir := t.TempDir()
	d := loadDiff(t, writeStepsTrace(t, dir, "sync.json", true), writeStepsTrace(t, dir, "fixed.json", false), evidence.Filter{})
	if len(d.Mismatches) != 0 || d.Warning() != "" {
		t.Errorf("same context, yet mismatches %+v", d.Mismatches)
	}
	if d.Normalised != "step" || d.BaseSteps != 6 || d.TestSteps != 6 {
		t.Errorf("normalised %q over %d/%d steps, want step over 6/6", d.Normalised, d.BaseSteps, d.TestSteps)
	}
	st := changeOf(t, d, "step", "step time")
	if math.Abs(st.Delta-(-5e6)) > 1 || st.Verdict != diff.Significant || st.Base.Std == 0 {
		t.Errorf("step time change = %+v, want -5 ms, significant against the 50 µs jitter", st)
	}
	if math.Abs(st.Base.Mean-13.54e6) > 1 || math.Abs(st.Test.Mean-8.54e6) > 1 {
		t.Errorf("step time = %.0f -> %.0f ns, want 13.54 -> 8.54 ms", st.Base.Mean, st.Test.Mean)
	}
	if busy := changeOf(t, d, "step", "GPU busy"); busy.Verdict != diff.NoChange || math.Abs(busy.Base.Mean-7e6) > 1 {
		t.Errorf("GPU busy change = %+v, want 7 ms per step on both sides", busy)
	}
	if idle := changeOf(t, d, "step", "GPU idle"); idle.Delta > -4.9e6 || idle.Verdict != diff.Significant {
		t.Errorf("GPU idle change = %+v, want about -5 ms, significant", idle)
	}
	// The sync's gap counts up to the call's 5 ms: what removing it saved,
	// the step time's change above (the measured gap is about 6.1 ms).
	gap := changeOf(t, d, "sync", "GPU gaps opened by syncs")
	if gap.Test.Mean != 0 || math.Abs(gap.Base.Mean+st.Delta) > 1 || gap.Verdict != diff.Significant {
		t.Errorf("sync gap change = %+v, want the step time's saving, %.0f ns per step -> 0", gap, -st.Delta)
	}
	if c := changeOf(t, d, "sync", "blocking sync calls"); c.Base.Mean != 1 || c.Test.Mean != 0 {
		t.Errorf("sync calls per step = %+v, want 1 -> 0", c)
	}
	if c := changeOf(t, d, "class", "COMP"); c.Verdict != diff.NoChange {
		t.Errorf("COMP change = %+v, want no change", c)
	}
	// The trees: the sync frame shrinks by its 5 ms; the GPU view does not change.
	syncNode := false
	for _, n := range d.Nodes {
		if n.View == "gpu" {
			t.Errorf("GPU node %s changed by %.0f ns", n.Path, n.Delta)
		}
		if strings.HasSuffix(n.Path, "aten::item › aten::_local_scalar_dense › cudaStreamSynchronize") && n.Sync && n.Delta == -5e6 {
			syncNode = true
		}
	}
	if !syncNode {
		t.Errorf("no shrunk cudaStreamSynchronize node in %+v", d.Nodes)
	}
	byStatus := findingsByStatus(d)
	if strings.Join(byStatus[diff.Resolved], ",") != "sync_bound_loop" || len(byStatus[diff.New]) != 0 {
		t.Errorf("findings = %+v, want sync_bound_loop resolved and nothing new", byStatus)
	}
	var md strings.Builder
	if err := diff.Write(&md, d, diff.Markdown); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"step time 13.540 ms → 8.540 ms/step (−5.000 ms (−36.9%), significant", `✅ RESOLVED sync_bound_loop \[rank 0\]`} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md.String())
		}
	}
}

// A trace compared with itself shows no change and no finding that moved.
func TestDiffSelf(t *testing.T) {
	p := writeStepsTrace(t, t.TempDir(), "sync.json", true)
	d := loadDiff(t, p, p, evidence.Filter{})
	if d.Changed() || len(d.Mismatches) != 0 {
		t.Errorf("self diff changed: mismatches %+v, headline %s", d.Mismatches, d.Headline())
	}
	for _, c := range d.Changes {
		if c.Delta != 0 || c.Verdict != diff.NoChange {
			t.Errorf("self diff: %s/%s = %+v, want no change", c.Group, c.Name, c)
		}
	}
	for _, n := range d.Nodes {
		t.Errorf("self diff: node %s changed by %.0f ns", n.Path, n.Delta)
	}
	for _, f := range d.Findings {
		if f.Status != diff.Persisting || f.Note != "" {
			t.Errorf("self diff: finding %+v", f)
		}
	}
	if !strings.HasPrefix(d.Headline(), "No significant change. ") {
		t.Errorf("headline = %s", d.Headline())
	}
}

// One step on a side: significance is unknown, said as a gap.
func TestDiffOneStep(t *testing.T) {
	dir := t.TempDir()
	d := loadDiff(t, writeStepsTrace(t, dir, "sync.json", true), writeStepsTrace(t, dir, "fixed.json", false), evidence.Filter{Step: 2, HasStep: true})
	st := changeOf(t, d, "step", "step time")
	if st.Verdict != diff.Unknown || st.Base.N != 1 || math.Abs(st.Delta-(-5e6)) > 1 {
		t.Errorf("one-step change = %+v, want -5 ms of unknown significance", st)
	}
	if !strings.Contains(strings.Join(d.Gaps, "\n"), "significance is unknown") {
		t.Errorf("gaps = %q, want the one-step gap", d.Gaps)
	}
}

// The shared pairs of the same workload: the headline deltas are pinned,
// and the context warning fires across GPU models and platforms.
func TestDiffSharedPairs(t *testing.T) {
	shared := testutil.SharedTraces(t)
	local := filepath.Join(testutil.Testdata(t), "kineto", "resnet50_num_workers_0")
	if _, err := os.Stat(local); err != nil {
		local = filepath.Join(shared, "kineto", "resnet50_num_workers_0")
	}
	tests := []struct {
		name, base, test string
		warn             []string // context differences that must be named
	}{
		{"resnet50_workers", local, filepath.Join(shared, "kineto", "resnet50_num_workers_4"), nil},
		{"hta_a100_v100", filepath.Join(shared, "hta", "trace_diff_control_a100"), filepath.Join(shared, "hta", "trace_diff_test_v100"), []string{"GPU model", "world size"}},
		{"vllm_h100_mi300x", filepath.Join(shared, "tracemap", "vllm_h100_tp4_rank0"), filepath.Join(shared, "tracemap", "vllm_mi300x_tp4_rank0"), []string{"GPU model", "platform"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := loadDiff(t, tc.base, tc.test, evidence.Filter{})
			var what []string
			for _, m := range d.Mismatches {
				what = append(what, m.What)
			}
			for _, w := range tc.warn {
				if !strings.Contains(strings.Join(what, ","), w) || !strings.Contains(d.Warning(), "DIFFERENT CONTEXTS") {
					t.Errorf("context warning lacks %q: %q", w, d.Warning())
				}
			}
			if tc.warn == nil && len(d.Mismatches) != 0 {
				t.Errorf("same context, yet mismatches %+v", d.Mismatches)
			}
			var md strings.Builder
			if err := diff.Write(&md, d, diff.Markdown); err != nil {
				t.Fatal(err)
			}
			if tc.warn != nil && !strings.Contains(strings.SplitN(md.String(), "\n", 4)[2], "DIFFERENT CONTEXTS") {
				t.Errorf("the warning is not at the top:\n%.400s", md.String())
			}
			testutil.Golden(t, filepath.Join("testdata", "diff."+tc.name+".golden"), []byte(headline(d)))
		})
	}
}

// headline is what the shared-pair goldens pin: the warning, the notes,
// the step, phase, token and class changes, and the matched findings.
func headline(d *diff.Diff) string {
	var b strings.Builder
	if w := d.Warning(); w != "" {
		b.WriteString(w + "\n")
	}
	for _, m := range d.Mismatches {
		fmt.Fprintf(&b, "  %s: %s -> %s\n", m.What, m.Base, m.Test)
	}
	for _, n := range d.Notes {
		b.WriteString("note: " + n + "\n")
	}
	for _, c := range d.Changes {
		switch c.Group {
		case "step", "phase", "token", "class":
			fmt.Fprintf(&b, "%s/%s: %.3f ± %.3f -> %.3f ± %.3f ms/step (n %d/%d), delta %.3f ms, %s, t %.1f\n", c.Group, c.Name,
				c.Base.Mean/1e6, c.Base.Std/1e6, c.Test.Mean/1e6, c.Test.Std/1e6, c.Base.N, c.Test.N, c.Delta/1e6, c.Verdict, c.T)
		}
	}
	for _, f := range d.Findings {
		fmt.Fprintf(&b, "finding %s %s rank %d\n", f.Status, f.Rule, f.Rank)
	}
	return b.String()
}

// writeVLLMPair writes a two-rank vLLM capture (decode and prefill steps
// in turn, the prefill GEMMs lasting gemm µs) under dir/name, one file per
// rank, and returns the paths.
func writeVLLMPair(t *testing.T, dir, name string, gemm float64) []string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for r := 0; r < 2; r++ {
		k := newKT(r, 2, "NVIDIA H100 80GB HBM3")
		s := 0.0
		for step := 0; step < 4; step++ {
			if step%2 == 0 {
				k.op("user_annotation", "execute_context_0(0)_generation_32(32)", s, 5000)
				k.launch("cudaGraphLaunch", s+10, 20, "kernel", "flash_fwd_splitkv_kernel", 7, s+100, 4800, nil)
				s += 5100
				continue
			}
			k.op("user_annotation", "execute_context_2(1000)_generation_0(0)", s, 8*gemm+1000)
			k.op("cpu_op", "aten::mm", s+10, 100)
			for i := 0; i < 8; i++ {
				k.kernel("sm90_xmma_gemm_bf16", 7, s+20+float64(i)*10, s+200+float64(i)*gemm, gemm)
			}
			s += 8*gemm + 1100
		}
		paths = append(paths, k.write(t, filepath.Join(dir, name), "vllm-rank-"+strconv.Itoa(r)+".json"))
	}
	return paths
}

// sliceNames names the slices of cross-views: "rank 1 phase decode", or
// "all" for none.
func sliceNames(cvs []*crossview.Result) []string {
	var out []string
	for _, cv := range cvs {
		var p []string
		if cv.Slice.HasRank {
			p = append(p, "rank "+strconv.Itoa(cv.Slice.Rank))
		}
		if cv.Slice.Phase != "" {
			p = append(p, "phase "+cv.Slice.Phase)
		}
		if len(p) == 0 {
			p = append(p, "all")
		}
		out = append(out, strings.Join(p, " "))
	}
	return out
}

// CollectDiffInput gives each side the cross-view of the filter and, with
// slices, one per rank and one per phase that the filter leaves open; a
// view of such a slice then compares trees, and without them says it
// cannot.
func TestCollectDiffInputSlices(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t)
	ctx := context.Background()
	for name, gemm := range map[string]float64{"base": 1100, "test": 700} {
		if _, err := db.Load(ctx, writeVLLMPair(t, dir, name, gemm), trace.LoadOptions{Name: name}, nil); err != nil {
			t.Fatalf("Load(%s): %v", name, err)
		}
	}
	tests := []struct {
		name       string
		f          evidence.Filter
		withSlices bool
		want       []string
		// view is a slice the page's filters choose; trees says whether
		// its diff compares the trees.
		view  evidence.Filter
		trees bool
	}{
		{"slices", evidence.Filter{}, true, []string{"all", "rank 0", "rank 1", "phase decode", "phase prefill"}, evidence.Filter{Phase: "prefill"}, true},
		{"no slices", evidence.Filter{}, false, []string{"all"}, evidence.Filter{Phase: "prefill"}, false},
		{"rank filter", evidence.Filter{Rank: 1, HasRank: true}, true, []string{"rank 1", "rank 1 phase decode", "rank 1 phase prefill"}, evidence.Filter{Rank: 1, HasRank: true, Phase: "decode"}, true},
		{"phase filter", evidence.Filter{Phase: "decode"}, true, []string{"phase decode", "rank 0 phase decode", "rank 1 phase decode"}, evidence.Filter{Rank: 0, HasRank: true, Phase: "decode"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, err := pipeline.CollectDiffInput(ctx, db, "base", "test", tc.f, nil, nil, tc.withSlices)
			if err != nil {
				t.Fatal(err)
			}
			if in.Base.Name != "base" || in.Test.Name != "test" || in.Filter != tc.f {
				t.Errorf("input = %q vs %q under %+v, want base vs test under %+v", in.Base.Name, in.Test.Name, in.Filter, tc.f)
			}
			for _, side := range []diff.InputSide{in.Base, in.Test} {
				if got := sliceNames(side.CrossViews); strings.Join(got, "|") != strings.Join(tc.want, "|") {
					t.Errorf("%s cross-views = %q, want %q", side.Name, got, tc.want)
				}
			}
			d, err := diff.CompareView(in, report.View{Filter: tc.view})
			if err != nil {
				t.Fatal(err)
			}
			otherSlice := strings.Contains(strings.Join(d.Gaps, "\n"), "collected for another slice")
			if otherSlice == tc.trees {
				t.Errorf("view %+v: trees compared = %v, want %v (gaps %q)", tc.view, !otherSlice, tc.trees, d.Gaps)
			}
		})
	}
}
