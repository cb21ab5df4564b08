package crossview

import (
	"fmt"

	"github.com/tracebook/tracebook/analysis/table"
)

// The row kinds of the crossview preset (its row_kind column).
const (
	RowFrame  = "frame"
	RowOp     = "op"
	RowOrigin = "origin"
	RowStack  = "stack" // a Call stack: id is its call_stack_id, name its text
)

// Columns are the columns the crossview preset returns first, in order;
// FromTable finds them by name and needs every one.
var Columns = []string{"row_kind", "trace", "rank", "id", "parent_id", "thread", "kind", "api", "name", "ts_ns", "dur_ns", "stream", "graph_id"}

// LinkColumns are the preset's further columns: the operator linked by
// External id and how each operation was linked (Op.Operator, Op.Link),
// and the stack row holding an operator's Call stack (Frame.CallStack).
// FromTable reads them when present; without them, operations link through
// correlation only and no python level comes from a Call stack.
var LinkColumns = []string{"operator_id", "link", "call_stack_id"}

// FromTable reads the crossview preset's result into an Input.
func FromTable(t *table.Table) (*Input, error) {
	if t == nil {
		return nil, fmt.Errorf("crossview: no table")
	}
	col := make(map[string]int, len(Columns))
	for _, name := range Columns {
		i := t.Col(name)
		if i < 0 {
			return nil, fmt.Errorf("crossview: the preset's result has no column %q", name)
		}
		col[name] = i
	}
	opt := make(map[string]int, len(LinkColumns))
	for _, name := range LinkColumns {
		opt[name] = t.Col(name) // -1 when absent
	}
	cell := func(row []any, i int) any {
		if i < 0 {
			return nil
		}
		return row[i]
	}
	cOper, cLink, cStack := opt["operator_id"], opt["link"], opt["call_stack_id"]
	stacks := map[int64]string{}
	var pending []int64 // call_stack_id of each frame, resolved once the stack rows are read
	in := &Input{Origins: map[string]int64{}}
	cKind, cTrace, cRank, cID, cParent := col["row_kind"], col["trace"], col["rank"], col["id"], col["parent_id"]
	cThread, cEvKind, cAPI, cName := col["thread"], col["kind"], col["api"], col["name"]
	cTs, cDur, cStream, cGraph := col["ts_ns"], col["dur_ns"], col["stream"], col["graph_id"]
	// Most rows are frames: size for them.
	in.Frames = make([]Frame, 0, len(t.Rows))
	for r, row := range t.Rows {
		if len(row) < len(t.Columns) {
			return nil, fmt.Errorf("crossview: row %d has %d cells, want %d", r, len(row), len(t.Columns))
		}
		switch kind := asString(row[cKind]); kind {
		case RowFrame:
			in.Frames = append(in.Frames, Frame{
				ID: asInt(row[cID]), Parent: asInt(row[cParent]), Trace: asString(row[cTrace]), Rank: int(asInt(row[cRank])),
				Thread: asString(row[cThread]), Kind: asString(row[cEvKind]), API: asString(row[cAPI]), Name: asString(row[cName]),
				TsNs: asInt(row[cTs]), DurNs: asInt(row[cDur]),
			})
			if sid := asInt(cell(row, cStack)); sid != 0 || pending != nil {
				if pending == nil {
					pending = make([]int64, len(in.Frames)-1, cap(in.Frames))
				}
				pending = append(pending, sid)
			}
		case RowOp:
			in.Ops = append(in.Ops, Op{
				ID: asInt(row[cID]), Launch: asInt(row[cParent]), Trace: asString(row[cTrace]), Rank: int(asInt(row[cRank])),
				Stream: asInt(row[cStream]), Kind: asString(row[cEvKind]), Name: asString(row[cName]),
				TsNs: asInt(row[cTs]), DurNs: asInt(row[cDur]), GraphID: asInt(row[cGraph]),
				Operator: asInt(cell(row, cOper)), Link: asString(cell(row, cLink)),
			})
		case RowOrigin:
			in.Origins[asString(row[cTrace])] = asInt(row[cTs])
		case RowStack:
			stacks[asInt(row[cID])] = asString(row[cName])
		default:
			return nil, fmt.Errorf("crossview: row %d: unknown row_kind %q", r, kind)
		}
	}
	for i, sid := range pending {
		if sid == 0 {
			continue
		}
		cs, ok := stacks[sid]
		if !ok {
			return nil, fmt.Errorf("crossview: frame %d names call stack %d, which no stack row holds", in.Frames[i].ID, sid)
		}
		in.Frames[i].CallStack = cs
	}
	return in, nil
}

// StepColumns are the columns of the steps preset (sql/steps.sql) that
// AddSteps reads.
var StepColumns = []string{"trace", "rank", "step", "phase", "name", "start_ns", "wall_ns"}

// AddSteps reads the steps preset's result (one row per step, its start
// relative to the trace's first timestamp) into in.Steps. The crossview
// preset's origin rows must have been read first: they turn the relative
// starts into timestamps.
func AddSteps(in *Input, t *table.Table) error {
	if t == nil {
		return nil
	}
	col := make(map[string]int, len(StepColumns))
	for _, name := range StepColumns {
		i := t.Col(name)
		if i < 0 {
			return fmt.Errorf("crossview: the steps preset's result has no column %q", name)
		}
		col[name] = i
	}
	for _, row := range t.Rows {
		trace := asString(row[col["trace"]])
		origin, ok := in.Origins[trace]
		if !ok {
			continue // a trace outside the slice
		}
		in.Steps = append(in.Steps, Step{
			Trace: trace, Rank: int(asInt(row[col["rank"]])), Name: asString(row[col["name"]]),
			Number: int(asInt(row[col["step"]])), Phase: asString(row[col["phase"]]),
			TsNs: origin + asInt(row[col["start_ns"]]), DurNs: asInt(row[col["wall_ns"]]),
		})
	}
	return nil
}

func asString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}

func asInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case int32:
		return int64(x)
	case int:
		return int64(x)
	case int16:
		return int64(x)
	case int8:
		return int64(x)
	case uint64:
		return int64(x)
	case uint32:
		return int64(x)
	case float64:
		return int64(x)
	case bool:
		if x {
			return 1
		}
	}
	return 0
}
