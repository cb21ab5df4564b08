package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tracebook/tracebook/analysis/chart"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/internal/testutil"
)

// chartFigure is one chart of a written report: its id and SVG.
var chartFigure = regexp.MustCompile(`(?s)<figure class="tb-chart" data-tb-chart="([^"]+)">\n(<svg .*?</svg>\n)</figure>`)

// TestReportChartsScreenshots writes the HTML reports of the vLLM H100
// (../shared/traces), dlrm 8-rank and resnet50 traces, checks every chart
// in them against the evidence it draws (the SVG parsed as XML: bars or
// lanes present, no NaN, every text inside the viewBox; the rank chart's
// bars are each rank's GPU time split, the step chart's columns each
// step's GPU span, the top kernel bar the largest kernel's time, each
// timeline lane's busy time the window's), and saves a screenshot of each
// report in headless Chromium to test-artifacts/report-<name>.png. It
// skips when ../shared is absent.
func TestReportChartsScreenshots(t *testing.T) {
	if testing.Short() {
		t.Skip("loads three real traces")
	}
	vllm := filepath.Join("..", "..", "shared", "traces", "tracemap", "vllm_h100_tp4_rank0")
	if _, err := os.Stat(vllm); err != nil {
		t.Skipf("the shared traces (../shared/traces from the repository root) are absent (%v): skipping the report screenshots", err)
	}
	tests := []struct {
		name string
		path string
	}{
		{"vllm-h100", vllm},
		{"dlrm-8rank", "../testdata/param/dlrm_8rank"},
		{"resnet50", "../testdata/kineto/resnet50_num_workers_0"},
	}
	artifacts := filepath.Join(testutil.RepoRoot(t), "test-artifacts")
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, pg, err := collectReport(context.Background(), []string{tc.path}, evidence.Filter{}, loadFlags{}, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			data, err := report.EncodeOffline(src)
			if err != nil {
				t.Fatal(err)
			}
			if pg == nil {
				if pg, err = htmlPage(data, report.View{}); err != nil {
					t.Fatal(err)
				}
			}
			var page bytes.Buffer
			if err := pg.Write(&page, src.Perfetto); err != nil {
				t.Fatal(err)
			}
			offline, err := report.DecodeSource(data) // what the page draws from
			if err != nil {
				t.Fatal(err)
			}
			checkReportCharts(t, page.String(), offline)
			path, err := filepath.Abs(filepath.Join(t.TempDir(), tc.name+".html"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, page.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			screenshot(t, path, filepath.Join(artifacts, "report-"+tc.name+".png"))
		})
	}
}

