package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/perfetto"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/sql"
)

// PerfettoWindows chooses the Perfetto window of every finding the report
// of b shows (report.PlanWindows: the worst step ±1 of the finding's rank)
// and places the windows of ranks without steps around the worst instance
// that sql/perfetto_anchor.sql finds on the rank. A rank whose anchors
// cannot be read loses its windows rather than the report.
func PerfettoWindows(ctx context.Context, eng Engine, b *evidence.Bundle) []report.Window {
	ws := report.PlanWindows(b)
	if len(ws) == 0 {
		return nil
	}
	p, ok := sql.Lookup(sql.PerfettoAnchor)
	out := ws[:0]
	for _, w := range ws {
		if !w.Placed {
			if !ok {
				continue
			}
			lo, hi := startUp(b, w.Trace, w.Rank)
			t, err := eng.Query(ctx, p.SQL, 0, w.Trace, w.Rank, lo, hi)
			if err != nil {
				continue
			}
			report.PlaceAnchor(&w, t, rankSpan(b, w.Trace, w.Rank))
		}
		out = append(out, w)
	}
	return out
}

// startUp is the start-up of a rank that its windows pass over
// (sql/perfetto_anchor.sql's $3..$4, from the trace's first event): the
// span of what the capture area leaves out of the judged slice (its
// excluded row), when that is one interval or its intervals cover at least
// half their span (resnet_2080ti: the workers' start-up, first calls and
// allocator growth, 4.33 s of 4.43 s). 0, 0 otherwise: scattered
// exclusions are passed over by nothing.
func startUp(b *evidence.Bundle, trace string, rank int) (lo, hi int64) {
	t := b.Table("capture")
	if t == nil {
		return 0, 0
	}
	for r := range t.Rows {
		if evidence.Str(t, r, "trace") != trace || int(evidence.Int(t, r, "rank")) != rank || evidence.Str(t, r, "kind") != "excluded" {
			continue
		}
		first, last := evidence.Int(t, r, "first_ns"), evidence.Int(t, r, "last_ns")
		if last > first && (evidence.Int(t, r, "count") == 1 || 2*evidence.Int(t, r, "total_ns") >= last-first) {
			return first, last
		}
	}
	return 0, 0
}

// rankSpan is the end of a rank's last event, from its trace's first event
// (the traces table); 0 when unknown.
func rankSpan(b *evidence.Bundle, trace string, rank int) int64 {
	t := b.Traces
	if t == nil {
		return 0
	}
	var t0, end int64
	first := true
	for r := range t.Rows {
		if evidence.Str(t, r, "trace") != trace {
			continue
		}
		if f := evidence.Int(t, r, "first_ts_ns"); first || f < t0 {
			t0, first = f, false
		}
		if int(evidence.Int(t, r, "rank")) == rank {
			if e := evidence.Int(t, r, "last_end_ns"); e > end {
				end = e
			}
		}
	}
	if end <= t0 {
		return 0
	}
	return end - t0
}

// AddPerfetto keeps the saved traces of src's windows in src.Perfetto
// (analysis/perfetto), together within budget bytes gzip-compressed (0 =
// no budget), from their rows (ReadPerfettoRows, which it runs first: eng
// may be nil once they are read). The single-file report embeds them;
// `tracebook report --perfetto DIR` writes them.
func AddPerfetto(ctx context.Context, eng Engine, src *report.Source, budget int) error {
	ins, err := perfettoInputs(ctx, eng, src)
	if err != nil || ins == nil {
		return err
	}
	src.Perfetto = perfetto.Files(ins, budget)
	src.WindowRows = nil // the files hold what the page needs of them
	return nil
}

// AddPerfettoForPage is AddPerfetto with the budget that the single-file
// page leaves the files (perfetto.PageBudget of the size draw returns;
// draw draws the page, reading src). The files are built for the whole
// report budget while draw runs, and again only where the page leaves
// them less (the vLLM H100 report: 52 ms for both, against 64 ms one
// after the other).
func AddPerfettoForPage(ctx context.Context, eng Engine, src *report.Source, draw func() (size int, err error)) error {
	ins, err := perfettoInputs(ctx, eng, src)
	if err != nil {
		return err
	}
	var files []report.PerfettoFile
	built := make(chan struct{})
	go func() {
		defer close(built)
		if ins != nil {
			files = perfetto.Files(ins, perfetto.ReportBudget)
		}
	}()
	size, err := draw()
	<-built
	if err != nil || ins == nil {
		return err
	}
	if budget := perfetto.PageBudget(size); budget < perfetto.ReportBudget {
		files = perfetto.Files(ins, budget)
	}
	src.Perfetto = files
	src.WindowRows = nil // the files hold what the page needs of them
	return nil
}

