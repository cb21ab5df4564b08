package cells

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/perfetto"
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

// HTMLWriter writes the single-file HTML report of an encoded source for a
// view, with the findings' Perfetto files embedded. The composition root
// provides it (package wasm embeds the viewer module, which cells does not
// import).
type HTMLWriter func(w io.Writer, data []byte, v report.View, files []report.PerfettoFile) error

// ReportHook returns the %report hook: `%report [filter] [--html PATH]
// [--md PATH]` collects the evidence and the cross-view under the filter,
// keeps the bundle for later magics, shows the Markdown report (text/markdown;
// text/plain with each chart image as its title) and the first chart
// (image/svg+xml), and writes the files asked for. writeHTML may be nil: then
// --html fails with a sentence saying so.
func ReportHook(writeHTML HTMLWriter) Hook {
	return func(ctx context.Context, s *Session, args []string, _ Publisher) (*Result, error) {
		f, rest, err := ParseFilter(args)
		if err != nil {
			return nil, err
		}
		opts, pos, err := parseOptions(lookupMagic("report"), "%report", rest)
		if err != nil {
			return nil, err
		}
		if len(pos) > 0 {
			return nil, usagef("%%report: unexpected argument %q", pos[0])
		}
		htmlPath, mdPath, perfettoDir := opts["html"], opts["md"], opts["perfetto"]
		src, err := CollectReport(ctx, s.Engine(), f, s.Context())
		if err != nil {
			return nil, err
		}
		s.SetBundle(src.Bundle)
		view := report.View{Filter: f}
		var md bytes.Buffer
		if err := report.GenerateView(&md, src, view, report.Markdown); err != nil {
			return nil, err
		}
		var notes bytes.Buffer
		if mdPath != "" {
			p := s.resolve(mdPath)
			if err := os.WriteFile(p, md.Bytes(), 0o644); err != nil {
				return nil, fmt.Errorf("%%report: writing the Markdown report: %w", err)
			}
			fmt.Fprintf(&notes, "Markdown report written to %s\n", p)
		}
		if htmlPath != "" {
			if writeHTML == nil {
				return nil, fmt.Errorf("%%report --html is %w", ErrNotAvailable)
			}
			data, err := report.EncodeOffline(src)
			if err != nil {
				return nil, err
			}
			// The Perfetto files take what the page leaves under its limit.
			var page bytes.Buffer
			if err := writeHTML(&page, data, view, nil); err != nil {
				return nil, err
			}
			if err := AddPerfetto(ctx, s.Engine(), src, perfetto.PageBudget(page.Len())); err != nil {
				return nil, err
			}
			page.Reset()
			if err := writeHTML(&page, data, view, src.Perfetto); err != nil {
				return nil, err
			}
			p := s.resolve(htmlPath)
			if err := os.WriteFile(p, page.Bytes(), 0o644); err != nil {
				return nil, fmt.Errorf("%%report: writing the HTML report: %w", err)
			}
			fmt.Fprintf(&notes, "HTML report written to %s (%d bytes, opens offline)\n", p, page.Len())
		}
		if perfettoDir != "" {
			// The files the HTML report embeds, or, without one, within the
			// budget a report gives them.
			if err := AddPerfetto(ctx, s.Engine(), src, perfetto.ReportBudget); err != nil {
				return nil, err
			}
			dir := s.resolve(perfettoDir)
			if err := WritePerfettoFiles(dir, src.Perfetto); err != nil {
				return nil, fmt.Errorf("%%report: writing the Perfetto files: %w", err)
			}
			fmt.Fprintf(&notes, "%d Perfetto file(s) written to %s (%s)\n", len(src.Perfetto), dir, report.PerfettoHint)
		}
		text := plainReport(md.String())
		if notes.Len() > 0 {
			text = notes.String() + "\n" + text
		}
		data := map[string]any{"text/markdown": md.String(), "text/plain": text}
		// The charts of the same view (the rollup is the one GenerateView
		// kept in src): the first as image/svg+xml beside the Markdown.
		addChartSVG(data, report.ChartsFor(src, view))
		return &Result{Data: data, Metadata: map[string]any{}}, nil
	}
}

// resolve makes a relative path start from the session's working directory.
func (s *Session) resolve(p string) string {
	if filepath.IsAbs(p) || s.WorkDir() == "" {
		return p
	}
	return filepath.Join(s.WorkDir(), p)
}
