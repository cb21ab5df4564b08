package diff

import (
	"fmt"
	"math"
	"strings"

	"github.com/tracebook/tracebook/analysis/chart"
)

// chartGroups are the groups whose time quantities the diff chart draws,
// in the order of the page's sections (kernels are left to their table).
var chartGroups = []string{"step", "phase", "class", "sync", "copy", "launch"}

// maxChartQuantities caps the quantities the diff chart draws (two bars
// each): the significant ones first, then the largest.
const maxChartQuantities = 12

// Chart draws the diff's time quantities per step (per capture when not
// step-normalised) as bars, base above test for each quantity, the
// significant changes in bold with their change written past the test bar.
// It returns the SVG, its title and its text alternative; all "" when no
// quantity is measured in time on both sides.
func (d *Diff) Chart() (svg, title, alt string) {
	var cs []Change
	for _, g := range chartGroups {
		for _, c := range d.rows([]string{g}) {
			if c.Unit == UnitNs && c.Verdict != Missing && (c.Base.Mean > 0 || c.Test.Mean > 0) {
				cs = append(cs, c)
			}
		}
	}
	if len(cs) == 0 {
		return "", "", ""
	}
	left := ""
	if len(cs) > maxChartQuantities {
		// Keep the significant ones first, then the largest, in their
		// section order.
		keep := map[int]bool{}
		for pass := 0; pass < 2 && len(keep) < maxChartQuantities; pass++ {
			idx := make([]int, 0, len(cs))
			for i, c := range cs {
				if !keep[i] && (pass == 1 || c.Verdict == Significant) {
					idx = append(idx, i)
				}
			}
			// Largest first (a stable selection, no sort package needed
			// for a dozen rows).
			for len(idx) > 0 && len(keep) < maxChartQuantities {
				best := 0
				for j, i := range idx {
					if size(cs[i]) > size(cs[idx[best]]) {
						best = j
					}
				}
				keep[idx[best]] = true
				idx = append(idx[:best], idx[best+1:]...)
			}
		}
		var kept []Change
		for i, c := range cs {
			if keep[i] {
				kept = append(kept, c)
			}
		}
		left = fmt.Sprintf("; %d of %d quantities, the significant changes and the largest", len(kept), len(cs))
		cs = kept
	}
	per := d.per()
	c := chart.Bars{ID: "tb-chart-diff", Unit: "ms", ValueAxis: "time " + per,
		Series: []chart.Series{{Name: "base: " + d.Base, Color: chart.SkyBlue, Short: "base"}, {Name: "test: " + d.Test, Color: chart.Blue, Short: "test"}}}
	var lines []string
	sig := 0
	for _, ch := range cs {
		name := quantityName(ch)
		s := ch.Verdict == Significant
		if s {
			sig++
		}
		text := ms(ch.Test.Mean) + " (" + changeText(ch) + ")"
		if s {
			text += " ★"
		}
		c.Bars = append(c.Bars,
			chart.Bar{Label: name + " · base", Full: name + ", base (" + statString(ch.Base, ch.Unit) + ")", Values: []float64{ch.Base.Mean / 1e6, 0},
				Text: ms(ch.Base.Mean), Bold: s},
			chart.Bar{Label: name + " · test", Full: name + ", test (" + statString(ch.Test, ch.Unit) + "): " + verdict(ch), Values: []float64{0, ch.Test.Mean / 1e6},
				Text: text, Bold: s})
		lines = append(lines, fmt.Sprintf("%s: base %s, test %s, change %s (%s).", name, statString(ch.Base, ch.Unit), statString(ch.Test, ch.Unit), delta(ch), verdict(ch)))
	}
	c.Title = fmt.Sprintf("Base vs test, %s: step time, GPU time by kind and host time (ms), the %d significant change(s) in bold and starred (★) — %s → %s%s",
		per, sig, d.Base, d.Test, left)
	if sl := sliceText(d.Filter); sl != "" {
		c.Title += ", " + sl
	}
	lines = append(lines, fmt.Sprintf("A change is significant when |t| ≥ %.0f (the change over the pooled standard error of the per-step values).", SignificantT))
	c.Desc = strings.Join(lines, "\n")
	return c.SVG(), c.Title, c.Desc
}

// quantityName names a change on the chart: its group where the name
// alone is unclear (a kernel class, a phase).
func quantityName(c Change) string {
	switch c.Group {
	case "class":
		return c.Name + " kernels"
	case "phase":
		return "phase " + c.Name
	}
	return c.Name
}

// changeText is a change as a share of the base, or as a time when the base
// is 0.
func changeText(c Change) string {
	switch {
	case c.Delta == 0:
		return "±0"
	case c.HasPct && c.Pct < 0:
		return fmt.Sprintf("−%.1f%%", -c.Pct)
	case c.HasPct:
		return fmt.Sprintf("+%.1f%%", c.Pct)
	case c.Delta < 0:
		return "−" + ms(-c.Delta)
	}
	return "+" + ms(c.Delta)
}

// size is the larger of a change's two means.
func size(c Change) float64 { return math.Max(math.Abs(c.Base.Mean), math.Abs(c.Test.Mean)) }
