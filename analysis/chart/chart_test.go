package chart

import (
	"encoding/xml"
	"math"
	"strconv"
	"strings"
	"testing"
)

// node is a parsed SVG element.
type node struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Children []node     `xml:",any"`
	Text     string     `xml:",chardata"`
}

func (n *node) attr(name string) (string, bool) {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value, true
		}
	}
	return "", false
}

func (n *node) num(t testing.TB, name string) float64 {
	t.Helper()
	s, ok := n.attr(name)
	if !ok {
		return 0
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("<%s %s=%q>: not a number", n.XMLName.Local, name, s)
	}
	return v
}

// walk calls f on n and every descendant, with the inherited font size.
func (n *node) walk(size float64, f func(n *node, size float64)) {
	if s, ok := n.attr("font-size"); ok {
		if v, err := strconv.ParseFloat(s, 64); err == nil {
			size = v
		}
	}
	f(n, size)
	for i := range n.Children {
		n.Children[i].walk(size, f)
	}
}

// parse decodes svg strictly and checks what every chart must hold: the
// SVG namespace, a viewBox, a <title> and a <desc>, no NaN or infinity,
// and every text inside the viewBox (with the layout's own width estimate,
// anchors honoured).
func parse(t *testing.T, svg string) (root node, w, h float64) {
	t.Helper()
	if err := xml.Unmarshal([]byte(svg), &root); err != nil {
		t.Fatalf("the SVG does not parse as XML: %v\n%s", err, svg)
	}
	if root.XMLName.Local != "svg" || root.XMLName.Space != "http://www.w3.org/2000/svg" {
		t.Fatalf("root element = %v, want svg in the SVG namespace", root.XMLName)
	}
	for _, bad := range []string{"NaN", "Inf", "style=", "<script"} {
		if strings.Contains(svg, bad) {
			t.Errorf("the SVG holds %q", bad)
		}
	}
	vb, _ := root.attr("viewBox")
	f := strings.Fields(vb)
	if len(f) != 4 || f[0] != "0" || f[1] != "0" {
		t.Fatalf("viewBox = %q", vb)
	}
	w, _ = strconv.ParseFloat(f[2], 64)
	h, _ = strconv.ParseFloat(f[3], 64)
	if len(root.Children) < 2 || root.Children[0].XMLName.Local != "title" || root.Children[1].XMLName.Local != "desc" {
		t.Error("the SVG does not open with <title> and <desc>")
	}
	root.walk(FontSize, func(n *node, size float64) {
		switch n.XMLName.Local {
		case "script", "foreignObject", "style", "a", "image":
			t.Errorf("the SVG holds a <%s> element", n.XMLName.Local)
		case "text":
			x, y := n.num(t, "x"), n.num(t, "y")
			tw := TextWidth(n.Text, size)
			left := x
			switch a, _ := n.attr("text-anchor"); a {
			case "middle":
				left = x - tw/2
			case "end":
				left = x - tw
			}
			if left < -0.05 || left+tw > w+0.05 || y-size < -0.05 || y > h+0.05 {
				t.Errorf("text %q (x %.1f..%.1f, baseline %.1f, size %v) is outside the viewBox %vx%v", n.Text, left, left+tw, y, size, w, h)
			}
		case "rect", "line":
			for _, a := range []string{"x", "y", "width", "height", "x1", "x2", "y1", "y2"} {
				v := n.num(t, a)
				if v < -0.05 || (strings.HasPrefix(a, "x") && v > w+0.05) || (strings.HasPrefix(a, "y") && v > h+0.05) {
					t.Errorf("<%s %s=%v> is outside the viewBox %vx%v", n.XMLName.Local, a, v, w, h)
				}
			}
		}
	})
	return root, w, h
}

