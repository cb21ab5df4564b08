package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/cells"
	"github.com/tracebook/tracebook/pipeline"
)

func init() {
	sessionHooks = append(sessionHooks, func(s *cells.Session) { s.Evidence = cells.EvidenceHook })
}

func runEvidence(args []string, stdout, stderr io.Writer) error {
	usage := fmt.Errorf("usage: tracebook %s (areas: %s, phases, all)", commands["evidence"].usage, strings.Join(evidence.Areas, ", "))
	p, lf, err := parseLoadArgs("evidence", args, options{values: []string{"format"}, flags: []string{"raw"}})
	if err != nil {
		return err
	}
	format, raw := p.value("format", "md"), p.flags["raw"]
	switch format {
	case "md", "csv", "json":
	default:
		return fmt.Errorf("--format %q: want md, csv or json", format)
	}
	f, pos, err := p.filter("evidence")
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) < 2 && lf.db == "" {
		return usage
	}
	area, paths := pos[0], pos[1:]

	ctx, db, err := openTraces(context.Background(), lf, paths, forAnalysis, stderr)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.load(ctx, paths, trace.LoadOptions{}); err != nil {
		return err
	}
	done := db.stage("analysing: evidence " + area)
	b, err := pipeline.CollectEvidence(ctx, db, []string{area}, f, nil)
	done()
	if err != nil {
		return err
	}
	ev := evidence.Rollup(b, f)
	names := []string{evidence.AreaPreset(area)}
	if area == "all" {
		names = evidence.Areas
	}
	// md leaves out the histograms (csv and json keep them, for merging)
	// and, with one trace loaded, the trace column.
	oneTrace := b.Traces == nil || table.OneTrace(b.Traces)
	if format == "md" && oneTrace && b.Traces != nil && len(b.Traces.Rows) > 0 {
		fmt.Fprintf(stdout, "Trace: %s\n\n", table.MarkdownText(evidence.Str(b.Traces, 0, "trace")))
	}
	for i, name := range names {
		t := ev.Table(name)
		if raw {
			t = b.Table(name)
		}
		if t == nil {
			continue
		}
		if len(names) > 1 {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			if format != "json" {
				fmt.Fprintf(stdout, "## %s\n\n", name)
			}
		}
		if err := writeTable(stdout, t, format, oneTrace); err != nil {
			return err
		}
	}
	if format == "md" {
		writeFindings(stdout, b)
	}
	return nil
}

// writeFindings prints the findings and the evidence gaps after the tables.
func writeFindings(w io.Writer, b *evidence.Bundle) {
	if len(b.Findings) > 0 {
		fmt.Fprintln(w, "\n## Findings")
		for _, f := range b.Findings {
			mark := "🟡"
			if f.Severity == "critical" {
				mark = "🔴"
			}
			fmt.Fprintf(w, "\n%s **%s** (%s, %s)\n\n%s\n\n**Fix:** %s", mark, f.Title, f.Severity, f.Status, f.Observation, f.Fix)
			if f.Snippet != "" {
				fmt.Fprintf(w, " `%s`", f.Snippet)
			}
			fmt.Fprintln(w)
		}
	}
	if len(b.Gaps) > 0 {
		fmt.Fprintln(w, "\n## Evidence gaps")
		for _, g := range b.Gaps {
			rank := "all ranks"
			if g.Rank >= 0 {
				rank = fmt.Sprintf("rank %d", g.Rank)
			}
			fmt.Fprintf(w, "- %s (%s, %s): %s — %s\n", g.What, g.Trace, rank, g.Kind, g.Why)
		}
	}
}
