//go:build cgo

package duck

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"

	bindings "github.com/duckdb/duckdb-go-bindings"
	"github.com/duckdb/duckdb-go/v2/mapping"

	"github.com/tracebook/tracebook/analysis/table"
)

// A streamed result: QueryEach runs its query as a streaming query, whose
// rows DuckDB produces a chunk at a time as they are read, where the
// driver always has DuckDB materialise the whole result first, outside
// its memory limit. A streamed result holds in memory what its plan holds
// (a sort's runs, which spill under the limit), not its rows: the
// cross-view of a large trace reads millions of frames this way without
// storing them.
//
// The driver keeps its connection to DuckDB unexported (its Conn's conn);
// connectionOf finds it by reflection, as resultOf finds its results, and
// TestQueryEach fails when a driver upgrade moves it. Without it, or for
// arguments or columns the stream does not take, QueryEach reads through
// the driver.

// Only a result that comes out of a sort is streamed (sortedLast): the
// sort's output is one pipeline, which DuckDB streams as it is read. A
// result fed by several pipelines at once can stall in this build of
// DuckDB: the rows of the crossview preset but its frames (a UNION ALL of
// row kinds, about 400,000 rows of the ×21 vLLM trace) filled the
// streaming buffer before DuckDB counted the result as ready, and its
// execution waited for a reader that was still waiting for it.

// sortedLast says whether query ends in an ORDER BY outside every
// parenthesis, its rows then coming out of a sort (a LIMIT may follow; a
// -- comment does not count).
func sortedLast(query string) bool {
	tail := query[strings.LastIndexByte(query, ')')+1:]
	var code []string
	for _, l := range strings.Split(tail, "\n") {
		code = append(code, strings.SplitN(l, "--", 2)[0])
	}
	return strings.Contains(strings.ToUpper(strings.Join(code, " ")), "ORDER BY")
}

// errNoStream says that a query cannot be streamed here: the caller reads
// it through the driver instead.
var errNoStream = errors.New("duck: the query cannot be streamed")

// connectionOf is the DuckDB connection behind the driver's connection dc,
// nil when this build of the driver does not keep it where it is looked
// for.
func connectionOf(dc any) *mapping.Connection { return driverField[mapping.Connection](dc, "conn") }

// streamEach runs query with args on the driver connection dc as a
// streaming query and hands its rows to each as eachCells does. It returns
// errNoStream, having handed over nothing, when the query cannot be
// streamed: no connection where connectionOf looks, an argument of a type
// bind does not take, a statement DuckDB cannot prepare alone (several
// statements), or a column chunkCells does not read. An interrupt (ctx
// done) stops DuckDB and returns ctx's error.
func streamEach(ctx context.Context, dc any, query string, args []any, start func(columns []string) error, each func(row table.Cells) error) error {
	conn := connectionOf(dc)
	if conn == nil {
		return errNoStream
	}
	var stmt mapping.PreparedStatement
	defer mapping.DestroyPrepare(&stmt)
	if mapping.Prepare(*conn, query, &stmt) == mapping.StateError {
		return errNoStream // the driver's path reports a real error
	}
	if int(mapping.NParams(stmt)) != len(args) {
		return errNoStream
	}
	// A column type known before execution that chunkCells does not read
	// goes to the driver at once; types that depend on the arguments
	// (INVALID until bound) are checked on the result.
	for i := range mapping.PreparedStatementColumnCount(stmt) {
		if t := mapping.PreparedStatementColumnType(stmt, i); t != mapping.TypeInvalid && !readable(t) {
			return errNoStream
		}
	}
	for i, a := range args {
		if !bind(stmt, mapping.IdxT(i+1), a) {
			return errNoStream
		}
	}
	var pending mapping.PendingResult
	defer mapping.DestroyPending(&pending)
	if bindings.PendingPreparedStreaming(stmt, &pending) == mapping.StateError {
		return errNoStream
	}
	interrupted := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(interrupted)
		mapping.Interrupt(*conn)
	})
	defer func() {
		// An interrupt still on its way would reach the next query that
		// runs on this connection (TestQueryEachStreamCancel's last one).
		if !stop() {
			<-interrupted
		}
	}()
	var res mapping.Result
	defer mapping.DestroyResult(&res)
	if mapping.ExecutePending(pending, &res) == mapping.StateError {
		if err := ctx.Err(); err != nil {
			return err
		}
		// DuckDB leaves the error in the result (an out-of-memory error
		// there is what the callers retry under a higher limit).
		msg := mapping.ResultError(&res)
		if msg == "" {
			msg = mapping.PendingError(pending)
		}
		if msg == "" {
			msg = "the query failed and DuckDB gave no message"
		}
		return errors.New(msg)
	}
	c := newChunkCells(&res)
	if c == nil {
		return errNoStream
	}
	streamed.Add(1)
	if start != nil {
		cols := make([]string, mapping.ColumnCount(&res))
		for i := range cols {
			cols[i] = mapping.ColumnName(&res, mapping.IdxT(i))
		}
		if err := start(cols); err != nil {
			return err
		}
	}
	return c.each(ctx, &res, each)
}

// streamed counts the results streamEach has streamed (for the tests).
var streamed atomic.Int64

// bind binds a, the parameter at idx (from 1), to stmt, false when a is of
// a type it does not bind (the driver's path converts it).
func bind(stmt mapping.PreparedStatement, idx mapping.IdxT, a any) bool {
	var st mapping.State
	switch v := a.(type) {
	case nil:
		st = mapping.BindNull(stmt, idx)
	case string:
		st = mapping.BindVarchar(stmt, idx, v)
	case int:
		st = mapping.BindInt64(stmt, idx, int64(v))
	case int64:
		st = mapping.BindInt64(stmt, idx, v)
	case int32:
		st = mapping.BindInt64(stmt, idx, int64(v))
	case bool:
		st = mapping.BindBoolean(stmt, idx, v)
	case float64:
		st = mapping.BindDouble(stmt, idx, v)
	default:
		return false
	}
	return st == mapping.StateSuccess
}
