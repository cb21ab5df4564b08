package kernel

// historySession is the session number the kernel reports: it keeps the
// inputs of the current process only, so there is one session.
const historySession = 1

// historyEntry is one executed cell that stored history.
type historyEntry struct {
	line  int // execution count
	input string
}

// history answers a history_request over entries (oldest first).
//
// Spec: https://jupyter-client.readthedocs.io/en/latest/messaging.html#history
func history(entries []historyEntry, req historyRequest) [][]any {
	var sel []historyEntry
	switch req.HistAccessType {
	case "tail":
		sel = entries
		if req.N != nil && *req.N >= 0 && *req.N < len(sel) {
			sel = sel[len(sel)-*req.N:]
		}
	case "range":
		// Session 0 (or a negative offset) means the current session.
		if req.Session > 0 && req.Session != historySession {
			break
		}
		for _, e := range entries {
			if e.line >= req.Start && (req.Stop == nil || e.line < *req.Stop) {
				sel = append(sel, e)
			}
		}
	case "search":
		pattern := req.Pattern
		if pattern == "" {
			pattern = "*"
		}
		for i, e := range entries {
			if !globMatch(pattern, e.input) {
				continue
			}
			if req.Unique && laterDuplicate(entries[i+1:], e.input) {
				continue // keep the latest of equal inputs
			}
			sel = append(sel, e)
		}
		if req.N != nil && *req.N >= 0 && *req.N < len(sel) {
			sel = sel[len(sel)-*req.N:]
		}
	}
	out := make([][]any, 0, len(sel))
	for _, e := range sel {
		if req.Output {
			out = append(out, []any{historySession, e.line, []any{e.input, nil}})
		} else {
			out = append(out, []any{historySession, e.line, e.input})
		}
	}
	return out
}

func laterDuplicate(rest []historyEntry, input string) bool {
	for _, e := range rest {
		if e.input == input {
			return true
		}
	}
	return false
}

// globMatch reports whether s matches pattern as SQLite's GLOB does (the
// matching IPython's history search uses): '*' any run of characters, '?'
// one character, '[...]' one character of a set, with ranges and a leading
// '^' for negation. Case-sensitive; '/' is not special.
func globMatch(pattern, s string) bool {
	p, t := []rune(pattern), []rune(s)
	pi, ti := 0, 0
	starP, starT := -1, 0
	for ti < len(t) {
		if pi < len(p) {
			switch p[pi] {
			case '*':
				starP, starT = pi, ti
				pi++
				continue
			case '?':
				pi++
				ti++
				continue
			case '[':
				if ok, next, valid := matchClass(p, pi, t[ti]); valid {
					if ok {
						pi, ti = next, ti+1
						continue
					}
				} else if t[ti] == '[' { // unterminated class: a literal '['
					pi++
					ti++
					continue
				}
			default:
				if p[pi] == t[ti] {
					pi++
					ti++
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		starT++
		pi, ti = starP+1, starT
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// matchClass matches c against the class that opens at p[i] ('['). It
// returns whether c is in it, the index after the class, and whether the
// class is terminated.
func matchClass(p []rune, i int, c rune) (ok bool, next int, valid bool) {
	j := i + 1
	negate := j < len(p) && p[j] == '^'
	if negate {
		j++
	}
	first := true
	for j < len(p) {
		if p[j] == ']' && !first {
			return ok != negate, j + 1, true
		}
		first = false
		lo := p[j]
		if j+2 < len(p) && p[j+1] == '-' && p[j+2] != ']' {
			if lo <= c && c <= p[j+2] {
				ok = true
			}
			j += 3
			continue
		}
		if lo == c {
			ok = true
		}
		j++
	}
	return false, 0, false
}
