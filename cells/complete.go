package cells

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/tracebook/tracebook/analysis/table"
)

// Complete returns the completions for the text before cursor and the
// range [start, end) of code they replace. cursor, start and end count
// Unicode code points, as Jupyter's complete_request does. It completes
// magic names after %, options after --, a magic's arguments (evidence
// areas, trace names, subcommands, file paths relative to the working
// directory, directories with a trailing /), option values (--trace NAME,
// --phase), and table and column names in SQL.
func (s *Session) Complete(code string, cursor int) (matches []string, start, end int) {
	rs := []rune(code)
	cursor = min(max(cursor, 0), len(rs))
	lineStart := 0
	for i := cursor - 1; i >= 0; i-- {
		if rs[i] == '\n' {
			lineStart = i + 1
			break
		}
	}
	switch cellKindAt(rs, lineStart) {
	case LineMagic, CellMagic:
		return s.completeMagic(string(rs[lineStart:cursor]), lineStart, cursor)
	case SQLCell:
		return s.completeSQL(rs, cursor)
	}
	return nil, cursor, cursor
}

// cellKindAt says what the line starting at lineStart is: the magic line of
// a magic cell (LineMagic or CellMagic), SQL (SQLCell: a plain cell or the
// body of %%sql), or -1 for anything else (lines after a line magic).
func cellKindAt(rs []rune, lineStart int) CellKind {
	first := firstLineStart(rs)
	if first < 0 || rs[firstNonBlank(rs, first)] != '%' {
		return SQLCell
	}
	isCell := strings.HasPrefix(string(rs[firstNonBlank(rs, first):]), "%%")
	switch {
	case lineStart == first && isCell:
		return CellMagic
	case lineStart == first:
		return LineMagic
	case isCell && lineStart > first:
		return SQLCell
	}
	return -1
}

// firstLineStart returns the offset of the first non-blank line, or -1.
func firstLineStart(rs []rune) int {
	start := 0
	for i := 0; i <= len(rs); i++ {
		if i == len(rs) || rs[i] == '\n' {
			if strings.TrimSpace(string(rs[start:i])) != "" {
				return start
			}
			start = i + 1
		}
	}
	return -1
}

func firstNonBlank(rs []rune, from int) int {
	for i := from; i < len(rs); i++ {
		if !unicode.IsSpace(rs[i]) {
			return i
		}
	}
	return len(rs) - 1
}

// completeMagic completes on a magic line; before is the line's text up to
// the cursor, which starts at code point lineStart.
func (s *Session) completeMagic(before string, lineStart, cursor int) ([]string, int, int) {
	toks := tokenize(before)
	br := []rune(before)
	var word token
	if len(br) > 0 && len(toks) > 0 && toks[len(toks)-1].end == len(br) && (!unicode.IsSpace(br[len(br)-1]) || toks[len(toks)-1].quote != 0) {
		word = toks[len(toks)-1]
		toks = toks[:len(toks)-1]
	} else {
		word = token{start: len(br), end: len(br)}
	}
	start := lineStart + word.start
	if len(toks) == 0 {
		return filterPrefix(magicNames(), word.text, false), start, cursor
	}
	m := lookupMagic(strings.TrimLeft(toks[0].text, "%"))
	if m == nil {
		return nil, cursor, cursor
	}
	var args []string
	for _, t := range toks[1:] {
		args = append(args, t.text)
	}
	row := m
	if len(m.subs) > 0 {
		if len(args) == 0 {
			var names []string
			for _, sub := range m.subs {
				names = append(names, sub.name)
			}
			return filterPrefix(names, word.text, false), start, cursor
		}
		if row = m.sub(args[0]); row == nil {
			return nil, cursor, cursor
		}
		args = args[1:]
	}
	opts := row.allOptions()
	findOpt := func(name string) *option {
		for i := range opts {
			if opts[i].name == name {
				return &opts[i]
			}
		}
		return nil
	}
	var cands []string
	quote := true
	switch {
	case len(args) > 0 && strings.HasPrefix(args[len(args)-1], "--") && !strings.Contains(args[len(args)-1], "=") &&
		findOpt(args[len(args)-1][2:]) != nil && findOpt(args[len(args)-1][2:]).arg != "":
		if o := findOpt(args[len(args)-1][2:]); o.complete != nil {
			cands = o.complete(s, word.text)
		}
	case strings.HasPrefix(word.text, "--") && strings.Contains(word.text, "="):
		name, value, _ := strings.Cut(word.text[2:], "=")
		if o := findOpt(name); o != nil && o.complete != nil {
			for _, v := range filterPrefix(o.complete(s, value), value, false) {
				cands = append(cands, "--"+name+"="+quoteArg(v))
			}
		}
		quote = false
	case strings.HasPrefix(word.text, "-"):
		for _, o := range opts {
			cands = append(cands, "--"+o.name)
		}
		quote = false
	case row.complete != nil:
		cands = row.complete(s, positionals(args, findOpt), word.text)
	}
	cands = filterPrefix(cands, word.text, false)
	if quote {
		for i, c := range cands {
			cands[i] = quoteArg(c)
		}
	}
	return cands, start, cursor
}

// positionals drops the options and their values from args.
func positionals(args []string, findOpt func(string) *option) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "--") {
			if o := findOpt(a[2:]); o != nil && o.arg != "" {
				i++
			}
			continue
		}
		out = append(out, a)
	}
	return out
}

// filterPrefix keeps the candidates that start with prefix, sorted and
// without duplicates.
func filterPrefix(cands []string, prefix string, fold bool) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range cands {
		ok := strings.HasPrefix(c, prefix)
		if fold {
			ok = len(c) >= len(prefix) && strings.EqualFold(c[:len(prefix)], prefix)
		}
		if ok && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}

func completeTraceNames(s *Session, _ string) []string { return s.traceNames() }

func completeRanks(s *Session, _ string) []string { return s.rankNames() }

func completePhases(*Session, string) []string {
	return []string{"prefill", "decode", "mixed", "step:"}
}

func completeAreas(_ *Session, before []string, _ string) []string {
	if len(before) > 0 {
		return nil
	}
	return areaNames()
}

func completeFirstTrace(s *Session, before []string, _ string) []string {
	if len(before) > 0 {
		return nil
	}
	return s.traceNames()
}

// completePath lists the entries of the directory that word names (from
// the working directory when relative) whose names start with word's last
// element. Directories end in /; with traces, files other than .json and
// .json.gz are left out. Hidden entries show only when asked for with a dot.
func (s *Session) completePath(word string, traces bool) []string {
	dirPart, base := "", word
	if i := strings.LastIndex(word, "/"); i >= 0 {
		dirPart, base = word[:i+1], word[i+1:]
	}
	dir := dirPart
	if dir == "" {
		dir = "."
	}
	if !filepath.IsAbs(dir) && s.opts.WorkDir != "" {
		dir = filepath.Join(s.opts.WorkDir, dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base) || strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".") {
			continue
		}
		isDir := e.IsDir()
		if e.Type()&os.ModeSymlink != 0 {
			if fi, err := os.Stat(filepath.Join(dir, name)); err == nil {
				isDir = fi.IsDir()
			}
		}
		lower := strings.ToLower(name)
		switch {
		case isDir:
			out = append(out, dirPart+name+"/")
		case !traces || strings.HasSuffix(lower, ".json") || strings.HasSuffix(lower, ".json.gz"):
			out = append(out, dirPart+name)
		}
	}
	sort.Strings(out)
	return out
}

// sqlKeywords are offered in SQL cells when a word is being typed.
var sqlKeywords = []string{"SELECT", "FROM", "WHERE", "GROUP", "ORDER", "BY", "HAVING", "LIMIT",
	"JOIN", "LEFT", "INNER", "ON", "USING", "AS", "AND", "OR", "NOT", "IN", "IS", "NULL", "DISTINCT",
	"CASE", "WHEN", "THEN", "ELSE", "END", "WITH", "UNION", "ALL", "DESC", "ASC", "OVER", "PARTITION",
	"QUALIFY", "BETWEEN", "LIKE", "ILIKE", "DESCRIBE", "SUMMARIZE", "COUNT", "SUM", "AVG", "MIN", "MAX"}

func isIdentRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// completeSQL completes table and column names (and keywords) in SQL.
func (s *Session) completeSQL(rs []rune, cursor int) ([]string, int, int) {
	start := cursor
	for start > 0 && (isIdentRune(rs[start-1]) || rs[start-1] == '.') {
		start--
	}
	word := string(rs[start:cursor])
	cat := s.catalog()
	if i := strings.LastIndex(word, "."); i >= 0 {
		tbl, prefix := word[:i], word[i+1:]
		var out []string
		if cols, ok := lookupTable(cat, tbl); ok {
			for _, c := range cols {
				out = append(out, tbl+"."+c.Name)
			}
		}
		return filterPrefix(out, tbl+"."+prefix, true), start, cursor
	}
	mentioned := tablesIn(string(rs), cat)
	var cols, tables []string
	for name := range cat {
		tables = append(tables, name)
	}
	if len(mentioned) == 0 && word != "" {
		mentioned = tables
	}
	for _, t := range mentioned {
		for _, c := range cat[t] {
			cols = append(cols, c.Name)
		}
	}
	cols, tables = filterPrefix(cols, word, true), filterPrefix(tables, word, true)
	var kws []string
	if word != "" {
		for _, k := range filterPrefix(sqlKeywords, word, true) {
			if strings.ToLower(word) == word {
				k = strings.ToLower(k)
			}
			kws = append(kws, k)
		}
	}
	var out []string
	if prev := previousWord(rs, start); prev == "FROM" || prev == "JOIN" || prev == "DESCRIBE" || prev == "SUMMARIZE" || prev == "TABLE" {
		out = append(tables, kws...)
	} else {
		out = append(append(cols, tables...), kws...)
	}
	return dedupe(out), start, cursor
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// previousWord returns the identifier before offset start, upper-cased.
func previousWord(rs []rune, start int) string {
	i := start
	for i > 0 && unicode.IsSpace(rs[i-1]) {
		i--
	}
	j := i
	for j > 0 && isIdentRune(rs[j-1]) {
		j--
	}
	return strings.ToUpper(string(rs[j:i]))
}

// lookupTable finds a table by name, ignoring case as DuckDB does.
func lookupTable(cat map[string][]table.Column, name string) ([]table.Column, bool) {
	if cols, ok := cat[name]; ok {
		return cols, true
	}
	for n, cols := range cat {
		if strings.EqualFold(n, name) {
			return cols, true
		}
	}
	return nil, false
}

// tablesIn returns the catalog's tables whose names appear as words in sql.
func tablesIn(sql string, cat map[string][]table.Column) []string {
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(sql), func(r rune) bool { return !isIdentRune(r) }) {
		words[w] = true
	}
	var out []string
	for name := range cat {
		if words[strings.ToLower(name)] {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Inspect returns what Shift-Tab shows at cursor (in code points): on a
// magic line, the magic's help; in SQL, a table's or view's columns and
// types, or the type of a column.
func (s *Session) Inspect(code string, cursor, detailLevel int) (map[string]any, bool) {
	rs := []rune(code)
	cursor = min(max(cursor, 0), len(rs))
	lineStart := 0
	for i := cursor - 1; i >= 0; i-- {
		if rs[i] == '\n' {
			lineStart = i + 1
			break
		}
	}
	switch cellKindAt(rs, lineStart) {
	case LineMagic, CellMagic:
		line := string(rs[lineStart:])
		if i := strings.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
		}
		name, _ := magicName(strings.TrimLeft(strings.TrimSpace(line), "%"))
		m := lookupMagic(name)
		if m == nil {
			return nil, false
		}
		return textBundle(magicHelp(m)), true
	case SQLCell:
		start, end := cursor, cursor
		for start > 0 && (isIdentRune(rs[start-1]) || rs[start-1] == '.') {
			start--
		}
		for end < len(rs) && isIdentRune(rs[end]) {
			end++
		}
		return s.inspectSQL(string(rs[start:end]))
	}
	return nil, false
}

func (s *Session) inspectSQL(word string) (map[string]any, bool) {
	if word == "" {
		return nil, false
	}
	cat := s.catalog()
	if i := strings.LastIndex(word, "."); i >= 0 {
		cols, ok := lookupTable(cat, word[:i])
		if !ok {
			return nil, false
		}
		for _, c := range cols {
			if strings.EqualFold(c.Name, word[i+1:]) {
				return textBundle(columnLine(word[:i], c)), true
			}
		}
		return nil, false
	}
	if cols, ok := lookupTable(cat, word); ok {
		t := &table.Table{Name: word, Columns: []table.Column{{Name: "column", Type: "VARCHAR"}, {Name: "type", Type: "VARCHAR"}, {Name: "unit", Type: "VARCHAR"}, {Name: "doc", Type: "VARCHAR"}}}
		for _, c := range cols {
			t.Rows = append(t.Rows, []any{c.Name, c.Type, c.Unit, c.Doc})
		}
		t.Total = int64(len(t.Rows))
		b := TableBundle(t)
		delete(b, MIMEJSON)
		return b, true
	}
	var names []string
	for n := range cat {
		names = append(names, n)
	}
	sort.Strings(names)
	var lines []string
	for _, n := range names {
		for _, c := range cat[n] {
			if strings.EqualFold(c.Name, word) {
				lines = append(lines, columnLine(n, c))
			}
		}
	}
	if len(lines) == 0 {
		return nil, false
	}
	return textBundle(strings.Join(lines, "")), true
}

// columnLine is "events.dur_ns BIGINT (ns): doc".
func columnLine(tbl string, c table.Column) string {
	s := tbl + "." + c.Name + " " + c.Type
	if c.Unit != "" {
		s += " (" + c.Unit + ")"
	}
	if c.Doc != "" {
		s += ": " + c.Doc
	}
	return s + "\n"
}

// IsComplete says whether Enter should run the cell: a magic is always
// complete; SQL is complete unless a quote, a comment or a parenthesis is
// still open ("incomplete") or a parenthesis closes that never opened
// ("invalid"). A SQL cell needs no terminating semicolon.
func (s *Session) IsComplete(code string) (status, indent string) {
	cell, err := Parse(code)
	switch {
	case err != nil:
		return "complete", "" // a magic with an error: Execute says what is wrong
	case cell.Kind == SQLCell:
		return sqlComplete(code)
	case cell.Kind == CellMagic:
		return sqlComplete(cell.Body)
	}
	return "complete", ""
}

// sqlComplete scans SQL for open quotes, comments and parentheses.
func sqlComplete(sql string) (status, indent string) {
	depth := 0
	rs := []rune(sql)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; {
		case r == '\'' || r == '"':
			j := i + 1
			for ; j < len(rs); j++ {
				if rs[j] == r {
					if j+1 < len(rs) && rs[j+1] == r { // '' inside a string
						j++
						continue
					}
					break
				}
			}
			if j >= len(rs) {
				return "incomplete", ""
			}
			i = j
		case r == '-' && i+1 < len(rs) && rs[i+1] == '-':
			for i < len(rs) && rs[i] != '\n' {
				i++
			}
		case r == '/' && i+1 < len(rs) && rs[i+1] == '*':
			end := strings.Index(string(rs[i+2:]), "*/")
			if end < 0 {
				return "incomplete", ""
			}
			i += 2 + len([]rune(string(rs[i+2:])[:end])) + 1
		case r == '(':
			depth++
		case r == ')':
			if depth == 0 {
				return "invalid", ""
			}
			depth--
		}
	}
	if depth > 0 {
		return "incomplete", strings.Repeat("    ", depth)
	}
	return "complete", ""
}
