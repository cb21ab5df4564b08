// Package sql holds tracebook's SQL: the schema every loaded trace lands in
// (schema.sql), the views over it (views.sql) and one evidence preset per
// area (<area>.sql). It embeds the files and parses their doc headers, so
// the notebook can show a preset's purpose and every column's unit.
//
// It owns the text and its documentation only. Running SQL is the job of
// internal/duck; rolling preset rows up is analysis/evidence's. The package
// imports the standard library only, so it builds for the WebAssembly viewer.
//
// # The header format
//
// A file opens with a block of `-- ` lines: the first reads `-- name: what
// the file computes.`, an optional `-- INCLUDE: a, b` names what it depends
// on, and the other lines are free documentation. A preset documents the
// columns it returns, in order, one to a line, under a `-- Columns:` line
// (the list ends at the next empty `--` line); a table or view that
// schema.sql or views.sql creates documents each column directly above it:
//
//	-- Columns:                                    (in a preset's header)
//	-- rank: Rank the row belongs to. INT
//
//	  -- Rank the row belongs to. INT              (above the column, in a
//	  rank INTEGER,                                 CREATE TABLE or VIEW)
//
// The unit is the last sentence of the doc when it is written in capitals
// (INT, TEXT, BYTES, COUNT, DURATION_NS, TIMESTAMP_NS, PCT, HIST,
// JOINID(traces.trace), ...). Every column a preset returns has one: a
// test runs each preset on DuckDB and compares what it returns with its
// header.
//
// # How an area's rows merge
//
// The rollup (analysis/evidence) merges an area's rows per trace, rank and
// identity columns, and the single-file report merges them over steps
// (analysis/report.Compact). Both read how a column merges from its unit
// (evidence.MergeOf): trace, rank and columns of other units (TEXT, INT,
// BOOL) are identities; step, phase and stream are the slices a filter
// selects, merged over; COUNT, DURATION_NS and BYTES add up, except a name
// that starts with min_ or first_ (the least) or max_, last_ or peak_ (the
// largest); TIMESTAMP_NS takes the least (the largest for last_); HIST
// histograms merge; PCT and SHARE are recomputed after the merge. A header
// line `-- MERGE: col = rule, ...` states the rule of a column whose unit
// does not say it: key (an identity), sum, min, max, argmax(other) (the
// value of the row where the column other is largest) or steps (the count
// of distinct steps >= 0, as the column steps); `-- MERGE: none` keeps the
// rows as they are (one row per rank or per step). analysis/evidence keeps
// the units and MERGE lines of the area presets in a generated file
// (headers_gen.go, so that the viewer module does not carry every
// preset's text): after editing a header, run
// `go test ./analysis/evidence -run TestPresetHeaders -update`; the test
// fails until then.
//
// # Presets that are not evidence areas
//
// Most presets are evidence areas (analysis/evidence.Areas), run by
// %evidence with the filter's parameters. The others serve one caller
// each, with parameters of their own (each file's PARAMS line): Crossview
// (%crossview), Perfetto and PerfettoAnchor (the report's per-finding
// Perfetto files: pipeline.AddPerfetto and pipeline.PerfettoWindows).
package sql

import (
	"embed"
	"path"
	"regexp"
	"sort"
	"strings"
)

//go:embed *.sql
var files embed.FS

// viewsSQL is views.sql on its own (Views).
//
//go:embed views.sql
var viewsSQL string

// ColumnDoc documents one output column.
type ColumnDoc struct {
	Name string `json:"name"`
	Unit string `json:"unit,omitempty"` // INT, NS, BYTES, ... as written; "" when the doc names none
	Doc  string `json:"doc"`
}

// Preset is one SQL file (an evidence area, or the schema and views) with its
// parsed header.
type Preset struct {
	Name     string      `json:"name"`              // the file name without .sql
	Doc      string      `json:"doc"`               // the header's documentation, lines joined by newlines
	Includes []string    `json:"includes"`          // the INCLUDE line's names; empty when none
	Columns  []ColumnDoc `json:"columns"`           // the columns the preset returns, as its header documents them
	SQL      string      `json:"sql"`               // the whole file
	Objects  []Object    `json:"objects,omitempty"` // the tables and views the file creates
	// Merge is the header's MERGE line: column -> rule, for the columns
	// whose unit does not say how they merge (see the package doc); nil
	// when there is none.
	Merge map[string]string `json:"merge,omitempty"`
	// Unmerged: the MERGE line is "none": the rollup keeps the rows.
	Unmerged bool `json:"unmerged,omitempty"`
}

// Object is one table or view that a file creates, with its doc comment and
// its columns.
type Object struct {
	Name    string      `json:"name"`
	Kind    string      `json:"kind"` // TABLE, VIEW or MACRO
	Doc     string      `json:"doc"`
	Columns []ColumnDoc `json:"columns"`
}

