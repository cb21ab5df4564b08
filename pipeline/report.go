package pipeline

import (
	"context"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/report"
)

// MaxRankCrossViews is the most ranks for which CollectReport adds a
// cross-view of each rank (so that the offline viewer shows the tree of the
// rank it filters on); past it only the whole filter's cross-view is kept.
const MaxRankCrossViews = 8

// CollectReport collects what the report is made of, under filter f: the
// evidence of every area (CollectEvidence) and the cross-view of f, plus one
// cross-view per rank when f selects no rank and the traces have at most
// MaxRankCrossViews ranks. `tracebook report` and %report both call it.
//
// The cross-views need one thing from the evidence: the intervals the
// capture preset leaves out of the slice the rules judge, which their
// cross-check leaves out too (crossview.Input.LeftOut); they read their
// rows first and then wait for that preset. On a slice of up to
// leanCrossViewFrames host frames they are built on another connection
// while the evidence runs (its small queries leave a core idle much of the
// time), each statement on one thread (oneStatementPerCore), the
// cross-view's slot passing to a preset when it is done. On a larger
// slice DuckDB's sort of the frames into start order and the evidence's
// DuckDB memory would peak together, so the evidence is collected first,
// and then the cross-views, alone, both with DuckDB's memory limit lowered
// (largeSliceLimits: sorts and joins spill). The frames themselves stream
// through Go and are never held (CrossViews).
func CollectReport(ctx context.Context, eng Engine, f evidence.Filter, context map[string]string) (*report.Source, error) {
	var cvs []*crossview.Result
	var cvErr error
	b, limits, err := collectBeside(ctx, eng, []string{"all"}, f, context, func(leftOut func() []crossview.LeftOut, limits []string) {
		cvs, cvErr = crossViews(ctx, eng, f, leftOut, limits...)
	})
	if err != nil {
		return nil, err
	}
	// The findings' windows and their timelines, once the cross-views are
	// done, on every DuckDB thread: their queries and the cross-views'
	// memory no longer peak together. Reports against the windows read
	// beside the cross-views, one thread each (5-8 alternating pairs,
	// medians): peak RSS mtia 288 against 329 MiB, xdit 250 against 304,
	// vLLM 216 against 234, dlrm_8rank 162 against 179; 1.03-1.08× the
	// wall.
	src := &report.Source{Bundle: b, Windows: PerfettoWindows(ctx, eng, b)}
	if len(limits) > 0 {
		// The windows' rows under the limits too: each window of a large
		// trace holds many events, and the report's peak would be theirs.
		// AddTimelines reads what fails here.
		_ = underLimits(ctx, eng, limits, func() error { return readWindowRows(ctx, eng, src, presetWorkers) })
	} else {
		// A small slice's windows, one query per core: each is mostly the
		// fixed cost of a statement, which DuckDB's threads do not share.
		// dlrm_8rank's three windows: 61-67 ms from the first query's start
		// to the last one's end, against 83-93 ms on both threads one at a
		// time (3 alternating runs). A single window too: on both threads
		// xdit's (200,000 events) peaked at 218 against 198 MB, for 8 ms
		// of the vLLM H100 report.
		_ = oneStatementPerCore(ctx, eng, func() error {
			return readWindowRows(ctx, eng, src, runtime.NumCPU())
		})
	}
	AddTimelines(ctx, eng, src)
	if cvErr != nil {
		// The report stands without a tree; the gap says why.
		src.Bundle.AddGap(evidence.Gap{Kind: "no_crossview", Trace: f.Trace, Rank: -1,
			What: "no GPU call tree", Why: crossViewFailure(cvErr)})
		return src, nil
	}
	src.CrossViews = append(src.CrossViews, cvs...)
	return src, nil
}

// crossViewFailure is what the report says of a cross-view that failed
// with err: its message, never nothing (an error without one left the
// report without a tree and without a reason).
func crossViewFailure(err error) string {
	if why := strings.TrimSpace(strings.TrimPrefix(err.Error(), "crossview:")); why != "" {
		return why
	}
	return "its query failed and gave no reason"
}

