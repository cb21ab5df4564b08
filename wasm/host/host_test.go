package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/internal/buildtest"
	"github.com/tracebook/tracebook/internal/testutil"
	"github.com/tracebook/tracebook/wasm"
	"github.com/tracebook/tracebook/wasm/host"
)

// TestParity renders the same bundle for several views natively and in the
// module under wazero and wants the same bytes.
// newViewer instantiates the viewer module built for the tests; it is
// closed when the test ends.
func newViewer(t *testing.T) *host.Viewer {
	t.Helper()
	ctx := context.Background()
	v, err := host.New(ctx, buildtest.Module(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close(ctx) })
	return v
}

func TestParity(t *testing.T) {
	ctx := context.Background()
	v := newViewer(t)
	bundle := buildtest.SampleBundle(t)
	views := []struct {
		name string
		view report.View
	}{
		{"zero", report.View{}},
		{"rank1", report.View{Filter: evidence.Filter{Rank: 1, HasRank: true}}},
		{"phase", report.View{Filter: evidence.Filter{Phase: "decode"}}},
		{"sorted", report.View{Sort: map[string]string{"kernels": "-total_ns"}, Open: []string{"r/a"}}},
		{"thresholds", report.View{Thresholds: map[string]float64{"sync": 0.5}, MaxRows: 1}},
	}
	for _, tc := range views {
		t.Run(tc.name, func(t *testing.T) {
			viewJSON, err := json.Marshal(tc.view)
			if err != nil {
				t.Fatal(err)
			}
			var native bytes.Buffer
			if err := report.RenderBundle(&native, bundle, tc.view, report.HTMLFragment); err != nil {
				t.Fatal(err)
			}
			got, err := v.Render(ctx, bundle, viewJSON)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, native.Bytes()) {
				t.Errorf("module rendering differs from native:\nmodule: %.300s\nnative: %.300s", got, native.Bytes())
			}
		})
	}
}

func TestRenderError(t *testing.T) {
	ctx := context.Background()
	v := newViewer(t)
	if _, err := v.Render(ctx, []byte{0xc1}, nil); err == nil {
		t.Error("Render(bad bundle) = nil error, want the module's decoding error")
	}
	if _, err := v.Render(ctx, buildtest.SampleBundle(t), []byte("{")); err == nil {
		t.Error("Render(bad view) = nil error, want the module's parsing error")
	}
}

func TestCheck(t *testing.T) {
	ctx := context.Background()
	mod := buildtest.Module(t)
	var page bytes.Buffer
	if err := wasm.WriteReport(&page, buildtest.SampleBundle(t), report.View{}, wasm.Options{Module: mod}); err != nil {
		t.Fatal(err)
	}
	if err := host.Check(ctx, page.Bytes(), nil); err != nil {
		t.Fatalf("Check(written report) = %v, want nil", err)
	}
	tampered := bytes.Replace(page.Bytes(), []byte("Executive Summary</h2>"), []byte("Executive Summary!</h2>"), 1)
	if err := host.Check(ctx, tampered, nil); err == nil {
		t.Error("Check(tampered report) = nil, want a mismatch")
	}
}

// TestParityRealTraces renders the encoded sources of the report goldens
// (real traces, written by package cli's TestReportGolden -update) for
// several views, natively and in the module, and wants the same bytes.
func TestParityRealTraces(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testutil.RepoRoot(t), "analysis", "report", "testdata", "golden", "*.source.msgpack"))
	if len(files) == 0 {
		t.Fatal("no encoded sources in analysis/report/testdata/golden (run package cli's TestReportGolden with -update)")
	}
	ctx := context.Background()
	v := newViewer(t)
	views := []report.View{
		{},
		{Filter: evidence.Filter{Rank: 0, HasRank: true}},
		{Filter: evidence.Filter{Phase: "decode"}},
		{Thresholds: map[string]float64{"idle_critical": 0.99, "sync_gap_critical": 0.001}, Sort: map[string]string{"kernels": "name"}, Open: []string{}},
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, view := range views {
			vj, _ := json.Marshal(view)
			var native bytes.Buffer
			if err := report.RenderBundle(&native, data, view, report.HTMLFragment); err != nil {
				t.Fatalf("%s: %v", filepath.Base(f), err)
			}
			got, err := v.Render(ctx, data, vj)
			if err != nil {
				t.Fatalf("%s view %d: %v", filepath.Base(f), i, err)
			}
			if !bytes.Equal(got, native.Bytes()) {
				t.Errorf("%s view %d: the module's rendering differs from the native one", filepath.Base(f), i)
			}
		}
	}
}
