package crossview

import (
	"fmt"
	"slices"

	"github.com/tracebook/tracebook/analysis/table"
)

// The row kinds of the crossview preset (its row_kind column).
const (
	RowFrame  = "frame"
	RowOp     = "op"
	RowOrigin = "origin"
	RowStack  = "stack" // a Call stack: id is its call_stack_id, name its text
	// RowName is an event name: id is its name_id, name its text.
	RowName = "name"
	// RowThread is a host thread: id is its thread_id; trace, rank and
	// thread (pid/tid) say which.
	RowThread = "thread"
	// RowEngine is an autograd engine function (its ts_ns and dur_ns) on
	// a thread (thread_id; without IDColumns, trace, rank and thread).
	RowEngine = "engine"
)

// Columns are the columns the crossview preset returns first, in order;
// FromTable finds them by name and needs every one.
var Columns = []string{"row_kind", "trace", "rank", "id", "parent_id", "thread", "kind", "api", "name", "ts_ns", "dur_ns", "stream", "graph_id", "class", "sync"}

// LinkColumns are the preset's further columns: the operator linked by
// External id and how each operation was linked (Op.Operator, Op.Link),
// and the stack row holding an operator's Call stack (Frame.CallStack).
// FromTable reads them when present; without them, operations link through
// correlation only and no python level comes from a Call stack.
var LinkColumns = []string{"operator_id", "link", "call_stack_id"}

// IDColumns are the columns by which the preset's frames and ops name their
// event name and their thread (a name row and a thread row) instead of
// carrying the text on every row. When both are present, every frame takes
// its trace, rank and thread from the thread row its thread_id names, and a
// frame or op with a name_id its name from the name row; without them each
// row carries its own.
var IDColumns = []string{"name_id", "thread_id"}

// HostColumns are the columns by which an op row carries its host frame
// (the launching call, else the operator linked by External id): its start,
// duration and thread_id; with them, thread rows carry their frames' first
// start (ts_ns) and extent (dur_ns). With IDColumns, they let the frames
// stream through a Stream after the other rows (RowReader.Stream).
var HostColumns = []string{"host_ts_ns", "host_dur_ns", "host_thread_id"}

// FromTable reads the crossview preset's result into an Input.
func FromTable(t *table.Table) (*Input, error) {
	if t == nil {
		return nil, fmt.Errorf("crossview: no table")
	}
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Name
	}
	r, err := NewRowReader(names)
	if err != nil {
		return nil, err
	}
	r.Grow(len(t.Rows), 0) // most rows are frames
	for _, row := range t.Rows {
		if err := r.Add(table.Row(row)); err != nil {
			return nil, err
		}
	}
	return r.Input()
}

// RowReader reads the crossview preset's result a row at a time into an
// Input, so that an engine can hand the rows over as it reads them instead
// of building a table of every host frame first (FromTable reads a table
// through it).
type RowReader struct {
	in      *Input
	n       int // the columns a row must have
	stacks  map[int64]string
	pending bool // some frame holds a call_stack_id, resolved once the stack rows are read
	rows    int
	// strs holds one copy of each string the rows repeat (trace, thread,
	// kind, api, names): a trace's frames share a few thousand names, and
	// each row's value is a fresh string from the driver.
	strs map[string]string

	// With IDColumns: the name and thread rows read so far, and the name id
	// of each frame and op (0 = none), resolved by Input from frames[done]
	// and ops[doneOps] on. A frame's Thread holds its thread_id until then.
	byID          bool
	names         map[int64]string
	threads       map[int64]Thread
	spans         map[int64]Span
	frameNames    []int32
	opNames       []int32
	done, doneOps int
	doneEngine    int
	threadIdx     map[int64]int32 // thread_id -> index in Input.Threads

	// With HostColumns: the host frame of each op, its thread still a
	// thread_id until resolved.
	hosts bool
	// sink, when set, takes each frame instead of Frames (Stream), in
	// cur: one value for every frame, which the sink does not keep (a
	// frame of its own per row was most of what a large slice's stream
	// allocated: ×21 vLLM, 170 MB of its 618 MB).
	sink func(*Frame) error
	cur  Frame
	// start runs before the first frame reaches sink.
	start func(*Input) error
	// framesOnly: every row that follows is a frame (FrameRows).
	framesOnly bool

	cKind, cTrace, cRank, cID, cParent, cThread, cEvKind, cAPI, cName int
	cTs, cDur, cStream, cGraph, cOper, cLink, cStack, cClass, cSync   int
	cNameID, cThreadID                                                int
	cHostTs, cHostDur, cHostThread                                    int
}