// collectBeside collects the evidence of areas under f (collectEvidence:
// the capture area comes along, whose intervals the cross-check leaves
// out) and runs views, which builds cross-views of f, as CollectReport
// explains: on a lean slice beside the evidence, each statement on one
// thread, on a large one after it, under the returned DuckDB memory
// limits (none for a lean slice). views gets what the capture gate leaves
// out of the slice the rules judge, a call that waits for the capture
// preset, and the limits to read its rows under. CollectReport and
// CrossView both judge their cross-check's slice this way.
func collectBeside(ctx context.Context, eng Engine, areas []string, f evidence.Filter, context map[string]string, views func(leftOut func() []crossview.LeftOut, limits []string)) (b *evidence.Bundle, limits []string, err error) {
	if !slices.Contains(areas, "all") && !slices.Contains(areas, "capture") {
		areas = append(slices.Clip(areas), "capture")
	}
	// The cross-check leaves out what the capture gate leaves out of the
	// slice the rules judge: the capture preset's intervals, which the
	// cross-views wait for once their rows are read (one definition of
	// the judged slice for both).
	var leftOut []crossview.LeftOut
	var once sync.Once
	captured := make(chan struct{})
	gotLeftOut := func(lo []crossview.LeftOut) {
		once.Do(func() {
			leftOut = lo
			close(captured)
		})
	}
	waitLeftOut := func() []crossview.LeftOut {
		<-captured
		return leftOut
	}
	// collect gathers the evidence, then waits for the cross-views.
	cvDone := make(chan struct{})
	slots := make(chan struct{}, presetWorkers)
	collect := func() error {
		var err error
		b, err = collectEvidence(ctx, eng, areas, f, context, slots, gotLeftOut, limits...)
		gotLeftOut(nil) // the capture preset did not run: nothing left out
		<-cvDone
		return err
	}
	if frames, ops := crossViewSize(ctx, eng, f.Trace, filterRank(f)); frames > leanCrossViewFrames {
		// The evidence first, then the cross-views, which need its
		// capture intervals: one after the other, so that DuckDB's sort
		// of the frames and the evidence's memory do not peak together.
		limits = largeSliceLimits(ops)
		close(cvDone)
		if err = collect(); err == nil {
			// The cross-views do not read the evidence: its long tables
			// wait encoded while they hold their GPU operations.
			unpark := b.Park(parkRows)
			gc := debug.SetGCPercent(crossViewGCPercent)
			views(waitLeftOut, limits)
			debug.SetGCPercent(gc)
			err = unpark()
			debug.FreeOSMemory()
		}
	} else {
		// The cross-view holds one more slot than the presets': when it is
		// done, one more preset runs at a time.
		slots = make(chan struct{}, presetWorkers+1)
		slots <- struct{}{}
		// While the cross-view waits for the capture preset's intervals,
		// its rows read, it lends its slot to the presets: a core idled
		// there (48 MB vLLM trace: the evidence ended 120 ms sooner; the
		// report 0.95× the wall, mtia 0.86×, dlrm_8rank 0.95×, xdit 0.95×
		// in 5-7 alternating pairs; mtia's peak 1.08×).
		lend := func() []crossview.LeftOut {
			<-slots
			lo := waitLeftOut()
			slots <- struct{}{}
			return lo
		}
		err = oneStatementPerCore(ctx, eng, func() error {
			go func() {
				defer close(cvDone)
				views(lend, nil)
				<-slots
			}()
			return collect()
		})
	}
	return b, limits, err
}

// OneThreader is an Engine that can run each statement on one thread for
// a while (duck.DB: DuckDB's threads setting, database-wide).
type OneThreader interface {
	OneThread(ctx context.Context, fn func() error) error
}

// oneStatementPerCore runs fn, which runs statements side by side, with
// each statement on one thread where the engine allows it (OneThreader).
// A small slice's statements gain little from DuckDB's threads and pay for
// them. Alternating runs of `tracebook report` against DuckDB on both
// cores (6-8 pairs each, medians): the 48 MB vLLM trace 0.89× the CPU,
// 0.96× the wall, 12 MB less peak; dlrm_8rank 0.90× the CPU, 0.99× the
// wall; mtia 0.92× and 1.05×; xdit 0.90× and 0.98×. One preset runs at a
// time (presetWorkers) beside the cross-view (two at once took as long,
// with neither the CPU nor the memory saved), and two once it is done,
// which CollectReport's slots arrange: 0.95-0.96× the wall on each of
// those four traces (5-6 alternating pairs; peaks within their noise).
func oneStatementPerCore(ctx context.Context, eng Engine, fn func() error) error {
	if ot, ok := eng.(OneThreader); ok {
		return ot.OneThread(ctx, fn)
	}
	return fn()
}

// leanCrossViewFrames is the most host frames in a report's slice for
// which its cross-views are built while the evidence runs; past it they
// are built after it, alone (CollectReport). A variable for the tests.
var leanCrossViewFrames = 500_000

// parkRows is the most rows of an evidence table that stays decoded
// while a large slice's cross-views are built (evidence.Bundle.Park). A
// variable for the tests.
var parkRows = 10_000

// crossViewGCPercent is the Go collector's GOGC while a large slice's
// cross-views stream: their GPU operations and trees are most of the Go
// heap, and the default (100) lets it grow to twice what is live before a
// collection (×21 vLLM: 80 MB live, 157 MB peak heap). Measured on the
// ×21 report, 6 alternating pairs: peak RSS 489-609 MiB against 528-646
// MiB (medians 541 and 572), wall 1.01×. With DuckDB under 128 MB
// (largeSliceMemoryMB), 25 gave the peak and the time of 50 (3 pairs).
const crossViewGCPercent = 50

