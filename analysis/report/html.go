package report

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/table"
)

// Style is the report's style sheet. The single-file report inlines it and
// lists its hash in the Content-Security-Policy.
const Style = `body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2330;background:#fff}
.tb-page{max-width:1100px;margin:0 auto;padding:16px 24px}
.tb-report h1{font-size:1.6em;margin:.3em 0}.tb-report h2{font-size:1.25em;margin-top:1.6em;border-bottom:1px solid #dde}
.tb-scope{color:#555}.tb-status{padding:6px 10px;border-radius:4px;background:#f4f4f8;margin:8px 0}
.tb-status.tb-failed{background:#fde8e8;color:#8a1010;font-weight:bold}
.tb-controls{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-end;padding:8px;background:#f6f7fb;border:1px solid #e2e4ee;border-radius:6px}
[data-viewer-state=static] .tb-controls,[data-viewer-state=failed] .tb-controls{opacity:.45;pointer-events:none}
.tb-controls label{display:flex;flex-direction:column;font-size:12px;color:#444}
.tb-controls input{width:7em}.tb-knobs{flex-basis:100%}.tb-knobs label{display:inline-flex;margin:4px 10px 4px 0}
.tb-tree{font:12px/1.5 ui-monospace,SFMono-Regular,Menlo,monospace;overflow-wrap:anywhere}
.tb-tree ul{list-style:none;margin:0;padding-left:1.4em;border-left:1px dotted #bbb}
.tb-tree summary{cursor:pointer}.tb-kernel{color:#6a3fb0}.tb-sync{color:#b00000;font-weight:bold}
.tb-share{color:#666}
.tb-scroll{overflow-x:auto}
table.tb-table{border-collapse:collapse;margin:8px 0 16px;font-size:12px}
.tb-table th,.tb-table td{border:1px solid #dde;padding:3px 6px;text-align:left;vertical-align:top}
.tb-table td.tb-num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}.tb-table th.tb-num{text-align:right}
.tb-summary th[scope=row]{white-space:nowrap}.tb-summary td{min-width:14em}.tb-summary tr.tb-gap td{color:#8a5a00}
.tb-presets>summary{cursor:pointer;font-weight:bold;margin:8px 0}
.tb-table th button{font:inherit;font-weight:bold;background:none;border:0;padding:0;cursor:pointer}
.tb-table code,.tb-report code{font-size:12px;overflow-wrap:anywhere}.tb-table code{overflow-wrap:normal}
.tb-issue{border-left:4px solid #d33;padding:2px 12px;margin:10px 0}
.tb-lead{font-size:15px;border-left:4px solid #4a6fa5;background:#f3f6fb;padding:8px 12px;margin:10px 0}
.tb-fix{margin-top:10px}.tb-tag{font-size:11px;color:#555}
pre.tb-snippet{background:#f4f4f4;padding:6px 8px;white-space:pre-wrap}pre.tb-snippet code{word-break:normal;overflow-wrap:anywhere}
.tb-chart{margin:8px 0 18px}.tb-chart svg{display:block;max-width:100%;height:auto}
`

// htmlSnippet is a code block of s, "" for none.
func htmlSnippet(s string) string {
	if s == "" {
		return ""
	}
	return `<pre class="tb-snippet"><code>` + escBlock(strings.TrimRight(s, "\n")) + "</code></pre>\n"
}

