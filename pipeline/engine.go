package pipeline

import (
	"context"

	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/analysis/trace"
)

// Engine is the database the pipeline and the notebook run against;
// internal/duck.DB implements it.
type Engine interface {
	// Query runs SQL with parameters and returns at most maxRows rows; the
	// table's Total counts all rows.
	Query(ctx context.Context, sql string, maxRows int, args ...any) (*table.Table, error)
	// Load loads trace files as one trace, atomically, reporting progress.
	Load(ctx context.Context, paths []string, opts trace.LoadOptions, progress func(trace.Progress)) (*trace.LoadResult, error)
	// Drop removes a loaded trace.
	Drop(ctx context.Context, name string) error
	// Columns returns every table's and view's columns, by table name.
	Columns(ctx context.Context) (map[string][]table.Column, error)
}