// Names of the presets that are not evidence areas.
const (
	// Crossview is crossview.sql: the linkage rows behind %crossview.
	Crossview = "crossview"
	// Perfetto is perfetto.sql: the events of one rank in one time window,
	// for a finding's Perfetto file.
	Perfetto = "perfetto"
	// PerfettoAnchor is perfetto_anchor.sql: the worst instance of each
	// kind of problem on a rank, where a trace without steps places a
	// finding's Perfetto window.
	PerfettoAnchor = "perfetto_anchor"
)

// Names of the two files that are not presets.
const (
	schemaFile = "schema"
	viewsFile  = "views"
)

// Schema returns the text of schema.sql: the tables, created with IF NOT EXISTS.
func Schema() string { return text(schemaFile) }

// Views returns the text of views.sql: the views over the tables, created
// with CREATE OR REPLACE so that reopening a database refreshes them.
func Views() string { return viewsSQL }

func text(name string) string {
	b, err := files.ReadFile(name + ".sql")
	if err != nil {
		return ""
	}
	return string(b)
}

// Lookup returns the preset named name (an evidence area: the file
// <name>.sql) and whether it exists. The schema and views are not presets;
// their documentation is in Objects.
func Lookup(name string) (Preset, bool) {
	if name == schemaFile || name == viewsFile || strings.ContainsAny(name, "/\\.") {
		return Preset{}, false
	}
	b, err := files.ReadFile(name + ".sql")
	if err != nil {
		return Preset{}, false
	}
	return Parse(name, string(b)), true
}

// Presets returns every evidence preset, sorted by name. Files whose name
// starts with _ are helpers that presets include (Lookup finds them), not
// presets.
func Presets() []Preset {
	var out []Preset
	for _, name := range fileNames() {
		if name == schemaFile || name == viewsFile || strings.HasPrefix(name, "_") {
			continue
		}
		p, _ := Lookup(name)
		out = append(out, p)
	}
	return out
}

// Objects returns the documented tables and views of schema.sql and
// views.sql, in file order: what `Shift-Tab` on a table name shows.
func Objects() []Object {
	var out []Object
	for _, name := range []string{schemaFile, viewsFile} {
		out = append(out, Parse(name, text(name)).Objects...)
	}
	return out
}

func fileNames() []string {
	entries, err := files.ReadDir(".")
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if n := e.Name(); path.Ext(n) == ".sql" {
			names = append(names, strings.TrimSuffix(n, ".sql"))
		}
	}
	sort.Strings(names)
	return names
}