// NewRowReader returns a reader for rows with these columns, which must
// include every one of Columns (LinkColumns are read when present).
func NewRowReader(columns []string) (*RowReader, error) {
	r := &RowReader{in: &Input{Origins: map[string]int64{}}, stacks: map[int64]string{}, strs: map[string]string{},
		names: map[int64]string{}, threads: map[int64]Thread{}, spans: map[int64]Span{}, threadIdx: map[int64]int32{}}
	if err := r.columns(columns, Columns); err != nil {
		return nil, err
	}
	r.byID = r.cNameID >= 0 && r.cThreadID >= 0
	r.hosts = r.byID && r.cHostTs >= 0 && r.cHostDur >= 0 && r.cHostThread >= 0
	return r, nil
}

// FrameColumns are the columns a result of frame rows alone must have
// (a stream's second query: narrow, so that DuckDB's sort of them fits).
// Every row of it is a frame: it needs no row_kind.
var FrameColumns = []string{"id", "kind", "api", "ts_ns", "dur_ns", "call_stack_id", "sync", "name_id", "thread_id"}

// FrameRows makes the rows that follow have these columns: a result of
// frame rows alone, with at least FrameColumns, after the other rows.
func (r *RowReader) FrameRows(columns []string) error {
	if !r.byID {
		return fmt.Errorf("crossview: frame rows alone need the preset's %v", IDColumns)
	}
	if err := r.columns(columns, FrameColumns); err != nil {
		return err
	}
	r.framesOnly = true
	return nil
}

// columns indexes the columns of the rows to come, which must include
// every one of need.
func (r *RowReader) columns(columns, need []string) error {
	at := func(name string) int {
		for i, c := range columns {
			if c == name {
				return i
			}
		}
		return -1
	}
	for _, name := range need {
		if at(name) < 0 {
			return fmt.Errorf("crossview: the preset's result has no column %q", name)
		}
	}
	r.n = len(columns)
	r.cHostTs, r.cHostDur, r.cHostThread = at("host_ts_ns"), at("host_dur_ns"), at("host_thread_id")
	r.cNameID, r.cThreadID = at("name_id"), at("thread_id")
	r.cKind, r.cTrace, r.cRank, r.cID, r.cParent = at("row_kind"), at("trace"), at("rank"), at("id"), at("parent_id")
	r.cThread, r.cEvKind, r.cAPI, r.cName = at("thread"), at("kind"), at("api"), at("name")
	r.cTs, r.cDur, r.cStream, r.cGraph = at("ts_ns"), at("dur_ns"), at("stream"), at("graph_id")
	r.cOper, r.cLink, r.cStack, r.cClass, r.cSync = at("operator_id"), at("link"), at("call_stack_id"), at("class"), at("sync")
	return nil
}

// Grow makes room for frames more frames and ops more operations.
func (r *RowReader) Grow(frames, ops int) {
	r.in.Frames = slices.Grow(r.in.Frames, frames)
	r.in.Ops = slices.Grow(r.in.Ops, ops)
	if r.byID {
		r.frameNames = slices.Grow(r.frameNames, frames)
		r.opNames = slices.Grow(r.opNames, ops)
	}
}

