//go:build cgo

package duck

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/duckdb/duckdb-go/v2/mapping"

	"github.com/tracebook/tracebook/analysis/trace"
)

// The importer runs on its own goroutine and hands events over in batches of
// one DuckDB vector (2048 rows), column by column. DuckDB pulls the batches
// through a table function, tracebook_scan(id), on one of its threads, so
// parsing and storing overlap:
//
//	INSERT INTO tb_events SELECT ... FROM tracebook_scan(7)
//
// Typed args travel as plain integers with the importer's Has bit set, and
// the SELECT turns a missing arg into NULL (CASE WHEN has & bit ...): writing
// a NULL through the C API costs a cgo call per value, a bit test in SQL
// costs nothing.

const scanFunction = "tracebook_scan"

// The scan's columns, in order. The strings but ph travel as their ids in
// tb_strings (dict), -1 for an empty cat, grid or block (stored as NULL);
// kind and api as ENUMs of the database's tb_kind and tb_api; scan_file
// and scan_rank are the file id and provisional rank of the stream a row
// came from (a chain of streams stores several files at once).
var scanColumns = []struct {
	name string
	typ  duckdb.Type
}{
	{"ph", duckdb.TYPE_VARCHAR}, {"cat", duckdb.TYPE_INTEGER}, {"kind", duckdb.TYPE_ENUM},
	{"api", duckdb.TYPE_ENUM}, {"name", duckdb.TYPE_INTEGER}, {"pid", duckdb.TYPE_INTEGER},
	{"tid", duckdb.TYPE_INTEGER}, {"ts", duckdb.TYPE_BIGINT}, {"dur", duckdb.TYPE_BIGINT},
	{"has", duckdb.TYPE_BIGINT},
	{"correlation", duckdb.TYPE_BIGINT}, {"external_id", duckdb.TYPE_BIGINT},
	{"python_id", duckdb.TYPE_BIGINT}, {"python_parent_id", duckdb.TYPE_BIGINT},
	{"ev_idx", duckdb.TYPE_BIGINT}, {"seq_no", duckdb.TYPE_BIGINT}, {"fwd_tid", duckdb.TYPE_BIGINT},
	{"stream", duckdb.TYPE_BIGINT}, {"device", duckdb.TYPE_BIGINT}, {"bytes", duckdb.TYPE_BIGINT},
	{"graph_id", duckdb.TYPE_BIGINT}, {"flow_id", duckdb.TYPE_BIGINT},
	{"mem_bw", duckdb.TYPE_DOUBLE}, {"grid", duckdb.TYPE_INTEGER}, {"block", duckdb.TYPE_INTEGER},
	{"args", duckdb.TYPE_VARCHAR}, {"idx", duckdb.TYPE_BIGINT},
	{"scan_file", duckdb.TYPE_INTEGER}, {"scan_rank", duckdb.TYPE_INTEGER},
}

// The typed integer args, in scan column order from column 10, with their bits.
var scanInts = []struct {
	col string
	bit trace.Field
}{
	{"correlation", trace.HasCorrelation}, {"external_id", trace.HasExternalID},
	{"python_id", trace.HasPythonID}, {"python_parent_id", trace.HasPythonParentID},
	{"ev_idx", trace.HasEvIdx}, {"seq_no", trace.HasSeqNo}, {"fwd_tid", trace.HasFwdTid},
	{"stream", trace.HasStream}, {"device", trace.HasDevice}, {"bytes", trace.HasBytes},
	{"graph_id", trace.HasGraphID}, {"flow_id", trace.HasFlowID},
}

// hasAPI is the bit of the scan's has column that says the event has an
// api (the importer's Field bits leave it free): an ENUM cannot be empty,
// and a NULL through the C API costs a cgo call.
const hasAPI = 1 << 40

