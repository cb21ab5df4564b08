package cells

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/internal/suggest"
	"github.com/tracebook/tracebook/pipeline"
)

// Publisher sends outputs while a cell runs. It has the method set of
// kernel.Publisher, so the composition root passes the kernel's publisher
// through unchanged.
type Publisher interface {
	// Stream sends text to "stdout" or "stderr".
	Stream(name, text string)
	// Display shows a MIME bundle; a non-empty displayID lets UpdateDisplay
	// replace it later.
	Display(data, metadata map[string]any, displayID string)
	// UpdateDisplay replaces the output shown with the same displayID.
	UpdateDisplay(data, metadata map[string]any, displayID string)
	// ClearOutput clears the cell's outputs so far; with wait true the
	// client clears them only when the next output arrives.
	ClearOutput(wait bool)
}

// Result is the value of a cell: a MIME bundle and its metadata. It has the
// shape of kernel.Result.
type Result struct{ Data, Metadata map[string]any }

// ExecError is a failed cell as Jupyter shows it: an error name (for SQL
// errors DuckDB's own: "Binder Error", "Parser Error", ...), a value, and
// traceback lines (for SQL errors DuckDB's message with its "LINE n:" and
// caret lines). It has the shape of kernel.ExecError.
type ExecError struct {
	EName, EValue string
	Traceback     []string
}

// Error returns "EName: EValue".
func (e *ExecError) Error() string { return e.EName + ": " + e.EValue }

// SessionOptions configure a Session. The zero value is usable.
type SessionOptions struct {
	// WorkDir is the directory that relative paths in magics, path
	// completion and "%trace load" with no PATH start from. Default: the
	// process's working directory (Jupyter starts kernels in the notebook's folder).
	WorkDir string
	// MaxRows is the most rows a SQL cell shows. Default 50.
	MaxRows int
	// ProgressInterval is the least time between two progress updates of a
	// load. Default 250ms (at most 4 updates a second).
	ProgressInterval time.Duration
	// Clock returns the time, for throttling progress and for the MB/s of a
	// load. Default time.Now.
	Clock func() time.Time
	// Deterministic leaves out of the outputs whatever changes from one run
	// to the next on the same traces: load times and rates, and whether the
	// parse cache served a load. `tracebook run` sets it so that a re-run
	// notebook is byte-identical.
	Deterministic bool
}

// DefaultMaxRows is the most rows a SQL cell shows unless
// SessionOptions.MaxRows or %%sql --max-rows says otherwise.
const DefaultMaxRows = 50

// Session runs the cells of one notebook against an Engine.
//
// A Session owns: the execution counter (display ids derive from it, so
// outputs do not depend on Jupyter's history), the %context record, the
// last evidence bundle (SetBundle), the caches of table, column and trace
// names that completion reads (dropped after every cell), and the hooks
// below. It does not own the Engine: the
// caller opens it, and closes it after Shutdown.
//
// Execute is meant to be called from one goroutine at a time (the kernel
// serves shell requests in order); Complete, Inspect and IsComplete may be
// called at any time.
type Session struct {
	// Hooks run %evidence, %crossview, %report and %diff. They are set once,
	// before the first Execute, by the code that provides the magic; a nil
	// hook makes the magic fail with "...is not available in this build".
	Evidence, Crossview, Report, Diff Hook

	eng  pipeline.Engine
	opts SessionOptions

	mu        sync.Mutex
	count     int
	context   map[string]string
	columns   map[string][]table.Column
	columnsOK bool
	traces    []string
	ranks     []string // of the loaded traces, with traces
	tracesOK  bool
	closed    bool
	bundle    *evidence.Bundle
	bg        *bgLoad // the load running behind the cells (background.go)
}

