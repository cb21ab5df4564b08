package report

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/chart"
	"github.com/tracebook/tracebook/analysis/crossview"
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
// ranks table: compute, exposed communication, memory copy/set only and idle,
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
				// The idle causes: GPU gaps opened by blocking syncs and
				// host-wait gaps of the same rank and step.
				syncGap, hostWait := map[int64]int64{}, map[int64]int64{}
				if sy := b.Table("sync"); sy != nil {
					for r := range sy.Rows {
						if evidence.Int(sy, r, "rank") == 0 && evidence.Bool(sy, r, "blocking") {
							syncGap[evidence.Int(sy, r, "step")] += evidence.Int(sy, r, "gpu_gap_ns")
						}
					}
				}
				// Host waits on the union of the rank's streams (ranks), or
				// summed over streams (gaps) in a bundle without them.
				if st.Col("host_wait_ns") >= 0 {
					for r := range st.Rows {
						if evidence.Int(st, r, "rank") == 0 {
							hostWait[evidence.Int(st, r, "step")] += evidence.Int(st, r, "host_wait_ns")
						}
					}
				} else if g := b.Table("gaps"); g != nil {
					for r := range g.Rows {
						if evidence.Int(g, r, "rank") == 0 && evidence.Str(g, r, "category") == "host_wait" {
							hostWait[evidence.Int(g, r, "step")] += evidence.Int(g, r, "idle_ns")
						}
					}
				}
				var want [][]float64
				causes := int64(0)
				for _, s := range order {
					a := per[s]
					sy := min(syncGap[s], a.idle)
					hw := min(hostWait[s], a.idle-sy)
					causes += sy + hw
					want = append(want, []float64{float64(a.comp) / 1e6, float64(a.cc-a.comp) / 1e6, float64(a.busy-a.cc) / 1e6,
						float64(sy) / 1e6, float64(hw) / 1e6, float64(a.idle-sy-hw) / 1e6})
				}
				rd := readChart(t, *c)
				checkValues(t, "steps", rd, want)
				if causes == 0 {
					t.Logf("steps: no sync-opened or host-wait idle in %s", name)
				}
				if !strings.Contains(c.Alt, "sync-opened is the GPU idle time") {
					t.Errorf("steps: the text alternative does not say what the idle causes mean: %q", c.Alt)
				}
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

// TestStepChartIdleCauses: the step chart splits each step's idle time
// into sync-opened (blocking calls only), host wait and other, each capped
// at the idle time left, and the parts add up to the idle time.
func TestStepChartIdleCauses(t *testing.T) {
	b := ranksBundle(1, 4)
	col := func(names ...string) []table.Column {
		var cs []table.Column
		for _, n := range names {
			cs = append(cs, table.Column{Name: n})
		}
		return cs
	}
	b.Tables["sync"] = &table.Table{Name: "sync", Columns: col("trace", "rank", "step", "phase", "blocking", "gpu_gap_ns"), Rows: [][]any{
		{"job", int64(0), int64(1), "decode", true, int64(60_000)},
		{"job", int64(0), int64(1), "decode", false, int64(50_000)}, // cudaStreamWaitEvent: not a host sync
		{"job", int64(0), int64(2), "decode", true, int64(9_000_000)},
	}}
	b.Tables["gaps"] = &table.Table{Name: "gaps", Columns: col("trace", "rank", "step", "phase", "stream", "category", "idle_ns"), Rows: [][]any{
		{"job", int64(0), int64(1), "decode", int64(7), "host_wait", int64(40_000)},
		{"job", int64(0), int64(1), "decode", int64(7), "other", int64(40_000)},
		{"job", int64(0), int64(3), "decode", int64(7), "host_wait", int64(9_000_000)},
	}}
	c := stepChart(b, evidence.Filter{})
	r := readChart(t, c)
	rt := b.Table("ranks")
	idle := func(step int) float64 { return float64(evidence.Int(rt, step, "idle_ns")) / 1e6 }
	want := [][3]float64{
		{0, 0, idle(0)},
		{0.06, 0.04, idle(1) - 0.1},
		{idle(2), 0, 0}, // a sync gap longer than the idle time is capped at it
		{0, idle(3), 0}, // so is a host wait summed over streams
	}
	tol := 0.16 / r.PerUnit
	for i, w := range want {
		for j, v := range w {
			if got := r.Bars[i].Values[3+j]; math.Abs(got-v) > tol {
				t.Errorf("step %d: %s draws %.4g ms, want %.4g", i, stepSeries[3+j].Name, got, v)
			}
		}
	}
	for _, s := range []string{"sync-opened", "host wait", "other"} {
		if !strings.Contains(c.SVG, ">idle: "+s+"</text>") {
			t.Errorf("no legend entry for idle: %s", s)
		}
	}

	// Rows merged over steps (a long job's single-file report) no longer
	// place the idle causes in steps: the idle time is drawn unsplit, and
	// the text alternative says why.
	for _, name := range []string{"sync", "gaps"} {
		for _, row := range b.Tables[name].Rows {
			row[2] = int64(-1)
		}
	}
	c = stepChart(b, evidence.Filter{})
	r = readChart(t, c)
	for i := range want {
		if got := r.Bars[i].Values[3]; math.Abs(got-idle(i)) > tol || len(r.Bars[i].Values) > 4 {
			t.Errorf("merged rows, step %d: idle draws %v ms (%d parts), want %v unsplit", i, got, len(r.Bars[i].Values), idle(i))
		}
	}
	if !strings.Contains(c.Alt, "Idle time is not split by cause here") || strings.Contains(c.Title, "by cause") {
		t.Errorf("merged rows: the chart does not say the idle time is unsplit: %q / %q", c.Title, c.Alt)
	}
}

