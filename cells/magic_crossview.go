package cells

import (
	"bytes"
	"context"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/pipeline"
)

// CrossViewResult shows a cross-view as a cell output: the text trees as
// text/plain and the foldable HTML (no script, every trace string escaped)
// as text/html.
func CrossViewResult(r *crossview.Result) (*Result, error) {
	var text, html bytes.Buffer
	if err := crossview.Write(&text, r, crossview.FormatTree, ""); err != nil {
		return nil, err
	}
	if err := crossview.Write(&html, r, crossview.FormatHTML, ""); err != nil {
		return nil, err
	}
	res := &Result{
		Data:     map[string]any{"text/plain": text.String(), "text/html": html.String()},
		Metadata: map[string]any{},
	}
	addCharts(res, []report.Chart{report.CrossViewChart(r)})
	return res, nil
}

// CrossViewHook is a Hook for %crossview: it parses the filter from the
// magic's arguments, builds the cross-view with opts and shows it.
func CrossViewHook(opts crossview.Options) Hook {
	return func(ctx context.Context, s *Session, args []string, _ Publisher) (*Result, error) {
		f, rest, err := ParseFilter(args)
		if err != nil {
			return nil, err
		}
		if len(rest) > 0 {
			return nil, usagef("%%crossview: unexpected argument %q", rest[0])
		}
		r, err := pipeline.CrossView(ctx, s.Engine(), f, opts)
		if err != nil {
			return nil, err
		}
		return CrossViewResult(r)
	}
}