// scanSelect is the SELECT list that turns the scan's columns into the
// columns of tb_events after trace_id, file_id and rank (leanColumns).
var scanSelect = func() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pid, tid, ph, NULLIF(cat, -1), kind, CASE WHEN has & %d <> 0 THEN api END, name, CASE WHEN has & %[2]d <> 0 THEN ts END, dur, CASE WHEN has & %[2]d <> 0 THEN ts + dur END", int64(hasAPI), trace.HasTs)
	typed := map[string]string{}
	for _, c := range scanInts {
		typed[c.col] = fmt.Sprintf("CASE WHEN has & %d <> 0 THEN %s END", c.bit, c.col)
	}
	for _, c := range []string{"correlation", "external_id", "python_id", "python_parent_id", "ev_idx", "seq_no", "fwd_tid", "stream", "device", "bytes"} {
		b.WriteString(", " + typed[c])
	}
	fmt.Fprintf(&b, ", CASE WHEN has & %d <> 0 THEN mem_bw END", trace.HasMemBW)
	b.WriteString(", " + typed["graph_id"] + ", " + typed["flow_id"])
	b.WriteString(", NULLIF(grid, -1), NULLIF(block, -1), NULLIF(args, ''), idx")
	return b.String()
}()

// batch is up to one vector of events, column by column: strings as their
// ids (dict), kind and api as their index in trace.Kinds and trace.APIs
// (the scan's ENUM values), Args copied into arena.
type batch struct {
	n                   int
	cat, name, pid, tid []int32
	grid, block         []int32
	ph                  []string
	kind, api           []uint8
	ts, dur, has, idx   []int64
	ints                [12][]int64
	bw                  []float64
	argsEnd             []int // args of row i: arena[argsEnd[i-1]:argsEnd[i]]
	arena               []byte
}

func newBatch(size int) *batch {
	b := &batch{
		ph: make([]string, size), cat: make([]int32, size), name: make([]int32, size),
		pid: make([]int32, size), tid: make([]int32, size), grid: make([]int32, size), block: make([]int32, size),
		kind: make([]uint8, size), api: make([]uint8, size),
		ts: make([]int64, size), dur: make([]int64, size), has: make([]int64, size), idx: make([]int64, size),
		bw: make([]float64, size), argsEnd: make([]int, size),
	}
	for i := range b.ints {
		b.ints[i] = make([]int64, size)
	}
	return b
}

func (b *batch) reset() {
	b.n = 0
	b.arena = b.arena[:0]
}

// interner hands out string ids for one stream, remembering the last
// string of the columns that repeat from one event to the next.
type interner struct {
	d             *dict
	cat, pid, tid lastID
}

// lastID is the last string of a column and its id.
type lastID struct {
	s  string
	id int32
	ok bool
}

func (c *lastID) get(d *dict, s string, opt bool) int32 {
	if c.ok && c.s == s {
		return c.id
	}
	c.s, c.ok = s, true
	if opt {
		c.id = d.optID(s)
	} else {
		c.id = d.id(s)
	}
	return c.id
}

// add copies e into row b.n.
func (b *batch) add(e *trace.Event, idx int64, in *interner) {
	i := b.n
	d := in.d
	b.ph[i], b.cat[i] = e.Ph, in.cat.get(d, e.Cat, true)
	b.pid[i], b.tid[i] = in.pid.get(d, e.Pid, false), in.tid.get(d, e.Tid, false)
	b.name[i], b.grid[i], b.block[i] = d.id(e.Name), d.optID(e.Grid), d.optID(e.Block)
	b.kind[i], b.api[i] = wordCode(kindCodes, e.Kind, trace.KindOther), wordCode(apiCodes, e.API, trace.APIOther)
	b.ts[i], b.dur[i], b.has[i], b.idx[i] = e.TsNs, e.DurNs, int64(e.Has), idx
	if e.API != trace.APINone {
		b.has[i] |= hasAPI
	}
	b.ints[0][i], b.ints[1][i], b.ints[2][i], b.ints[3][i] = e.Correlation, e.ExternalID, e.PythonID, e.PythonParentID
	b.ints[4][i], b.ints[5][i], b.ints[6][i], b.ints[7][i] = e.EvIdx, e.SeqNo, e.FwdTid, e.Stream
	b.ints[8][i], b.ints[9][i], b.ints[10][i], b.ints[11][i] = e.Device, e.Bytes, e.GraphID, e.FlowID
	b.bw[i] = e.MemBWGBps
	b.arena = append(b.arena, e.Args...)
	b.argsEnd[i] = len(b.arena)
	b.n++
}

