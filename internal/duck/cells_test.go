//go:build cgo

package duck

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"testing"
)

// Query reads a result of the types chunkCells reads from DuckDB's
// vectors, and gives what the driver's rows give through cell: the same
// values of the same Go types, NULLs, an ENUM's words, an unsigned integer
// past int64 as float64, the column types' names. A JSON column (which the
// driver decodes) or one of another type goes through the driver's rows.
// The cap on rows (maxRows) says that more remain on both paths.
func TestQueryReadsAsDriver(t *testing.T) {
	db := openTest(t, "-")
	ctx := context.Background()
	for _, tc := range []struct {
		q      string
		chunks bool
	}{
		{`SELECT range AS i, CAST(range % 100 AS INTEGER) AS i32, CAST(range % 7 AS TINYINT) AS i8, CAST(range % 300 AS SMALLINT) AS i16,
			CAST(range % 300 AS USMALLINT) AS u16, CAST(range % 9 AS UTINYINT) AS u8, CAST(range AS UINTEGER) AS u32,
			CAST(range AS UBIGINT) + CAST(CASE WHEN range = 3 THEN 18446744073709551000 ELSE 0 END AS UBIGINT) AS u64,
			range % 2 = 0 AS b, range / 3.0 AS f, CAST(range / 4 AS FLOAT) AS f32,
			CASE WHEN range % 5 = 0 THEN NULL ELSE 'a longer text than twelve, número ' || range END AS s,
			CAST(CASE WHEN range % 3 = 0 THEN 'kernel' ELSE 'python' END AS tb_kind) AS k,
			CASE WHEN range % 4 = 0 THEN NULL ELSE range END AS n, 'short' AS c, NULL::VARCHAR AS nv FROM range(?) ORDER BY i`, true},
		{`SELECT range AS i, '{"b": 1, "a": [2]}'::JSON AS j FROM range(?)`, false},
		{`SELECT range AS i, CAST(range AS HUGEINT) * 3 AS h, CAST(range AS DECIMAL(10, 2)) AS d, [range] AS l FROM range(?)`, false},
	} {
		res, err := db.Query(ctx, tc.q, 0, 3000)
		if err != nil {
			t.Fatal(err)
		}
		want, wantTypes := driverRows(t, db, tc.q, 3000)
		if len(res.Rows) != len(want) || res.Total != int64(len(want)) {
			t.Fatalf("%q: %d rows (total %d), the driver's %d", tc.q, len(res.Rows), res.Total, len(want))
		}
		for c, col := range res.Columns {
			if col.Type != wantTypes[c] {
				t.Errorf("%q: column %s type %q, the driver's %q", tc.q, col.Name, col.Type, wantTypes[c])
			}
		}
		for r := range want {
			if got, w := fmt.Sprintf("%#v", res.Rows[r]), fmt.Sprintf("%#v", want[r]); got != w {
				t.Fatalf("%q: row %d:\n%s\nthe driver's:\n%s", tc.q, r, got, w)
			}
		}
		capped, err := db.Query(ctx, tc.q, 10, 3000)
		if err != nil || len(capped.Rows) != 10 || capped.Total != 3000 {
			t.Errorf("%q: capped at 10: %d rows, total %d, %v", tc.q, len(capped.Rows), capped.Total, err)
		}
		conn, err := db.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		err = conn.Raw(func(dc any) error {
			named, err := namedArgs(dc, []any{3})
			if err != nil {
				return err
			}
			rs, err := dc.(driver.QueryerContext).QueryContext(ctx, tc.q, named)
			if err != nil {
				return err
			}
			defer rs.Close()
			if chunks := resultOf(rs) != nil && newTableCells(resultOf(rs)) != nil; chunks != tc.chunks {
				t.Errorf("%q: read from DuckDB's vectors = %v, want %v", tc.q, chunks, tc.chunks)
			}
			return nil
		})
		conn.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Query(ctx, "SELECT * FROM nope", 0); err == nil {
		t.Error("Query(unknown table) gave no error")
	}
}

// driverRows reads q's rows through the driver's rows, with cell's
// conversions, and its column types' names.
func driverRows(t *testing.T, db *DB, q string, args ...any) (rows [][]any, types []string) {
	t.Helper()
	conn, err := db.db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		named, err := namedArgs(dc, args)
		if err != nil {
			return err
		}
		rs, err := dc.(driver.QueryerContext).QueryContext(context.Background(), q, named)
		if err != nil {
			return err
		}
		defer rs.Close()
		for i := range rs.Columns() {
			types = append(types, rs.(driver.RowsColumnTypeDatabaseTypeName).ColumnTypeDatabaseTypeName(i))
		}
		vals := make([]driver.Value, len(rs.Columns()))
		for {
			if err := rs.Next(vals); errors.Is(err, io.EOF) {
				return nil
			} else if err != nil {
				return err
			}
			row := make([]any, len(vals))
			for i, v := range vals {
				row[i] = cell(v)
			}
			rows = append(rows, row)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows, types
}
