package perfetto

import (
	"reflect"
	"testing"

	"github.com/tracebook/tracebook/analysis/table"
)

func TestSortRows(t *testing.T) {
	cols := []table.Column{{Name: "row_kind"}, {Name: "ts_ns"}, {Name: "pid"}, {Name: "name"}, {Name: "dur_ns"}, {Name: "tag"}}
	// Nanosecond times above 2^53 that a float64 would merge.
	const t0 = int64(1_700_000_000_000_000_001)
	rows := [][]any{
		{"thread", nil, "1", "b", nil, "thread 1b"},
		{"event", t0 + 1, "1", "k", int64(5), "later"},
		{"event", t0, "1", "k", int64(5), "dur 5"},
		{"event", t0, "1", "k", nil, "dur NULL"},
		{"event", t0, "1", "k", int64(9), "dur 9"},
		{"event", t0, nil, "k", int64(1), "pid NULL"},
		{"event", t0, "10", "k", int64(1), "pid 10"},
		{"event", t0, "2", "k", int64(1), "pid 2"},
		{"gap", t0, nil, nil, int64(3), "gap"},
		{"thread", nil, "1", "a", nil, "thread 1a"},
		{"event", t0, "1", "k", int64(5), "dur 5, second"},
		{"origin", t0 - 1, nil, nil, nil, "origin"},
	}
	tb := &table.Table{Columns: cols, Rows: rows}
	SortRows(tb)
	var got []string
	for _, r := range tb.Rows {
		got = append(got, r[5].(string))
	}
	want := []string{
		// ts first, then pid as bytes ("1" < "10" < "2"), NULL pid last;
		// within pid "1": duration longest first, NULL last, ties in
		// their order.
		"dur 9", "dur 5", "dur 5, second", "dur NULL", "pid 10", "pid 2", "pid NULL", "later",
		"gap", "origin", "thread 1a", "thread 1b",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("order\n got %q\nwant %q", got, want)
	}
	SortRows(nil)                                        // no table: nothing to do
	SortRows(&table.Table{Columns: cols[:1], Rows: nil}) // no rows
}
