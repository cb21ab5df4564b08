package report

import (
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/crossview"
)

// gpuTree turns the cross-view's GPU view into the report's tree: host
// frames down to the runtime call, and each GPU operation as a `→ kernel`
// leaf; sync frames carry ⚠️. Shares are of the view's GPU time.
func gpuTree(r *crossview.Result) *Tree {
	if r == nil || len(r.GPU.Roots) == 0 || r.GPU.TotalNs <= 0 {
		// cupti_profiler's roots are host syncs over no GPU time: a tree
		// of 0 ms at 100% says nothing (bundle.go says why there is none).
		return nil
	}
	total := r.GPU.TotalNs
	// Operations on concurrent streams each count their own time, so the
	// tree's total can exceed the GPU's busy time (the union); the root
	// says which one it is.
	name := "GPU time"
	if busy := r.Check.Metrics.BusyNs; busy > 0 && total > busy+busy/100 {
		gpus := "the GPU was busy " + fmtMs(busy)
		if n := r.Check.Metrics.Ranks; n > 1 {
			// dlrm_8rank: 55.9 ms over 8 GPUs, 2.7-12.3 ms each.
			gpus = "the " + strconv.Itoa(n) + " ranks' GPUs were busy " + fmtMs(busy) + ", summed"
		}
		name = "GPU operation time, summed over concurrent streams (" + gpus + ")"
	}
	root := Node{ID: "gpu", Name: name, GPUNs: total, Share: 1, Children: []Node{}}
	for i, n := range r.GPU.Roots {
		root.Children = append(root.Children, convertNode(n, "gpu/"+strconv.Itoa(i), total))
	}
	where := r.Label
	if where == "" {
		where = "all loaded traces"
	}
	return &Tree{Where: where, Root: root}
}

func convertNode(n *crossview.Node, id string, total int64) Node {
	out := Node{ID: id, GPUNs: n.Ns, Share: shareOf(n.Ns, total), Sync: n.Sync, Children: []Node{}}
	name := n.Name
	if len(n.Via) > 0 {
		name = strings.Join(n.Via, " › ") + " › " + name
	}
	switch n.Kind {
	case "kernel", "gpu_memcpy", "gpu_memset":
		out.Kernel = n.Name
		if n.NoCPUAttribution {
			out.Kernel += " (graph replay, no per-kernel CPU attribution)"
		}
	default:
		out.Name = name
	}
	if n.Sync && n.BlockedNs > 0 && out.Name != "" {
		out.Name += " (host blocked " + fmtMs(n.BlockedNs) + ")"
	}
	if n.Kind == "other" {
		out.Folded = int(n.Count)
	}
	if n.Graph.Known() {
		out.Name += " [graph: " + fmtInt(n.Graph.Replays) + " replays, " + fmtPct(n.Graph.Coverage()) + " of kernels recorded]"
	} else if n.Graph != nil {
		out.Name += " [graph: " + plural(n.Graph.Replays, "replay", "replays") + "; no graph ids, so whether every node was recorded is unknown]"
	}
	// A frame with one GPU-op child and nothing else reads as "frame → kernel".
	if len(n.Children) == 1 && isGPUOp(n.Children[0]) && out.Kernel == "" {
		out.Kernel = n.Children[0].Name
		return out
	}
	for i, c := range n.Children {
		out.Children = append(out.Children, convertNode(c, id+"/"+strconv.Itoa(i), total))
	}
	return out
}

func isGPUOp(n *crossview.Node) bool {
	return n.Kind == "kernel" || n.Kind == "gpu_memcpy" || n.Kind == "gpu_memset"
}

// cpuCheck words the cross-check: which side is the constraint, and why.
// label is the verdict's confidence after the capture gate (crossLabel);
// capped says why the gate lowered it.
func cpuCheck(r *crossview.Result, label, capped string) string {
	if r == nil {
		return "No cross-view in this bundle: run %crossview with the same filter to compare the host and the GPU."
	}
	c := r.Check
	var b strings.Builder
	if c.Verdict != "" {
		b.WriteString("Verdict: " + c.Verdict)
		if label != "" {
			b.WriteString(" (" + label + ")")
		}
		b.WriteString(". ")
	}
	if capped != "" {
		b.WriteString("Confidence capped by the capture: " + capped + ". ")
	}
	if c.Reason != "" {
		b.WriteString(c.Reason + " ")
	}
	for _, n := range c.Notes {
		b.WriteString(n + " ")
	}
	return strings.TrimSpace(b.String())
}

// gapInspects points the Perfetto guide at the cross-view's largest GPU
// idle gaps, up to three: where they are and what the launching thread was
// doing. A gap shorter than crossview.KernelWaitMaxNs is the device's own
// time between queued kernels, nothing to look for in a trace: a GPU that
// ran its work back to back (vllm_decode_full_mi300x's largest gaps are
// 3-12 µs) gets no such pointer.
func gapInspects(r *crossview.Result) []Inspect {
	var out []Inspect
	for _, g := range r.Check.TopGaps {
		if len(out) == 3 {
			break
		}
		if g.DurNs < crossview.KernelWaitMaxNs {
			continue
		}
		what := "GPU idle " + fmtMs(g.DurNs) + " (cause: " + g.Cause + ")"
		thread := "the thread that launches kernels"
		if len(g.Host) > 0 {
			what += "; the launching thread was " + g.HostClass + " in " + g.Host[len(g.Host)-1]
			thread += " (stack: " + strings.Join(g.Host, " › ") + ")"
		}
		out = append(out, Inspect{What: what, Process: "rank " + strconv.Itoa(g.Rank) + ": GPU streams, then the host process",
			Thread: thread, StartNs: g.StartNs, EndNs: g.StartNs + g.DurNs})
	}
	return out
}
