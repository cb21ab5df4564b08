package crossview

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/table"
)

// TestRowReaderIDs: frames and ops that name their name and thread by id
// (IDColumns) read into the same Input as rows that carry the text, in
// whatever order the name and thread rows come; an id no row holds is an
// error that says which.
func TestRowReaderIDs(t *testing.T) {
	cols := append(append(append([]string{}, Columns...), LinkColumns...), IDColumns...)
	// Columns: row_kind trace rank id parent_id thread kind api name ts_ns
	// dur_ns stream graph_id class sync | operator_id link call_stack_id |
	// name_id thread_id.
	textRow := func(kind, trace string, rank, id, parent int64, thread, evKind, name string, ts int64) []any {
		var class, link any
		if kind == RowOp {
			class, link = ClassComp, LinkCorrelation
		}
		return []any{kind, trace, rank, id, parent, thread, evKind, nil, name, ts, int64(5), nil, nil, class, nil, int64(0), link, int64(0), nil, nil}
	}
	idRow := func(kind string, id, parent int64, evKind string, ts, nameID, threadID int64) []any {
		r := textRow(kind, "", 0, id, parent, "", evKind, "", ts)
		r[1], r[2], r[5], r[8] = nil, nil, nil, nil
		if kind == RowOp {
			r[1], r[2] = "job", int64(1)
		}
		r[18] = nameID
		if nameID == 0 {
			r[18] = nil
		}
		if threadID != 0 {
			r[19] = threadID
		}
		return r
	}
	dict := func(kind string, id int64, trace any, rank any, thread, name any) []any {
		return []any{kind, trace, rank, id, int64(0), thread, nil, nil, name, nil, int64(0), nil, nil, nil, nil, int64(0), nil, int64(0), nil, nil}
	}

	text := newTable(cols[:len(cols)-len(IDColumns)])
	text.Rows = [][]any{
		textRow(RowFrame, "job", 1, 1, 0, "7/7", "python", "train.py(3): step", 0),
		textRow(RowFrame, "job", 1, 2, 0, "7/8", "runtime", "cudaLaunchKernel", 10),
		textRow(RowFrame, "job", 1, 4, 0, "7/7", "cpu_op", "", 20),
		textRow(RowOp, "job", 1, 3, 2, "", "kernel", "gemm", 30),
		textRow(RowEngine, "job", 1, 0, 0, "7/8", "", "", 40),
	}
	byID := newTable(cols)
	byID.Rows = [][]any{
		idRow(RowFrame, 1, 0, "python", 0, 11, 2),
		idRow(RowFrame, 2, 0, "runtime", 10, 12, 1),
		idRow(RowFrame, 4, 0, "cpu_op", 20, 0, 2),
		idRow(RowOp, 3, 2, "kernel", 30, 13, 0),
		idRow(RowEngine, 0, 0, "", 40, 0, 1), // before its thread row
		dict(RowName, 12, nil, nil, nil, "cudaLaunchKernel"),
		dict(RowThread, 2, "job", int64(1), "7/7", nil),
		dict(RowName, 11, nil, nil, nil, "train.py(3): step"),
		dict(RowName, 13, nil, nil, nil, "gemm"),
		dict(RowThread, 1, "job", int64(1), "7/8", nil),
	}
	for i, r := range text.Rows {
		text.Rows[i] = r[:len(r)-len(IDColumns)]
	}
	want, err := FromTable(text)
	if err != nil {
		t.Fatal(err)
	}
	got, err := FromTable(byID)
	if err != nil {
		t.Fatal(err)
	}
	// Thread indexes follow the order threads are met: compare what they name.
	threadsOf := func(in *Input) []Thread {
		var out []Thread
		for _, f := range in.Frames {
			out = append(out, in.Threads[f.Thread])
		}
		return out
	}
	if !reflect.DeepEqual(threadsOf(got), threadsOf(want)) {
		t.Errorf("threads = %+v, want %+v", threadsOf(got), threadsOf(want))
	}
	for i := range got.Frames {
		g, w := got.Frames[i], want.Frames[i]
		g.Thread, w.Thread = 0, 0
		if g != w {
			t.Errorf("frame %d = %+v, want %+v", i, g, w)
		}
	}
	if !reflect.DeepEqual(got.Ops, want.Ops) {
		t.Errorf("ops = %+v, want %+v", got.Ops, want.Ops)
	}
	// The engine row: its start, length and thread, by id or by text.
	for _, in := range []*Input{got, want} {
		if len(in.EngineFuncs) != 1 || in.EngineFuncs[0].TsNs != 40 || in.EngineFuncs[0].DurNs != 5 ||
			in.Threads[in.EngineFuncs[0].Thread] != (Thread{Trace: "job", Rank: 1, Name: "7/8"}) {
			t.Errorf("engine rows %+v (threads %+v), want one at 40 for 5 on job/1/7/8", in.EngineFuncs, in.Threads)
		}
	}

	// Ids that no row holds.
	for _, tc := range []struct {
		rows [][]any
		want string
	}{
		{[][]any{idRow(RowFrame, 1, 0, "python", 0, 11, 2), dict(RowName, 11, nil, nil, nil, "f")},
			"crossview: frame 1 names thread 2, which no thread row holds"},
		{[][]any{idRow(RowFrame, 1, 0, "python", 0, 11, 2), dict(RowThread, 2, "job", int64(1), "7/7", nil)},
			"crossview: frame 1 names name 11, which no name row holds"},
		{[][]any{idRow(RowOp, 3, 0, "kernel", 0, 13, 0)},
			"crossview: op 3 names name 13, which no name row holds"},
		{[][]any{idRow(RowFrame, 1, 0, "python", 0, 11, 0)},
			"crossview: row 0: frame 1 has no thread_id"},
		{[][]any{idRow(RowEngine, 0, 0, "", 0, 0, 5)},
			"crossview: engine row 0 names thread 5, which no thread row holds"},
	} {
		tb := newTable(cols)
		tb.Rows = tc.rows
		if _, err := FromTable(tb); err == nil || err.Error() != tc.want {
			t.Errorf("FromTable = %v, want %q", err, tc.want)
		}
	}
}

