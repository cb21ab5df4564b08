package cli

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/table"
)

func runQuery(args []string, stdout, stderr io.Writer) error {
	usage := fmt.Errorf("usage: tracebook %s", commands["query"].usage)
	p, f, err := parseLoadArgs("query", args, traceLoadOptions, options{values: []string{"e", "format", "max-rows"}})
	if err != nil {
		return err
	}
	paths, err := p.operands("query", p.rest)
	if err != nil {
		return err
	}
	query, format := p.values["e"], p.value("format", "csv")
	maxRows := 0
	if v, ok := p.values["max-rows"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("--max-rows %q: want a number of rows, 0 for all", v)
		}
		maxRows = n
	}
	if query == "" {
		return fmt.Errorf("no SQL given: -e SQL (%v)", usage)
	}
	switch format {
	case "csv", "json", "md":
	default:
		return fmt.Errorf("--format %q: want csv, json or md", format)
	}
	if len(paths) == 0 && f.db == "" {
		return fmt.Errorf("no trace and no --db: nothing to query (%v)", usage)
	}

	ctx, db, err := openTraces(context.Background(), f, paths, forSQL, stderr)
	if err != nil {
		return err
	}
	defer db.Close()
	if len(paths) > 0 {
		if _, err := db.load(ctx, paths, f.opts); err != nil {
			return err
		}
	}
	t, err := db.Query(ctx, query, maxRows)
	if err != nil {
		return err
	}
	if err := writeTable(stdout, t, format, false); err != nil {
		return err
	}
	if int64(len(t.Rows)) < t.Total {
		fmt.Fprintf(stderr, "note: %d of %d rows shown (--max-rows)\n", len(t.Rows), t.Total)
	}
	return nil
}

// writeTable writes t in one of the query formats: csv and json whole, as
// the engine returned it; md as a reader sees it (package table's writer:
// units in the headers, long text shortened in the middle, the trace
// column left out when oneTrace says one trace is in scope).
func writeTable(w io.Writer, t *table.Table, format string, oneTrace bool) error {
	switch format {
	case "csv":
		return printCSV(w, t)
	case "json":
		return printJSON(w, t)
	case "md":
		return table.WriteMarkdown(w, table.Present(t, table.Options{OneTrace: oneTrace}))
	}
	return fmt.Errorf("unexpected output format %v", format)
}

func printCSV(w io.Writer, t *table.Table) error {
	cw := csv.NewWriter(w)
	rec := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		rec[i] = c.Name
	}
	if err := cw.Write(rec); err != nil {
		return err
	}
	for _, r := range t.Rows {
		for i, v := range r {
			rec[i] = cellText(v)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// printJSON writes one JSON object per row, keys in column order, as a JSON array.
func printJSON(w io.Writer, t *table.Table) error {
	var b strings.Builder
	b.WriteString("[")
	for ri, r := range t.Rows {
		if ri > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n  {")
		for i, v := range r {
			if i > 0 {
				b.WriteString(", ")
			}
			k, _ := json.Marshal(t.Columns[i].Name)
			val, err := json.Marshal(v)
			if err != nil {
				return err
			}
			b.Write(k)
			b.WriteString(": ")
			b.Write(val)
		}
		b.WriteString("}")
	}
	if len(t.Rows) > 0 {
		b.WriteString("\n")
	}
	b.WriteString("]\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// cellText renders a cell: NULL is empty, floats in the shortest form.
func cellText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case int64:
		return strconv.FormatInt(x, 10)
	case string:
		return x
	default:
		return fmt.Sprint(x)
	}
}
