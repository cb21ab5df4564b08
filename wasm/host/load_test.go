package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/internal/buildtest"
	"github.com/tracebook/tracebook/internal/testutil"
)

// TestLoadRenderViewParity: load_bundle once, then render_view per view,
// renders the same bytes as the native code, for the sample, the golden
// sources of real traces and a synthetic 3-rank job, bundle after bundle in
// one module instance.
func TestLoadRenderViewParity(t *testing.T) {
	ctx := context.Background()
	v := newViewer(t)
	bundles := map[string][]byte{"sample": buildtest.SampleBundle(t)}
	synth, err := report.EncodeOffline(&report.Source{Bundle: buildtest.SyntheticBundle(3, 40)})
	if err != nil {
		t.Fatal(err)
	}
	bundles["synthetic"] = synth
	files, _ := filepath.Glob(filepath.Join(testutil.RepoRoot(t), "analysis", "report", "testdata", "golden", "*.source.msgpack"))
	if len(files) == 0 {
		t.Fatal("no encoded sources in analysis/report/testdata/golden")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		bundles[filepath.Base(f)] = data
	}
	views := []report.View{
		{},
		{Filter: evidence.Filter{Rank: 1, HasRank: true}},
		{Filter: evidence.Filter{Phase: "decode"}, Sort: map[string]string{"kernels": "-count"}},
		{Thresholds: map[string]float64{"sync_gap_critical": 0.9}, Open: []string{}, MaxRows: 3},
		{},
	}
	for name, data := range bundles {
		if err := v.Load(ctx, data); err != nil {
			t.Fatalf("%s: Load: %v", name, err)
		}
		for i, view := range views {
			vj, _ := json.Marshal(view)
			var native bytes.Buffer
			if err := report.RenderBundle(&native, data, view, report.HTMLFragment); err != nil {
				t.Fatal(err)
			}
			got, err := v.RenderView(ctx, vj)
			if err != nil {
				t.Fatalf("%s view %d: %v", name, i, err)
			}
			if !bytes.Equal(got, native.Bytes()) {
				t.Errorf("%s view %d: render_view differs from the native rendering", name, i)
			}
		}
	}
}

// TestLoadErrors: render_view before any load_bundle, a bundle that does not
// decode, and a view that does not parse are the module's errors; a failed
// load keeps the bundle loaded before.
func TestLoadErrors(t *testing.T) {
	ctx := context.Background()
	v := newViewer(t)
	if _, err := v.RenderView(ctx, []byte("{}")); err == nil || !strings.Contains(err.Error(), "no bundle loaded") {
		t.Errorf("RenderView before Load: error %v, want no bundle loaded", err)
	}
	if err := v.Load(ctx, []byte{0xc1}); err == nil {
		t.Error("Load(bad bundle) = nil, want the decoding error")
	}
	if err := v.Load(ctx, buildtest.SampleBundle(t)); err != nil {
		t.Fatal(err)
	}
	if err := v.Load(ctx, []byte{0x92, 0xc1}); err == nil {
		t.Error("Load(bad envelope) = nil, want the decoding error")
	}
	if _, err := v.RenderView(ctx, []byte("{")); err == nil {
		t.Error("RenderView(bad view) = nil error, want the parsing error")
	}
	got, err := v.RenderView(ctx, []byte("{}"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(got, []byte("&lt;script&gt;alert(1)")) {
		t.Error("after a failed load, render_view does not render the sample loaded before")
	}
}

// TestMemoryStaysBounded: the module collects garbage by a memory limit,
// not by heap growth; many renders of an 8-rank job level off under it
// instead of growing the memory by what each render leaves.
func TestMemoryStaysBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("renders 160 views")
	}
	ctx := context.Background()
	v := newViewer(t)
	data, err := report.EncodeOffline(&report.Source{Bundle: buildtest.SyntheticBundle(8, 1000)})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Load(ctx, data); err != nil {
		t.Fatal(err)
	}
	var at100 uint32
	for i := 0; i < 160; i++ {
		view := report.View{Filter: evidence.Filter{Rank: i % 8, HasRank: i%9 != 0, Phase: []string{"", "decode", "prefill"}[i%3]}}
		vj, _ := json.Marshal(view)
		if _, err := v.RenderView(ctx, vj); err != nil {
			t.Fatal(err)
		}
		if i == 100 {
			at100 = v.MemorySize()
		}
	}
	t.Logf("memory %d MB after 100 renders, %d MB after 160", at100>>20, v.MemorySize()>>20)
	// The limit for this bundle is 64 MB + 32 bytes per bundle byte (wasm/viewer).
	limit := uint32(64<<20 + 32*len(data))
	if got := v.MemorySize(); got > limit+limit/4 || got > at100+(8<<20) {
		t.Errorf("after 160 renders the module's memory is %d MB (%d MB after 100), want it level under about %d MB", got>>20, at100>>20, limit>>20)
	}
}
