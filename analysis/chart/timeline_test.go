package chart

import (
	"math"
	"strings"
	"testing"
)

var laneKinds = []Series{{Name: "compute", Color: Blue}, {Name: "sync call", Color: ReddishPurple}, {Name: "finding", Color: Black}}

// TestTimelineMatchesSegments: every segment is drawn where it lies on the
// chart's own time axis (read back from the ticks), in its kind's path,
// and the bands cover their ranges.
func TestTimelineMatchesSegments(t *testing.T) {
	c := &Timeline{ID: "tl", Title: "Timeline of the worst step", Desc: "two lanes", Unit: "ms", Axis: "time from the window start", End: 12.5,
		Kinds: laneKinds,
		Lanes: []Lane{
			{Label: "finding", Bold: true, Segments: []Segment{{From: 2, To: 3.5, Kind: 2}}},
			{Label: "thread 1 (python)", Segments: []Segment{{From: 0, To: 1, Kind: 0}, {From: 2, To: 3.5, Kind: 1}, {From: 11, To: 13, Kind: 0}}},
			{Label: "stream 7", Segments: []Segment{{From: 0.25, To: 0.2501, Kind: 0}, {From: 4, To: 9, Kind: 0}}},
		},
		Bands: []Band{{From: 1.5, To: 9.5, Label: "worst step 7"}},
	}
	svg := c.SVG()
	parse(t, svg)
	r, err := Read(svg)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Lanes) != len(c.Lanes) {
		t.Fatalf("%d lanes drawn, want %d", len(r.Lanes), len(c.Lanes))
	}
	tol := 0.11 / r.PerUnit
	minW := 0.5 / r.PerUnit // the narrowest segment drawn
	for i, l := range c.Lanes {
		got := r.Lanes[i].Segments
		drawn := 0
		for _, ss := range got {
			drawn += len(ss)
		}
		if drawn != len(l.Segments) {
			t.Errorf("lane %d: %d segments drawn, want %d", i, drawn, len(l.Segments))
		}
		for k, s := range l.Segments {
			if len(got[s.Kind]) == 0 {
				t.Errorf("lane %d segment %d: kind %d draws nothing", i, k, s.Kind)
				continue
			}
			seg := got[s.Kind][0]
			for _, g := range got[s.Kind] {
				if math.Abs(g[0]-s.From) < math.Abs(seg[0]-s.From) {
					seg = g
				}
			}
			// Past the axis end (12.5) a segment is clipped.
			want := [2]float64{s.From, math.Max(math.Min(s.To, 12.5), s.From+minW)}
			if math.Abs(seg[0]-want[0]) > tol || math.Abs(seg[1]-want[1]) > tol {
				t.Errorf("lane %d segment %d: drawn %v, want %v", i, k, seg, want)
			}
		}
	}
	if len(r.Bands) != 1 || r.Bands[0] != [2]float64{1.5, 9.5} {
		t.Errorf("bands %v, want [1.5 9.5]", r.Bands)
	}
	if !strings.Contains(r.Lanes[1].Tooltip, "thread 1 (python): busy") {
		t.Errorf("lane tooltip %q", r.Lanes[1].Tooltip)
	}
}

// TestTimelineHostileNames: markup in a lane's name stays text.
func TestTimelineHostileNames(t *testing.T) {
	c := &Timeline{Title: `<script>alert(1)</script>`, Desc: `"&'`, Unit: "ms", End: 1, Kinds: laneKinds,
		Lanes: []Lane{{Label: `<img src=x onerror=alert(1)>`, Full: `</title><script>x</script>`, Segments: []Segment{{From: 0, To: 1}}}}}
	svg := c.SVG()
	parse(t, svg)
	if strings.Contains(svg, "<script") || strings.Contains(svg, "<img") {
		t.Errorf("markup from a name became markup:\n%s", svg)
	}
	r, err := Read(svg)
	if err != nil {
		t.Fatal(err)
	}
	if r.Lanes[0].Tooltip != "</title><script>x</script>: busy 1 ms" {
		t.Errorf("tooltip read back %q", r.Lanes[0].Tooltip)
	}
}

// TestTimelineEmpty: nothing to draw, no SVG.
func TestTimelineEmpty(t *testing.T) {
	for _, c := range []*Timeline{
		{End: 1, Kinds: laneKinds},
		{End: 0, Kinds: laneKinds, Lanes: []Lane{{Label: "a"}}},
		{End: math.NaN(), Kinds: laneKinds, Lanes: []Lane{{Label: "a"}}},
		{End: 1, Lanes: []Lane{{Label: "a"}}},
	} {
		if s := c.SVG(); s != "" {
			t.Errorf("%+v drew %q", c, s)
		}
	}
}
