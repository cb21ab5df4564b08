package cells

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tracebook/tracebook/analysis/perfetto"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/pipeline"
)

// HTMLPage is a single-file HTML report drawn but for the findings'
// Perfetto files (wasm.ReportPage): Size is its size without them, which
// sets their budget, and Write writes it with them.
type HTMLPage interface {
	Size() (int, error)
	Write(w io.Writer, files []report.PerfettoFile) error
}

// HTMLWriter draws the single-file HTML report of an encoded source for a
// view. The composition root provides it (package wasm embeds the viewer
// module, which cells does not import).
type HTMLWriter func(data []byte, v report.View) (HTMLPage, error)

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
		src, err := pipeline.CollectReport(ctx, s.Engine(), f, s.Context())
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
			// The Perfetto files take what the page leaves under its limit.
			var page HTMLPage
			err := pipeline.AddPerfettoForPage(ctx, s.Engine(), src, func() (int, error) {
				data, err := report.EncodeOffline(src)
				if err != nil {
					return 0, err
				}
				if page, err = writeHTML(data, view); err != nil {
					return 0, err
				}
				return page.Size()
			})
			if err != nil {
				return nil, err
			}
			var html bytes.Buffer
			if err := page.Write(&html, src.Perfetto); err != nil {
				return nil, err
			}
			p := s.resolve(htmlPath)
			if err := os.WriteFile(p, html.Bytes(), 0o644); err != nil {
				return nil, fmt.Errorf("%%report: writing the HTML report: %w", err)
			}
			fmt.Fprintf(&notes, "HTML report written to %s (%d bytes, opens offline)\n", p, html.Len())
		}
		if perfettoDir != "" {
			// The files the HTML report embeds, or, without one, within the
			// budget a report gives them.
			if err := pipeline.AddPerfetto(ctx, s.Engine(), src, perfetto.ReportBudget); err != nil {
				return nil, err
			}
			dir := s.resolve(perfettoDir)
			if err := pipeline.WritePerfettoFiles(dir, src.Perfetto); err != nil {
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
