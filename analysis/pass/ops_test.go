package pass

import (
	"reflect"
	"testing"

	"github.com/tracebook/tracebook/analysis/table"
)

// call is one input row of the ops pass: trace, rank, pid, tid, kind,
// name, ts_ns, end_ns, dur_ns, step, phase, launches, gpu_events, gpu_ns.
func call(tid, kind, name string, ts, end int64, launches, gpuNs int64) table.Row {
	return table.Row{"t", int64(0), "1", tid, kind, name, ts, end, end - ts, int64(0), "", launches, launches, gpuNs}
}

func TestOps(t *testing.T) {
	tests := []struct {
		name string
		rows []table.Row
		want [][]any // name, count, incl, self, max, launches, gpu_events, gpu_ns, annotation
	}{{
		// A holds B and C, which touch (siblings); C holds D and then a
		// zero-length E that starts where D ends (C's child, not D's).
		name: "nesting",
		rows: []table.Row{
			call("2", "cpu_op", "A", 0, 100, 0, 0),
			call("2", "cpu_op", "B", 10, 40, 2, 5),
			call("2", "cpu_op", "C", 40, 90, 1, 7),
			call("2", "cpu_op", "D", 50, 60, 0, 0),
			call("2", "cpu_op", "E", 60, 60, 0, 0),
		},
		want: [][]any{
			{"C", int64(1), int64(50), int64(40), int64(50), int64(1), int64(1), int64(7), false},
			{"B", int64(1), int64(30), int64(30), int64(30), int64(2), int64(2), int64(5), false},
			{"A", int64(1), int64(100), int64(20), int64(100), int64(0), int64(0), int64(0), false},
			{"D", int64(1), int64(10), int64(10), int64(10), int64(0), int64(0), int64(0), false},
			{"E", int64(1), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), false},
		},
	}, {
		// Calls that overlap without nesting: B starts inside A and ends
		// after it, one level below A; C starts after A ended, inside B, at
		// B's depth, so its parent is the last call one level up, A, which
		// takes C's time though it has ended (the preset's ASOF join).
		name: "overlap",
		rows: []table.Row{
			call("2", "cpu_op", "A", 0, 50, 0, 0),
			call("2", "cpu_op", "B", 10, 100, 0, 0),
			call("2", "cpu_op", "C", 60, 70, 0, 0),
		},
		want: [][]any{
			{"B", int64(1), int64(90), int64(90), int64(90), int64(0), int64(0), int64(0), false},
			{"C", int64(1), int64(10), int64(10), int64(10), int64(0), int64(0), int64(0), false},
			{"A", int64(1), int64(50), int64(0), int64(50), int64(0), int64(0), int64(0), false},
		},
	}, {
		// A call nested in one of its own name counts once in incl_ns; two
		// threads of one rank add up; an annotation of the same name is a
		// row of its own.
		name: "same name",
		rows: []table.Row{
			call("2", "cpu_op", "X", 0, 50, 0, 0),
			call("2", "cpu_op", "X", 10, 20, 0, 0),
			call("3", "cpu_op", "X", 0, 5, 0, 0),
			call("3", "annotation", "X", 100, 300, 0, 0),
		},
		want: [][]any{
			{"X", int64(1), int64(200), int64(200), int64(200), int64(0), int64(0), int64(0), true},
			{"X", int64(3), int64(55), int64(55), int64(50), int64(0), int64(0), int64(0), false},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, ok := For("ops")
			if !ok {
				t.Fatal("no ops pass")
			}
			p := a.New()
			for _, r := range tc.rows {
				if err := p.Add(r); err != nil {
					t.Fatal(err)
				}
			}
			got := p.Table()
			if len(got.Rows) != len(tc.want) {
				t.Fatalf("%d rows, want %d: %v", len(got.Rows), len(tc.want), got.Rows)
			}
			for i, w := range tc.want {
				row := got.Rows[i]
				if row[0] != "t" || row[1] != int64(0) || row[2] != int64(0) || row[3] != "" {
					t.Errorf("row %d keys %v", i, row[:4])
				}
				if !reflect.DeepEqual(row[4:], w) {
					t.Errorf("row %d = %v, want %v", i, row[4:], w)
				}
			}
		})
	}
}

// A NULL in a number the pass needs is an error (the caller runs the SQL).
func TestOpsNull(t *testing.T) {
	r := call("2", "cpu_op", "A", 0, 10, 0, 0)
	r[6] = nil
	if err := newOps().Add(r); err == nil {
		t.Error("a NULL ts_ns was taken")
	}
}

// The pass reads the calls in the preset's id order: a call that starts
// before the previous one of its thread, or a thread that comes back, is
// an error (the caller runs the SQL).
func TestOpsOrder(t *testing.T) {
	for name, rows := range map[string][]table.Row{
		"start":  {call("2", "cpu_op", "A", 10, 20, 0, 0), call("2", "cpu_op", "B", 0, 5, 0, 0)},
		"longer": {call("2", "cpu_op", "A", 0, 5, 0, 0), call("2", "cpu_op", "B", 0, 20, 0, 0)},
		"name":   {call("2", "cpu_op", "B", 0, 5, 0, 0), call("2", "cpu_op", "A", 0, 5, 0, 0)},
		"thread": {call("2", "cpu_op", "A", 0, 5, 0, 0), call("3", "cpu_op", "A", 0, 5, 0, 0), call("2", "cpu_op", "A", 10, 15, 0, 0)},
	} {
		p := newOps()
		var err error
		for _, r := range rows {
			if err = p.Add(r); err != nil {
				break
			}
		}
		if err == nil {
			t.Errorf("%s: calls out of order were taken", name)
		}
	}
}

func TestCheckInput(t *testing.T) {
	a, _ := For("ops")
	if err := a.CheckInput(opsInput); err != nil {
		t.Error(err)
	}
	if err := a.CheckInput(opsInput[1:]); err == nil {
		t.Error("other columns were taken")
	}
}