// TestTimelineChart: an issue whose window carries a timeline gets a chart
// whose first lane is the finding's intervals and whose other lanes draw
// the window's spans where they lie (ms from the window's start), the
// worst step shaded; lane names stay text; the HTML puts the chart in the
// issue and the Markdown embeds it after the issue's window line.
func TestTimelineChart(t *testing.T) {
	tl := &Timeline{
		Lanes: []TimelineLane{
			{Name: `python3 <script>alert(1)</script> (thread 7)`, BusyNs: 6_000_000, Spans: []Span{{StartNs: 0, DurNs: 1_000_000, Kind: SpanHostOp}, {StartNs: 1_000_000, DurNs: 5_000_000, Kind: SpanSync}}},
			{Name: "GPU 0 stream 7", GPU: true, BusyNs: 3_500_000, Spans: []Span{{StartNs: 500_000, DurNs: 3_000_000, Kind: SpanCompute}, {StartNs: 9_000_000, DurNs: 500_000, Kind: SpanComm}}},
		},
		Marks:     []Span{{StartNs: 1_000_000, DurNs: 5_000_000, Kind: SpanMark}},
		MarkWhat:  "the host waits in this call",
		HostLanes: 3, GPULanes: 1, Events: 40, InWindow: 40,
	}
	w := &Window{N: 1, File: "finding-1-sync_bound_loop.json", Rule: "sync_bound_loop", Trace: "t", Rank: 0, Step: 4, FirstStep: 3, LastStep: 5,
		StartNs: 10_000_000, EndNs: 22_000_000, FocusStartNs: 12_000_000, FocusEndNs: 18_000_000, Placed: true, Timeline: tl}
	d := &Doc{Title: "T", Summary: []string{"S"}, Critical: []Issue{{ID: "sync_bound_loop", Title: "Host syncs", Window: w}}}
	addTimelines(d, nil)
	c := d.Critical[0].Timeline
	if c == nil {
		t.Fatal("no timeline chart")
	}
	r, err := chart.Read(c.SVG)
	if err != nil {
		t.Fatal(err)
	}
	if r.Title != c.Title || !strings.Contains(c.Title, "Timeline of issue 1") || !strings.Contains(c.Title, "the busiest 1 host thread(s) and 1 GPU stream(s) of 3 and 1") {
		t.Errorf("title %q", c.Title)
	}
	if len(r.Lanes) != 3 || r.Lanes[0].Label != "finding" {
		t.Fatalf("%d lanes (first %q), want the finding's and two", len(r.Lanes), r.Lanes[0].Label)
	}
	tol := 0.11 / r.PerUnit
	check := func(lane int, want []Span) {
		t.Helper()
		for _, s := range want {
			segs := r.Lanes[lane].Segments[int(s.Kind)]
			found := false
			for _, g := range segs {
				if math.Abs(g[0]-float64(s.StartNs)/1e6) <= tol && math.Abs(g[1]-float64(s.StartNs+s.DurNs)/1e6) <= tol {
					found = true
				}
			}
			if !found {
				t.Errorf("lane %d: span %+v is not drawn (kind %d draws %v)", lane, s, s.Kind, segs)
			}
		}
	}
	check(0, tl.Marks)
	check(1, tl.Lanes[0].Spans)
	check(2, tl.Lanes[1].Spans)
	if len(r.Bands) != 1 || math.Abs(r.Bands[0][0]-2) > 1e-9 || math.Abs(r.Bands[0][1]-8) > 1e-9 {
		t.Errorf("bands %v, want the worst step 2 .. 8 ms from the window's start", r.Bands)
	}
	if strings.Contains(c.SVG, "<script") || !strings.Contains(r.Lanes[1].Tooltip, "<script>alert(1)</script>") {
		t.Error("a lane name became markup, or did not come back as text")
	}
	for _, tx := range r.Texts {
		if tx.Left < -0.05 || tx.Right > r.Width+0.05 || tx.Top < -0.05 || tx.Bottom > r.Height+0.05 {
			t.Errorf("text %q outside the viewBox", tx.Text)
		}
	}

	var h, m bytes.Buffer
	if err := Print(&h, d, HTMLFragment); err != nil {
		t.Fatal(err)
	}
	issue := h.String()[strings.Index(h.String(), `data-tb-issue="sync_bound_loop"`):]
	issue = issue[:strings.Index(issue, "</div>")]
	if !strings.Contains(issue, `<figure class="tb-chart" data-tb-chart="timeline-1">`+"\n"+c.SVG) {
		t.Error("HTML: the timeline is not in its issue")
	}
	if err := Print(&m, d, Markdown); err != nil {
		t.Fatal(err)
	}
	md := m.String()
	i, j := strings.Index(md, "finding-1-sync_bound_loop.json"), strings.Index(md, "![Timeline of issue 1")
	if i < 0 || j < i || !strings.Contains(md, SVGDataURI(c.SVG)) {
		t.Errorf("Markdown: the timeline image does not follow the issue's window line (%d, %d)", i, j)
	}

	// Idle left out of the finding's figure is named when it is at least
	// 1% of what the first lane draws (5 ms here), not below.
	for _, c := range []struct {
		ex   int64
		want bool
	}{{0, false}, {49_000, false}, {50_000, true}, {9_052_000, true}} {
		got := strings.Contains(timelineChart(1, &d.Critical[0], c.ex).Alt, "the finding's figure leaves out the GPU idle inside start-up and held intervals, "+fmtMs(c.ex)+" on this rank")
		if got != c.want {
			t.Errorf("%d ns of idle left out: named %v, want %v", c.ex, got, c.want)
		}
	}

	// Without a timeline, no chart.
	w.Timeline = nil
	addTimelines(d, nil)
	if d.Critical[0].Timeline != nil {
		t.Error("a timeline chart without a timeline")
	}
}

