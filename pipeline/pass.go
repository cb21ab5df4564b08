package pipeline

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"

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

// passMaxRows bounds the input rows a pass holds: about 110 bytes each
// (the ops pass's call and its two sweep points), so 8,000,000 rows take
// about 880 MB; a larger slice is left to the preset's SQL, which DuckDB
// spills (a variable so that a test can make a slice too large). The
// ×250 vLLM trace's 5.6 M operator calls: the ops area in 10.3 s instead
// of the SQL's 30.6 s, the process at 1.16 GB while the pass reads them,
// under the report's peak (1.57 GB, the cross-view's; 1.56 GB with the
// SQL).
var passMaxRows int64 = 8_000_000

// runPass computes an area in Go (analysis/pass) where it has a pass and
// the engine can stream its input and store the result: it reads the
// input rows of the preset (sql.Preset.PassInput) after BuildEvidenceBase,
// keeps the rows as evidence_<area> and returns them. ok is false where
// the area is left to its SQL: no pass, an engine that cannot, a slice
// larger than passMaxRows, or a pass that failed (the SQL is the
// definition; pipeline/pass_test.go holds the two equal).
func runPass(ctx context.Context, eng Engine, p sql.Preset, args []any) (t *table.Table, ok bool, err error) {
	a, has := pass.For(p.Name)
	rs, streams := eng.(RowStreamer)
	tw, writes := eng.(TableWriter)
	input, hasInput := p.PassInput()
	if !has || !streams || !writes || !hasInput || disablePass {
		return nil, false, nil
	}
	n, err := eng.Query(ctx, a.Count, 0)
	if err != nil || len(n.Rows) != 1 {
		return nil, false, ctx.Err()
	}
	rows, _ := table.Row(n.Rows[0]).Int(0)
	if rows > passMaxRows {
		return nil, false, nil
	}
	ps := a.New(int(rows))
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
	if rows >= passFreeRows {
		// The pass's input is garbage now. The Go runtime would hand its
		// pages back to the system slowly, while the presets that follow
		// run DuckDB's memory up beside them: ×21 vLLM (460,000 operator
		// rows), the report's peak RSS 296 MiB against 332 MiB, at the
		// same wall and CPU (3 alternating pairs, medians).
		debug.FreeOSMemory()
	}
	return t, true, nil
}

// passFreeRows is the input rows past which runPass hands the Go heap's
// free pages back to the system once its pass is done: a smaller pass's
// garbage is a few MB, not worth a collection.
const passFreeRows = 250_000

// disablePass leaves every area to its SQL: $TRACEBOOK_NO_PASS set, to time
// a report with and without the passes side by side.
var disablePass = os.Getenv("TRACEBOOK_NO_PASS") != ""