// printHTMLPage writes d as a complete static HTML page: the fragment in a
// page that runs no script (the Content-Security-Policy allows none).
func printHTMLPage(w io.Writer, d *Doc) error {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
	b.WriteString(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">` + "\n")
	b.WriteString("<title>" + esc(d.Title) + "</title>\n<style>" + Style + "</style></head>\n<body><div class=\"tb-page\">\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if err := printHTML(w, d); err != nil {
		return err
	}
	_, err := io.WriteString(w, "</div></body></html>\n")
	return err
}

// printHTML writes d as the report's HTML fragment: what the native code
// writes into the static page and what the viewer module re-renders for a
// new view. Every string from the bundle goes through esc.
func printHTML(w io.Writer, d *Doc) error {
	bw := bufio.NewWriter(w)
	p := func(ss ...string) {
		for _, s := range ss {
			bw.WriteString(s)
		}
	}
	p(`<div class="tb-report">`, "\n<h1>", esc(d.Title), "</h1>\n")
	if d.Scope != "" {
		p(`<p class="tb-scope">Scope: `, esc(d.Scope), "</p>\n")
	}
	htmlControls(p, &d.Controls)

	p(`<h2 id="tb-summary">Executive Summary</h2>`, "\n")
	for i, s := range d.Summary {
		if i == 0 {
			// The verdict's sentence first, set apart: what a reader
			// opens the report for.
			p(`<p class="tb-lead">`, esc(s), "</p>\n")
			continue
		}
		p("<p>", esc(s), "</p>\n")
	}
	htmlCharts(p, d.Charts, d.ChartsNote)

	p(`<h2 id="tb-meta">Trace Metadata</h2>`, "\n")
	for _, t := range d.Traces {
		p("<ul>\n<li>Trace file: <code>", esc(t.File), "</code></li>\n")
		p("<li>Merged trace: ", yesNo(t.Merged), "</li>\n")
		p("<li>Event count: ", fmtInt(t.Events), "</li>\n")
		p("<li>Time span: ", fmtMs(t.SpanNs), "</li>\n")
		p("<li>Ranks: ", esc(ranksText(t.Ranks)), "</li>\n")
		p("<li>Producer: ", esc(producerText(t.Producer)), "</li>\n")
		if t.Device != "" {
			p("<li>Device: ", esc(t.Device), "</li>\n")
		}
		p("<li>Capture settings: ", esc(strings.Join(orNone(t.Capture), "; ")), "</li>\n</ul>\n")
	}

	if len(d.Capture) > 0 {
		p(`<h2 id="tb-capture">Capture quality</h2>`, "\n<p>What the rules leave out of the slice they judge.</p>\n<ul>\n")
		for _, c := range d.Capture {
			p("<li>", esc(c), "</li>\n")
		}
		p("</ul>\n")
	}

	p(`<h2 id="tb-tree">Observed Call Tree — GPU profile</h2>`, "\n")
	if d.GPUTree != nil {
		open := map[string]bool{}
		for _, id := range d.Controls.Open {
			open[id] = true
		}
		p(`<p class="tb-scope">`, esc(d.GPUTree.Where), "</p>\n")
		p(`<div class="tb-tree">`, "\n")
		htmlNode(p, &d.GPUTree.Root, open)
		p("</div>\n")
	} else {
		p("<p>Not available: ", esc(d.NoTree), ".</p>\n")
	}
	p(`<h2 id="tb-cpu">CPU cross-check</h2>`, "\n<p>", esc(orDash(d.CPUCheck)), "</p>\n")

	p(`<h2 id="tb-findings">Key Findings</h2>`, "\n")
	for _, s := range d.KeyFindings {
		p("<p>", esc(s), "</p>\n")
	}
	p(`<h2 id="tb-critical">🔴 Top issues (max 3, in priority order)</h2>`, "\n")
	if len(d.Critical) == 0 {
		p("<p>No critical issue: nothing in this slice crosses a critical threshold.</p>\n")
	}
	for i, is := range d.Critical {
		p(`<div class="tb-issue" data-tb-issue="`, esc(is.ID), `">`, "\n")
		p("<h3>", strconv.Itoa(i+1), ". ", esc(is.Title), "</h3>\n")
		p("<p>", esc(is.Observation), ` <span class="tb-tag">`, statusText(is.Confirmed), "</span></p>\n")
		p(`<p class="tb-fix"><strong>Fix:</strong> `, esc(is.Fix), "</p>\n")
		p(htmlSnippet(is.Snippet))
		if len(is.Evidence) > 0 {
			p(`<p class="tb-tag">Evidence: `, esc(strings.Join(is.Evidence, ", ")), "</p>\n")
		}
		if is.Window != nil {
			p(`<p class="tb-tag">`)
			htmlWindow(p, is.Window)
			p("</p>\n")
		}
		htmlChart(p, is.Timeline)
		p("</div>\n")
	}
	p(`<h2 id="tb-followups">🟡 To consider after the above (max 2)</h2>`, "\n<ul>\n")
	if len(d.FollowUps) == 0 {
		p("<li>Nothing further surfaced.</li>\n")
	}
	for _, is := range d.FollowUps {
		p(`<li data-tb-issue="`, esc(is.ID), `">`, esc(is.Observation), ` <span class="tb-tag">`, statusText(is.Confirmed), "</span> — <strong>Fix:</strong> ", esc(is.Fix))
		if is.Window != nil {
			p(` <br><span class="tb-tag">`)
			htmlWindow(p, is.Window)
			p("</span>")
		}
		htmlChart(p, is.Timeline)
		p("</li>\n")
	}
	p("</ul>\n")
	p(`<h2 id="tb-impact">Expected Impact</h2>`, "\n<p>", esc(orDash(d.Impact)), "</p>\n")

	p(`<h2 id="tb-confirmed">Confirmed evidence</h2>`, "\n")
	htmlList(p, d.Confirmed, "Nothing is confirmed by a mechanism in this slice.")
	p(`<h2 id="tb-hypotheses">Hypotheses</h2>`, "\n")
	htmlList(p, d.Hypotheses, "None.")

	p(`<h2 id="tb-evidence">Evidence</h2>`, "\n")
	htmlEvidence(p, d.Evidence)
	if len(d.Tables) == 0 {
		p("<p>No evidence table in this bundle.</p>\n")
	} else {
		o := ""
		if containsString(d.Controls.Open, evidenceTablesID) {
			o = " open"
		}
		p(`<details class="tb-presets" data-tb-node="`, evidenceTablesID, `"`, o, "><summary>The preset tables (", strconv.Itoa(len(d.Tables)), ")</summary>\n")
		for i := range d.Tables {
			htmlTable(p, &d.Tables[i], d.Controls.Sort[d.Tables[i].Name], d.OneTrace)
		}
		p("</details>\n")
	}

	p(`<h2 id="tb-perfetto">Perfetto Inspection Guide</h2>`, "\n<ul>\n")
	if len(d.Perfetto) == 0 {
		p("<li>Open the trace in ui.perfetto.dev and start from the busiest GPU stream (in a trace without GPU work, the busiest host thread).</li>\n")
	}
	for _, in := range d.Perfetto {
		p("<li>", esc(in.What), ": process <code>", esc(in.Process), "</code>, thread <code>", esc(in.Thread),
			"</code>, ", fmtMs(in.StartNs), " .. ", fmtMs(in.EndNs), " from the trace start</li>\n")
	}
	p("</ul>\n")
	p(`<h2 id="tb-gaps">Evidence Gaps</h2>`, "\n")
	htmlList(p, d.Gaps, "None recorded.")
	p(`<h2 id="tb-next">Next lever</h2>`, "\n<p>", esc(orDash(d.NextLever)), "</p>\n")
	p(htmlSnippet(d.NextLeverCmd))
	p("</div>\n")
	return bw.Flush()
}

// htmlCharts writes the Charts section, its note first when it has one,
// then each chart's SVG inline. The SVG is package chart's, in which every
// string is escaped, so it is the report's own markup, not the trace's. No
// section without a chart.
func htmlCharts(p func(...string), charts []Chart, note string) {
	if len(charts) == 0 {
		return
	}
	p(`<h2 id="tb-charts">Charts</h2>`, "\n")
	if note != "" {
		p(`<p class="tb-scope">`, esc(note), "</p>\n")
	}
	for i := range charts {
		htmlChart(p, &charts[i])
	}
}

// htmlChart writes one chart's SVG inline in a figure; nothing for nil.
func htmlChart(p func(...string), c *Chart) {
	if c == nil {
		return
	}
	p(`<figure class="tb-chart" data-tb-chart="`, esc(c.ID), `">`, "\n", c.SVG, "</figure>\n")
}

func htmlControls(p func(...string), c *Controls) {
	p(`<form class="tb-controls" id="tb-controls" autocomplete="off">`, "\n")
	p(`<label>Rank<select data-tb="rank"><option value="">all</option>`)
	for _, r := range c.Ranks {
		s := strconv.Itoa(r)
		sel := ""
		if c.HasRank && c.Rank == r {
			sel = " selected"
		}
		p(`<option value="`, s, `"`, sel, ">", s, "</option>")
	}
	p("</select></label>\n")
	p(`<label>Phase<select data-tb="phase"><option value="">all</option>`)
	for _, ph := range c.Phases {
		sel := ""
		if c.Phase == ph {
			sel = " selected"
		}
		p(`<option value="`, esc(ph), `"`, sel, ">", esc(ph), "</option>")
	}
	p("</select></label>\n")
	if len(c.Rules) > 0 {
		o := ""
		for _, id := range c.Open {
			if id == "knobs" {
				o = " open"
			}
		}
		p(`<details class="tb-knobs" data-tb-node="knobs"`, o, "><summary>Rule thresholds (", strconv.Itoa(len(c.Rules)), ")</summary>\n")
		for _, k := range c.Rules {
			p(`<label title="`, esc(k.Doc), ` (default `, fmtFloat(k.Default), `)">`, esc(k.Name))
			if k.Unit != "" {
				p(" (", esc(k.Unit), ")")
			}
			p(`<input type="number" step="any" data-tb-rule="`, esc(k.Rule), `" value="`, fmtFloat(k.Value), `"></label>`, "\n")
		}
		p("</details>\n")
	}
	p("</form>\n")
}

func htmlNode(p func(...string), n *Node, open map[string]bool) {
	label := func() {
		p(esc(n.Name))
		if n.Kernel != "" {
			if n.Name != "" {
				p(" ")
			}
			p(`<span class="tb-kernel">→ `, esc(n.Kernel), "</span>")
		}
		p(` <span class="tb-share">[`, fmtPct(n.Share), ", ", fmtMs(n.GPUNs), "]</span>")
		if n.Sync {
			p(` <span class="tb-sync">⚠️ sync</span>`)
		}
	}
	if len(n.Children) == 0 {
		p(`<div class="tb-leaf">`)
		label()
		p("</div>\n")
		return
	}
	o := ""
	if open[n.ID] {
		o = " open"
	}
	p(`<details data-tb-node="`, esc(n.ID), `"`, o, "><summary>")
	label()
	p("</summary>\n<ul>\n")
	for i := range n.Children {
		p("<li>")
		htmlNode(p, &n.Children[i], open)
		p("</li>\n")
	}
	p("</ul></details>\n")
}

func htmlList(p func(...string), items []string, empty string) {
	p("<ul>\n")
	if len(items) == 0 {
		p("<li>", empty, "</li>\n")
	}
	for _, s := range items {
		p("<li>", esc(s), "</li>\n")
	}
	p("</ul>\n")
}

// evidenceTablesID names the folded preset tables in the view's Open list.
const evidenceTablesID = "evidence-tables"

// htmlEvidence writes the Evidence summary: Area | Evidence | Interpretation.
func htmlEvidence(p func(...string), rows []EvidenceRow) {
	if len(rows) == 0 {
		return
	}
	p(`<table class="tb-table tb-summary"><thead><tr><th scope="col">Area</th><th scope="col">Evidence</th><th scope="col">Interpretation</th></tr></thead>`, "\n<tbody>\n")
	for _, r := range rows {
		cls := ""
		if r.Gap {
			cls = ` class="tb-gap"`
		}
		p("<tr", cls, `><th scope="row">`, esc(r.Area), "</th><td>", esc(r.Evidence), "</td><td>", esc(r.Interpretation), "</td></tr>\n")
	}
	p("</tbody></table>\n")
}

// htmlTable writes one preset table as a reader sees it (table.Present):
// headers with units, each a sort button; numbers right-aligned; a long
// name shortened in the middle with the whole name in its title.
func htmlTable(p func(...string), t *table.Table, sort string, oneTrace bool) {
	s := table.Present(t, table.Options{OneTrace: oneTrace})
	p(`<h3 class="tb-tablename">`, esc(t.Name))
	if s.Total > int64(len(s.Rows)) {
		p(` <span class="tb-tag">(`, fmtInt(int64(len(s.Rows))), " of ", fmtInt(s.Total), " rows)</span>")
	}
	p("</h3>\n", `<div class="tb-scroll"><table class="tb-table" data-tb-table="`, esc(t.Name), `"><thead><tr>`)
	for _, c := range s.Columns {
		mark, aria := "", ""
		switch sort {
		case c.Name:
			mark, aria = " ▲", ` aria-sort="ascending"`
		case "-" + c.Name:
			mark, aria = " ▼", ` aria-sort="descending"`
		}
		p(`<th`, aria, ` title="`, esc(c.Doc), `"`)
		if c.Right {
			p(` class="tb-num"`)
		}
		p(`><button type="button" data-tb-sort="`, esc(t.Name), `" data-tb-col="`, esc(c.Name), `">`, esc(c.Header), mark, "</button></th>")
	}
	p("</tr></thead>\n<tbody>\n")
	for _, r := range s.Rows {
		p("<tr>")
		for _, c := range r {
			switch c.Kind {
			case table.Text:
				if c.Full != "" {
					p(`<td><code title="`, esc(c.Full), `">`, esc(c.Text), "</code></td>")
				} else {
					p("<td><code>", esc(c.Text), "</code></td>")
				}
			case table.Numeric:
				p(`<td class="tb-num">`, esc(c.Text), "</td>")
			default:
				p("<td>", esc(c.Text), "</td>")
			}
		}
		p("</tr>\n")
	}
	p("</tbody></table></div>\n")
}

// escBlock escapes a multi-line snippet for a <pre> block.
func escBlock(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = esc(l)
	}
	return strings.Join(lines, "\n")
}
