package table

import "unicode/utf8"

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

// ShortenDistinct shortens each of names as ShortenMiddle does, and keeps
// more of the names that would otherwise read alike: two different kernels
// whose names differ only in the middle (a tile size, a functor) are
// lengthened, limit/4 code points at a time, until they differ or are
// whole.
func ShortenDistinct(names []string, limit int) []string {
	lim := map[string]int{} // by name: one name is shortened one way
	for _, n := range names {
		lim[n] = limit
	}
	for {
		out := make([]string, len(names))
		first := map[string]string{} // shortened -> the name it came from
		var grow []string
		for i, n := range names {
			out[i] = ShortenMiddle(n, lim[n])
			if m, ok := first[out[i]]; ok && m != n {
				grow = append(grow, n, m)
			} else if !ok {
				first[out[i]] = n
			}
		}
		changed := false
		for _, n := range grow {
			if full := utf8.RuneCountInString(n); lim[n] < full {
				lim[n] = min(full, lim[n]+max(limit/4, 1))
				changed = true
			}
		}
		if !changed {
			return out
		}
	}
}
