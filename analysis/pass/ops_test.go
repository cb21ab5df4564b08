package pass

import (
	"reflect"
	"testing"

	"github.com/tracebook/tracebook/analysis/table"
)

// call is one input row of the ops pass: trace, rank, pid, tid, file_id,
// idx, kind, name, ts_ns, end_ns, dur_ns, step, phase, launches,
// gpu_events, gpu_ns. Its index in the file is the row's order (idx).
func call(tid, kind, name string, ts, end int64, launches, gpuNs int64) table.Row {
	idx++
	return table.Row{"t", int64(0), "1", tid, int64(0), idx, kind, name, ts, end, end - ts, int64(0), "", launches, launches, gpuNs}
}

var idx int64

// inFile sets a row's index in its file.
func inFile(r table.Row, i int64) table.Row {
	r[5] = i
	return r
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
	}, {
		// On a rank whose launches do not link by id, each launching call
		// gives its GPU work to the innermost call open at its start: B for
		// the first, A once B has ended, A for the one that starts with
		// the zero-length Z (Z comes after it: the longer first), and none
		// for the one at A's end.
		name: "launching calls",
		rows: []table.Row{
			call("2", "cpu_op", "A", 0, 100, 0, 0),
			call("2", "cpu_op", "B", 10, 40, 0, 0),
			call("2", "runtime", "cudaLaunchKernel", 20, 25, 1, 3),
			call("2", "runtime", "cudaLaunchKernel", 50, 55, 1, 4),
			call("2", "runtime", "cudaLaunchKernel", 60, 65, 1, 5),
			call("2", "cpu_op", "Z", 60, 60, 0, 0),
			call("2", "runtime", "cudaLaunchKernel", 100, 105, 1, 6),
		},
		want: [][]any{
			{"A", int64(1), int64(100), int64(70), int64(100), int64(2), int64(2), int64(9), false},
			{"B", int64(1), int64(30), int64(30), int64(30), int64(1), int64(1), int64(3), false},
			{"Z", int64(1), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), false},
		},
	}, {
		// Two calls of one span: the earlier in the file is the outer
		// (a wrapper around the operator it calls), and a launch in them
		// is the inner one's.
		name: "same span",
		rows: []table.Row{
			call("2", "cpu_op", "wrapper", 0, 10, 0, 0),
			call("2", "cpu_op", "aten::mul", 0, 10, 0, 0),
			call("2", "runtime", "cudaLaunchKernel", 2, 3, 1, 4),
		},
		want: [][]any{
			{"aten::mul", int64(1), int64(10), int64(10), int64(10), int64(1), int64(1), int64(4), false},
			{"wrapper", int64(1), int64(10), int64(0), int64(10), int64(0), int64(0), int64(0), false},
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
	r[8] = nil
	if err := newOps().Add(r); err == nil {
		t.Error("a NULL ts_ns was taken")
	}
}

// The pass reads the calls in the preset's id order: a call that starts
// before the previous one of its thread (or with it, shorter, or of the
// same span and earlier in the file), or a thread that comes back, is an
// error (the caller runs the SQL).
func TestOpsOrder(t *testing.T) {
	for name, rows := range map[string][]table.Row{
		"start":  {call("2", "cpu_op", "A", 10, 20, 0, 0), call("2", "cpu_op", "B", 0, 5, 0, 0)},
		"longer": {call("2", "cpu_op", "A", 0, 5, 0, 0), call("2", "cpu_op", "B", 0, 20, 0, 0)},
		"file":   {call("2", "cpu_op", "B", 0, 5, 0, 0), inFile(call("2", "cpu_op", "A", 0, 5, 0, 0), 0)},
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
