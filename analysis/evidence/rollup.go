package evidence

import (
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/tracebook/tracebook/analysis/table"
)

// Evidence is the rolled-up view of a bundle for one filter: per area, the
// preset rows that pass the filter merged per (trace, rank) and the area's
// identity columns (kernel name, call, stream, ...), with derived columns
// (means, percentiles, shares, bandwidth) computed after the merge. The
// findings rules read it; the report and the viewer render it.
type Evidence struct {
	Filter  Filter
	Traces  *table.Table
	Tables  Tables
	Gaps    []Gap
	Context map[string]string
}

// Table returns an area's rolled-up table, or nil.
func (e *Evidence) Table(area string) *table.Table {
	if e == nil {
		return nil
	}
	return e.Tables[AreaPreset(area)]
}

type agg int

const (
	aggSum agg = iota
	aggMin
	aggMax
	aggHist
	aggSteps // number of distinct steps >= 0 among the merged rows
)

// spec says how an area's rows merge: the identity columns kept besides
// trace and rank, how each value column merges, the column whose maximum
// picks another column's value, the column to sort by (descending), and the
// derived columns.
type spec struct {
	passthrough bool
	keys        []string
	values      map[string]agg
	argmax      map[string]string
	sortBy      string
	derive      func(t *table.Table, ev *Evidence)
}

var specs = map[string]spec{
	"overview": {passthrough: true},
	"steps":    {passthrough: true},
	"kernels": {
		keys:   []string{"name", "class"},
		values: map[string]agg{"count": aggSum, "total_ns": aggSum, "min_ns": aggMin, "max_ns": aggMax, "hist": aggHist},
		sortBy: "total_ns",
		derive: deriveKernels,
	},
	"sync": {
		keys: []string{"call", "op", "trigger", "direction", "pageable", "blocking"},
		values: map[string]agg{"count": aggSum, "blocked_ns": aggSum, "max_blocked_ns": aggMax, "gaps": aggSum,
			"gpu_gap_ns": aggSum, "max_gap_ns": aggMax, "bytes": aggSum},
		sortBy: "blocked_ns",
	},
	"ops": {
		keys: []string{"name"},
		values: map[string]agg{"count": aggSum, "incl_ns": aggSum, "self_ns": aggSum, "max_ns": aggMax,
			"launches": aggSum, "gpu_events": aggSum, "gpu_ns": aggSum},
		sortBy: "self_ns",
	},
	"ranks": {
		values: map[string]agg{"step": aggSteps, "events": aggSum, "first_ns": aggMin, "last_ns": aggMax, "busy_ns": aggSum,
			"idle_ns": aggSum, "compute_ns": aggSum, "comm_ns": aggSum, "mem_ns": aggSum, "comm_comp_ns": aggSum,
			"kernel_ns": aggSum, "step_ns": aggSum},
		derive: deriveRanks,
	},
	"memcpy": {
		keys: []string{"kind", "direction", "src", "dst", "call", "sync"},
		values: map[string]agg{"count": aggSum, "bytes": aggSum, "total_ns": aggSum, "host_ns": aggSum,
			"max_ns": aggMax},
		sortBy: "total_ns",
		derive: deriveMemcpy,
	},
	"gaps": {
		keys:   []string{"stream", "category"},
		values: map[string]agg{"count": aggSum, "idle_ns": aggSum, "max_ns": aggMax, "hist": aggHist},
		argmax: map[string]string{"max_at_ns": "max_ns"},
		sortBy: "idle_ns",
		derive: deriveGaps,
	},
	"launch": {
		keys: []string{"call"},
		values: map[string]agg{"launches": aggSum, "with_gpu": aggSum, "cpu_ns": aggSum, "gpu_ns": aggSum,
			"delay_ns": aggSum, "hta_delay_ns": aggSum, "short": aggSum, "short_cpu_ns": aggSum,
			"runtime_outliers": aggSum, "delay_outliers": aggSum, "cpu_hist": aggHist, "delay_hist": aggHist},
		sortBy: "cpu_ns",
		derive: deriveLaunch,
	},
	"overlap": {
		values: map[string]agg{"comm_ns": aggSum, "compute_ns": aggSum, "overlap_ns": aggSum, "comm_kernels": aggSum},
		derive: deriveOverlap,
	},
	"graphs": {
		keys: []string{"graph"},
		values: map[string]agg{"launches": aggSum, "empty_launches": aggSum, "kernels": aggSum,
			"min_per_launch": aggMin, "max_per_launch": aggMax, "gpu_ns": aggSum},
	},
	"memory": {
		keys: []string{"device"},
		values: map[string]agg{"allocs": aggSum, "frees": aggSum, "alloc_bytes": aggSum, "freed_bytes": aggSum,
			"peak_allocated": aggMax, "peak_reserved": aggMax, "total_mem": aggMax, "free_calls": aggSum, "free_ns": aggSum},
	},
	"capture": {
		keys: []string{"kind", "name"},
		values: map[string]agg{"count": aggSum, "total_ns": aggSum, "max_ns": aggMax, "idle_ns": aggSum,
			"span_ns": aggSum, "first_ns": aggMin, "last_ns": aggMax},
		sortBy: "total_ns",
	},
	"workload": {
		keys:   []string{"feature", "name"},
		values: map[string]agg{"count": aggSum, "total_ns": aggSum},
		sortBy: "count",
	},
	"collectives": {
		keys: []string{"collective", "pg"},
		values: map[string]agg{"count": aggSum, "total_ns": aggSum, "name_hint": aggSum, "instances": aggSum,
			"matched": aggSum, "matched_ns": aggSum, "wait_ns": aggSum, "transfer_ns": aggSum,
			"late": aggSum, "lag_ns": aggSum, "caused_ns": aggSum, "late_peer_n": aggMax, "group_size": aggMax,
			"bytes": aggSum, "sized": aggSum, "sized_bytes": aggSum, "sized_transfer_ns": aggSum},
		argmax: map[string]string{"late_peer": "late_peer_n"},
		sortBy: "total_ns",
	},
}