// NewSession returns a session that runs cells against eng. eng may be nil
// for a session that only parses, helps and completes magics.
func NewSession(eng pipeline.Engine, opts SessionOptions) *Session {
	if opts.MaxRows <= 0 {
		opts.MaxRows = DefaultMaxRows
	}
	if opts.ProgressInterval <= 0 {
		opts.ProgressInterval = 250 * time.Millisecond
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	return &Session{eng: eng, opts: opts, context: map[string]string{}}
}

// Engine returns the engine the session runs against.
func (s *Session) Engine() pipeline.Engine { return s.eng }

// WorkDir returns the directory relative paths start from ("" = the process's).
func (s *Session) WorkDir() string { return s.opts.WorkDir }

// MaxRows returns the most rows a table result shows.
func (s *Session) MaxRows() int { return s.opts.MaxRows }

// Context returns a copy of the %context record: canonical keys (tp, pp,
// dp, ep, max-num-seqs, max-num-batched-tokens, cudagraph-mode, isl, osl,
// batch-size, model, dtype) to values as written.
func (s *Session) Context() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.context))
	for k, v := range s.context {
		out[k] = v
	}
	return out
}

// Bundle returns the evidence bundle that SetBundle kept last, or nil.
func (s *Session) Bundle() *evidence.Bundle {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bundle
}

// SetBundle keeps the evidence bundle that %evidence collected last, for
// %report and the viewer to reuse.
func (s *Session) SetBundle(b *evidence.Bundle) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bundle = b
}

// ExecutionCount returns how many cells Execute has started.
func (s *Session) ExecutionCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count
}

// Execute runs one cell. ctx is cancelled on interrupt: a running query or
// load stops within a second and the session stays usable. A failed cell
// returns a *ExecError; a cell without a value returns a nil Result.
func (s *Session) Execute(ctx context.Context, code string, pub Publisher) (*Result, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, &ExecError{EName: "SessionError", EValue: ErrShutdown.Error(), Traceback: []string{"SessionError: " + ErrShutdown.Error()}}
	}
	s.count++
	count := s.count
	s.mu.Unlock()
	if pub == nil {
		pub = nopPublisher{}
	}
	if err := s.awaitLoad(ctx, code, pub); err != nil {
		return nil, toExecError(ctx, err)
	}
	res, err := s.execute(ctx, code, pub, count)
	s.invalidate() // any cell may have created or dropped a table
	if err != nil {
		return nil, toExecError(ctx, err)
	}
	return res, nil
}

func (s *Session) execute(ctx context.Context, code string, pub Publisher, count int) (*Result, error) {
	cell, err := Parse(code)
	if err != nil {
		return nil, &ExecError{EName: "SyntaxError", EValue: err.Error(), Traceback: []string{"SyntaxError: " + err.Error()}}
	}
	if cell.Kind == SQLCell {
		return s.runSQL(ctx, cell.Body, cell.BodyLine, s.opts.MaxRows)
	}
	m := lookupMagic(cell.Name)
	if m == nil {
		sign := "%"
		if cell.Kind == CellMagic {
			sign = "%%"
		}
		return nil, fmt.Errorf("%w %s%s%s (%%help lists the magics)", ErrUnknownMagic, sign, cell.Name, magicHint(cell.Name))
	}
	switch {
	case m.cell && cell.Kind == LineMagic:
		return nil, usagef("%%%s is a cell magic: write %%%%%s on the first line and the body below it", m.name, m.name)
	case !m.cell && cell.Kind == CellMagic:
		return nil, usagef("%%%%%s is not a cell magic: write %%%s", m.name, m.name)
	}
	row, full, args := m, "%"+m.name, cell.Args
	if m.cell {
		full = "%%" + m.name
	}
	if len(m.subs) > 0 {
		var sub *magic
		if len(args) > 0 {
			sub = m.sub(args[0])
		}
		if sub == nil {
			var names []string
			for _, sb := range m.subs {
				names = append(names, sb.name)
			}
			what := "needs a subcommand"
			if len(args) > 0 {
				what = fmt.Sprintf("has no subcommand %q%s", args[0], suggest.DidYouMean(args[0], names, nil))
			}
			return nil, usageExecError(fmt.Sprintf("%s %s: %s", full, what, strings.Join(names, ", ")), m, nil)
		}
		row, full, args = sub, full+" "+sub.name, args[1:]
	}
	c := &call{s: s, m: row, full: full, cell: cell, args: args, pub: pub, count: count}
	res, err := row.run(ctx, c)
	if err != nil && errors.Is(err, ErrUsage) {
		if row != m {
			return nil, usageExecError(err.Error(), m, row)
		}
		return nil, usageExecError(err.Error(), m, nil)
	}
	return res, err
}