// TestHostileTimelines: the hostile trace's report (names with markup in
// its threads, kernels and annotations) draws its findings' timelines, and
// no trace string in any chart of the HTML report becomes markup.
func TestHostileTimelines(t *testing.T) {
	src := goldenSource(t, "hostile_names")
	var h bytes.Buffer
	if err := GenerateView(&h, src, View{Filter: src.Bundle.Filter}, HTMLFragment); err != nil {
		t.Fatal(err)
	}
	svgs := regexp.MustCompile(`(?s)<svg .*?</svg>`).FindAllString(h.String(), -1)
	timelines := 0
	for _, svg := range svgs {
		if strings.Contains(svg, `id="tb-chart-timeline-`) {
			timelines++
		}
		if strings.Contains(svg, "<script") || strings.Contains(svg, "<img") || strings.Contains(svg, "<iframe") {
			t.Errorf("a trace name became markup in a chart:\n%.400s", svg)
		}
		if _, err := chart.Read(svg); err != nil {
			t.Error(err)
		}
	}
	if timelines == 0 {
		t.Error("no timeline in the hostile trace's report")
	}
}

// TestTimelineSizeBound: the largest timeline a window can carry (every
// lane kept, each with MaxSpans spans) draws an SVG of bounded size, with
// coordinates of at most one decimal, so that five findings' timelines
// keep the 8-rank, 1,000-step report under its 3 MB (wasm/size_test.go).
func TestTimelineSizeBound(t *testing.T) {
	const ns = 30_000_000
	spans := func(kinds ...SpanKind) []Span {
		out := make([]Span, MaxSpans)
		step := int64(ns / MaxSpans)
		for i := range out {
			out[i] = Span{StartNs: int64(i)*step + int64(i%7)*1_013, DurNs: step/2 + int64(i%5)*997, Kind: kinds[i%len(kinds)]}
		}
		return out
	}
	tl := &Timeline{Marks: spans(SpanMark), MarkWhat: "x", HostLanes: MaxHostLanes, GPULanes: MaxGPULanes}
	for i := 0; i < MaxHostLanes+MaxGPULanes; i++ {
		tl.Lanes = append(tl.Lanes, TimelineLane{Name: "lane " + strconv.Itoa(i), GPU: i >= MaxHostLanes, BusyNs: ns / 2,
			Spans: spans(SpanHostOp, SpanLaunch, SpanSync, SpanCompute, SpanComm, SpanMem)})
	}
	w := &Window{N: 1, Rule: "r", Trace: "t", Step: 5, FirstStep: 4, LastStep: 6, StartNs: 0, EndNs: ns, FocusStartNs: ns / 3, FocusEndNs: 2 * ns / 3, Placed: true, Timeline: tl}
	c := timelineChart(1, &Issue{Title: "x", Window: w}, 0)
	if c == nil {
		t.Fatal("no chart")
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(c.SVG))
	zw.Close()
	t.Logf("largest timeline: %d bytes of SVG, %d gzip", len(c.SVG), gz.Len())
	if len(c.SVG) > 45_000 {
		t.Errorf("the largest timeline's SVG is %d bytes, want at most 45,000", len(c.SVG))
	}
	for _, a := range regexp.MustCompile(` (?:d|x|y|width|height|x1|x2|y1|y2)="([^"]*)"`).FindAllStringSubmatch(c.SVG, -1) {
		if m := regexp.MustCompile(`\d\.\d\d`).FindString(a[1]); m != "" {
			t.Errorf("a coordinate with more than one decimal: %q", a[0])
			break
		}
	}
}