// TestRowReaderStream: a stream gives start the Input of the rows before
// the first frame, then hands every frame to the sink in the rows' order
// with its thread and name resolved, keeping none of them; a sink error
// stops the reading, and Add returns it.
func TestRowReaderStream(t *testing.T) {
	cols := append(append(append(append([]string{}, Columns...), LinkColumns...), IDColumns...), HostColumns...)
	row := func(kind string, id int64, evKind, name, thread any, ts, nameID, threadID any) []any {
		r := make([]any, len(cols))
		r[0], r[3], r[6], r[8], r[9], r[10] = kind, id, evKind, name, ts, int64(1)
		r[1], r[2], r[5] = nil, nil, thread
		if kind == RowThread {
			r[1], r[2] = "job", int64(0)
		}
		r[15], r[17] = int64(0), int64(0)
		r[18], r[19] = nameID, threadID
		return r
	}
	const frames = 3000
	rows := [][]any{
		row(RowThread, 1, nil, nil, "7/7", int64(0), nil, nil),
		row(RowName, 5, nil, "aten::mm", nil, nil, nil, nil),
	}
	for i := range frames {
		rows = append(rows, row(RowFrame, int64(i+1), "cpu_op", nil, nil, int64(10*i), int64(5), int64(1)))
	}
	read := func(failAt int) (r *RowReader, got []int64, addErr, finishErr error) {
		r, err := NewRowReader(cols)
		if err != nil {
			t.Fatal(err)
		}
		var started bool
		err = r.Stream(func(in *Input) error {
			started = len(in.Threads) == 1
			return nil
		}, func(f *Frame) error {
			if f.Name != "aten::mm" || f.Thread != 0 {
				return fmt.Errorf("frame %d: name %q, thread %d", f.ID, f.Name, f.Thread)
			}
			if int(f.ID) == failAt {
				return fmt.Errorf("sink failed at %d", f.ID)
			}
			got = append(got, f.ID)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, rw := range rows {
			if addErr = r.Add(table.Row(rw)); addErr != nil {
				break
			}
		}
		finishErr = r.Finish()
		if !started {
			t.Error("start did not get the Input with its thread")
		}
		return r, got, addErr, finishErr
	}

	r, got, addErr, finishErr := read(-1)
	if addErr != nil || finishErr != nil {
		t.Fatalf("Add: %v, Finish: %v", addErr, finishErr)
	}
	if len(got) != frames {
		t.Fatalf("the sink got %d frames, want %d", len(got), frames)
	}
	for i, id := range got {
		if id != int64(i+1) {
			t.Fatalf("frame %d reached the sink as the %d-th", id, i+1)
		}
	}
	if len(r.in.Frames) != 0 {
		t.Errorf("the stream kept %d frames in the Input", len(r.in.Frames))
	}

	_, got, addErr, _ = read(1027)
	if addErr == nil || !strings.Contains(addErr.Error(), "sink failed at 1027") {
		t.Fatalf("Add after a sink error: %v", addErr)
	}
	if len(got) != 1026 {
		t.Errorf("the sink took %d frames before failing at 1027", len(got))
	}
}
