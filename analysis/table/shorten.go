package table

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// MaxText is the most code points a text cell shows before Present shortens
// it: a 300-character C++ kernel name would otherwise fill the table, and
// 96 keep the template argument that tells two elementwise kernels apart.
const MaxText = 96

// ShortenMiddle returns s unchanged when it has at most limit code points;
// otherwise its first three quarters and its last quarter with "…" between
// them, limit code points in all: the start names a kernel or frame and its
// first arguments, the end a file's line or a signature's last argument. It cuts between code points, never inside a UTF-8
// sequence (invalid bytes count as one code point each and stay as they
// are). limit below 2 is taken as 2.
func ShortenMiddle(s string, limit int) string {
	limit = max(limit, 2)
	n := utf8.RuneCountInString(s)
	if n <= limit {
		return s
	}
	keep := limit - 1 // for the ellipsis
	head := keep - keep/4
	tail := keep - head
	// Byte offsets of the head's end and the tail's start.
	end, start := 0, len(s)
	for i := 0; i < head; i++ {
		_, size := utf8.DecodeRuneInString(s[end:])
		end += size
	}
	for i := 0; i < tail; i++ {
		_, size := utf8.DecodeLastRuneInString(s[:start])
		start -= size
	}
	return s[:end] + "…" + s[start:]
}

// ShortenDistinct shortens each of names to at most limit code points as
// ShortenMiddle does, except where two different names would then read
// alike (kernels whose names differ only in the middle: a tile size, a
// functor's type): those show where they differ, between a short head and
// a short tail (shortenAround), still within limit. Equal names are
// shortened one way. Names whose difference no label within limit can
// show (a difference longer than the room) are lengthened, limit/4 code
// points at a time, until they differ or are whole.
func ShortenDistinct(names []string, limit int) []string {
	limit = max(limit, 2)
	label := map[string]string{} // by name: one name is shortened one way
	for _, n := range names {
		label[n] = ShortenMiddle(n, limit)
	}
	// Look-alikes: the distinct names under one label, shortened around the
	// code point where they part; a group that parts later (three names of
	// which two part further on) is split again on the next pass.
	for pass := 0; pass < 8; pass++ {
		groups := alike(label)
		if len(groups) == 0 {
			return labelled(names, label)
		}
		for _, g := range groups {
			from := partAt(g)
			for _, n := range g {
				label[n] = shortenAround(n, from, limit)
			}
		}
	}
	// What still reads alike is lengthened until it differs.
	lim := map[string]int{}
	for n := range label {
		lim[n] = limit
	}
	for {
		changed := false
		for _, g := range alike(label) {
			for _, n := range g {
				if full := utf8.RuneCountInString(n); lim[n] < full {
					lim[n] = min(full, lim[n]+max(limit/4, 1))
					label[n] = ShortenMiddle(n, lim[n])
					changed = true
				}
			}
		}
		if !changed {
			return labelled(names, label)
		}
	}
}

// alike returns the groups of different names that share a label, each
// group's names sorted.
func alike(label map[string]string) [][]string {
	by := map[string][]string{}
	for n, l := range label {
		by[l] = append(by[l], n)
	}
	var out [][]string
	for _, g := range by {
		if len(g) > 1 {
			slices.Sort(g)
			out = append(out, g)
		}
	}
	slices.SortFunc(out, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	return out
}

// labelled returns the labels of names, in order.
func labelled(names []string, label map[string]string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = label[n]
	}
	return out
}

// partAt returns the code point at which the names of g part: the length
// of their common head.
func partAt(g []string) int {
	rs := make([][]rune, len(g))
	shortest := -1
	for i, n := range g {
		rs[i] = []rune(n)
		if shortest < 0 || len(rs[i]) < shortest {
			shortest = len(rs[i])
		}
	}
	from := 0
	for from < shortest && allEqual(rs, func(r []rune) rune { return r[from] }) {
		from++
	}
	return from
}

// allEqual reports whether at gives every rune slice of rs the same rune.
func allEqual(rs [][]rune, at func([]rune) rune) bool {
	for _, r := range rs[1:] {
		if at(r) != at(rs[0]) {
			return false
		}
	}
	return true
}

// shortenAround returns s unchanged when it has at most limit code points;
// otherwise at most limit code points of it that show its code point at
// index from (where it parts from a look-alike) and a few after it, from
// the word it starts in, between its first and its last few, "…"
// wherever code points are left out:
// `sm90_xmma_gem…tilesize64x128x64_wa…cublas`.
func shortenAround(s string, from, limit int) string {
	limit = max(limit, 2)
	r := []rune(s)
	if len(r) <= limit {
		return s
	}
	from = min(max(from, 0), len(r))
	head, tail := limit/3, limit/6
	if from+3 < limit-tail-1 {
		// The head runs on past the parting.
		return shortenEnds(r, limit-tail-1, tail)
	}
	room := limit - head - tail - 2
	if room < 1 {
		return ShortenMiddle(s, limit)
	}
	start := max(wordStart(r, from), head+1)
	if from-start > room-3 {
		// The word is longer than the room: the parting, with less
		// before it.
		start = max(from-min(3, room/3), head+1)
	}
	end := start + room
	if end >= len(r)-tail-1 {
		// The window reaches the tail: it runs on to the end.
		return string(r[:head]) + "…" + string(r[max(len(r)-(limit-head-1), head+1):])
	}
	return string(r[:head]) + "…" + string(r[start:end]) + "…" + string(r[len(r)-tail:])
}

// wordStart is where the window of shortenAround starts for a span that
// starts at from: at the word the span starts in or right after (the
// code point after a separator: _ < > : , space or parenthesis), at most
// 16 code points back; else 3 code points before from.
func wordStart(r []rune, from int) int {
	sep := func(c rune) bool { return strings.ContainsRune("_<>:, ()", c) }
	i := from - 1
	if i >= 0 && sep(r[i]) {
		i--
	}
	for ; i >= 0 && i >= from-16; i-- {
		if sep(r[i]) {
			return i + 1
		}
	}
	return max(from-3, 0)
}

// shortenEnds returns the first head and the last tail code points of
// r with "…" between them (r whole when they cover it).
func shortenEnds(r []rune, head, tail int) string {
	if head+tail >= len(r) {
		return string(r)
	}
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}
