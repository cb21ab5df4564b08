package trace

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/internal/jsonstr"
)

// The parser. It never holds the document: the JSON arrives in chunks (see
// source.go) into one buffer that holds at least the event being parsed.
// Each event is parsed in a single pass straight from the buffer; when the
// buffer ends inside an event, the parser keeps the event's bytes, reads
// more, and parses that event again from its start. Nothing is reported for
// an event before it was parsed whole.

// initialBuffer is the parse buffer's first size; a variable so tests can
// force refills at every event.
var initialBuffer = 1 << 20

const (
	maxEventBytes  = 256 << 20 // largest single event (or top-level value) the parser buffers
	maxDepth       = 1000      // deepest nesting accepted inside an event
	maxInterned    = 1 << 18   // distinct strings kept for reuse
	progressEvery  = 4096      // events between checks of the progress clock
	progressPeriod = 250 * time.Millisecond
)

// ParseFile imports one trace file (.json, or gzip-compressed JSON whatever
// its name). It calls sink once per non-metadata event, with an Event the
// parser reuses, and progress (when not nil) a few times a second and once at
// the end. It returns what it learned about the file. Errors name the file
// and the offset in the uncompressed JSON, and wrap a sentinel of errors.go.
func ParseFile(path string, opts LoadOptions, sink func(*Event) error, progress func(Progress)) (*FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("trace %s: %w: %w", path, ErrUnreadable, err)
	}
	defer f.Close()
	var size int64
	if st, err := f.Stat(); err == nil {
		size = st.Size()
		if st.IsDir() {
			return nil, fmt.Errorf("trace %s: %w: is a directory", path, ErrUnreadable)
		}
	}
	return parse(f, path, size, opts, sink, progress)
}

// Parse imports a trace from r, which holds JSON or gzip-compressed JSON.
// name stands for the input in errors and in FileInfo.Path. See ParseFile.
func Parse(r io.Reader, name string, opts LoadOptions, sink func(*Event) error) (*FileInfo, error) {
	return parse(r, name, 0, opts, sink, nil)
}

// span is a [start, end) range of the buffer.
type span struct{ start, end int }

type parser struct {
	name string
	src  *source
	opts LoadOptions
	sink func(*Event) error

	buf  []byte
	pos  int   // next byte to parse
	end  int   // bytes of buf that hold data
	base int64 // stream offset of buf[0]
	eof  bool

	ev      Event
	args    []byte // the Args being built for ev
	tmp     []byte // scratch for unescaped strings and compacted values
	idx     int    // index in traceEvents of the event being parsed
	intern  map[string]string
	metaBuf []byte

	lastPh, lastCat, lastPid, lastTid string // the previous event's values

	// per-event spans read back when the event is complete
	metaName, metaLabels, metaSort span
	bytesKey, bytesVal             span
	bytesNum                       int64
	hasBytes                       bool

	info       *FileInfo
	procIdx    map[string]int
	thrIdx     map[[2]string]int
	hasTs      bool
	firstTs    int64
	lastEnd    int64
	hip        bool
	cuda       bool
	mtia       bool
	gpu        bool
	old        bool // 2021 cats or lowercase "external id"
	vllmMeta   bool
	training   bool
	vllm       bool // vllm/ python frames
	sglang     bool // sglang/ python frames
	vllmStep   bool // execute_… step annotations
	sglangStep bool // step[…] annotations

	progress     func(Progress)
	total        int64
	lastProgress time.Time
}

func parse(r io.Reader, name string, size int64, opts LoadOptions, sink func(*Event) error, progress func(Progress)) (*FileInfo, error) {
	if sink == nil {
		sink = func(*Event) error { return nil }
	}
	p := &parser{
		name:     name,
		opts:     opts,
		sink:     sink,
		buf:      make([]byte, initialBuffer),
		intern:   make(map[string]string, 1024),
		procIdx:  map[string]int{},
		thrIdx:   map[[2]string]int{},
		progress: progress,
		total:    size,
		info: &FileInfo{
			Path:       name,
			CatCounts:  map[string]int64{},
			PhCounts:   map[string]int64{},
			MetaCounts: map[string]int64{},
		},
		lastProgress: time.Now(),
	}
	p.src = startSource(r)
	defer p.src.stop()
	if err := p.document(); err != nil {
		return nil, err
	}
	// Drain to the end of the stream so the hash covers every byte.
	for !p.src.finished {
		p.pos, p.end = 0, 0
		n, err := p.src.read(p.buf)
		p.base += int64(n)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, p.streamErr(err)
		}
		if n > 0 && len(bytes.TrimSpace(p.buf[:n])) > 0 {
			return nil, p.errAt(int(0), -1, ErrSyntax, "data after the end of the JSON document")
		}
	}
	fi := p.info
	fi.SHA256 = p.src.sum
	fi.FileBytes = p.src.diskRead.Load()
	fi.JSONBytes = p.base + int64(p.end)
	p.finishInfo()
	if p.progress != nil {
		p.progress(Progress{File: name, Files: 1, BytesRead: fi.JSONBytes, BytesTotal: p.total,
			DiskRead: fi.FileBytes, Events: fi.Events, Done: true})
	}
	return fi, nil
}

// ---- buffer management ----

