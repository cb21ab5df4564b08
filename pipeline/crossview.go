package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/findings"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/sql"
)

// CrossView runs the crossview preset (sql/crossview.sql: host frames with
// their enclosing frame, GPU operations with their launching call) and,
// when the filter selects a phase or a step, the steps preset for the step
// and phase of each annotation; then it builds the GPU view, the CPU view
// and the cross-check of the slice f (analysis/crossview).
//
// The cross-check is the report's for the same slice: beside the rows it
// collects the capture area's evidence (collectBeside: the capture preset
// and the ranks and overview the capture gate reads), leaves out what the
// gate leaves out of the slice the rules judge (crossview.Input.LeftOut),
// and reads it as the report does (report.JudgedCheck: no host/device
// reading on a graph or counter capture, the label capped by the capture,
// the capture artifacts named). Where that evidence fails, the whole slice
// is judged and an evidence gap says why. `tracebook crossview` and
// %crossview call it.
//
// The evidence costs what its base tables and the presets do
// (sql/evidence_base.sql is most of it): `tracebook crossview`, 5
// alternating runs each, medians, took 0.19 s against 0.11 s of wall on
// deepseek's train_h800_ep64 (1.7×, CPU 2.0×) and 0.74 s against 0.43 s on
// the vLLM H100 TP4 rank (1.7×, CPU 2.0×). Leaving out the overview preset
// and the findings, which the gate does not read, saved at most a tenth of
// the CPU and nothing of the wall measurable on the same runs: not worth a
// second way to collect the evidence.
func CrossView(ctx context.Context, eng Engine, f evidence.Filter, opts crossview.Options) (*crossview.Result, error) {
	if eng == nil {
		return nil, fmt.Errorf("crossview: no database")
	}
	var res []*crossview.Result
	var errs []error
	var cvErr error
	areas := []string{"capture"}
	if f.HasStream {
		areas = append(areas, "kernels") // its streams say whether f's is one (checkSliceEvidence)
	}
	b, _, evErr := collectBeside(ctx, eng, areas, f, nil, func(leftOut func() []crossview.LeftOut, limits []string) {
		cvErr = underLimits(ctx, eng, limits, func() (err error) {
			res, errs, err = crossViewsLeavingOut(ctx, eng, f, []crossview.Slice{SliceOf(f)}, opts, leftOut)
			return err
		})
	})
	// A filter outside the traces is the answer, not an empty view.
	if se := (*SliceError)(nil); errors.As(evErr, &se) {
		return nil, evErr
	}
	if cvErr != nil {
		return nil, cvErr
	}
	if errs[0] != nil {
		return nil, errs[0]
	}
	r := res[0]
	if evErr != nil || b == nil {
		why := "no evidence"
		if evErr != nil {
			why = evErr.Error()
		}
		r.Gaps = append(r.Gaps, "the capture gate did not run ("+why+"): the cross-check judges the whole slice, start-up and held intervals and edge syncs included, and reads graph and counter captures too")
		return r, nil
	}
	return report.JudgedCheck(r, findings.Assess(evidence.Rollup(b, f))), nil
}

// CrossViews builds the cross-view of each slice from one read of the rows
// of f's trace and rank (every rank without one): the slices narrow f. On
// an engine that streams rows (RowStreamer) the host frames pass through
// once, in start order, and are never held: the memory is the GPU
// operations' and the trees'. A slice whose cross-view fails has a nil
// Result and its error; err is the read's.
func CrossViews(ctx context.Context, eng Engine, f evidence.Filter, slices []crossview.Slice, opts crossview.Options) (res []*crossview.Result, errs []error, err error) {
	return crossViewsLeavingOut(ctx, eng, f, slices, opts, nil)
}