// TestCrossViewChart: the cross-view chart's GPU bar is the wall time split
// into busy time and idle time by gap cause, the host bar the launching
// threads' time by class and the rest of the wall; a hostile trace name
// stays text; a slice without wall time has no chart.
func TestCrossViewChart(t *testing.T) {
	m := crossview.Metrics{Ranks: 2, WallNs: 100e6, BusyNs: 60e6, IdleNs: 40e6, GapSyncNs: 10e6, GapWaitNs: 5e6, GapHostNs: 15e6, GapDeviceNs: 4e6, GapOtherNs: 6e6,
		HostWorkNs: 50e6, HostSyncNs: 20e6, HostWaitNs: 10e6}
	r := &crossview.Result{Slice: crossview.Slice{Trace: `<script>alert(1)</script>`}, Check: crossview.Check{Metrics: m, Verdict: "host/launch-bound"}}
	c := CrossViewChart(r)
	rd := readChart(t, c)
	checkValues(t, "crossview", rd, [][]float64{{60, 10, 5, 15, 4, 6}, {50, 20, 10, 0, 0, 20}})
	if strings.Contains(c.SVG, "<script") || !strings.Contains(rd.Title, "<script>alert(1)</script>") {
		t.Error("the trace name is not kept as text")
	}
	if c := CrossViewChart(&crossview.Result{}); c.SVG != "" {
		t.Error("a chart for a slice without wall time")
	}
	if c := CrossViewChart(nil); c.SVG != "" {
		t.Error("a chart for no cross-view")
	}
}

// TestAreaCharts: %evidence's areas get the charts that picture them (ranks,
// kernels, steps/phases), other areas none.
func TestAreaCharts(t *testing.T) {
	src := goldenSource(t, "resnet50_steps")
	b := src.Bundle
	ev := evidence.Rollup(b, b.Filter)
	for area, want := range map[string]string{"ranks": "ranks", "kernels": "kernel-classes kernels", "phases": "steps", "steps": "steps", "sync": "", "gaps": ""} {
		var ids []string
		for _, c := range AreaCharts(area, ev, b, b.Filter) {
			ids = append(ids, c.ID)
			readChart(t, c)
		}
		if got := strings.Join(ids, " "); got != want {
			t.Errorf("AreaCharts(%s) = %q, want %q", area, got, want)
		}
	}
}

