package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/tracebook/tracebook/analysis/chart"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/internal/buildtest"
	"github.com/tracebook/tracebook/internal/testutil"
)

// figures returns the charts of a rendered report: chart id -> SVG.
func figures(html []byte) map[string]string {
	out := map[string]string{}
	re := regexp.MustCompile(`(?s)<figure class="tb-chart" data-tb-chart="([^"]+)">\n(<svg .*?</svg>\n)</figure>`)
	for _, m := range re.FindAllSubmatch(html, -1) {
		out[string(m[1])] = string(m[2])
	}
	return out
}

// TestParityCharts: the viewer module redraws the charts for each view
// (a rank, a phase) with the same SVG bytes as the native core, and a rank
// change redraws them: the rank chart's bold rank follows the filter. Every
// chart parses. On the sample bundle (two ranks) and the dlrm report
// source (real trace, its timeline included when the golden holds one).
func TestParityCharts(t *testing.T) {
	ctx := context.Background()
	v := newViewer(t)
	check := func(name string, data []byte, views []report.View, ranks bool) {
		var prev map[string]string
		for i, view := range views {
			vj, _ := json.Marshal(view)
			var native bytes.Buffer
			if err := report.RenderBundle(&native, data, view, report.HTMLFragment); err != nil {
				t.Fatal(err)
			}
			got, err := v.Render(ctx, data, vj)
			if err != nil {
				t.Fatal(err)
			}
			want, mod := figures(native.Bytes()), figures(got)
			if len(want) == 0 {
				t.Fatalf("%s view %d: the native rendering has no chart", name, i)
			}
			for id, svg := range want {
				if mod[id] != svg {
					t.Errorf("%s view %d: chart %s differs between the module and the native core", name, i, id)
				}
				if _, err := chart.Read(svg); err != nil {
					t.Errorf("%s view %d: chart %s: %v", name, i, id, err)
				}
			}
			if len(mod) != len(want) {
				t.Errorf("%s view %d: the module drew %d charts, the native core %d", name, i, len(mod), len(want))
			}
			if ranks && view.Filter.HasRank {
				bold := regexp.MustCompile(`font-weight="bold">rank (\d+)<`).FindAllStringSubmatch(want["ranks"], -1)
				if len(bold) != 1 || bold[0][1] != strconv.Itoa(view.Filter.Rank) {
					t.Errorf("%s view %d (rank %d): the rank chart's bold rank is %v", name, i, view.Filter.Rank, bold)
				}
				if prev != nil && prev["ranks"] == want["ranks"] {
					t.Errorf("%s view %d: the rank chart was not redrawn for the new rank", name, i)
				}
			}
			prev = want
		}
	}
	check("sample", buildtest.SampleBundle(t), []report.View{
		{Filter: evidence.Filter{Rank: 0, HasRank: true}},
		{Filter: evidence.Filter{Rank: 1, HasRank: true}},
		{Filter: evidence.Filter{Phase: "train"}},
	}, true)

	path := filepath.Join(testutil.RepoRoot(t), "analysis", "report", "testdata", "golden", "dlrm_8rank_rank3.source.msgpack")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no encoded dlrm source (run package cli's TestReportGolden with -update): %v", err)
	}
	check("dlrm", data, []report.View{{}, {Filter: evidence.Filter{Rank: 3, HasRank: true}}, {Filter: evidence.Filter{Phase: "train"}}}, false)
}
