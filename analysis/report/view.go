package report

import (
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
			sortTable(t, s)
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
		if v.Open != nil {
			d.Controls.Open = append([]string{}, v.Open...)
		} else {
			d.Controls.Open = defaultOpen(&d.GPUTree.Root, nil)
		}
	}
	if d.Controls.Open == nil {
		d.Controls.Open = []string{}
	}
	d.Controls.Rank, d.Controls.HasRank = v.Filter.Rank, v.Filter.HasRank
	d.Controls.Phase = v.Filter.Phase
}

// sortTable sorts t's rows by the column spec "col" (ascending) or "-col"
// (descending); unknown columns leave the order as it is. The sort is stable
// and total, so the native and the viewer's rendering agree.
func sortTable(t *table.Table, spec string) {
	desc := strings.HasPrefix(spec, "-")
	col := t.Col(strings.TrimPrefix(spec, "-"))
	if col < 0 {
		return
	}
	// Extract each row's key once: comparing through interfaces in the
	// sort's inner loop is most of the cost in the viewer module.
	type key struct {
		rank int
		f    float64
		s    string
		b    bool
		row  []any
	}
	keys := make([]key, len(t.Rows))
	for i, r := range t.Rows {
		v := cell(r, col)
		k := key{rank: rankOf(v), row: r}
		switch x := v.(type) {
		case string:
			k.s = x
		case bool:
			k.b = x
		case nil:
		default:
			k.f = num(v)
		}
		keys[i] = k
	}
	cmp := func(a, b *key) int {
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
	sort.SliceStable(keys, func(i, j int) bool {
		c := cmp(&keys[i], &keys[j])
		if desc {
			return c > 0
		}
		return c < 0
	})
	for i := range keys {
		t.Rows[i] = keys[i].row
	}
}

func cell(r []any, i int) any {
	if i >= 0 && i < len(r) {
		return r[i]
	}
	return nil
}

// compareCells orders nil < bool < numbers < strings.
func compareCells(a, b any) int {
	ra, rb := rankOf(a), rankOf(b)
	if ra != rb {
		return ra - rb
	}
	switch ra {
	case 1:
		x, y := a.(bool), b.(bool)
		if x == y {
			return 0
		}
		if !x {
			return -1
		}
		return 1
	case 2:
		x, y := num(a), num(b)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case 3:
		return strings.Compare(a.(string), b.(string))
	}
	return 0
}

func rankOf(v any) int {
	switch v.(type) {
	case nil:
		return 0
	case bool:
		return 1
	case string:
		return 3
	}
	return 2
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