// A step without GPU work (a profiler's stub step) is left out of the step
// chart's median, and one step alone is not both the slowest and the
// fastest.
func TestStepChartEmptyStep(t *testing.T) {
	b := ranksBundle(1, 2)
	rt := b.Tables["ranks"]
	stub := rt.Rows[1] // step 1: no GPU work
	for _, c := range []string{"busy_ns", "idle_ns", "compute_ns", "comm_ns", "mem_ns", "comm_comp_ns"} {
		stub[rt.Col(c)] = int64(0)
	}
	c := stepChart(b, evidence.Filter{})
	if !strings.Contains(c.Alt, "2 steps on rank 0 (1 without GPU work, left out of the median)") {
		t.Errorf("the alt text does not say the empty step is left out:\n%s", c.Alt)
	}
	if !strings.Contains(c.Alt, "One step ran GPU work: step") || strings.Contains(c.Alt, "Fastest:") {
		t.Errorf("one working step is named as both slowest and fastest:\n%s", c.Alt)
	}
	// No step ran GPU work (a CPU-only capture with steps): no chart of
	// zeros, and no "One step ran GPU work".
	stub = rt.Rows[0]
	for _, c := range []string{"busy_ns", "idle_ns", "compute_ns", "comm_ns", "mem_ns", "comm_comp_ns"} {
		stub[rt.Col(c)] = int64(0)
	}
	if c := stepChart(b, evidence.Filter{}); c.SVG != "" || c.Alt != "" {
		t.Errorf("a step chart without GPU work:\n%s", c.Alt)
	}
}

// A slice without GPU work on any rank (a CPU-only capture) draws no rank
// chart of zeros: the missing GPU evidence is a gap.
func TestRankChartNoGPU(t *testing.T) {
	b := ranksBundle(2, 2)
	rt := b.Tables["ranks"]
	for _, r := range rt.Rows {
		for _, c := range []string{"busy_ns", "idle_ns", "compute_ns", "comm_ns", "mem_ns", "comm_comp_ns", "kernel_ns"} {
			r[rt.Col(c)] = int64(0)
		}
	}
	if c := rankChart(evidence.Rollup(b, evidence.Filter{}), b, evidence.Filter{}); c.SVG != "" {
		t.Errorf("a rank chart of zeros: %s", c.Alt)
	}
	if c := rankChart(evidence.Rollup(ranksBundle(2, 2), evidence.Filter{}), ranksBundle(2, 2), evidence.Filter{}); c.SVG == "" {
		t.Error("no rank chart for ranks with GPU work")
	}
}

// The capture's first step has no GPU work before it, so its GPU span
// holds none of the host time before its first GPU operation: it is not
// named the fastest step (resnet50_num_workers_0: step 5, 119 ms against
// a median of 175 ms, with the median's wall time).
func TestStepChartFirstStepClipped(t *testing.T) {
	b := ranksBundle(1, 4)
	rt := b.Tables["ranks"]
	first := rt.Rows[0]
	first[rt.Col("idle_ns")] = int64(1_000) // its host time before the first GPU operation is outside its span
	c := stepChart(b, evidence.Filter{})
	if strings.Contains(c.Alt, "Fastest: step 0,") || !strings.Contains(c.Alt, "The capture's first step, step 0, is shorter on the GPU") {
		t.Errorf("the clipped first step reads fastest:\n%s", c.Alt)
	}
	// Two steps: the first is still compared.
	b = ranksBundle(1, 2)
	rt = b.Tables["ranks"]
	rt.Rows[0][rt.Col("idle_ns")] = int64(1_000)
	if c := stepChart(b, evidence.Filter{}); !strings.Contains(c.Alt, "Fastest: step 0,") {
		t.Errorf("two steps, the first left out:\n%s", c.Alt)
	}
}

// A sampled trace's gaps are events dropped: the charts that split GPU
// time into busy and idle say so first (sampled_2of128), the others not.
func TestChartsSampledNote(t *testing.T) {
	b := ranksBundle(2, 3)
	b.Tables["overview"] = &table.Table{Name: "overview", Columns: []table.Column{{Name: "trace"}, {Name: "rank"}, {Name: "op_ids"}, {Name: "op_id_span"}},
		Rows: [][]any{{"job", int64(0), int64(2329), int64(170_155)}, {"job", int64(1), int64(2329), int64(170_155)}}}
	ev := evidence.Rollup(b, evidence.Filter{})
	var n int
	for _, c := range Charts(ev, b, evidence.Filter{}) {
		has := strings.HasPrefix(c.Alt, sampledNote)
		if has != (c.ID == "ranks" || c.ID == "steps") {
			t.Errorf("chart %s: sampled note %v", c.ID, has)
		}
		if has {
			n++
		}
	}
	if n == 0 {
		t.Error("no chart carries the sampled note")
	}
	// Every operator id in the trace: no note.
	b.Tables["overview"].Rows = [][]any{{"job", int64(0), int64(2329), int64(2400)}, {"job", int64(1), int64(2329), int64(2400)}}
	for _, c := range Charts(evidence.Rollup(b, evidence.Filter{}), b, evidence.Filter{}) {
		if strings.Contains(c.Alt, sampledNote) {
			t.Errorf("chart %s of a complete trace carries the sampled note", c.ID)
		}
	}
}