// crossViewsLeavingOut is CrossViews with what the capture gate leaves
// out of the slice the rules judge (crossview.Input.LeftOut): leftOut,
// when given, is called once the rows are read, before the cross-check
// is measured, and may wait for the evidence's capture preset
// (CollectReport).
func crossViewsLeavingOut(ctx context.Context, eng Engine, f evidence.Filter, slices []crossview.Slice, opts crossview.Options, leftOut func() []crossview.LeftOut) (res []*crossview.Result, errs []error, err error) {
	if eng == nil {
		return nil, nil, fmt.Errorf("crossview: no database")
	}
	p, ok := sql.Lookup("crossview")
	if !ok {
		return nil, nil, fmt.Errorf("crossview: the crossview preset is missing from this build")
	}
	var st *table.Table
	for _, s := range slices {
		if s.Phase != "" || s.HasStep {
			if st, err = stepsOf(ctx, eng, f); err != nil {
				return nil, nil, err
			}
			break
		}
	}
	rs, ok := eng.(RowStreamer)
	// A slice of up to leanCrossViewFrames frames is read whole and its
	// frames sorted in Go, which costs less than DuckDB's sort of the rows
	// (measured on the 48 MB vLLM trace, 140,000 frames: the report took 5%
	// more time and 45 MB more peak with DuckDB sorting); a larger one
	// streams.
	var frames, nops int
	if ok {
		frames, nops = crossViewSize(ctx, eng, f.Trace, filterRank(f))
	}
	if !ok || frames <= leanCrossViewFrames {
		var in *crossview.Input
		if ok {
			in, err = readInput(ctx, rs, p.SQL, f, frames, nops)
		} else {
			in, err = crossviewInput(ctx, eng, p.SQL, f.Trace, filterRank(f))
		}
		if err != nil {
			return nil, nil, err
		}
		if err := crossview.AddSteps(in, st); err != nil {
			return nil, nil, err
		}
		if leftOut != nil {
			in.LeftOut = leftOut()
		}
		res, errs = crossview.BuildAll(in, slices, opts)
		return res, errs, nil
	}
	var r *crossview.RowReader
	var stream *crossview.Stream
	var readErr error // the reader's own errors say "crossview:" already
	begin := func(in *crossview.Input) error {
		if err := crossview.AddSteps(in, st); err != nil {
			return err
		}
		if leftOut != nil {
			in.LeftOut = leftOut()
		}
		stream = crossview.NewStream(in, slices, opts)
		return nil
	}
	start := func(cols []string) error {
		if r, readErr = crossview.NewRowReader(cols); readErr == nil {
			// Room for exactly the operations: growing the slice as they
			// come copies them several times over (measured at ×21 vLLM,
			// 290,000 ops: 1.6 s of CPU).
			r.Grow(0, nops)
			readErr = r.Stream(begin, func(fr *crossview.Frame) error { return stream.Frame(fr) })
		}
		return readErr
	}
	each := func(row table.Cells) error {
		readErr = r.Add(row)
		return readErr
	}
	framesRead := false // a row of the frames may have reached r
	frameRows := func(cols []string) error {
		framesRead = true
		readErr = r.FrameRows(cols)
		return readErr
	}
	read := func(query string, start func([]string) error) error {
		if err := rs.QueryEach(ctx, query, start, each, f.Trace, filterRank(f)); err != nil {
			if readErr != nil {
				return readErr
			}
			return fmt.Errorf("crossview: %w", err)
		}
		return nil
	}
	narrow := idsFit(ctx, eng)
	if err := read(otherRows(p.SQL), start); err != nil {
		return nil, nil, err
	}
	if err := underFramesLimit(ctx, eng, frames, func() error { return read(framesInStartOrder(p.SQL, narrow), frameRows) }, func() bool { return framesRead }); err != nil {
		return nil, nil, err
	}
	if err := r.Finish(); err != nil {
		return nil, nil, err
	}
	res, errs = stream.Results()
	return res, errs, nil
}

// CrossViewInput reads every row the cross-view of f is built from into
// an Input, the host frames included: the frames and operations of f's
// trace and rank (every rank without one), and the steps when f names a
// phase or a step. CrossViews streams the frames instead; this is for
// looking at the rows.
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
		st, err := stepsOf(ctx, eng, f)
		if err != nil {
			return nil, err
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
	QueryEach(ctx context.Context, sql string, start func(columns []string) error, each func(row table.Cells) error, args ...any) error
}

// otherRows and framesInStartOrder split the crossview preset's rows for
// a Stream into two queries: every row but the frames first, then the
// frames alone, narrow (crossview.FrameColumns), in each thread's start
// order (ts ascending, end descending, ID). DuckDB prunes the other branch
// of each, and the narrow rows sort in less memory than the whole result
// (measured on the ×250 vLLM trace: its 35 M frames sort within 256 MB;
// the whole result did not within 512 MB).
func otherRows(query string) string {
	return "SELECT * FROM (\n" + trimQuery(query) + "\n) WHERE row_kind <> 'frame'"
}

// The frames' kind, api and sync go back to ENUMs (tb_kind, tb_api, one
// byte each): the union of the preset's row kinds makes them text, and the
// sort moves every column of every frame (×21 vLLM, 2.9 M frames: the
// query took 2.0 s instead of 2.4 s). With narrow, the ids (id,
// call_stack_id, name_id, thread_id) are UINTEGER, four bytes, and the
// sort's keys with them: the ×21 vLLM frames' query in 0.66× the time and
// CPU of BIGINT ids (DuckDB's profile under the 64 MB limit, best of 2).
// narrow holds where every event's id fits (idsFit).
func framesInStartOrder(query string, narrow bool) string {
	cols := make([]string, len(crossview.FrameColumns))
	for i, c := range crossview.FrameColumns {
		switch c {
		case "kind":
			c = "kind::tb_kind AS kind"
		case "api":
			c = "api::tb_api AS api"
		case "sync":
			c = "CAST(sync AS ENUM('" + crossview.SyncBlocking + "', '" + crossview.SyncStream + "')) AS sync"
		case "id", "call_stack_id", "name_id", "thread_id":
			if narrow {
				c = "CAST(" + c + " AS UINTEGER) AS " + c
			}
		}
		cols[i] = c
	}
	return "SELECT " + strings.Join(cols, ", ") + " FROM (\n" + trimQuery(query) +
		"\n) WHERE row_kind = 'frame' ORDER BY thread_id, ts_ns, dur_ns DESC, id"
}