// refill keeps buf[keep:end], moves it to the front and reads more after it.
// At the end of the stream it sets eof and returns nil.
func (p *parser) refill(keep int) error {
	if p.eof {
		return nil
	}
	if keep > 0 {
		n := copy(p.buf, p.buf[keep:p.end])
		p.base += int64(keep)
		p.pos -= keep
		p.end = n
	}
	if p.end == len(p.buf) {
		if len(p.buf) >= maxEventBytes {
			return p.errAt(p.pos, p.idx, ErrEventTooLarge, fmt.Sprintf("a value is larger than %d MiB", maxEventBytes>>20))
		}
		nb := make([]byte, 2*len(p.buf))
		copy(nb, p.buf[:p.end])
		p.buf = nb
	}
	n, err := p.src.read(p.buf[p.end:])
	p.end += n
	if err == io.EOF {
		p.eof = true
		return nil
	}
	if err != nil {
		return p.streamErr(err)
	}
	return nil
}

func (p *parser) streamErr(err error) error {
	return &ParseError{File: p.name, Offset: p.base + int64(p.end), Event: -1, Msg: "reading the stream", Err: err}
}

// errAt builds a ParseError at buffer position i.
func (p *parser) errAt(i, event int, sentinel error, msg string) error {
	return &ParseError{File: p.name, Offset: p.base + int64(i), Event: event, Msg: msg, Err: sentinel}
}

func (p *parser) syntax(i int, msg string) error {
	ev := -1
	if p.idx >= 0 {
		ev = p.idx
	}
	if i >= p.end {
		return p.errAt(i, ev, ErrTruncated, "the input ends "+msg)
	}
	return p.errAt(i, ev, ErrSyntax, fmt.Sprintf("%s, found %q", msg, p.buf[i]))
}

