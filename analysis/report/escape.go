package report

import (
	"html"
	"strconv"
	"strings"
)

// mdText makes s inert Markdown text: line breaks become spaces, every
// character CommonMark or GFM could read as inline markup — emphasis, code,
// links and images (their brackets), raw HTML, entities, table pipes,
// strikethrough — is backslash-escaped, and a leading character that could
// open a block is escaped too. Raw HTML therefore never passes through:
// `<script>` renders as the text <script>.
func mdText(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		switch r {
		case '\n', '\r', '\t':
			b.WriteByte(' ')
		case '\\', '`', '*', '_', '[', ']', '<', '>', '|', '&', '~':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			if r < 0x20 || r == 0x7f {
				continue
			}
			b.WriteRune(r)
		}
	}
	out := b.String()
	// A line must not open a block: a heading, a list item, a numbered
	// item, a setext underline.
	t := strings.TrimLeft(out, " ")
	pad := strings.Repeat(" ", len(out)-len(t))
	spaceAfter := func(i int) bool { return i >= len(t) || t[i] == ' ' }
	switch {
	case t == "":
	case (t[0] == '#' || t[0] == '-' || t[0] == '+') && spaceAfter(1),
		t[0] == '#' && strings.TrimLeft(t, "#") != t && spaceAfter(len(t)-len(strings.TrimLeft(t, "#"))),
		strings.Trim(t, "=") == "":
		return pad + "\\" + t
	default:
		i := 0
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
		}
		if i > 0 && i < len(t) && (t[i] == '.' || t[i] == ')') && spaceAfter(i+1) {
			return pad + t[:i] + "\\" + t[i:]
		}
	}
	return out
}

// mdCode renders s as an inline code span: contents are literal in
// Markdown (no HTML, no emphasis). The fence is one backtick longer than the
// longest run inside. A pipe is escaped so it cannot split a table cell.
func mdCode(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
	s = strings.ReplaceAll(s, "|", `\|`)
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || s == "" {
		pad = " "
	}
	return fence + pad + s + pad + fence
}

// mdFence returns a code fence longer than any backtick run in text.
func mdFence(text string) string {
	n := longestRun(text, '`') + 1
	if n < 3 {
		n = 3
	}
	return strings.Repeat("`", n)
}

func longestRun(s string, c byte) int {
	best, cur := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			cur++
			if cur > best {
				best = cur
			}
		} else {
			cur = 0
		}
	}
	return best
}

// oneLine drops line breaks and control characters (for code blocks, where
// escaping is not needed but a name must stay on its line).
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
}

// esc escapes text for HTML element content and quoted attribute values.
func esc(s string) string { return html.EscapeString(oneLine(s)) }

// fmtMs formats nanoseconds as milliseconds with 3 decimals: "12.345 ms".
func fmtMs(ns int64) string {
	return strconv.FormatFloat(float64(ns)/1e6, 'f', 3, 64) + " ms"
}

// fmtPct formats a share 0..1 as a percentage with one decimal: "12.3%".
func fmtPct(share float64) string {
	return strconv.FormatFloat(share*100, 'f', 1, 64) + "%"
}

// fmtFloat formats a threshold or a cell value without trailing zeros.
func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// fmtInt formats an integer with thin grouping commas: 1,234,567.
func fmtInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// cellText formats one table cell value (nil, bool, int64, float64, string)
// with the column's unit.
func cellText(v any, unit string) string {
	unit = normUnit(unit)
	switch x := v.(type) {
	case nil:
		return ""
	case bool:
		return strconv.FormatBool(x)
	case int64:
		if unit == "ns" {
			return fmtMs(x)
		}
		return fmtInt(x)
	case int:
		return cellText(int64(x), unit)
	case int32:
		return cellText(int64(x), unit)
	case uint64:
		return cellText(int64(x), unit)
	case uint32:
		return cellText(int64(x), unit)
	case int8:
		return cellText(int64(x), unit)
	case uint8:
		return cellText(int64(x), unit)
	case int16:
		return cellText(int64(x), unit)
	case uint16:
		return cellText(int64(x), unit)
	case float64:
		switch unit {
		case "share", "ratio":
			return fmtPct(x)
		case "pct":
			return strconv.FormatFloat(x, 'f', 1, 64) + "%"
		case "ns":
			return fmtMs(int64(x))
		}
		return strconv.FormatFloat(x, 'f', 3, 64)
	case float32:
		return cellText(float64(x), unit)
	case string:
		return x
	}
	return "?"
}

// normUnit maps the presets' unit words (DURATION_NS, TIMESTAMP_NS, COUNT,
// BYTES, ...) to the few the printers know: ns, share, pct, hist, or "".
func normUnit(u string) string {
	switch strings.ToLower(u) {
	case "ns", "duration_ns", "timestamp_ns":
		return "ns"
	case "share", "ratio", "fraction":
		return "share"
	case "pct", "percent":
		return "pct"
	case "hist":
		return "hist"
	case "bytes":
		return "bytes"
	}
	return ""
}

// ranksText says how many ranks and which: "1 (rank 0)", "8 (0–7)",
// "3 (0, 2, 5)".
func ranksText(ranks []int) string {
	if len(ranks) == 0 {
		return "unknown"
	}
	if len(ranks) == 1 {
		return "1 (rank " + strconv.Itoa(ranks[0]) + ")"
	}
	var b strings.Builder
	for i := 0; i < len(ranks); {
		j := i
		for j+1 < len(ranks) && ranks[j+1] == ranks[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(ranks[i]))
		if j > i {
			b.WriteString("–")
			b.WriteString(strconv.Itoa(ranks[j]))
		}
		i = j + 1
	}
	return strconv.Itoa(len(ranks)) + " (" + b.String() + ")"
}
