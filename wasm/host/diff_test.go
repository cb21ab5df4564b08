package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/diff"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/internal/buildtest"
	"github.com/tracebook/tracebook/internal/testutil"
	"github.com/tracebook/tracebook/wasm"
	"github.com/tracebook/tracebook/wasm/host"
)

// diffViews are the views the diff parity tests render: the page's filters
// (ranks, phases, both, a rank that is not there), sorts and thresholds.
var diffViews = []report.View{
	{},
	{Filter: evidence.Filter{Rank: 0, HasRank: true}},
	{Filter: evidence.Filter{Rank: 1, HasRank: true}},
	{Filter: evidence.Filter{Phase: "decode"}},
	{Filter: evidence.Filter{Phase: "prefill"}},
	{Filter: evidence.Filter{Rank: 1, HasRank: true, Phase: "decode"}},
	{Filter: evidence.Filter{Rank: 99, HasRank: true}},
	{Sort: map[string]string{"step": "-change", "kernel": "quantity", "nodes": "-base", "other": "significance"}, Open: []string{"sides"}},
	{Thresholds: map[string]float64{"sync_gap_critical": 0.001, "idle_critical": 0.99}},
}

// checkDiffParity renders input for every view natively and in the module
// and wants the same bytes.
func checkDiffParity(t *testing.T, v *host.Viewer, name string, input []byte) {
	t.Helper()
	ctx := context.Background()
	for i, view := range diffViews {
		vj, err := json.Marshal(view)
		if err != nil {
			t.Fatal(err)
		}
		var native bytes.Buffer
		if err := diff.RenderInput(&native, input, view, diff.HTMLFragment); err != nil {
			t.Fatalf("%s view %d: native: %v", name, i, err)
		}
		got, err := v.RenderDiff(ctx, input, vj)
		if err != nil {
			t.Fatalf("%s view %d: module: %v", name, i, err)
		}
		if !bytes.Equal(got, native.Bytes()) {
			t.Errorf("%s view %d (%s): the module's diff differs from the native one:\nmodule: %.300s\nnative: %.300s", name, i, vj, got, native.Bytes())
		}
	}
}

func TestDiffParity(t *testing.T) {
	ctx := context.Background()
	v := newViewer(t)
	checkDiffParity(t, v, "sample", buildtest.SampleDiffInput(t))
	// The same module instance renders a report after a diff and a diff
	// after a report: the two caches do not mix.
	if _, err := v.Render(ctx, buildtest.SampleBundle(t), nil); err != nil {
		t.Fatal(err)
	}
	checkDiffParity(t, v, "sample again", buildtest.SampleDiffInput(t))
}

// TestDiffParityRealTraces renders the encoded inputs of the diff goldens
// (pairs of real traces, written by package cli's TestDiffGolden
// -update) for every view, natively and in the module.
func TestDiffParityRealTraces(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testutil.RepoRoot(t), "analysis", "diff", "testdata", "golden", "*.input.msgpack.gz"))
	if len(files) == 0 {
		t.Fatal("no encoded inputs in analysis/diff/testdata/golden (run package cli's TestDiffGolden with -update)")
	}
	v := newViewer(t)
	for _, f := range files {
		checkDiffParity(t, v, filepath.Base(f), testutil.ReadGzip(t, f))
	}
}

func TestRenderDiffError(t *testing.T) {
	ctx := context.Background()
	v := newViewer(t)
	if _, err := v.RenderDiff(ctx, buildtest.SampleBundle(t), nil); err == nil || !strings.Contains(err.Error(), "not a diff input") {
		t.Errorf("RenderDiff(a report's bundle) = %v, want the module's not-a-diff-input error", err)
	}
	if _, err := v.RenderDiff(ctx, buildtest.SampleDiffInput(t), []byte("{")); err == nil {
		t.Error("RenderDiff(bad view) = nil error, want the module's parsing error")
	}
}

func TestCheckDiff(t *testing.T) {
	ctx := context.Background()
	mod := buildtest.Module(t)
	var page bytes.Buffer
	view := report.View{Filter: evidence.Filter{Rank: 1, HasRank: true}}
	if err := wasm.WriteDiff(&page, buildtest.SampleDiffInput(t), view, wasm.Options{Module: mod}); err != nil {
		t.Fatal(err)
	}
	if err := host.CheckDiff(ctx, page.Bytes(), nil); err != nil {
		t.Fatalf("CheckDiff(written diff page) = %v, want nil", err)
	}
	tampered := bytes.Replace(page.Bytes(), []byte("Step time and GPU"), []byte("Step time and GPU!"), 1)
	if err := host.CheckDiff(ctx, tampered, nil); err == nil {
		t.Error("CheckDiff(tampered page) = nil, want a mismatch")
	}
	if err := host.Check(ctx, page.Bytes(), nil); err == nil || !strings.Contains(err.Error(), "diff page") {
		t.Errorf("Check(diff page) = %v, want it to say the page is a diff", err)
	}
	var rep bytes.Buffer
	if err := wasm.WriteReport(&rep, buildtest.SampleBundle(t), report.View{}, wasm.Options{Module: mod}); err != nil {
		t.Fatal(err)
	}
	if err := host.CheckDiff(ctx, rep.Bytes(), nil); err == nil || !strings.Contains(err.Error(), "report page") {
		t.Errorf("CheckDiff(report) = %v, want it to say the page is a report", err)
	}
}

// BenchmarkRenderDiff renders the 8-rank real pair's diff for one rank,
// natively and in the module under wazero (the input decoded once, as the
// page does: every later render reuses it).
func BenchmarkRenderDiff(b *testing.B) {
	data := testutil.ReadGzip(b, filepath.Join(testutil.RepoRoot(b), "analysis", "diff", "testdata", "golden", "dlrm_8rank_self.input.msgpack.gz"))
	view := report.View{Filter: evidence.Filter{Rank: 3, HasRank: true}}
	vj, _ := json.Marshal(view)
	b.Run("native", func(b *testing.B) {
		in, err := diff.DecodeInput(data)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if err := diff.GenerateView(io.Discard, in, view, diff.HTMLFragment); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("wazero", func(b *testing.B) {
		ctx := context.Background()
		v, err := host.New(ctx, buildtest.Module(b))
		if err != nil {
			b.Fatal(err)
		}
		defer v.Close(ctx)
		for b.Loop() {
			if _, err := v.RenderDiff(ctx, data, vj); err != nil {
				b.Fatal(err)
			}
		}
	})
}
