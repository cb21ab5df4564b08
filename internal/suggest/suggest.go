// Package suggest names the word a mistyped one most likely meant, for the
// "did you mean" of an error (a command, an option, an evidence area, a
// magic). It owns that choice only: each caller words its own error, and
// the known words come from the caller's own table.
package suggest

import "strings"

// Closest returns the word of known that word most likely misspells, ""
// when none is close or two are equally close (a guess between them would
// mislead). Close is, ignoring case: one edit for a word of up to 5
// letters, two for a longer one (an edit inserts, deletes or changes a
// letter, or swaps two neighbours: "reprot" is "report"); or, failing
// that, the start of exactly one known word, of 3 letters or more
// ("evid" is "evidence").
func Closest(word string, known []string) string {
	w := strings.ToLower(word)
	if w == "" {
		return ""
	}
	most := 1
	if len([]rune(w)) > 5 {
		most = 2
	}
	best, bestD, tie := "", most+1, false
	for _, k := range known {
		d := distance(w, strings.ToLower(k))
		switch {
		case d == 0:
			return "" // the word is known: nothing to suggest
		case d < bestD:
			best, bestD, tie = k, d, false
		case d == bestD && k != best:
			tie = true
		}
	}
	if best != "" {
		if tie {
			return ""
		}
		return best
	}
	if len([]rune(w)) < 3 {
		return ""
	}
	prefixed := ""
	for _, k := range known {
		if strings.HasPrefix(strings.ToLower(k), w) && k != prefixed {
			if prefixed != "" {
				return ""
			}
			prefixed = k
		}
	}
	return prefixed
}

// distance is the number of edits (insert, delete, change a letter, swap
// two neighbours) between a and b, counted in letters.
func distance(a, b string) int {
	s, t := []rune(a), []rune(b)
	// d[i][j] for the first i letters of s and j of t, three rows kept.
	prev2 := make([]int, len(t)+1)
	prev := make([]int, len(t)+1)
	cur := make([]int, len(t)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(s); i++ {
		cur[0] = i
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(t)]
}

// DidYouMean is the phrase an error adds for the Closest word, " (did you
// mean X?)" with X as spell writes it (strconv.Quote, "--" before an
// option's name; nil: as it is), and "" when no word is close.
func DidYouMean(word string, known []string, spell func(string) string) string {
	k := Closest(word, known)
	if k == "" {
		return ""
	}
	if spell != nil {
		k = spell(k)
	}
	return " (did you mean " + k + "?)"
}
