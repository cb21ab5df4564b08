package crossview

import (
	"sort"
	"strings"

	"github.com/tracebook/tracebook/analysis/internal/rx"
)

// bnode is a tree node while the tree is being built: children by kind and name.
type bnode struct {
	n    *Node
	kids map[nodeKey]*bnode
	ord  []*bnode
	keep bool // holds a sync frame worth showing: never folded away
}

type nodeKey struct{ kind, name string }

func (p *bnode) child(kind, name string) *bnode {
	key := nodeKey{kind, name}
	if c, ok := p.kids[key]; ok {
		return c
	}
	if p.kids == nil {
		p.kids = map[nodeKey]*bnode{}
	}
	c := &bnode{n: &Node{Name: name, Kind: kind}}
	p.kids[key] = c
	p.ord = append(p.ord, c)
	return c
}

// trimInstallPrefix drops the path up to the last site-packages/ or
// dist-packages/ of a python frame's file.
func trimInstallPrefix(frame string) string {
	file := frame
	if k := strings.Index(file, "): "); k >= 0 {
		file = file[:k]
	}
	cut := -1
	for _, dir := range []string{"/site-packages/", "/dist-packages/"} {
		if k := strings.LastIndex(file, dir); k >= 0 && k+len(dir) > cut {
			cut = k + len(dir)
		}
	}
	if cut < 0 {
		return frame
	}
	return frame[cut:]
}

// recordFunctionEnter matches the Call stack frame of record_function's
// __enter__, where a region (a user annotation) is recorded.
var recordFunctionEnter = rx.MustCompile(`(^|/)torch/autograd/profiler\.py\(\d+\): __enter__$`)

// stackOf splits a Call stack arg (innermost frame first, ';' between
// frames) into frame names, outermost first, remembered by arg. A frame's
// file loses the installation prefix up to site-packages/ or
// dist-packages/ (`/home/u/env/lib/python3.7/site-packages/torch/nn/
// modules/module.py(1051): _call_impl` reads `torch/nn/modules/module.py(1051):
// _call_impl`), as python_function frames name their files.
func (b *builder) stackOf(cs string) *callStack {
	if st, ok := b.stacks[cs]; ok {
		return st
	}
	if b.stacks == nil {
		b.stacks = map[string]*callStack{}
	}
	st := &callStack{}
	parts := strings.Split(cs, ";")
	st.enter = recordFunctionEnter.MatchString(strings.TrimSpace(parts[0]))
	for k := len(parts) - 1; k >= 0; k-- {
		if name := strings.TrimSpace(parts[k]); name != "" {
			st.frames = append(st.frames, b.frameName(HostPython, trimInstallPrefix(name)))
		}
	}
	b.stacks[cs] = st
	return st
}

// callStack is a Call stack arg, read.
type callStack struct {
	frames []string // outermost first
	enter  bool     // its innermost frame is record_function's __enter__
}

// wallNs returns the slice's wall time summed over ranks.
func (b *builder) wallNs() int64 {
	var n int64
	for _, rs := range b.ranks {
		n += ivalsLen(rs.dev)
	}
	return n
}

// tree turns a built tree into a Tree: inclusive times, chains folded
// into one line, the depth limit, small nodes folded into "other", and a
// stable order.
func (b *builder) tree(view string, root *bnode, total int64) Tree {
	sum(root)
	wall := b.wallNs()
	minNs := int64(b.opts.MinPct / 100 * float64(total))
	minBlocked := int64(b.opts.MinPct / 100 * float64(wall))
	markKeep(root, minBlocked)
	roots := shape(root, view, 1, b.opts.Depth, minNs)
	if roots == nil {
		roots = []*Node{}
	}
	return Tree{View: view, TotalNs: total, Roots: roots}
}

// sum computes inclusive times bottom-up.
func sum(p *bnode) int64 {
	ns := p.n.SelfNs
	for _, c := range p.ord {
		ns += sum(c)
	}
	p.n.Ns = ns
	return ns
}

// markKeep marks the nodes that hold a sync frame blocking the host for at
// least minBlocked, and their ancestors: folding keeps them.
func markKeep(p *bnode, minBlocked int64) bool {
	k := p.n.Sync && p.n.BlockedNs > 0 && p.n.BlockedNs >= minBlocked
	for _, c := range p.ord {
		if markKeep(c, minBlocked) {
			k = true
		}
	}
	p.keep = k
	return k
}

// minShown is how many children a node shows before folding the rest into "other".
const minShown = 3

func isLeafKind(kind string) bool {
	return kind == "kernel" || kind == "gpu_memcpy" || kind == "gpu_memset" || kind == "other"
}

