package diff

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/analysis/table"
)

// rankBundle builds a bundle of a trace with one row per rank and step in
// the traces, steps and ranks tables: walls[rank][step] in ns, phases
// cycling through phases.
func rankBundle(name string, phases []string, walls ...[]int64) *evidence.Bundle {
	b := evidence.NewBundle()
	b.Traces = &table.Table{Name: "traces", Columns: []table.Column{{Name: "trace"}, {Name: "rank"}, {Name: "gpu_model"}, {Name: "producer"}, {Name: "platform"}}}
	st := &table.Table{Name: "steps", Columns: []table.Column{{Name: "trace"}, {Name: "rank"}, {Name: "step"}, {Name: "phase"}, {Name: "source"}, {Name: "wall_ns"}}}
	rk := &table.Table{Name: "ranks", Columns: []table.Column{{Name: "trace"}, {Name: "rank"}, {Name: "step"}, {Name: "phase"}, {Name: "busy_ns"}, {Name: "idle_ns"}}}
	for r, ws := range walls {
		b.Traces.Rows = append(b.Traces.Rows, []any{name, int64(r), "H100", "profiler_step", "cuda"})
		for i, w := range ws {
			ph := phases[i%len(phases)]
			st.Rows = append(st.Rows, []any{name, int64(r), int64(i), ph, "profiler_step", w})
			rk.Rows = append(rk.Rows, []any{name, int64(r), int64(i), ph, w / 2, w / 2})
		}
	}
	b.Tables["steps"], b.Tables["ranks"] = st, rk
	return b
}

// twoRankInput: rank 1 of the test got 4 ms faster per step, rank 0 did
// not change; the phase names are hostile. Each side has a cross-view of
// every rank and one of rank 1.
func twoRankInput() *Input {
	phases := []string{"<i>pre</i>", "decode"}
	cv := func(trace string, s crossview.Slice, ns int64) *crossview.Result {
		return &crossview.Result{Slice: s, GPU: crossview.Tree{View: "gpu", TotalNs: ns, Roots: []*crossview.Node{{Name: "step<b>", Ns: ns}}},
			CPU: crossview.Tree{View: "cpu"}, Gaps: []string{}}
	}
	return &Input{
		Base: InputSide{Name: "base", Bundle: rankBundle("base", phases, []int64{10e6, 11e6, 10e6, 11e6}, []int64{20e6, 21e6, 20e6, 21e6}),
			CrossViews: []*crossview.Result{cv("base", crossview.Slice{Trace: "base"}, 120e6), cv("base", crossview.Slice{Trace: "base", Rank: 1, HasRank: true}, 80e6)}},
		Test: InputSide{Name: "test", Bundle: rankBundle("test", phases, []int64{10e6, 11e6, 10e6, 11e6}, []int64{16e6, 17e6, 16e6, 17e6}),
			CrossViews: []*crossview.Result{cv("test", crossview.Slice{Trace: "test"}, 100e6), cv("test", crossview.Slice{Trace: "test", Rank: 1, HasRank: true}, 60e6)}},
	}
}

func TestInputRoundTrip(t *testing.T) {
	in := twoRankInput()
	data, err := EncodeInput(in)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeInput(data)
	if err != nil {
		t.Fatal(err)
	}
	again, err := EncodeInput(back)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, again) {
		t.Error("EncodeInput(DecodeInput(data)) differs from data")
	}
	if _, err := DecodeInput([]byte{0x93, 0xa1, 'x', 0x80, 0xa0}); err == nil || !strings.Contains(err.Error(), "not a diff input") {
		t.Errorf("DecodeInput(other array) = %v, want a not-a-diff-input error", err)
	}
}

