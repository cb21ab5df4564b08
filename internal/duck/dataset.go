//go:build cgo

package duck

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/trace"
)

// A Parquet dataset is the store written out as plain Parquet files, one
// folder per trace and rank:
//
//	DIR/trace=<name>/rank=<n>/traces.parquet   its rows of traces
//	DIR/trace=<name>/rank=<n>/threads.parquet  its rows of threads
//	DIR/trace=<name>/rank=<n>/events.parquet   its events
//
// The folders only organise the files: every file holds all the columns
// of its table (trace and rank included), so any engine that reads Parquet
// reads them as they are, and DuckDB reads a whole job with one glob. The
// name in a folder is the trace name URL-path-escaped. Each folder is
// written on its own (ExportDataset), so the processes that load one rank
// file each can write their parts of one job into the same DIR, in
// parallel, on any machine that sees it.

// datasetTables are the tables a dataset folder holds, in load order.
var datasetTables = []string{"traces", "threads", "events"}

// ExportDataset writes the traces loaded in the database (only the one
// named trace when it is not "") into dir as a Parquet dataset, one folder
// per trace and rank, replacing the folders it writes. Each file is
// written under a temporary name and renamed, so a reader sees whole files.
func (d *DB) ExportDataset(ctx context.Context, dir, trace string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	rows, err := d.db.QueryContext(ctx, `SELECT DISTINCT trace, rank FROM traces WHERE ($1 = '' OR trace = $1) ORDER BY 1, 2`, trace)
	if err != nil {
		return err
	}
	type part struct {
		trace string
		rank  int
	}
	var parts []part
	for rows.Next() {
		var p part
		if err := rows.Scan(&p.trace, &p.rank); err != nil {
			rows.Close()
			return err
		}
		parts = append(parts, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(parts) == 0 {
		return fmt.Errorf("export: no trace %q is loaded", trace)
	}
	for _, p := range parts {
		folder := filepath.Join(dir, "trace="+url.PathEscape(p.trace), "rank="+strconv.Itoa(p.rank))
		if err := os.MkdirAll(folder, 0o755); err != nil {
			return err
		}
		for _, table := range datasetTables {
			final := filepath.Join(folder, table+".parquet")
			tmp := final + ".tmp" + strconv.Itoa(os.Getpid())
			q := fmt.Sprintf(`COPY (SELECT * FROM %s WHERE trace = %s AND rank = %d) TO %s (FORMAT parquet, COMPRESSION zstd)`,
				table, quote(p.trace), p.rank, quote(tmp))
			if _, err := d.db.ExecContext(ctx, q); err != nil {
				os.Remove(tmp)
				return fmt.Errorf("export %s rank %d to %s: %w", p.trace, p.rank, folder, err)
			}
			if err := os.Rename(tmp, final); err != nil {
				os.Remove(tmp)
				return err
			}
		}
	}
	return nil
}

// loadDataset loads every trace of the Parquet dataset dir in one
// transaction: a trace whose name is taken leaves the database as it was.
func (d *DB) loadDataset(ctx context.Context, dir string, opts trace.LoadOptions) (*trace.LoadResult, error) {
	if opts != (trace.LoadOptions{}) {
		return nil, fmt.Errorf("load %s: a Parquet dataset loads as it was written (--name, --rank, --window, --steps and --no-python apply to trace files)", dir)
	}
	glob := func(table string) string {
		return quote(filepath.Join(dir, "trace=*", "rank=*", table+".parquet"))
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	names, err := queryStrings(ctx, tx, `SELECT DISTINCT trace FROM read_parquet(`+glob("traces")+`) ORDER BY 1`)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", dir, err)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("load %s: the dataset holds no traces rows", dir)
	}
	for _, n := range names {
		var taken int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM traces WHERE trace = ?`, n).Scan(&taken); err != nil {
			return nil, err
		}
		if taken > 0 {
			return nil, fmt.Errorf("load %q from %s: %w (drop it first)", n, dir, ErrDuplicateTrace)
		}
	}
	strs, err := readDict(ctx, tx)
	if err != nil {
		return nil, err
	}
	for _, table := range datasetTables {
		if table == "events" {
			// The lean table, its strings interned first.
			from := `(SELECT trace, file_id, rank, ` + eventColumns + ` FROM read_parquet(` + glob(table) + `, union_by_name = true))`
			err = strs.internFrom(ctx, tx, from)
			if err == nil {
				_, err = tx.ExecContext(ctx, eventsInsert("tb_events", from))
			}
		} else {
			_, err = tx.ExecContext(ctx, `INSERT INTO `+table+` BY NAME SELECT * FROM read_parquet(`+glob(table)+`, union_by_name = true)`)
		}
		if err != nil {
			return nil, fmt.Errorf("load %s: %s: %w", dir, table, err)
		}
	}
	res := &trace.LoadResult{Trace: strings.Join(names, ", ")}
	if err := tx.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(events), 0) FROM traces WHERE list_contains(?::VARCHAR[], trace)`, names).Scan(&res.Files, &res.Events); err != nil {
		return nil, err
	}
	rrows, err := tx.QueryContext(ctx, `SELECT DISTINCT rank FROM traces WHERE list_contains(?::VARCHAR[], trace) ORDER BY 1`, names)
	if err != nil {
		return nil, err
	}
	for rrows.Next() {
		var r int
		if err := rrows.Scan(&r); err != nil {
			rrows.Close()
			return nil, err
		}
		res.Ranks = append(res.Ranks, r)
	}
	rrows.Close()
	var mismatch int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT t.trace, t.file_id, t.rank, t.events, count(e.idx) AS n
		FROM traces t LEFT JOIN events e USING (trace, file_id, rank)
		WHERE list_contains(?::VARCHAR[], t.trace) GROUP BY ALL) WHERE n <> events`, names).Scan(&mismatch); err != nil {
		return nil, err
	}
	if mismatch > 0 {
		return nil, fmt.Errorf("load %s: %w: %d file(s) of the traces table do not hold the events it counts (a part was written while it was read, or is missing)", dir, errIncompleteDataset, mismatch)
	}
	return res, tx.Commit()
}

var errIncompleteDataset = errors.New("incomplete dataset")
