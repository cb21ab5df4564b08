//go:build cgo

package duck

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	tbsql "github.com/tracebook/tracebook/sql"
)

// The lean store (sql/schema.sql) keeps every string of the events once, in
// tb_strings, and an id per event in tb_events. A load hands out the ids of
// new strings in Go, where the parser has the string at hand, and writes
// them to tb_strings (and tb_dict, the list the events view indexes) before
// anything reads the events it stored.

// stringCols are the columns of events that tb_events stores as an id into
// tb_strings (its column <name>_id).
var stringCols = []string{"trace", "pid", "tid", "cat", "name", "grid", "block"}

// dict interns strings for tb_strings during one load. It is used by one
// goroutine at a time: the parser's while a file streams in, the loader's
// between files.
type dict struct {
	ids   map[string]int32
	added []string // strings handed an id and not yet in tb_strings
}

// readDict reads tb_strings.
func readDict(ctx context.Context, tx *sql.Tx) (*dict, error) {
	ids, strs, err := readStrings(ctx, tx, `SELECT id, s FROM tb_strings`)
	if err != nil {
		return nil, err
	}
	d := &dict{ids: make(map[string]int32, len(ids))}
	for i, s := range strs {
		d.ids[s] = ids[i]
	}
	if len(d.ids) != len(ids) {
		// Ids run from 0 without gaps, one per string: tb_dict indexes them.
		return nil, fmt.Errorf("tb_strings holds %d rows for %d strings: the database is damaged", len(ids), len(d.ids))
	}
	return d, nil
}

// readStrings returns the (id, string) rows of query.
func readStrings(ctx context.Context, q querier, query string) (ids []int32, strs []string, err error) {
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int32
		var s string
		if err := rows.Scan(&id, &s); err != nil {
			return nil, nil, err
		}
		ids, strs = append(ids, id), append(strs, s)
	}
	return ids, strs, rows.Err()
}

// id returns the id of s, handing out the next one to a new string.
func (d *dict) id(s string) int32 {
	if id, ok := d.ids[s]; ok {
		return id
	}
	id := int32(len(d.ids))
	s = strings.Clone(s) // the map keeps it: never a view into a parser buffer
	d.ids[s] = id
	d.added = append(d.added, s)
	return id
}

// optID is id, or -1 (stored as NULL) for the empty string.
func (d *dict) optID(s string) int32 {
	if s == "" {
		return -1
	}
	return d.id(s)
}

// flush writes the strings handed out since the last flush to tb_strings
// and rebuilds tb_dict.
func (d *dict) flush(ctx context.Context, tx *sql.Tx) error {
	if len(d.added) == 0 {
		return nil
	}
	first := len(d.ids) - len(d.added)
	for len(d.added) > 0 {
		n := min(len(d.added), 100_000)
		if _, err := tx.ExecContext(ctx, `INSERT INTO tb_strings SELECT ?::INTEGER + i - 1, s FROM unnest(?::VARCHAR[]) WITH ORDINALITY AS u(s, i)`,
			first, d.added[:n]); err != nil {
			return fmt.Errorf("storing strings: %w", err)
		}
		first += n
		d.added = d.added[n:]
	}
	d.added = nil
	_, err := tx.ExecContext(ctx, `UPDATE tb_dict SET strings = (SELECT coalesce(list(s ORDER BY id), []) FROM tb_strings)`)
	return err
}

// internFrom hands out ids for the strings of the relation from (with the
// columns of events) and writes the new ones, so that eventsInsert can then
// store its rows.
func (d *dict) internFrom(ctx context.Context, tx *sql.Tx, from string) error {
	parts := make([]string, len(stringCols))
	for i, c := range stringCols {
		parts[i] = fmt.Sprintf("SELECT DISTINCT %s AS s FROM src", c)
	}
	q := `WITH src AS (SELECT ` + strings.Join(stringCols, ", ") + ` FROM ` + from + `)
		SELECT DISTINCT s FROM (` + strings.Join(parts, " UNION ALL ") + `) WHERE s IS NOT NULL ORDER BY s`
	found, err := queryStrings(ctx, tx, q)
	if err != nil {
		return err
	}
	for _, s := range found {
		d.id(s)
	}
	return d.flush(ctx, tx)
}

// eventsInsert is the statement that stores the rows of from (with the
// columns of events, their strings in tb_strings: internFrom) into the
// lean table target, in from's order.
func eventsInsert(target, from string) string {
	var sel []string
	var joins strings.Builder
	for _, c := range strings.Split(leanColumns, ", ") {
		if s, ok := strings.CutSuffix(c, "_id"); ok && slices.Contains(stringCols, s) {
			sel = append(sel, "s_"+s+".id")
			fmt.Fprintf(&joins, " LEFT JOIN tb_strings s_%[1]s ON s_%[1]s.s = r.%[1]s", s)
		} else {
			sel = append(sel, "r."+c)
		}
	}
	return fmt.Sprintf(`INSERT INTO %s (%s) SELECT %s FROM (SELECT *, row_number() OVER () AS tb_ord FROM %s) r%s ORDER BY r.tb_ord`,
		target, leanColumns, strings.Join(sel, ", "), from, joins.String())
}

// eventColumns are the columns of events after trace, file_id and rank.
const eventColumns = "pid, tid, ph, cat, kind, api, name, ts_ns, dur_ns, end_ns, " +
	"correlation, external_id, python_id, python_parent_id, ev_idx, seq_no, fwd_tid, stream, device, bytes, " +
	"mem_bw_gbps, graph_id, flow_id, grid, block, args, idx"

// leanColumns are the columns of tb_events, in order; leanTail those after
// name_id.
const (
	leanTail = "ts_ns, dur_ns, end_ns, correlation, external_id, python_id, python_parent_id, ev_idx, seq_no, fwd_tid, " +
		"stream, device, bytes, mem_bw_gbps, graph_id, flow_id, grid_id, block_id, args, idx"
	leanColumns = "trace_id, file_id, rank, pid_id, tid_id, ph, cat_id, kind, api, name_id, " + leanTail
)

// migrateWideEvents converts a database written before the lean store (an
// events table of strings) to it, in one transaction: a failure leaves the
// database as it was. The rows keep their order.
func (d *DB) migrateWideEvents(ctx context.Context) error {
	var wide bool
	if err := d.db.QueryRowContext(ctx, `SELECT count(*) > 0 FROM duckdb_tables()
		WHERE database_name = current_database() AND schema_name = 'main' AND table_name = 'events'`).Scan(&wide); err != nil || !wide {
		return err
	}
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, q := range []string{`ALTER TABLE events RENAME TO tb_events_wide`, tbsql.Schema()} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	strs, err := readDict(ctx, tx)
	if err != nil {
		return err
	}
	from := `(SELECT * FROM tb_events_wide ORDER BY rowid)`
	if err := strs.internFrom(ctx, tx, from); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, eventsInsert("tb_events", from)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DROP TABLE tb_events_wide`); err != nil {
		return err
	}
	return tx.Commit()
}

// querier is what queryStrings runs on: a *sql.Tx or a *sql.Conn.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// queryStrings returns the one text column of query's rows.
func queryStrings(ctx context.Context, q querier, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
