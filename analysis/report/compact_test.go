package report

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
)

// TestCompactRealBundles merges every compactable area of the golden
// traces' bundles over steps and wants the same rollups for every rank and
// phase filter.
func TestCompactRealBundles(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.source.msgpack"))
	if len(files) == 0 {
		t.Fatal("no encoded sources in testdata/golden (run the root package's TestReportGolden with -update)")
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
