package cells

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"strings"
	"unicode"

	"github.com/tracebook/tracebook/analysis/table"
)

// MIME types of the bundles cells produces.
const (
	MIMEText = "text/plain"
	MIMEHTML = "text/html"
	MIMEJSON = "application/json"
)

// TableResult renders a table as an execute result: see TableBundle.
func TableResult(t *table.Table) *Result {
	return &Result{Data: TableBundle(t), Metadata: map[string]any{}}
}

// EvidenceResult renders an evidence table as an execute result: see
// EvidenceBundle.
func EvidenceResult(t *table.Table, oneTrace bool) *Result {
	return &Result{Data: EvidenceBundle(t, oneTrace), Metadata: map[string]any{}}
}

// TableBundle renders a table as a MIME bundle: text/plain (an aligned
// table), text/html (a <table>; every value is escaped, there is no script
// and no style sheet, so it reads the same in an untrusted notebook) and
// application/json ({"columns", "rows", "total"}). Both text forms show the
// table as package table presents it: numbers right-aligned and formatted
// in their column's unit, text longer than table.MaxText shortened in the
// middle (text/html keeps the whole text in the cell's title); JSON keeps
// every value whole. When the table holds fewer rows than its Total, both
// text forms end with "showing N of M rows". The output depends only on
// the table: the same table renders to the same bytes.
func TableBundle(t *table.Table) map[string]any {
	return tableBundle(t, table.Options{})
}

// EvidenceBundle is TableBundle for an evidence table: its headers name
// their units ("blocked (ms)"), and with oneTrace (one trace in scope) the
// text forms leave out the trace column.
func EvidenceBundle(t *table.Table, oneTrace bool) map[string]any {
	return tableBundle(t, table.Options{OneTrace: oneTrace})
}

func tableBundle(t *table.Table, o table.Options) map[string]any {
	s := table.Present(t, o)
	return map[string]any{
		MIMEText: tableText(s),
		MIMEHTML: tableHTML(s),
		MIMEJSON: tableJSON(t),
	}
}

// rowNote is "showing 50 of 1234 rows", or "3 rows" when nothing was cut.
func rowNote(t *table.Shown) string {
	total := t.Total
	if int64(len(t.Rows)) < total {
		return fmt.Sprintf("showing %d of %d rows", len(t.Rows), total)
	}
	if total == 1 {
		return "1 row"
	}
	return fmt.Sprintf("%d rows", total)
}

// plainCell makes a value safe for one line of text: control characters
// are escaped.
func plainCell(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case unicode.IsControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// textValue is a cell of the text/plain form: NULL for a null.
func textValue(c table.ShownCell) string {
	if c.Kind == table.Null {
		return "NULL"
	}
	return plainCell(c.Text)
}

func tableText(t *table.Shown) string {
	ncol := len(t.Columns)
	header := make([]string, ncol)
	width := make([]int, ncol)
	for i, c := range t.Columns {
		header[i] = plainCell(c.Header)
		width[i] = displayWidth(header[i])
	}
	cells := make([][]string, len(t.Rows))
	for r, row := range t.Rows {
		cells[r] = make([]string, ncol)
		for i := 0; i < ncol && i < len(row); i++ {
			cells[r][i] = textValue(row[i])
			width[i] = max(width[i], displayWidth(cells[r][i]))
		}
	}
	var b strings.Builder
	writeRow := func(vals []string, alignRight bool) {
		var line strings.Builder
		for i, v := range vals {
			if i > 0 {
				line.WriteString(" | ")
			}
			pad := strings.Repeat(" ", width[i]-displayWidth(v))
			if alignRight && t.Columns[i].Right {
				line.WriteString(pad + v)
			} else {
				line.WriteString(v + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteString("\n")
	}
	if ncol > 0 {
		writeRow(header, false)
		for i := range width {
			if i > 0 {
				b.WriteString("-+-")
			}
			b.WriteString(strings.Repeat("-", width[i]))
		}
		b.WriteString("\n")
		for _, row := range cells {
			writeRow(row, true)
		}
	}
	b.WriteString(rowNote(t))
	b.WriteString("\n")
	return b.String()
}

// htmlSafe replaces the control characters that HTML forbids (all but
// newline, tab and carriage return) with U+FFFD.
func htmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r' {
			return '\uFFFD'
		}
		return r
	}, s)
}