// kindCodes and apiCodes are each word's index in trace.Kinds and
// trace.APIs, its value in the scan's ENUMs.
var kindCodes, apiCodes = wordCodes(trace.Kinds), wordCodes(trace.APIs)

func wordCodes[T ~string](words []T) map[T]uint8 {
	m := make(map[T]uint8, len(words))
	for i, w := range words {
		m[w] = uint8(i)
	}
	return m
}

// wordCode is w's value in the scan's ENUM of codes' words; a word that is
// not one takes fallback's (an unknown kind is other; APINone takes
// other's, a placeholder under a clear hasAPI bit).
func wordCode[T ~string](codes map[T]uint8, w, fallback T) uint8 {
	if c, ok := codes[w]; ok {
		return c
	}
	return codes[fallback]
}

// fill writes the batch into a DuckDB chunk: straight into its vectors
// where the driver's chunk shows them (fillVectors), else a value at a
// time through the driver (fillValues).
//
// The last two columns, scan_file and scan_rank, are those of the stream's
// file (file and rank), the same in every row.
func (b *batch) fill(chunk duckdb.DataChunk, file, rank int32) error {
	if mc, cols := chunkOf(&chunk); fillDirect && mc != nil && mc.Ptr != nil {
		b.fillVectors(*mc, cols, file, rank)
		return chunk.SetSize(b.n)
	}
	return b.fillValues(chunk, file, rank)
}

// fillDirect lets fill write into the vectors (a variable for the test
// that compares both ways).
var fillDirect = true

// chunkOf is the DuckDB chunk behind the driver's and where each scan
// column is in it: DuckDB asks for the columns in its own order (cols[c]
// is scan column c's vector, -1 when DuckDB reads none; nil: in scan
// order). The chunk is nil when this build of the driver keeps either
// elsewhere (TestChunkOf fails then).
func chunkOf(chunk *duckdb.DataChunk) (*mapping.DataChunk, []int) {
	v := reflect.ValueOf(chunk).Elem()
	f, p := v.FieldByName("chunk"), v.FieldByName("projection")
	if !f.IsValid() || f.Type() != reflect.TypeOf(mapping.DataChunk{}) || !p.IsValid() || p.Type() != reflect.TypeOf([]int(nil)) {
		return nil, nil
	}
	var cols []int
	if !p.IsNil() {
		cols = make([]int, p.Len())
		for i := range cols {
			cols[i] = int(p.Index(i).Int())
		}
	}
	return (*mapping.DataChunk)(unsafe.Pointer(f.UnsafeAddr())), cols
}

