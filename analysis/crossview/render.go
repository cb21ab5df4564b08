package crossview

import (
	"fmt"
	"io"
	"strings"

	"github.com/tracebook/tracebook/analysis/table"
)

// The output formats of Write.
const (
	FormatTree   = "tree"   // text trees drawn with ├── └──, then the cross-check
	FormatHTML   = "html"   // the same as foldable HTML (details/summary), no script
	FormatFolded = "folded" // folded stacks of one view: `frame;frame;kernel N`, N in ns
)

// Write writes a Result in one format. view chooses the tree of the folded
// format ("gpu" or "cpu"); the other formats show both.
func Write(w io.Writer, r *Result, format, view string) error {
	switch format {
	case FormatTree, "":
		return writeText(w, r)
	case FormatHTML:
		return writeHTML(w, r)
	case FormatFolded:
		switch view {
		case "gpu", "":
			return writeFolded(w, &r.GPU)
		case "cpu":
			return writeFolded(w, &r.CPU)
		}
		return fmt.Errorf("unexpected view %q (want gpu or cpu)", view)
	}
	return fmt.Errorf("unexpected output format %v", format)
}

// maxTextName is the longest name the text tree prints before shortening
// its middle (kernel names run to hundreds of characters); HTML and folded
// stacks keep names whole.
const maxTextName = 160

// TextName is a frame's or a kernel's name as a text tree prints it (this
// package's, and the report's in Markdown): past maxTextName code points
// shortened in the middle, its start (a search for it finds it) and its
// end kept.
func TextName(s string) string { return table.ShortenMiddle(s, maxTextName) }

// ms formats nanoseconds as milliseconds, without the unit (the callers
// write it): package table's one duration format, "1,234.568".
func ms(ns int64) string { return table.MsNumber(ns) }

