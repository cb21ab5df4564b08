package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/tracebook/tracebook/sql"
)

// The streamed frames' query builds no hash table on the frames: every
// join keeps them on the probe side (a join DuckDB turns into a RIGHT
// join builds on its left side, the frames). Built on the frames, the ×21
// vLLM trace's frames ran out of memory at 512 MB instead of fitting
// framesLimit; the plan shows it on dlrm_8rank already.
func TestFramesQueryProbesFrames(t *testing.T) {
	db, ctx := dlrmFile(t)
	p, _ := sql.Lookup(sql.Crossview)
	tb, err := db.Query(ctx, "EXPLAIN (FORMAT JSON) "+framesInStartOrder(p.SQL, true), 0, "", -1)
	if err != nil {
		t.Fatal(err)
	}
	var plan []planNode
	for r := range tb.Rows {
		if s, ok := tb.Rows[r][len(tb.Columns)-1].(string); ok && json.Unmarshal([]byte(s), &plan) == nil {
			break
		}
	}
	if len(plan) == 0 {
		t.Fatalf("no JSON plan in %v", tb.Rows)
	}
	joins := 0
	var walk func(n planNode)
	walk = func(n planNode) {
		if jt := fmt.Sprint(n.Extra["Join Type"]); n.Extra["Join Type"] != nil {
			joins++
			if jt == "RIGHT" {
				t.Errorf("%s builds on the frames: %v", n.Name, n.Extra["Conditions"])
			}
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	for _, n := range plan {
		walk(n)
	}
	if joins < 3 {
		t.Errorf("the plan has %d joins; the frames join their thread, Call stack and copy wait", joins)
	}
}

// planNode is one operator of DuckDB's EXPLAIN (FORMAT JSON).
type planNode struct {
	Name     string         `json:"name"`
	Extra    map[string]any `json:"extra_info"`
	Children []planNode     `json:"children"`
}

// The frames' memory limit grows with the frames past what
// framesMemoryMB sorts, in 64 MB steps.
func TestFramesLimit(t *testing.T) {
	for _, tc := range []struct {
		frames int
		want   string
	}{
		{0, "64MB"},
		{2_900_000, "64MB"},   // ×21 vLLM
		{8_388_608, "64MB"},   // 64 MB of frameSortBytes
		{8_388_609, "128MB"},  // one more frame
		{35_000_000, "320MB"}, // ×250 vLLM
	} {
		if got := framesLimit(tc.frames); got != tc.want {
			t.Errorf("framesLimit(%d) = %s, want %s", tc.frames, got, tc.want)
		}
	}
}

// A failed cross-view's gap always says why.
func TestCrossViewFailure(t *testing.T) {
	for _, tc := range []struct{ err, want string }{
		{"crossview: Out of Memory Error: x", "Out of Memory Error: x"},
		{"crossview: ", "its query failed and gave no reason"},
		{"", "its query failed and gave no reason"},
	} {
		if got := crossViewFailure(errors.New(tc.err)); got != tc.want {
			t.Errorf("crossViewFailure(%q) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// The frames' query with narrow ids returns the rows of the one with
// BIGINT ids, in the same order, with UINTEGER ids; idsFit holds on a
// database of a few events.
func TestFramesInStartOrderNarrow(t *testing.T) {
	db, ctx := dlrmFile(t)
	p, _ := sql.Lookup(sql.Crossview)
	if !idsFit(ctx, db) {
		t.Fatal("idsFit is false on dlrm_8rank")
	}
	wide, err := db.Query(ctx, framesInStartOrder(p.SQL, false), 0, "", -1)
	if err != nil {
		t.Fatal(err)
	}
	narrow, err := db.Query(ctx, framesInStartOrder(p.SQL, true), 0, "", -1)
	if err != nil {
		t.Fatal(err)
	}
	if len(narrow.Rows) < 1000 || len(narrow.Rows) != len(wide.Rows) {
		t.Fatalf("%d narrow rows, %d wide", len(narrow.Rows), len(wide.Rows))
	}
	for i, c := range narrow.Columns {
		want := wide.Columns[i].Type
		switch c.Name {
		case "id", "call_stack_id", "name_id", "thread_id":
			want = "UINTEGER"
		}
		if c.Type != want {
			t.Errorf("column %s is %s, want %s", c.Name, c.Type, want)
		}
	}
	for r := range narrow.Rows {
		if fmt.Sprint(narrow.Rows[r]) != fmt.Sprint(wide.Rows[r]) {
			t.Fatalf("row %d: narrow %v, wide %v", r, narrow.Rows[r], wide.Rows[r])
		}
	}
}
