package report

import (
	"cmp"
	"sort"
	"strings"

	"github.com/tracebook/tracebook/analysis/table"
)

// applyView sorts and caps the evidence tables, folds small tree nodes into
// "other" and records the view's choices in d.Controls.
func applyView(d *Doc, v View) {
	maxRows := v.MaxRows
	if maxRows <= 0 {
		maxRows = MaxRows
	}
	if d.Controls.Sort == nil {
		d.Controls.Sort = map[string]string{}
	}
	for k, s := range v.Sort {
		d.Controls.Sort[k] = s
	}
	for i := range d.Tables {
		t := &d.Tables[i]
		if s, ok := d.Controls.Sort[t.Name]; ok {
			sortTable(t, s, maxRows)
		}
		if t.Total < int64(len(t.Rows)) {
			t.Total = int64(len(t.Rows))
		}
		if len(t.Rows) > maxRows {
			t.Rows = t.Rows[:maxRows]
		}
	}
	if d.GPUTree != nil {
		foldTree(&d.GPUTree.Root, 0)
	}
	switch {
	case v.Open != nil:
		// The reader's unfolded nodes: tree nodes, the rule thresholds, the
		// preset tables.
		d.Controls.Open = append([]string{}, v.Open...)
	case d.GPUTree != nil:
		d.Controls.Open = defaultOpen(&d.GPUTree.Root, nil)
	}
	if d.Controls.Open == nil {
		d.Controls.Open = []string{}
	}
	d.Controls.Rank, d.Controls.HasRank = v.Filter.Rank, v.Filter.HasRank
	d.Controls.Phase = v.Filter.Phase
}

// sortTable sorts t's rows by the column spec "col" (ascending) or "-col"
// (descending); unknown columns leave the order as it is. The sort is stable
// and total, so the native and the viewer's rendering agree. Only the first
// top rows are sure to be in order (the caller keeps those): they are the
// first top rows of the full stable sort, the rest follow in no set order.
func sortTable(t *table.Table, spec string, top int) {
	desc := strings.HasPrefix(spec, "-")
	col := t.Col(strings.TrimPrefix(spec, "-"))
	if col < 0 {
		return
	}
	// Extract each row's key once: comparing through interfaces in the
	// sort's inner loop is most of the cost in the viewer module. The sort
	// moves indexes, not rows (no pointers to move, so no write barriers in
	// the module), and breaks ties on the index: the order of a stable sort.
	type key struct {
		rank  int
		f     float64
		i     int64 // the integer, exactly (isInt), as table.Compare compares two
		isInt bool
		s     string
		b     bool
	}
	keys := make([]key, len(t.Rows))
	perm := make([]int32, len(t.Rows))
	nan := false
	for i, r := range t.Rows {
		v := cell(r, col)
		k := key{rank: table.CompareRank(v)}
		switch x := v.(type) {
		case string:
			k.s = x
		case bool:
			k.b = x
		case nil:
		case int64:
			k.f, k.i, k.isInt = float64(x), x, true
		default:
			k.f = num(v)
			nan = nan || k.f != k.f
		}
		keys[i] = k
		perm[i] = int32(i)
	}
	compare := func(a, b *key) int {
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		switch a.rank {
		case 1:
			if a.b == b.b {
				return 0
			}
			if !a.b {
				return -1
			}
			return 1
		case 2:
			if a.isInt && b.isInt {
				return cmp.Compare(a.i, b.i)
			}
			switch {
			case a.f < b.f:
				return -1
			case a.f > b.f:
				return 1
			}
			return 0
		case 3:
			return strings.Compare(a.s, b.s)
		}
		return 0
	}
	less := func(i, j int32) bool {
		c := compare(&keys[i], &keys[j])
		if desc {
			return c > 0
		}
		return c < 0
	}
	// With ties broken on the index the order is total: any sort gives
	// the stable sort's order.
	before := func(i, j int32) bool {
		if less(i, j) {
			return true
		}
		return !less(j, i) && i < j
	}
	switch {
	case nan:
		// NaN compares equal to every number, so the order is not a strict
		// weak ordering and a stable sort's result depends on its
		// algorithm: keep sort.SliceStable's, as before.
		sort.SliceStable(perm, func(i, j int) bool { return less(perm[i], perm[j]) })
	case top > 0 && top < len(perm)/4:
		// Few rows are shown of many: keep the first top of them in order,
		// one pass, instead of sorting them all.
		best := perm[:0:0]
		for _, p := range perm {
			if len(best) == top && !before(p, best[top-1]) {
				continue
			}
			k := sort.Search(len(best), func(k int) bool { return before(p, best[k]) })
			if len(best) < top {
				best = append(best, 0)
			}
			copy(best[k+1:], best[k:])
			best[k] = p
		}
		chosen := make([]bool, len(perm))
		for _, p := range best {
			chosen[p] = true
		}
		rest := best
		for _, p := range perm {
			if !chosen[p] {
				rest = append(rest, p)
			}
		}
		perm = rest
	default:
		sort.Sort(permSorter{perm, before})
	}
	rows := make([][]any, len(t.Rows))
	for i, p := range perm {
		rows[i] = t.Rows[p]
	}
	copy(t.Rows, rows)
}