// perfettoInputs reads the rows of src's windows (ReadPerfettoRows) and
// returns what analysis/perfetto builds their files from; nil when src has
// no window or its files are made.
func perfettoInputs(ctx context.Context, eng Engine, src *report.Source) ([]perfetto.Input, error) {
	if len(src.Windows) == 0 || src.Perfetto != nil {
		return nil, nil
	}
	if err := ReadPerfettoRows(ctx, eng, src); err != nil {
		return nil, err
	}
	shown := report.ShownFindings(src.Bundle)
	var ins []perfetto.Input
	for _, w := range src.Windows {
		in := perfetto.Input{Window: w, Rows: src.WindowRows[w.Key()]}
		if w.N >= 1 && w.N <= len(shown) {
			in.Finding = shown[w.N-1]
		}
		ins = append(ins, in)
	}
	return ins, nil
}

// ReadPerfettoRows runs sql/perfetto.sql for each window of src whose rows
// src.WindowRows does not hold yet (AddTimelines reads most) and keeps
// them there: after it, AddPerfetto needs no database, which the CLI
// closes before it draws the page.
func ReadPerfettoRows(ctx context.Context, eng Engine, src *report.Source) error {
	if len(src.Windows) == 0 || src.Perfetto != nil {
		return nil
	}
	return readRows(ctx, eng, src, src.Windows, presetWorkers)
}

// windowRows runs sql/perfetto.sql (query) once per distinct window of
// windows that read does not hold yet, workers at once, with the cap of the saved files: the rows
// a finding's Perfetto file and its timeline are made from. It returns
// read with the new windows added. The first window whose query fails is
// the error.
func windowRows(ctx context.Context, eng Engine, query string, windows []report.Window, read map[report.WindowKey]*table.Table, workers int) (map[report.WindowKey]*table.Table, error) {
	var order []report.Window
	rows := map[report.WindowKey]*table.Table{}
	for k, t := range read {
		rows[k] = t
	}
	for _, w := range windows {
		if _, ok := rows[w.Key()]; !ok {
			rows[w.Key()] = nil
			order = append(order, w)
		}
	}
	if len(order) > 0 && eng == nil {
		return nil, fmt.Errorf("perfetto: no database")
	}
	tables := make([]*table.Table, len(order))
	errs := make([]error, len(order))
	sem := make(chan struct{}, max(1, workers))
	var wg sync.WaitGroup
	for i, w := range order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			tables[i], errs[i] = eng.Query(ctx, query, 0, w.Trace, w.Rank, w.StartNs, w.EndNs,
				int64(perfetto.DefaultMaxEvents), int64(perfetto.DefaultMaxPython))
			perfetto.SortRows(tables[i]) // the query leaves the order to Go
		}()
	}
	wg.Wait()
	for i, w := range order {
		if errs[i] != nil {
			return nil, fmt.Errorf("perfetto: the window of finding %d (%s): %w", w.N, w.Rule, errs[i])
		}
		rows[w.Key()] = tables[i]
	}
	return rows, nil
}

// WritePerfettoFiles writes the Perfetto files into dir, creating it:
// `tracebook report --perfetto DIR` and `%report --perfetto DIR`.
func WritePerfettoFiles(dir string, files []report.PerfettoFile) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.JSON, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// AddTimelines gives each window of src its timeline (the picture of the
// window's host threads and GPU streams that the report draws beside the
// Perfetto file): the window's rows are read as AddPerfetto reads them
// (windowRows) and kept in src.WindowRows for it, and perfetto.Timeline
// reduces them. When the rows cannot be read, the windows keep no
// timeline rather than failing the report.
func AddTimelines(ctx context.Context, eng Engine, src *report.Source) {
	if eng == nil || len(src.Windows) == 0 {
		return
	}
	if err := readWindowRows(ctx, eng, src, presetWorkers); err != nil {
		return
	}
	shown := report.ShownFindings(src.Bundle)
	var ins []perfetto.Input
	var at []int // the window of each input
	for i := range src.Windows {
		w := &src.Windows[i]
		t := src.WindowRows[w.Key()]
		if t == nil {
			continue
		}
		in := perfetto.Input{Window: *w, Rows: t}
		if w.N >= 1 && w.N <= len(shown) {
			in.Finding = shown[w.N-1]
		}
		ins = append(ins, in)
		at = append(at, i)
	}
	// Findings whose windows are the same share the window's rows, read
	// once for all their timelines.
	for k, tl := range perfetto.Timelines(ins) {
		src.Windows[at[k]].Timeline = tl
	}
}

// readWindowRows reads the rows of src's placed windows that
// src.WindowRows does not hold yet into it, workers queries at once.
func readWindowRows(ctx context.Context, eng Engine, src *report.Source, workers int) error {
	var placed []report.Window
	for _, w := range src.Windows {
		if w.Placed && w.EndNs > w.StartNs {
			placed = append(placed, w)
		}
	}
	return readRows(ctx, eng, src, placed, workers)
}

// readRows reads the rows of windows that src.WindowRows does not hold
// yet into it (windowRows, workers at once).
func readRows(ctx context.Context, eng Engine, src *report.Source, windows []report.Window, workers int) error {
	p, ok := sql.Lookup(sql.Perfetto)
	if !ok {
		return fmt.Errorf("perfetto: sql/%s.sql is missing from this build", sql.Perfetto)
	}
	rows, err := windowRows(ctx, eng, p.SQL, windows, src.WindowRows, workers)
	if err != nil {
		return err
	}
	src.WindowRows = rows
	return nil
}