// displayWidth is the number of terminal columns s takes: East Asian wide
// and fullwidth characters and most emoji take two, combining marks and
// variation selectors none.
func displayWidth(s string) int {
	w := 0
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || r == 0x200B || r >= 0xFE00 && r <= 0xFE0F:
		case r >= 0x1100 && r <= 0x115F, r >= 0x2E80 && r <= 0xA4CF && r != 0x303F, r >= 0xAC00 && r <= 0xD7A3,
			r >= 0xF900 && r <= 0xFAFF, r >= 0xFE30 && r <= 0xFE4F, r >= 0xFF00 && r <= 0xFF60, r >= 0xFFE0 && r <= 0xFFE6,
			r >= 0x1F300 && r <= 0x1F64F, r >= 0x1F900 && r <= 0x1F9FF, r >= 0x20000 && r <= 0x3FFFD:
			w += 2
		default:
			w++
		}
	}
	return w
}

// htmlTable is what tableTemplate renders.
type htmlTable struct {
	Caption string
	Columns []htmlColumn
	Rows    [][]htmlCell
	Note    string
}

type htmlColumn struct{ Name, Title string }

type htmlCell struct {
	Text  string
	Full  string // the whole text of a shortened cell, for its title
	Right bool
	Null  bool
}

// tableTemplate renders tables; html/template escapes every value, so a
// string from a trace never becomes markup.
var tableTemplate = template.Must(template.New("table").Parse(
	`<table class="tracebook-table">` +
		`{{with .Caption}}<caption>{{.}}</caption>{{end}}` + "\n" +
		`<thead><tr>{{range .Columns}}<th title="{{.Title}}">{{.Name}}</th>{{end}}</tr></thead>` + "\n" +
		`<tbody>` + "\n" +
		`{{range .Rows}}<tr>{{range .}}<td{{if .Right}} style="text-align: right"{{end}}{{with .Full}} title="{{.}}"{{end}}>{{if .Null}}<i>NULL</i>{{else}}{{.Text}}{{end}}</td>{{end}}</tr>` + "\n" +
		`{{end}}</tbody>` + "\n" +
		`</table>` + "\n" +
		`<p>{{.Note}}</p>` + "\n"))

func tableHTML(t *table.Shown) string {
	ht := htmlTable{Caption: t.Name, Note: rowNote(t)}
	for _, c := range t.Columns {
		ht.Columns = append(ht.Columns, htmlColumn{Name: c.Header, Title: c.Doc})
	}
	for _, row := range t.Rows {
		var cells []htmlCell
		for _, c := range row {
			cells = append(cells, htmlCell{Text: htmlSafe(c.Text), Full: htmlSafe(c.Full), Right: c.Kind == table.Numeric, Null: c.Kind == table.Null})
		}
		ht.Rows = append(ht.Rows, cells)
	}
	var b bytes.Buffer
	if err := tableTemplate.Execute(&b, ht); err != nil {
		// The template and its data are ours: an error is a bug.
		panic(fmt.Sprintf("cells: rendering a table: %v", err))
	}
	return b.String()
}

// jsonTable is the application/json form of a table.
type jsonTable struct {
	Columns []table.Column `json:"columns"`
	Rows    [][]any        `json:"rows"`
	Total   int64          `json:"total"`
}

// tableJSON returns the table as JSON bytes, kept as they are by any
// encoder of the bundle (json.RawMessage): int64 stays exact.
func tableJSON(t *table.Table) json.RawMessage {
	jt := jsonTable{Columns: t.Columns, Rows: make([][]any, len(t.Rows)), Total: max(t.Total, int64(len(t.Rows)))}
	if jt.Columns == nil {
		jt.Columns = []table.Column{}
	}
	for i, row := range t.Rows {
		out := make([]any, len(row))
		for j, v := range row {
			switch x := v.(type) {
			case float64:
				if math.IsNaN(x) || math.IsInf(x, 0) {
					v = nil // JSON has no NaN or Inf
				}
			case float32:
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					v = nil
				}
			}
			out[j] = v
		}
		jt.Rows[i] = out
	}
	b, err := json.Marshal(jt)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	return b
}

// textResult is a result with text/plain, and text/html as an escaped <pre>.
func textResult(text string) *Result {
	return &Result{Data: textBundle(text), Metadata: map[string]any{}}
}

func textBundle(text string) map[string]any {
	return map[string]any{
		MIMEText: text,
		MIMEHTML: "<pre>" + template.HTMLEscapeString(text) + "</pre>\n",
	}
}
