package report

import (
	"slices"
	"strings"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/findings"
)

// hostFrameMinShare is the share of a rank's GPU idle time that the gaps
// sitting in one frame must hold before a host-bound finding names it and
// lets it pick the branch of the fix: the cross-check keeps only its
// largest gaps, and a frame they show for a small share of the idle says
// little about the rest (our choice).
const hostFrameMinShare = 0.25

// nameHostFrames gives each host-bound finding the frame its rank's longest
// late-launch gaps sit in, when the cross-view shows one (hostFrameOf):
// findings.NameHostFrame rewrites the observation and the fix.
func nameHostFrames(found []evidence.Finding, cv *crossview.Result, f evidence.Filter, ev *evidence.Evidence, gate *findings.Gate, th evidence.Thresholds) []evidence.Finding {
	if cv == nil || !sameTimeScope(cv.Slice, f) {
		return found
	}
	for i := range found {
		x := &found[i]
		if x.Rule != "host_bound_idle" {
			continue
		}
		if at, ok := hostFrameOf(cv.Check.HostStacks, x.Trace, x.Rank, rankIdle(ev, x.Trace, x.Rank), gate.ExcludedIdle(x.Trace, x.Rank)); ok {
			if at.Loader == "" {
				at.Loader, at.NotInLoader = loaderAround(&cv.CPU, at.Stack)
			}
			findings.NameHostFrame(x, ev, th, gate, at)
		}
		torchrecReach(x, cv.Check.HostStacks, ev, rankIdle(ev, x.Trace, x.Rank))
	}
	return found
}

// torchrecSparse says whether a host frame is TorchRec's sparse side: its
// input dist (## sparse_data_dist ##, the KeyedJaggedTensor's splits and
// awaitables) and the pooled embeddings' all-to-alls, which the host fix's
// torch.compile of the dense modules does not reach.
func torchrecSparse(frame string) bool {
	for _, k := range []string{"sparse_data_dist", "Awaitable", "All2All", "all2all", "alltoall", "KJT"} {
		if strings.Contains(frame, k) {
			return true
		}
	}
	return false
}

// torchrecReach bounds a host-bound finding's fix on a TorchRec rank by
// the late-launch gaps the cross-check reads with a stack (Check.HostStacks,
// its longest gaps) whose stack holds TorchRec's sparse side: their share
// of those gaps' time is taken off the finding's share (dlrm_8rank rank 7:
// about a third of them sit in the input dist, awaitables and all-to-alls,
// so the fix reaches about 48% of the span, not 75%). Where those stacks
// hold under hostFrameMinShare of the rank's idle, or none is sparse,
// nothing is said.
func torchrecReach(f *evidence.Finding, stacks []crossview.HostStack, ev *evidence.Evidence, idle int64) {
	if f.Rule != "host_bound_idle" || f.FixReach > 0 || f.ImpactOf == "" || !findings.ReadWorkload(ev, f.Trace, f.Rank).TorchRec {
		return
	}
	var total, sparse int64
	for _, s := range stacks {
		if (s.Trace != "" && s.Trace != f.Trace) || s.Rank != f.Rank {
			continue
		}
		total += s.Ns
		if slices.ContainsFunc(s.Host, torchrecSparse) {
			sparse += s.Ns
		}
	}
	if sparse == 0 || total <= 0 || float64(total) < hostFrameMinShare*float64(idle) {
		return
	}
	f.FixReach = f.Impact * float64(total-sparse) / float64(total)
	f.FixReachOf = "the host waits outside TorchRec's sparse side, which compiling the dense modules does not reach: " + fmtPct(float64(sparse)/float64(total)) +
		" of the " + fmtMs(total) + " in the rank's longest late-launch gaps, whose stacks the cross-check keeps, sit in its input dist, awaitables and all-to-alls (an estimate from those gaps)"
}

// sameTimeScope: the cross-view's slice covers the same time as the view's
// filter (window, phase, step, stream); its ranks may differ, as each gap
// names its own.
func sameTimeScope(s crossview.Slice, f evidence.Filter) bool {
	return s.WindowStartNs == f.WindowStartNs && s.WindowEndNs == f.WindowEndNs && s.Phase == f.Phase &&
		s.HasStep == f.HasStep && (!s.HasStep || s.Step == f.Step) && s.HasStream == f.HasStream && (!s.HasStream || s.Stream == f.Stream)
}

// rankIdle is the rank's GPU idle time inside its GPU span (the ranks
// area's idle_ns, which the cross-check measures the same way).
func rankIdle(ev *evidence.Evidence, trace string, rank int) int64 {
	t := ev.Table("ranks")
	if t == nil {
		return 0
	}
	for r := range t.Rows {
		if evidence.Str(t, r, "trace") == trace && int(evidence.Int(t, r, "rank")) == rank {
			return evidence.Int(t, r, "idle_ns")
		}
	}
	return 0
}