// checkBars: every bar's parts have the sizes of their values on the
// chart's own axis (read back from the ticks), stacked from zero without a
// gap, and a zero, negative or non-finite value draws nothing.
func checkBars(t *testing.T, c *Bars) {
	t.Helper()
	svg := c.SVG()
	parse(t, svg)
	r, err := Read(svg)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Bars) != len(c.Bars) {
		t.Fatalf("%d bars drawn, want %d", len(r.Bars), len(c.Bars))
	}
	tol := 0.16 / r.PerUnit // two roundings to 0.1 px
	for i, b := range c.Bars {
		pos := 0.0
		for j := range c.Series {
			want := value(b, j)
			sp, ok := r.Bars[i].Spans[j]
			if want == 0 {
				if ok {
					t.Errorf("bar %d series %d: value %v drew a part", i, j, b.Values[j])
				}
				continue
			}
			if !ok {
				t.Errorf("bar %d series %d: value %v drew nothing", i, j, want)
				continue
			}
			if got := r.Bars[i].Values[j]; math.Abs(got-want) > tol {
				t.Errorf("bar %d series %d: draws %v, want %v (%v px per unit)", i, j, got, want, r.PerUnit)
			}
			if math.Abs(sp[0]-pos) > tol {
				t.Errorf("bar %d series %d: starts at %v, want %v (stacked)", i, j, sp[0], pos)
			}
			pos = sp[1]
		}
	}
}

var twoSeries = []Series{{Name: "compute", Color: Blue}, {Name: "idle", Color: Grey}}

func TestBarsMatchValues(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name string
		c    Bars
	}{
		{"rows", Bars{Title: "GPU time per rank", Unit: "ms", ValueAxis: "GPU time", Series: twoSeries,
			Bars:  []Bar{{Label: "rank 0", Values: []float64{12.5, 3}}, {Label: "rank 1", Values: []float64{20, 0.25}}, {Label: "rank 2", Values: []float64{7.125, 9}}},
			Marks: []Mark{{Value: 12.5, Label: "median compute 12.5 ms"}}}},
		{"rows, one bar", Bars{Title: "one", Unit: "ms", Series: twoSeries[:1], Bars: []Bar{{Label: "x", Values: []float64{0.6}}}}},
		{"rows, large values", Bars{Title: "big", Unit: "ms", Series: twoSeries, Bars: []Bar{{Label: "a", Values: []float64{42708, 5024}}, {Label: "b", Values: []float64{18034, 1}}}}},
		{"rows, tiny values", Bars{Title: "tiny", Unit: "ms", Series: twoSeries, Bars: []Bar{{Label: "a", Values: []float64{0.0004, 0.018}}, {Label: "b", Values: []float64{0.003, 0}}}}},
		{"rows, NaN, Inf and negative draw as 0", Bars{Title: "bad", Unit: "ms", Series: twoSeries, Marks: []Mark{{Value: nan, Label: "a mark at no value"}},
			Bars: []Bar{{Label: "a", Values: []float64{nan, 2}}, {Label: "b", Values: []float64{inf, -1}}, {Label: "c", Values: []float64{1}}}}},
		{"rows, all zero", Bars{Title: "zero", Unit: "ms", Series: twoSeries, Bars: []Bar{{Label: "a", Values: []float64{0, 0}}}}},
		{"columns", Bars{Title: "GPU time per step", Unit: "ms", ValueAxis: "GPU time", CategoryAxis: "step", Series: twoSeries, Vertical: true,
			Bars:  []Bar{{Label: "5", Values: []float64{98.6, 18.2}}, {Label: "6", Values: []float64{98.5, 74.5}}, {Label: "7", Values: []float64{98.6, 79.1}}},
			Marks: []Mark{{Value: 175, Label: "median step 175 ms"}}}},
		{"columns, NaN", Bars{Title: "bad", Unit: "ms", Series: twoSeries, Vertical: true, Bars: []Bar{{Label: "1", Values: []float64{nan, inf}}, {Label: "2", Values: []float64{3, 4}}}}},
		{"columns, 200", func() Bars {
			c := Bars{Title: "many steps", Unit: "ms", CategoryAxis: "step", Series: twoSeries, Vertical: true}
			for i := range 200 {
				c.Bars = append(c.Bars, Bar{Label: strconv.Itoa(i * 5), Values: []float64{float64(20 + i%7), float64(i % 5)}})
			}
			return c
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkBars(t, &tc.c)
		})
	}
}