// checkReportCharts checks the charts of a report page against the source
// it was drawn from.
func checkReportCharts(t *testing.T, page string, src *report.Source) {
	t.Helper()
	figs := chartFigure.FindAllStringSubmatch(page, -1)
	ids := map[string]*chart.Reading{}
	for _, f := range figs {
		r, err := chart.Read(f[2])
		if err != nil {
			t.Errorf("chart %s: %v", f[1], err)
			continue
		}
		ids[f[1]] = r
		if len(r.Bars) == 0 && len(r.Lanes) == 0 {
			t.Errorf("chart %s is empty", f[1])
		}
		if r.Title == "" || r.Desc == "" {
			t.Errorf("chart %s has no title or text alternative", f[1])
		}
		for _, tx := range r.Texts {
			if tx.Left < -0.05 || tx.Right > r.Width+0.05 || tx.Top < -0.05 || tx.Bottom > r.Height+0.05 {
				t.Errorf("chart %s: text %q outside the viewBox %vx%v", f[1], tx.Text, r.Width, r.Height)
			}
		}
	}
	for _, id := range []string{"ranks", "kernel-classes", "kernels"} {
		if ids[id] == nil {
			t.Errorf("no %s chart", id)
		}
	}
	b := src.Bundle
	ev := evidence.Rollup(b, b.Filter)
	tolOf := func(r *chart.Reading) float64 { return 0.16 / r.PerUnit }

	// Ranks: per rank, compute, exposed communication, memory copy/set only
	// and idle, from the ranks evidence.
	if r := ids["ranks"]; r != nil {
		rt := ev.Table("ranks")
		type row struct {
			rank int64
			v    [4]float64
		}
		var rows []row
		for i := range rt.Rows {
			busy, idle := evidence.Int(rt, i, "busy_ns"), evidence.Int(rt, i, "idle_ns")
			comp, cc := evidence.Int(rt, i, "compute_ns"), evidence.Int(rt, i, "comm_comp_ns")
			rows = append(rows, row{evidence.Int(rt, i, "rank"), [4]float64{float64(comp) / 1e6, float64(cc-comp) / 1e6, float64(busy-cc) / 1e6, float64(idle) / 1e6}})
		}
		sort.Slice(rows, func(i, j int) bool { return rows[i].rank < rows[j].rank })
		if len(rows) != len(r.Bars) {
			t.Fatalf("ranks chart: %d bars, %d ranks in the evidence", len(r.Bars), len(rows))
		}
		for i, rw := range rows {
			for j, v := range rw.v {
				if got := r.Bars[i].Values[j]; math.Abs(got-v) > tolOf(r) {
					t.Errorf("ranks chart: rank %d part %d draws %v ms, the evidence says %v", rw.rank, j, got, v)
				}
			}
		}
	}
	// Top kernels: the first bar is the kernel with the most time.
	if r := ids["kernels"]; r != nil {
		kt := ev.Table("kernels")
		by := map[string]int64{}
		var top int64
		for i := range kt.Rows {
			n := evidence.Str(kt, i, "name")
			by[n] += evidence.Int(kt, i, "total_ns")
			top = max(top, by[n])
		}
		got := 0.0
		for _, v := range r.Bars[0].Values {
			got += v
		}
		if math.Abs(got-float64(top)/1e6) > tolOf(r) {
			t.Errorf("kernels chart: the first bar draws %v ms, the largest kernel has %v", got, float64(top)/1e6)
		}
	}
	// Steps: each column is its step's GPU span (busy + idle) on the
	// chart's rank, from the per-step ranks rows.
	if r := ids["steps"]; r != nil {
		rank := regexp.MustCompile(`per step on rank (\d+)`).FindStringSubmatch(r.Title)
		if rank == nil {
			t.Fatalf("steps chart: title %q names no rank", r.Title)
		}
		rk, _ := strconv.ParseInt(rank[1], 10, 64)
		rt := b.Table("ranks")
		span := map[string]float64{}
		for i := range rt.Rows {
			if evidence.Int(rt, i, "rank") == rk && evidence.Int(rt, i, "step") >= 0 {
				span["step "+strconv.FormatInt(evidence.Int(rt, i, "step"), 10)] += float64(evidence.Int(rt, i, "busy_ns")+evidence.Int(rt, i, "idle_ns")) / 1e6
			}
		}
		for _, bar := range r.Bars {
			name := strings.SplitN(bar.Tooltip, ":", 2)[0]
			got := 0.0
			for _, v := range bar.Values {
				got += v
			}
			if want, ok := span[name]; !ok || math.Abs(got-want) > 2*tolOf(r) {
				t.Errorf("steps chart: %s draws %v ms, the evidence says %v", name, got, want)
			}
		}
	}
	// Timelines: each lane's tooltip gives the window's busy time of that
	// lane, and every segment lies inside the window.
	busy := map[string]float64{} // tooltip -> busy ms
	for _, w := range src.Windows {
		if w.Timeline == nil {
			continue
		}
		for _, l := range w.Timeline.Lanes {
			busy[l.Name+": busy "+chart.Format(float64(l.BusyNs)/1e6)+" ms"] = float64(l.BusyNs) / 1e6
		}
	}
	for id, r := range ids {
		if !strings.HasPrefix(id, "timeline-") {
			continue
		}
		if len(r.Lanes) < 2 || len(r.Bands) == 0 {
			t.Errorf("%s: %d lanes, %d bands", id, len(r.Lanes), len(r.Bands))
		}
		top := 0.0
		for _, tx := range r.Texts {
			if v, err := strconv.ParseFloat(strings.ReplaceAll(tx.Text, ",", ""), 64); err == nil {
				top = math.Max(top, v)
			}
		}
		for i, l := range r.Lanes {
			want, ok := busy[l.Tooltip]
			if i > 0 && !ok {
				t.Errorf("%s: lane %q is not a lane of the windows' timelines", id, l.Tooltip)
			}
			drawn := 0.0
			for _, segs := range l.Segments {
				for _, s := range segs {
					drawn += s[1] - s[0]
					if s[0] < -0.01 || s[1] > top+0.01 || s[1] < s[0] {
						t.Errorf("%s: lane %d segment %v outside the axis 0..%v", id, i, s, top)
					}
				}
			}
			// Drawn at a pixel's resolution, a lane covers at least its
			// busy time (less the rounding of its segments' ends).
			if i > 0 && drawn < want-0.002*top-0.2/r.PerUnit*float64(len(l.Segments)) {
				t.Errorf("%s: lane %q draws %v ms busy, less than its %v ms", id, l.Tooltip, drawn, want)
			}
		}
	}
}

