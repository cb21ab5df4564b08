package table

import (
	"io"
	"strings"
)

// WriteMarkdown writes s as a GitHub-flavoured Markdown table: the headers,
// number columns right-aligned (---:), text from a trace in code spans
// (literal: a name never becomes markup; a shortened one keeps its "…" in
// the middle, the whole text stays in the JSON and CSV outputs), labels and
// numbers escaped (MarkdownText), a null cell empty. It is the one Markdown
// table writer: the report, the diff, `tracebook evidence --format md` and
// `tracebook query --format md` use it. A table with no column writes
// nothing.
func WriteMarkdown(w io.Writer, s *Shown) error {
	if len(s.Columns) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("|")
	for _, c := range s.Columns {
		b.WriteString(" " + MarkdownText(c.Header) + " |")
	}
	b.WriteString("\n|")
	for _, c := range s.Columns {
		if c.Right {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, r := range s.Rows {
		b.WriteString("|")
		for _, c := range r {
			b.WriteString(" " + markdownCell(c) + " |")
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func markdownCell(c ShownCell) string {
	switch {
	case c.Kind == Text && c.Text != "":
		return MarkdownCode(c.Text)
	case c.Kind == Null:
		return ""
	}
	return MarkdownText(c.Text)
}

// MarkdownText makes s inert Markdown text: line breaks become spaces, every
// character CommonMark or GFM could read as inline markup — emphasis, code,
// links and images (their brackets), raw HTML, entities, table pipes,
// strikethrough — is backslash-escaped, and a leading character that could
// open a block is escaped too. Raw HTML therefore never passes through:
// `<script>` renders as the text <script>.
func MarkdownText(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	prev := ' '
	for i, r := range s {
		if r == '_' && intraword(prev, s[i+1:]) {
			// An underscore inside a word opens no emphasis (CommonMark's
			// flanking rules): snake_case names stay as they are.
			b.WriteByte('_')
			prev = r
			continue
		}
		prev = r
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

// intraword reports whether an underscore after prev and before rest sits
// between two ASCII letters or digits (other scripts get the escape: the
// Unicode tables would weigh on the viewer module).
func intraword(prev rune, rest string) bool {
	alnum := func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' }
	return rest != "" && alnum(prev) && alnum(rune(rest[0]))
}

// MarkdownCode renders s as an inline code span: contents are literal in
// Markdown (no HTML, no emphasis). The fence is one backtick longer than the
// longest run inside. A pipe is escaped so it cannot split a table cell.
func MarkdownCode(s string) string {
	s = OneLine(s)
	s = strings.ReplaceAll(s, "|", `\|`)
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || s == "" {
		pad = " "
	}
	return fence + pad + s + pad + fence
}

// MarkdownFence returns a code fence longer than any backtick run in text.
func MarkdownFence(text string) string {
	return strings.Repeat("`", max(longestRun(text, '`')+1, 3))
}

// OneLine turns line breaks and tabs into spaces and drops the other
// control characters, so a name stays on its line.
func OneLine(s string) string {
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

func longestRun(s string, c byte) int {
	best, cur := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			cur++
			best = max(best, cur)
		} else {
			cur = 0
		}
	}
	return best
}

// htmlEscaper escapes what html.EscapeString escapes, to the same
// entities, without linking package html: its table of 2,000 named
// entities (for unescaping, which tracebook never does) was kept in the
// report's viewer module.
var htmlEscaper = strings.NewReplacer(`&`, "&amp;", `'`, "&#39;", `<`, "&lt;", `>`, "&gt;", `"`, "&#34;")

// EscapeHTML escapes s for HTML element content and quoted attribute
// values, exactly as html.EscapeString does.
func EscapeHTML(s string) string { return htmlEscaper.Replace(s) }