// Add reads one row. It keeps no reference to row: the caller may reuse it.
func (r *RowReader) Add(row table.Cells) error {
	r.rows++
	if row.Len() < r.n {
		return fmt.Errorf("crossview: row %d has %d cells, want %d", r.rows-1, row.Len(), r.n)
	}
	num := func(col int) int64 {
		if col < 0 {
			return 0
		}
		v, _ := row.Int(col)
		return v
	}
	text := func(col int) string {
		if col < 0 {
			return ""
		}
		v, _ := row.Str(col)
		return v
	}
	in := r.in
	kind := RowFrame
	if !r.framesOnly {
		kind = text(r.cKind)
	}
	switch kind {
	case RowFrame:
		hk, ok := ParseHostKind(text(r.cEvKind))
		if !ok {
			return fmt.Errorf("crossview: row %d: frame of kind %q, not a host event", r.rows-1, text(r.cEvKind))
		}
		// CallStack holds the preset's call_stack_id until Input maps it
		// to Stacks: the stack rows may come after the frames.
		sid := num(r.cStack)
		if sid != 0 {
			r.pending = true
		}
		f := Frame{
			ID: num(r.cID), TsNs: num(r.cTs), DurNs: num(r.cDur),
			Kind: hk, GraphLaunch: text(r.cAPI) == "graph_launch", Blocking: text(r.cSync) == SyncBlocking,
			CallStack: int32(sid),
		}
		if r.byID {
			th, ok := row.Int(r.cThreadID)
			if !ok {
				return fmt.Errorf("crossview: row %d: frame %d has no thread_id", r.rows-1, f.ID)
			}
			f.Thread = int32(th)
			r.frameNames = append(r.frameNames, int32(num(r.cNameID)))
		} else {
			f.Name = r.str(text(r.cName))
			f.Thread = in.ThreadID(text(r.cTrace), int(num(r.cRank)), text(r.cThread))
		}
		if r.sink != nil {
			r.cur = f
			return r.stream(&r.cur)
		}
		in.Frames = append(in.Frames, f)
	case RowOp:
		kind, okKind := ParseOpKind(text(r.cEvKind))
		link, okLink := ParseOpLink(text(r.cLink))
		class, okClass := ParseOpClass(text(r.cClass))
		if !okKind || !okLink || !okClass {
			return fmt.Errorf("crossview: row %d: op of kind %q, link %q, class %q: not one of %v, %v, %v",
				r.rows-1, text(r.cEvKind), text(r.cLink), text(r.cClass), opKinds, opLinks[1:], opClasses[1:])
		}
		op := Op{
			ID: num(r.cID), Launch: num(r.cParent), TraceID: in.TextID(text(r.cTrace)), Rank: int(num(r.cRank)),
			Stream: num(r.cStream), Kind: kind,
			TsNs: num(r.cTs), DurNs: num(r.cDur), GraphID: num(r.cGraph),
			Operator: num(r.cOper), Link: link, Class: class,
		}
		if r.byID {
			r.opNames = append(r.opNames, int32(num(r.cNameID)))
		} else {
			op.NameID = in.TextID(text(r.cName))
		}
		if r.hosts {
			// HostThread holds the thread_id (-1: none) until resolveIDs.
			op.HostThread = -1
			if th, ok := row.Int(r.cHostThread); ok {
				op.HostTsNs, op.HostDurNs, op.HostThread = num(r.cHostTs), num(r.cHostDur), int32(th)
			}
		}
		in.Ops = append(in.Ops, op)
	case RowName:
		r.names[num(r.cID)] = text(r.cName)
	case RowThread:
		id := num(r.cID)
		r.threads[id] = Thread{Trace: text(r.cTrace), Rank: int(num(r.cRank)), Name: text(r.cThread)}
		if start, ok := row.Int(r.cTs); r.hosts && ok {
			r.spans[id] = Span{start, start + num(r.cDur)}
		}
	case RowEngine:
		es := EngineFunc{TsNs: num(r.cTs), DurNs: num(r.cDur)}
		if r.byID {
			th, ok := row.Int(r.cThreadID)
			if !ok {
				return fmt.Errorf("crossview: row %d: engine row has no thread_id", r.rows-1)
			}
			es.Thread = int32(th) // a thread_id until resolveIDs
		} else {
			es.Thread = in.ThreadID(text(r.cTrace), int(num(r.cRank)), text(r.cThread))
		}
		in.EngineFuncs = append(in.EngineFuncs, es)
	case RowOrigin:
		in.Origins[text(r.cTrace)] = num(r.cTs)
	case RowStack:
		r.stacks[num(r.cID)] = text(r.cName)
	default:
		return fmt.Errorf("crossview: row %d: unknown row_kind %q", r.rows-1, kind)
	}
	return nil
}

// str is s, one copy per distinct value.
func (r *RowReader) str(s string) string {
	if c, ok := r.strs[s]; ok {
		return c
	}
	r.strs[s] = s
	return s
}

// Input returns what the rows read so far make: the frames take the Call
// stacks their stack rows hold.
func (r *RowReader) Input() (*Input, error) {
	in := r.in
	if err := r.resolveIDs(); err != nil {
		return nil, err
	}
	if !r.pending {
		return in, nil
	}
	ids := map[int64]int32{}
	for i := range in.Frames {
		f := &in.Frames[i]
		sid := int64(f.CallStack)
		if sid == 0 {
			continue
		}
		id, ok := ids[sid]
		if !ok {
			cs, found := r.stacks[sid]
			if !found {
				return nil, fmt.Errorf("crossview: frame %d names call stack %d, which no stack row holds", f.ID, sid)
			}
			id = in.StackID(cs)
			ids[sid] = id
		}
		f.CallStack = id
	}
	r.pending = false
	return in, nil
}

