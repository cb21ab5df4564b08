package report

import (
	"os"
	"path/filepath"
	"reflect"
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
		}
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