// shape returns the finished children of p at the given level (1 = top).
func shape(p *bnode, view string, level, depth int, minNs int64) []*Node {
	kids := p.ord
	if len(kids) == 0 {
		return nil
	}
	// Order first, so that chains and folding see the final order.
	sort.SliceStable(kids, func(i, j int) bool { return less(kids[i].n, kids[j].n) })
	var out []*Node
	var small []*bnode
	for _, c := range kids {
		if c.n.Ns < minNs && !c.keep {
			small = append(small, c)
			continue
		}
		out = append(out, finishNode(c, view, level, depth, minNs))
	}
	// A large node whose children are all small (a fan-out of many layers)
	// still shows its largest ones: at least minShown lines before "other".
	// Only a large one: small nodes would multiply the lines level by level.
	for len(out) < minShown && len(small) > 0 && p.n.Ns >= 10*minNs {
		out = append(out, finishNode(small[0], view, level, depth, minNs))
		small = small[1:]
	}
	switch len(small) {
	case 0:
	case 1:
		out = append(out, finishNode(small[0], view, level, depth, minNs))
	default:
		o := &Node{Name: "other", Kind: "other"}
		for _, c := range small {
			o.Ns += c.n.Ns
			o.SelfNs += c.n.Ns
			o.Count += c.n.Count
			syncNs, waitNs := classSums(c)
			o.SyncNs += syncNs
			o.WaitNs += waitNs
		}
		o.Name = "other (" + itoa(int64(len(small))) + " nodes)"
		out = append(out, o)
	}
	sort.SliceStable(out, func(i, j int) bool { return less(out[i], out[j]) })
	return out
}

// finishNode finishes one node: its chain of only children, its depth
// limit, its children.
func finishNode(c *bnode, view string, level, depth int, minNs int64) *Node {
	n := c.n
	// Fold a chain of frames that have one child each and no time of their
	// own (CPU view: self time under the folding threshold, or under 0.1%
	// of the line's time, which the line keeps).
	for len(c.ord) == 1 && !n.Sync && n.Graph == nil && n.Kind != "bucket" && !isLeafKind(n.Kind) &&
		(n.SelfNs == 0 || (view == "cpu" && (n.SelfNs < minNs || n.SelfNs*1000 <= n.Ns))) {
		only := c.ord[0]
		if isLeafKind(only.n.Kind) {
			break
		}
		via := append(append(n.Via, n.Name), only.n.Via...)
		only.n.Via = via
		only.n.SelfNs += n.SelfNs
		only.n.SyncNs += n.SyncNs
		only.n.WaitNs += n.WaitNs
		only.n.PollNs += n.PollNs
		only.n.QueueFullNs += n.QueueFullNs
		only.n.Ns = n.Ns
		c, n = only, only.n
	}
	// A node under the threshold that is still shown (a lone small child,
	// one of the largest of a fan-out) keeps no lines below it.
	small := minNs > 0 && n.Ns < minNs && !c.keep
	if (small || (depth > 0 && level >= depth)) && len(c.ord) > 0 {
		truncate(c, view)
	}
	n.Children = shape(c, view, level+1, depth, minNs)
	return n
}

// truncate folds everything under c into c: in the GPU view the GPU
// operations become c's leaves (merged by name), in the CPU view their self
// time becomes c's.
func truncate(c *bnode, view string) {
	if view == "cpu" {
		for _, k := range c.ord {
			syncNs, waitNs := classSums(k)
			c.n.SelfNs += k.n.Ns
			c.n.SyncNs += syncNs
			c.n.WaitNs += waitNs
		}
		c.ord, c.kids = nil, nil
		return
	}
	leaves := &bnode{}
	var collect func(p *bnode)
	collect = func(p *bnode) {
		for _, k := range p.ord {
			if isLeafKind(k.n.Kind) {
				l := leaves.child(k.n.Kind, k.n.Name)
				l.n.SelfNs += k.n.SelfNs
				l.n.Ns += k.n.Ns
				l.n.Count += k.n.Count
				l.n.NoCPUAttribution = l.n.NoCPUAttribution || k.n.NoCPUAttribution
				continue
			}
			collect(k)
		}
	}
	collect(c)
	c.ord, c.kids = leaves.ord, leaves.kids
}

// classSums returns the sync and wait self time of a subtree.
func classSums(p *bnode) (syncNs, waitNs int64) {
	syncNs, waitNs = p.n.SyncNs, p.n.WaitNs
	for _, c := range p.ord {
		s, w := classSums(c)
		syncNs += s
		waitNs += w
	}
	return
}

// less orders nodes: "other" last, larger time first, then more blocked
// time, then by name.
func less(a, b *Node) bool {
	if (a.Kind == "other") != (b.Kind == "other") {
		return b.Kind == "other"
	}
	if a.Ns != b.Ns {
		return a.Ns > b.Ns
	}
	if a.BlockedNs != b.BlockedNs {
		return a.BlockedNs > b.BlockedNs
	}
	return a.Name < b.Name
}

func itoa(v int64) string {
	if v == 0 {
		return "0"
	}
	neg := v < 0
	if neg {
		v = -v
	}
	var buf [20]byte
	i := len(buf)
	for v > 0 {
		i--
		buf[i] = byte('0' + v%10)
		v /= 10
	}
	if neg {
		i--
		buf[i] = '-'
	}
	return string(buf[i:])
}
