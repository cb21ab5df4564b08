package report

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/sql"
)

// TestCompactRealBundles merges every compactable area of the golden
// traces' bundles over steps and wants the same rollups for every rank and
// phase filter.
func TestCompactRealBundles(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.source.msgpack"))
	if len(files) == 0 {
		t.Fatal("no encoded sources in testdata/golden (run package cli's TestReportGolden with -update)")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src, err := DecodeSource(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		b := src.Bundle
		c := Compact(b, 0)
		ranks, phases := ranksAndPhases(b)
		filters := []evidence.Filter{{}}
		for _, r := range ranks {
			filters = append(filters, evidence.Filter{Rank: r, HasRank: true})
		}
		for _, p := range phases {
			filters = append(filters, evidence.Filter{Phase: p})
		}
		for _, flt := range filters {
			want, got := evidence.Rollup(b, flt), evidence.Rollup(c, flt)
			for area, wt := range want.Tables {
				if !reflect.DeepEqual(wt, got.Tables[area]) {
					t.Errorf("%s, filter %+v, area %s: the rollup of the compacted bundle differs", filepath.Base(f), flt, area)
				}
			}
			// The warm-up steps' rows stay apart: the rules' steady state
			// is the same.
			if len(want.Steady) != len(got.Steady) {
				t.Errorf("%s, filter %+v: %d steady states, %d once compacted", filepath.Base(f), flt, len(want.Steady), len(got.Steady))
			}
			for i := range min(len(want.Steady), len(got.Steady)) {
				w, g := want.Steady[i], got.Steady[i]
				if w.Step != g.Step || w.Steps != g.Steps || !reflect.DeepEqual(w.Ops.Rows, g.Ops.Rows) || !reflect.DeepEqual(w.Ranks.Rows, g.Ranks.Rows) {
					t.Errorf("%s, filter %+v: the steady state of %s rank %d differs once compacted", filepath.Base(f), flt, w.Trace, w.Rank)
				}
			}
		}
	}
}

// TestCompactKeepsWarmupStep: resnet50_steps' bundle with its first step
// named a warm-up step (as resnet_2080ti's step 0 is): the rules' steady
// state, which leaves that step out, is the same once the bundle is
// compacted.
func TestCompactKeepsWarmupStep(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "golden", "resnet50_steps.source.msgpack"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := DecodeSource(data)
	if err != nil {
		t.Fatal(err)
	}
	b := src.Bundle
	ops, ct := b.Tables["ops"], b.Tables["capture"]
	if ops == nil || ct == nil || len(ct.Rows) == 0 {
		t.Fatal("no ops or capture rows")
	}
	first := int64(-1)
	for r := range ops.Rows {
		if st := evidence.Int(ops, r, "step"); st >= 0 && (first < 0 || st < first) {
			first = st
		}
	}
	row := append([]any(nil), ct.Rows[0]...)
	row[ct.Col("kind")], row[ct.Col("name")], row[ct.Col("count")] = "warmup_step", "step "+strconv.FormatInt(first, 10), int64(1)
	ct.Rows = append(ct.Rows, row)
	want, got := evidence.Rollup(b, evidence.Filter{}), evidence.Rollup(Compact(b, 0), evidence.Filter{})
	if len(want.Steady) != 1 || len(got.Steady) != 1 {
		t.Fatalf("%d steady states, %d once compacted; want 1", len(want.Steady), len(got.Steady))
	}
	w, g := want.Steady[0], got.Steady[0]
	if w.Step != g.Step || w.Steps != g.Steps || !reflect.DeepEqual(w.Ops.Rows, g.Ops.Rows) || !reflect.DeepEqual(w.Ranks.Rows, g.Ranks.Rows) {
		t.Errorf("the steady state differs once compacted: step %d/%d, %d/%d steps", w.Step, g.Step, w.Steps, g.Steps)
	}
}

// TestCompactableAreas: the areas whose rows merge over steps are the ones
// the merge rule (evidence.MergeOf) makes so: a step column the rollup
// merges over, in an area whose rows merge.
func TestCompactableAreas(t *testing.T) {
	want := map[string]bool{"kernels": true, "sync": true, "ops": true, "memcpy": true, "gaps": true,
		"launch": true, "overlap": true, "graphs": true, "memory": true}
	for _, area := range evidence.Areas {
		p, _ := sql.Lookup(area)
		tb := &table.Table{Name: area}
		for _, c := range p.Columns {
			tb.Columns = append(tb.Columns, table.Column{Name: c.Name, Unit: c.Unit})
		}
		if got := compactable(area, tb); got != want[area] {
			t.Errorf("compactable(%s) = %v, want %v", area, got, want[area])
		}
	}
	if compactable("kernels", &table.Table{Columns: []table.Column{{Name: "trace"}, {Name: "name"}}}) {
		t.Error("a table without a step column is compactable")
	}
}