// Rollup merges the bundle's rows that pass f into the evidence for f. The
// trace, rank, step, phase and stream of f select rows (an area without a
// column ignores that part of the filter); the window cannot be applied to
// merged rows, so the bundle's rows already carry the window they were
// collected under. Ranks are merged after the ranks area, so that kernel
// shares can be taken of each rank's GPU busy time.
func Rollup(b *Bundle, f Filter) *Evidence {
	ev := &Evidence{Filter: f, Traces: b.Traces, Tables: Tables{}, Gaps: b.Gaps, Context: b.Context}
	if f.Trace == "" && b.Filter.Trace != "" {
		ev.Filter.Trace = b.Filter.Trace
	}
	names := make([]string, 0, len(b.Tables))
	for name := range b.Tables {
		names = append(names, name)
	}
	// ranks first: kernels' shares read it.
	sort.Slice(names, func(i, j int) bool {
		if (names[i] == "ranks") != (names[j] == "ranks") {
			return names[i] == "ranks"
		}
		return names[i] < names[j]
	})
	for _, name := range names {
		ev.Tables[name] = RollupTable(name, b.Tables[name], f, ev)
	}
	return ev
}

// RollupTable merges one area's rows for f. ev supplies the other areas'
// rolled-up tables that derived columns read (it may be nil).
func RollupTable(area string, t *table.Table, f Filter, ev *Evidence) *table.Table {
	if t == nil {
		return nil
	}
	sp, ok := specs[AreaPreset(area)]
	keep := filterRows(t, f)
	if !ok || sp.passthrough {
		out := &table.Table{Name: t.Name, Columns: append([]table.Column(nil), t.Columns...)}
		// The rows are the bundle's, each capped at its length so that an
		// append to one (a derived column) copies it; nothing writes into
		// a rolled-up row, which saves copying every cell of the largest
		// tables on every view.
		if len(keep) > 0 {
			out.Rows = make([][]any, len(keep))
		}
		for k, i := range keep {
			r := t.Rows[i]
			out.Rows[k] = r[:len(r):len(r)]
		}
		out.Total = int64(len(out.Rows))
		return out
	}

	// Output columns: trace, rank, keys, values in source order, then derived.
	var outCols []table.Column
	var src []int
	var aggs []agg
	isKey := map[string]bool{}
	for _, k := range append([]string{"trace", "rank"}, sp.keys...) {
		isKey[k] = true
		if i := t.Col(k); i >= 0 {
			outCols = append(outCols, t.Columns[i])
			src = append(src, i)
			aggs = append(aggs, -1)
		}
	}
	nkeys := len(src)
	for i, c := range t.Columns {
		if isKey[c.Name] {
			continue
		}
		a, ok := sp.values[c.Name]
		if _, am := sp.argmax[c.Name]; !ok && !am {
			continue
		}
		if a == aggSteps {
			c = table.Column{Name: "steps", Type: "BIGINT", Unit: "COUNT", Doc: "Steps (>= 0) among the merged rows."}
		}
		outCols = append(outCols, c)
		src = append(src, i)
		if _, am := sp.argmax[c.Name]; am {
			aggs = append(aggs, -2)
		} else {
			aggs = append(aggs, a)
		}
	}

	// Per output column: the argmax column's source and output indexes.
	argBy := make([]int, len(outCols))
	argCur := make([]int, len(outCols))
	hasHist := false
	for j := nkeys; j < len(outCols); j++ {
		switch aggs[j] {
		case aggHist:
			hasHist = true
		case -2:
			by := t.Col(sp.argmax[t.Columns[src[j]].Name])
			cur := -1
			for x := nkeys; x < len(outCols); x++ {
				if src[x] == by {
					cur = x
				}
			}
			argBy[j], argCur[j] = by, cur
		}
	}

	type group struct {
		row   []any
		sums  []sum
		hists []Hist
		steps []int // the steps >= 0 seen, repeats included
	}
	// Groups are keyed by the text fmt's %v gives each key cell, NUL
	// separated (cells whose text is equal merge), built without fmt.
	groups := map[string]*group{}
	var order []*group
	var kb []byte
	for _, ri := range keep {
		r := t.Rows[ri]
		kb = kb[:0]
		for j := 0; j < nkeys; j++ {
			kb = appendKeyText(kb, r[src[j]])
			kb = append(kb, 0)
		}
		g := groups[string(kb)]
		if g == nil {
			g = &group{row: make([]any, len(outCols)), sums: make([]sum, len(outCols))}
			if hasHist {
				g.hists = make([]Hist, len(outCols))
			}
			for j := 0; j < nkeys; j++ {
				g.row[j] = r[src[j]]
			}
			groups[string(kb)] = g
			order = append(order, g)
		}
		for j := nkeys; j < len(outCols); j++ {
			v := r[src[j]]
			switch aggs[j] {
			case aggSum:
				g.sums[j].add(v)
			case aggMin:
				if v != nil && (g.row[j] == nil || less(v, g.row[j])) {
					g.row[j] = v
				}
			case aggMax:
				if v != nil && (g.row[j] == nil || less(g.row[j], v)) {
					g.row[j] = v
				}
			case aggHist:
				h := g.hists[j]
				if h == nil {
					h = Hist{}
					g.hists[j] = h
				}
				if s, ok := v.(string); ok {
					h.addText(s)
				}
			case aggSteps:
				if s, ok := toInt(v); ok && s >= 0 {
					g.steps = append(g.steps, int(s))
				}
			case -2:
				by, cur := argBy[j], argCur[j]
				// The row's own maximum decides: take v when this row's max is the group's max so far.
				if cur < 0 || r[by] == nil {
					break
				}
				best := g.row[cur]
				if aggs[cur] == aggSum {
					best = g.sums[cur].value()
				}
				if g.row[j] == nil || !less(r[by], best) {
					g.row[j] = v
				}
			}
		}
	}
	out := &table.Table{Name: t.Name, Columns: outCols}
	if len(order) > 0 {
		out.Rows = make([][]any, 0, len(order))
	}
	for _, g := range order {
		for j := nkeys; j < len(outCols); j++ {
			switch aggs[j] {
			case aggSum:
				g.row[j] = g.sums[j].value()
			case aggHist:
				if h := g.hists[j]; h != nil {
					g.row[j] = h.String()
				}
			case aggSteps:
				g.row[j] = distinct(g.steps)
			}
		}
		out.Rows = append(out.Rows, g.row)
	}
	if sp.derive != nil {
		sp.derive(out, ev)
	}
	sortRows(out, sp.sortBy, nkeys)
	out.Total = int64(len(out.Rows))
	return out
}

