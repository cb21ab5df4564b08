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

import (
	"cmp"
	"math"
)

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

// Compare orders two cells: -1, 0 or 1. nil comes first, then false and
// true, then numbers, then strings (by their bytes, DuckDB's default
// collation). Two integers compare exactly (nanosecond times lie above
// 2^53, where a float64 merges neighbours); other numbers by value, NaN
// tying with every number (the report's table sort keeps that order).
// Cells of a type Normalize leaves alone rank with the numbers, as 0.
func Compare(a, b any) int {
	a, b = Normalize(a), Normalize(b)
	if ra, rb := CompareRank(a), CompareRank(b); ra != rb {
		return cmp.Compare(ra, rb)
	}
	switch x := a.(type) {
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case string:
		return cmp.Compare(x, b.(string))
	case int64:
		if y, ok := b.(int64); ok {
			return cmp.Compare(x, y)
		}
	}
	x, _ := Number(a)
	y, _ := Number(b)
	return CompareFloat(x, y)
}

// CompareFloat orders two floats with < and >, so that a NaN ties with
// every number (a sort keeps such rows in their order).
func CompareFloat(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// CompareRank is a normalised cell's place in Compare's order of kinds:
// 0 nil, 1 bool, 2 number (or other), 3 string.
func CompareRank(v any) int {
	switch v.(type) {
	case nil:
		return 0
	case bool:
		return 1
	case string:
		return 3
	}
	return 2
}