// permSorter sorts a permutation with a less function on its values (an
// interface sort: the module already holds that code, where a generic one
// would add its own).
type permSorter struct {
	p    []int32
	less func(i, j int32) bool
}

func (s permSorter) Len() int           { return len(s.p) }
func (s permSorter) Less(i, j int) bool { return s.less(s.p[i], s.p[j]) }
func (s permSorter) Swap(i, j int)      { s.p[i], s.p[j] = s.p[j], s.p[i] }

func cell(r []any, i int) any {
	if i >= 0 && i < len(r) {
		return r[i]
	}
	return nil
}

func num(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case int:
		return float64(x)
	case int8:
		return float64(x)
	case int16:
		return float64(x)
	case int32:
		return float64(x)
	case uint8:
		return float64(x)
	case uint16:
		return float64(x)
	case uint32:
		return float64(x)
	case uint64:
		return float64(x)
	case float32:
		return float64(x)
	case float64:
		return x
	}
	return 0
}

// foldTree keeps at most MaxTreeChildren children per node, each at least
// MinTreeShare of the root, and folds the rest into one "other" node; below
// MaxTreeDepth everything folds.
func foldTree(n *Node, depth int) {
	if depth >= MaxTreeDepth && len(n.Children) > 0 {
		n.Children = []Node{}
		return
	}
	sort.SliceStable(n.Children, func(i, j int) bool {
		if n.Children[i].GPUNs != n.Children[j].GPUNs {
			return n.Children[i].GPUNs > n.Children[j].GPUNs
		}
		return n.Children[i].Name < n.Children[j].Name
	})
	keep := n.Children[:0:0]
	var other Node
	for i, c := range n.Children {
		if c.Folded == 0 && ((i < MaxTreeChildren && c.Share >= MinTreeShare) || c.Sync) {
			keep = append(keep, c)
			continue
		}
		other.GPUNs += c.GPUNs
		other.Share += c.Share
		if c.Folded > 0 {
			other.Folded += c.Folded
		} else {
			other.Folded++
		}
	}
	if other.Folded > 0 {
		other.ID = n.ID + "/…"
		other.Name = "other (" + fmtInt(int64(other.Folded)) + " frames)"
		other.Children = []Node{}
		keep = append(keep, other)
	}
	n.Children = keep
	for i := range n.Children {
		if n.Children[i].Children == nil {
			n.Children[i].Children = []Node{}
		}
		foldTree(&n.Children[i], depth+1)
	}
}

// defaultOpen lists the nodes at or over 10% of GPU time that have children.
func defaultOpen(n *Node, acc []string) []string {
	if acc == nil {
		acc = []string{}
	}
	if len(n.Children) > 0 && n.Share >= 0.10 {
		acc = append(acc, n.ID)
		for i := range n.Children {
			acc = defaultOpen(&n.Children[i], acc)
		}
	}
	return acc
}
