//go:build cgo

package duck

import (
	"context"
	"database/sql"
	"testing"

	"github.com/tracebook/tracebook/analysis/trace"
)

// The scan function is registered once per database, on whichever
// connection the first load gets: every connection must see it.
func TestScanVisibleToEveryConnection(t *testing.T) {
	db := openTest(t, "-")
	ctx := context.Background()
	held, err := db.db.Conn(ctx) // keep one connection busy so the next load gets another
	if err != nil {
		t.Fatal(err)
	}
	load(t, db, trace.LoadOptions{Name: "a"}, tiny)
	held2, err := db.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*sql.Conn{held, held2} {
		var n int
		if err := c.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_functions() WHERE function_name = 'tracebook_scan'`).Scan(&n); err != nil || n != 1 {
			t.Errorf("tracebook_scan seen %d times on a connection (%v)", n, err)
		}
	}
	held.Close()
	held2.Close()
	load(t, db, trace.LoadOptions{Name: "b"}, tiny)
}