// run applies f at pos until it no longer needs more input.
func (p *parser) run(f func(b []byte, i int) (int, error)) error {
	for {
		n, err := f(p.buf[:p.end], p.pos)
		if err == errShort {
			if p.eof {
				return p.errAt(p.end, p.idxOrNone(), ErrTruncated, "the input ends inside a value")
			}
			if err := p.refill(p.pos); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		p.pos = n
		return nil
	}
}

func (p *parser) idxOrNone() int {
	if p.idx >= 0 {
		return p.idx
	}
	return -1
}

// peek skips whitespace and returns the next byte (0 at the end of input).
func (p *parser) peek() (byte, error) {
	for {
		for p.pos < p.end {
			switch p.buf[p.pos] {
			case ' ', '\t', '\n', '\r':
				p.pos++
				continue
			}
			return p.buf[p.pos], nil
		}
		if p.eof {
			return 0, nil
		}
		if err := p.refill(p.pos); err != nil {
			return 0, err
		}
	}
}

// ---- document structure ----

func (p *parser) document() error {
	p.idx = -1
	if err := p.refill(0); err != nil {
		return err
	}
	if p.end >= 3 && p.buf[0] == 0xEF && p.buf[1] == 0xBB && p.buf[2] == 0xBF {
		p.pos = 3 // UTF-8 byte order mark
	}
	c, err := p.peek()
	if err != nil {
		return err
	}
	switch c {
	case '[':
		p.info.Format = "legacy"
		p.metaBuf = append(p.metaBuf[:0], "{}"...)
		p.pos++
		if err := p.events(); err != nil {
			return err
		}
	case '{':
		if err := p.object(); err != nil {
			return err
		}
	case 0:
		return p.errAt(p.pos, -1, ErrNotJSON, "empty input")
	default:
		return p.errAt(p.pos, -1, ErrNotJSON, fmt.Sprintf("expected '{' or '[' at the start, found %q", c))
	}
	c, err = p.peek()
	if err != nil {
		return err
	}
	if c != 0 {
		return p.errAt(p.pos, -1, ErrSyntax, "data after the end of the JSON document")
	}
	p.info.Metadata = append([]byte(nil), p.metaBuf...)
	return nil
}

// object parses the top-level object: traceEvents streamed, every other key
// kept in metaBuf.
func (p *parser) object() error {
	p.pos++
	p.metaBuf = append(p.metaBuf[:0], '{')
	found := false
	first := true
	for {
		c, err := p.peek()
		if err != nil {
			return err
		}
		if c == '}' && first {
			p.pos++
			break
		}
		if !first {
			switch c {
			case ',':
				p.pos++
				if c, err = p.peek(); err != nil {
					return err
				}
			case '}':
				p.pos++
				goto done
			default:
				return p.syntax(p.pos, "expected ',' or '}' after a top-level value")
			}
		}
		first = false
		if c != '"' {
			return p.syntax(p.pos, "expected a top-level key")
		}
		var key string
		var rawKey span
		if err := p.run(func(b []byte, i int) (int, error) {
			k, raw, n, err := p.key(b, i)
			if err != nil {
				return 0, err
			}
			n, err = p.colon(b, n)
			if err != nil {
				return 0, err
			}
			key, rawKey = string(k), raw
			_ = rawKey
			return n, nil
		}); err != nil {
			return err
		}
		keyStart := p.pos
		_ = keyStart
		if key == "traceEvents" && !found {
			found = true
			c, err := p.peek()
			if err != nil {
				return err
			}
			if c != '[' {
				if c == 0 {
					return p.errAt(p.pos, -1, ErrTruncated, "the input ends before the traceEvents array")
				}
				return p.errAt(p.pos, -1, ErrNoTraceEvents, fmt.Sprintf("traceEvents is not an array (found %q)", c))
			}
			p.pos++
			if err := p.events(); err != nil {
				return err
			}
			continue
		}
		if key == "vllm_version" {
			p.vllmMeta = true
		}
		if _, err := p.peek(); err != nil {
			return err
		}
		mark := len(p.metaBuf)
		if err := p.run(func(b []byte, i int) (int, error) {
			p.metaBuf = p.metaBuf[:mark]
			if len(p.metaBuf) > 1 {
				p.metaBuf = append(p.metaBuf, ',')
			}
			p.metaBuf = AppendJSONString(p.metaBuf, key)
			p.metaBuf = append(p.metaBuf, ':')
			return p.value(b, i, 0, &p.metaBuf)
		}); err != nil {
			return err
		}
		if len(p.metaBuf) > maxEventBytes {
			return p.errAt(p.pos, -1, ErrEventTooLarge, "top-level metadata is too large")
		}
	}
done:
	p.metaBuf = append(p.metaBuf, '}')
	if !found {
		return p.errAt(p.pos, -1, ErrNoTraceEvents, "the top-level object has no traceEvents key")
	}
	return nil
}

// events parses the elements of the traceEvents array, after its '['.
func (p *parser) events() error {
	first := true
	for p.idx = 0; ; p.idx++ {
		c, err := p.peek()
		if err != nil {
			return err
		}
		if c == ']' {
			p.pos++
			p.idx = -1
			return nil
		}
		if !first {
			if c != ',' {
				if c == 0 {
					return p.errAt(p.pos, p.idx, ErrTruncated, "the input ends inside traceEvents")
				}
				return p.syntax(p.pos, "expected ',' or ']' between events")
			}
			p.pos++
			if c, err = p.peek(); err != nil {
				return err
			}
		}
		first = false
		if c != '{' {
			if c == 0 {
				return p.errAt(p.pos, p.idx, ErrTruncated, "the input ends inside traceEvents")
			}
			return p.syntax(p.pos, "expected an event object")
		}
		for {
			n, err := p.event(p.buf[:p.end], p.pos)
			if err == errShort {
				if p.eof {
					return p.errAt(p.end, p.idx, ErrTruncated, "the input ends inside an event")
				}
				if err := p.refill(p.pos); err != nil {
					return err
				}
				continue
			}
			if err != nil {
				return err
			}
			start := p.pos
			p.pos = n
			if err := p.finishEvent(p.buf[:p.end], start); err != nil {
				return err
			}
			break
		}
		if p.progress != nil && p.idx%progressEvery == 0 && time.Since(p.lastProgress) >= progressPeriod {
			p.lastProgress = time.Now()
			p.progress(Progress{File: p.name, Files: 1, BytesRead: p.base + int64(p.pos), BytesTotal: p.total,
				DiskRead: p.src.diskRead.Load(), Events: p.info.Events})
		}
	}
}

// ---- one event ----

// event parses the event object at b[i] into p.ev.
func (p *parser) event(b []byte, i int) (int, error) {
	p.ev = Event{}
	p.args = p.args[:0]
	p.metaName, p.metaLabels, p.metaSort = span{}, span{}, span{}
	p.hasBytes = false
	i++ // '{'
	i, err := ws(b, i)
	if err != nil {
		return 0, err
	}
	if b[i] == '}' {
		return i + 1, nil
	}
	for {
		if b[i] != '"' {
			return 0, p.syntax(i, "expected a key in the event")
		}
		k, _, n, err := p.key(b, i)
		if err != nil {
			return 0, err
		}
		if i, err = p.colon(b, n); err != nil {
			return 0, err
		}
		e := &p.ev
		switch string(k) {
		case "ph":
			e.Ph, i, err = p.strField(b, i, &p.lastPh)
		case "cat":
			e.Cat, i, err = p.strField(b, i, &p.lastCat)
		case "name":
			e.Name, i, err = p.strField(b, i, nil)
		case "pid":
			e.Pid, i, err = p.idField(b, i, &p.lastPid)
		case "tid":
			e.Tid, i, err = p.idField(b, i, &p.lastTid)
		case "ts":
			i, err = p.timeField(b, i, false)
		case "dur":
			i, err = p.timeField(b, i, true)
		case "id":
			i, err = p.flowID(b, i)
		case "bp":
			e.BP, i, err = p.strField(b, i, nil)
		case "s":
			e.Scope, i, err = p.strField(b, i, nil)
		case "args":
			if b[i] == '{' {
				i, err = p.argsObject(b, i)
			} else {
				i, err = p.value(b, i, 0, nil)
			}
		default:
			i, err = p.value(b, i, 0, nil)
		}
		if err != nil {
			return 0, err
		}
		if i, err = ws(b, i); err != nil {
			return 0, err
		}
		switch b[i] {
		case ',':
			if i, err = ws(b, i+1); err != nil {
				return 0, err
			}
		case '}':
			return i + 1, nil
		default:
			return 0, p.syntax(i, "expected ',' or '}' in the event")
		}
	}
}

// strField reads a string value; a value of another type is skipped and
// leaves the field empty. last, when not nil, remembers the previous value
// of the field, which the next event most often repeats.
func (p *parser) strField(b []byte, i int, last *string) (string, int, error) {
	if b[i] != '"' {
		n, err := p.value(b, i, 0, nil)
		return "", n, err
	}
	s, n, err := p.str(b, i)
	if err != nil {
		return "", 0, err
	}
	return p.internLast(s, last), n, nil
}

// idField reads a pid or tid: a string as is, a number in its written form.
func (p *parser) idField(b []byte, i int, last *string) (string, int, error) {
	c := b[i]
	if c == '"' {
		return p.strField(b, i, last)
	}
	if c == '-' || (c >= '0' && c <= '9') {
		n, err := p.number(b, i)
		if err != nil {
			return "", 0, err
		}
		return p.internLast(b[i:n], last), n, nil
	}
	n, err := p.value(b, i, 0, nil)
	return "", n, err
}

// internLast is internBytes with a one-entry cache in *last.
func (p *parser) internLast(b []byte, last *string) string {
	if last == nil {
		return p.internBytes(b)
	}
	if string(b) == *last {
		return *last
	}
	*last = p.internBytes(b)
	return *last
}

// timeField reads ts or dur (see timeconv.go).
func (p *parser) timeField(b []byte, i int, dur bool) (int, error) {
	what, sentinel := "ts", ErrBadTimestamp
	if dur {
		what, sentinel = "dur", ErrBadDuration
	}
	start := i
	var text []byte
	var n int
	var err error
	switch c := b[i]; {
	case c == '"':
		text, n, err = p.str(b, i)
		if err != nil {
			return 0, err
		}
		text = bytes.TrimSpace(text)
	case c == '-' || (c >= '0' && c <= '9'):
		n, err = p.number(b, i)
		if err != nil {
			return 0, err
		}
		text = b[i:n]
	case c == 'n':
		// null: as if the key were absent
		return p.value(b, i, 0, nil)
	default:
		n, err = p.value(b, i, 0, nil)
		if err != nil {
			return 0, err
		}
		return 0, p.errAt(start, p.idx, sentinel, fmt.Sprintf("%s %s is not a number", what, clip(b[start:n])))
	}
	ns, neg, ok, overflow := timeNs(text)
	switch {
	case !ok:
		return 0, p.errAt(start, p.idx, sentinel, fmt.Sprintf("%s %s is not a number", what, clip(b[start:n])))
	case neg && ns != 0 && dur:
		return 0, p.errAt(start, p.idx, ErrBadDuration, fmt.Sprintf("dur %s is negative", clip(b[start:n])))
	case neg && ns != 0:
		return 0, p.errAt(start, p.idx, ErrAbsurdTime, fmt.Sprintf("ts %s is negative", clip(b[start:n])))
	case overflow || (dur && ns > maxDurNs):
		return 0, p.errAt(start, p.idx, ErrAbsurdTime, fmt.Sprintf("%s %s µs is beyond the plausible range", what, clip(b[start:n])))
	}
	if dur {
		p.ev.DurNs = ns
		p.ev.Has |= HasDur
	} else {
		p.ev.TsNs = ns
		p.ev.Has |= HasTs
	}
	return n, nil
}

func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

// flowID reads a flow id: an integer as is, a string holding an integer
// (decimal or 0x hex) as that integer, any other string as FlowIDOf(s).
func (p *parser) flowID(b []byte, i int) (int, error) {
	switch c := b[i]; {
	case c == '"':
		s, n, err := p.str(b, i)
		if err != nil {
			return 0, err
		}
		if v, err := strconv.ParseInt(string(s), 0, 64); err == nil {
			p.ev.FlowID = v
		} else {
			p.ev.FlowID = FlowIDOf(string(s))
		}
		p.ev.Has |= HasFlowID
		return n, nil
	case c == '-' || (c >= '0' && c <= '9'):
		n, err := p.number(b, i)
		if err != nil {
			return 0, err
		}
		if v, ok := parseInt(b[i:n]); ok {
			p.ev.FlowID = v
		} else {
			p.ev.FlowID = FlowIDOf(string(b[i:n]))
		}
		p.ev.Has |= HasFlowID
		return n, nil
	}
	return p.value(b, i, 0, nil)
}

// FlowIDOf is the FlowID of a flow whose id is a string that is not an
// integer: the FNV-1a hash of the string, as an int64.
func FlowIDOf(s string) int64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return int64(h.Sum64())
}

