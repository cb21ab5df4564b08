// Package table holds the one tabular value that crosses package lines: a
// query result or an evidence table, with column types and units.
//
// It owns the shape only. Running SQL is internal/duck's job, rendering is
// the job of cells (MIME bundles) and analysis/report (Markdown, HTML).
package table

// Column describes one column of a Table.
type Column struct {
	Name string `msgpack:"name" json:"name"`
	Type string `msgpack:"type" json:"type"`                     // DuckDB type name: BIGINT, DOUBLE, VARCHAR, BOOLEAN, ...
	Unit string `msgpack:"unit,omitempty" json:"unit,omitempty"` // ns, bytes, pct, count, ... from the preset header
	Doc  string `msgpack:"doc,omitempty" json:"doc,omitempty"`
}

// Table is a result set. Cell values are nil, bool, int64, float64 or
// string; other DuckDB values are converted to one of these by the engine.
type Table struct {
	Name    string   `msgpack:"name" json:"name"`
	Columns []Column `msgpack:"columns" json:"columns"`
	Rows    [][]any  `msgpack:"rows" json:"rows"`
	// Total is the number of rows the query produced; Rows may hold fewer
	// when the engine capped them.
	Total int64 `msgpack:"total" json:"total"`
}

// Col returns the index of the named column, or -1.
func (t *Table) Col(name string) int {
	for i, c := range t.Columns {
		if c.Name == name {
			return i
		}
	}
	return -1
}