// filterRows returns the indexes of the rows that pass f.
func filterRows(t *table.Table, f Filter) []int {
	ct, cr, cs, cp, cst := t.Col("trace"), t.Col("rank"), t.Col("step"), t.Col("phase"), t.Col("stream")
	var keep []int
	for i, r := range t.Rows {
		if f.Trace != "" && ct >= 0 && r[ct] != f.Trace {
			continue
		}
		if f.HasRank && cr >= 0 {
			if v, ok := toInt(r[cr]); !ok || v != int64(f.Rank) {
				continue
			}
		}
		if f.HasStep && cs >= 0 {
			if v, ok := toInt(r[cs]); !ok || v != int64(f.Step) {
				continue
			}
		}
		if f.Phase != "" && cp >= 0 && r[cp] != f.Phase {
			continue
		}
		if f.HasStream && cst >= 0 {
			if v, ok := toInt(r[cst]); !ok || v != f.Stream {
				continue
			}
		}
		keep = append(keep, i)
	}
	return keep
}

func sortRows(t *table.Table, by string, nkeys int) {
	bi := t.Col(by)
	sort.SliceStable(t.Rows, func(i, j int) bool {
		a, b := t.Rows[i], t.Rows[j]
		for k := 0; k < 2 && k < nkeys; k++ { // trace, rank ascending
			if a[k] != b[k] {
				return less(a[k], b[k])
			}
		}
		if bi >= 0 && a[bi] != b[bi] {
			return less(b[bi], a[bi])
		}
		for k := 2; k < nkeys; k++ {
			if a[k] != b[k] {
				return less(a[k], b[k])
			}
		}
		return false
	})
}