// The rank chart draws the whole span; the idle that Capture quality
// leaves out is said under it (sglang_qwen3_prefilldecode_mi300x: 493 of
// 494 ms held by unrecorded work), and nothing is said without any.
func TestRankChartExcludedIdle(t *testing.T) {
	b := ranksBundle(1, 3)
	b.Tables["capture"] = &table.Table{Name: "capture", Columns: []table.Column{{Name: "trace"}, {Name: "rank"}, {Name: "kind"}, {Name: "idle_ns"}},
		Rows: [][]any{{"job", int64(0), "excluded", int64(250_000)}}}
	ev := evidence.Rollup(b, evidence.Filter{})
	c := rankChart(ev, b, evidence.Filter{})
	for _, got := range Charts(ev, b, evidence.Filter{}) {
		if got.ID == "ranks" {
			c = got
		}
	}
	if !strings.Contains(c.Alt, "Of the idle (rank 0), 0.250 ms lies in what Capture quality leaves out") {
		t.Errorf("rank chart alt:\n%s", c.Alt)
	}
	b.Tables["capture"].Rows = nil
	for _, got := range Charts(evidence.Rollup(b, evidence.Filter{}), b, evidence.Filter{}) {
		if strings.Contains(got.Alt, "Capture quality leaves out") {
			t.Errorf("chart %s names excluded idle where there is none:\n%s", got.ID, got.Alt)
		}
	}
}

// TestKernelLabels: kernels on a chart's axis by their readable names,
// except where two would read alike.
func TestKernelLabels(t *testing.T) {
	mul := "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >(int)"
	mul2 := strings.ReplaceAll(strings.ReplaceAll(mul, "AUnaryFunctor", "BinaryFunctor"), "2ul", "3ul")
	soft := "void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::BFloat16, float, c10::BFloat16, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)"
	got := KernelLabels([]string{soft, mul, mul2}, 80)
	if got[0] != "cunn_SoftMaxForward" {
		t.Errorf("softmax label %q", got[0])
	}
	if got[1] == got[2] || !strings.Contains(got[1], "AUnaryFunctor") || !strings.Contains(got[2], "BinaryFunctor") {
		t.Errorf("two MulFunctor kernels read %q and %q", got[1], got[2])
	}
}

// TestChartsNote: where the capture gate voids every timing, a note sits
// right under the Charts heading in both formats, as text; without one,
// the section opens with its first chart.
func TestChartsNote(t *testing.T) {
	cs := ChartsFor(goldenSource(t, "hostile_names"), View{})
	note := "Read these charts with care: <b>sampled</b>. No time in them is the workload's; see Capture quality."
	for _, c := range []struct {
		f      Format
		head   string
		want   string
		markup string
	}{
		{HTMLFragment, `<h2 id="tb-charts">Charts</h2>` + "\n", `<p class="tb-scope">Read these charts with care: &lt;b&gt;sampled&lt;/b&gt;.`, "<b>sampled"},
		{Markdown, "## Charts\n\n", "_Read these charts with care: \\<b\\>sampled\\</b\\>.", "<b>sampled"},
	} {
		var w bytes.Buffer
		if err := Print(&w, &Doc{Title: "T", Summary: []string{"S"}, Charts: cs, ChartsNote: note}, c.f); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(w.String(), c.head+c.want) || strings.Contains(w.String(), c.markup) {
			t.Errorf("format %v: no escaped note under the Charts heading:\n%.600s", c.f, w.String()[strings.Index(w.String(), c.head):])
		}
		w.Reset()
		Print(&w, &Doc{Title: "T", Summary: []string{"S"}, Charts: cs}, c.f)
		if strings.Contains(w.String(), "Read these charts") {
			t.Errorf("format %v: a note without ChartsNote", c.f)
		}
	}
}