// argsObject parses the args object: typed args into the Event, the rest
// compacted into p.args (without its closing brace; see finishEvent).
func (p *parser) argsObject(b []byte, i int) (int, error) {
	i, err := ws(b, i+1)
	if err != nil {
		return 0, err
	}
	if b[i] == '}' {
		return i + 1, nil
	}
	e := &p.ev
	for {
		if b[i] != '"' {
			return 0, p.syntax(i, "expected a key in args")
		}
		k, raw, n, err := p.key(b, i)
		if err != nil {
			return 0, err
		}
		if i, err = p.colon(b, n); err != nil {
			return 0, err
		}
		var f Field
		var dst *int64
		switch string(k) {
		case "correlation":
			f, dst = HasCorrelation, &e.Correlation
		case "External id":
			f, dst = HasExternalID, &e.ExternalID
		case "external id":
			f, dst = HasExternalID, &e.ExternalID
			p.old = true
		case "Python id":
			f, dst = HasPythonID, &e.PythonID
		case "Python parent id":
			f, dst = HasPythonParentID, &e.PythonParentID
		case "Ev Idx":
			f, dst = HasEvIdx, &e.EvIdx
		case "Sequence number":
			f, dst = HasSeqNo, &e.SeqNo
		case "Fwd thread id":
			f, dst = HasFwdTid, &e.FwdTid
		case "stream":
			f, dst = HasStream, &e.Stream
		case "device":
			f, dst = HasDevice, &e.Device
		case "graph id":
			f, dst = HasGraphID, &e.GraphID
		case "bytes":
			if c := b[i]; c == '-' || (c >= '0' && c <= '9') {
				n, err := p.number(b, i)
				if err != nil {
					return 0, err
				}
				if v, ok := parseInt(b[i:n]); ok && !p.hasBytes && e.Has&HasBytes == 0 {
					p.hasBytes, p.bytesNum, p.bytesKey, p.bytesVal = true, v, raw, span{i, n}
					i = n
					goto next
				}
			}
		case "memory bandwidth (GB/s)":
			if c := b[i]; c == '-' || (c >= '0' && c <= '9') {
				n, err := p.number(b, i)
				if err != nil {
					return 0, err
				}
				if v, err := strconv.ParseFloat(string(b[i:n]), 64); err == nil && e.Has&HasMemBW == 0 {
					e.MemBWGBps = v
					e.Has |= HasMemBW
					i = n
					goto next
				}
			}
		case "grid", "block":
			isGrid := k[0] == 'g'
			if b[i] == '[' && !(isGrid && e.Has&HasGrid != 0) && !(!isGrid && e.Has&HasBlock != 0) {
				p.tmp = p.tmp[:0]
				n, err := p.value(b, i, 0, &p.tmp)
				if err != nil {
					return 0, err
				}
				if isGrid {
					e.Grid, e.Has = p.internBytes(p.tmp), e.Has|HasGrid
				} else {
					e.Block, e.Has = p.internBytes(p.tmp), e.Has|HasBlock
				}
				i = n
				goto next
			}
		case "name":
			p.metaName = span{i, 0}
		case "labels":
			p.metaLabels = span{i, 0}
		case "sort_index":
			p.metaSort = span{i, 0}
		}
		if dst != nil && e.Has&f == 0 {
			if c := b[i]; c == '-' || (c >= '0' && c <= '9') {
				n, err := p.number(b, i)
				if err != nil {
					return 0, err
				}
				if v, ok := parseInt(b[i:n]); ok {
					*dst = v
					e.Has |= f
					i = n
					goto next
				}
			}
		}
		// Verbatim.
		if len(p.args) == 0 {
			p.args = append(p.args, '{')
		} else {
			p.args = append(p.args, ',')
		}
		if key := b[raw.start:raw.end]; printableASCII(key) {
			p.args = append(p.args, key...)
		} else {
			p.args = appendStringText(p.args, key)
		}
		p.args = append(p.args, ':')
		{
			n, err := p.value(b, i, 0, &p.args)
			if err != nil {
				return 0, err
			}
			switch {
			case p.metaName.start == i && p.metaName.end == 0:
				p.metaName.end = n
			case p.metaLabels.start == i && p.metaLabels.end == 0:
				p.metaLabels.end = n
			case p.metaSort.start == i && p.metaSort.end == 0:
				p.metaSort.end = n
			}
			i = n
		}
	next:
		if i, err = ws(b, i); err != nil {
			return 0, err
		}
		switch b[i] {
		case ',':
			if i, err = ws(b, i+1); err != nil {
				return 0, err
			}
		case '}':
			return i + 1, nil
		default:
			return 0, p.syntax(i, "expected ',' or '}' in args")
		}
	}
}

