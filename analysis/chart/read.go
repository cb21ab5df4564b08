// Read is for tests, which run natively: the report's viewer module
// (GOOS=wasip1) draws charts but never reads them back, and leaving this
// file out of it keeps encoding/xml out of the page (14 kB of module, 2.8 kB
// of gzip).

//go:build !wasip1

package chart

import (
	"encoding/xml"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Reading is a chart measured back from its SVG by Read: what a reader
// sees, for tests that check a chart against the numbers it draws.
type Reading struct {
	Width, Height float64
	// Title and Desc are the SVG's accessible name and description.
	Title, Desc string
	// PerUnit is the pixels per unit of the value axis, read from its
	// first and last tick.
	PerUnit float64
	// Bars are the bars in drawing order.
	Bars []ReadBar
	// Marks are the values of the reference lines.
	Marks []float64
	// Texts are every <text> of the chart with its box as the layout
	// estimates it (TextWidth).
	Texts []ReadText
	// Lanes are a timeline's lanes, in drawing order; Bands its
	// highlighted ranges (in the axis unit).
	Lanes []ReadLane
	Bands [][2]float64
}

// ReadLane is one lane of a timeline: its tooltip, its label and, per kind
// index, the segments it draws (from, to in the axis unit).
type ReadLane struct {
	Tooltip, Label string
	Segments       map[int][][2]float64
}

// ReadBar is one bar: its tooltip and, per series index, the value its
// part's size stands for on the value axis and where the part starts and
// ends on that axis (in the axis unit; stacked parts meet).
type ReadBar struct {
	Tooltip string
	Values  map[int]float64
	Spans   map[int][2]float64
}

// ReadText is one text element and its estimated box.
type ReadText struct {
	Text                     string
	Left, Right, Top, Bottom float64
}

// Read parses an SVG that Bars.SVG wrote. It fails when the SVG is not
// well-formed XML, is not an SVG, or holds NaN or an infinity.
func Read(svg string) (*Reading, error) {
	var root xmlNode
	if err := xml.Unmarshal([]byte(svg), &root); err != nil {
		return nil, fmt.Errorf("chart: reading the SVG: %w", err)
	}
	if root.XMLName.Local != "svg" || root.XMLName.Space != "http://www.w3.org/2000/svg" {
		return nil, fmt.Errorf("chart: reading the SVG: root element %q is not an SVG", root.XMLName.Local)
	}
	if strings.Contains(svg, "NaN") || strings.Contains(svg, "Inf") {
		return nil, errors.New("chart: reading the SVG: it holds NaN or an infinity")
	}
	r := &Reading{}
	vb := strings.Fields(root.attr("viewBox"))
	if len(vb) != 4 {
		return nil, fmt.Errorf("chart: reading the SVG: viewBox %q", root.attr("viewBox"))
	}
	r.Width, _ = strconv.ParseFloat(vb[2], 64)
	r.Height, _ = strconv.ParseFloat(vb[3], 64)
	type tick struct{ v, px float64 }
	var ticks []tick
	var bars, paths, lanes []*xmlNode
	root.walk(FontSize, func(n *xmlNode, size float64) {
		switch {
		case n.XMLName.Local == "title" && r.Title == "" && n.parent == &root:
			r.Title = n.Text
		case n.XMLName.Local == "desc" && n.parent == &root:
			r.Desc = n.Text
		case n.XMLName.Local == "text":
			x, y := n.num("x"), n.num("y")
			w := TextWidth(n.Text, size)
			left := x
			switch n.attr("text-anchor") {
			case "middle":
				left = x - w/2
			case "end":
				left = x - w
			}
			r.Texts = append(r.Texts, ReadText{Text: n.Text, Left: left, Right: left + w, Top: y - size, Bottom: y})
			if s := n.attr("data-tick"); s != "" {
				v, _ := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
				px := x
				if n.parent != nil && n.parent.attr("data-axis") == "y" {
					px = y - 4 // a label's baseline sits 4 px under its line
				}
				ticks = append(ticks, tick{v, px})
			}
		case n.attr("data-mark") != "":
			v, _ := strconv.ParseFloat(strings.ReplaceAll(n.attr("data-mark"), ",", ""), 64)
			r.Marks = append(r.Marks, v)
		case n.attr("data-bar") != "":
			bars = append(bars, n)
		case n.attr("data-lane") != "":
			lanes = append(lanes, n)
		case n.attr("data-band") != "":
			f := strings.Fields(strings.ReplaceAll(n.attr("data-band"), ",", ""))
			if len(f) == 2 {
				from, _ := strconv.ParseFloat(f[0], 64)
				to, _ := strconv.ParseFloat(f[1], 64)
				r.Bands = append(r.Bands, [2]float64{from, to})
			}
		case n.XMLName.Local == "path" && n.attr("data-s") != "" && (n.parent == nil || n.parent.attr("data-lane") == ""):
			paths = append(paths, n)
		}
	})
	if len(ticks) < 2 || ticks[len(ticks)-1].v == ticks[0].v {
		return nil, errors.New("chart: reading the SVG: fewer than two ticks on the value axis")
	}
	a, b := ticks[0], ticks[len(ticks)-1]
	signed := (b.px - a.px) / (b.v - a.v)
	zero := a.px - a.v*signed
	r.PerUnit = math.Abs(signed)
	at := func(px float64) float64 { return (px - zero) / signed }
	part := func(rb *ReadBar, j int, from, to float64) {
		rb.Spans[j] = [2]float64{at(from), at(to)}
		rb.Values[j] = at(to) - at(from)
	}
	byX := map[string]int{}
	for _, g := range bars {
		rb := ReadBar{Values: map[int]float64{}, Spans: map[int][2]float64{}}
		for i := range g.Children {
			c := &g.Children[i]
			switch c.XMLName.Local {
			case "title":
				rb.Tooltip = c.Text
			case "rect": // a row's part
				j, err := strconv.Atoi(c.attr("data-s"))
				if err != nil {
					return nil, fmt.Errorf("chart: reading the SVG: a bar's rect has data-s %q", c.attr("data-s"))
				}
				part(&rb, j, c.num("x"), c.num("x")+c.num("width"))
			}
		}
		if g.XMLName.Local == "rect" { // a column: its parts are in the series' paths
			byX[g.attr("x")] = len(r.Bars)
		}
		r.Bars = append(r.Bars, rb)
	}
	for _, g := range lanes {
		rl := ReadLane{Segments: map[int][][2]float64{}}
		for i := range g.Children {
			c := &g.Children[i]
			switch c.XMLName.Local {
			case "title":
				rl.Tooltip = c.Text
			case "text":
				rl.Label = c.Text
			case "path":
				k, err := strconv.Atoi(c.attr("data-s"))
				if err != nil {
					return nil, fmt.Errorf("chart: reading the SVG: a lane's path has data-s %q", c.attr("data-s"))
				}
				// Each segment, a stroke: M<x> <y>h<w>
				for _, sub := range strings.Split(strings.TrimPrefix(c.attr("d"), "M"), "M") {
					f := strings.FieldsFunc(sub, func(c rune) bool { return c == 'h' || c == ' ' })
					if len(f) != 3 {
						return nil, fmt.Errorf("chart: reading the SVG: path part %q is not a lane segment", sub)
					}
					x, _ := strconv.ParseFloat(f[0], 64)
					w, _ := strconv.ParseFloat(f[2], 64)
					if w < 0 {
						return nil, fmt.Errorf("chart: reading the SVG: lane segment %q runs backwards", sub)
					}
					rl.Segments[k] = append(rl.Segments[k], [2]float64{at(x), at(x + w)})
				}
			}
		}
		r.Lanes = append(r.Lanes, rl)
	}
	for _, p := range paths {
		j, err := strconv.Atoi(p.attr("data-s"))
		if err != nil {
			return nil, fmt.Errorf("chart: reading the SVG: a path has data-s %q", p.attr("data-s"))
		}
		// Each part: M<x> <bottom>V<top>h<width>V<bottom>z
		for _, sub := range strings.Split(strings.TrimSuffix(p.attr("d"), "z"), "z") {
			var x, yb, yt, w, yb2 string
			f := strings.FieldsFunc(sub, func(c rune) bool { return c == 'M' || c == 'V' || c == 'h' || c == ' ' })
			if len(f) != 5 {
				return nil, fmt.Errorf("chart: reading the SVG: path part %q is not a column part", sub)
			}
			x, yb, yt, w, yb2 = f[0], f[1], f[2], f[3], f[4]
			i, ok := byX[x]
			if !ok || yb != yb2 || w == "" {
				return nil, fmt.Errorf("chart: reading the SVG: path part %q matches no column", sub)
			}
			from, _ := strconv.ParseFloat(yb, 64)
			to, _ := strconv.ParseFloat(yt, 64)
			part(&r.Bars[i], j, from, to)
		}
	}
	return r, nil
}

// xmlNode is a parsed element.
type xmlNode struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Children []xmlNode  `xml:",any"`
	Text     string     `xml:",chardata"`
	parent   *xmlNode
}

func (n *xmlNode) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func (n *xmlNode) num(name string) float64 {
	v, _ := strconv.ParseFloat(n.attr(name), 64)
	return v
}

// walk calls f on n and its descendants with the inherited font size,
// setting each child's parent.
func (n *xmlNode) walk(size float64, f func(n *xmlNode, size float64)) {
	if v, err := strconv.ParseFloat(n.attr("font-size"), 64); err == nil {
		size = v
	}
	f(n, size)
	for i := range n.Children {
		n.Children[i].parent = n
		n.Children[i].walk(size, f)
	}
}
