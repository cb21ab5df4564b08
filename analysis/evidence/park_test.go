package evidence_test

import (
	"reflect"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
)

// Park drops the rows of the tables longer than its bound, keeps the
// others, and its unpark brings back rows equal to the originals, into the
// same tables, with a float and a bool cell among them.
func TestParkRoundTrip(t *testing.T) {
	b := sampleBundle()
	b.Tables["kernels"].Rows[0][7] = 2.5 // a float count: decoded as float64
	b.Tables["ranks"].Rows[2][4] = true
	want := map[string][][]any{}
	tables := map[string]any{}
	for area, tb := range b.Tables {
		want[area] = tb.Rows
		tables[area] = tb
	}
	unpark := b.Park(3) // kernels (4 rows) only
	if b.Tables["kernels"].Rows != nil {
		t.Errorf("kernels: %d rows left decoded, want none", len(b.Tables["kernels"].Rows))
	}
	for _, area := range []string{"ranks", "gaps"} {
		if !reflect.DeepEqual(b.Tables[area].Rows, want[area]) {
			t.Errorf("%s: parked, but it holds 3 rows or fewer", area)
		}
	}
	if err := unpark(); err != nil {
		t.Fatal(err)
	}
	for area, tb := range b.Tables {
		if any(tb) != tables[area] {
			t.Errorf("%s: unpark replaced the table, want its rows back in it", area)
		}
		if !reflect.DeepEqual(tb.Rows, want[area]) {
			t.Errorf("%s: rows after unpark\n%v\nwant\n%v", area, tb.Rows, want[area])
		}
	}
	if err := evidence.NewBundle().Park(0)(); err != nil {
		t.Errorf("unparking a bundle without tables: %v", err)
	}
}