// usageExecError is a UsageError that quotes the synopsis of the magic m,
// or of its subcommand sub when not nil, or of all its subcommands.
func usageExecError(msg string, m, sub *magic) *ExecError {
	tb := []string{"UsageError: " + msg}
	switch {
	case sub != nil:
		tb = append(tb, "usage: "+sub.synopsis("%"+m.name))
	case len(m.subs) > 0:
		for _, sub := range m.subs {
			tb = append(tb, "usage: "+sub.synopsis("%"+m.name))
		}
	default:
		tb = append(tb, "usage: "+m.synopsis(""))
	}
	tb = append(tb, "%help "+m.name+" shows the options")
	return &ExecError{EName: "UsageError", EValue: msg, Traceback: tb}
}

// toExecError turns an error of a cell into the Jupyter error it shows as.
func toExecError(ctx context.Context, err error) *ExecError {
	var ee *ExecError
	if errors.As(err, &ee) {
		return ee
	}
	msg := err.Error()
	switch {
	case errors.Is(ctx.Err(), context.Canceled) || errors.Is(err, context.Canceled):
		return &ExecError{EName: "KeyboardInterrupt", EValue: "interrupted", Traceback: []string{"KeyboardInterrupt: the cell was interrupted"}}
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return &ExecError{EName: "TimeoutError", EValue: msg, Traceback: []string{"TimeoutError: " + msg}}
	}
	if de, ok := duckError(msg, 0); ok {
		return de
	}
	name := "Error"
	switch {
	case errors.Is(err, ErrUsage), errors.Is(err, ErrUnknownMagic):
		name = "UsageError"
	case errors.Is(err, ErrNotAvailable):
		name = "NotAvailable"
	case errors.Is(err, ErrNoTrace):
		name = "TraceNotFound"
	case errors.As(err, new(*pipeline.SliceError)):
		name = "SliceError" // the filter selects nothing the traces hold
	}
	return &ExecError{EName: name, EValue: msg, Traceback: strings.Split(name+": "+msg, "\n")}
}

// runSQL runs a SQL text and renders its result; bodyLine is the cell line
// the text starts on.
func (s *Session) runSQL(ctx context.Context, sql string, bodyLine, maxRows int) (*Result, error) {
	if blankSQL(sql) {
		return nil, nil
	}
	if s.eng == nil {
		return nil, errors.New("no database in this session")
	}
	t, err := s.eng.Query(ctx, sql, maxRows)
	if err != nil {
		if ctx.Err() == nil {
			if de, ok := duckError(err.Error(), bodyLine); ok {
				return nil, de
			}
		}
		return nil, err
	}
	if t == nil || len(t.Columns) == 0 {
		return nil, nil
	}
	return TableResult(t), nil
}

// blankSQL reports whether sql holds only blanks and -- comments.
func blankSQL(sql string) bool {
	for _, l := range strings.Split(sql, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "--") {
			return false
		}
	}
	return true
}

