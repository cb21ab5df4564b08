package sql

import (
	"slices"
	"strings"
	"testing"
)

func TestSchemaAndViewsDocumented(t *testing.T) {
	for _, o := range Objects() {
		if o.Doc == "" {
			t.Errorf("%s %s has no doc comment", o.Kind, o.Name)
		}
		if o.Kind == "TABLE" && len(o.Columns) == 0 {
			t.Errorf("table %s: no documented column", o.Name)
		}
		for _, c := range o.Columns {
			if c.Doc == "" {
				t.Errorf("column %q of %s is missing a description", c.Name, o.Name)
			}
		}
	}
	if !strings.Contains(Schema(), "CREATE OR REPLACE VIEW events") {
		t.Error("Schema() does not create events")
	}
	if !strings.Contains(Views(), "CREATE OR REPLACE VIEW kernels") {
		t.Error("Views() does not create kernels")
	}
}

// Every column of every table in schema.sql is documented on its own line.
func TestSchemaColumnsDocumented(t *testing.T) {
	want := map[string]int{"traces": 33, "events": 30, "threads": 9}
	for _, o := range Objects() {
		if n, ok := want[o.Name]; ok && len(o.Columns) != n {
			names := []string{}
			for _, c := range o.Columns {
				names = append(names, c.Name)
			}
			t.Errorf("%s: %d documented columns, want %d: %v", o.Name, len(o.Columns), n, names)
		}
	}
}

func TestParse(t *testing.T) {
	src := `-- sync: synchronization waits per (rank, step, stream).
-- INCLUDE: views, steps
--
-- Waits are host calls that block on the device.
-- kinds: a line of the doc that reads like a column is not one.
-- MERGE: wait_ns = max, peer = argmax(calls)
--
-- Columns:
-- rank: Rank of the row. INT
-- wait_ns: Time blocked in the call. DURATION_NS
-- calls: Number of calls. COUNT
-- note: free text without a unit
--
-- after: not a column either.

SELECT rank, sum(dur_ns) AS wait_ns, count(*) AS calls
FROM runtime WHERE api = 'sync' GROUP BY rank;
`
	p := Parse("sync", src)
	wantDoc := "synchronization waits per (rank, step, stream).\n\nWaits are host calls that block on the device.\n" +
		"kinds: a line of the doc that reads like a column is not one.\n\nColumns:\n\nafter: not a column either."
	if p.Name != "sync" || p.Doc != wantDoc {
		t.Errorf("Parse().Doc = %q, want %q", p.Doc, wantDoc)
	}
	if len(p.Merge) != 2 || p.Merge["wait_ns"] != "max" || p.Merge["peer"] != "argmax(calls)" || p.Unmerged {
		t.Errorf("Parse().Merge = %v, Unmerged %v", p.Merge, p.Unmerged)
	}
	if q := Parse("steps", "-- steps: one row per step.\n-- MERGE: none\nSELECT 1;\n"); !q.Unmerged || q.Merge != nil {
		t.Errorf("MERGE: none gives Merge %v, Unmerged %v", q.Merge, q.Unmerged)
	}
	if strings.Join(p.Includes, ",") != "views,steps" {
		t.Errorf("Parse().Includes = %v", p.Includes)
	}
	want := []ColumnDoc{
		{"rank", "INT", "Rank of the row."},
		{"wait_ns", "DURATION_NS", "Time blocked in the call."},
		{"calls", "COUNT", "Number of calls."},
		{"note", "", "free text without a unit"},
	}
	if len(p.Columns) != len(want) {
		t.Fatalf("Parse().Columns = %v, want %v", p.Columns, want)
	}
	for i := range want {
		if p.Columns[i] != want[i] {
			t.Errorf("column %d = %+v, want %+v", i, p.Columns[i], want[i])
		}
	}
	if p.SQL != src {
		t.Error("Parse().SQL is not the file")
	}

	// In a CREATE statement's query, a comment above a CTE or at the end of
	// one documents the query: the columns keep their own docs.
	body := Parse("base", `-- base: tables.
CREATE TABLE t AS
WITH
-- The names, once.
_names AS (
  SELECT id FROM tb_strings
  -- at the end of the CTE.
),
_x AS NOT MATERIALIZED (
  -- inside, before its query.
  SELECT id AS name_id, 1 AS class FROM tb_strings
)
SELECT
  -- Trace name. TEXT
  trace,
  -- A sum over
  -- two lines. INT
  coalesce(a, 0) AS total
FROM _x;
`)
	if len(body.Objects) != 1 {
		t.Fatalf("Parse().Objects = %+v", body.Objects)
	}
	wantCols := []ColumnDoc{{"trace", "TEXT", "Trace name."}, {"total", "INT", "A sum over two lines."}}
	if got := body.Objects[0].Columns; !slices.Equal(got, wantCols) {
		t.Errorf("columns of a query with commented CTEs = %+v, want %+v", got, wantCols)
	}
}

func TestViewsColumns(t *testing.T) {
	for _, o := range Objects() {
		switch o.Name {
		case "memops":
			got := []string{}
			for _, c := range o.Columns {
				got = append(got, c.Name+":"+c.Unit)
			}
			if strings.Join(got, " ") != "direction:TEXT src_kind:TEXT dst_kind:TEXT" {
				t.Errorf("memops columns = %v", got)
			}
		case "flows":
			if len(o.Columns) != 15 {
				t.Errorf("flows: %d documented columns, want 15", len(o.Columns))
			}
		}
	}
}

func TestLookup(t *testing.T) {
	for _, name := range []string{"schema", "views", "../sql", "nope"} {
		if _, ok := Lookup(name); ok {
			t.Errorf("Lookup(%q) found a preset", name)
		}
	}
	for _, p := range Presets() {
		q, ok := Lookup(p.Name)
		if !ok || q.SQL != p.SQL {
			t.Errorf("Lookup(%q) differs from Presets()", p.Name)
		}
	}
}

func TestPassInput(t *testing.T) {
	p := Parse("x", "-- x: y.\nWITH\n_a AS (SELECT 1 AS v),\n_b AS (SELECT v FROM _a),\n-- PASS: _b\n_c AS (SELECT v FROM _b)\nSELECT * FROM _c")
	got, ok := p.PassInput()
	want := "-- x: y.\nWITH\n_a AS (SELECT 1 AS v),\n_b AS (SELECT v FROM _a)\nSELECT * FROM _b"
	if !ok || got != want {
		t.Errorf("PassInput = %q, %v; want %q", got, ok, want)
	}
	if _, ok := Parse("y", "-- y: z.\nSELECT 1").PassInput(); ok {
		t.Error("a preset without a PASS line has a pass input")
	}
	ops, _ := Lookup("ops")
	if q, ok := ops.PassInput(); !ok || !strings.HasSuffix(q, "SELECT * FROM _calls ORDER BY trace, rank, pid, tid, ts_ns, end_ns DESC, file_id, idx") {
		t.Errorf("ops: PassInput = %q, %v", q, ok)
	}
}
