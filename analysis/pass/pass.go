// Package pass computes evidence areas in Go, in one pass over rows that
// DuckDB hands over, where the area's SQL costs more than reading its
// input: the window sorts, sweeps and ASOF joins of a preset run in a few
// milliseconds in Go over the same rows (the ops preset's, on the 48 MB
// vLLM trace: 22,000 operator calls).
//
// A preset with a `-- PASS: cte` line (sql.Preset.PassInput) keeps its SQL
// as the definition: the pass reads the rows of that CTE and returns the
// rows the whole preset returns, in its order and with its column types,
// and a test holds the two equal on every shared trace
// (pipeline/pass_test.go). Running the input query and keeping the result
// as the area's evidence_<area> table is pipeline's (runPreset), which also
// decides when a slice is too large to hold in memory and leaves it to the
// SQL; the definitions are sql/'s. The package imports the standard
// library and analysis/table only.
package pass

import (
	"fmt"
	"slices"

	"github.com/tracebook/tracebook/analysis/table"
)

// Pass is one area's computation: it takes the input rows one at a time
// and then returns the area's table.
type Pass interface {
	// Add takes one input row, in the columns Input names.
	Add(row table.Cells) error
	// Table returns the area's rows (named after the area).
	Table() *table.Table
}

// Area is an area that has a pass.
type Area struct {
	// Input names the columns of the input rows, in order (the PASS CTE's).
	Input []string
	// New starts a pass.
	New func() Pass
}

// areas holds the areas with a pass, by name.
var areas = map[string]Area{
	"ops": {Input: opsInput, New: func() Pass { return newOps() }},
}

// For returns the pass of an area, false when it has none.
func For(area string) (Area, bool) {
	a, ok := areas[area]
	return a, ok
}

// CheckInput says whether an input query's columns are the ones the area
// reads, in order.
func (a Area) CheckInput(columns []string) error {
	if !slices.Equal(columns, a.Input) {
		return fmt.Errorf("pass: input columns %v, want %v", columns, a.Input)
	}
	return nil
}

// nstr is a text cell that may be NULL. DuckDB orders NULL after every
// text (NULLS LAST, its default), and groups the NULLs together.
type nstr struct {
	s    string
	null bool
}

// cmpNstr orders two nstr as DuckDB's ORDER BY ... ASC does: byte order,
// NULL last.
func cmpNstr(a, b nstr) int {
	switch {
	case a.null && b.null:
		return 0
	case a.null:
		return 1
	case b.null:
		return -1
	case a.s < b.s:
		return -1
	case a.s > b.s:
		return 1
	}
	return 0
}

// str reads a text cell as an nstr.
func str(row table.Cells, col int) nstr {
	s, ok := row.Str(col)
	return nstr{s: s, null: !ok}
}

// val is an nstr as a table cell.
func (n nstr) val() any {
	if n.null {
		return nil
	}
	return n.s
}
