package pipeline

import (
	"context"
	"fmt"
	"os"

	"github.com/tracebook/tracebook/analysis/pass"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/sql"
)

// TableWriter is an Engine that can store a table Go computed (duck.DB
// can): an area that analysis/pass computes is kept as evidence_<area>
// all the same, for SQL to read.
type TableWriter interface {
	WriteTable(ctx context.Context, name string, t *table.Table) error
}

// runPass computes an area in Go (analysis/pass) where it has a pass and
// the engine can stream its input and store the result: it reads the
// input rows of the preset (sql.Preset.PassInput) after BuildEvidenceBase,
// keeps the rows as evidence_<area> and returns them. ok is false where
// the area is left to its SQL: no pass, an engine that cannot, or a pass
// that failed (the SQL is the definition; pipeline/pass_test.go holds the
// two equal). The pass reads its rows as DuckDB streams them, in the PASS
// line's order, and holds one thread's open calls at a time: its memory
// does not grow with the slice (DuckDB's sort spills what passes its
// memory limit).
func runPass(ctx context.Context, eng Engine, p sql.Preset, args []any) (t *table.Table, ok bool, err error) {
	a, has := pass.For(p.Name)
	rs, streams := eng.(RowStreamer)
	tw, writes := eng.(TableWriter)
	input, hasInput := p.PassInput()
	if !has || !streams || !writes || !hasInput || disablePass {
		return nil, false, nil
	}
	ps := a.New()
	start := func(cols []string) error { return a.CheckInput(cols) }
	if err := rs.QueryEach(ctx, input, start, ps.Add, args[:paramCount(input)]...); err != nil {
		return nil, false, ctx.Err()
	}
	t = ps.Table()
	if err := tw.WriteTable(ctx, "evidence_"+p.Name, t); err != nil {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		return nil, false, fmt.Errorf("evidence %s: %w", p.Name, err)
	}
	return t, true, nil
}

// disablePass leaves every area to its SQL: $TRACEBOOK_NO_PASS set, to time
// a report with and without the passes side by side.
var disablePass = os.Getenv("TRACEBOOK_NO_PASS") != ""
