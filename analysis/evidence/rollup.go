package evidence

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

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
	// Steady holds the steady state of each rank with a warm-up step
	// (SteadyOf).
	Steady []Steady
}

// Table returns an area's rolled-up table, or nil.
func (e *Evidence) Table(area string) *table.Table {
	if e == nil {
		return nil
	}
	return e.Tables[AreaPreset(area)]
}

// Merge says how one column of an area merges when rows are rolled up
// (MergeOf).
type Merge uint8

const (
	MergeKey     Merge = iota // an identity: rows merge only when it is equal
	MergeSlice                // step, phase or stream: a filter selects it, the rollup merges over it
	MergeSum                  // counts, durations, bytes: added up
	MergeMin                  // the least (min_, first_, timestamps)
	MergeMax                  // the largest (max_, last_, peak_)
	MergeHist                 // log-bucket histograms: merged
	MergeArgmax               // the value of the row where the column By is largest
	MergeDerived              // a share: dropped, and recomputed after the merge
	MergeSteps                // step counted: distinct steps >= 0, as the column steps
)

// ColumnMerge is how one column merges.
type ColumnMerge struct {
	Merge Merge
	By    string // MergeArgmax: the column whose largest value picks the row
}

// presetHeader is what an area preset's header says about merging: its
// MERGE line (rules, or none: unmerged) and each column's unit. The
// headers are read from sql/*.sql by TestPresetHeaders, which writes them
// into presetHeaders (headers_gen.go) and fails when they drift: the
// viewer module carries these few bytes instead of every preset's text.
type presetHeader struct {
	area     string
	unmerged bool     // MERGE: none
	rules    []string // the MERGE line: column, rule, column, rule, ...
	units    []string // column, unit, column, unit, ... in the header's order
}

// headerOf returns the header of area's preset; ok false when area has none.
func headerOf(area string) (h presetHeader, ok bool) {
	area = AreaPreset(area)
	for _, h := range presetHeaders {
		if h.area == area {
			return h, true
		}
	}
	return presetHeader{}, false
}

// lookup returns the value paired with key in kv (key, value, key, ...).
func lookup(kv []string, key string) (string, bool) {
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i] == key {
			return kv[i+1], true
		}
	}
	return "", false
}

// Merged reports whether the rows of area merge when rolled up: false for
// an area whose header says MERGE: none (overview, steps: one row per
// rank or step, kept as they are) and for a table that is no area.
func Merged(area string) bool {
	h, ok := headerOf(area)
	return ok && !h.unmerged
}

// MergeOf returns how column c of area merges, the one rule the rollup
// (RollupTable) and the single-file report's compaction
// (report.Compact) both follow. It is derived from the column's unit as
// the area's preset header documents it (the unit c carries when the
// header does not document it), and the header's MERGE line where the
// unit does not say (package sql documents the rules):
//   - the MERGE line's rule: key, sum, min, max, steps or argmax(col);
//   - trace and rank: identities; step, phase and stream: slices;
//   - HIST: merged histograms; PCT and SHARE: derived, recomputed;
//   - COUNT, DURATION_NS, BYTES, TIMESTAMP_NS: the least for a name that
//     starts with min_ or first_, the largest for max_, last_ or peak_,
//     else the sum (the least for a timestamp);
//   - any other unit (TEXT, INT, BOOL, ...): an identity.
func MergeOf(area string, c table.Column) ColumnMerge {
	h, _ := headerOf(area)
	if r, ok := lookup(h.rules, c.Name); ok {
		switch {
		case r == "key":
			return ColumnMerge{Merge: MergeKey}
		case r == "sum":
			return ColumnMerge{Merge: MergeSum}
		case r == "min":
			return ColumnMerge{Merge: MergeMin}
		case r == "max":
			return ColumnMerge{Merge: MergeMax}
		case r == "steps":
			return ColumnMerge{Merge: MergeSteps}
		case strings.HasPrefix(r, "argmax(") && strings.HasSuffix(r, ")"):
			return ColumnMerge{Merge: MergeArgmax, By: strings.TrimSpace(r[len("argmax(") : len(r)-1])}
		}
	}
	unit, ok := lookup(h.units, c.Name)
	if !ok {
		unit = c.Unit
	}
	n, u := c.Name, unit // units are written in capitals (package sql)
	switch {
	case n == "trace" || n == "rank":
		return ColumnMerge{Merge: MergeKey}
	case n == "step" || n == "phase" || n == "stream":
		return ColumnMerge{Merge: MergeSlice}
	case u == HistUnit:
		return ColumnMerge{Merge: MergeHist}
	case u == "PCT" || u == "SHARE":
		return ColumnMerge{Merge: MergeDerived}
	case u == "COUNT" || u == "DURATION_NS" || u == "BYTES" || u == "TIMESTAMP_NS":
		switch {
		case strings.HasPrefix(n, "min_") || strings.HasPrefix(n, "first_"):
			return ColumnMerge{Merge: MergeMin}
		case strings.HasPrefix(n, "max_") || strings.HasPrefix(n, "last_") || strings.HasPrefix(n, "peak_"):
			return ColumnMerge{Merge: MergeMax}
		case u == "TIMESTAMP_NS":
			return ColumnMerge{Merge: MergeMin}
		}
		return ColumnMerge{Merge: MergeSum}
	}
	return ColumnMerge{Merge: MergeKey}
}

