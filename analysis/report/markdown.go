package report

import (
	"bufio"
	"encoding/base64"
	"io"
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/table"
)

// printMarkdown writes d as the Markdown report (the notebook's text/markdown
// output and --md). Names from traces go through mdText or mdCode, or sit
// inside a fenced code block, so no raw HTML passes through.
func printMarkdown(w io.Writer, d *Doc) error {
	bw := bufio.NewWriter(w)
	p := func(ss ...string) {
		for _, s := range ss {
			bw.WriteString(s)
		}
	}
	p("# ", mdText(d.Title), "\n\n")
	if d.Scope != "" {
		p("_Scope: ", mdText(d.Scope), "_\n\n")
	}

	p("## Executive Summary\n\n")
	for _, s := range d.Summary {
		p(mdText(s), "\n\n")
	}
	mdCharts(p, d.Charts, d.ChartsNote)

	p("## Trace Metadata\n\n")
	for _, t := range d.Traces {
		p("- Trace file: ", mdCode(t.File), "\n")
		p("- Merged trace: ", yesNo(t.Merged), "\n")
		p("- Event count: ", fmtInt(t.Events), "\n")
		p("- Time span: ", fmtMs(t.SpanNs), "\n")
		p("- Ranks: ", ranksText(t.Ranks), "\n")
		p("- Producer: ", mdText(producerText(t.Producer)), "\n")
		if t.Device != "" {
			p("- Device: ", mdText(t.Device), "\n")
		}
		p("- Capture settings: ", mdText(strings.Join(orNone(t.Capture), "; ")), "\n\n")
	}

	if len(d.Capture) > 0 {
		p("**Capture quality** (what the rules leave out of the slice they judge)\n\n")
		for _, c := range d.Capture {
			p("- ", mdText(c), "\n")
		}
		p("\n")
	}

	if d.GPUTree != nil {
		p("**Observed Call Tree -- GPU profile** (", mdText(d.GPUTree.Where), ")\n\n")
		var tb strings.Builder
		treeText(&tb, &d.GPUTree.Root, "", true, true)
		text := tb.String()
		fence := mdFence(text)
		p(fence, "text\n", text, fence, "\n\n")
	} else {
		p("**Observed Call Tree -- GPU profile**: not available (", mdText(d.NoTree), ").\n\n")
	}
	p("**CPU cross-check**\n\n", mdText(orDash(d.CPUCheck)), "\n\n")

	p("**Key Findings**\n\n")
	for _, s := range d.KeyFindings {
		p(mdText(s), "\n\n")
	}
	p("---\n\n## 🔴 Top issues (max 3, in priority order)\n\n")
	if len(d.Critical) == 0 {
		p("No critical issue: nothing in this slice crosses a critical threshold.\n\n")
	}
	for i, is := range d.Critical {
		p("### ", strconv.Itoa(i+1), ". ", mdText(is.Title), "\n\n")
		p(mdText(is.Observation), " ", statusText(is.Confirmed), "\n\n")
		p("**Fix:** ", mdText(is.Fix), "\n")
		p(mdSnippet(is.Snippet))
		if len(is.Evidence) > 0 {
			p("\n_Evidence: ", mdText(strings.Join(is.Evidence, ", ")), "_\n")
		}
		if is.Window != nil {
			p("\n", mdWindow(is.Window), "\n")
		}
		p("\n")
		if is.Timeline != nil {
			mdChart(p, *is.Timeline)
		}
	}
	p("---\n\n## 🟡 To consider after the above (max 2)\n\n")
	if len(d.FollowUps) == 0 {
		p("- Nothing further surfaced.\n")
	}
	for _, is := range d.FollowUps {
		p("- ", mdText(is.Observation), " ", statusText(is.Confirmed), " -- **Fix:** ", mdText(is.Fix))
		if is.Window != nil {
			p(" -- ", mdWindow(is.Window))
		}
		p("\n")
	}
	// The follow-ups' timelines come after their list, which an image
	// would break.
	sep := "\n"
	for _, is := range d.FollowUps {
		if is.Timeline != nil {
			p(sep)
			sep = ""
			mdChart(p, *is.Timeline)
		}
	}
	p("\n---\n\n**Expected Impact**\n\n", mdText(orDash(d.Impact)), "\n\n")

	p("## Confirmed evidence\n\n")
	list(p, d.Confirmed, "Nothing is confirmed by a mechanism in this slice.")
	p("## Hypotheses\n\n")
	list(p, d.Hypotheses, "None.")

	p("## Evidence\n\n")
	mdEvidence(p, d.Evidence)
	if len(d.Tables) > 0 {
		p("### Preset tables\n\n")
	}
	for i := range d.Tables {
		mdTable(p, &d.Tables[i], d.OneTrace)
	}
	if len(d.Tables) == 0 {
		p("No evidence table in this bundle.\n\n")
	}

	p("## Perfetto Inspection Guide\n\n")
	if len(d.Perfetto) == 0 {
		p("- Open the trace in https://ui.perfetto.dev and start from the busiest GPU stream (in a trace without GPU work, the busiest host thread).\n")
	}
	for _, in := range d.Perfetto {
		p("- ", mdText(in.What), ": process ", mdCode(in.Process), ", thread ", mdCode(in.Thread),
			", ", fmtMs(in.StartNs), " .. ", fmtMs(in.EndNs), " from the trace start\n")
	}
	p("\n## Evidence Gaps\n\n")
	list(p, d.Gaps, "None recorded.")
	p("## Next lever\n\n", mdText(orDash(d.NextLever)), "\n")
	p(mdSnippet(d.NextLeverCmd))
	return bw.Flush()
}