// finishEvent completes p.ev (kind, api, the pending "bytes" arg, Args),
// records what it tells about the file, and hands it to the sink. b is the
// buffer the event was parsed from.
func (p *parser) finishEvent(b []byte, start int) error {
	e := &p.ev
	fi := p.info
	fi.PhCounts[e.Ph]++
	if e.Ph == "M" {
		p.metadataEvent(b)
		return nil
	}
	e.Kind = KindOf(e.Ph, e.Cat)
	if e.Kind == KindOther && fi.Format == "legacy" && e.Cat == "" && e.Ph == "X" {
		e.Kind = legacyKind(e.Name)
	}
	e.API = APIOf(e.Kind, e.Name)
	if p.hasBytes {
		if isGPUKind(e.Kind) {
			e.Bytes = p.bytesNum
			e.Has |= HasBytes
		} else {
			if len(p.args) == 0 {
				p.args = append(p.args, '{')
			} else {
				p.args = append(p.args, ',')
			}
			p.args = append(p.args, b[p.bytesKey.start:p.bytesKey.end]...)
			p.args = append(p.args, ':')
			p.args = append(p.args, b[p.bytesVal.start:p.bytesVal.end]...)
		}
	}
	if len(p.args) > 0 {
		p.args = append(p.args, '}')
		e.Args = p.args
	}
	fi.Events++
	fi.CatCounts[e.Cat]++
	if e.Has&HasTs != 0 {
		end := e.TsNs + e.DurNs
		if !p.hasTs {
			p.hasTs, p.firstTs, p.lastEnd = true, e.TsNs, end
		} else {
			p.firstTs = min(p.firstTs, e.TsNs)
			p.lastEnd = max(p.lastEnd, end)
		}
	}
	p.observe(e)
	if p.opts.NoPython && e.Kind == KindPython {
		fi.Skipped++
		return nil
	}
	if err := p.sink(e); err != nil {
		return fmt.Errorf("trace %s: traceEvents[%d]: %w: %w", p.name, p.idx, ErrSinkAborted, err)
	}
	return nil
}