// resolveIDs gives the frames and ops read since the last call the names
// and threads their ids name (IDColumns): the name and thread rows may come
// after them.
func (r *RowReader) resolveIDs() error {
	if !r.byID {
		return nil
	}
	in := r.in
	for i := r.done; i < len(in.Frames); i++ {
		f := &in.Frames[i]
		t, err := r.threadOf(int64(f.Thread), "frame", f.ID)
		if err != nil {
			return err
		}
		f.Thread = t
		name, err := r.nameOf(r.frameNames[i], "frame", f.ID)
		if err != nil {
			return err
		}
		f.Name = name
	}
	for i := r.doneOps; i < len(in.Ops); i++ {
		op := &in.Ops[i]
		name, err := r.nameOf(r.opNames[i], "op", op.ID)
		if err != nil {
			return err
		}
		op.NameID = in.TextID(name)
		if r.hosts && op.HostThread >= 0 {
			if op.HostThread, err = r.threadOf(int64(op.HostThread), "op", op.ID); err != nil {
				return err
			}
		}
	}
	if r.hosts {
		for id, sp := range r.spans {
			t, err := r.threadOf(id, "thread", id)
			if err != nil {
				return err
			}
			for int(t) >= len(in.Spans) {
				in.Spans = append(in.Spans, Span{})
			}
			in.Spans[t] = sp
		}
		clear(r.spans)
		in.Hosts = true
	}
	for i := r.doneEngine; i < len(in.EngineFuncs); i++ {
		es := &in.EngineFuncs[i]
		t, err := r.threadOf(int64(es.Thread), "engine row", int64(i))
		if err != nil {
			return err
		}
		es.Thread = t
	}
	r.done, r.doneOps, r.doneEngine = len(in.Frames), len(in.Ops), len(in.EngineFuncs)
	return nil
}

// threadOf returns the index in Input.Threads of the thread row id.
func (r *RowReader) threadOf(id int64, what string, of int64) (int32, error) {
	if t, ok := r.threadIdx[id]; ok {
		return t, nil
	}
	th, found := r.threads[id]
	if !found {
		return 0, fmt.Errorf("crossview: %s %d names thread %d, which no thread row holds", what, of, id)
	}
	t := r.in.ThreadID(th.Trace, th.Rank, th.Name)
	r.threadIdx[id] = t
	return t, nil
}

// Stream makes the reader hand each frame row to sink instead of keeping
// it, once start has been given the Input of the rows before the first
// frame (threads with their spans, ops with their host frames, names,
// stacks, origins). The rows must come in that order, the frames last in
// each thread's start order (the preset's ORDER BY), and carry IDColumns
// and HostColumns. The frame sink gets is valid until it returns.
func (r *RowReader) Stream(start func(*Input) error, sink func(*Frame) error) error {
	if !r.byID || !r.hosts {
		return fmt.Errorf("crossview: the preset's result lacks the columns a stream needs (%v, %v)", IDColumns, HostColumns)
	}
	r.start, r.sink = start, sink
	return nil
}

// stream resolves a frame's thread, name and Call stack and hands it to
// the sink, after start on the first frame.
func (r *RowReader) stream(f *Frame) error {
	if r.start != nil {
		if err := r.resolveIDs(); err != nil {
			return err
		}
		start := r.start
		r.start = nil
		if err := start(r.in); err != nil {
			return err
		}
	}
	t, err := r.threadOf(int64(f.Thread), "frame", f.ID)
	if err != nil {
		return err
	}
	f.Thread = t
	name, err := r.nameOf(r.frameNames[len(r.frameNames)-1], "frame", f.ID)
	if err != nil {
		return err
	}
	r.frameNames = r.frameNames[:0]
	f.Name = name
	if sid := int64(f.CallStack); sid != 0 {
		cs, found := r.stacks[sid]
		if !found {
			return fmt.Errorf("crossview: frame %d names call stack %d, which no stack row holds", f.ID, sid)
		}
		f.CallStack = r.in.StackID(cs)
	}
	return r.sink(f)
}

// Finish ends a stream: when no frame came, start gets the Input now.
func (r *RowReader) Finish() error {
	if r.start == nil {
		return nil
	}
	if err := r.resolveIDs(); err != nil {
		return err
	}
	start := r.start
	r.start = nil
	return start(r.in)
}

// nameOf is the text of the name row id ("" for 0, an event without a name).
func (r *RowReader) nameOf(id int32, what string, of int64) (string, error) {
	if id == 0 {
		return "", nil
	}
	name, ok := r.names[int64(id)]
	if !ok {
		return "", fmt.Errorf("crossview: %s %d names name %d, which no name row holds", what, of, id)
	}
	return name, nil
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