// largeSliceMemoryMB are DuckDB's memory limits, in MB, while a large
// slice's cross-view queries and then its evidence run (MemoryLimiter),
// tried in turn while a query runs out of memory, from the first that
// holds opBytes per GPU operation of the slice (largeSliceLimits). What
// sets the limit is the evidence base (sql/evidence_base.sql) and the
// cross-view's query of every row but the frames, which joins each GPU
// operation to its launching call and its operator: on the ×21 vLLM trace
// (290,000 operations) the evidence holds in 128 MB and not in 96 MB, the
// cross-view's query in 64 MB (it ran out at 128 MB, and ran again at 256
// MB, until it grouped only the operators that unlinked operations name);
// the ×250 one's (3.5 M) needed the 512 MB of a database file. DuckDB
// spills the rest (the frames' sort, the evidence's joins) to the
// database's temporary directory. 128 MB against 256 MB at ×21: peak RSS
// 359 MiB against 483 MiB, 0.98× the wall (3 alternating pairs, medians;
// the same report).
var largeSliceMemoryMB = []int{128, 256, 512}

// lastResortMemoryMB is the limit tried after the last of the large
// slice's limits ran out (largeSliceLimits): one run in five of the ×250
// vLLM report ran out of memory at 488 of its 512 MB in the ranks preset,
// which failed the report. Only what ran out runs again under this limit
// (collectEvidence keeps the base and the presets that finished): that
// statement's time again and memory up to the limit, where the report
// had none.
const lastResortMemoryMB = 1024

// opBytes is what a GPU operation needs of DuckDB's memory in a large
// slice's evidence and cross-view queries, at most: 128 MB over the ×21
// vLLM trace's 290,000 operations, rounded up. A variable for the tests.
var opBytes = 440

// largeSliceLimits returns the memory limits for a large slice of ops GPU
// operations: largeSliceMemoryMB from the first that holds them at
// opBytes each (a limit known to run out would cost its query's time),
// the last one at least, then lastResortMemoryMB, as DuckDB takes them
// ("128MB").
func largeSliceLimits(ops int) []string {
	mbs := largeSliceMemoryMB
	for len(mbs) > 1 && int64(mbs[0])*1_000_000 < int64(ops)*int64(opBytes) {
		mbs = mbs[1:]
	}
	limits := make([]string, 0, len(mbs)+1)
	for _, mb := range append(slices.Clip(mbs), lastResortMemoryMB) {
		limits = append(limits, strconv.Itoa(mb)+"MB")
	}
	return limits
}

// underLimits runs fn under each of limits in turn (MemoryLimiter) until
// it does not run out of DuckDB memory, and returns its last error. On an
// engine that cannot lower its limit, or without limits, fn runs once.
func underLimits(ctx context.Context, eng Engine, limits []string, fn func() error) error {
	ml, ok := eng.(MemoryLimiter)
	if !ok || len(limits) == 0 {
		return fn()
	}
	var err error
	for _, limit := range limits {
		if err = ml.WithMemoryLimit(ctx, limit, fn); !outOfMemory(err) {
			break
		}
	}
	return err
}

// outOfMemory says whether err is DuckDB's out-of-memory error, which a
// higher memory limit may avoid.
func outOfMemory(err error) bool {
	return err != nil && strings.Contains(err.Error(), "Out of Memory Error")
}

// MemoryLimiter is an Engine whose memory limit can be lowered for a while
// (duck.DB can, on a database file): fn runs under limit, and the limit is
// restored after it.
type MemoryLimiter interface {
	WithMemoryLimit(ctx context.Context, limit string, fn func() error) error
}

// crossViews builds the cross-view of f and, when f selects no rank and
// its traces have 2 to MaxRankCrossViews ranks, one per rank, from one
// read of the rows. Limits lower the engine's memory limit for the read
// where it can (MemoryLimiter), the next one tried when DuckDB runs out of
// memory under one. An error of the cross-view of f is returned; a rank
// whose cross-view fails is left out.
func crossViews(ctx context.Context, eng Engine, f evidence.Filter, leftOut func() []crossview.LeftOut, limits ...string) ([]*crossview.Result, error) {
	fs := []evidence.Filter{f}
	if !f.HasRank {
		t, err := eng.Query(ctx, `SELECT DISTINCT rank FROM traces WHERE ($1::VARCHAR = '' OR trace = $1::VARCHAR) AND rank IS NOT NULL ORDER BY rank`, 0, f.Trace)
		if err == nil && len(t.Rows) >= 2 && len(t.Rows) <= MaxRankCrossViews {
			for r := range t.Rows {
				rf := f
				rf.Rank, rf.HasRank = int(evidence.Int(t, r, "rank")), true
				fs = append(fs, rf)
			}
		}
	}
	slices := make([]crossview.Slice, len(fs))
	for i, x := range fs {
		slices[i] = SliceOf(x)
	}
	var res []*crossview.Result
	var errs []error
	read := func() (err error) {
		res, errs, err = crossViewsLeavingOut(ctx, eng, f, slices, crossview.DefaultOptions(), leftOut)
		return err
	}
	err := underLimits(ctx, eng, limits, read)
	if err != nil {
		return nil, err
	}
	if errs[0] != nil {
		return nil, errs[0]
	}
	out := []*crossview.Result{res[0]}
	for i := 1; i < len(res); i++ {
		if errs[i] == nil {
			out = append(out, res[i])
		}
	}
	return out, nil
}

// filterRank is f's rank, -1 for every rank.
func filterRank(f evidence.Filter) int {
	if f.HasRank {
		return f.Rank
	}
	return -1
}