// fillVectors copies the batch's columns into the vectors of chunk, which
// are flat, of the scan's types and valid on every row (a fresh chunk's
// are): one copy per column instead of a call per value (measured on the
// ×21 vLLM trace: 1.1 s of the 6.2 s load, on the DuckDB thread that
// stores the rows). ph and args are texts: those of at most 12 bytes sit
// in the vector itself (stringInline), longer ones go through DuckDB.
func (b *batch) fillVectors(chunk mapping.DataChunk, cols []int, file, rank int32) {
	n := b.n
	// vec is scan column c's vector; nil Ptr when DuckDB reads none.
	vec := func(c int) mapping.Vector {
		if cols != nil {
			if c = cols[c]; c < 0 {
				return mapping.Vector{}
			}
		}
		return mapping.DataChunkGetVector(chunk, mapping.IdxT(c))
	}
	if ph := vec(0); ph.Ptr != nil {
		data := mapping.VectorGetData(ph)
		for i, s := range b.ph[:n] {
			if !stringInline(data, i, s) {
				mapping.VectorAssignStringElement(ph, mapping.IdxT(i), s)
			}
		}
	}
	copyInto(vec(1), b.cat[:n])
	copyInto(vec(2), b.kind[:n])
	copyInto(vec(3), b.api[:n])
	copyInto(vec(4), b.name[:n])
	copyInto(vec(5), b.pid[:n])
	copyInto(vec(6), b.tid[:n])
	copyInto(vec(7), b.ts[:n])
	copyInto(vec(8), b.dur[:n])
	copyInto(vec(9), b.has[:n])
	// A typed arg's rows without it hold whatever the batch held last:
	// scanSelect reads it only under its has bit.
	for c := range b.ints {
		copyInto(vec(10+c), b.ints[c][:n])
	}
	copyInto(vec(22), b.bw[:n])
	copyInto(vec(23), b.grid[:n])
	copyInto(vec(24), b.block[:n])
	if args := vec(25); args.Ptr != nil {
		data := mapping.VectorGetData(args)
		start := 0
		for i := 0; i < n; i++ {
			a := b.arena[start:b.argsEnd[i]]
			start = b.argsEnd[i]
			if !stringInline(data, i, unsafe.String(unsafe.SliceData(a), len(a))) {
				mapping.VectorAssignStringElementLen(args, mapping.IdxT(i), a)
			}
		}
	}
	copyInto(vec(26), b.idx[:n])
	fillWith(vec(27), file, n)
	fillWith(vec(28), rank, n)
}

// fillWith writes x into the first n rows of a flat vector of its type
// (none when v is nil).
func fillWith[T any](v mapping.Vector, x T, n int) {
	if v.Ptr != nil {
		col := unsafe.Slice((*T)(mapping.VectorGetData(v)), n)
		for i := range col {
			col[i] = x
		}
	}
}

// copyInto copies col into the first rows of a flat vector of its type
// (none when v is nil).
func copyInto[T any](v mapping.Vector, col []T) {
	if v.Ptr != nil {
		copy(unsafe.Slice((*T)(mapping.VectorGetData(v)), len(col)), col)
	}
}

// stringInline writes s into row i of a VARCHAR vector's data when DuckDB
// keeps it in the vector itself (string_t: a uint32 length and 12 bytes
// inline, zero-padded), which needs valid UTF-8 and at most 12 bytes; it
// says whether it did.
func stringInline(data unsafe.Pointer, i int, s string) bool {
	if len(s) > 12 || !utf8.ValidString(s) {
		return false
	}
	p := (*[16]byte)(unsafe.Add(data, i*16))
	*p = [16]byte{}
	*(*uint32)(unsafe.Pointer(p)) = uint32(len(s))
	copy(p[4:], s)
	return true
}