// The zero view of the collection filter is what Compare gives for the
// collected sides: the notebook's Markdown and the page's agree.
func TestGenerateViewMatchesCompare(t *testing.T) {
	in := twoRankInput()
	d, err := Compare(Side{Name: "base", Bundle: in.Base.Bundle, CrossView: in.Base.CrossViews[0]},
		Side{Name: "test", Bundle: in.Test.Bundle, CrossView: in.Test.CrossViews[0]}, evidence.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var want, got bytes.Buffer
	if err := Write(&want, d, Markdown); err != nil {
		t.Fatal(err)
	}
	if err := GenerateView(&got, in, report.View{}, Markdown); err != nil {
		t.Fatal(err)
	}
	if want.String() != got.String() {
		t.Errorf("GenerateView(zero view) differs from Write(Compare):\nwant %s\ngot  %s", want.String(), got.String())
	}
}

func TestCompareViewFilters(t *testing.T) {
	in := twoRankInput()
	tests := []struct {
		name      string
		f         evidence.Filter
		steps     int     // base samples
		stepDelta float64 // step time change, ns
		trees     bool
	}{
		{"all", evidence.Filter{}, 8, -2e6, true},
		{"rank 0", evidence.Filter{Rank: 0, HasRank: true}, 4, 0, false},
		{"rank 1", evidence.Filter{Rank: 1, HasRank: true}, 4, -4e6, true},
		{"decode", evidence.Filter{Phase: "decode"}, 4, -2e6, false},
		{"rank 1 decode", evidence.Filter{Rank: 1, HasRank: true, Phase: "decode"}, 2, -4e6, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := CompareView(in, report.View{Filter: tc.f})
			if err != nil {
				t.Fatal(err)
			}
			if d.BaseSteps != tc.steps || d.Changes[0].Delta != tc.stepDelta {
				t.Errorf("CompareView(%+v): %d base steps, step time change %.0f; want %d, %.0f", tc.f, d.BaseSteps, d.Changes[0].Delta, tc.steps, tc.stepDelta)
			}
			if got := d.Views[0] != nil; got != tc.trees {
				t.Errorf("CompareView(%+v) compares trees: %v, want %v (gaps %q)", tc.f, got, tc.trees, d.Gaps)
			}
			if !tc.trees && !strings.Contains(strings.Join(d.Gaps, "\n"), "collected for another slice") {
				t.Errorf("CompareView(%+v) without trees does not say why: %q", tc.f, d.Gaps)
			}
		})
	}
	if _, err := CompareView(in, report.View{Filter: evidence.Filter{Rank: 5, HasRank: true}}); err == nil || !strings.Contains(err.Error(), "rank 5 is not among the compared ranks (0–1)") {
		t.Errorf("CompareView(rank 5) err = %v", err)
	}
}

func TestGenerateViewPage(t *testing.T) {
	in := twoRankInput()
	render := func(v report.View) string {
		t.Helper()
		var b bytes.Buffer
		if err := GenerateView(&b, in, v, HTMLFragment); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	page := render(report.View{})
	for _, want := range []string{`<select data-tb="rank"><option value="">all</option><option value="0">0</option><option value="1">1</option></select>`,
		`<option value="&lt;i&gt;pre&lt;/i&gt;">&lt;i&gt;pre&lt;/i&gt;</option>`,
		`<button type="button" data-tb-sort="step" data-tb-col="change">change</button>`, `<details data-tb-node="sides">`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page's fragment lacks %s", want)
		}
	}
	if strings.Contains(page, "<i>") || strings.Contains(page, "step<b>") {
		t.Error("a name from the traces reached the fragment unescaped")
	}
	var plain bytes.Buffer
	d, _ := CompareView(in, report.View{})
	Write(&plain, d, HTMLFragment)
	if strings.Contains(plain.String(), "tb-controls") || strings.Contains(plain.String(), "data-tb-sort") {
		t.Error("the notebook's fragment (Write) carries the page's controls")
	}

	selected := render(report.View{Filter: evidence.Filter{Rank: 1, HasRank: true, Phase: "decode"}, Open: []string{"sides"}})
	for _, want := range []string{`<option value="1" selected>1</option>`, `<option value="decode" selected>decode</option>`, "rank filter: base rank 1 compared with test rank 1"} {
		if !strings.Contains(selected, want) {
			t.Errorf("the rank 1 / decode fragment lacks %s", want)
		}
	}

	// Sorting the step table by change, descending: GPU busy and idle (a
	// smaller drop) come before step time; the header shows ▼.
	sorted := render(report.View{Sort: map[string]string{"step": "-change"}})
	if !strings.Contains(sorted, `data-tb-col="change">change ▼</button>`) {
		t.Error("the sorted column has no ▼")
	}
	if i, j := strings.Index(sorted, "<tr><td>GPU busy"), strings.Index(sorted, "<tr><td>step time<"); i < 0 || j < 0 || i > j {
		t.Errorf("sorted by -change, GPU busy (at %d) does not come before step time (at %d)", i, j)
	}
	if i, j := strings.Index(page, "<tr><td>GPU busy"), strings.Index(page, "<tr><td>step time<"); i < j {
		t.Errorf("unsorted, GPU busy (at %d) comes before step time (at %d)", i, j)
	}

	bad := render(report.View{Filter: evidence.Filter{Rank: 5, HasRank: true}})
	if !strings.Contains(bad, "Nothing to compare for this filter") || !strings.Contains(bad, `<select data-tb="rank">`) {
		t.Errorf("a filter with nothing to compare renders:\n%s", bad)
	}
	if err := GenerateView(&bytes.Buffer{}, in, report.View{Filter: evidence.Filter{Rank: 5, HasRank: true}}, Markdown); err == nil {
		t.Error("GenerateView(Markdown, rank 5) = nil error")
	}
}
