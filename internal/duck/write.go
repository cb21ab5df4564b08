//go:build cgo

package duck

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/tracebook/tracebook/analysis/table"
)

// WriteTable stores t as the table name, replacing any table of that name:
// its columns with their DuckDB types (table.Column.Type), its rows in
// order, through DuckDB's appender. An evidence area that Go computes
// (analysis/pass) is kept so, as evidence_<area>, for SQL to read as if the
// preset had made it. On an error the table is dropped.
func (d *DB) WriteTable(ctx context.Context, name string, t *table.Table) (err error) {
	defer timeStatement("WRITE TABLE " + name)()
	cols := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		if c.Type == "" || strings.ContainsAny(c.Type, ";\"'") {
			return fmt.Errorf("write %s: column %s has no usable type (%q)", name, c.Name, c.Type)
		}
		cols[i] = quoteIdent(c.Name) + " " + c.Type
	}
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "CREATE OR REPLACE TABLE "+quoteIdent(name)+" ("+strings.Join(cols, ", ")+")"); err != nil {
		return d.diskFull(err)
	}
	defer func() {
		if err != nil {
			conn.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+quoteIdent(name))
		}
	}()
	return d.diskFull(conn.Raw(func(dc any) error {
		a, err := duckdb.NewAppenderFromConn(dc.(driver.Conn), "", name)
		if err != nil {
			return err
		}
		vals := make([]driver.Value, len(t.Columns))
		for _, row := range t.Rows {
			if err := ctx.Err(); err != nil {
				a.Close()
				return err
			}
			for i, v := range row {
				vals[i] = v
			}
			if err := a.AppendRow(vals...); err != nil {
				a.Close()
				return fmt.Errorf("write %s: %w", name, err)
			}
		}
		return a.Close()
	}))
}

// quoteIdent quotes an SQL identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
