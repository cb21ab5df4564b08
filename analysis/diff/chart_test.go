package diff

import (
	"bytes"
	"encoding/base64"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/chart"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/internal/testutil"
)

// goldenInputs decodes the encoded inputs of the diff goldens (real
// traces, written by package cli's TestDiffGolden -update).
func goldenInputs(t *testing.T) map[string]*Input {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.input.msgpack.gz"))
	if len(files) == 0 {
		t.Fatal("no encoded diff inputs in testdata/golden (run package cli's TestDiffGolden with -update)")
	}
	out := map[string]*Input{}
	for _, f := range files {
		in, err := DecodeInput(testutil.ReadGzip(t, f))
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".input.msgpack.gz")] = in
	}
	return out
}

// TestDiffChartMatchesChanges: on the diff goldens, the chart draws two
// bars per time quantity whose lengths are the base's and the test's
// means, the significant changes in bold and starred, every text inside
// the viewBox; the HTML page inlines it and the Markdown embeds it.
func TestDiffChartMatchesChanges(t *testing.T) {
	for name, in := range goldenInputs(t) {
		t.Run(name, func(t *testing.T) {
			d, err := CompareView(in, report.View{})
			if err != nil {
				t.Fatal(err)
			}
			svg, title, alt := d.Chart()
			if svg == "" || title == "" || alt == "" {
				t.Fatal("no diff chart")
			}
			r, err := chart.Read(svg)
			if err != nil {
				t.Fatal(err)
			}
			if r.Title != title || r.Desc != strings.ReplaceAll(alt, "\n", " ") {
				t.Errorf("SVG title/desc %q / %q, want %q / %q", r.Title, r.Desc, title, alt)
			}
			for _, tx := range r.Texts {
				if tx.Left < -0.05 || tx.Right > r.Width+0.05 || tx.Top < -0.05 || tx.Bottom > r.Height+0.05 {
					t.Errorf("text %q outside the viewBox", tx.Text)
				}
			}
			byName := map[string]Change{}
			for _, c := range d.Changes {
				byName[quantityName(c)] = c
			}
			if len(r.Bars) == 0 || len(r.Bars)%2 != 0 {
				t.Fatalf("%d bars, want two per quantity", len(r.Bars))
			}
			tol := 0.16 / r.PerUnit
			sig := 0
			for i := 0; i < len(r.Bars); i += 2 {
				q := strings.SplitN(r.Bars[i].Tooltip, ", base (", 2)[0]
				c, ok := byName[q]
				if !ok || c.Unit != UnitNs {
					t.Fatalf("bar %d: %q is not a time quantity of the diff", i, r.Bars[i].Tooltip)
				}
				if got := r.Bars[i].Values[0]; math.Abs(got-c.Base.Mean/1e6) > tol {
					t.Errorf("%s: base bar draws %v ms, the diff says %v", q, got, c.Base.Mean/1e6)
				}
				if got := r.Bars[i+1].Values[1]; math.Abs(got-c.Test.Mean/1e6) > tol {
					t.Errorf("%s: test bar draws %v ms, the diff says %v", q, got, c.Test.Mean/1e6)
				}
				starred := regexp.MustCompile(`\) ★</text>`).MatchString(barGroup(svg, i+1))
				if (c.Verdict == Significant) != starred {
					t.Errorf("%s: verdict %q, starred %v", q, c.Verdict, starred)
				}
				if c.Verdict == Significant {
					sig++
				}
			}
			if !strings.Contains(title, " "+strconv.Itoa(sig)+" significant change(s)") {
				t.Errorf("title %q does not count the %d significant changes", title, sig)
			}

			var h, m bytes.Buffer
			if err := Write(&h, d, HTMLFragment); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(h.String(), `<figure class="tb-chart" data-tb-chart="diff">`+"\n"+svg) {
				t.Error("the HTML diff does not inline the chart")
			}
			if err := Write(&m, d, Markdown); err != nil {
				t.Fatal(err)
			}
			img := regexp.MustCompile(`(?m)^!\[[^\n]*\]\(data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)\)$`).FindStringSubmatch(m.String())
			if img == nil {
				t.Fatal("the Markdown diff embeds no chart")
			}
			if got, _ := base64.StdEncoding.DecodeString(img[1]); string(got) != svg {
				t.Error("the Markdown diff's image is not the chart")
			}
		})
	}
}

// barGroup returns the markup of bar i of a horizontal chart.
func barGroup(svg string, i int) string {
	start := strings.Index(svg, `<g data-bar="`+strconv.Itoa(i)+`">`)
	if start < 0 {
		return ""
	}
	end := strings.Index(svg[start:], "</g>")
	return svg[start : start+end]
}

// TestDiffChartHostileNames: markup in trace names stays text in the chart.
func TestDiffChartHostileNames(t *testing.T) {
	bn, tn := `<script>alert(1)</script>`, `<img src=x onerror=alert(2)>`
	in := &Input{
		Base: InputSide{Name: bn, Bundle: rankBundle(bn, []string{"decode"}, []int64{10e6, 11e6, 10e6, 11e6})},
		Test: InputSide{Name: tn, Bundle: rankBundle(tn, []string{"decode"}, []int64{5e6, 6e6, 5e6, 6e6})},
	}
	d, err := CompareView(in, report.View{})
	if err != nil {
		t.Fatal(err)
	}
	svg, _, _ := d.Chart()
	if svg == "" {
		t.Fatal("no chart")
	}
	if strings.Contains(svg, "<script") || strings.Contains(svg, "<img") {
		t.Error("a trace name became markup in the diff chart")
	}
	if _, err := chart.Read(svg); err != nil {
		t.Error(err)
	}
}