// idsFit says whether the id of every event in the database (its rowid in
// tb_events + 1, the crossview preset's id) and of every string (name_id)
// fits a UINTEGER; thread and Call stack ids are fewer than the events.
func idsFit(ctx context.Context, eng Engine) bool {
	t, err := eng.Query(ctx, `SELECT (SELECT coalesce(max(rowid), 0) FROM tb_events) < 4294967294
		AND (SELECT count(*) FROM tb_strings) < 4294967294 AS fits`, 0)
	if err != nil || len(t.Rows) != 1 {
		return false
	}
	v, _ := table.Row(t.Rows[0]).Int(0)
	return v == 1
}

// framesMemoryMB is DuckDB's memory limit, in MB, for the query of the
// streamed frames (framesInStartOrder), lower than the rest of a large
// slice's (largeSliceMemoryMB): DuckDB sorts the frames into start order,
// spilling what passes the limit, and the sort needs little memory to work.
// ×21 vLLM (2.9 M frames), 3 alternating pairs: the report's peak RSS 310
// MiB against 356 MiB with the frames under the 128 MB of the rest, the
// same wall and CPU, the same report. A variable for the tests.
var framesMemoryMB = 64

// frameSortBytes is what DuckDB's sort needs of memory per frame to merge
// its spilled runs, at least: the ×250 vLLM trace's 35 M frames ran out
// of memory under 64 MB after 10 s of sorting and sort within 256 MB.
const frameSortBytes = 8

// framesLimit is the memory limit for the query of frames host frames:
// framesMemoryMB, or frameSortBytes a frame in 64 MB steps where that is
// more. While the sorted frames stream into Go, DuckDB holds up to this
// limit beside the cross-view's operations and trees: the ×250 report
// peaked at 1.85 GB with the frames under its database's 512 MB.
func framesLimit(frames int) string {
	mb := framesMemoryMB
	if need := (int64(frames)*frameSortBytes + 64<<20 - 1) / (64 << 20) * 64; need > int64(mb) {
		mb = int(need)
	}
	return strconv.Itoa(mb) + "MB"
}

// underFramesLimit runs read, the query of frames host frames, under
// framesLimit on an engine that can lower its limit (MemoryLimiter), and
// again under the database's own limit when DuckDB runs out of memory
// there before any row reached Go (started, true once the result's
// columns were handed over: QueryEach streams the sorted frames, and the
// sort runs before the first row comes), so that none is read twice.
func underFramesLimit(ctx context.Context, eng Engine, frames int, read func() error, started func() bool) error {
	if err := underLimits(ctx, eng, []string{framesLimit(frames)}, read); !outOfMemory(err) || started() {
		return err
	}
	return read()
}

// trimQuery drops a query's trailing semicolon and space.
func trimQuery(q string) string { return strings.TrimRight(strings.TrimSpace(q), "; \t\n") }

// readInput reads every row of the crossview preset into an Input, a row
// at a time, with room made for the frames and ops counted.
func readInput(ctx context.Context, rs RowStreamer, query string, f evidence.Filter, frames, ops int) (*crossview.Input, error) {
	var r *crossview.RowReader
	var readErr error // the reader's own errors say "crossview:" already
	start := func(cols []string) error {
		if r, readErr = crossview.NewRowReader(cols); readErr == nil {
			r.Grow(frames, ops)
		}
		return readErr
	}
	each := func(row table.Cells) error {
		readErr = r.Add(row)
		return readErr
	}
	if err := rs.QueryEach(ctx, query, start, each, f.Trace, filterRank(f)); err != nil {
		if readErr != nil {
			return nil, readErr
		}
		return nil, fmt.Errorf("crossview: %w", err)
	}
	return r.Input()
}

// crossviewInput runs the crossview preset for trace and rank and reads
// every row into an Input.
func crossviewInput(ctx context.Context, eng Engine, query, trace string, rank int) (*crossview.Input, error) {
	t, err := eng.Query(ctx, query, 0, trace, rank)
	if err != nil {
		return nil, fmt.Errorf("crossview: %w", err)
	}
	return crossview.FromTable(t)
}

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

// stepsOf runs the steps preset for the trace and rank of f, over the
// whole capture (the slice narrows later, in crossview.Build), on the
// shared evidence_base tables it builds for that under the collection lock.
func stepsOf(ctx context.Context, eng Engine, f evidence.Filter) (*table.Table, error) {
	sp, ok := sql.Lookup("steps")
	if !ok {
		return nil, fmt.Errorf("crossview: --phase needs the steps preset, missing from this build")
	}
	bf := evidence.Filter{Trace: f.Trace, Rank: f.Rank, HasRank: f.HasRank}
	mu := baseLock(eng)
	mu.Lock()
	defer mu.Unlock()
	if err := BuildEvidenceBase(ctx, eng, bf); err != nil {
		return nil, fmt.Errorf("crossview: steps: %w", err)
	}
	t, err := eng.Query(ctx, sp.SQL, 0)
	if err != nil {
		return nil, fmt.Errorf("crossview: steps: %w", err)
	}
	return t, nil
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
