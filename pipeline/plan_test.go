package pipeline_test

import (
	"bytes"
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/internal/duck"
	"github.com/tracebook/tracebook/internal/testutil"
	"github.com/tracebook/tracebook/pipeline"
)

// TestEvidenceIndependentOfPlan collects every area and the report twice,
// the second time with DuckDB's choice of a hash join's build side turned
// off, and holds every evidence table, the findings and the report's
// Markdown (the cross-view and the findings' windows with them) equal: an
// aggregate that picks one row among ties (arg_min, any_value) returns
// whichever row reaches it first, which the plan decides. The sync area named the operator that issued a copy that
// way: aten::to and the aten::_to_copy it calls start and end on the same
// microsecond in dlrm_8rank, and the rows moved between the two.
func TestEvidenceIndependentOfPlan(t *testing.T) {
	ctx := context.Background()
	for _, set := range []string{"testdata/param/dlrm_8rank", "hta/negative_queue_length_a100", "hta/sampled_2of128", "hta/trace_diff_test_v100"} {
		t.Run(set, func(t *testing.T) {
			var dir string
			if rel, ok := strings.CutPrefix(set, "testdata/"); ok {
				dir = filepath.Join(testutil.Testdata(t), rel)
			} else {
				if testing.Short() {
					t.Skip("-short: not the shared trace sets")
				}
				dir = filepath.Join(testutil.SharedTraces(t), set)
			}
			db := openDB(t)
			if _, err := db.Load(ctx, []string{dir}, trace.LoadOptions{Name: "t"}, nil); err != nil {
				t.Fatal(err)
			}
			want, wantFindings, wantMD := collectAll(t, db)
			if err := db.Exec(ctx, "SET GLOBAL disabled_optimizers = 'build_side_probe_side'"); err != nil {
				t.Fatal(err)
			}
			got, gotFindings, md := collectAll(t, db)
			if md != wantMD {
				t.Errorf("the report differs under the other plan:\n%s", testutil.Diff(wantMD, md))
			}
			if !reflect.DeepEqual(gotFindings, wantFindings) {
				t.Errorf("the findings differ under the other plan:\n %v\nunder the default:\n %v", gotFindings, wantFindings)
			}
			for area, w := range want {
				g := got[area]
				if !reflect.DeepEqual(g.Columns, w.Columns) || len(g.Rows) != len(w.Rows) {
					t.Errorf("%s: %d rows under the other plan, %d under the default", area, len(g.Rows), len(w.Rows))
					continue
				}
				for i := range w.Rows {
					if !reflect.DeepEqual(g.Rows[i], w.Rows[i]) {
						t.Errorf("%s row %d under the other plan:\n %v\nunder the default:\n %v", area, i, g.Rows[i], w.Rows[i])
						break
					}
				}
			}
		})
	}
}

// collectAll collects the report and returns each area's table, the
// findings and the report's Markdown.
func collectAll(t *testing.T, db *duck.DB) (map[string]*table.Table, []evidence.Finding, string) {
	t.Helper()
	src, err := pipeline.CollectReport(context.Background(), db, evidence.Filter{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tables := map[string]*table.Table{}
	for _, area := range evidence.Areas {
		if tables[area] = src.Bundle.Table(area); tables[area] == nil {
			t.Fatalf("no %s table", area)
		}
	}
	var md bytes.Buffer
	if err := report.GenerateView(&md, src, report.View{Filter: src.Bundle.Filter}, report.Markdown); err != nil {
		t.Fatal(err)
	}
	return tables, src.Bundle.Findings, md.String()
}
