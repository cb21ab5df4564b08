package report

import (
	"strings"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/table"
)

// CompactRows is the row count past which EncodeOffline merges an area's
// rows over steps.
const CompactRows = 2000

// compactAreas are the areas whose rows merge over steps without changing
// what evidence.Rollup makes of them for a trace, rank, phase or stream
// filter. overview, steps and ranks keep their rows: steps and ranks count
// distinct steps.
var compactAreas = map[string]bool{"kernels": true, "sync": true, "ops": true, "memcpy": true, "gaps": true,
	"launch": true, "overlap": true, "graphs": true, "memory": true}

// EncodeOffline encodes src for the single-file report: like EncodeSource,
// but an area with more than CompactRows rows has its rows merged over steps
// (Compact), so that a long job's report stays small and the viewer fast.
// The viewer then filters by trace, rank, phase and stream, not by step.
func EncodeOffline(src *Source) ([]byte, error) {
	out := *src
	out.Bundle = Compact(src.Bundle, CompactRows)
	return EncodeSource(&out)
}

// Compact returns b with the rows of every compactable area that has more
// than maxRows rows merged over the step column: rows equal in every other
// key column become one row whose step is -1, with counts and durations
// summed, minima and maxima kept, histograms merged. evidence.Rollup gives
// the same tables for the compacted bundle as for b under any filter
// without a step (a test checks it on real traces). b is not modified.
func Compact(b *evidence.Bundle, maxRows int) *evidence.Bundle {
	if b == nil || b.Filter.HasStep {
		return b
	}
	c := *b
	c.Tables = evidence.Tables{}
	for area, t := range b.Tables {
		if t != nil && compactAreas[area] && len(t.Rows) > maxRows && t.Col("step") >= 0 {
			c.Tables[area] = mergeSteps(t)
		} else {
			c.Tables[area] = t
		}
	}
	return &c
}

type mergeRule int

const (
	mKey mergeRule = iota
	mSum
	mMin
	mMax
	mHist
	mArgmax // max_at_ns: the value of the row with the largest max_ns
	mDrop   // derived shares: recomputed by the rollup
	mStep
)

func ruleOf(c table.Column) mergeRule {
	n, u := c.Name, strings.ToUpper(c.Unit)
	switch {
	case n == "step":
		return mStep
	case u == evidence.HistUnit:
		return mHist
	case u == "PCT" || u == "SHARE":
		return mDrop
	case n == "max_at_ns":
		return mArgmax
	case u == "COUNT" || u == "DURATION_NS" || u == "BYTES" || u == "TIMESTAMP_NS":
		switch {
		case strings.HasPrefix(n, "min_") || strings.HasPrefix(n, "first_"):
			return mMin
		case strings.HasPrefix(n, "max_") || strings.HasPrefix(n, "last_") || strings.HasPrefix(n, "peak_") || n == "total_mem":
			return mMax
		case u == "TIMESTAMP_NS":
			return mMin
		}
		return mSum
	}
	return mKey
}

func mergeSteps(t *table.Table) *table.Table {
	rules := make([]mergeRule, len(t.Columns))
	var keys []int
	for i, c := range t.Columns {
		rules[i] = ruleOf(c)
		if rules[i] == mKey {
			keys = append(keys, i)
		}
	}
	maxCol := t.Col("max_ns")
	type group struct {
		row   []any
		hists map[int]evidence.Hist
		n     int
	}
	groups := map[string]*group{}
	var order []string
	var kb strings.Builder
	for _, r := range t.Rows {
		kb.Reset()
		for _, i := range keys {
			kb.WriteString(keyText(cell(r, i)))
			kb.WriteByte(0)
		}
		k := kb.String()
		g := groups[k]
		if g == nil {
			g = &group{row: append([]any(nil), r...), hists: map[int]evidence.Hist{}}
			for i, rule := range rules {
				switch rule {
				case mStep:
					g.row[i] = int64(-1)
				case mHist:
					h := evidence.Hist{}
					if s, ok := cell(r, i).(string); ok {
						h.Add(evidence.ParseHist(s))
					}
					g.hists[i] = h
				}
			}
			groups[k] = g
			order = append(order, k)
			g.n = 1
			continue
		}
		g.n++
		for i, rule := range rules {
			v := cell(r, i)
			switch rule {
			case mSum:
				g.row[i] = addNum(g.row[i], v)
			case mMin:
				if v != nil && (g.row[i] == nil || compareCells(v, g.row[i]) < 0) {
					g.row[i] = v
				}
			case mMax:
				if v != nil && (g.row[i] == nil || compareCells(v, g.row[i]) > 0) {
					g.row[i] = v
				}
			case mHist:
				if s, ok := v.(string); ok {
					g.hists[i].Add(evidence.ParseHist(s))
				}
			case mArgmax:
				// Rows arrive in order; like the rollup, a later row whose
				// max_ns is not smaller takes over.
				if maxCol >= 0 && cell(r, maxCol) != nil && compareCells(cell(r, maxCol), cell(g.row, maxCol)) >= 0 {
					g.row[i] = v
				}
			case mDrop:
				g.row[i] = nil
			}
		}
	}
	out := &table.Table{Name: t.Name, Columns: t.Columns, Rows: make([][]any, 0, len(order))}
	for _, k := range order {
		g := groups[k]
		for i, h := range g.hists {
			g.row[i] = h.String()
		}
		out.Rows = append(out.Rows, g.row)
	}
	out.Total = int64(len(out.Rows))
	return out
}

func keyText(v any) string {
	switch x := v.(type) {
	case nil:
		return "\x01"
	case string:
		return "s" + x
	case bool:
		if x {
			return "t"
		}
		return "f"
	}
	return "n" + fmtFloat(num(v))
}

func addNum(a, b any) any {
	if b == nil {
		return a
	}
	if a == nil {
		return b
	}
	x, xi := a.(int64)
	y, yi := b.(int64)
	if xi && yi {
		return x + y
	}
	return num(a) + num(b)
}
