package cells

import (
	"fmt"
	"strings"
	"unicode"
)

// CellKind says what a cell is.
type CellKind int

const (
	// SQLCell is a plain cell: its text is SQL.
	SQLCell CellKind = iota
	// LineMagic is a cell whose first non-blank line is "%name args...".
	LineMagic
	// CellMagic is a cell whose first non-blank line is "%%name args...";
	// the lines below it are its body.
	CellMagic
)

// String returns "sql", "line magic" or "cell magic".
func (k CellKind) String() string {
	switch k {
	case SQLCell:
		return "sql"
	case LineMagic:
		return "line magic"
	case CellMagic:
		return "cell magic"
	}
	return fmt.Sprintf("CellKind(%d)", int(k))
}

// Cell is a parsed cell.
type Cell struct {
	Kind CellKind
	// Name is the magic's name without % or %%; "" for SQL.
	Name string
	// Args are the magic's arguments, split the way a shell splits them
	// (quotes group, an unquoted # starts a comment); nil for SQL.
	Args []string
	// Body is the SQL of a plain cell or the body of a cell magic.
	Body string
	// BodyLine is the line of the cell, from 1, on which Body starts; DuckDB's
	// "LINE n" counts from there.
	BodyLine int
}

// Parse splits a cell into a magic or SQL. A cell whose first non-blank
// line starts with % is a magic: %name args... is a line magic (a trailing
// backslash continues it on the next line; nothing else may follow it), and
// %%name args... is a cell magic whose body is the rest of the cell. Any
// other cell is SQL.
func Parse(code string) (Cell, error) {
	lines := strings.Split(code, "\n")
	first := -1
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			first = i
			break
		}
	}
	if first < 0 || !strings.HasPrefix(strings.TrimLeftFunc(lines[first], unicode.IsSpace), "%") {
		return Cell{Kind: SQLCell, Body: code, BodyLine: 1}, nil
	}
	head := strings.TrimLeftFunc(lines[first], unicode.IsSpace)
	if strings.HasPrefix(head, "%%") {
		name, rest := magicName(head[2:])
		if name == "" {
			return Cell{}, fmt.Errorf("line %d: a cell magic needs a name after %%%%", first+1)
		}
		if !validName(name) {
			return Cell{}, fmt.Errorf("line %d: %q is not a magic name", first+1, "%%"+name)
		}
		args, err := splitArgs(rest)
		if err != nil {
			return Cell{}, fmt.Errorf("line %d: %%%%%s: %w", first+1, name, err)
		}
		return Cell{Kind: CellMagic, Name: name, Args: args,
			Body: strings.Join(lines[first+1:], "\n"), BodyLine: first + 2}, nil
	}
	name, rest := magicName(head[1:])
	if name == "" {
		return Cell{}, fmt.Errorf("line %d: a magic needs a name after %%", first+1)
	}
	if !validName(name) {
		return Cell{}, fmt.Errorf("line %d: %q is not a magic name", first+1, "%"+name)
	}
	// A trailing backslash continues the magic on the next line.
	i := first
	for strings.HasSuffix(strings.TrimRightFunc(rest, unicode.IsSpace), "\\") && i+1 < len(lines) {
		rest = strings.TrimSuffix(strings.TrimRightFunc(rest, unicode.IsSpace), "\\") + " " + lines[i+1]
		i++
	}
	for j := i + 1; j < len(lines); j++ {
		if t := strings.TrimSpace(lines[j]); t != "" && !strings.HasPrefix(t, "#") {
			return Cell{}, fmt.Errorf("line %d: only one line magic per cell: %q follows %%%s (give it its own cell)", j+1, t, name)
		}
	}
	args, err := splitArgs(rest)
	if err != nil {
		return Cell{}, fmt.Errorf("line %d: %%%s: %w", first+1, name, err)
	}
	return Cell{Kind: LineMagic, Name: name, Args: args}, nil
}

// magicName splits "name rest" after the % sign(s).
func magicName(s string) (name, rest string) {
	end := strings.IndexFunc(s, unicode.IsSpace)
	if end < 0 {
		return s, ""
	}
	return s[:end], s[end:]
}

// validName reports whether s is a letter followed by letters, digits, _ or -.
func validName(s string) bool {
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && (r >= '0' && r <= '9' || r == '_' || r == '-')) {
			return false
		}
	}
	return s != ""
}

// token is one argument of a magic line, with its place in the line in code
// points: [start, end) covers the raw text, quotes included.
type token struct {
	text       string
	start, end int
	quote      rune // the quote that is still open at the end of the line, or 0
}

// tokenize splits a line the way a shell does: blanks separate arguments,
// '...' is literal, "..." is literal except for \" and \\, a backslash
// outside quotes escapes a blank, a quote or a backslash (and is kept before
// anything else, so C:\traces stays as written), and an unquoted # at the
// start of an argument starts a comment. An unterminated quote is not an
// error here: the last token has quote set (completion needs that).
func tokenize(line string) []token {
	rs := []rune(line)
	var toks []token
	for i := 0; i < len(rs); {
		if unicode.IsSpace(rs[i]) {
			i++
			continue
		}
		if rs[i] == '#' {
			break
		}
		t := token{start: i}
		var b strings.Builder
	word:
		for i < len(rs) {
			r := rs[i]
			switch {
			case unicode.IsSpace(r):
				break word
			case r == '\'' || r == '"':
				q := r
				i++
				closed := false
				for i < len(rs) {
					if rs[i] == q {
						closed = true
						i++
						break
					}
					if q == '"' && rs[i] == '\\' && i+1 < len(rs) && (rs[i+1] == '"' || rs[i+1] == '\\') {
						i++
					}
					b.WriteRune(rs[i])
					i++
				}
				if !closed {
					t.quote = q
				}
			case r == '\\' && i+1 < len(rs) && (unicode.IsSpace(rs[i+1]) || rs[i+1] == '\'' || rs[i+1] == '"' || rs[i+1] == '\\'):
				b.WriteRune(rs[i+1])
				i += 2
			default:
				b.WriteRune(r)
				i++
			}
		}
		t.text, t.end = b.String(), i
		toks = append(toks, t)
	}
	return toks
}

// splitArgs is tokenize for execution: an unterminated quote is an error.
func splitArgs(line string) ([]string, error) {
	toks := tokenize(line)
	var args []string
	for _, t := range toks {
		if t.quote != 0 {
			return nil, fmt.Errorf("unterminated %c quote in %q", t.quote, strings.TrimSpace(line))
		}
		args = append(args, t.text)
	}
	return args, nil
}
