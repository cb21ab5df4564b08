package wasm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/internal/buildtest"
	"github.com/tracebook/tracebook/wasm"
	"github.com/tracebook/tracebook/wasm/host"
)

// TestCompactKeepsRollup: merging rows over steps changes nothing that the
// rollup makes of them for filters without a step.
func TestCompactKeepsRollup(t *testing.T) {
	b := buildtest.SyntheticBundle(3, 40)
	c := report.Compact(b, 10)
	if len(c.Tables["kernels"].Rows) >= len(b.Tables["kernels"].Rows) {
		t.Fatalf("Compact did not merge kernels: %d rows before, %d after", len(b.Tables["kernels"].Rows), len(c.Tables["kernels"].Rows))
	}
	filters := []evidence.Filter{{}, {Rank: 1, HasRank: true}, {Phase: "decode"}, {Rank: 2, HasRank: true, Phase: "prefill"}, {Stream: 7, HasStream: true}}
	for _, f := range filters {
		want, got := evidence.Rollup(b, f), evidence.Rollup(c, f)
		for area, wt := range want.Tables {
			gt := got.Tables[area]
			if !reflect.DeepEqual(wt.Rows, gt.Rows) || !reflect.DeepEqual(wt.Columns, gt.Columns) {
				t.Errorf("filter %+v, area %s: rollup of the compacted bundle differs:\nwant %v\ngot  %v", f, area, head(wt.Rows), head(gt.Rows))
			}
		}
	}
}

func head(rows [][]any) [][]any {
	if len(rows) > 2 {
		return rows[:2]
	}
	return rows
}

// TestReportSize: the report of an 8-rank job with 1,000 steps fits in about
// 3 MB (3.02: the rules' texts grew the module past the round figure,
// TestModuleSize says how), and the module renders it exactly as the
// native code does.
func TestReportSize(t *testing.T) {
	mod := buildtest.Module(t)
	src := &report.Source{Bundle: buildtest.SyntheticBundle(8, 1000)}
	start := time.Now()
	data, err := report.EncodeOffline(src)
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := wasm.WriteReport(&page, data, report.View{}, wasm.Options{Module: mod}); err != nil {
		t.Fatal(err)
	}
	native := time.Since(start)
	const limit = 3_020_000
	t.Logf("8 ranks x 1000 steps: report %d bytes (module %d gzip, bundle %d msgpack), written in %v", page.Len(), len(mod), len(data), native)
	if page.Len() > limit {
		t.Errorf("report is %d bytes, want at most %d", page.Len(), limit)
	}
	ctx := context.Background()
	v, err := host.New(ctx, mod)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close(ctx)
	view := report.View{Filter: evidence.Filter{Rank: 3, HasRank: true, Phase: "decode"}}
	vj, _ := json.Marshal(view)
	start = time.Now()
	got, err := v.Render(ctx, data, vj)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("module render of rank 3 / decode under wazero: %v", time.Since(start))
	var want bytes.Buffer
	if err := report.RenderBundle(&want, data, view, report.HTMLFragment); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Error("module rendering of the large bundle differs from the native one")
	}
}