// hostFrameOf finds, among the late-launch gaps (cause host) of one rank
// that the cross-check sums by host stack (Check.HostStacks: of the rank's
// longest gaps), the frame the launching thread was working in at the
// middle of those that hold most of their idle time: a frame of at least
// two of them, holding more than half of those gaps' time and at least
// hostFrameMinShare of the rank's GPU idle the rules judge (idle less
// excluded, the idle inside start-up and held intervals, which must be
// under 1% of the gaps' time: otherwise the gaps may lie in it, outside
// the finding's slice). Of such frames it takes the innermost, except that
// an operator called by another such operator is part of its caller
// (aten::slice under aten::narrow under aten::unflatten_dense_tensors
// names the last); a step annotation (ProfilerStep#N) is no frame to name.
// The python calls the launching thread recorded inside those gaps
// (HostStack.PyCalls, PyNs) come with it, summed over the same gaps.
func hostFrameOf(stacks []crossview.HostStack, trace string, rank int, idle, excluded int64) (findings.HostFrame, bool) {
	idle -= excluded // the idle the rules judge, the host-bound finding's
	if idle <= 0 {
		return findings.HostFrame{}, false
	}
	var mine []crossview.HostStack
	var hostNs int64
	of := 0
	for _, s := range stacks {
		if (s.Trace != "" && s.Trace != trace) || s.Rank != rank {
			continue
		}
		of = s.Of
		mine = append(mine, s)
		hostNs += s.Ns
	}
	type cover struct {
		ns   int64
		n    int
		leaf bool
		// The python calls inside the same gaps (HostStack.PyCalls).
		pyCalls, pyNs int64
	}
	covers := map[string]*cover{}
	for _, s := range mine {
		seen := map[string]bool{}
		for i, name := range s.Host {
			if seen[name] || strings.HasPrefix(name, "ProfilerStep#") {
				continue
			}
			seen[name] = true
			c := covers[name]
			if c == nil {
				c = &cover{leaf: true}
				covers[name] = c
			}
			c.ns += s.Ns
			c.n += s.Gaps
			c.pyCalls += s.PyCalls
			c.pyNs += s.PyNs
			c.leaf = c.leaf && i == len(s.Host)-1
		}
	}
	ok := func(name string) bool {
		c := covers[name]
		return c != nil && c.n >= 2 && 2*c.ns > hostNs && float64(c.ns) >= hostFrameMinShare*float64(idle) && 100*excluded <= c.ns
	}
	// The innermost qualifying frame: none other sits deeper in a stack
	// both are in (the stacks are cut at 4 frames, so a caller may be
	// missing from some); of several, the one holding the most time.
	deeper := map[string]bool{}
	for _, s := range mine {
		inner := false
		for i := len(s.Host) - 1; i >= 0; i-- {
			if ok(s.Host[i]) {
				if inner {
					deeper[s.Host[i]] = true
				}
				inner = true
			}
		}
	}
	var best []string
	pick := -1
	for _, s := range mine {
		for i := len(s.Host) - 1; i >= 0; i-- {
			if name := s.Host[i]; ok(name) && !deeper[name] && (pick < 0 || covers[name].ns > covers[best[pick]].ns) {
				best, pick = s.Host, i
			}
		}
	}
	if pick < 0 {
		return findings.HostFrame{}, false
	}
	for pick > 0 && isOperator(best[pick]) && isOperator(best[pick-1]) && ok(best[pick-1]) {
		pick--
	}
	c := covers[best[pick]]
	at := findings.HostFrame{Name: best[pick], Stack: append([]string(nil), best[:pick+1]...), Leaf: c.leaf,
		Gaps: c.n, Of: of, Ns: c.ns, IdleNs: idle, PyCalls: c.pyCalls, PyNs: c.pyNs}
	// A DataLoader iterator open around the frame in every stack that
	// holds it decides the fix's branch; the stacks are cut at 4 frames,
	// so its absence decides nothing (loaderAround looks further).
	for _, s := range mine {
		if !slices.Contains(s.Host, at.Name) {
			continue
		}
		i := slices.IndexFunc(s.Host, findings.IsDataLoader)
		if i < 0 || i > slices.Index(s.Host, at.Name) {
			at.Loader = ""
			break
		}
		if at.Loader == "" {
			at.Loader = s.Host[i]
		}
	}
	return at, true
}

// loaderAround reads the frame's ancestry in the cross-view's CPU tree
// (the gaps keep only the innermost 4 frames): every node whose stack ends
// with stack, the frames down to the one the gaps sit in. It returns the
// DataLoader iterator frame open around all of their time, or notIn when
// none is open around any of it; neither when the tree holds no such node
// or some of the time lies inside and some outside.
func loaderAround(cpu *crossview.Tree, stack []string) (loader string, notIn bool) {
	if cpu == nil || len(stack) == 0 {
		return "", false
	}
	var in, out int64
	loaders := map[string]bool{}
	var walk func(n *crossview.Node, path []string)
	walk = func(n *crossview.Node, path []string) {
		path = append(append(path, n.Via...), n.Name)
		if len(path) >= len(stack) && slices.Equal(path[len(path)-len(stack):], stack) {
			if i := slices.IndexFunc(path, findings.IsDataLoader); i >= 0 {
				in += n.Ns
				loaders[path[i]] = true
			} else {
				out += n.Ns
			}
			return // a deeper match is part of this one's time
		}
		for _, ch := range n.Children {
			walk(ch, path)
		}
	}
	for _, r := range cpu.Roots {
		walk(r, nil)
	}
	switch {
	case in > 0 && out == 0 && len(loaders) == 1:
		for l := range loaders {
			return l, false
		}
	case out > 0 && in == 0:
		return "", true
	}
	return "", false
}

// isOperator: a frame that is an operator (aten::mm, c10d::broadcast_) or a
// runtime call (cudaMalloc, hipLaunchKernel), not a python frame or an
// annotation.
func isOperator(name string) bool {
	if strings.Contains(name, ".py(") || strings.HasPrefix(name, "<") || strings.Contains(name, " ") {
		return false
	}
	return strings.Contains(name, "::") || strings.HasPrefix(name, "cu") || strings.HasPrefix(name, "hip")
}