// fillValues writes the batch into a DuckDB chunk a value at a time.
func (b *batch) fillValues(chunk duckdb.DataChunk, file, rank int32) error {
	var err error
	keep := func(e error) {
		if e != nil && err == nil {
			err = e
		}
	}
	n := b.n
	keep(setColumn(chunk, 0, b.ph[:n]))
	keep(setColumn(chunk, 1, b.cat[:n]))
	for i := 0; i < n; i++ {
		keep(duckdb.SetChunkValue(chunk, 2, i, string(trace.Kinds[b.kind[i]])))
		keep(duckdb.SetChunkValue(chunk, 3, i, string(trace.APIs[b.api[i]])))
	}
	keep(setColumn(chunk, 4, b.name[:n]))
	keep(setColumn(chunk, 5, b.pid[:n]))
	keep(setColumn(chunk, 6, b.tid[:n]))
	keep(setColumn(chunk, 7, b.ts[:n]))
	keep(setColumn(chunk, 8, b.dur[:n]))
	keep(setColumn(chunk, 9, b.has[:n]))
	// A typed arg is written only where the event has it: scanSelect
	// reads it only under its has bit, so a row left unwritten is never
	// read (most events carry two or three of the twelve).
	for c := range b.ints {
		col, bit := b.ints[c], int64(scanInts[c].bit)
		for i := 0; i < n; i++ {
			if b.has[i]&bit != 0 {
				keep(duckdb.SetChunkValue(chunk, 10+c, i, col[i]))
			}
		}
	}
	for i := 0; i < n; i++ {
		if b.has[i]&int64(trace.HasMemBW) != 0 {
			keep(duckdb.SetChunkValue(chunk, 22, i, b.bw[i]))
		}
	}
	keep(setColumn(chunk, 23, b.grid[:n]))
	keep(setColumn(chunk, 24, b.block[:n]))
	start := 0
	for i := 0; i < n; i++ {
		keep(duckdb.SetChunkValue(chunk, 25, i, b.arena[start:b.argsEnd[i]]))
		start = b.argsEnd[i]
	}
	keep(setColumn(chunk, 26, b.idx[:n]))
	for i := 0; i < n; i++ {
		keep(duckdb.SetChunkValue(chunk, 27, i, file))
		keep(duckdb.SetChunkValue(chunk, 28, i, rank))
	}
	keep(chunk.SetSize(n))
	return err
}

// setColumn writes col into rows 0.. of column c of chunk; the first error
// is returned.
func setColumn[T any](chunk duckdb.DataChunk, c int, col []T) error {
	for i, v := range col {
		if err := duckdb.SetChunkValue(chunk, c, i, v); err != nil {
			return err
		}
	}
	return nil
}

// stream is one file's events on their way from the importer to DuckDB.
type stream struct {
	id       int64
	file     int32 // the file's id in its trace (tb_events.file_id)
	rank     int32 // the rank its events are stored with
	batches  chan *batch
	free     chan *batch
	done     chan struct{} // closed when the producer has returned
	consumed chan struct{} // closed when DuckDB has read the last batch
	stop     chan struct{} // closed by the consumer to stop the producer early
	once     sync.Once
	err      error // the producer's error, valid after done
	rows     atomic.Int64
	pids     map[string]*pidStat // events per pid, valid after done
}

// pidStat counts the events of one pid: what a traces row needs, without
// scanning the table.
type pidStat struct {
	Events    int64 `json:"events"`
	FirstTsNs int64 `json:"first_ts_ns"`
	LastEndNs int64 `json:"last_end_ns"`
	HasTs     bool  `json:"has_ts"`
}

func (p *pidStat) add(e *trace.Event) {
	p.Events++
	if e.Has&trace.HasTs == 0 {
		return
	}
	end := e.TsNs + e.DurNs
	if !p.HasTs || e.TsNs < p.FirstTsNs {
		p.FirstTsNs = e.TsNs
	}
	if !p.HasTs || end > p.LastEndNs {
		p.LastEndNs = end
	}
	p.HasTs = true
}

func (p *pidStat) merge(q *pidStat) {
	p.Events += q.Events
	if q.HasTs {
		if !p.HasTs || q.FirstTsNs < p.FirstTsNs {
			p.FirstTsNs = q.FirstTsNs
		}
		if !p.HasTs || q.LastEndNs > p.LastEndNs {
			p.LastEndNs = q.LastEndNs
		}
		p.HasTs = true
	}
}

var (
	streamsMu sync.Mutex
	streams   = map[int64][]*stream{} // what tracebook_scan(id) reads, in order
	streamID  atomic.Int64
)

