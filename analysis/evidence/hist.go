package evidence

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tracebook/tracebook/analysis/table"
)

// BucketsPerOctave is the resolution of the presets' log-bucket histograms:
// bucket b holds durations in [2^(b/8), 2^((b+1)/8)) ns, so a percentile
// read from it is within 9% of the exact value.
const BucketsPerOctave = 8

// Hist is a log-bucket histogram: bucket -> count. Presets write it as the
// text "b:n b:n ..." (buckets ascending), which merges by adding counts.
type Hist map[int]int64

// ParseHist reads the text form. Malformed pairs are skipped.
func ParseHist(s string) Hist {
	h := Hist{}
	h.addText(s)
	return h
}

// addText adds the counts of a text form to h: h.Add(ParseHist(s)) without
// the intermediate map.
func (h Hist) addText(s string) {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			h.addFields(strings.Fields(s))
			return
		}
	}
	// ASCII text: split on the spaces strings.Fields splits on, without
	// allocating the fields.
	for i := 0; i < len(s); {
		for i < len(s) && asciiSpace(s[i]) {
			i++
		}
		j := i
		for j < len(s) && !asciiSpace(s[j]) {
			j++
		}
		if j > i {
			h.addPair(s[i:j])
		}
		i = j
	}
}

func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func (h Hist) addFields(fs []string) {
	for _, f := range fs {
		h.addPair(f)
	}
}

// addPair adds one "bucket:count" field; a malformed one is skipped.
func (h Hist) addPair(f string) {
	k := strings.IndexByte(f, ':')
	if k <= 0 {
		return
	}
	b, err1 := strconv.Atoi(f[:k])
	n, err2 := strconv.ParseInt(f[k+1:], 10, 64)
	if err1 != nil || err2 != nil {
		return
	}
	h[b] += n
}

// Add merges o into h.
func (h Hist) Add(o Hist) {
	for b, n := range o {
		h[b] += n
	}
}

// Count returns the number of values.
func (h Hist) Count() int64 {
	var n int64
	for _, c := range h {
		n += c
	}
	return n
}

// String returns the text form, buckets ascending.
func (h Hist) String() string {
	bs := make([]int, 0, len(h))
	for b, n := range h {
		if n != 0 {
			bs = append(bs, b)
		}
	}
	sort.Ints(bs)
	var sb strings.Builder
	for i, b := range bs {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(strconv.Itoa(b))
		sb.WriteByte(':')
		sb.WriteString(strconv.FormatInt(h[b], 10))
	}
	return sb.String()
}

// BucketOf returns the bucket of a duration in ns, as the presets compute it.
func BucketOf(ns int64) int {
	if ns < 1 {
		ns = 1
	}
	return int(math.Floor(BucketsPerOctave * math.Log2(float64(ns))))
}

// Quantile returns the q-quantile (0 < q <= 1) in ns: the geometric middle
// of the bucket that holds it, clamped to [lo, hi] when hi > 0 (the exact
// minimum and maximum the presets also keep). It returns 0 for an empty
// histogram.
func (h Hist) Quantile(q float64, lo, hi int64) int64 {
	n := h.Count()
	if n == 0 {
		return 0
	}
	bs := make([]int, 0, len(h))
	for b := range h {
		bs = append(bs, b)
	}
	sort.Ints(bs)
	rank := int64(math.Ceil(q * float64(n)))
	if rank < 1 {
		rank = 1
	}
	var cum int64
	b := bs[len(bs)-1]
	for _, x := range bs {
		cum += h[x]
		if cum >= rank {
			b = x
			break
		}
	}
	v := int64(math.Round(math.Exp2((float64(b) + 0.5) / BucketsPerOctave)))
	if hi > 0 {
		if v > hi {
			v = hi
		}
		if v < lo {
			v = lo
		}
	}
	return v
}

// HistUnit is the unit of the presets' histogram columns.
const HistUnit = "HIST"

// WithoutHists returns t without its histogram columns, for display: their
// text form ("95:1 96:3 ...") is for merging, and the rollup shows what a
// reader wants of them as p50/p99 columns. t itself is left as it was.
func WithoutHists(t *table.Table) *table.Table {
	var keep []int
	for i, c := range t.Columns {
		if c.Unit != HistUnit {
			keep = append(keep, i)
		}
	}
	if len(keep) == len(t.Columns) {
		return t
	}
	out := &table.Table{Name: t.Name, Total: t.Total, Columns: make([]table.Column, len(keep)), Rows: make([][]any, len(t.Rows))}
	for j, i := range keep {
		out.Columns[j] = t.Columns[i]
	}
	for r, row := range t.Rows {
		nr := make([]any, len(keep))
		for j, i := range keep {
			if i < len(row) {
				nr[j] = row[i]
			}
		}
		out.Rows[r] = nr
	}
	return out
}