var (
	headerColumnRE   = regexp.MustCompile(`^([a-z_][a-z0-9_]*):\s+(.*)$`)
	createRE         = regexp.MustCompile(`(?i)^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP\s+|TEMPORARY\s+)?(TABLE|VIEW|MACRO)\s+(?:IF\s+NOT\s+EXISTS\s+)?([A-Za-z_][A-Za-z0-9_.]*)`)
	otherStatementRE = regexp.MustCompile(`(?i)^(CREATE|INSERT|ALTER|UPDATE|DELETE)\s`)
	identRE          = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)(\s|$)`)
	cteRE            = regexp.MustCompile(`(?i)^[A-Za-z_][A-Za-z0-9_]*\s+AS\s+(NOT\s+)?(MATERIALIZED\s+)?\($`)
	asRE             = regexp.MustCompile(`(?i)\bAS\s+([A-Za-z_][A-Za-z0-9_]*)\s*,?\s*$`)
	unitRE           = regexp.MustCompile(`^[A-Z][A-Z0-9_ /%]*(\([^)]*\))?$`)
)

// Parse parses the doc header and the column docs of one SQL file. It is
// exported for tests and tools that check files not embedded here.
func Parse(name, src string) Preset {
	p := Preset{Name: name, SQL: src, Includes: []string{}, Columns: []ColumnDoc{}}
	lines := strings.Split(src, "\n")

	// The header: the leading block of comment lines.
	i := 0
	var doc []string
	inColumns := false // after `-- Columns:`, up to the next empty line
	for ; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, "--") {
			break
		}
		t := strings.TrimSpace(strings.TrimPrefix(l, "--"))
		if t == "" {
			inColumns = false
		}
		switch {
		case i == 0:
			// `-- name: what it computes.`
			if k := strings.Index(t, ":"); k > 0 && !strings.Contains(t[:k], " ") {
				t = strings.TrimSpace(t[k+1:])
			}
			doc = append(doc, t)
		case strings.HasPrefix(t, "INCLUDE:"):
			for _, inc := range strings.Split(strings.TrimPrefix(t, "INCLUDE:"), ",") {
				if inc = strings.TrimSpace(inc); inc != "" && inc != "(none)" {
					p.Includes = append(p.Includes, inc)
				}
			}
		case strings.HasPrefix(t, "MERGE:"):
			p.Merge, p.Unmerged = parseMerge(strings.TrimPrefix(t, "MERGE:"))
		case t == "Columns:":
			inColumns = true
			doc = append(doc, t)
		case inColumns && headerColumnRE.MatchString(t):
			m := headerColumnRE.FindStringSubmatch(t)
			p.Columns = append(p.Columns, columnDoc(m[1], m[2]))
		default:
			doc = append(doc, t)
		}
	}
	p.Doc = strings.TrimSpace(strings.Join(doc, "\n"))

	// The body: comment blocks above CREATE statements and above columns.
	var pending []string // comment lines waiting for the line they document
	var cur *Object
	for ; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		switch {
		case l == "":
			pending = nil
			continue
		case strings.HasPrefix(l, "--"):
			pending = append(pending, strings.TrimSpace(strings.TrimPrefix(l, "--")))
			continue
		}
		if m := createRE.FindStringSubmatch(l); m != nil {
			p.Objects = append(p.Objects, Object{Name: m[2], Kind: strings.ToUpper(m[1]), Doc: strings.Join(pending, "\n"), Columns: []ColumnDoc{}})
			cur = &p.Objects[len(p.Objects)-1]
			pending = nil
			continue
		}
		if otherStatementRE.MatchString(l) {
			// CREATE TYPE, INSERT, ...: not an object, and the end of the last.
			cur, pending = nil, nil
			continue
		}
		if cteRE.MatchString(l) || l == ")" || l == ")," {
			// A comment above a CTE, or at the end of one, documents the
			// query, not the next column.
			pending = nil
			continue
		}
		if len(pending) > 0 {
			cols := columnNames(l)
			if len(cols) == 0 {
				// A multi-line expression: the doc belongs to its `AS name` line.
				continue
			}
			// Only the columns of a CREATE statement: a comment inside a
			// preset's query documents the query, not a column it returns.
			d := strings.Join(pending, " ")
			for _, col := range cols {
				if cur != nil {
					cur.Columns = append(cur.Columns, columnDoc(col, d))
				}
			}
		}
		pending = nil
	}
	return p
}

// parseMerge reads a MERGE line: `none`, or `col = rule, col = rule`
// (a rule may hold a parenthesised column: argmax(max_ns)).
func parseMerge(s string) (map[string]string, bool) {
	s = strings.TrimSpace(s)
	if s == "none" {
		return nil, true
	}
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		col, rule, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		out[strings.TrimSpace(col)] = strings.TrimSpace(rule)
	}
	return out, false
}

// columnNames returns the column names a line defines: `a INTEGER, b INTEGER,`
// gives a and b; `expr AS name,` gives name; `name,` gives name.
func columnNames(line string) []string {
	if m := asRE.FindStringSubmatch(line); m != nil {
		return []string{m[1]}
	}
	var names []string
	depth, start := 0, 0
	parts := []string{}
	for k, r := range line {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, line[start:k])
				start = k + 1
			}
		}
	}
	parts = append(parts, line[start:])
	for _, part := range parts {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		m := identRE.FindStringSubmatch(part)
		if m == nil || isKeyword(m[1]) {
			continue
		}
		id := m[1]
		names = append(names, strings.ToLower(id))
	}
	return names
}

func isKeyword(s string) bool {
	switch strings.ToUpper(s) {
	case "SELECT", "FROM", "WHERE", "GROUP", "ORDER", "WITH", "JOIN", "LEFT", "ON", "AND", "OR", "CASE", "WHEN", "THEN", "ELSE", "END", "UNION", "PRIMARY", "CONSTRAINT", "CHECK":
		return true
	}
	return false
}

// columnDoc splits `doc. UNIT` into the doc and the unit.
func columnDoc(name, d string) ColumnDoc {
	d = strings.TrimSpace(d)
	c := ColumnDoc{Name: name, Doc: d}
	k := strings.LastIndex(d, ". ")
	tail := d
	if k >= 0 {
		tail = d[k+2:]
	}
	if k >= 0 && unitRE.MatchString(strings.TrimSpace(tail)) {
		c.Unit = strings.TrimSpace(tail)
		c.Doc = d[:k+1]
	}
	return c
}

// PassInput is the query whose rows a Go pass reads in place of the
// preset's SQL (analysis/pass): the preset's query up to its `-- PASS:
// cte [ORDER BY ...]` line, ending in `SELECT * FROM cte [ORDER BY ...]`
// (the order the pass reads its rows in). false when the preset has no
// PASS line.
func (p Preset) PassInput() (string, bool) {
	lines := strings.Split(p.SQL, "\n")
	for i, l := range lines {
		cte, ok := strings.CutPrefix(strings.TrimSpace(l), "-- PASS:")
		if !ok {
			continue
		}
		head := strings.TrimRight(strings.Join(lines[:i], "\n"), " \t\n")
		head = strings.TrimSuffix(head, ",")
		return head + "\nSELECT * FROM " + strings.TrimSpace(cte), true
	}
	return "", false
}