// TestHostileNamesStayText: markup in every string of a chart is text
// after parsing: no element it names, its characters intact.
func TestHostileNamesStayText(t *testing.T) {
	const hostile = `<script>alert(1)</script>&amp;"'<img src=x onerror=alert(2)>`
	bad := hostile + "\x00\x1b\ufffe" + string([]byte{0xff, 0xfe}) + "]]><!--"
	for _, vertical := range []bool{false, true} {
		c := Bars{ID: `id"` + hostile, Title: bad, Desc: bad, Unit: "m<s", ValueAxis: bad, CategoryAxis: bad, Vertical: vertical,
			Series: []Series{{Name: bad, Color: `"><script>`, Short: bad}},
			Bars:   []Bar{{Label: bad, Full: bad, Text: bad, Values: []float64{1}}, {Label: hostile, Values: []float64{2}}},
			Marks:  []Mark{{Value: 1, Label: bad}}}
		svg := c.SVG()
		root, _, _ := parse(t, svg)
		found := false
		root.walk(FontSize, func(n *node, _ float64) {
			switch n.XMLName.Local {
			case "svg", "title", "desc", "rect", "line", "text", "g", "path":
			default:
				t.Errorf("element <%s> in the SVG", n.XMLName.Local)
			}
			if strings.Contains(n.Text, "<script>alert(1)</script>&amp;\"'<img") {
				found = true
			}
		})
		if !found {
			t.Errorf("vertical=%v: the hostile name is not in the SVG's text", vertical)
		}
	}
}

func TestEmptyChart(t *testing.T) {
	for _, c := range []Bars{{Title: "no bars", Series: twoSeries}, {Title: "no series", Bars: []Bar{{Label: "a", Values: []float64{1}}}}} {
		if got := c.SVG(); got != "" {
			t.Errorf("%s: SVG() = %d bytes, want \"\"", c.Title, len(got))
		}
	}
}

