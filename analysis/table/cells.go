package table

import (
	"fmt"
	"strconv"
)

// Cells is one row of a result, read a cell at a time by column index: an
// engine that reads a result column by column hands its rows over through
// it without boxing every value (internal/duck's QueryEach). Int and Str
// say false for NULL. A cell of another type reads as a Row cell does: a
// string as Int is 0, a number as Str is its decimal text.
type Cells interface {
	Len() int
	Int(col int) (int64, bool)
	Str(col int) (string, bool)
}

// Row is a row of Table cells (nil, bool, int64, float64 or string) as
// Cells.
type Row []any

func (r Row) Len() int { return len(r) }

// Int is cell col as an integer: a float truncated, a bool 0 or 1, a
// string 0.
func (r Row) Int(col int) (int64, bool) {
	switch x := Normalize(r[col]).(type) {
	case nil:
		return 0, false
	case int64:
		return x, true
	case float64:
		return int64(x), true
	case bool:
		if x {
			return 1, true
		}
	}
	return 0, true
}

// Str is cell col as text: a number in decimal.
func (r Row) Str(col int) (string, bool) {
	switch x := r[col].(type) {
	case nil:
		return "", false
	case string:
		return x, true
	case []byte:
		return string(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	}
	return fmt.Sprint(r[col]), true
}
