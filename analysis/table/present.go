package table

import "unicode/utf8"

// Options say how Present shows a table.
type Options struct {
	// OneTrace hides the "trace" column: the caller knows one trace is in
	// scope, so the column would repeat its name on every row.
	OneTrace bool
	// MaxText is the most code points a text cell shows before it is
	// shortened (ShortenDistinct); 0 means MaxText.
	MaxText int
}

// Shown is a table as a reader sees it: the columns worth showing, each
// with a header that names its unit, and every cell formatted in that unit.
// The Markdown writer here, the report's HTML and the notebook's outputs
// all print it, so a table reads the same in each; JSON and CSV outputs
// print the Table itself, whole.
type Shown struct {
	Name    string
	Columns []ShownColumn
	Rows    [][]ShownCell
	// Total is the number of rows the table had before it was capped
	// (at least len(Rows)).
	Total int64
}

// ShownColumn is one column of a Shown table.
type ShownColumn struct {
	// Name is the column's own name: the SQL name and the sort key.
	Name string
	// Header is what the reader sees (Header).
	Header string
	// Doc is the tooltip: name, unit and doc (ColumnDoc).
	Doc string
	// Right is true for a column of numbers: right-aligned.
	Right bool
}

// CellKind says what a shown cell holds.
type CellKind uint8

// The kinds of a shown cell.
const (
	Null    CellKind = iota
	Bool             // true or false
	Numeric          // a number, or our words about one ("1.2 ms ± 0.1 ms"): right-aligned
	Text             // a string from a trace (a name): literal, in a code span in Markdown
	Label            // our own words: Markdown-escaped text
)

// ShownCell is one formatted cell.
type ShownCell struct {
	// Text is the cell as shown: formatted in the column's unit, a long
	// text shortened in the middle.
	Text string
	// Full is the whole text when Text is shortened, else "" (the report
	// shows it on hover).
	Full string
	Kind CellKind
}

// Present returns t as a reader sees it: histogram columns and, with
// OneTrace, the trace column left out; headers with units (Header); each
// cell formatted in its column's unit (Cell); text longer than MaxText
// shortened in the middle, apart from the column's look-alikes
// (ShortenDistinct), with the whole text kept in Full; a column of
// numbers right-aligned.
func Present(t *Table, o Options) *Shown {
	maxText := o.MaxText
	if maxText <= 0 {
		maxText = MaxText
	}
	s := &Shown{Name: t.Name, Total: max(t.Total, int64(len(t.Rows)))}
	var keep []int
	for i, c := range t.Columns {
		if IsHist(c.Unit) || (o.OneTrace && c.Name == "trace") {
			continue
		}
		keep = append(keep, i)
		s.Columns = append(s.Columns, ShownColumn{Name: c.Name, Header: Header(c), Doc: ColumnDoc(c), Right: numericType(c.Type)})
	}
	numbers := make([]int, len(keep)) // numeric cells per shown column
	others := make([]int, len(keep))  // text and bool cells
	long := make([]bool, len(keep))   // a text cell past maxText
	s.Rows = make([][]ShownCell, len(t.Rows))
	cells := make([]ShownCell, len(keep)*len(t.Rows)) // one allocation for all rows
	for r, row := range t.Rows {
		out := cells[r*len(keep) : (r+1)*len(keep) : (r+1)*len(keep)]
		for j, i := range keep {
			var v any
			if i < len(row) {
				v = row[i]
			}
			text, num := Cell(v, t.Columns[i].Unit)
			c := ShownCell{Text: text}
			switch {
			case v == nil:
				c.Kind = Null
			case num:
				c.Kind = Numeric
				numbers[j]++
			default:
				c.Kind = Text
				if _, ok := v.(bool); ok {
					c.Kind = Bool
				}
				others[j]++
				if utf8.RuneCountInString(text) > maxText {
					long[j] = true
				}
			}
			out[j] = c
		}
		s.Rows[r] = out
	}
	for j, ok := range long {
		if ok {
			shortenColumn(s.Rows, j, maxText)
		}
	}
	for j := range s.Columns {
		if numbers[j] > 0 || others[j] > 0 {
			s.Columns[j].Right = numbers[j] > 0 && others[j] == 0
		}
	}
	return s
}

// shortenColumn shortens the text cells of column j longer than maxText,
// apart (ShortenDistinct: two kernels whose names differ in the middle
// keep the difference in sight), the whole text kept in Full.
func shortenColumn(rows [][]ShownCell, j, maxText int) {
	texts := make([]string, 0, len(rows))
	for _, row := range rows {
		if row[j].Kind == Text {
			texts = append(texts, row[j].Text)
		}
	}
	short := ShortenDistinct(texts, maxText)
	k := 0
	for _, row := range rows {
		if c := &row[j]; c.Kind == Text {
			if short[k] != c.Text {
				c.Text, c.Full = short[k], c.Text
			}
			k++
		}
	}
}

// numericType reports whether a DuckDB type name is a number type.
func numericType(t string) bool {
	switch t {
	case "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT",
		"INT", "FLOAT", "DOUBLE", "REAL":
		return true
	}
	return len(t) >= 7 && t[:7] == "DECIMAL"
}

// OneTrace reports whether the table's trace column, if it has one, holds
// at most one distinct name (so hiding it loses nothing).
func OneTrace(t *Table) bool {
	i := t.Col("trace")
	if i < 0 {
		return true
	}
	var first any
	for k, r := range t.Rows {
		var v any
		if i < len(r) {
			v = r[i]
		}
		if k == 0 {
			first = v
		} else if v != first {
			return false
		}
	}
	return true
}