// TestLongTextStaysInside: a long title wraps, long labels and legend
// names are shortened, all inside the viewBox (parse checks it).
func TestLongTextStaysInside(t *testing.T) {
	long := strings.Repeat("void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>> ", 6)
	word := strings.Repeat("x", 400)
	for _, vertical := range []bool{false, true} {
		c := Bars{Title: long + word, Unit: "ms", ValueAxis: long, CategoryAxis: word, Vertical: vertical,
			Series: []Series{{Name: long, Color: Blue}, {Name: word, Color: Orange}, {Name: "漢字漢字漢字", Color: SkyBlue}},
			Bars:   []Bar{{Label: long, Values: []float64{1, 2, 3}}, {Label: word, Text: long, Values: []float64{3, 2, 1}}, {Label: "漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字", Values: []float64{1, 1, 1}}},
			Marks:  []Mark{{Value: 5, Label: long}}}
		root, _, _ := parse(t, c.SVG())
		lines := 0
		root.walk(FontSize, func(n *node, size float64) {
			if n.XMLName.Local == "text" && size == TitleSize {
				lines++
			}
		})
		if lines < 2 || lines > 3 {
			t.Errorf("vertical=%v: the title takes %d lines, want 2 or 3", vertical, lines)
		}
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0"}, {0.0004, "<0.001"}, {0.018, "0.018"}, {0.5, "0.5"}, {1.234, "1.23"}, {12.34, "12.3"},
		{175.4, "175"}, {1234, "1234"}, {18034, "18,034"}, {1234567, "1,234,567"}, {math.NaN(), "0"}, {math.Inf(1), "0"}, {-3, "0"},
	}
	for _, tc := range tests {
		if got := Format(tc.in); got != tc.want {
			t.Errorf("Format(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTicks(t *testing.T) {
	tests := []struct{ max, step, top float64 }{
		{0, 0.25, 1}, {18.9, 5, 20}, {0.6, 0.2, 0.6}, {42845, 10000, 50000}, {1, 0.2, 1}, {7, 2, 8}, {0.0004, 0.0001, 0.0004},
	}
	for _, tc := range tests {
		step, top := ticks(tc.max)
		if math.Abs(step-tc.step) > 1e-12*tc.step || math.Abs(top-tc.top) > 1e-9*tc.top {
			t.Errorf("ticks(%v) = %v, %v, want %v, %v", tc.max, step, top, tc.step, tc.top)
		}
	}
}

func TestEscape(t *testing.T) {
	tests := []struct{ in, want string }{
		{`<a href="x">&'`, "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"},
		{"a\tb\nc\x00d\x1b", "a b cd"},
		{"\ufffe" + string([]byte{0xff}), "\ufffd\ufffd"},
	}
	for _, tc := range tests {
		if got := Escape(tc.in); got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestRead: Read measures back the values a chart draws, its marks, title
// and description.
func TestRead(t *testing.T) {
	for _, vertical := range []bool{false, true} {
		c := Bars{Title: "t <1>", Desc: "d & e", Unit: "ms", Series: twoSeries, Vertical: vertical,
			Bars:  []Bar{{Label: "a", Full: "a full", Values: []float64{12.5, 3}}, {Label: "b", Values: []float64{0, 7.25}}},
			Marks: []Mark{{Value: 9.5, Label: "median"}}}
		r, err := Read(c.SVG())
		if err != nil {
			t.Fatal(err)
		}
		if r.Title != "t <1>" || r.Desc != "d & e" {
			t.Errorf("Read: title %q, desc %q", r.Title, r.Desc)
		}
		if len(r.Marks) != 1 || r.Marks[0] != 9.5 {
			t.Errorf("Read: marks %v, want [9.5]", r.Marks)
		}
		if len(r.Bars) != 2 || !strings.HasPrefix(r.Bars[0].Tooltip, "a full: 15.5 ms") {
			t.Fatalf("Read: bars %+v", r.Bars)
		}
		tol := 0.16 / r.PerUnit
		for i, b := range c.Bars {
			for j, want := range b.Values {
				if got := r.Bars[i].Values[j]; math.Abs(got-want) > tol {
					t.Errorf("vertical=%v: bar %d series %d reads %v, want %v", vertical, i, j, got, want)
				}
			}
		}
	}
	if _, err := Read("<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 1 NaN'></svg>"); err == nil {
		t.Error("Read accepted an SVG with NaN")
	}
	if _, err := Read("<svg><text>"); err == nil {
		t.Error("Read accepted malformed XML")
	}
}

// TestLookAlikeLabelsStayApart: three GEMMs whose names differ only in the
// middle (the vLLM H100 trace's Hopper GEMMs) get three labels that show
// the difference, not one label three times.
func TestLookAlikeLabelsStayApart(t *testing.T) {
	gemm := func(tile string) string {
		return "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize" + tile + "_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
	}
	tiles := []string{"64x128x64", "128x128x64", "128x256x64"}
	c := Bars{ID: "k", Title: "kernels", Unit: "ms", Series: []Series{{Name: "COMP", Color: Blue}}}
	for i, tl := range tiles {
		c.Bars = append(c.Bars, Bar{Label: gemm(tl), Values: []float64{float64(3 - i)}})
	}
	root, _, _ := parse(t, c.SVG())
	var texts []string
	root.walk(FontSize, func(n *node, _ float64) {
		if n.XMLName.Local == "text" {
			texts = append(texts, n.Text)
		}
	})
	for _, tl := range tiles {
		n := 0
		for _, s := range texts {
			if strings.Contains(s, "tilesize"+tl) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d labels show tilesize%s, want 1 (texts %q)", n, tl, texts)
		}
	}
}