func share100(a, b int64) string {
	if b <= 0 {
		return "0.0%"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
}

// nodeName is the node's name line: the folded chain, the arrow of GPU
// operations, the kernel inlined when a frame launched exactly one.
func nodeName(n *Node, short func(string) string) string {
	chain := make([]string, 0, len(n.Via)+1)
	for _, v := range n.Via {
		chain = append(chain, short(v))
	}
	name := short(n.Name)
	if isGPUKind(n.Kind) {
		name = "→ " + name
	}
	return FoldChain(append(chain, name), " ▸ ")
}

// FoldChain writes a folded chain of frames, outermost first and the
// node's own name last, as the text trees do (%crossview's, and the
// report's in Markdown): up to three names whole, past them the first,
// how many frames lie between and the last ("a ▸ … 3 frames … ▸ z"): a
// line a reader scans, where a python stack folds into dozens of frames.
// The HTML report keeps the whole chain.
func FoldChain(chain []string, sep string) string {
	if len(chain) <= 3 {
		return strings.Join(chain, sep)
	}
	return fmt.Sprintf("%s%s… %d frames …%s%s", chain[0], sep, len(chain)-2, sep, chain[len(chain)-1])
}

func isGPUKind(kind string) bool {
	return kind == "kernel" || kind == "gpu_memcpy" || kind == "gpu_memset"
}

// inlineLeaf returns the only child of a frame when it is a GPU operation:
// the text draws it on the frame's line, `frame  → kernel`, as the seed does.
func inlineLeaf(n *Node) *Node {
	if len(n.Children) == 1 && isGPUKind(n.Children[0].Kind) && !isGPUKind(n.Kind) && n.Graph == nil {
		return n.Children[0]
	}
	return nil
}

// nodeFacts is the numbers after a node's name.
func nodeFacts(n *Node, view string, total int64) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s (%s ms", share100(n.Ns, total), ms(n.Ns))
	if n.Count > 1 {
		fmt.Fprintf(&sb, ", %d×", n.Count)
	}
	sb.WriteString(")")
	if view == "cpu" && n.SelfNs > 0 && len(n.Children) > 0 {
		fmt.Fprintf(&sb, " self %s ms", ms(n.SelfNs))
	}
	if view == "cpu" && n.WaitNs > 0 {
		fmt.Fprintf(&sb, " ⏳ waiting %s ms", ms(n.WaitNs))
	}
	if view == "cpu" && n.PollNs > 0 {
		fmt.Fprintf(&sb, " ⚠️ polling the device %s ms", ms(n.PollNs))
	}
	if view == "cpu" && n.QueueFullNs > 0 {
		fmt.Fprintf(&sb, " ⚠️ launch queue full %s ms", ms(n.QueueFullNs))
	}
	if n.Sync {
		fmt.Fprintf(&sb, " ⚠️ sync, host blocked %s ms", ms(n.BlockedNs))
		if n.GapNs > 0 {
			fmt.Fprintf(&sb, ", opened %s ms of GPU idle", ms(n.GapNs))
		}
	}
	if g := n.Graph; g != nil && g.Known() {
		fmt.Fprintf(&sb, " [graph: %d replays, %d of %d kernels recorded (%.1f%%), no per-kernel CPU attribution]",
			g.Replays, g.Recorded, g.Expected, 100*g.Coverage())
	} else if g != nil {
		fmt.Fprintf(&sb, " [graph: %d replays, %d kernels recorded, no graph ids: whether every node was recorded is unknown; no per-kernel CPU attribution]",
			g.Replays, g.Recorded)
	}
	if n.NoCPUAttribution {
		sb.WriteString(" (graph replay)")
	}
	return sb.String()
}

func writeText(w io.Writer, r *Result) error {
	ew := &errWriter{w: w}
	m := r.Check.Metrics
	fmt.Fprintf(ew, "GPU view: GPU time by the host stack that launched it (%s)\n", r.Label)
	fmt.Fprintf(ew, "%s ms of GPU time; GPU busy %s of the %s ms GPU span\n", ms(r.GPU.TotalNs), share100(m.BusyNs, m.SpanNs()), ms(m.SpanNs()))
	if n := stackNote(r); n != "" {
		fmt.Fprintln(ew, n)
	}
	fmt.Fprintln(ew)
	textTree(ew, &r.GPU)
	fmt.Fprintf(ew, "\nCPU view: host self time by stack (%s)\n", r.Label)
	host := r.CPU.TotalNs
	var syncNs, waitNs int64
	for _, n := range r.CPU.Roots {
		s, w := nodeClass(n)
		syncNs += s
		waitNs += w
	}
	fmt.Fprintf(ew, "%s ms of host self time: working %s ms, blocked (%s) %s ms, waiting (for work, data or the backward) %s ms\n",
		ms(host), ms(host-syncNs-waitNs), blockedIn, ms(syncNs), ms(waitNs))
	if n := stackNote(r); n != "" {
		fmt.Fprintln(ew, n)
	}
	fmt.Fprintln(ew)
	textTree(ew, &r.CPU)
	fmt.Fprintf(ew, "\nCross-check (%s)\n", r.Label)
	writeCheckText(ew, r)
	return ew.err
}

// stackNote says where the python levels of the trees come from when
// operators' Call stack args gave them; "" otherwise.
func stackNote(r *Result) string {
	n := r.Check.Metrics.CallStackOps
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("Python frames above operators (%s) come from the \"Call stack\" arg of %d operators: they carry no time of their own", KindCallStack, n)
}

// nodeClass sums a subtree's sync and wait self time.
func nodeClass(n *Node) (syncNs, waitNs int64) {
	syncNs, waitNs = n.SyncNs, n.WaitNs
	for _, c := range n.Children {
		s, w := nodeClass(c)
		syncNs += s
		waitNs += w
	}
	return
}

func textTree(w io.Writer, t *Tree) {
	if len(t.Roots) == 0 {
		fmt.Fprintln(w, "(empty)")
		return
	}
	var walk func(n *Node, prefix string, last, top bool)
	walk = func(n *Node, prefix string, last, top bool) {
		conn, next := "├── ", prefix+"│   "
		if last {
			conn, next = "└── ", prefix+"    "
		}
		if top {
			conn, next = "", ""
		}
		line := nodeName(n, TextName)
		kids := n.Children
		if leaf := inlineLeaf(n); leaf != nil {
			line += "  " + nodeName(leaf, TextName)
			kids = nil
			if leaf.NoCPUAttribution {
				n = &Node{Ns: n.Ns, Count: n.Count, Sync: n.Sync, BlockedNs: n.BlockedNs, NoCPUAttribution: true}
			}
		}
		fmt.Fprintf(w, "%s%s%s  %s\n", prefix, conn, line, nodeFacts(n, t.View, t.TotalNs))
		for i, c := range kids {
			walk(c, next, i == len(kids)-1, false)
		}
	}
	for _, n := range t.Roots {
		walk(n, "", true, true)
	}
}

func writeCheckText(w io.Writer, r *Result) {
	c := &r.Check
	m := c.Metrics
	fmt.Fprintf(w, "GPU busy %s of the %s ms GPU span; GPU time %s ms; exposed communication %s ms\n",
		share100(m.BusyNs, m.SpanNs()), ms(m.SpanNs()), ms(m.GPUTimeNs), ms(m.CommExposedNs))
	if len(c.TopGaps) > 0 {
		fmt.Fprintln(w, "Largest GPU idle gaps and the launching thread's host frames:")
		for i, g := range c.TopGaps {
			host := "no host frame open"
			if len(g.Host) > 0 {
				parts := make([]string, len(g.Host))
				for k, h := range g.Host {
					parts[k] = TextName(h)
				}
				host = strings.Join(parts, " ▸ ") + " [" + g.HostClass + "]"
			}
			fmt.Fprintf(w, "  %d. rank %d at %s ms: %s ms idle, cause %s; host in %s\n", i+1, g.Rank, ms(g.StartNs), ms(g.DurNs), g.Cause, host)
		}
	}
	for _, n := range c.Notes {
		fmt.Fprintf(w, "Note: %s\n", n)
	}
	label := ""
	if c.Label != "" {
		label = " (" + c.Label + ")"
	}
	fmt.Fprintf(w, "Verdict: %s%s. %s\n", c.Verdict, label, c.Reason)
	if len(r.Gaps) > 0 {
		fmt.Fprintln(w, "Evidence gaps:")
		for _, g := range r.Gaps {
			fmt.Fprintf(w, "  - %s\n", g)
		}
	}
}

// HTML: every string from the trace goes through table.EscapeHTML; there
// is no script, so the output is safe to show in an untrusted notebook.
func writeHTML(w io.Writer, r *Result) error {
	ew := &errWriter{w: w}
	esc := table.EscapeHTML
	m := r.Check.Metrics
	fmt.Fprintf(ew, "<div class=\"tracebook-crossview\">\n")
	note := ""
	if n := stackNote(r); n != "" {
		note = " " + esc(n) + "."
	}
	fmt.Fprintf(ew, "<h3>GPU view: GPU time by the host stack that launched it</h3>\n<p>%s. %s ms of GPU time; GPU busy %s of the %s ms GPU span.%s</p>\n",
		esc(r.Label), ms(r.GPU.TotalNs), share100(m.BusyNs, m.SpanNs()), ms(m.SpanNs()), note)
	htmlTree(ew, &r.GPU)
	fmt.Fprintf(ew, "<h3>CPU view: host self time by stack</h3>\n<p>%s. %s ms of host self time.%s</p>\n", esc(r.Label), ms(r.CPU.TotalNs), note)
	htmlTree(ew, &r.CPU)
	fmt.Fprintf(ew, "<h3>Cross-check</h3>\n<pre>")
	var sb strings.Builder
	writeCheckText(&sb, r)
	ew.WriteString(esc(sb.String()))
	fmt.Fprintf(ew, "</pre>\n</div>\n")
	return ew.err
}

func htmlTree(w *errWriter, t *Tree) {
	esc := table.EscapeHTML
	if len(t.Roots) == 0 {
		w.WriteString("<p>(empty)</p>\n")
		return
	}
	ident := func(s string) string { return s }
	var walk func(n *Node, level int)
	walk = func(n *Node, level int) {
		line := esc(nodeName(n, ident))
		kids := n.Children
		facts := n
		if leaf := inlineLeaf(n); leaf != nil {
			line += "&nbsp;&nbsp;" + esc(nodeName(leaf, ident))
			kids = nil
			if leaf.NoCPUAttribution {
				facts = &Node{Ns: n.Ns, Count: n.Count, Sync: n.Sync, BlockedNs: n.BlockedNs, NoCPUAttribution: true}
			}
		}
		code := "<code>"
		if len(n.Via) > 1 {
			// The folded chain in full, on hover.
			code = "<code title=\"" + esc(strings.Join(append(append([]string{}, n.Via...), n.Name), " ▸ ")) + "\">"
		}
		label := code + line + "</code> " + esc(nodeFacts(facts, t.View, t.TotalNs))
		if len(kids) == 0 {
			fmt.Fprintf(w, "<li>%s</li>\n", label)
			return
		}
		open := ""
		if level < 2 {
			open = " open"
		}
		fmt.Fprintf(w, "<li><details%s><summary>%s</summary>\n<ul>\n", open, label)
		for _, c := range kids {
			walk(c, level+1)
		}
		w.WriteString("</ul>\n</details></li>\n")
	}
	w.WriteString("<ul style=\"list-style:none;padding-left:1.2em\">\n")
	for _, n := range t.Roots {
		walk(n, 0)
	}
	w.WriteString("</ul>\n")
}

// writeFolded writes one tree as folded stacks, one line per node with time
// of its own: `frame;frame;leaf N`, N in nanoseconds. flamegraph.pl and
// speedscope read it.
func writeFolded(w io.Writer, t *Tree) error {
	ew := &errWriter{w: w}
	var path []string
	var walk func(n *Node)
	walk = func(n *Node) {
		k := len(path)
		for _, v := range n.Via {
			path = append(path, foldedName(v))
		}
		path = append(path, foldedName(n.Name))
		if n.SelfNs > 0 {
			fmt.Fprintf(ew, "%s %d\n", strings.Join(path, ";"), n.SelfNs)
		}
		for _, c := range n.Children {
			walk(c)
		}
		path = path[:k]
	}
	for _, n := range t.Roots {
		walk(n)
	}
	return ew.err
}

// foldedName makes a name safe for the folded format: no ';' (the frame
// separator) and no line breaks.
func foldedName(s string) string {
	if !strings.ContainsAny(s, ";\n\r") {
		return s
	}
	return strings.NewReplacer(";", ":", "\n", " ", "\r", " ").Replace(s)
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) WriteString(s string) { _, _ = e.Write([]byte(s)) }
