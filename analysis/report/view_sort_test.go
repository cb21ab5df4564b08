package report

import (
	"math"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/table"
)

// sortTableReference is sortTable as a plain stable sort of the rows.
func sortTableReference(t *table.Table, spec string) {
	desc := strings.HasPrefix(spec, "-")
	col := t.Col(strings.TrimPrefix(spec, "-"))
	if col < 0 {
		return
	}
	sort.SliceStable(t.Rows, func(i, j int) bool {
		c := table.Compare(cell(t.Rows[i], col), cell(t.Rows[j], col))
		if desc {
			return c > 0
		}
		return c < 0
	})
}

// TestSortTableIsStable: sortTable orders rows as a stable sort does, ties
// and mixed cell types included, and with NaN (which is equal to every
// number, so only the same algorithm gives the same order); asked for the
// top rows only, it gives the stable sort's first rows and keeps the rest.
func TestSortTableIsStable(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	values := []func() any{
		func() any { return int64(rnd.Intn(5)) },
		func() any { return float64(rnd.Intn(5)) / 2 },
		func() any { return []string{"a", "b", "c"}[rnd.Intn(3)] },
		func() any { return rnd.Intn(2) == 0 },
		func() any { return nil },
		// Nanosecond times since the epoch: neighbours a float64 merges.
		func() any { return int64(1)<<60 + int64(rnd.Intn(5)) },
	}
	for _, tc := range []struct {
		name  string
		kinds int // how many of values to draw from
		nan   bool
	}{{"ints", 1, false}, {"numbers", 2, false}, {"mixed", 5, false}, {"nan", 2, true}, {"large ints", 6, false}} {
		for _, spec := range []string{"v", "-v", "id", "-missing"} {
			for _, n := range []int{0, 1, 7, 30, 200} {
				tb := &table.Table{Columns: []table.Column{{Name: "id"}, {Name: "v"}}}
				for i := 0; i < n; i++ {
					v := values[rnd.Intn(tc.kinds)]()
					if tc.nan && rnd.Intn(4) == 0 {
						v = math.NaN()
					}
					tb.Rows = append(tb.Rows, []any{int64(i), v})
				}
				want := &table.Table{Columns: tb.Columns, Rows: append([][]any(nil), tb.Rows...)}
				sortTableReference(want, spec)
				for _, top := range []int{n, 1, 5, 25} {
					got := &table.Table{Columns: tb.Columns, Rows: append([][]any(nil), tb.Rows...)}
					sortTable(got, spec, top)
					k := min(top, n)
					if !reflect.DeepEqual(ids(got)[:k], ids(want)[:k]) {
						t.Errorf("%s, sort %q, %d rows, top %d: order %v, want %v", tc.name, spec, n, top, ids(got)[:k], ids(want)[:k])
					}
					if !sameSet(ids(got), ids(want)) {
						t.Errorf("%s, sort %q, %d rows, top %d: rows lost or repeated", tc.name, spec, n, top)
					}
				}
			}
		}
	}
}

func sameSet(a, b []any) bool {
	seen := map[any]int{}
	for _, x := range a {
		seen[x]++
	}
	for _, x := range b {
		seen[x]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return len(a) == len(b)
}

func ids(t *table.Table) []any {
	out := make([]any, len(t.Rows))
	for i, r := range t.Rows {
		out[i] = r[0]
	}
	return out
}