// screenshot saves a screenshot of the page at path (file://) in headless
// Chromium; it skips when Chromium is absent.
func screenshot(t *testing.T, path, png string) {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not found: no screenshot")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	profile := t.TempDir()
	abs, err := filepath.Abs(png)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--user-data-dir="+profile,
		"--window-size=1280,4200", "--virtual-time-budget=5000", "--screenshot="+abs, "file://"+path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium --screenshot: %v\n%s", err, out)
	}
	if st, err := os.Stat(abs); err != nil || st.Size() < 10_000 {
		t.Fatalf("no screenshot at %s (%v)", abs, err)
	}
}

// TestNotebookChartsScreenshot runs the training notebook (tracebook run),
// checks that its %evidence, %crossview and %report outputs carry charts
// (image/svg+xml beside the text/html that shows them inline, or the
// Markdown's images), converts it to HTML with nbconvert as a reader's
// tools would, and saves a screenshot of it in headless Chromium to
// test-artifacts/notebook-training-charts.png. It skips without nbconvert
// or Chromium.
func TestNotebookChartsScreenshot(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a notebook")
	}
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-m", "nbconvert", "--version").Run(); err != nil {
		t.Skipf("nbconvert not available (%v): no notebook screenshot", err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "training.ipynb")
	if code, _, stderr := tracebookRun(t, filepath.Join("..", "notebooks", "training.ipynb"), "-o", out, "--cache-dir", "-"); code != 0 {
		t.Fatalf("tracebook run: exit %d: %s", code, stderr)
	}
	svgs, images := 0, 0
	for _, c := range readCells(t, mustRead(t, out)) {
		for _, o := range c.Outputs {
			data := map[string]any{}
			for k, raw := range o.Data {
				var v any
				if err := json.Unmarshal(raw, &v); err == nil {
					data[k] = v
				}
			}
			if svg, ok := data["image/svg+xml"]; ok {
				s := joinText(svg)
				h := joinText(data["text/html"])
				if h != "" && !strings.Contains(h, s) {
					t.Errorf("cell %s: the image/svg+xml chart is not inline in the text/html", c.ID)
				}
				if _, err := chart.Read(s); err != nil {
					t.Errorf("cell %s: %v", c.ID, err)
				}
				svgs++
			}
			images += strings.Count(joinText(data["text/markdown"]), "](data:image/svg+xml;base64,")
		}
	}
	if svgs < 2 || images == 0 {
		t.Errorf("the training notebook's outputs hold %d image/svg+xml charts and %d Markdown chart images", svgs, images)
	}
	cmd := exec.Command(py, "-m", "nbconvert", "--to", "html", "--output-dir", dir, out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nbconvert --to html: %v\n%s", err, msg)
	}
	html := filepath.Join(dir, "training.html")
	page := mustRead(t, html)
	if !bytes.Contains(page, []byte(`data-tb-chart="`)) {
		t.Error("the notebook's HTML (nbconvert) shows no chart")
	}
	abs, err := filepath.Abs(html)
	if err != nil {
		t.Fatal(err)
	}
	artifacts := filepath.Join(testutil.RepoRoot(t), "test-artifacts")
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	screenshot(t, abs, filepath.Join(artifacts, "notebook-training-charts.png"))
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// joinText reads a notebook MIME value: a string or a list of lines.
func joinText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		var b strings.Builder
		for _, s := range x {
			if str, ok := s.(string); ok {
				b.WriteString(str)
			}
		}
		return b.String()
	}
	return ""
}
