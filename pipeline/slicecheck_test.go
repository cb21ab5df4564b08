package pipeline

import (
	"errors"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/table"
)

// tableOf builds a table of these columns and rows.
func tableOf(cols []string, rows ...[]any) *table.Table {
	t := &table.Table{Rows: rows}
	for _, c := range cols {
		t.Columns = append(t.Columns, table.Column{Name: c})
	}
	return t
}

// wantSliceErr fails t unless err is nil where want is "", or a
// SliceError holding want.
func wantSliceErr(t *testing.T, err error, want string) {
	t.Helper()
	var se *SliceError
	switch {
	case want == "" && err != nil:
		t.Errorf("error %v, want none", err)
	case want != "" && (!errors.As(err, &se) || !strings.Contains(err.Error(), want)):
		t.Errorf("error %v, want a SliceError holding %q", err, want)
	}
}

func TestCheckSlice(t *testing.T) {
	// Two traces: a of ranks 0-3 over 100 ms, b of rank 0 over 2 s.
	tr := tableOf([]string{"trace", "rank", "first_ts_ns", "last_end_ns"},
		[]any{"a", int64(0), int64(1e9), int64(1.1e9)}, []any{"a", int64(1), int64(1e9), int64(1.05e9)},
		[]any{"a", int64(2), int64(1e9), int64(1.1e9)}, []any{"a", int64(3), int64(1.01e9), int64(1.1e9)},
		[]any{"b", int64(0), int64(5e9), int64(7e9)})
	onlyA := tableOf([]string{"trace", "rank", "first_ts_ns", "last_end_ns"}, tr.Rows[:4]...)
	tests := []struct {
		name string
		tr   *table.Table
		f    evidence.Filter
		want string // "" = no error
	}{
		{"no filter", tr, evidence.Filter{}, ""},
		{"a rank one trace has", tr, evidence.Filter{Rank: 3, HasRank: true}, ""},
		{"a rank no trace has", tr, evidence.Filter{Rank: 9, HasRank: true}, "no loaded trace has rank 9 (ranks: 0–3)"},
		{"a rank the named trace lacks", onlyA, evidence.Filter{Trace: "a", Rank: 4, HasRank: true}, `trace "a" has no rank 4 (ranks: 0–3)`},
		{"a window inside the longest trace", tr, evidence.Filter{WindowStartNs: 1.5e9, WindowEndNs: 1.8e9}, ""},
		{"a window past every trace", tr, evidence.Filter{WindowStartNs: 2e9, WindowEndNs: 3e9}, "the window starts at 2000ms, after the end of the longest trace (2000ms from the first event)"},
		{"a window past the named trace", onlyA, evidence.Filter{Trace: "a", WindowStartNs: 0.2e9}, `after the end of trace "a" (100ms from the first event)`},
		{"an open window from 0", tr, evidence.Filter{WindowEndNs: 1e6}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantSliceErr(t, checkSlice(tc.tr, tc.f), tc.want)
		})
	}
}

func TestCheckSliceEvidence(t *testing.T) {
	ranks := tableOf([]string{"trace", "rank", "step", "phase"},
		[]any{"a", int64(0), int64(-1), nil}, []any{"a", int64(0), int64(0), "prefill"},
		[]any{"a", int64(0), int64(1), "decode"}, []any{"a", int64(1), int64(2), "decode"},
		[]any{"a", int64(1), int64(3), "decode"}, []any{"a", int64(1), int64(4), "decode"})
	noSteps := tableOf([]string{"trace", "rank", "step", "phase"}, []any{"a", int64(0), int64(-1), nil})
	overview := tableOf([]string{"trace", "rank", "events"}, []any{"a", int64(0), int64(12)}, []any{"a", int64(1), int64(0)})
	idle := tableOf([]string{"trace", "rank", "events"}, []any{"a", int64(0), int64(0)})
	kernels := tableOf([]string{"trace", "rank", "stream"}, []any{"a", int64(0), int64(7)}, []any{"a", int64(1), int64(13)})
	bundle := func(tabs map[string]*table.Table) *evidence.Bundle {
		b := evidence.NewBundle()
		for k, v := range tabs {
			b.Tables[k] = v
		}
		return b
	}
	full := bundle(map[string]*table.Table{"ranks": ranks, "kernels": kernels})
	tests := []struct {
		name string
		b    *evidence.Bundle
		f    evidence.Filter
		want string
	}{
		{"no filter", full, evidence.Filter{}, ""},
		{"a phase the slice has", full, evidence.Filter{Phase: "decode"}, ""},
		{"a phase it lacks", full, evidence.Filter{Phase: "mixed"}, "the slice holds no mixed step (its steps' phases: decode, prefill)"},
		{"a phase another rank has", full, evidence.Filter{Phase: "prefill", Rank: 1, HasRank: true}, "rank 1 holds no prefill step (its steps' phases: decode)"},
		{"a step it has", full, evidence.Filter{Step: 4, HasStep: true}, ""},
		{"a step it lacks", full, evidence.Filter{Step: 9, HasStep: true}, "no step 9 (its steps: 0–4)"},
		{"no steps at all", bundle(map[string]*table.Table{"ranks": noSteps}), evidence.Filter{Phase: "decode"}, "holds no step, so no decode phase"},
		{"a stream it has", full, evidence.Filter{Stream: 13, HasStream: true}, ""},
		{"a stream it lacks", full, evidence.Filter{Stream: 99, HasStream: true}, "no GPU stream 99 (its streams: 7, 13)"},
		{"no table with streams", bundle(map[string]*table.Table{"ranks": ranks}), evidence.Filter{Stream: 99, HasStream: true}, ""},
		{"a window of events", bundle(map[string]*table.Table{"overview": overview}), evidence.Filter{WindowStartNs: 1e8, WindowEndNs: 2e8}, ""},
		{"a window of no event", bundle(map[string]*table.Table{"overview": idle}), evidence.Filter{WindowStartNs: 1e8, WindowEndNs: 2e8}, "the window 100ms..200ms holds no event"},
		{"a rank of no event", bundle(map[string]*table.Table{"overview": overview}), evidence.Filter{Rank: 1, HasRank: true, WindowStartNs: 1e8}, "rank 1 in the window 100ms..the end holds no event"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantSliceErr(t, checkSliceEvidence(tc.b, tc.f), tc.want)
		})
	}
}
