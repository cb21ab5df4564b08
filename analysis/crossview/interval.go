package crossview

import "sort"

// ival is a half-open time interval [a, b) in nanoseconds.
type ival struct{ a, b int64 }

// mergeIvals sorts and merges overlapping or touching intervals in place
// and drops empty ones.
func mergeIvals(v []ival) []ival {
	sort.Slice(v, func(i, j int) bool { return v[i].a < v[j].a || (v[i].a == v[j].a && v[i].b < v[j].b) })
	out := v[:0]
	for _, x := range v {
		if x.b <= x.a {
			continue
		}
		if n := len(out); n > 0 && x.a <= out[n-1].b {
			if x.b > out[n-1].b {
				out[n-1].b = x.b
			}
			continue
		}
		out = append(out, x)
	}
	return out
}

// ivalsLen returns the total length of disjoint intervals.
func ivalsLen(v []ival) int64 {
	var n int64
	for _, x := range v {
		n += x.b - x.a
	}
	return n
}

// overlap returns the length of [a, b) inside the sorted disjoint intervals v.
func overlap(a, b int64, v []ival) int64 {
	if b <= a || len(v) == 0 {
		return 0
	}
	i := sort.Search(len(v), func(i int) bool { return v[i].b > a })
	var n int64
	for ; i < len(v) && v[i].a < b; i++ {
		lo, hi := max(a, v[i].a), min(b, v[i].b)
		if hi > lo {
			n += hi - lo
		}
	}
	return n
}

// clip returns [a, b) clipped to the sorted disjoint intervals v as one
// interval (from the first clipped start to the last clipped end), and
// whether anything is left.
func clip(a, b int64, v []ival) (int64, int64, bool) {
	i := sort.Search(len(v), func(i int) bool { return v[i].b > a })
	if i == len(v) || v[i].a >= b {
		return 0, 0, false
	}
	lo := max(a, v[i].a)
	j := i
	for j+1 < len(v) && v[j+1].a < b {
		j++
	}
	return lo, min(b, v[j].b), true
}

// contains reports whether t lies in one of the sorted disjoint intervals v.
func contains(v []ival, t int64) bool {
	i := sort.Search(len(v), func(i int) bool { return v[i].b > t })
	return i < len(v) && v[i].a <= t
}

// containing returns the index of the interval of v that holds t, or -1.
func containing(v []ival, t int64) int {
	i := sort.Search(len(v), func(i int) bool { return v[i].b > t })
	if i < len(v) && v[i].a <= t {
		return i
	}
	return -1
}

// intersectLen returns the length of the intersection of two sorted
// disjoint interval lists.
func intersectLen(x, y []ival) int64 {
	var n int64
	i, j := 0, 0
	for i < len(x) && j < len(y) {
		lo, hi := max(x[i].a, y[j].a), min(x[i].b, y[j].b)
		if hi > lo {
			n += hi - lo
		}
		if x[i].b < y[j].b {
			i++
		} else {
			j++
		}
	}
	return n
}

// intersect returns the intersection of two sorted disjoint interval lists.
func intersect(x, y []ival) []ival {
	var out []ival
	i, j := 0, 0
	for i < len(x) && j < len(y) {
		lo, hi := max(x[i].a, y[j].a), min(x[i].b, y[j].b)
		if hi > lo {
			out = append(out, ival{lo, hi})
		}
		if x[i].b < y[j].b {
			i++
		} else {
			j++
		}
	}
	return out
}

// complement returns the parts of the sorted disjoint intervals within that
// the sorted disjoint intervals busy do not cover.
func complement(within, busy []ival) []ival {
	var out []ival
	j := 0
	for _, w := range within {
		cur := w.a
		for j < len(busy) && busy[j].b <= cur {
			j++
		}
		k := j
		for ; k < len(busy) && busy[k].a < w.b; k++ {
			if busy[k].a > cur {
				out = append(out, ival{cur, busy[k].a})
			}
			if busy[k].b > cur {
				cur = busy[k].b
			}
		}
		if cur < w.b {
			out = append(out, ival{cur, w.b})
		}
	}
	return out
}
