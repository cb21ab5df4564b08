package pipeline

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/diff"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/report"
)

// CollectDiffInput collects what a diff compares, for each of the loaded
// traces base and test under f (with f.Trace set to the trace): the
// evidence of every area and the cross-view of f, each side with its
// %context record (baseContext, testContext). With withSlices, each side also
// gets the cross-view of each rank (when it has 2 to MaxRankCrossViews
// ranks and f selects none) and of each phase (when its steps have several
// phases and f selects none), so that the offline page's rank and phase
// filters compare trees too. A side whose cross-view of f cannot be built
// has none, and the diff says the trees are not compared; a slice whose
// cross-view fails is left out. %diff and `tracebook diff` both call it.
func CollectDiffInput(ctx context.Context, eng Engine, base, test string, f evidence.Filter, baseContext, testContext map[string]string, withSlices bool) (*diff.Input, error) {
	in := &diff.Input{Filter: f}
	for i, name := range []string{base, test} {
		sf := f
		sf.Trace = name
		c := baseContext
		if i == 1 {
			c = testContext
		}
		b, err := CollectEvidence(ctx, eng, []string{"all"}, sf, c)
		if err != nil {
			return nil, fmt.Errorf("diff: %w", err)
		}
		side := diff.InputSide{Name: name, Bundle: b, CrossViews: []*crossview.Result{}}
		fs := []evidence.Filter{sf}
		if withSlices {
			fs = append(fs, sliceFilters(sf, b)...)
		}
		ss := make([]crossview.Slice, len(fs))
		for k, x := range fs {
			ss[k] = SliceOf(x)
		}
		// One read of the side's rows builds every slice's cross-view.
		if cvs, errs, err := CrossViews(ctx, eng, sf, ss, crossview.DefaultOptions()); err == nil && errs[0] == nil {
			for k, cv := range cvs {
				if errs[k] == nil {
					side.CrossViews = append(side.CrossViews, cv)
				}
			}
		}
		if i == 0 {
			in.Base = side
		} else {
			in.Test = side
		}
	}
	return in, nil
}

// sliceFilters returns the filters of a side's cross-views per rank and
// per phase, as CollectDiffInput says; f is the side's filter (its Trace
// set).
func sliceFilters(f evidence.Filter, b *evidence.Bundle) []evidence.Filter {
	var out []evidence.Filter
	if !f.HasRank {
		var ranks []int
		for _, ri := range evidence.Ranks(b.Traces) {
			if ri.Trace == f.Trace && !slices.Contains(ranks, ri.Rank) {
				ranks = append(ranks, ri.Rank)
			}
		}
		sort.Ints(ranks)
		if len(ranks) >= 2 && len(ranks) <= MaxRankCrossViews {
			for _, r := range ranks {
				rf := f
				rf.Rank, rf.HasRank = r, true
				out = append(out, rf)
			}
		}
	}
	if f.Phase == "" {
		var phases []string
		if t := b.Table("steps"); t != nil && t.Col("phase") >= 0 {
			for r := range t.Rows {
				if ph := evidence.Str(t, r, "phase"); ph != "" && !slices.Contains(phases, ph) {
					phases = append(phases, ph)
				}
			}
		}
		sort.Strings(phases)
		if len(phases) >= 2 {
			for _, ph := range phases {
				pf := f
				pf.Phase = ph
				out = append(out, pf)
			}
		}
	}
	return out
}

// CollectDiff collects the input of the loaded traces base and test under f
// (CollectDiffInput, without the slices' cross-views) and compares them
// step-normalised (analysis/diff): what the page shows for f. Where the
// two %context records differ, the diff warns.
func CollectDiff(ctx context.Context, eng Engine, base, test string, f evidence.Filter, baseContext, testContext map[string]string) (*diff.Diff, error) {
	in, err := CollectDiffInput(ctx, eng, base, test, f, baseContext, testContext, false)
	if err != nil {
		return nil, err
	}
	return diff.CompareView(in, report.View{Filter: f})
}