// mdCharts writes the Charts section, its note first when it has one,
// then each chart as an image whose source is a data: URI of its SVG
// (GitHub, nbconvert and notebooks show it; no raw HTML), then its text
// alternative as a list. No section without a chart.
func mdCharts(p func(...string), charts []Chart, note string) {
	if len(charts) == 0 {
		return
	}
	p("## Charts\n\n")
	if note != "" {
		p("_", mdText(note), "_\n\n")
	}
	for _, c := range charts {
		mdChart(p, c)
	}
}

// mdChart writes one chart: its image, then its text alternative as a list.
func mdChart(p func(...string), c Chart) {
	p("![", mdText(c.Title), "](", SVGDataURI(c.SVG), ")\n\n")
	var alt []string
	for _, l := range strings.Split(c.Alt, "\n") {
		if strings.TrimSpace(l) != "" {
			alt = append(alt, l)
		}
	}
	list(p, alt, "No numbers.")
}

// SVGDataURI returns svg as a base64 data: URI (image/svg+xml).
func SVGDataURI(svg string) string {
	return "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(svg))
}

func list(p func(...string), items []string, empty string) {
	if len(items) == 0 {
		p("- ", empty, "\n\n")
		return
	}
	for _, s := range items {
		p("- ", mdText(s), "\n")
	}
	p("\n")
}

// mdEvidence writes the Evidence summary: Area | Evidence | Interpretation.
func mdEvidence(p func(...string), rows []EvidenceRow) {
	if len(rows) == 0 {
		return
	}
	t := &table.Shown{Columns: []table.ShownColumn{{Name: "area", Header: "Area"}, {Name: "evidence", Header: "Evidence"}, {Name: "interpretation", Header: "Interpretation"}}}
	for _, r := range rows {
		t.Rows = append(t.Rows, []table.ShownCell{{Text: r.Area, Kind: table.Label}, {Text: r.Evidence, Kind: table.Label}, {Text: r.Interpretation, Kind: table.Label}})
	}
	var b strings.Builder
	table.WriteMarkdown(&b, t) // a strings.Builder does not fail
	p(b.String(), "\n")
}

// mdTable writes one preset table with package table's writer: its name
// and row count, then the table as a reader sees it (table.Present).
func mdTable(p func(...string), t *table.Table, oneTrace bool) {
	p("**", mdText(t.Name), "**")
	if t.Total > int64(len(t.Rows)) {
		p(" (", fmtInt(int64(len(t.Rows))), " of ", fmtInt(t.Total), " rows)")
	}
	p("\n\n")
	var b strings.Builder
	table.WriteMarkdown(&b, table.Present(t, table.Options{OneTrace: oneTrace})) // a strings.Builder does not fail
	p(b.String(), "\n")
}

// treeText draws the tree with ├── / └── and the `→ kernel` leaves; sync
// frames get ⚠️. Each frame and kernel name is on one line and as
// %crossview's text tree prints it (crossview.TextName: a name of
// hundreds of characters shortened in the middle), and so is a folded
// chain of frames (crossview.FoldChain: its first frame, how many lie
// between, the node's own); the HTML report keeps names and chains whole.
// Inside a code block they are literal.
func treeText(b *strings.Builder, n *Node, prefix string, root, last bool) {
	parts := strings.Split(oneLine(n.Name), " › ")
	for i, p := range parts {
		parts[i] = crossview.TextName(p)
	}
	line := crossview.FoldChain(parts, " › ")
	if n.Kernel != "" {
		if line != "" {
			line += "  "
		}
		line += "→ " + crossview.TextName(oneLine(n.Kernel))
	}
	line += "  [" + fmtPct(n.Share) + ", " + fmtMs(n.GPUNs) + "]"
	if n.Sync {
		line += "  ⚠️"
	}
	childPrefix := prefix
	if root {
		b.WriteString(line + "\n")
	} else {
		conn, cont := "├── ", "│   "
		if last {
			conn, cont = "└── ", "    "
		}
		b.WriteString(prefix + conn + line + "\n")
		childPrefix = prefix + cont
	}
	for i := range n.Children {
		treeText(b, &n.Children[i], childPrefix, false, i == len(n.Children)-1)
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func orNone(ss []string) []string {
	if len(ss) == 0 {
		return []string{"none recorded"}
	}
	return ss
}

func statusText(confirmed bool) string {
	if confirmed {
		return "(confirmed)"
	}
	return "(hypothesis)"
}

// mdSnippet is a fenced code block of s after a blank line, "" for none.
func mdSnippet(s string) string {
	if s == "" {
		return ""
	}
	fence := mdFence(s)
	return "\n" + fence + "\n" + strings.TrimRight(s, "\n") + "\n" + fence + "\n"
}
