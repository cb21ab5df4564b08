package report

import (
	"strconv"

	"github.com/tracebook/tracebook/analysis/table"
)

// The Markdown escaping is package table's, shared with its table writer.
var (
	mdText  = table.MarkdownText
	mdCode  = table.MarkdownCode
	mdFence = table.MarkdownFence
	oneLine = table.OneLine
)

// esc escapes text for HTML element content and quoted attribute values.
func esc(s string) string { return table.EscapeHTML(oneLine(s)) }

// The number formatters are package table's: one way to write a duration,
// a share and a count across tracebook.
var (
	fmtMs  = table.Ms[int64]
	fmtPct = table.Pct
	fmtInt = table.Int
)

// fmtFloat formats a threshold or a cache key without trailing zeros.
func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// ranksText says how many ranks and which: "1 (rank 0)", "8 (0–7)",
// "3 (0, 2, 5)".
func ranksText(ranks []int) string {
	if len(ranks) == 0 {
		return "unknown"
	}
	if len(ranks) == 1 {
		return "1 (rank " + strconv.Itoa(ranks[0]) + ")"
	}
	return strconv.Itoa(len(ranks)) + " (" + table.Runs(ranks, 0) + ")"
}