// observe updates the capability flags and producer/platform evidence.
func (p *parser) observe(e *Event) {
	fi := p.info
	switch e.Kind {
	case KindRuntime, KindDriver:
		if strings.HasPrefix(e.Name, "hip") {
			p.hip = true
		} else if strings.HasPrefix(e.Name, "cu") {
			p.cuda = true
		}
		if e.API == APIGraphLaunch {
			fi.HasGraphs = true
		}
	case KindKernel, KindGPUMemcpy, KindGPUMemset, KindGPUSync, KindGPUAnnotation:
		p.gpu = true
		if e.Kind == KindGPUSync {
			fi.HasSyncEvents = true
		}
	case KindPython:
		fi.HasPython = true
		if !p.vllm && strings.Contains(e.Name, "vllm/") {
			p.vllm = true
		}
		if !p.sglang && strings.Contains(e.Name, "sglang/") {
			p.sglang = true
		}
	}
	if e.Has&HasGraphID != 0 {
		fi.HasGraphs = true
	}
	if len(e.Cat) > 0 {
		switch e.Cat[0] {
		case 'm':
			if strings.HasPrefix(e.Cat, "mtia") {
				p.mtia = true
			}
		case 'O', 'R', 'K', 'M':
			switch e.Cat {
			case "Operator", "Runtime", "Kernel", "Memcpy", "Memset":
				p.old = true
			}
		}
	}
	if e.Kind != KindFlow && len(e.Name) > 4 {
		switch e.Name[0] {
		case 'P':
			if strings.HasPrefix(e.Name, "ProfilerStep#") {
				fi.HasSteps, p.training = true, true
			}
		case 'e':
			if isVLLMStep(e.Name) {
				fi.HasSteps, p.vllmStep = true, true
			}
		case 's':
			if strings.HasPrefix(e.Name, "step[") {
				fi.HasSteps, p.sglangStep = true, true
			}
		}
	}
}

// isVLLMStep reports whether an annotation names a vLLM engine step:
// execute_context_…/execute_new_… (v1 of 2025) or
// execute_<n>_context_<n>(…)_generation_<n>(…) (later releases).
func isVLLMStep(name string) bool {
	if !strings.HasPrefix(name, "execute_") {
		return false
	}
	return strings.HasPrefix(name, "execute_context_") || strings.HasPrefix(name, "execute_new_") ||
		strings.Contains(name, "_context_") || strings.Contains(name, "_generation_")
}

// metadataEvent records a ph M event in Processes / Threads.
func (p *parser) metadataEvent(b []byte) {
	e := &p.ev
	fi := p.info
	fi.MetaCounts[e.Name]++
	str := func(s span) string {
		if s.end <= s.start || b[s.start] != '"' {
			if s.end > s.start {
				return p.internBytes(b[s.start:s.end])
			}
			return ""
		}
		v, _, err := p.str(b, s.start)
		if err != nil {
			return ""
		}
		return p.internBytes(v)
	}
	num := func(s span) (int64, bool) {
		if s.end <= s.start {
			return 0, false
		}
		return parseInt(b[s.start:s.end])
	}
	switch e.Name {
	case "process_name", "process_labels", "process_sort_index":
		k, ok := p.procIdx[e.Pid]
		if !ok {
			k = len(fi.Processes)
			p.procIdx[e.Pid] = k
			fi.Processes = append(fi.Processes, ProcessInfo{Pid: e.Pid})
		}
		pi := &fi.Processes[k]
		switch e.Name {
		case "process_name":
			pi.Name = str(p.metaName)
		case "process_labels":
			pi.Labels = str(p.metaLabels)
		case "process_sort_index":
			pi.SortIndex, pi.HasSortIndex = num(p.metaSort)
		}
	case "thread_name", "thread_sort_index":
		key := [2]string{e.Pid, e.Tid}
		k, ok := p.thrIdx[key]
		if !ok {
			k = len(fi.Threads)
			p.thrIdx[key] = k
			fi.Threads = append(fi.Threads, ThreadInfo{Pid: e.Pid, Tid: e.Tid})
		}
		ti := &fi.Threads[k]
		if e.Name == "thread_name" {
			ti.Name = str(p.metaName)
		} else {
			ti.SortIndex, ti.HasSortIndex = num(p.metaSort)
		}
	}
}

