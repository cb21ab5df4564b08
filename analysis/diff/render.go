package diff

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/analysis/table"
)

// Format is an output format of Write.
type Format int

// The formats: Markdown (the notebook's text/markdown and text/plain, and
// --md) and an HTML fragment without script (the notebook's text/html and
// the body of the offline page).
const (
	Markdown Format = iota
	HTMLFragment
)

// Write renders d in format f.
func Write(w io.Writer, d *Diff, f Format) error {
	switch f {
	case Markdown:
		return printMarkdown(w, d, nil)
	case HTMLFragment:
		return printHTML(w, d, nil)
	}
	return fmt.Errorf("unexpected output format %v", f)
}

// Title is the diff's title line.
func (d *Diff) Title() string { return fmt.Sprintf("Diff: %s → %s", d.Base, d.Test) }

// Warning is the loud line shown first when the contexts differ, "" when
// they match.
func (d *Diff) Warning() string {
	if len(d.Mismatches) == 0 {
		return ""
	}
	var what []string
	for _, m := range d.Mismatches {
		what = append(what, m.What)
	}
	return fmt.Sprintf("⚠️ DIFFERENT CONTEXTS: the two traces differ in %s. A change below may come from the context, not from the fix.", strings.Join(what, ", "))
}

// Headline sums the diff up in one sentence: the step time and GPU busy and
// idle changes, and the findings resolved and new.
func (d *Diff) Headline() string {
	per := "/step"
	if d.Normalised == "capture" {
		per = "/capture"
	}
	var parts []string
	for _, c := range d.Changes {
		if c.Group != "step" || c.Verdict == Missing {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s → %s%s (%s, %s)", c.Name, value(c.Base.Mean, c.Unit), value(c.Test.Mean, c.Unit), per, delta(c), verdict(c)))
	}
	var res, nw, pers int
	for _, f := range d.Findings {
		switch f.Status {
		case Resolved:
			res++
		case New:
			nw++
		default:
			pers++
		}
	}
	s := strings.Join(parts, "; ") + fmt.Sprintf(". Findings: %d resolved, %d new, %d persisting.", res, nw, pers)
	if !d.Changed() {
		s = "No significant change. " + s
	}
	return s
}

// Changed reports whether any quantity changed significantly or any
// finding was resolved or is new.
func (d *Diff) Changed() bool {
	for _, c := range d.Changes {
		if c.Verdict == Significant {
			return true
		}
	}
	for _, f := range d.Findings {
		if f.Status != Persisting {
			return true
		}
	}
	return false
}

// value renders a per-step value in its unit.
func value(v float64, unit string) string {
	switch unit {
	case UnitNs:
		return ms(v)
	case UnitBytes:
		return fmt.Sprintf("%.2f MB", v/1e6)
	default:
		return trimFloat(v)
	}
}

// ms is package table's one duration format: "1,234.568 ms".
func ms(ns float64) string { return table.Ms(ns) }

// trimFloat writes a count per step: whole, or with one decimal.
func trimFloat(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e18 {
		return table.Int(int64(v))
	}
	return table.Decimal(v, 1)
}

func statString(s Stat, unit string) string {
	if s.N == 0 {
		return "—"
	}
	if s.N > 1 {
		return value(s.Mean, unit) + " ± " + value(s.Std, unit)
	}
	return value(s.Mean, unit)
}

func delta(c Change) string {
	if c.Verdict == Missing {
		return "—"
	}
	sign := "+"
	if c.Delta < 0 {
		sign = "−"
	}
	s := sign + value(math.Abs(c.Delta), c.Unit)
	if c.Delta == 0 {
		s = "±0"
	}
	if c.HasPct {
		s += fmt.Sprintf(" (%s%.1f%%)", sign, math.Abs(c.Pct))
	}
	return s
}

func verdict(c Change) string {
	switch c.Verdict {
	case Significant:
		if c.T == 0 {
			return "significant: no step-to-step variation"
		}
		return fmt.Sprintf("significant, t = %.1f", c.T)
	case WithinNoise:
		return fmt.Sprintf("within noise, t = %.1f", c.T)
	case Unknown:
		return "significance unknown: one step"
	case Missing:
		side := "base"
		if c.Base.N > 0 {
			side = "test"
		}
		return "not comparable: no such step in " + side
	}
	return c.Verdict
}

// section is a titled group of changes; id names its table in a view's
// Sort.
type section struct {
	id    string
	title string
	group []string
}

var sections = []section{
	{"step", "Step time and GPU", []string{"step", "token", "phase"}},
	{"class", "Kernel classes (GPU time)", []string{"class"}},
	{"kernel", "Top kernels (GPU time)", []string{"kernel"}},
	{"other", "Syncs, copies and launches", []string{"sync", "copy", "launch"}},
}

func (d *Diff) rows(groups []string) []Change {
	var out []Change
	for _, c := range d.Changes {
		for _, g := range groups {
			if c.Group == g {
				out = append(out, c)
			}
		}
	}
	return out
}

func (d *Diff) per() string {
	if d.Normalised == "capture" {
		return "per capture"
	}
	return "per step"
}

// md makes s inert Markdown text (package table's escaping).
func md(s string) string { return table.MarkdownText(s) }

func printMarkdown(w io.Writer, d *Diff, po *pageOpts) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# %s\n\n", md(d.Title()))
	if warn := d.Warning(); warn != "" {
		p("> **%s**\n>\n", md(warn))
		for _, m := range d.Mismatches {
			p("> - %s: base %s, test %s\n", md(m.What), md(m.Base), md(m.Test))
		}
		p("\n")
	}
	p("**Headline:** %s\n\n", md(d.Headline()))
	for _, n := range d.Notes {
		p("- %s\n", md(n))
	}
	p("- significance: the change over the pooled standard error of the per-step values (Student's t); |t| ≥ %.0f is significant, below it the change is within noise\n\n", SignificantT)
	if svg, title, alt := d.Chart(); svg != "" {
		// The chart as an image (a data: URI, no raw HTML), its text
		// alternative as a list.
		b.WriteString("![" + md(title) + "](" + report.SVGDataURI(svg) + ")\n\n")
		for _, l := range strings.Split(alt, "\n") {
			p("- %s\n", md(l))
		}
		p("\n")
	}
	for _, s := range sections {
		rows := po.sortedChanges(s.id, d.rows(s.group))
		if len(rows) == 0 {
			continue
		}
		p("## %s, %s\n\n", s.title, d.per())
		t := shownTable(changeCols)
		kernels := kernelLabels(rows)
		for i, c := range rows {
			name := table.ShownCell{Text: c.Name, Kind: table.Label}
			if c.Group == "kernel" {
				name = table.ShownCell{Text: kernels[i], Kind: table.Text}
			}
			t.Rows = append(t.Rows, []table.ShownCell{name, num(statString(c.Base, c.Unit)), num(statString(c.Test, c.Unit)), num(delta(c)), label(verdict(c))})
		}
		table.WriteMarkdown(&b, t) // a strings.Builder does not fail
		p("\n")
	}
	p("## Cross-view: nodes that grew or shrank, %s\n\n", d.per())
	if len(d.Verdicts) == 2 {
		p("- base: %s\n- test: %s\n\n", md(d.Verdicts[0]), md(d.Verdicts[1]))
	}
	if len(d.Nodes) == 0 {
		p("No node changed by more than 1%% of the base step time.\n\n")
	} else {
		t := shownTable(nodeCols)
		for _, n := range po.sortedNodes(d.Nodes) {
			mark := "▲ "
			if n.Delta < 0 {
				mark = "▼ "
			}
			path := shorten(n.Path, 160)
			if n.Sync {
				path += " ⚠️"
			}
			t.Rows = append(t.Rows, []table.ShownCell{label(strings.ToUpper(n.View)), label(path), num(ms(n.Base)), num(ms(n.Test)), num(mark + ms(n.Delta))})
		}
		table.WriteMarkdown(&b, t) // a strings.Builder does not fail
		p("\n")
	}
	p("## Findings: resolved, new, persisting\n\n")
	if len(d.Findings) == 0 {
		p("Neither trace has a finding.\n\n")
	}
	for _, f := range d.Findings {
		p("- %s\n", md(findingLine(f)))
	}
	if len(d.Findings) > 0 {
		p("\n")
	}
	if len(d.Gaps) > 0 {
		p("## Evidence gaps\n\n")
		for _, g := range d.Gaps {
			p("- %s\n", md(g))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// findingLine is one matched finding in one line, with its rank: the base
// rank, and the test rank too where the pair's numbers differ.
func findingLine(f FindingMatch) string {
	mark := map[string]string{Resolved: "✅ RESOLVED", New: "🔴 NEW", Persisting: "🟡 PERSISTING"}[f.Status]
	where := "all ranks"
	if f.Rank >= 0 {
		where = fmt.Sprintf("rank %d", f.Rank)
		if f.Test != nil && f.Test.Rank >= 0 && f.Test.Rank != f.Rank {
			// Paired ranks of other numbers: the test's finding is its own
			// rank's, matched by the base rank it is compared with.
			where = fmt.Sprintf("base rank %d, test rank %d", f.Rank, f.Test.Rank)
		}
	}
	if f.Phase != "" {
		where += ", phase " + f.Phase
	}
	var title string
	switch {
	case f.Test != nil && f.Status == New:
		title = fmt.Sprintf("%s (%s, %s)", f.Test.Title, f.Test.Severity, f.Test.Status)
	case f.Base != nil:
		title = fmt.Sprintf("%s (%s, %s)", f.Base.Title, f.Base.Severity, f.Base.Status)
	}
	s := fmt.Sprintf("%s %s [%s]: %s", mark, f.Rule, where, title)
	if f.Note != "" {
		s += "; " + f.Note
	}
	return s
}

// shorten shortens a name in the middle (package table's rule).
func shorten(s string, n int) string { return table.ShortenMiddle(s, n) }

// kernelLabels names the kernels among rows as the report's charts do
// (report.KernelLabels, at most 90 characters): two kernels never read
// alike. Rows of other groups get "".
func kernelLabels(rows []Change) []string {
	var names []string
	var at []int
	for i, c := range rows {
		if c.Group == "kernel" {
			names = append(names, c.Name)
			at = append(at, i)
		}
	}
	out := make([]string, len(rows))
	for j, l := range report.KernelLabels(names, 90) {
		out[at[j]] = l
	}
	return out
}

// shownTable is an empty Markdown table with these columns; the base,
// test and change columns hold numbers (right-aligned).
func shownTable(cols []string) *table.Shown {
	t := &table.Shown{}
	for _, c := range cols {
		t.Columns = append(t.Columns, table.ShownColumn{Name: c, Header: c, Right: c == "base" || c == "test" || c == "change"})
	}
	return t
}

func num(s string) table.ShownCell   { return table.ShownCell{Text: s, Kind: table.Numeric} }
func label(s string) table.ShownCell { return table.ShownCell{Text: s, Kind: table.Label} }

// printHTML writes the fragment; po, when not nil, adds the page's
// controls and sort buttons and applies the view's sort and unfolding.
func printHTML(w io.Writer, d *Diff, po *pageOpts) error {
	var b strings.Builder
	e := table.EscapeHTML
	p := func(s ...string) {
		for _, x := range s {
			b.WriteString(x)
		}
	}
	p(`<div class="tb-diff">`, "\n<h1>", e(d.Title()), "</h1>\n")
	if warn := d.Warning(); warn != "" {
		p(`<div class="tb-issue tb-diff-warn" role="alert"><p><strong>`, e(warn), "</strong></p>\n<ul>")
		for _, m := range d.Mismatches {
			p("<li>", e(m.What), ": base <b>", e(m.Base), "</b>, test <b>", e(m.Test), "</b></li>")
		}
		p("</ul></div>\n")
	}
	po.controlsHTML(&b)
	p("<p><strong>Headline:</strong> ", e(d.Headline()), "</p>\n<ul>")
	for _, n := range d.Notes {
		p("<li>", e(n), "</li>")
	}
	p("<li>", e(fmt.Sprintf("significance: the change over the pooled standard error of the per-step values (Student's t); |t| ≥ %.0f is significant, below it the change is within noise", SignificantT)), "</li></ul>\n")
	// The chart's SVG is package chart's: every string in it is escaped.
	if svg, _, _ := d.Chart(); svg != "" {
		p(`<figure class="tb-chart" data-tb-chart="diff">`, "\n", svg, "</figure>\n")
	}
	for _, s := range sections {
		rows := po.sortedChanges(s.id, d.rows(s.group))
		if len(rows) == 0 {
			continue
		}
		p("<h2>", e(s.title+", "+d.per()), "</h2>\n", `<table class="tb-table"`, po.tableAttr(s.id), `><thead><tr>`, po.headers(s.id, changeCols), "</tr></thead><tbody>", "\n")
		kernels := kernelLabels(rows)
		for i, c := range rows {
			name := e(c.Name)
			if c.Group == "kernel" {
				name = `<code class="tb-kernel" title="` + e(c.Name) + `">` + e(kernels[i]) + "</code>"
			}
			p("<tr><td>", name, `</td><td class="tb-num">`, e(statString(c.Base, c.Unit)), `</td><td class="tb-num">`, e(statString(c.Test, c.Unit)),
				`</td><td class="tb-num">`, e(delta(c)), "</td><td>", e(verdict(c)), "</td></tr>\n")
		}
		p("</tbody></table>\n")
	}
	p("<h2>", e("Cross-view: nodes that grew or shrank, "+d.per()), "</h2>\n")
	if len(d.Verdicts) == 2 {
		p("<ul><li>base: ", e(d.Verdicts[0]), "</li><li>test: ", e(d.Verdicts[1]), "</li></ul>\n")
	}
	if len(d.Nodes) == 0 {
		p("<p>No node changed by more than 1% of the base step time.</p>\n")
	} else {
		p(`<table class="tb-table"`, po.tableAttr("nodes"), `><thead><tr>`, po.headers("nodes", nodeCols), "</tr></thead><tbody>", "\n")
		for _, n := range po.sortedNodes(d.Nodes) {
			mark := "▲ "
			if n.Delta < 0 {
				mark = "▼ "
			}
			sync := ""
			if n.Sync {
				sync = ` <span class="tb-sync">⚠️ sync</span>`
			}
			p("<tr><td>", strings.ToUpper(n.View), `</td><td title="`, e(n.Path), `">`, e(shorten(n.Path, 160)), sync, `</td><td class="tb-num">`, e(ms(n.Base)),
				`</td><td class="tb-num">`, e(ms(n.Test)), `</td><td class="tb-num">`, e(mark+ms(n.Delta)), "</td></tr>\n")
		}
		p("</tbody></table>\n")
	}
	if d.Views[0] != nil && d.Views[1] != nil {
		var bv, tv strings.Builder
		if err := crossview.Write(&bv, d.Views[0], crossview.FormatHTML, ""); err != nil {
			return err
		}
		if err := crossview.Write(&tv, d.Views[1], crossview.FormatHTML, ""); err != nil {
			return err
		}
		p("<details", po.detailsAttr("sides"), "><summary>The two cross-views side by side</summary>\n", `<table class="tb-diff-side"><thead><tr><th>base: `, e(d.Base), "</th><th>test: ", e(d.Test),
			"</th></tr></thead><tbody><tr><td>\n", bv.String(), "</td><td>\n", tv.String(), "</td></tr></tbody></table></details>\n")
	}
	p("<h2>Findings: resolved, new, persisting</h2>\n")
	if len(d.Findings) == 0 {
		p("<p>Neither trace has a finding.</p>\n")
	} else {
		p("<ul>")
		for _, f := range d.Findings {
			p(`<li class="tb-diff-`, f.Status, `">`, e(findingLine(f)), "</li>\n")
		}
		p("</ul>\n")
	}
	if len(d.Gaps) > 0 {
		p("<h2>Evidence gaps</h2>\n<ul>")
		for _, g := range d.Gaps {
			p("<li>", e(g), "</li>")
		}
		p("</ul>\n")
	}
	p("</div>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// Style is the diff page's style sheet: the report's and the diff's own
// rules. The offline pages inline it and hash it in their CSP.
const Style = report.Style + pageStyle

// pageStyle adds the diff's own rules to the report's style sheet.
const pageStyle = `.tb-diff-warn{border:2px solid #c62828;background:#fdecea;padding:.4em 1em;margin:1em 0}.tb-diff-resolved{color:#1b5e20}.tb-diff-new{color:#b71c1c}.tb-diff-side{width:100%;table-layout:fixed}.tb-diff-side td{vertical-align:top;overflow-x:auto}`
