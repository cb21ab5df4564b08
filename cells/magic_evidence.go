package cells

import (
	"context"
	"fmt"
	"html"
	"slices"
	"strings"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/pipeline"
	"github.com/tracebook/tracebook/sql"
)

// EvidenceHook runs %evidence AREA [filter]: it collects the area (every
// area for "all") under the filter, keeps the bundle in the session (for
// %report), and shows each area rolled up for the filter, with the preset's
// name, doc and SQL one click away, then the findings and evidence gaps.
func EvidenceHook(ctx context.Context, s *Session, args []string, pub Publisher) (*Result, error) {
	f, pos, err := ParseFilter(args)
	if err != nil {
		return nil, err
	}
	if len(pos) != 1 {
		return nil, usagef("%%evidence takes one area (%s, phases or all), got %d", strings.Join(evidence.Areas, ", "), len(pos))
	}
	area := pos[0]
	b, err := pipeline.CollectEvidence(ctx, s.Engine(), []string{area}, f, s.Context())
	if err != nil {
		return nil, err
	}
	s.SetBundle(b)
	ev := evidence.Rollup(b, f)
	names := []string{evidence.AreaPreset(area)}
	if area == "all" {
		names = evidence.Areas
	}
	var last *Result
	// With one trace the tables leave out their trace column: the line
	// above each table names the trace instead.
	oneTrace := b.Traces == nil || table.OneTrace(b.Traces)
	where := ""
	if oneTrace && b.Traces != nil && len(b.Traces.Rows) > 0 {
		where = ", trace " + evidence.Str(b.Traces, 0, "trace")
	}
	for i, name := range names {
		t := ev.Table(name)
		if t == nil {
			continue
		}
		res := EvidenceResult(evidence.WithoutHists(t), oneTrace)
		p, _ := sql.Lookup(name)
		head := fmt.Sprintf("<p><b>%s</b> — %s (kept as table <code>evidence_%s</code>%s)</p>", html.EscapeString(name), html.EscapeString(firstLine(p.Doc)), name, html.EscapeString(where))
		tail := fmt.Sprintf("<details><summary>SQL: sql/%s.sql</summary><pre>%s</pre></details>", name, html.EscapeString(p.SQL))
		if slices.Contains(p.Includes, pipeline.BaseModule) {
			// The preset reads the tables this run built: say so where its SQL is shown.
			tail += fmt.Sprintf("<p>It reads the tables evidence_base_events and evidence_base_steps, which this run built for the filter from "+
				"<code>sql/%s.sql</code>; to run the SQL above for another filter, run that file first.</p>", pipeline.BaseModule)
		}
		addCharts(res, report.AreaCharts(name, ev, b, f))
		res.Data[MIMEHTML] = head + res.Data[MIMEHTML].(string) + tail
		res.Data[MIMEText] = fmt.Sprintf("%s: %s (table evidence_%s%s)\n%s", name, firstLine(p.Doc), name, where, res.Data[MIMEText])
		if i < len(names)-1 && pub != nil {
			pub.Display(res.Data, res.Metadata, "")
			continue
		}
		last = res
	}
	if last == nil {
		last = textResult("")
	}
	if note := findingsText(b); note != "" {
		last.Data[MIMEText] = last.Data[MIMEText].(string) + "\n" + note
		last.Data[MIMEHTML] = last.Data[MIMEHTML].(string) + "<pre>" + html.EscapeString(note) + "</pre>"
	}
	return last, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// findingsText lists the findings and gaps in a few lines.
func findingsText(b *evidence.Bundle) string {
	var sb strings.Builder
	for _, f := range b.Findings {
		mark := "🟡"
		if f.Severity == "critical" {
			mark = "🔴"
		}
		fmt.Fprintf(&sb, "%s %s [%s, %s] %s\n   Fix: %s", mark, f.Title, f.Severity, f.Status, f.Observation, f.Fix)
		if f.Snippet != "" {
			fmt.Fprintf(&sb, " `%s`", f.Snippet)
		}
		sb.WriteByte('\n')
	}
	for _, g := range b.Gaps {
		rank := "all ranks"
		if g.Rank >= 0 {
			rank = fmt.Sprintf("rank %d", g.Rank)
		}
		fmt.Fprintf(&sb, "gap (%s, %s): %s — %s\n", g.Trace, rank, g.What, g.Why)
	}
	return sb.String()
}