// finishInfo derives the file-level fields once every event was seen.
func (p *parser) finishInfo() {
	fi := p.info
	fi.applyMetadata()
	if fi.Format == "" {
		fi.Format = "kineto"
		if p.old {
			fi.Format = "kineto_2021"
		}
	}
	if p.hasTs {
		fi.FirstTsNs, fi.LastEndNs = p.firstTs, p.lastEnd
	}
	switch {
	case p.vllm || p.vllmMeta:
		fi.Producer = "vllm"
	case p.sglang || p.sglangStep:
		fi.Producer = "sglang"
	case p.vllmStep:
		fi.Producer = "vllm"
	case p.training:
		fi.Producer = evidence.ProducerProfilerStep
	default:
		fi.Producer = "unknown"
	}
	switch {
	case p.hip || isAMDDevice(fi.GPUModel):
		fi.Platform = "rocm"
	case p.mtia:
		fi.Platform = "mtia"
	case p.cuda || (p.gpu && fi.GPUModel != "unknown"):
		fi.Platform = "cuda"
	case !p.gpu:
		fi.Platform = "cpu"
	default:
		fi.Platform = "unknown"
	}
	for _, pr := range fi.Processes {
		c, ok := parseCoords(pr.Name)
		if !ok {
			c, ok = parseCoords(pr.Labels)
		}
		if ok {
			if fi.PidCoords == nil {
				fi.PidCoords = map[string]Coords{}
			}
			fi.PidCoords[pr.Pid] = c
		}
	}
	if fi.PidCoords != nil {
		assignRanks(fi.PidCoords)
	}
}

// ---- lexical helpers; all return errShort when b ends too early ----

func ws(b []byte, i int) (int, error) {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
			continue
		}
		return i, nil
	}
	return i, errShort
}

// colon skips whitespace, a ':' and whitespace.
func (p *parser) colon(b []byte, i int) (int, error) {
	i, err := ws(b, i)
	if err != nil {
		return 0, err
	}
	if b[i] != ':' {
		return 0, p.syntax(i, "expected ':' after a key")
	}
	return ws(b, i+1)
}

// key reads the key string at b[i]: its unescaped bytes (valid until the
// next call) and its raw span, quotes included.
func (p *parser) key(b []byte, i int) ([]byte, span, int, error) {
	s, n, err := p.str(b, i)
	if err != nil {
		return nil, span{}, 0, err
	}
	return s, span{i, n}, n, nil
}

// str reads the string at b[i] (a '"'); the bytes returned alias b when the
// string has no escapes, and p.tmp otherwise.
func (p *parser) str(b []byte, i int) ([]byte, int, error) {
	j := i + 1
	if j > len(b) {
		return nil, 0, errShort
	}
	q := bytes.IndexByte(b[j:], '"')
	if q < 0 {
		return nil, 0, errShort
	}
	seg := b[j : j+q]
	if bytes.IndexByte(seg, '\\') < 0 {
		return seg, j + q + 1, nil
	}
	return p.unescape(b, i)
}

// unescape decodes a string with escapes into p.tmp. Its bytes other than
// escapes are kept as they are: internBytes and the callers that compare or
// hash them see the string as written.
func (p *parser) unescape(b []byte, i int) ([]byte, int, error) {
	out, n, st := jsonstr.Append(p.tmp[:0], b[i+1:], jsonstr.Raw)
	p.tmp = out
	n += i + 1
	switch st {
	case jsonstr.OK:
		return out, n, nil
	case jsonstr.BadEscape:
		return nil, 0, p.syntax(n, "invalid escape in a string")
	case jsonstr.BadHex:
		return nil, 0, p.syntax(n, "invalid \\u escape")
	}
	return nil, 0, errShort
}

// hex4 checks the \uXXXX escape at b[j] (the backslash) and returns its end.
func (p *parser) hex4(b []byte, j int) (int, error) {
	if j+6 > len(b) {
		return 0, errShort
	}
	if _, ok := jsonstr.Hex4(b[j+2:]); !ok {
		return 0, p.syntax(j+2, "invalid \\u escape")
	}
	return j + 6, nil
}

// number validates the JSON number at b[i] and returns its end.
func (p *parser) number(b []byte, i int) (int, error) {
	j := i
	if b[j] == '-' {
		j++
		if j >= len(b) {
			return 0, errShort
		}
		if b[j] == 'I' { // -Infinity, as Python writes it
			return p.literal(b, i, "-Infinity")
		}
	}
	k := j
	for j < len(b) && b[j]-'0' <= 9 {
		j++
	}
	if j == len(b) {
		return 0, errShort
	}
	if j == k {
		return 0, p.syntax(j, "expected a digit")
	}
	if b[j] == '.' {
		j++
		k = j
		for j < len(b) && b[j]-'0' <= 9 {
			j++
		}
		if j == len(b) {
			return 0, errShort
		}
		if j == k {
			return 0, p.syntax(j, "expected a digit after '.'")
		}
	}
	if b[j] == 'e' || b[j] == 'E' {
		j++
		if j >= len(b) {
			return 0, errShort
		}
		if b[j] == '+' || b[j] == '-' {
			j++
		}
		k = j
		for j < len(b) && b[j]-'0' <= 9 {
			j++
		}
		if j == len(b) {
			return 0, errShort
		}
		if j == k {
			return 0, p.syntax(j, "expected a digit in the exponent")
		}
	}
	return j, nil
}

// literal matches lit at b[i].
func (p *parser) literal(b []byte, i int, lit string) (int, error) {
	for k := 0; k < len(lit); k++ {
		if i+k >= len(b) {
			return 0, errShort
		}
		if b[i+k] != lit[k] {
			return 0, p.syntax(i+k, "invalid literal")
		}
	}
	return i + len(lit), nil
}

// parseInt parses a JSON integer (no fraction, no exponent) that fits an int64.
func parseInt(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg = true
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}