func runSQLMagic(ctx context.Context, c *call) (*Result, error) {
	opts, pos, err := parseOptions(c.m, c.full, c.args)
	if err != nil {
		return nil, err
	}
	if len(pos) > 0 {
		return nil, usagef("%%%%sql takes no argument on its first line but options, got %q", pos[0])
	}
	maxRows := c.s.opts.MaxRows
	if v, ok := opts["max-rows"]; ok {
		n, err := parsePositive(v)
		if err != nil {
			return nil, usagef("--max-rows: %q is not a positive number of rows", v)
		}
		maxRows = n
	}
	return c.s.runSQL(ctx, c.cell.Body, c.cell.BodyLine, maxRows)
}

func parsePositive(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("not a positive integer: %q", v)
	}
	return n, nil
}

// Shutdown ends the session: later cells fail. With restart, the session
// starts over instead: the counter, the %context record and the caches are
// reset. The engine stays open either way; its owner closes it.
func (s *Session) Shutdown(restart bool) error {
	s.stopBackground()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.columnsOK, s.tracesOK = false, false
	s.columns, s.traces, s.ranks = nil, nil, nil
	s.bundle = nil
	if restart {
		s.count = 0
		s.context = map[string]string{}
		s.closed = false
		return nil
	}
	s.closed = true
	return nil
}

// invalidate drops the caches completion reads.
func (s *Session) invalidate() {
	s.mu.Lock()
	s.columnsOK, s.tracesOK = false, false
	s.mu.Unlock()
}

// catalogTimeout bounds the catalog queries that completion makes.
const catalogTimeout = 2 * time.Second

// catalog returns the tables' and views' columns, from the cache when fresh.
func (s *Session) catalog() map[string][]table.Column {
	s.mu.Lock()
	if s.columnsOK || s.eng == nil {
		defer s.mu.Unlock()
		return s.columns
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), catalogTimeout)
	defer cancel()
	cols, err := s.eng.Columns(ctx)
	if err != nil {
		return nil
	}
	s.mu.Lock()
	s.columns, s.columnsOK = cols, true
	s.mu.Unlock()
	return cols
}

// traceNames returns the loaded traces' names, sorted, from the cache when fresh.
func (s *Session) traceNames() []string {
	names, _ := s.loadedTraces()
	return names
}

// rankNames are the ranks of the loaded traces, in order, for completion.
func (s *Session) rankNames() []string {
	_, ranks := s.loadedTraces()
	return ranks
}

// loadedTraces returns the names and the ranks of the loaded traces, from
// the cache when fresh (one catalog query for both).
func (s *Session) loadedTraces() (names, ranks []string) {
	s.mu.Lock()
	if s.tracesOK || s.eng == nil {
		defer s.mu.Unlock()
		return s.traces, s.ranks
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), catalogTimeout)
	defer cancel()
	t, err := s.eng.Query(ctx, traceCatalogQuery, 10000)
	if err != nil {
		return nil, nil
	}
	var rs []int64
	seen := map[int64]bool{}
	for _, r := range t.Rows {
		if len(r) < 2 {
			continue
		}
		// The rows come in trace order: a name repeats only in a run.
		if n, ok := r[0].(string); ok && (len(names) == 0 || names[len(names)-1] != n) {
			names = append(names, n)
		}
		if k, ok := r[1].(int64); ok && !seen[k] {
			seen[k] = true
			rs = append(rs, k)
		}
	}
	slices.Sort(rs)
	for _, k := range rs {
		ranks = append(ranks, strconv.FormatInt(k, 10))
	}
	s.mu.Lock()
	s.traces, s.ranks, s.tracesOK = names, ranks, true
	s.mu.Unlock()
	return names, ranks
}

// traceCatalogQuery lists every loaded (trace, rank), traces in order.
const traceCatalogQuery = "SELECT DISTINCT trace, rank FROM traces ORDER BY trace, rank"

type nopPublisher struct{}

func (nopPublisher) Stream(string, string)                          {}
func (nopPublisher) Display(map[string]any, map[string]any, string) {}
func (nopPublisher) UpdateDisplay(map[string]any, map[string]any, string) {
}
func (nopPublisher) ClearOutput(bool) {}
