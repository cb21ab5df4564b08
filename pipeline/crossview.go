package pipeline

import (
	"context"
	"fmt"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/sql"
)

// CrossView runs the crossview preset (sql/crossview.sql: host frames with
// their enclosing frame, GPU operations with their launching call) and,
// when the filter selects a phase or a step, the steps preset for the step
// and phase of each annotation; then it builds the GPU view, the CPU view
// and the cross-check of the slice f (analysis/crossview).
func CrossView(ctx context.Context, eng Engine, f evidence.Filter, opts crossview.Options) (*crossview.Result, error) {
	in, err := CrossViewInput(ctx, eng, f)
	if err != nil {
		return nil, err
	}
	return crossview.Build(in, SliceOf(f), opts)
}

// CrossViewInput reads the rows the cross-view of f is built from: the
// frames and operations of f's trace and rank (every rank without one),
// and the steps when f names a phase or a step. One input serves the
// cross-view of each of its ranks (crossview.Build takes the slice).
func CrossViewInput(ctx context.Context, eng Engine, f evidence.Filter) (*crossview.Input, error) {
	if eng == nil {
		return nil, fmt.Errorf("crossview: no database")
	}
	p, ok := sql.Lookup("crossview")
	if !ok {
		return nil, fmt.Errorf("crossview: the crossview preset is missing from this build")
	}
	in, err := crossviewInput(ctx, eng, p.SQL, f.Trace, filterRank(f))
	if err != nil {
		return nil, err
	}
	if f.Phase != "" || f.HasStep {
		sp, ok := sql.Lookup("steps")
		if !ok {
			return nil, fmt.Errorf("crossview: --phase needs the steps preset, missing from this build")
		}
		st, err := steps(ctx, eng, f, sp.SQL)
		if err != nil {
			return nil, fmt.Errorf("crossview: steps: %w", err)
		}
		if err := crossview.AddSteps(in, st); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// RowStreamer is an Engine that can hand a query's rows over one at a time
// instead of returning a table (duck.DB can): the cross-view reads every
// host frame of its slice, millions of rows in a large trace, and a table
// of them all would hold several times their size.
type RowStreamer interface {
	QueryEach(ctx context.Context, sql string, start func(columns []string) error, each func(row []any) error, args ...any) error
}

// crossviewInput runs the crossview preset for trace and rank and reads
// its rows into a cross-view input, streamed where the engine can.
func crossviewInput(ctx context.Context, eng Engine, query, trace string, rank int) (*crossview.Input, error) {
	rs, ok := eng.(RowStreamer)
	if !ok {
		t, err := eng.Query(ctx, query, 0, trace, rank)
		if err != nil {
			return nil, fmt.Errorf("crossview: %w", err)
		}
		return crossview.FromTable(t)
	}
	// Room for exactly the frames and operations of the slice: growing
	// them as they come copies them several times over (measured: 0.1-0.2
	// s more on the 48 MB vLLM trace), and room for every event would
	// leave a quarter of the largest allocation unused on a vLLM trace.
	frames, ops := crossViewSize(ctx, eng, trace, rank)
	if frames > MaxCrossViewFrames {
		return nil, fmt.Errorf("crossview: the slice holds %.1f M host frames, more than the %d M that one cross-view holds in memory at about %d bytes each: load a window or a step range of the trace with --window START..END or --steps A..B and analyse that",
			float64(frames)/1e6, MaxCrossViewFrames/1_000_000, crossViewFrameBytes)
	}
	var r *crossview.RowReader
	var readErr error // the reader's own errors say "crossview:" already
	start := func(cols []string) error {
		r, readErr = crossview.NewRowReader(cols)
		if readErr == nil {
			r.Grow(frames, ops)
		}
		return readErr
	}
	each := func(row []any) error {
		readErr = r.Add(row)
		return readErr
	}
	if err := rs.QueryEach(ctx, query, start, each, trace, rank); err != nil {
		if readErr != nil {
			return nil, readErr
		}
		return nil, fmt.Errorf("crossview: %w", err)
	}
	return r.Input()
}

// MaxCrossViewFrames is the most host frames one cross-view reads: it holds
// every frame of its slice in memory, about crossViewFrameBytes each
// (measured on the ×21 vLLM trace: 2.9 M frames, 371 MB of live heap), so
// 20 M frames are about 2.5 GB. A larger slice gets an error that says how
// to narrow it, instead of a process that grows until the machine runs out
// of memory or a DuckDB out-of-memory error (the ×250 vLLM trace, 35.0 M
// frames, failed so under the report's 256 MB limit for the read). The
// report then stands without a call tree, the gap saying why. A variable
// for the tests.
var MaxCrossViewFrames = 20_000_000

// crossViewFrameBytes is the Go memory a cross-view takes per host frame
// of its slice: the frame, the builder's indexes and times.
const crossViewFrameBytes = 128

// crossViewSize counts the host frames and the GPU operations the
// crossview preset returns for trace and rank (the host X events, the GPU
// X events): one scan of three narrow columns. 0, 0 when the count fails.
func crossViewSize(ctx context.Context, eng Engine, trace string, rank int) (frames, ops int) {
	t, err := eng.Query(ctx, `SELECT count(*) FILTER (WHERE kind IN ('python', 'cpu_op', 'annotation', 'runtime', 'driver')) AS frames,
		count(*) FILTER (WHERE kind IN ('kernel', 'gpu_memcpy', 'gpu_memset')) AS ops
		FROM events WHERE ph = 'X' AND ($1::VARCHAR = '' OR trace = $1::VARCHAR) AND ($2::INTEGER < 0 OR rank = $2::INTEGER)`, 0, trace, rank)
	if err != nil || len(t.Rows) != 1 {
		return 0, 0
	}
	return int(evidence.Int(t, 0, "frames")), int(evidence.Int(t, 0, "ops"))
}

// steps runs the steps preset for the trace and rank of f, over the whole
// capture (the slice narrows later, in crossview.Build), on the shared
// evidence_base tables it builds for that under the collection lock.
func steps(ctx context.Context, eng Engine, f evidence.Filter, query string) (*table.Table, error) {
	bf := evidence.Filter{Trace: f.Trace, Rank: f.Rank, HasRank: f.HasRank}
	mu := baseLock(eng)
	mu.Lock()
	defer mu.Unlock()
	if err := BuildEvidenceBase(ctx, eng, bf); err != nil {
		return nil, err
	}
	return eng.Query(ctx, query, 0)
}

// SliceOf copies the filter into the cross-view's slice.
func SliceOf(f evidence.Filter) crossview.Slice {
	return crossview.Slice{
		Trace: f.Trace, Rank: f.Rank, HasRank: f.HasRank,
		WindowStartNs: f.WindowStartNs, WindowEndNs: f.WindowEndNs,
		Phase: f.Phase, Step: f.Step, HasStep: f.HasStep,
		Stream: f.Stream, HasStream: f.HasStream,
	}
}