// value validates the JSON value at b[i] and, when out is not nil, appends
// it compacted (whitespace outside strings removed; NaN and ±Infinity, which
// Python writes but JSON lacks, become null; strings made valid UTF-8 with
// control characters escaped).
func (p *parser) value(b []byte, i, depth int, out *[]byte) (int, error) {
	if depth > maxDepth {
		return 0, p.errAt(i, p.idxOrNone(), ErrSyntax, "values nested too deep")
	}
	if i >= len(b) {
		return 0, errShort
	}
	switch c := b[i]; {
	case c == '"':
		return p.stringValue(b, i, out)
	case c == '{' || c == '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		if out != nil {
			*out = append(*out, c)
		}
		j, err := ws(b, i+1)
		if err != nil {
			return 0, err
		}
		if b[j] == closer {
			if out != nil {
				*out = append(*out, closer)
			}
			return j + 1, nil
		}
		for {
			if c == '{' {
				if b[j] != '"' {
					return 0, p.syntax(j, "expected a key")
				}
				if j, err = p.stringValue(b, j, out); err != nil {
					return 0, err
				}
				if j, err = p.colon(b, j); err != nil {
					return 0, err
				}
				if out != nil {
					*out = append(*out, ':')
				}
			}
			if j, err = p.value(b, j, depth+1, out); err != nil {
				return 0, err
			}
			if j, err = ws(b, j); err != nil {
				return 0, err
			}
			switch b[j] {
			case ',':
				if out != nil {
					*out = append(*out, ',')
				}
				if j, err = ws(b, j+1); err != nil {
					return 0, err
				}
			case closer:
				if out != nil {
					*out = append(*out, closer)
				}
				return j + 1, nil
			default:
				return 0, p.syntax(j, fmt.Sprintf("expected ',' or %q", closer))
			}
		}
	case c == '-' || (c >= '0' && c <= '9'):
		j, err := p.number(b, i)
		if err != nil {
			return 0, err
		}
		if out != nil {
			if b[j-1] == 'y' { // -Infinity
				*out = append(*out, "null"...)
			} else {
				*out = append(*out, b[i:j]...)
			}
		}
		return j, nil
	case c == 't', c == 'f', c == 'n', c == 'N', c == 'I':
		var lit, as string
		switch c {
		case 't':
			lit, as = "true", "true"
		case 'f':
			lit, as = "false", "false"
		case 'n':
			lit, as = "null", "null"
		case 'N':
			lit, as = "NaN", "null"
		case 'I':
			lit, as = "Infinity", "null"
		}
		j, err := p.literal(b, i, lit)
		if err != nil {
			return 0, err
		}
		if out != nil {
			*out = append(*out, as...)
		}
		return j, nil
	}
	return 0, p.syntax(i, "expected a JSON value")
}

// stringValue validates the string at b[i] and appends it, quotes included,
// with its escapes as written.
func (p *parser) stringValue(b []byte, i int, out *[]byte) (int, error) {
	j := i + 1
	for {
		if j >= len(b) {
			return 0, errShort
		}
		q := bytes.IndexByte(b[j:], '"')
		if q < 0 {
			return 0, errShort
		}
		quote := j + q
		// Check the escapes before the quote; one of them may escape the quote
		// itself, and then the search goes on after it.
		for j <= quote {
			bs := bytes.IndexByte(b[j:quote], '\\')
			if bs < 0 {
				j = quote + 1
				goto closed
			}
			k := j + bs
			if k+1 >= len(b) {
				return 0, errShort
			}
			switch b[k+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j = k + 2
			case 'u':
				n, err := p.hex4(b, k)
				if err != nil {
					return 0, err
				}
				j = n
			default:
				return 0, p.syntax(k+1, "invalid escape in a string")
			}
		}
	}
closed:
	if out != nil {
		*out = appendStringText(*out, b[i:j])
	}
	return j, nil
}

// appendStringText appends the JSON string s, quotes included and escapes
// as written, with invalid UTF-8 replaced by U+FFFD and raw control
// characters escaped.
func appendStringText(out, s []byte) []byte {
	if printableASCII(s) || (utf8.Valid(s) && noControl(s)) {
		return append(out, s...)
	}
	return appendSanitized(out, s)
}

// printableASCII reports whether every byte of s is in 0x20-0x7f.
func printableASCII(s []byte) bool {
	for _, c := range s {
		if c-0x20 >= 0x60 {
			return false
		}
	}
	return true
}

func noControl(s []byte) bool {
	for _, c := range s {
		if c < 0x20 {
			return false
		}
	}
	return true
}

// appendSanitized appends the quoted string s with invalid UTF-8 replaced
// by U+FFFD and raw control characters escaped.
func appendSanitized(out, s []byte) []byte {
	s = bytes.ToValidUTF8(s, []byte("\uFFFD"))
	for _, c := range s {
		if c < 0x20 {
			out = append(out, `\u00`...)
			out = append(out, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
			continue
		}
		out = append(out, c)
	}
	return out
}

// AppendJSONString appends s as a JSON string (jsonstr.AppendQuoted, the
// one encoder). Writers of trace JSON (package synth) use it.
func AppendJSONString(b []byte, s string) []byte { return jsonstr.AppendQuoted(b, s) }

// internBytes returns b as a string, shared with earlier equal strings, and
// valid UTF-8.
func (p *parser) internBytes(b []byte) string {
	if s, ok := p.intern[string(b)]; ok {
		return s
	}
	s := string(b)
	key := s // shares its bytes with the value
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(p.intern) < maxInterned {
		p.intern[key] = s
	}
	return s
}
