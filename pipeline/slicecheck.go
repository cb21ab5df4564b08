package pipeline

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/table"
)

// A filter that names a rank, a window, a phase, a step or a stream that
// the loaded traces do not hold selects nothing, and a report of nothing
// reads "no rule flagged this slice": a mistyped --rank would pass for a
// healthy rank. checkSlice and checkSliceEvidence turn such a filter into
// an error that says what the traces do hold.

// SliceError says that a filter selects nothing the loaded traces hold,
// and what they hold.
type SliceError struct{ Msg string }

func (e *SliceError) Error() string { return e.Msg }

// sliceErrorf is a SliceError of a formatted message.
func sliceErrorf(format string, args ...any) error {
	return &SliceError{Msg: fmt.Sprintf(format, args...)}
}

// checkSlice checks f's rank and window against tr, the traces rows of
// f's trace (every trace when f names none), before any preset runs.
func checkSlice(tr *table.Table, f evidence.Filter) error {
	where := "no loaded trace has"
	if f.Trace != "" {
		where = "trace " + strconv.Quote(f.Trace) + " has no"
	}
	if f.HasRank {
		var ranks []int64
		for i := range tr.Rows {
			ranks = append(ranks, evidence.Int(tr, i, "rank"))
		}
		if !slices.Contains(ranks, int64(f.Rank)) {
			return sliceErrorf("%s rank %d (ranks: %s)", where, f.Rank, intList(ranks))
		}
	}
	if f.WindowStartNs > 0 {
		// The window counts from each trace's first event: it selects
		// something when it starts before the longest trace ends.
		first, last := map[string]int64{}, map[string]int64{}
		for i := range tr.Rows {
			if evidence.Cell(tr, i, "first_ts_ns") == nil {
				continue
			}
			name := evidence.Str(tr, i, "trace")
			a, b := evidence.Int(tr, i, "first_ts_ns"), evidence.Int(tr, i, "last_end_ns")
			if v, ok := first[name]; !ok || a < v {
				first[name] = a
			}
			if v, ok := last[name]; !ok || b > v {
				last[name] = b
			}
		}
		var span int64
		for name, a := range first {
			span = max(span, last[name]-a)
		}
		if f.WindowStartNs >= span {
			return sliceErrorf("the window starts at %s, after the end of %s (%s from the first event)",
				table.WindowMs(f.WindowStartNs), traceWord(f.Trace, len(first)), table.WindowMs(span))
		}
	}
	return nil
}

// traceWord names the trace a window is checked against: the filter's, or
// the longest of n.
func traceWord(trace string, n int) string {
	switch {
	case trace != "":
		return "trace " + strconv.Quote(trace)
	case n == 1:
		return "the trace"
	}
	return "the longest trace"
}

// checkSliceEvidence checks f's phase, step and stream against what the
// slice's evidence holds: the steps and phases of its ranks rows, the
// streams of every table with a stream column. A table missing from b
// checks nothing.
func checkSliceEvidence(b *evidence.Bundle, f evidence.Filter) error {
	// A slice of no event at all: a window inside the trace's span that
	// holds none (an idle stretch), a rank of no event.
	if ov := b.Tables["overview"]; ov != nil && ov.Col("events") >= 0 {
		var events int64
		for i := range ov.Rows {
			if inTraceRank(ov, i, f) {
				events += evidence.Int(ov, i, "events")
			}
		}
		if events == 0 {
			if f == (evidence.Filter{}) {
				return sliceErrorf("the trace holds no event (its traceEvents are metadata at most)")
			}
			return sliceErrorf("%s holds no event", sliceName(f))
		}
	}
	if f.Phase != "" || f.HasStep {
		rk := b.Tables["ranks"]
		if rk == nil {
			return nil
		}
		var phases []string
		var steps []int64
		for i := range rk.Rows {
			if !inTraceRank(rk, i, f) {
				continue
			}
			// A rank's events outside every step have step -1.
			if evidence.Cell(rk, i, "step") != nil && evidence.Int(rk, i, "step") >= 0 {
				steps = append(steps, evidence.Int(rk, i, "step"))
				if p := evidence.Str(rk, i, "phase"); p != "" && !slices.Contains(phases, p) {
					phases = append(phases, p)
				}
			}
		}
		if len(steps) == 0 {
			return sliceErrorf("%s holds no step, so no %s: the trace has no step annotations there (%s)", sliceName(f), stepWord(f), evidence.StepAnnotations)
		}
		if f.Phase != "" && !slices.Contains(phases, f.Phase) {
			slices.Sort(phases)
			return sliceErrorf("%s holds no %s step (its steps' phases: %s)", sliceName(f), f.Phase, strings.Join(phases, ", "))
		}
		if f.HasStep && !slices.Contains(steps, int64(f.Step)) {
			return sliceErrorf("%s holds no step %d (its steps: %s)", sliceName(f), f.Step, intList(steps))
		}
	}
	if f.HasStream {
		var streams []int64
		seen := false
		for _, t := range b.Tables {
			if t == nil || t.Col("stream") < 0 {
				continue
			}
			seen = true
			for i := range t.Rows {
				if evidence.Cell(t, i, "stream") != nil {
					streams = append(streams, evidence.Int(t, i, "stream"))
				}
			}
		}
		streams = slices.DeleteFunc(streams, func(s int64) bool { return s < 0 })
		if seen && !slices.Contains(streams, f.Stream) {
			if len(streams) == 0 {
				return sliceErrorf("%s holds no GPU stream, so no stream %d", sliceName(f), f.Stream)
			}
			return sliceErrorf("%s holds no GPU stream %d (its streams: %s)", sliceName(f), f.Stream, intList(streams))
		}
	}
	return nil
}

// inTraceRank says whether row i of t is of f's trace and rank.
func inTraceRank(t *table.Table, i int, f evidence.Filter) bool {
	return (f.Trace == "" || evidence.Str(t, i, "trace") == f.Trace) && (!f.HasRank || evidence.Int(t, i, "rank") == int64(f.Rank))
}

// sliceName names the part of the traces f's trace, rank and window
// select: "trace \"a\", rank 3", "rank 3", "the window 100ms..200ms",
// "the slice".
func sliceName(f evidence.Filter) string {
	var parts []string
	if f.Trace != "" {
		parts = append(parts, "trace "+strconv.Quote(f.Trace))
	}
	if f.HasRank {
		parts = append(parts, "rank "+strconv.Itoa(f.Rank))
	}
	name := strings.Join(parts, ", ")
	switch {
	case f.WindowStartNs != 0 || f.WindowEndNs != 0:
		end := table.WindowMs(f.WindowEndNs)
		if end == "" {
			end = "the end"
		}
		window := "the window " + cmp.Or(table.WindowMs(f.WindowStartNs), "0ms") + ".." + end
		if name == "" {
			return window
		}
		return name + " in " + window
	case name == "":
		return "the slice"
	}
	return name
}

// stepWord is what f selects among steps: "decode phase" or "step 3".
func stepWord(f evidence.Filter) string {
	if f.Phase != "" {
		return f.Phase + " phase"
	}
	return "step " + strconv.Itoa(f.Step)
}

// intList is table.Runs of vs, at most 12 items.
func intList(vs []int64) string {
	ints := make([]int, len(vs))
	for i, v := range vs {
		ints[i] = int(v)
	}
	return table.Runs(ints, 12)
}
