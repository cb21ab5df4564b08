package pipeline

import (
	"context"
	"sort"

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
func CollectReport(ctx context.Context, eng Engine, f evidence.Filter, context map[string]string) (*report.Source, error) {
	// The cross-view of f needs nothing from the evidence: build it on
	// another connection meanwhile (the evidence's small queries leave a
	// core idle much of the time), and choose the findings' Perfetto
	// windows before waiting for it.
	var cv *crossview.Result
	var in *crossview.Input
	var cvErr error
	cvDone := make(chan struct{})
	go func() {
		defer close(cvDone)
		if in, cvErr = CrossViewInput(ctx, eng, f); cvErr == nil {
			cv, cvErr = crossview.Build(in, SliceOf(f), crossview.DefaultOptions())
		}
	}()
	b, err := CollectEvidence(ctx, eng, []string{"all"}, f, context)
	var src *report.Source
	if err == nil {
		src = &report.Source{Bundle: b, Windows: PerfettoWindows(ctx, eng, b)}
		AddTimelines(ctx, eng, src)
	}
	<-cvDone
	if err != nil {
		return nil, err
	}
	if err := cvErr; err != nil {
		// The report stands without a tree; the gap says why.
		b.AddGap(evidence.Gap{Kind: "no_crossview", Trace: f.Trace, Rank: -1,
			What: "no GPU call tree", Why: err.Error()})
		return src, nil
	}
	src.CrossViews = append(src.CrossViews, cv)
	if f.HasRank {
		return src, nil
	}
	ranks := map[int]bool{}
	if b.Traces != nil {
		ci := b.Traces.Col("rank")
		for _, r := range b.Traces.Rows {
			if ci >= 0 && ci < len(r) {
				if n, ok := r[ci].(int64); ok {
					ranks[int(n)] = true
				}
			}
		}
	}
	if len(ranks) < 2 || len(ranks) > MaxRankCrossViews {
		return src, nil
	}
	order := make([]int, 0, len(ranks))
	for r := range ranks {
		order = append(order, r)
	}
	sort.Ints(order)
	// Each rank's cross-view from the input read once for every rank.
	for _, rank := range order {
		rf := f
		rf.Rank, rf.HasRank = rank, true
		rcv, err := crossview.Build(in, SliceOf(rf), crossview.DefaultOptions())
		if err != nil {
			continue
		}
		src.CrossViews = append(src.CrossViews, rcv)
	}
	return src, nil
}
