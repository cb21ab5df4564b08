package evidence

import (
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/table"
)

// Steady is one rank's steady state: the ops and ranks areas rolled up
// for the filter without the rank's warm-up step, the first step of a
// phase that the capture area names warmup_step (at least twice the
// median of the later steps of its phase: first-call work, autotuning, the
// DataLoader's workers starting). A rule that takes a share of the loop's
// time reads it, so that one start-up step does not set the share of the
// steps after it (resnet_2080ti: the DataLoader is 50% of the time of
// steps 0-29, 65% of steps 1-29).
type Steady struct {
	Trace string
	Rank  int
	// Step is the warm-up step left out; FirstNs and LastNs its interval,
	// from the trace's first event (the capture row's).
	Step            int
	FirstNs, LastNs int64
	// Steps is how many steps remain.
	Steps      int64
	Ops, Ranks *table.Table
}

// steadyStates finds, in ev's rolled-up capture area, the ranks with one
// warm-up step and at least one step after it, and rolls their ops and
// ranks up again from b without that step's rows. A bundle whose rows were
// merged over steps (the single-file report's Compact) has no row of the
// step in either area: it gets none.
func steadyStates(b *Bundle, f Filter, ev *Evidence) []Steady {
	ct := ev.Table("capture")
	if ct == nil || b.Tables["ops"] == nil || b.Tables["ranks"] == nil || f.HasStep {
		return nil
	}
	var out []Steady
	for r := range ct.Rows {
		if Str(ct, r, "kind") != "warmup_step" || Int(ct, r, "count") != 1 {
			continue
		}
		step, ok := WarmupStepOf(Str(ct, r, "name"))
		if !ok {
			continue
		}
		s := Steady{Trace: Str(ct, r, "trace"), Rank: int(Int(ct, r, "rank")), Step: step,
			FirstNs: Int(ct, r, "first_ns"), LastNs: Int(ct, r, "last_ns")}
		rf := f
		rf.Trace, rf.Rank, rf.HasRank = s.Trace, s.Rank, true
		ranks, left := withoutStep(b.Tables["ranks"], s.Trace, s.Rank, step)
		if left == 0 {
			continue
		}
		rev := &Evidence{Filter: rf, Traces: b.Traces, Tables: Tables{}}
		s.Ranks = RollupTable("ranks", ranks, rf, rev)
		for k := range s.Ranks.Rows {
			s.Steps += Int(s.Ranks, k, "steps")
		}
		if s.Steps == 0 {
			continue
		}
		rev.Tables["ranks"] = s.Ranks
		ops, opsLeft := withoutStep(b.Tables["ops"], s.Trace, s.Rank, step)
		if opsLeft == 0 {
			continue // its rows merged over steps: the step's time is in them
		}
		s.Ops = RollupTable("ops", ops, rf, rev)
		out = append(out, s)
	}
	return out
}

// WarmupStepOf reads the step number of a warmup_step row of the capture
// area from its name ("step N").
func WarmupStepOf(name string) (int, bool) {
	n, ok := strings.CutPrefix(name, "step ")
	step, err := strconv.Atoi(n)
	return step, ok && err == nil
}

// withoutStep is t without the rows of one step of one rank, and how many
// rows it left out.
func withoutStep(t *table.Table, trace string, rank, step int) (*table.Table, int) {
	out := &table.Table{Name: t.Name, Columns: t.Columns, Total: t.Total}
	for r, row := range t.Rows {
		if Str(t, r, "trace") == trace && Int(t, r, "rank") == int64(rank) && Int(t, r, "step") == int64(step) {
			continue
		}
		out.Rows = append(out.Rows, row)
	}
	return out, len(t.Rows) - len(out.Rows)
}

// SteadyOf returns the steady state of one rank (see Steady), or nil when
// the rank has no warm-up step to leave out.
func (e *Evidence) SteadyOf(trace string, rank int) *Steady {
	for i := range e.Steady {
		if s := &e.Steady[i]; s.Trace == trace && s.Rank == rank {
			return s
		}
	}
	return nil
}