// distinct returns how many different values vs holds (sorting it).
func distinct(vs []int) int64 {
	slices.Sort(vs)
	n := int64(0)
	for i, v := range vs {
		if i == 0 || v != vs[i-1] {
			n++
		}
	}
	return n
}

// sum adds up a column's cells the way repeated addCell calls would
// (int64 while every value is one, float64 once any is not; NULLs skipped)
// without boxing each partial sum.
type sum struct {
	kind uint8 // 0 nothing yet, 1 int64 in i, 2 float64 in f, 3 another value in v
	i    int64
	f    float64
	v    any
}

func (s *sum) add(b any) {
	if b == nil {
		return
	}
	switch s.kind {
	case 0:
		switch x := b.(type) {
		case int64:
			s.kind, s.i = 1, x
		case float64:
			s.kind, s.f = 2, x
		default:
			s.kind, s.v = 3, b
		}
		return
	case 1:
		if x, ok := b.(int64); ok {
			s.i += x
			return
		}
		bf, _ := toFloat(b)
		s.kind, s.f = 2, float64(s.i)+bf
	case 2:
		bf, _ := toFloat(b)
		s.f += bf
	case 3:
		af, _ := toFloat(s.v)
		bf, _ := toFloat(b)
		s.kind, s.f, s.v = 2, af+bf, nil
	}
}

// value is the sum as addCell would have left it.
func (s *sum) value() any {
	switch s.kind {
	case 1:
		return s.i
	case 2:
		return s.f
	case 3:
		return s.v
	}
	return nil
}

// appendKeyText appends the text fmt's %v gives a cell.
func appendKeyText(b []byte, v any) []byte {
	switch x := v.(type) {
	case string:
		return append(b, x...)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case bool:
		return strconv.AppendBool(b, x)
	case nil:
		return append(b, "<nil>"...)
	}
	return fmt.Append(b, v)
}

// toInt reads an integer cell.
func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case float64:
		return int64(x), true
	}
	return 0, false
}

// toFloat reads a numeric cell.
func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func addCell(a, b any) any {
	if b == nil {
		return a
	}
	if a == nil {
		return b
	}
	ai, aok := a.(int64)
	bi, bok := b.(int64)
	if aok && bok {
		return ai + bi
	}
	af, _ := toFloat(a)
	bf, _ := toFloat(b)
	return af + bf
}

// less orders cells: nil first, then numbers, bools, strings.
func less(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b != nil
	}
	af, aok := toFloat(a)
	bf, bok := toFloat(b)
	if aok && bok {
		return af < bf
	}
	if aok != bok {
		return aok
	}
	if as, ok := a.(string); ok {
		if bs, ok := b.(string); ok {
			return as < bs
		}
	}
	return fmt.Sprint(a) < fmt.Sprint(b)
}

