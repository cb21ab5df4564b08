package trace

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error the importer returns wraps one of them, so
// callers test with errors.Is; the message names the file and, for errors in
// the data, the byte offset in the uncompressed JSON stream.
var (
	ErrUnreadable    = errors.New("unreadable file")
	ErrTruncatedGzip = errors.New("truncated gzip stream")
	ErrBadGzip       = errors.New("corrupt gzip stream")
	ErrNotJSON       = errors.New("not JSON")
	ErrTruncated     = errors.New("truncated JSON")
	ErrSyntax        = errors.New("JSON syntax error")
	ErrNoTraceEvents = errors.New("no traceEvents array")
	ErrBadTimestamp  = errors.New("bad timestamp")
	ErrBadDuration   = errors.New("bad duration")
	ErrAbsurdTime    = errors.New("absurd time value")
	ErrEventTooLarge = errors.New("event too large")
	ErrNoTraceFiles  = errors.New("no trace files")
	ErrDuplicateRank = errors.New("duplicate rank")
	ErrSinkAborted   = errors.New("sink aborted the import")
	errShort         = errors.New("need more input") // internal: the buffer ended inside a value
)

// ParseError is an error in a trace's data: where it is and what is wrong.
// It unwraps to one of the sentinel errors.
type ParseError struct {
	File   string // path or name of the input
	Offset int64  // byte offset in the uncompressed JSON stream
	Event  int    // index in traceEvents, -1 outside it
	Msg    string // what is wrong
	Err    error  // the sentinel
}

func (e *ParseError) Error() string {
	if e.Event >= 0 {
		return fmt.Sprintf("trace %s: offset %d: traceEvents[%d]: %s: %v", e.File, e.Offset, e.Event, e.Msg, e.Err)
	}
	return fmt.Sprintf("trace %s: offset %d: %s: %v", e.File, e.Offset, e.Msg, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }
