// Package rx matches the few regular expressions of the analysis core (wait
// frames, GPU model names, kernel-name families) with a small backtracking
// matcher, so that the viewer's WebAssembly module does not link package
// regexp: regexp and its Unicode tables were 131 KB of the module's 1.70 MB
// gzip. It owns the matcher only; each pattern stays where it is used.
//
// The syntax is the subset of Go's RE2 syntax those patterns use, with the
// same meaning: literals and escaped metacharacters, `.`, `\d`, `\b` (an
// ASCII word boundary), `^` and `$` (text start and end), classes
// (`[a-z_]`, `[^...]`), groups (`(...)`, `(?:...)`) with `|`, the greedy
// quantifiers `*`, `+`, `?`, `{n}`, `{n,}` and `{n,m}`, and a leading `(?i)`
// for case-insensitive matching. Matches are leftmost-first, as regexp's
// are; rx_test.go checks every pattern of the core against regexp.
// Anything else is an error from Compile (a panic from MustCompile).
package rx

import (
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Regexp is a compiled pattern.
type Regexp struct {
	src  string
	root *node
	fold bool
}

type op uint8

const (
	opLit   op = iota // r
	opAny             // any rune but \n
	opClass           // ranges (negated: neg)
	opWord            // \b
	opBegin           // ^
	opEnd             // $
	opCat             // subs in order
	opAlt             // one of subs, first first
	opRep             // subs[0], min to max times (max -1: no limit), greedy
)

type node struct {
	op       op
	r        rune
	ranges   []rune // pairs lo, hi
	neg      bool
	subs     []*node
	min, max int
}

// MustCompile is Compile that panics on an error: for the package-level
// patterns of the core, which are fixed.
func MustCompile(s string) *Regexp {
	re, err := Compile(s)
	if err != nil {
		panic("rx: " + err.Error() + " in " + strconv.Quote(s))
	}
	return re
}

// Compile parses a pattern.
func Compile(s string) (*Regexp, error) {
	if !utf8.ValidString(s) {
		return nil, errors.New("invalid UTF-8")
	}
	re := &Regexp{src: s}
	p := parser{s: s}
	if len(s) >= 4 && s[:4] == "(?i)" {
		re.fold = true
		p.i = 4
	}
	n, err := p.alt()
	if err != nil {
		return nil, err
	}
	if p.i < len(p.s) {
		return nil, errors.New("unexpected ) at offset " + strconv.Itoa(p.i))
	}
	re.root = n
	return re, nil
}

// String is the pattern as written.
func (re *Regexp) String() string { return re.src }

// MatchString reports whether s holds a match.
func (re *Regexp) MatchString(s string) bool {
	_, _, ok := re.find(s, 0)
	return ok
}

// FindAllString returns the successive non-overlapping matches in s, at
// most n of them (n < 0: all), nil when there is none; an empty match
// right after a match is skipped, as regexp does.
func (re *Regexp) FindAllString(s string, n int) []string {
	var out []string
	for _, m := range re.all(s, n) {
		out = append(out, s[m[0]:m[1]])
	}
	return out
}

// ReplaceAllLiteralString replaces every match in s with repl, taken as
// it is (no $ expansion).
func (re *Regexp) ReplaceAllLiteralString(s, repl string) string {
	ms := re.all(s, -1)
	if len(ms) == 0 {
		return s
	}
	var b []byte
	last := 0
	for _, m := range ms {
		b = append(b, s[last:m[0]]...)
		b = append(b, repl...)
		last = m[1]
	}
	return string(append(b, s[last:]...))
}

// all returns the start and end of the successive matches (FindAllString).
func (re *Regexp) all(s string, n int) [][2]int {
	var out [][2]int
	prev := -1
	for at := 0; at <= len(s) && (n < 0 || len(out) < n); {
		a, b, ok := re.find(s, at)
		if !ok {
			break
		}
		if b > a || a != prev {
			out = append(out, [2]int{a, b})
			prev = b
		}
		if b > a {
			at = b
			continue
		}
		// An empty match: the next one starts a rune further on.
		if a >= len(s) {
			break
		}
		_, w := utf8.DecodeRuneInString(s[a:])
		at = a + w
	}
	return out
}

// find returns the leftmost-first match of s starting at or after from.
func (re *Regexp) find(s string, from int) (a, b int, ok bool) {
	m := matcher{s: s, fold: re.fold}
	for a = from; a <= len(s); {
		end := -1
		if m.match(re.root, a, func(j int) bool { end = j; return true }) {
			return a, end, true
		}
		if a == len(s) {
			break
		}
		_, w := utf8.DecodeRuneInString(s[a:])
		a += w
	}
	return 0, 0, false
}

type matcher struct {
	s    string
	fold bool
}

// match matches n at i and calls k with where it ended, trying the
// alternatives in order (longest repetition first) until k accepts.
func (m *matcher) match(n *node, i int, k func(int) bool) bool {
	switch n.op {
	case opLit, opAny, opClass:
		if i >= len(m.s) {
			return false
		}
		c, w := utf8.DecodeRuneInString(m.s[i:])
		if !m.one(n, c) {
			return false
		}
		return k(i + w)
	case opWord:
		if isWord(m.before(i)) != isWord(m.at(i)) {
			return k(i)
		}
		return false
	case opBegin:
		return i == 0 && k(i)
	case opEnd:
		return i == len(m.s) && k(i)
	case opCat:
		return m.cat(n.subs, i, k)
	case opAlt:
		for _, sub := range n.subs {
			if m.match(sub, i, k) {
				return true
			}
		}
		return false
	case opRep:
		return m.rep(n, i, 0, k)
	}
	return false
}

func (m *matcher) cat(subs []*node, i int, k func(int) bool) bool {
	if len(subs) == 0 {
		return k(i)
	}
	return m.match(subs[0], i, func(j int) bool { return m.cat(subs[1:], j, k) })
}

// rep matches the repetition n, count times matched so far, greedily: one
// more first, then what follows. A pass that matches nothing ends it, the
// minimum met: the passes left would match nothing at the same place.
func (m *matcher) rep(n *node, i, count int, k func(int) bool) bool {
	if n.max < 0 || count < n.max {
		more := m.match(n.subs[0], i, func(j int) bool {
			if j == i {
				return count < n.min && k(j)
			}
			return m.rep(n, j, count+1, k)
		})
		if more {
			return true
		}
	}
	return count >= n.min && k(i)
}

// one reports whether the rune c matches the single-rune node n.
func (m *matcher) one(n *node, c rune) bool {
	switch n.op {
	case opAny:
		return c != '\n'
	case opLit:
		return c == n.r || (m.fold && unicode.ToLower(c) == unicode.ToLower(n.r))
	}
	in := inRanges(n.ranges, c)
	if !in && m.fold {
		in = inRanges(n.ranges, unicode.ToLower(c)) || inRanges(n.ranges, unicode.ToUpper(c))
	}
	return in != n.neg
}

func inRanges(r []rune, c rune) bool {
	for i := 0; i+1 < len(r); i += 2 {
		if r[i] <= c && c <= r[i+1] {
			return true
		}
	}
	return false
}

// before and at are the bytes around offset i for \b (0 outside the text).
func (m *matcher) before(i int) byte {
	if i <= 0 {
		return 0
	}
	return m.s[i-1]
}

func (m *matcher) at(i int) byte {
	if i >= len(m.s) {
		return 0
	}
	return m.s[i]
}

// isWord: an ASCII word character, as \b counts them.
func isWord(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// parser is a recursive-descent parser of the supported syntax.
type parser struct {
	s string
	i int
}

func (p *parser) errorf(what string) error {
	return errors.New(what + " at offset " + strconv.Itoa(p.i))
}

// alt parses alternatives up to a ) or the end.
func (p *parser) alt() (*node, error) {
	var subs []*node
	for {
		c, err := p.cat()
		if err != nil {
			return nil, err
		}
		subs = append(subs, c)
		if p.i < len(p.s) && p.s[p.i] == '|' {
			p.i++
			continue
		}
		break
	}
	if len(subs) == 1 {
		return subs[0], nil
	}
	return &node{op: opAlt, subs: subs}, nil
}

// cat parses a sequence of quantified atoms up to |, ) or the end.
func (p *parser) cat() (*node, error) {
	n := &node{op: opCat}
	for p.i < len(p.s) && p.s[p.i] != '|' && p.s[p.i] != ')' {
		a, err := p.atom()
		if err != nil {
			return nil, err
		}
		if a, err = p.quant(a); err != nil {
			return nil, err
		}
		n.subs = append(n.subs, a)
	}
	return n, nil
}

func (p *parser) atom() (*node, error) {
	c := p.s[p.i]
	switch c {
	case '(':
		p.i++
		if len(p.s)-p.i >= 2 && p.s[p.i:p.i+2] == "?:" {
			p.i += 2
		} else if p.i < len(p.s) && p.s[p.i] == '?' {
			return nil, p.errorf("unsupported group flag")
		}
		n, err := p.alt()
		if err != nil {
			return nil, err
		}
		if p.i >= len(p.s) || p.s[p.i] != ')' {
			return nil, p.errorf("missing )")
		}
		p.i++
		return n, nil
	case '[':
		return p.class()
	case '.':
		p.i++
		return &node{op: opAny}, nil
	case '^':
		p.i++
		return &node{op: opBegin}, nil
	case '$':
		p.i++
		return &node{op: opEnd}, nil
	case '\\':
		return p.escape()
	case '*', '+', '?', '{':
		return nil, p.errorf("missing argument to repetition operator")
	}
	r, w := utf8.DecodeRuneInString(p.s[p.i:])
	p.i += w
	return &node{op: opLit, r: r}, nil
}

func (p *parser) escape() (*node, error) {
	if p.i+1 >= len(p.s) {
		return nil, p.errorf("trailing backslash")
	}
	c := p.s[p.i+1]
	p.i += 2
	switch c {
	case 'd':
		return &node{op: opClass, ranges: []rune{'0', '9'}}, nil
	case 'b':
		return &node{op: opWord}, nil
	}
	if isWord(c) || c >= utf8.RuneSelf {
		return nil, p.errorf("unsupported escape \\" + string(rune(c)))
	}
	return &node{op: opLit, r: rune(c)}, nil
}

func (p *parser) class() (*node, error) {
	p.i++ // [
	n := &node{op: opClass}
	if p.i < len(p.s) && p.s[p.i] == '^' {
		n.neg = true
		p.i++
	}
	first := true
	for {
		if p.i >= len(p.s) {
			return nil, p.errorf("missing ]")
		}
		if p.s[p.i] == ']' && !first {
			p.i++
			return n, nil
		}
		first = false
		lo, err := p.classRune()
		if err != nil {
			return nil, err
		}
		hi := lo
		if p.i+1 < len(p.s) && p.s[p.i] == '-' && p.s[p.i+1] != ']' {
			p.i++
			if hi, err = p.classRune(); err != nil {
				return nil, err
			}
			if hi < lo {
				return nil, p.errorf("invalid class range")
			}
		}
		n.ranges = append(n.ranges, lo, hi)
	}
}

func (p *parser) classRune() (rune, error) {
	if p.s[p.i] == '\\' {
		if p.i+1 >= len(p.s) {
			return 0, p.errorf("trailing backslash")
		}
		c := p.s[p.i+1]
		if isWord(c) || c >= utf8.RuneSelf {
			return 0, p.errorf("unsupported escape in class")
		}
		p.i += 2
		return rune(c), nil
	}
	if p.s[p.i] == '[' {
		return 0, p.errorf("unsupported nested class")
	}
	r, w := utf8.DecodeRuneInString(p.s[p.i:])
	p.i += w
	return r, nil
}

// quant applies the quantifier after an atom, if any.
func (p *parser) quant(a *node) (*node, error) {
	if p.i >= len(p.s) {
		return a, nil
	}
	min, max := 0, 0
	switch p.s[p.i] {
	case '*':
		min, max = 0, -1
		p.i++
	case '+':
		min, max = 1, -1
		p.i++
	case '?':
		min, max = 0, 1
		p.i++
	case '{':
		j := p.i + 1
		lo, j, ok := number(p.s, j)
		if !ok {
			return nil, p.errorf("invalid repeat count")
		}
		hi := lo
		if j < len(p.s) && p.s[j] == ',' {
			j++
			hi = -1
			if j < len(p.s) && p.s[j] != '}' {
				if hi, j, ok = number(p.s, j); !ok {
					return nil, p.errorf("invalid repeat count")
				}
			}
		}
		if j >= len(p.s) || p.s[j] != '}' || (hi >= 0 && hi < lo) || lo > 1000 || hi > 1000 {
			return nil, p.errorf("invalid repeat count")
		}
		p.i = j + 1
		min, max = lo, hi
	default:
		return a, nil
	}
	if p.i < len(p.s) && (p.s[p.i] == '?' || p.s[p.i] == '*' || p.s[p.i] == '+' || p.s[p.i] == '{') {
		return nil, p.errorf("unsupported repetition modifier")
	}
	return &node{op: opRep, subs: []*node{a}, min: min, max: max}, nil
}

// number reads decimal digits at j.
func number(s string, j int) (n, end int, ok bool) {
	start := j
	for j < len(s) && '0' <= s[j] && s[j] <= '9' && j-start < 5 {
		n = 10*n + int(s[j]-'0')
		j++
	}
	return n, j, j > start
}

// QuoteMeta escapes the metacharacters of s, as regexp.QuoteMeta does: the
// result matches s literally, in this package's syntax and in any RE2 or
// POSIX-extended engine's.
func QuoteMeta(s string) string {
	b := make([]byte, 0, 2*len(s))
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`\.+*?()|[]{}^$`, s[i]) >= 0 {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return string(b)
}