// shapes holds, per merged area, what the rollup adds to the merged rows:
// the column to sort by (descending) and the derived columns. How each
// column merges is not here: MergeOf reads it from the preset's header.
var shapes = map[string]struct {
	sortBy string
	derive func(t *table.Table, ev *Evidence)
}{
	"kernels":     {"total_ns", deriveKernels},
	"sync":        {"blocked_ns", nil},
	"ops":         {"self_ns", nil},
	"ranks":       {"", deriveRanks},
	"memcpy":      {"total_ns", deriveMemcpy},
	"gaps":        {"idle_ns", deriveGaps},
	"launch":      {"cpu_ns", deriveLaunch},
	"overlap":     {"", deriveOverlap},
	"graphs":      {"", nil},
	"memory":      {"", nil},
	"capture":     {"total_ns", nil},
	"workload":    {"count", nil},
	"collectives": {"total_ns", nil},
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
	ev.Steady = steadyStates(b, f, ev)
	return ev
}

// RollupTable merges one area's rows for f. ev supplies the other areas'
// rolled-up tables that derived columns read (it may be nil).
func RollupTable(area string, t *table.Table, f Filter, ev *Evidence) *table.Table {
	if t == nil {
		return nil
	}
	keep := filterRows(t, f)
	if !Merged(area) {
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

	// Output columns: trace, rank, the other identities, the values in
	// source order, then the derived columns; slices and shares are
	// merged over.
	var outCols []table.Column
	var src []int
	var aggs []ColumnMerge
	cms := make([]ColumnMerge, len(t.Columns))
	for i, c := range t.Columns {
		cms[i] = MergeOf(area, c)
	}
	for _, first := range []bool{true, false} {
		for i, c := range t.Columns {
			if cms[i].Merge == MergeKey && (c.Name == "trace" || c.Name == "rank") == first {
				outCols = append(outCols, c)
				src = append(src, i)
				aggs = append(aggs, cms[i])
			}
		}
	}
	nkeys := len(src)
	for i, c := range t.Columns {
		switch cms[i].Merge {
		case MergeKey, MergeSlice, MergeDerived:
			continue
		case MergeSteps:
			c = table.Column{Name: "steps", Type: "BIGINT", Unit: "COUNT", Doc: "Steps (>= 0) among the merged rows."}
		}
		outCols = append(outCols, c)
		src = append(src, i)
		aggs = append(aggs, cms[i])
	}

	// Per output column: the argmax column's source and output indexes.
	argBy := make([]int, len(outCols))
	argCur := make([]int, len(outCols))
	hasHist := false
	for j := nkeys; j < len(outCols); j++ {
		switch aggs[j].Merge {
		case MergeHist:
			hasHist = true
		case MergeArgmax:
			by := t.Col(aggs[j].By)
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
			switch aggs[j].Merge {
			case MergeSum:
				g.sums[j].add(v)
			case MergeMin:
				if v != nil && (g.row[j] == nil || less(v, g.row[j])) {
					g.row[j] = v
				}
			case MergeMax:
				if v != nil && (g.row[j] == nil || less(g.row[j], v)) {
					g.row[j] = v
				}
			case MergeHist:
				h := g.hists[j]
				if h == nil {
					h = Hist{}
					g.hists[j] = h
				}
				if s, ok := v.(string); ok {
					h.addText(s)
				}
			case MergeSteps:
				if s, ok := toInt(v); ok && s >= 0 {
					g.steps = append(g.steps, int(s))
				}
			case MergeArgmax:
				by, cur := argBy[j], argCur[j]
				// The row's own maximum decides: take v when this row's max is the group's max so far.
				if cur < 0 || r[by] == nil {
					break
				}
				best := g.row[cur]
				if aggs[cur].Merge == MergeSum {
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
			switch aggs[j].Merge {
			case MergeSum:
				g.row[j] = g.sums[j].value()
			case MergeHist:
				if h := g.hists[j]; h != nil {
					g.row[j] = h.String()
				}
			case MergeSteps:
				g.row[j] = distinct(g.steps)
			}
		}
		out.Rows = append(out.Rows, g.row)
	}
	sh := shapes[AreaPreset(area)]
	if sh.derive != nil {
		sh.derive(out, ev)
	}
	sortRows(out, sh.sortBy, nkeys)
	out.Total = int64(len(out.Rows))
	return out
}

// Rows returns the indices of t's rows that pass f, unmerged: for a reader
// of a slice the rollup merges over, such as the stream each kernel ran on
// (the report's next lever reads a copy's stream from the bundle's kernels
// rows).
func (f Filter) Rows(t *table.Table) []int {
	if t == nil {
		return nil
	}
	return filterRows(t, f)
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
	// The share of the rank's summed kernel time (HTA's kernel breakdown,
	// and the base the report's charts and rows state): shares of the busy
	// union would add up past 100% where streams overlap.
	summed := map[string]float64{}
	rankKey := func(r int) string { return Str(t, r, "trace") + "\x00" + strconv.FormatInt(Int(t, r, "rank"), 10) }
	for r := range t.Rows {
		summed[rankKey(r)] += Float(t, r, "total_ns")
	}
	addColumn(t, table.Column{Name: "share_pct", Type: "DOUBLE", Unit: "PCT", Doc: "total_ns as a share of the rank's summed kernel time in the filter (every GPU event's duration, overlaps counted twice)."}, func(r int) any {
		return pct(Float(t, r, "total_ns"), summed[rankKey(r)])
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
	// (the straggler has the largest).
	type ranksOf struct{ compute, busy []int64 }
	byTrace := map[string]*ranksOf{}
	for r := range t.Rows {
		tr := Str(t, r, "trace")
		if byTrace[tr] == nil {
			byTrace[tr] = &ranksOf{}
		}
		byTrace[tr].compute = append(byTrace[tr].compute, Int(t, r, "compute_ns"))
		byTrace[tr].busy = append(byTrace[tr].busy, Int(t, r, "busy_ns"))
	}
	type median struct {
		v float64
		n int
	}
	medians := map[string]median{}
	for tr, rs := range byTrace {
		m, n := ComputeMedian(rs.compute, rs.busy)
		medians[tr] = median{m, n}
	}
	addColumn(t, table.Column{Name: "compute_vs_median_pct", Type: "DOUBLE", Unit: "PCT", Doc: "compute_ns over the median compute_ns of the trace's ranks that ran GPU work, minus 100 (the straggler has the largest)."}, func(r int) any {
		m := medians[Str(t, r, "trace")]
		if m.v <= 0 || m.n < 2 {
			return nil
		}
		return pct(Float(t, r, "compute_ns")-m.v, m.v)
	})
}

// ComputeMedian is the median rank's computation time, what a straggler
// is measured against: the ranks area's compute_vs_median_pct, the
// rank_straggler finding and its per-step measure (analysis/findings) all
// call it. compute and busy are the compute_ns and busy_ns of the ranks
// (one entry per rank, same order). Only ranks with GPU busy time count: a
// rank that ran no GPU work in the slice has no computation to compare (it
// is not a fast rank) and would pull the median down. For an even count
// the median is the mean of the middle two. n is how many ranks counted;
// the median is 0 when none did.
func ComputeMedian(compute, busy []int64) (median float64, n int) {
	vs := make([]int64, 0, len(compute))
	for i, c := range compute {
		if i < len(busy) && busy[i] > 0 {
			vs = append(vs, c)
		}
	}
	if len(vs) == 0 {
		return 0, 0
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i] < vs[j] })
	h := len(vs) / 2
	if len(vs)%2 == 0 {
		return (float64(vs[h-1]) + float64(vs[h])) / 2, len(vs)
	}
	return float64(vs[h]), len(vs)
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
	// The quantiles are the middles of log buckets: clamped to the exact
	// extremes, a p99 never passes the longest call (a bucket's middle did,
	// 471 ms for one call of 463 ms).
	addColumn(t, table.Column{Name: "p99_cpu_ns", Type: "BIGINT", Unit: "DURATION_NS", Doc: "99th percentile call duration."}, func(r int) any {
		return ParseHist(Str(t, r, "cpu_hist")).Quantile(0.99, Int(t, r, "min_cpu_ns"), Int(t, r, "max_cpu_ns"))
	})
	addColumn(t, table.Column{Name: "mean_delay_ns", Type: "BIGINT", Unit: "DURATION_NS", Doc: "Mean launch delay (GPU start - call start)."}, func(r int) any {
		if n := Int(t, r, "with_gpu"); n > 0 {
			return Int(t, r, "delay_ns") / n
		}
		return nil
	})
	addColumn(t, table.Column{Name: "p50_delay_ns", Type: "BIGINT", Unit: "DURATION_NS", Doc: "Median launch delay."}, func(r int) any {
		return ParseHist(Str(t, r, "delay_hist")).Quantile(0.5, Int(t, r, "min_delay_ns"), Int(t, r, "max_delay_ns"))
	})
	addColumn(t, table.Column{Name: "p99_delay_ns", Type: "BIGINT", Unit: "DURATION_NS", Doc: "99th percentile launch delay."}, func(r int) any {
		return ParseHist(Str(t, r, "delay_hist")).Quantile(0.99, Int(t, r, "min_delay_ns"), Int(t, r, "max_delay_ns"))
	})
}

func deriveOverlap(t *table.Table, _ *Evidence) {
	addColumn(t, table.Column{Name: "comm_overlap_pct", Type: "DOUBLE", Unit: "PCT", Doc: "overlap_ns / comm_ns: communication time overlapped by computation."}, func(r int) any {
		return pct(Float(t, r, "overlap_ns"), Float(t, r, "comm_ns"))
	})
}
