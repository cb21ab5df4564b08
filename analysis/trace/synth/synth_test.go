package synth

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/internal/testutil"
)

func TestScale(t *testing.T) {
	for _, rel := range []string{
		"hta/amd_mi250_minitoy/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
		"hta/inference_rank1_oldcats/inference_rank_1.json.gz",
		"param/dlrm_8rank/worker0_step_12.1694128201545.pt.trace.json.gz",
	} {
		t.Run(filepath.Base(rel), func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(testutil.Testdata(t), rel))
			if err != nil {
				t.Fatal(err)
			}
			orig, origEvents := summarize(t, src)
			const n = 3
			var out bytes.Buffer
			if err := Scale(bytes.NewReader(src), &out, n); err != nil {
				t.Fatal(err)
			}
			scaled, scaledEvents := summarize(t, out.Bytes())
			if scaled.Events != n*orig.Events {
				t.Errorf("Events = %d, want %d", scaled.Events, n*orig.Events)
			}
			for cat, c := range orig.CatCounts {
				if scaled.CatCounts[cat] != n*c {
					t.Errorf("cat %q: %d events, want %d", cat, scaled.CatCounts[cat], n*c)
				}
			}
			if !reflect.DeepEqual(scaled.Processes, orig.Processes) || !reflect.DeepEqual(scaled.Threads, orig.Threads) {
				t.Errorf("process and thread metadata differ")
			}
			span := orig.LastEndNs - orig.FirstTsNs
			if scaled.FirstTsNs != orig.FirstTsNs || scaled.LastEndNs != orig.FirstTsNs+n*(span+1000)-1000 {
				t.Errorf("span = [%d, %d], want [%d, %d]", scaled.FirstTsNs, scaled.LastEndNs, orig.FirstTsNs, orig.FirstTsNs+n*(span+1000)-1000)
			}
			if string(scaled.Metadata) != string(orig.Metadata) || scaled.GPUModel != orig.GPUModel {
				t.Errorf("metadata differs: %s vs %s", scaled.Metadata, orig.Metadata)
			}
			// Links: every runtime correlation is unique per copy, and each flow
			// start keeps exactly its finish.
			for key, c := range origEvents {
				if scaledEvents[key] != c*n {
					t.Errorf("%s: %d distinct, want %d", key, scaledEvents[key], c*n)
				}
			}
		})
	}
}

// summarize parses a trace and counts distinct ids and linked flows.
func summarize(t *testing.T, data []byte) (*trace.FileInfo, map[string]int) {
	t.Helper()
	corr := map[int64]bool{}
	ext := map[int64]bool{}
	pyid := map[int64]bool{}
	flows := map[string]map[int64]int{}
	fi, err := trace.Parse(bytes.NewReader(data), "t", trace.LoadOptions{}, func(e *trace.Event) error {
		if e.Kind == trace.KindRuntime && e.Has&trace.HasCorrelation != 0 {
			corr[e.Correlation] = true
		}
		if e.Kind == trace.KindCPUOp && e.Has&trace.HasExternalID != 0 {
			ext[e.ExternalID] = true
		}
		if e.Has&trace.HasPythonID != 0 {
			pyid[e.PythonID] = true
		}
		if e.Kind == trace.KindFlow {
			if flows[e.Cat] == nil {
				flows[e.Cat] = map[int64]int{}
			}
			if e.Ph == "s" {
				flows[e.Cat][e.FlowID] |= 1
			} else if e.Ph == "f" {
				flows[e.Cat][e.FlowID] |= 2
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{"correlation": len(corr), "External id": len(ext), "Python id": len(pyid)}
	for cat, ids := range flows {
		linked := 0
		for _, v := range ids {
			if v == 3 {
				linked++
			}
		}
		out["linked flows "+cat] = linked
	}
	return fi, out
}