// streamBatches is the most batches a stream queues, allocated as the
// parser gets ahead of DuckDB (about 0.5 MB each). Into a database file,
// DuckDB compresses and writes a row group (60 batches) at a time, and
// that holds it up long enough for the parser to fill a short queue: with
// 6 batches DuckDB then waited for rows 1.1-1.2 s of a 5.8 s load (×21
// vLLM trace), with 64 0.1-0.15 s (12, 16, 24 and 32 fell between).
// Measured on that load, 7 alternating pairs: wall 0.93× (5.44 s, 155 MB/s
// of JSON), peak 303 MiB against 258. In memory the wait is shorter (×5:
// 0.17-0.22 s of a 1.66 s load with 6 batches) and the report's peak is
// what counts: 64 batches took 0.95× the time for 35 MB more, so a load
// into memory queues 8.
func streamBatches(file bool) int {
	if file {
		return 64
	}
	return 8
}

// startStream runs produce on its own goroutine, up to depth batches ahead
// of DuckDB (streamBatches), once after is closed (nil: at once); produce
// calls emit for every event of file, whose rows are stored with rank. The
// stream is registered for tracebook_scan(s.id) until close.
func startStream(ctx context.Context, strs *dict, depth int, file, rank int32, after <-chan struct{}, produce func(emit func(*trace.Event) error) error) *stream {
	size := duckdb.GetDataChunkCapacity()
	s := &stream{
		id:       streamID.Add(1),
		file:     file,
		rank:     rank,
		batches:  make(chan *batch, depth),
		free:     make(chan *batch, depth),
		done:     make(chan struct{}),
		consumed: make(chan struct{}),
		stop:     make(chan struct{}),
		pids:     map[string]*pidStat{},
	}
	streamsMu.Lock()
	streams[s.id] = []*stream{s}
	streamsMu.Unlock()

	go func() {
		defer close(s.done)
		defer close(s.batches)
		if after != nil {
			select {
			case <-after:
			case <-s.stop:
				s.err = errStopped
				return
			case <-ctx.Done():
				s.err = ctx.Err()
				return
			}
		}
		var cur *batch
		var idx int64
		var lastPid string
		var st *pidStat
		in := &interner{d: strs}
		allocated := 0
		get := func() error {
			select {
			case cur = <-s.free:
				cur.reset()
				return nil
			default:
				if allocated < depth {
					allocated++
					cur = newBatch(size)
					return nil
				}
			}
			select {
			case cur = <-s.free:
				cur.reset()
				return nil
			case <-s.stop:
				return errStopped
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		put := func() error {
			select {
			case s.batches <- cur:
				cur = nil
				return nil
			case <-s.stop:
				return errStopped
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if s.err = get(); s.err != nil {
			return
		}
		s.err = produce(func(e *trace.Event) error {
			if st == nil || e.Pid != lastPid {
				lastPid = e.Pid
				if st = s.pids[e.Pid]; st == nil {
					st = &pidStat{}
					s.pids[e.Pid] = st
				}
			}
			st.add(e)
			cur.add(e, idx, in)
			idx++
			if cur.n == size {
				if err := put(); err != nil {
					return err
				}
				return get()
			}
			return nil
		})
		if s.err == nil && cur != nil && cur.n > 0 {
			s.err = put()
		}
	}()
	return s
}

var errStopped = errors.New("stopped")

// chainStreams registers streams for one tracebook_scan(id), which reads
// them one after the other, and returns id and a function that
// unregisters it (each stream's close unregisters the stream itself).
func chainStreams(ss []*stream) (id int64, drop func()) {
	id = streamID.Add(1)
	streamsMu.Lock()
	streams[id] = ss
	streamsMu.Unlock()
	return id, func() {
		streamsMu.Lock()
		delete(streams, id)
		streamsMu.Unlock()
	}
}

// close stops the producer, waits for it and unregisters the stream. It
// returns the producer's error.
func (s *stream) close() error {
	s.once.Do(func() { close(s.stop) })
	for range s.batches {
		// Drain so that a producer blocked on send sees stop.
	}
	<-s.done
	streamsMu.Lock()
	delete(streams, s.id)
	streamsMu.Unlock()
	if errors.Is(s.err, errStopped) {
		return nil
	}
	return s.err
}

// scanSource is the DuckDB side of a stream, or of streams read one after
// the other (chainStreams).
type scanSource struct {
	ss    []*stream
	cur   int // ss[cur] is being read
	ctx   context.Context
	infos []duckdb.ColumnInfo
}

func (src *scanSource) ColumnInfos() []duckdb.ColumnInfo { return src.infos }

// scanInfos are the scan's column types; kind and api are ENUMs of
// trace.Kinds and trace.APIs, the words of the database's tb_kind and
// tb_api in their order (TestKindAndAPIWords), so that DuckDB stores them
// without a cast. (A database whose ENUMs differ still gets the right
// words: DuckDB casts one ENUM to another by its words.)
func scanInfos() ([]duckdb.ColumnInfo, error) {
	enums := map[string]duckdb.TypeInfo{}
	for col, words := range map[string][]string{"kind": wordStrings(trace.Kinds), "api": wordStrings(trace.APIs)} {
		t, err := duckdb.NewEnumInfo(words[0], words[1:]...)
		if err != nil {
			return nil, err
		}
		enums[col] = t
	}
	infos := make([]duckdb.ColumnInfo, len(scanColumns))
	for i, c := range scanColumns {
		t, ok := enums[c.name]
		if !ok {
			var err error
			if t, err = duckdb.NewTypeInfo(c.typ); err != nil {
				return nil, err
			}
		}
		infos[i] = duckdb.ColumnInfo{Name: c.name, T: t}
	}
	return infos, nil
}

func wordStrings[T ~string](words []T) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = string(w)
	}
	return out
}

func (src *scanSource) Cardinality() *duckdb.CardinalityInfo { return nil }

func (src *scanSource) Init() {}

func (src *scanSource) FillChunk(chunk duckdb.DataChunk) error {
	for src.cur < len(src.ss) {
		s := src.ss[src.cur]
		var b *batch
		var ok bool
		select {
		case b, ok = <-s.batches:
		case <-src.ctx.Done():
			return src.ctx.Err()
		}
		if !ok {
			<-s.done
			if s.err != nil && !errors.Is(s.err, errStopped) {
				return s.err
			}
			// Its batches go with it: the next stream of a chain has
			// its own, and the loader keeps the streams until the end.
			for len(s.free) > 0 {
				<-s.free
			}
			close(s.consumed)
			src.cur++
			continue
		}
		err := b.fill(chunk, s.file, s.rank)
		s.rows.Add(int64(b.n))
		s.free <- b
		return err
	}
	return chunk.SetSize(0)
}

// registerScan registers tracebook_scan(id) with the database of conn.
func registerScan(conn *sql.Conn) error {
	bigint, err := duckdb.NewTypeInfo(duckdb.TYPE_BIGINT)
	if err != nil {
		return err
	}
	infos, err := scanInfos()
	if err != nil {
		return err
	}
	return duckdb.RegisterTableUDF(conn, scanFunction, duckdb.ChunkTableFunction{
		Config: duckdb.TableFunctionConfig{Arguments: []duckdb.TypeInfo{bigint}},
		BindArgumentsContext: func(ctx context.Context, _ map[string]any, args ...any) (duckdb.ChunkTableSource, error) {
			id, _ := args[0].(int64)
			streamsMu.Lock()
			ss := streams[id]
			streamsMu.Unlock()
			if ss == nil {
				return nil, fmt.Errorf("%s(%d): no such event stream", scanFunction, id)
			}
			if ctx == nil {
				ctx = context.Background()
			}
			return &scanSource{ss: ss, ctx: ctx, infos: infos}, nil
		},
	})
}