// Cell returns row r's value of the named column, or nil.
func Cell(t *table.Table, r int, col string) any {
	i := t.Col(col)
	if i < 0 || r < 0 || r >= len(t.Rows) {
		return nil
	}
	return t.Rows[r][i]
}

// Int returns row r's named column as an integer (0 when absent or NULL).
func Int(t *table.Table, r int, col string) int64 {
	v, _ := toInt(Cell(t, r, col))
	return v
}

// Float returns row r's named column as a float (0 when absent or NULL).
func Float(t *table.Table, r int, col string) float64 {
	v, _ := toFloat(Cell(t, r, col))
	return v
}

// Str returns row r's named column as a string ("" when absent or NULL).
func Str(t *table.Table, r int, col string) string {
	switch v := Cell(t, r, col).(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}

// Bool returns row r's named column as a bool.
func Bool(t *table.Table, r int, col string) bool {
	v, _ := Cell(t, r, col).(bool)
	return v
}

func addColumn(t *table.Table, c table.Column, f func(r int) any) {
	t.Columns = append(t.Columns, c)
	for i := range t.Rows {
		t.Rows[i] = append(t.Rows[i], f(i))
	}
}

func pct(num, den float64) any {
	if den <= 0 {
		return nil
	}
	return float64(int64(num/den*10000+0.5)) / 100
}

// rankBusy returns the rolled-up busy_ns of (trace, rank).
func rankBusy(ev *Evidence, trace string, rank int64) float64 {
	if ev == nil {
		return 0
	}
	t := ev.Tables["ranks"]
	if t == nil {
		return 0
	}
	for i := range t.Rows {
		if Str(t, i, "trace") == trace && Int(t, i, "rank") == rank {
			return Float(t, i, "busy_ns")
		}
	}
	return 0
}

func deriveKernels(t *table.Table, ev *Evidence) {
	addColumn(t, table.Column{Name: "mean_ns", Type: "BIGINT", Unit: "DURATION_NS", Doc: "Mean duration."}, func(r int) any {
		if n := Int(t, r, "count"); n > 0 {
			return Int(t, r, "total_ns") / n
		}
		return nil
	})
	addColumn(t, table.Column{Name: "p50_ns", Type: "BIGINT", Unit: "DURATION_NS", Doc: "Median duration (from the histogram)."}, func(r int) any {
		return ParseHist(Str(t, r, "hist")).Quantile(0.5, Int(t, r, "min_ns"), Int(t, r, "max_ns"))
	})
	addColumn(t, table.Column{Name: "p99_ns", Type: "BIGINT", Unit: "DURATION_NS", Doc: "99th percentile duration (from the histogram)."}, func(r int) any {
		return ParseHist(Str(t, r, "hist")).Quantile(0.99, Int(t, r, "min_ns"), Int(t, r, "max_ns"))
	})
	addColumn(t, table.Column{Name: "share_pct", Type: "DOUBLE", Unit: "PCT", Doc: "total_ns as a share of the rank's GPU busy time in the filter."}, func(r int) any {
		return pct(Float(t, r, "total_ns"), rankBusy(ev, Str(t, r, "trace"), Int(t, r, "rank")))
	})
}

func deriveRanks(t *table.Table, _ *Evidence) {
	addColumn(t, table.Column{Name: "span_ns", Type: "BIGINT", Unit: "DURATION_NS", Doc: "busy_ns + idle_ns: the GPU span the merged rows cover."}, func(r int) any {
		return Int(t, r, "busy_ns") + Int(t, r, "idle_ns")
	})
	addColumn(t, table.Column{Name: "idle_pct", Type: "DOUBLE", Unit: "PCT", Doc: "idle_ns as a share of span_ns."}, func(r int) any {
		return pct(Float(t, r, "idle_ns"), Float(t, r, "busy_ns")+Float(t, r, "idle_ns"))
	})
	addColumn(t, table.Column{Name: "comm_pct", Type: "DOUBLE", Unit: "PCT", Doc: "comm_ns as a share of busy_ns."}, func(r int) any {
		return pct(Float(t, r, "comm_ns"), Float(t, r, "busy_ns"))
	})
	addColumn(t, table.Column{Name: "mean_step_ns", Type: "BIGINT", Unit: "DURATION_NS", Doc: "step_ns / steps."}, func(r int) any {
		if n := Int(t, r, "steps"); n > 0 {
			return Int(t, r, "step_ns") / n
		}
		return nil
	})
	// Across the ranks of each trace: compute time against the median rank's
	// (the straggler has the largest), and the spread of busy time.
	medians := map[string]float64{}
	byTrace := map[string][]float64{}
	for r := range t.Rows {
		byTrace[Str(t, r, "trace")] = append(byTrace[Str(t, r, "trace")], Float(t, r, "compute_ns"))
	}
	for tr, vs := range byTrace {
		sort.Float64s(vs)
		m := vs[len(vs)/2]
		if len(vs)%2 == 0 {
			m = (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
		}
		medians[tr] = m
	}
	addColumn(t, table.Column{Name: "compute_vs_median_pct", Type: "DOUBLE", Unit: "PCT", Doc: "compute_ns over the median rank's compute_ns in the same trace, minus 100 (the straggler has the largest)."}, func(r int) any {
		m := medians[Str(t, r, "trace")]
		if m <= 0 || len(byTrace[Str(t, r, "trace")]) < 2 {
			return nil
		}
		v := pct(Float(t, r, "compute_ns")-m, m)
		return v
	})
}

func deriveMemcpy(t *table.Table, _ *Evidence) {
	addColumn(t, table.Column{Name: "gbps", Type: "DOUBLE", Unit: "GBPS", Doc: "bytes / total_ns (GB/s)."}, func(r int) any {
		if d := Float(t, r, "total_ns"); d > 0 && Int(t, r, "bytes") > 0 {
			return float64(int64(Float(t, r, "bytes")/d*100+0.5)) / 100
		}
		return nil
	})
}

func deriveGaps(t *table.Table, _ *Evidence) {
	addColumn(t, table.Column{Name: "p50_ns", Type: "BIGINT", Unit: "DURATION_NS", Doc: "Median interval (from the histogram)."}, func(r int) any {
		return ParseHist(Str(t, r, "hist")).Quantile(0.5, 0, Int(t, r, "max_ns"))
	})
	addColumn(t, table.Column{Name: "p99_ns", Type: "BIGINT", Unit: "DURATION_NS", Doc: "99th percentile interval (from the histogram)."}, func(r int) any {
		return ParseHist(Str(t, r, "hist")).Quantile(0.99, 0, Int(t, r, "max_ns"))
	})
}

func deriveLaunch(t *table.Table, _ *Evidence) {
	addColumn(t, table.Column{Name: "mean_cpu_ns", Type: "BIGINT", Unit: "DURATION_NS", Doc: "Mean call duration."}, func(r int) any {
		if n := Int(t, r, "launches"); n > 0 {
			return Int(t, r, "cpu_ns") / n
		}
		return nil
	})
	addColumn(t, table.Column{Name: "p99_cpu_ns", Type: "BIGINT", Unit: "DURATION_NS", Doc: "99th percentile call duration."}, func(r int) any {
		return ParseHist(Str(t, r, "cpu_hist")).Quantile(0.99, 0, 0)
	})
	addColumn(t, table.Column{Name: "mean_delay_ns", Type: "BIGINT", Unit: "DURATION_NS", Doc: "Mean launch delay (GPU start - call start)."}, func(r int) any {
		if n := Int(t, r, "with_gpu"); n > 0 {
			return Int(t, r, "delay_ns") / n
		}
		return nil
	})
	addColumn(t, table.Column{Name: "p50_delay_ns", Type: "BIGINT", Unit: "DURATION_NS", Doc: "Median launch delay."}, func(r int) any {
		return ParseHist(Str(t, r, "delay_hist")).Quantile(0.5, 0, 0)
	})
	addColumn(t, table.Column{Name: "p99_delay_ns", Type: "BIGINT", Unit: "DURATION_NS", Doc: "99th percentile launch delay."}, func(r int) any {
		return ParseHist(Str(t, r, "delay_hist")).Quantile(0.99, 0, 0)
	})
}

func deriveOverlap(t *table.Table, _ *Evidence) {
	addColumn(t, table.Column{Name: "comm_overlap_pct", Type: "DOUBLE", Unit: "PCT", Doc: "overlap_ns / comm_ns: communication time overlapped by computation."}, func(r int) any {
		return pct(Float(t, r, "overlap_ns"), Float(t, r, "comm_ns"))
	})
}
