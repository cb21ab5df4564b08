//go:build cgo

package pipeline_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tracebook/tracebook/analysis/device"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/internal/testutil"
	"github.com/tracebook/tracebook/pipeline"
)

// TestBundleCarriesNumSMs checks that the bundle's traces table carries
// device 0's numSms (gpu_num_sms, from the header kept in the traces
// table's metadata), so that evidence.Ranks and device.Identify can name
// the MI300X the vLLM traces leave unnamed; NULL where the header has no
// deviceProperties (the MTIA trace's list is empty).
func TestBundleCarriesNumSMs(t *testing.T) {
	root := testutil.SharedTraces(t)
	tests := []struct {
		set   string
		cus   int
		model string
	}{
		{"tracelens/vllm_decode_full_mi300x", 304, "MI300X"},
		{"hta/amd_mi250_minitoy", 104, ""}, // an MI210 or one GCD of an MI250: Candidates
		{"hta/mtia_single_rank", 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.set, func(t *testing.T) {
			db := openDB(t)
			ctx := context.Background()
			if _, err := db.Load(ctx, []string{filepath.Join(root, filepath.FromSlash(tc.set))}, trace.LoadOptions{Name: "t"}, nil); err != nil {
				t.Fatalf("Load: %v", err)
			}
			b, err := pipeline.CollectEvidence(ctx, db, []string{"overview"}, evidence.Filter{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if b.Traces.Col("gpu_num_sms") < 0 {
				t.Fatalf("traces table has no gpu_num_sms column")
			}
			ranks := evidence.Ranks(b.Traces)
			if len(ranks) != 1 {
				t.Fatalf("%d ranks, want 1", len(ranks))
			}
			ri := ranks[0]
			if ri.GPUNumSMs != tc.cus {
				t.Errorf("GPUNumSMs = %d, want %d", ri.GPUNumSMs, tc.cus)
			}
			c := device.Identify(device.Props{Name: ri.GPUModel, CCMajor: ri.CCMajor, CCMinor: ri.CCMinor, NumSMs: ri.GPUNumSMs, TotalMem: ri.GPUTotalMem, Platform: ri.Platform})
			if c.Model != tc.model {
				t.Errorf("Identify = %s: model %q, want %q", c, c.Model, tc.model)
			}
		})
	}
}
