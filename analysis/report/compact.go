package report

import (
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/table"
)

// CompactRows is the row count past which EncodeOffline merges an area's
// rows over steps.
const CompactRows = 2000

// compactable reports whether the rows of table t of area merge over steps
// without changing what evidence.Rollup makes of them for a trace, rank,
// phase or stream filter: the area's rows merge (evidence.Merged; overview
// and steps keep theirs) and its step column is a slice the rollup merges
// over (the ranks area counts distinct steps instead).
func compactable(area string, t *table.Table) bool {
	i := t.Col("step")
	return i >= 0 && evidence.Merged(area) && evidence.MergeOf(area, t.Columns[i]).Merge == evidence.MergeSlice
}

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
	warm := warmupSteps(b.Tables["capture"])
	for area, t := range b.Tables {
		if t != nil && len(t.Rows) > maxRows && compactable(area, t) {
			c.Tables[area] = mergeSteps(area, t, warm)
		} else {
			c.Tables[area] = t
		}
	}
	return &c
}

// warmupSteps is the set of warm-up steps the capture area names
// (warmup_step rows, "step N"), keyed by trace, rank and step as stepKey
// writes them: Compact keeps their rows apart, so that the rules can still
// leave the step out of the loop's shares (evidence.Steady; resnet_2080ti:
// the DataLoader is 65% of steps 1-29, 50% with the warm-up step 0).
func warmupSteps(ct *table.Table) map[string]bool {
	warm := map[string]bool{}
	if ct == nil {
		return warm
	}
	for r := range ct.Rows {
		if evidence.Str(ct, r, "kind") != "warmup_step" {
			continue
		}
		if n, ok := strings.CutPrefix(evidence.Str(ct, r, "name"), "step "); ok {
			if step, err := strconv.ParseInt(n, 10, 64); err == nil {
				warm[stepKey(evidence.Str(ct, r, "trace"), evidence.Int(ct, r, "rank"), step)] = true
			}
		}
	}
	return warm
}

func stepKey(trace string, rank, step int64) string {
	return trace + "\x00" + strconv.FormatInt(rank, 10) + "\x00" + strconv.FormatInt(step, 10)
}

// mergeSteps merges the rows of t over steps, each column as
// evidence.MergeOf says (the rule the rollup follows): the step becomes -1,
// the other slices (phase, stream) stay identities, the shares are left
// empty for the rollup to recompute. The rows of a step in warm (a rank's
// warm-up step, warmupSteps) are merged apart and keep their step.
func mergeSteps(area string, t *table.Table, warm map[string]bool) *table.Table {
	ti, ri, si := t.Col("trace"), t.Col("rank"), t.Col("step")
	isWarm := func(r []any) bool {
		if len(warm) == 0 || ti < 0 || ri < 0 || si < 0 {
			return false
		}
		tr, _ := cell(r, ti).(string)
		return warm[stepKey(tr, int64(num(cell(r, ri))), int64(num(cell(r, si))))]
	}
	rules := make([]evidence.ColumnMerge, len(t.Columns))
	byCol := make([]int, len(t.Columns))
	var keys []int
	for i, c := range t.Columns {
		rules[i] = evidence.MergeOf(area, c)
		if rules[i].Merge == evidence.MergeSlice && c.Name != "step" {
			rules[i].Merge = evidence.MergeKey
		}
		if rules[i].Merge == evidence.MergeKey {
			keys = append(keys, i)
		}
		byCol[i] = -1
		if rules[i].Merge == evidence.MergeArgmax {
			byCol[i] = t.Col(rules[i].By)
		}
	}
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
		warmRow := isWarm(r)
		if warmRow {
			kb.WriteString("warm" + keyText(cell(r, si)))
		}
		k := kb.String()
		g := groups[k]
		if g == nil {
			g = &group{row: append([]any(nil), r...), hists: map[int]evidence.Hist{}}
			for i, rule := range rules {
				switch rule.Merge {
				case evidence.MergeSlice: // the step
					if !warmRow {
						g.row[i] = int64(-1)
					}
				case evidence.MergeHist:
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
			switch rule.Merge {
			case evidence.MergeSum:
				g.row[i] = addNum(g.row[i], v)
			case evidence.MergeMin:
				if v != nil && (g.row[i] == nil || table.Compare(v, g.row[i]) < 0) {
					g.row[i] = v
				}
			case evidence.MergeMax:
				if v != nil && (g.row[i] == nil || table.Compare(v, g.row[i]) > 0) {
					g.row[i] = v
				}
			case evidence.MergeHist:
				if s, ok := v.(string); ok {
					g.hists[i].Add(evidence.ParseHist(s))
				}
			case evidence.MergeArgmax:
				// Rows arrive in order; like the rollup, a later row whose
				// By column is not smaller takes over.
				if by := byCol[i]; by >= 0 && cell(r, by) != nil && table.Compare(cell(r, by), cell(g.row, by)) >= 0 {
					g.row[i] = v
				}
			case evidence.MergeDerived:
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
