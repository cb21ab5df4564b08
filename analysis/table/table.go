// Package table holds the one tabular value that crosses package lines: a
// query result or an evidence table, with column types and units; and the
// one way tracebook shows numbers and tables to a reader: the number
// formatters (Ms, Int, Pct, Decimal, Float, Cell; a duration in a sentence,
// ProseMs and ProseUs; a --window bound, WindowMs), the headers with units
// (Header), the middle-shortening of long names (ShortenMiddle), a table as
// a reader sees it (Present) and the one Markdown table writer
// (WriteMarkdown) with its escaping (MarkdownText, MarkdownCode).
//
// Running SQL is internal/duck's job; cells (MIME bundles) and
// analysis/report (HTML) print a Shown table in their own markup.
package table

import "math"

// Column describes one column of a Table.
type Column struct {
	Name string `msgpack:"name" json:"name"`
	Type string `msgpack:"type" json:"type"`                     // DuckDB type name: BIGINT, DOUBLE, VARCHAR, BOOLEAN, ...
	Unit string `msgpack:"unit,omitempty" json:"unit,omitempty"` // DURATION_NS, TIMESTAMP_NS, COUNT, BYTES, PCT, GBPS, HIST, ... from the preset header (format.go)
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

// Normalize maps a Go scalar to one of the cell types of a Table: sized
// and unsigned integers become int64 (uint64 beyond int64 becomes float64),
// float32 becomes float64, and []byte becomes string. nil, bool, int64,
// float64 and string pass through; so does any other type, which callers
// that know more (the engine, for decimals and times) convert first.
func Normalize(v any) any {
	switch x := v.(type) {
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case int:
		return int64(x)
	case uint8:
		return int64(x)
	case uint16:
		return int64(x)
	case uint32:
		return int64(x)
	case uint:
		return Normalize(uint64(x))
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x)
		}
		return float64(x)
	case float32:
		return float64(x)
	case []byte:
		return string(x)
	}
	return v
}
