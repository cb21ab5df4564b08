//go:build !cgo

package duck

import (
	"context"
	"database/sql"

	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/analysis/trace"
)

// DB is unavailable without cgo: Open returns ErrNoCgo.
type DB struct{}

// Open returns ErrNoCgo: DuckDB links through cgo.
func Open(path string, opts Options) (*DB, error) { return nil, ErrNoCgo }

// Path returns "".
func (d *DB) Path() string { return "" }

// WaitCache returns at once.
func (d *DB) WaitCache() {}

// Close does nothing.
func (d *DB) Close() error { return nil }

// SQL returns nil.
func (d *DB) SQL() *sql.DB { return nil }

// Exec returns ErrNoCgo.
func (d *DB) Exec(ctx context.Context, query string, args ...any) error { return ErrNoCgo }

// Query returns ErrNoCgo.
func (d *DB) Query(ctx context.Context, query string, maxRows int, args ...any) (*table.Table, error) {
	return nil, ErrNoCgo
}

// Columns returns ErrNoCgo.
func (d *DB) Columns(ctx context.Context) (map[string][]table.Column, error) { return nil, ErrNoCgo }

// Traces returns ErrNoCgo.
func (d *DB) Traces(ctx context.Context) ([]Trace, error) { return nil, ErrNoCgo }

// Drop returns ErrNoCgo.
func (d *DB) Drop(ctx context.Context, name string) error { return ErrNoCgo }

// Load returns ErrNoCgo.
func (d *DB) Load(ctx context.Context, paths []string, opts trace.LoadOptions, progress func(trace.Progress)) (*trace.LoadResult, error) {
	return nil, ErrNoCgo
}

func (d *DB) ExportDataset(ctx context.Context, dir, trace string) error { return ErrNoCgo }

// WriteTable returns ErrNoCgo.
func (d *DB) WriteTable(ctx context.Context, name string, t *table.Table) error { return ErrNoCgo }
