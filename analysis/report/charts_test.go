package report

import (
	"bytes"
	"encoding/base64"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/chart"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/table"
)

// goldenSource decodes testdata/golden/<name>.source.msgpack.
func goldenSource(t *testing.T, name string) *Source {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "golden", name+".source.msgpack"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := DecodeSource(data)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// readChart parses a chart's SVG and checks what every chart must be: a
// title and a text alternative, at least one bar, every text inside the
// viewBox.
func readChart(t *testing.T, c Chart) *chart.Reading {
	t.Helper()
	r, err := chart.Read(c.SVG)
	if err != nil {
		t.Fatalf("chart %s: %v", c.ID, err)
	}
	if r.Title != c.Title || c.Title == "" || r.Desc != strings.ReplaceAll(c.Alt, "\n", " ") || c.Alt == "" {
		t.Errorf("chart %s: SVG title %q / desc %q, want the chart's title %q and alt %q", c.ID, r.Title, r.Desc, c.Title, c.Alt)
	}
	if len(r.Bars) == 0 {
		t.Errorf("chart %s: no bar", c.ID)
	}
	for _, tx := range r.Texts {
		if tx.Left < -0.05 || tx.Right > r.Width+0.05 || tx.Top < -0.05 || tx.Bottom > r.Height+0.05 {
			t.Errorf("chart %s: text %q (%.1f..%.1f, %.1f..%.1f) outside the viewBox %vx%v", c.ID, tx.Text, tx.Left, tx.Right, tx.Top, tx.Bottom, r.Width, r.Height)
		}
	}
	return r
}

// checkValues compares the values read from a chart's bars with the
// evidence's, bar by bar and series by series, within the drawing's
// rounding (0.1 px, twice).
func checkValues(t *testing.T, id string, r *chart.Reading, want [][]float64) {
	t.Helper()
	if len(r.Bars) != len(want) {
		t.Fatalf("chart %s: %d bars, want %d", id, len(r.Bars), len(want))
	}
	tol := 0.16 / r.PerUnit
	for i, w := range want {
		for j, v := range w {
			got := r.Bars[i].Values[j]
			if math.Abs(got-v) > tol {
				t.Errorf("chart %s: bar %d (%s) series %d draws %.6g, the evidence says %.6g", id, i, r.Bars[i].Tooltip, j, got, v)
			}
		}
	}
}

func chartByID(cs []Chart, id string) *Chart {
	for i := range cs {
		if cs[i].ID == id {
			return &cs[i]
		}
	}
	return nil
}

// rankWant is what the rank chart should draw for each row of a rolled-up
// ranks table: compute, exposed communication, memory/sync only and idle,
// in ms, read from the evidence columns here rather than through gpuSplit.
func rankWant(t *testing.T, rt *table.Table) [][]float64 {
	var want [][]float64
	for r := range rt.Rows {
		busy, idle := evidence.Int(rt, r, "busy_ns"), evidence.Int(rt, r, "idle_ns")
		comp, comm, cc := evidence.Int(rt, r, "compute_ns"), evidence.Int(rt, r, "comm_ns"), evidence.Int(rt, r, "comm_comp_ns")
		overlap := comm + comp - cc // as the comm_exposed rule computes it
		w := []float64{float64(comp) / 1e6, float64(comm-overlap) / 1e6, float64(busy-cc) / 1e6, float64(idle) / 1e6}
		if sum := w[0] + w[1] + w[2] + w[3]; math.Abs(sum-float64(busy+idle)/1e6) > 1e-9 {
			t.Errorf("rank row %d: the parts add up to %v ms, the span is %v ms", r, sum, float64(busy+idle)/1e6)
		}
		want = append(want, w)
	}
	return want
}

// TestChartsMatchEvidence: on the golden sources (vLLM decode with CUDA
// graphs, dlrm rank 3 of 8, resnet50 with steps, alexnet, hostile names),
// every chart's bars have the sizes of the evidence numbers they draw.
func TestChartsMatchEvidence(t *testing.T) {
	for _, name := range []string{"vllm_decode_graphs", "dlrm_8rank_rank3", "resnet50_steps", "alexnet_sync", "hostile_names"} {
		t.Run(name, func(t *testing.T) {
			src := goldenSource(t, name)
			b := src.Bundle
			f := b.Filter
			cs := ChartsFor(src, View{Filter: f})
			ev := evidence.Rollup(b, f)
			ids := []string{}
			for _, c := range cs {
				ids = append(ids, c.ID)
				readChart(t, c)
			}
			wantIDs := "ranks kernel-classes kernels"
			if name == "resnet50_steps" || name == "hostile_names" {
				wantIDs += " steps"
			}
			if got := strings.Join(ids, " "); got != wantIDs {
				t.Errorf("charts %q, want %q", got, wantIDs)
			}

			// Ranks: every rank of the filter without its rank.
			rf := f
			rf.HasRank = false
			rt := evidence.RollupTable("ranks", b.Table("ranks"), rf, nil)
			c := chartByID(cs, "ranks")
			checkValues(t, "ranks", readChart(t, *c), rankWant(t, rt))

			// Kernel classes: total_ns summed per class.
			kt := ev.Table("kernels")
			sums := map[string]float64{}
			for r := range kt.Rows {
				sums[evidence.Str(kt, r, "class")] += float64(evidence.Int(kt, r, "total_ns")) / 1e6
			}
			c = chartByID(cs, "kernel-classes")
			rd := readChart(t, *c)
			var want [][]float64
			for i, bar := range rd.Bars {
				cl := strings.SplitN(bar.Tooltip, " ", 2)[0]
				w := make([]float64, len(rd.Bars))
				w[i] = sums[cl]
				want = append(want, w)
				delete(sums, cl)
			}
			checkValues(t, "kernel-classes", rd, want)
			for cl, v := range sums {
				if v > 0 {
					t.Errorf("kernel class %s (%v ms) is not drawn", cl, v)
				}
			}

			// Top kernels: total_ns summed per name, the largest first, the
			// full name in the tooltip.
			byName := map[string]float64{}
			for r := range kt.Rows {
				byName[evidence.Str(kt, r, "name")] += float64(evidence.Int(kt, r, "total_ns")) / 1e6
			}
			names := make([]string, 0, len(byName))
			for n := range byName {
				names = append(names, n)
			}
			sort.Slice(names, func(i, j int) bool {
				if byName[names[i]] != byName[names[j]] {
					return byName[names[i]] > byName[names[j]]
				}
				return names[i] < names[j]
			})
			if len(names) > topKernels {
				names = names[:topKernels]
			}
			c = chartByID(cs, "kernels")
			rd = readChart(t, *c)
			if len(rd.Bars) != len(names) {
				t.Fatalf("kernels: %d bars, want %d", len(rd.Bars), len(names))
			}
			for i, n := range names {
				if !strings.HasPrefix(rd.Bars[i].Tooltip, oneLine(n)+" [") {
					t.Errorf("kernels: bar %d tooltip %q does not start with the full name %q", i, rd.Bars[i].Tooltip, n)
				}
				total := 0.0
				for _, v := range rd.Bars[i].Values {
					total += v
				}
				if math.Abs(total-byName[n]) > 0.16/rd.PerUnit {
					t.Errorf("kernels: bar %d (%s) draws %v ms, the evidence says %v", i, n, total, byName[n])
				}
			}

			// Steps: the first rank's per-step rows of the bundle.
			if c = chartByID(cs, "steps"); c != nil {
				st := b.Table("ranks")
				type acc struct{ busy, idle, comp, cc int64 }
				per := map[int64]*acc{}
				var order []int64
				for r := range st.Rows {
					if evidence.Int(st, r, "rank") != 0 || evidence.Int(st, r, "step") < 0 {
						continue
					}
					s := evidence.Int(st, r, "step")
					if per[s] == nil {
						per[s] = &acc{}
						order = append(order, s)
					}
					a := per[s]
					a.busy += evidence.Int(st, r, "busy_ns")
					a.idle += evidence.Int(st, r, "idle_ns")
					a.comp += evidence.Int(st, r, "compute_ns")
					a.cc += evidence.Int(st, r, "comm_comp_ns")
				}
				sort.Slice(order, func(i, j int) bool { return order[i] < order[j] })
				var want [][]float64
				for _, s := range order {
					a := per[s]
					want = append(want, []float64{float64(a.comp) / 1e6, float64(a.cc-a.comp) / 1e6, float64(a.busy-a.cc) / 1e6, float64(a.idle) / 1e6})
				}
				checkValues(t, "steps", readChart(t, *c), want)
			}
		})
	}
}

// ranksBundle returns a bundle whose ranks area has ranks x steps rows,
// prefill every fourth step, decode otherwise, with communication partly
// hidden by compute, and rank 5 a straggler (30% more compute).
func ranksBundle(ranks, steps int) *evidence.Bundle {
	b := evidence.NewBundle()
	var cols []table.Column
	for _, c := range []string{"trace", "rank", "step", "phase", "events", "first_ns", "last_ns", "busy_ns", "idle_ns", "compute_ns", "comm_ns", "mem_ns", "comm_comp_ns", "kernel_ns", "step_ns"} {
		cols = append(cols, table.Column{Name: c})
	}
	t := &table.Table{Name: "ranks", Columns: cols}
	for r := range ranks {
		for s := range steps {
			phase := "decode"
			if s%4 == 0 {
				phase = "prefill"
			}
			comp := int64(1_000_000 + 37_000*((r*7+s*13)%11))
			if r == 5 {
				comp = comp * 13 / 10
			}
			comm := int64(400_000 + 10_000*(s%5))
			cc := comp + comm - comm/3 // a third of communication under compute
			mem := int64(20_000 + 1_000*(r%3))
			busy := cc + mem
			idle := int64(150_000 + 5_000*((r+s)%7))
			t.Rows = append(t.Rows, []any{"job", int64(r), int64(s), phase, int64(100), int64(s) * 3_000_000, int64(s)*3_000_000 + busy + idle,
				busy, idle, comp, comm, mem, cc, busy + comm/3, busy + idle})
		}
	}
	b.Tables["ranks"] = t
	return b
}

// TestRankChartMedian: on 8 ranks the rank chart marks the median rank's
// compute time; under a rank filter it still draws every rank, the
// selected one in bold.
func TestRankChartMedian(t *testing.T) {
	b := ranksBundle(8, 20)
	for _, f := range []evidence.Filter{{}, {Rank: 3, HasRank: true, Phase: "decode"}} {
		ev := evidence.Rollup(b, f)
		c := rankChart(ev, b, f)
		r := readChart(t, c)
		rf := f
		rf.HasRank = false
		rt := evidence.RollupTable("ranks", b.Table("ranks"), rf, nil)
		checkValues(t, "ranks", r, rankWant(t, rt))
		var comp []float64
		for i := range rt.Rows {
			comp = append(comp, float64(evidence.Int(rt, i, "compute_ns"))/1e6)
		}
		sort.Float64s(comp)
		med := (comp[3] + comp[4]) / 2
		if len(r.Marks) != 1 || math.Abs(r.Marks[0]-med) > 0.0051*med {
			t.Errorf("filter %+v: marks %v, want the median compute %v", f, r.Marks, med)
		}
		bold := regexp.MustCompile(`font-weight="bold">rank (\d+)<`).FindAllStringSubmatch(c.SVG, -1)
		if f.HasRank && (len(bold) != 1 || bold[0][1] != "3") {
			t.Errorf("filter %+v: bold rank labels %v, want rank 3", f, bold)
		}
		if !f.HasRank && len(bold) != 0 {
			t.Errorf("no rank filter: bold rank labels %v", bold)
		}
	}
}

// TestRankChartCapped: past maxRankBars ranks the chart keeps the ranks
// with the most compute (the straggler first among them) and the selected
// rank, and says so.
func TestRankChartCapped(t *testing.T) {
	b := ranksBundle(40, 3)
	f := evidence.Filter{Rank: 0, HasRank: true}
	c := rankChart(evidence.Rollup(b, f), b, f)
	r := readChart(t, c)
	if len(r.Bars) != maxRankBars {
		t.Fatalf("%d rank bars, want %d", len(r.Bars), maxRankBars)
	}
	var tips []string
	for _, bar := range r.Bars {
		tips = append(tips, strings.SplitN(bar.Tooltip, ":", 2)[0])
	}
	all := strings.Join(tips, "|")
	if !strings.Contains(all, "rank 0 (selected)") || !strings.Contains(all, "|rank 5|") {
		t.Errorf("bars %v lack the selected rank 0 or the straggler rank 5", tips)
	}
	if !strings.Contains(c.Title, "the 32 of 40 ranks with the most compute and the selected one") {
		t.Errorf("title %q does not say which ranks it shows", c.Title)
	}
}

// TestStepChartSamples: past MaxStepBars steps the step chart draws that
// many, evenly sampled with the first and last kept, and says so.
func TestStepChartSamples(t *testing.T) {
	b := ranksBundle(2, 1000)
	c := stepChart(b, evidence.Filter{Rank: 1, HasRank: true})
	r := readChart(t, c)
	if len(r.Bars) != MaxStepBars {
		t.Fatalf("%d step bars, want %d", len(r.Bars), MaxStepBars)
	}
	if !strings.Contains(c.Title, "100 of 1000 steps, evenly sampled") || !strings.Contains(c.Title, "rank 1") {
		t.Errorf("title %q does not say the rank and the sampling", c.Title)
	}
	if !strings.HasPrefix(r.Bars[0].Tooltip, "step 0:") || !strings.HasPrefix(r.Bars[len(r.Bars)-1].Tooltip, "step 999:") {
		t.Errorf("first and last bars are %q and %q, want steps 0 and 999", r.Bars[0].Tooltip, r.Bars[len(r.Bars)-1].Tooltip)
	}
	if c := stepChart(b, evidence.Filter{Step: 3, HasStep: true}); c.SVG != "" {
		t.Error("a one-step filter drew a step chart")
	}
}

// TestChartsPrinted: the HTML report inlines each chart's SVG in a Charts
// section after the Executive Summary; the Markdown report embeds it as a
// data: URI image with its text alternative as a list, and no raw HTML.
// Markup in trace names stays text in both.
func TestChartsPrinted(t *testing.T) {
	src := goldenSource(t, "hostile_names")
	cs := ChartsFor(src, View{})
	if len(cs) == 0 {
		t.Fatal("no chart for the hostile trace")
	}
	d := &Doc{Title: "T", Summary: []string{"S"}, Charts: cs}

	var h bytes.Buffer
	if err := Print(&h, d, HTMLFragment); err != nil {
		t.Fatal(err)
	}
	html := h.String()
	if i, j := strings.Index(html, `id="tb-summary"`), strings.Index(html, `id="tb-charts"`); i < 0 || j < i {
		t.Error("HTML: no Charts section after the Executive Summary")
	}
	for _, c := range cs {
		if !strings.Contains(html, c.SVG) {
			t.Errorf("HTML: chart %s is not inlined", c.ID)
		}
	}
	if strings.Contains(html, "<script") || strings.Contains(html, "<img") {
		t.Error("HTML: a trace name's markup became markup")
	}
	if !strings.Contains(html, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("HTML: the hostile kernel name is not in the charts as escaped text")
	}

	var m bytes.Buffer
	if err := Print(&m, d, Markdown); err != nil {
		t.Fatal(err)
	}
	md := m.String()
	img := regexp.MustCompile(`(?m)^!\[((?:[^\\\]\n]|\\.)*)\]\(data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)\)$`)
	found := img.FindAllStringSubmatch(md, -1)
	if len(found) != len(cs) {
		t.Fatalf("Markdown: %d chart images, want %d", len(found), len(cs))
	}
	for i, f := range found {
		svg, err := base64.StdEncoding.DecodeString(f[2])
		if err != nil || string(svg) != cs[i].SVG {
			t.Errorf("Markdown: image %d is not chart %s's SVG", i, cs[i].ID)
		}
		if f[1] != mdText(cs[i].Title) {
			t.Errorf("Markdown: image %d alt %q, want the title", i, f[1])
		}
		for _, l := range strings.Split(cs[i].Alt, "\n") {
			if !strings.Contains(md, "- "+mdText(l)+"\n") {
				t.Errorf("Markdown: chart %s's alt line %q is not listed", cs[i].ID, l)
			}
		}
	}
	if m := regexp.MustCompile(`(?m)(^|[^\\])<[a-zA-Z/!]`).FindString(md); m != "" {
		t.Errorf("Markdown: raw HTML at %q", m)
	}

	// No chart, no section.
	d.Charts = nil
	h.Reset()
	m.Reset()
	Print(&h, d, HTMLFragment)
	Print(&m, d, Markdown)
	if strings.Contains(h.String(), "tb-charts") || strings.Contains(m.String(), "## Charts") {
		t.Error("a Charts section without a chart")
	}
}
