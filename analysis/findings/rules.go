package findings

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/tracebook/tracebook/analysis/evidence"
)

func ref(preset string, kv ...string) evidence.Ref {
	r := evidence.Ref{Preset: preset, Where: map[string]string{}}
	for i := 0; i+1 < len(kv); i += 2 {
		r.Where[kv[i]] = kv[i+1]
	}
	return r
}

func itoa(i int) string { return fmt.Sprint(i) }

// syncBound: blocking syncs that drain the GPU. Confirmed where the sync
// rows show a GPU gap opened by the call in the same rank and step (the
// preset links them); a sync with blocked host time and no gap stays a
// hypothesis.
func syncBound(c *ctx) []evidence.Finding {
	t := c.ev.Table("sync")
	if t == nil {
		return nil
	}
	type acc struct {
		gap, blocked, calls, gaps int64
		top                       int
		topScore                  int64
	}
	per := map[string]*acc{}
	var cs []cand
	for r := range t.Rows {
		if !evidence.Bool(t, r, "blocking") {
			continue
		}
		// Large pageable copies belong to the pageable_copies rule.
		if n := evidence.Int(t, r, "count"); evidence.Bool(t, r, "pageable") && n > 0 &&
			float64(evidence.Int(t, r, "bytes"))/float64(n) > c.th["pageable_min_bytes"] {
			continue
		}
		k := key(evidence.Str(t, r, "trace"), int(evidence.Int(t, r, "rank")))
		a := per[k]
		if a == nil {
			a = &acc{top: -1}
			per[k] = a
		}
		a.gap += evidence.Int(t, r, "gpu_gap_ns")
		a.blocked += evidence.Int(t, r, "blocked_ns")
		a.calls += evidence.Int(t, r, "count")
		a.gaps += evidence.Int(t, r, "gaps")
		score := evidence.Int(t, r, "gpu_gap_ns")*4 + evidence.Int(t, r, "blocked_ns")
		if a.top < 0 || score > a.topScore {
			a.top, a.topScore = r, score
		}
	}
	for k, a := range per {
		parts := strings.SplitN(k, "\x00", 2)
		var rank int
		fmt.Sscan(parts[1], &rank)
		span := c.span(parts[0], rank)
		if span <= 0 {
			continue
		}
		share := float64(a.gap) / float64(span)
		if share >= c.th["sync_gap_minor"] || float64(a.blocked)/float64(span) >= c.th["sync_blocked_minor"] {
			cs = append(cs, cand{trace: parts[0], rank: rank, score: share + float64(a.blocked)/float64(span)/10})
		}
	}
	best, counts := worstPerTrace(cs)
	var out []evidence.Finding
	for _, b := range best {
		a := per[key(b.trace, b.rank)]
		ri := c.rankInfo(b.trace, b.rank)
		span := c.span(b.trace, b.rank)
		share := float64(a.gap) / float64(span)
		r := a.top
		call, op, trig := evidence.Str(t, r, "call"), evidence.Str(t, r, "op"), evidence.Str(t, r, "trigger")
		dir := evidence.Str(t, r, "direction")
		what := call
		if dir != "" {
			what = fmt.Sprintf("%s (%s copy)", call, dir)
		}
		issuer := "with no enclosing operator (an explicit synchronize)"
		if op != "" {
			issuer = "issued by " + op
		}
		f := evidence.Finding{Trace: b.trace, Rank: b.rank,
			Evidence: []evidence.Ref{ref("sync", "rank", itoa(b.rank), "call", call, "op", op), ref("ranks", "rank", itoa(b.rank))},
			Impact:   share,
			Scope:    evidence.Scope{Producers: []string{ri.Producer}, Platforms: []string{ri.Platform}},
		}
		confirmed := a.gaps > 0 && share >= c.th["sync_gap_minor"] && !c.hasGap(b.trace, b.rank, evidence.GapGraphUnderRecord)
		f.Observation = fmt.Sprintf("%d blocking sync calls blocked the host for %s in total and opened %d GPU gaps totalling %s, %s of the GPU span (%s)%s; the largest contributor is %s %s (%d calls, %s blocked, %s of GPU gap).",
			a.calls, ms(a.blocked), a.gaps, ms(a.gap), pct(share), c.where(b.trace, b.rank), others(counts[b.trace]),
			what, issuer, evidence.Int(t, r, "count"), ms(evidence.Int(t, r, "blocked_ns")), ms(evidence.Int(t, r, "gpu_gap_ns")))
		if a.gaps == 0 {
			f.Observation = fmt.Sprintf("%d blocking sync calls blocked the host for %s in total, %s of the GPU span, with no GPU gap linked to them (%s)%s; the largest contributor is %s %s (%d calls, %s blocked).",
				a.calls, ms(a.blocked), pct(float64(a.blocked)/float64(span)), c.where(b.trace, b.rank), others(counts[b.trace]),
				what, issuer, evidence.Int(t, r, "count"), ms(evidence.Int(t, r, "blocked_ns")))
		}
		if confirmed {
			f.Status = "confirmed"
			f.Severity = severity(share, c.th["sync_gap_critical"])
			f.Title = "Host syncs drain the GPU and leave it idle until the next launch"
			f.Mechanism = "In the same rank and step, the GPU finished its queued work while the host was blocked in the call, and stayed idle until the host launched again: the gap starts inside the sync and ends at the next GPU start."
		} else {
			f.Status = "hypothesis"
			f.Severity = "minor"
			f.Title = "The host blocks in syncs; no GPU gap is linked to them"
			f.Impact = float64(a.blocked) / float64(span) / 10
		}
		switch ri.Producer {
		case "vllm":
			f.Fix = "Let the scheduler overlap the sampled-token copy with the next step: enable vLLM's async scheduling."
			f.Snippet = "vllm serve MODEL --async-scheduling"
		case "sglang":
			f.Fix = "Keep SGLang's overlap scheduler on (do not pass --disable-overlap-schedule), which hides the per-step result copy."
		default:
			switch trig {
			case "item":
				f.Fix = "Keep the scalar on the GPU and read it once per logging interval, or batch several scalars into one transfer."
				f.Snippet = "total += loss.detach()  # call .item() once per N steps"
			case "dynamic_shape":
				f.Fix = "Replace the data-dependent shape (nonzero, boolean mask) with a fixed-shape form."
				f.Snippet = "x = torch.where(mask, x, torch.zeros_like(x))"
			case "to_host":
				f.Fix = "Copy to a pinned host buffer without blocking and read it after an event, or defer the copy to the end of the step."
				f.Snippet = "y_cpu = y.to(\"cpu\", non_blocking=True)  # then event.synchronize() before reading"
			default:
				f.Fix = "Remove the explicit synchronize from the loop; order work with events or stream waits instead."
				f.Snippet = "torch.cuda.set_sync_debug_mode(\"warn\")  # reports every sync with its stack"
			}
		}
		f.Verify = "Re-profile: the sync rows' gpu_gap_ns should drop and ranks.idle_ns with it; torch.cuda.set_sync_debug_mode(\"warn\") lists the remaining syncs."
		f.Refute = "The GPU gaps persist with the syncs removed, or the next launch call started before the GPU drained (then the gap is launch latency, not the sync)."
		out = append(out, f)
	}
	return out
}

// pageable: copies whose Kineto name says Pageable (the platform names the
// memory kind; rows where it does not are never considered).
func pageable(c *ctx) []evidence.Finding {
	t := c.ev.Table("memcpy")
	if t == nil {
		return nil
	}
	type acc struct {
		bytes, count, host, gpu int64
		dirs                    map[string]bool
	}
	per := map[string]*acc{}
	for r := range t.Rows {
		src, dst := evidence.Str(t, r, "src"), evidence.Str(t, r, "dst")
		if src != "Pageable" && dst != "Pageable" {
			continue
		}
		n := evidence.Int(t, r, "count")
		by := evidence.Int(t, r, "bytes")
		if n == 0 || float64(by)/float64(n) <= c.th["pageable_min_bytes"] {
			continue
		}
		k := key(evidence.Str(t, r, "trace"), int(evidence.Int(t, r, "rank")))
		a := per[k]
		if a == nil {
			a = &acc{dirs: map[string]bool{}}
			per[k] = a
		}
		a.bytes += by
		a.count += n
		a.host += evidence.Int(t, r, "host_ns")
		a.gpu += evidence.Int(t, r, "total_ns")
		a.dirs[evidence.Str(t, r, "direction")] = true
	}
	var cs []cand
	for k, a := range per {
		parts := strings.SplitN(k, "\x00", 2)
		var rank int
		fmt.Sscan(parts[1], &rank)
		span := c.span(parts[0], rank)
		score := float64(a.host)
		if span > 0 {
			score = float64(a.host) / float64(span)
		}
		cs = append(cs, cand{trace: parts[0], rank: rank, score: score})
	}
	best, counts := worstPerTrace(cs)
	var out []evidence.Finding
	for _, b := range best {
		a := per[key(b.trace, b.rank)]
		ri := c.rankInfo(b.trace, b.rank)
		span := c.span(b.trace, b.rank)
		share := 0.0
		if span > 0 {
			share = float64(a.host) / float64(span)
		}
		var dirs []string
		for d := range a.dirs {
			dirs = append(dirs, d)
		}
		sort.Strings(dirs)
		f := evidence.Finding{Trace: b.trace, Rank: b.rank, Status: "confirmed", Severity: severity(share, c.th["pageable_critical"]),
			Title: "Host copies go through pageable memory and block the host",
			Observation: fmt.Sprintf("%d %s copies moved %.1f MB through pageable host memory; their launching calls blocked the host for %s (%s of the GPU span) for %s of GPU copy time (%s)%s.",
				a.count, strings.Join(dirs, "/"), float64(a.bytes)/1e6, ms(a.host), pct(share), ms(a.gpu), c.where(b.trace, b.rank), others(counts[b.trace])),
			Mechanism: "The copy's name records pageable host memory: the driver stages it through a pinned bounce buffer, so the call returns only when the copy is done.",
			Evidence:  []evidence.Ref{ref("memcpy", "rank", itoa(b.rank), "src|dst", "Pageable")},
			Impact:    share,
			Scope:     evidence.Scope{Producers: []string{ri.Producer}, Platforms: []string{ri.Platform}, Capture: []string{"memory kinds in copy names"}},
			Verify:    "Re-profile: the copies should read Pinned, and their calls return in microseconds.",
			Refute:    "The calls' durations do not shrink with pinned buffers (then they wait for queued work, not for staging).",
		}
		if ri.Producer == "training" {
			f.Fix = "Pin the host batches and copy them asynchronously."
			f.Snippet = "DataLoader(ds, batch_size=B, pin_memory=True); x = x.to(\"cuda\", non_blocking=True)"
		} else {
			f.Fix = "Allocate the host-side buffers pinned and copy them with non_blocking=True."
			f.Snippet = "buf = torch.empty(shape, dtype=dtype, pin_memory=True)"
		}
		out = append(out, f)
	}
	return out
}

// idleUnreliable: idle findings are never made where graph replay was
// under-recorded or no GPU events exist.
func (c *ctx) idleUnreliable(trace string, rank int) bool {
	return c.hasGap(trace, rank, evidence.GapGraphUnderRecord) || c.hasGap(trace, rank, evidence.GapNoGPUEvents)
}

func hostBound(c *ctx) []evidence.Finding {
	g := c.ev.Table("gaps")
	if g == nil {
		return nil
	}
	var cs []cand
	for _, rr := range c.ranks {
		span := rr.busy + rr.idle
		if span <= 0 || c.idleUnreliable(rr.trace, rr.rank) {
			continue
		}
		hw := sumBy(g, rr.trace, rr.rank, "idle_ns", func(r int) bool { return evidence.Str(g, r, "category") == "host_wait" })
		if hw > rr.idle {
			hw = rr.idle
		}
		share := float64(hw) / float64(span)
		if share >= c.th["host_wait_minor"] {
			cs = append(cs, cand{trace: rr.trace, rank: rr.rank, score: share})
		}
	}
	best, counts := worstPerTrace(cs)
	var out []evidence.Finding
	for _, b := range best {
		ri := c.rankInfo(b.trace, b.rank)
		span := c.span(b.trace, b.rank)
		var idle int64
		for _, rr := range c.ranks {
			if rr.trace == b.trace && rr.rank == b.rank {
				idle = rr.idle
			}
		}
		f := evidence.Finding{Trace: b.trace, Rank: b.rank, Status: "confirmed",
			Severity: severity(b.score, c.th["host_wait_critical"]),
			Title:    "The GPU waits for the CPU to launch work",
			Observation: fmt.Sprintf("The GPU was idle %s of its span (%s); %s of the span (at most %s) were host waits, intervals after which the next kernel's launch call started only once the GPU was already idle (%s)%s.",
				pct(float64(idle)/float64(span)), ms(idle), pct(b.score), ms(int64(b.score*float64(span))), c.where(b.trace, b.rank), others(counts[b.trace])),
			Mechanism: "HTA's host-wait test: the launching runtime call of the kernel after each gap started after the previous kernel on that stream ended.",
			Evidence:  []evidence.Ref{ref("gaps", "rank", itoa(b.rank), "category", "host_wait"), ref("ranks", "rank", itoa(b.rank))},
			Impact:    b.score,
			Scope:     evidence.Scope{Producers: []string{ri.Producer}, Platforms: []string{ri.Platform}},
			Verify:    "Re-profile: gaps.host_wait idle_ns and ranks.idle_ns should fall together.",
			Refute:    "The CPU side of the cross-view shows the host idle too during those gaps (then something else, e.g. a remote dependency, delays both).",
		}
		switch ri.Producer {
		case "vllm":
			f.Fix = "Overlap the scheduler's CPU work with the GPU: enable async scheduling, and keep CUDA graphs on."
			f.Snippet = "vllm serve MODEL --async-scheduling"
		case "sglang":
			f.Fix = "Keep the overlap scheduler and CUDA graphs on (no --disable-overlap-schedule, no --disable-cuda-graph)."
		default:
			f.Fix = "Shorten the CPU work between launches (the cross-view's CPU side names it): fuse small ops with torch.compile, move data preparation off the training thread."
			f.Snippet = "model = torch.compile(model)"
		}
		out = append(out, f)
	}
	return out
}

func launchBound(c *ctx) []evidence.Finding {
	l := c.ev.Table("launch")
	if l == nil {
		return nil
	}
	g := c.ev.Table("gaps")
	var cs []cand
	type acc struct{ launches, short, graphs, withGPU, shortCPU int64 }
	per := map[string]*acc{}
	for _, rr := range c.ranks {
		span := rr.busy + rr.idle
		if span <= 0 || c.idleUnreliable(rr.trace, rr.rank) {
			continue
		}
		a := &acc{}
		for r := range l.Rows {
			if evidence.Str(l, r, "trace") != rr.trace || int(evidence.Int(l, r, "rank")) != rr.rank {
				continue
			}
			call := evidence.Str(l, r, "call")
			if strings.Contains(call, "GraphLaunch") {
				a.graphs += evidence.Int(l, r, "launches")
				continue
			}
			a.launches += evidence.Int(l, r, "launches")
			a.withGPU += evidence.Int(l, r, "with_gpu")
			a.short += evidence.Int(l, r, "short")
			a.shortCPU += evidence.Int(l, r, "short_cpu_ns")
		}
		per[key(rr.trace, rr.rank)] = a
		idle := float64(rr.idle) / float64(span)
		if a.withGPU >= int64(c.th["launch_min_count"]) && float64(a.short)/float64(a.withGPU) >= c.th["short_kernel_share"] && idle >= c.th["launch_idle_minor"] {
			cs = append(cs, cand{trace: rr.trace, rank: rr.rank, score: idle})
		}
	}
	best, counts := worstPerTrace(cs)
	var out []evidence.Finding
	for _, b := range best {
		a := per[key(b.trace, b.rank)]
		ri := c.rankInfo(b.trace, b.rank)
		waits := sumBy(g, b.trace, b.rank, "idle_ns", func(r int) bool { return evidence.Str(g, r, "category") != "other" })
		all := sumBy(g, b.trace, b.rank, "idle_ns", nil)
		f := evidence.Finding{Trace: b.trace, Rank: b.rank, Severity: severity(b.score, c.th["idle_critical"]),
			Title: "Kernels are shorter than their launches: the GPU is launch-bound",
			Observation: fmt.Sprintf("%d of %d launched kernels (%s) ran shorter than their launch call took (HTA short kernels: cpu <= 50 us, gpu < cpu), and the GPU was idle %s of its span (%s)%s.",
				a.short, a.withGPU, pct(float64(a.short)/float64(a.withGPU)), pct(b.score), c.where(b.trace, b.rank), others(counts[b.trace])),
			Evidence: []evidence.Ref{ref("launch", "rank", itoa(b.rank)), ref("gaps", "rank", itoa(b.rank)), ref("ranks", "rank", itoa(b.rank))},
			Impact:   b.score,
			Scope:    evidence.Scope{Producers: []string{ri.Producer}, Platforms: []string{ri.Platform}},
			Verify:   "Re-profile: launch.short and ranks.idle_ns should fall; kernels should appear under graph launches.",
			Refute:   "The idle intervals are not host or kernel waits (HTA 'other': cross-stream waits), or kernels are long compared with their launches.",
		}
		if all > 0 && float64(waits) >= 0.5*float64(all) {
			f.Status = "confirmed"
			f.Mechanism = fmt.Sprintf("%s of the per-stream idle time are host or kernel waits (the next launch came late, or back-to-back kernels waited on launch overhead) in the same rank.", pct(float64(waits)/float64(all)))
		} else {
			f.Status = "hypothesis"
			f.Severity = "minor"
		}
		switch ri.Producer {
		case "vllm":
			if a.graphs == 0 {
				f.Title = "vLLM runs eagerly: no CUDA graphs, the GPU waits on kernel launches"
				f.Fix = "Run with CUDA graphs: drop --enforce-eager so vLLM captures its default FULL_AND_PIECEWISE graphs."
				f.Snippet = "vllm serve MODEL  # without --enforce-eager"
			} else {
				f.Fix = "Make the eager part smaller: check that the batch sizes seen fall inside the captured graph sizes (--max-num-seqs, compilation_config cudagraph_capture_sizes)."
			}
		case "sglang":
			f.Fix = "Keep CUDA graphs on and covering the batch (no --disable-cuda-graph; raise --cuda-graph-max-bs to the batch size)."
		default:
			f.Fix = "Replay the launch-bound region as a graph: compile it with CUDA graphs, or fuse the small ops."
			f.Snippet = "model = torch.compile(model, mode=\"reduce-overhead\")"
		}
		out = append(out, f)
	}
	return out
}

func straggler(c *ctx) []evidence.Finding {
	byTrace := map[string][]rankRow{}
	var traces []string
	for _, rr := range c.ranks {
		if rr.busy <= 0 {
			continue
		}
		if _, ok := byTrace[rr.trace]; !ok {
			traces = append(traces, rr.trace)
		}
		byTrace[rr.trace] = append(byTrace[rr.trace], rr)
	}
	sort.Strings(traces)
	var out []evidence.Finding
	for _, tr := range traces {
		rs := byTrace[tr]
		if len(rs) < 2 {
			continue
		}
		comp := make([]int64, len(rs))
		for i, r := range rs {
			comp[i] = r.compute
		}
		sort.Slice(comp, func(i, j int) bool { return comp[i] < comp[j] })
		med := comp[len(comp)/2]
		if len(comp)%2 == 0 {
			med = (comp[len(comp)/2-1] + comp[len(comp)/2]) / 2
		}
		top := rs[0]
		minComm := rs[0]
		for _, r := range rs {
			if r.compute > top.compute || (r.compute == top.compute && r.rank < top.rank) {
				top = r
			}
			if r.comm < minComm.comm || (r.comm == minComm.comm && r.rank < minComm.rank) {
				minComm = r
			}
		}
		if med <= 0 {
			continue
		}
		ratio := float64(top.compute)/float64(med) - 1
		if ratio < c.th["imbalance_minor"] {
			continue
		}
		ri := c.rankInfo(tr, top.rank)
		f := evidence.Finding{Trace: tr, Rank: top.rank, Severity: severity(ratio, c.th["imbalance_critical"]),
			Title: fmt.Sprintf("Rank %d is a straggler: it computes longer and the other ranks wait for it", top.rank),
			Observation: fmt.Sprintf("Rank %d spent %s in computation kernels, %s more than the median rank (%s) of %d ranks (trace %s, %s).",
				top.rank, ms(top.compute), pct(ratio), ms(med), len(rs), tr, strings.TrimPrefix(c.where(tr, -1), "trace "+tr+", all ranks, ")),
			Evidence: []evidence.Ref{ref("ranks", "trace", tr), ref("kernels", "rank", itoa(top.rank), "class", "COMP")},
			Impact:   ratio * float64(top.compute) / float64(top.busy+top.idle+1),
			Scope:    evidence.Scope{Producers: []string{ri.Producer}, Platforms: []string{ri.Platform}, Capture: []string{"several ranks loaded"}},
			Verify:   "Re-profile all ranks: compute_ns should even out and the other ranks' comm_ns fall.",
			Refute:   "Per step, the slowest rank changes (a one-off), or the other ranks' communication time does not exceed the straggler's.",
		}
		if top.comm > 0 && minComm.rank == top.rank {
			f.Status = "confirmed"
			f.Mechanism = fmt.Sprintf("Collectives end together: rank %d has the least communication time (%s) while the others' communication kernels run longer, waiting in the collective for it.", top.rank, ms(top.comm))
		} else {
			f.Status = "hypothesis"
			if f.Severity == "critical" {
				f.Severity = "minor"
			}
		}
		switch ri.Producer {
		case "training":
			f.Fix = fmt.Sprintf("Even out rank %d's work: check its batch or sequence lengths (pad or bucket them), its data loading and its GPU clocks.", top.rank)
			f.Snippet = "DistributedSampler(ds, shuffle=True, drop_last=True)"
		default:
			f.Fix = fmt.Sprintf("Tensor-parallel ranks run the same kernels: check rank %d's GPU (clocks, thermal throttling, other processes on it).", top.rank)
			f.Snippet = "nvidia-smi -q -d CLOCK,PERFORMANCE"
			if ri.Platform == "rocm" {
				f.Snippet = "rocm-smi --showclocks --showperflevel"
			}
		}
		out = append(out, f)
	}
	return out
}

func commExposed(c *ctx) []evidence.Finding {
	var cs []cand
	for _, rr := range c.ranks {
		ri := c.rankInfo(rr.trace, rr.rank)
		if !inScope(ri, []string{"training"}, nil) || rr.busy <= 0 || rr.comm <= 0 {
			continue
		}
		overlap := rr.comm + rr.compute - rr.commComp
		ov := 100 * float64(overlap) / float64(rr.comm)
		if float64(rr.comm)/float64(rr.busy) >= c.th["comm_share"] && ov < c.th["comm_overlap_low"] {
			cs = append(cs, cand{trace: rr.trace, rank: rr.rank, score: float64(rr.comm-overlap) / float64(rr.busy)})
		}
	}
	best, counts := worstPerTrace(cs)
	var out []evidence.Finding
	for _, b := range best {
		var rr rankRow
		for _, x := range c.ranks {
			if x.trace == b.trace && x.rank == b.rank {
				rr = x
			}
		}
		ri := c.rankInfo(b.trace, b.rank)
		overlap := rr.comm + rr.compute - rr.commComp
		out = append(out, evidence.Finding{Trace: b.trace, Rank: b.rank, Status: "hypothesis",
			Severity: severity(b.score, c.th["comm_critical"]),
			Title:    "Communication is exposed: computation does not hide it",
			Observation: fmt.Sprintf("Communication kernels took %s, %s of GPU busy time, and only %s of it overlapped computation; %s (%s of busy time) ran alone (%s)%s.",
				ms(rr.comm), pct(float64(rr.comm)/float64(rr.busy)), pct(float64(overlap)/float64(rr.comm)), ms(rr.comm-overlap), pct(b.score), c.where(b.trace, b.rank), others(counts[b.trace])),
			Evidence: []evidence.Ref{ref("overlap", "rank", itoa(b.rank)), ref("ranks", "rank", itoa(b.rank))},
			Impact:   b.score,
			Scope:    evidence.Scope{Producers: []string{"training"}, Platforms: []string{ri.Platform}},
			Fix:      "Overlap gradient communication with the backward pass: let DDP bucket gradients (or FSDP prefetch the next all-gather) so collectives start while later layers still compute.",
			Snippet:  "DDP(model, bucket_cap_mb=25, gradient_as_bucket_view=True)",
			Verify:   "Re-profile: overlap.comm_overlap_pct should rise.",
			Refute:   "The collectives depend on the last computation (e.g. one all-reduce after the whole backward), so no overlap is possible without restructuring.",
		})
	}
	return out
}

func dataloader(c *ctx) []evidence.Finding {
	o := c.ev.Table("ops")
	if o == nil {
		return nil
	}
	var cs []cand
	dl := map[string]int64{}
	for _, rr := range c.ranks {
		ri := c.rankInfo(rr.trace, rr.rank)
		if !inScope(ri, []string{"training"}, nil) || rr.stepNs <= 0 {
			continue
		}
		d := sumBy(o, rr.trace, rr.rank, "incl_ns", func(r int) bool {
			n := evidence.Str(o, r, "name")
			return strings.HasPrefix(n, "enumerate(DataLoader)#") || strings.HasPrefix(n, "enumerate(DataPipe)#")
		})
		dl[key(rr.trace, rr.rank)] = d
		if share := float64(d) / float64(rr.stepNs); share >= c.th["dataloader_share"] {
			cs = append(cs, cand{trace: rr.trace, rank: rr.rank, score: share})
		}
	}
	best, counts := worstPerTrace(cs)
	var out []evidence.Finding
	for _, b := range best {
		ri := c.rankInfo(b.trace, b.rank)
		d := dl[key(b.trace, b.rank)]
		out = append(out, evidence.Finding{Trace: b.trace, Rank: b.rank, Status: "hypothesis",
			Severity: severity(b.score, c.th["dataloader_critical"]),
			Title:    "The training loop waits for the DataLoader",
			Observation: fmt.Sprintf("enumerate(DataLoader) took %s, %s of step time (%s)%s.",
				ms(d), pct(b.score), c.where(b.trace, b.rank), others(counts[b.trace])),
			Evidence: []evidence.Ref{ref("ops", "rank", itoa(b.rank), "name", "enumerate(DataLoader)#*"), ref("ranks", "rank", itoa(b.rank))},
			Impact:   b.score,
			Scope:    evidence.Scope{Producers: []string{"training"}, Platforms: []string{ri.Platform}},
			Fix:      "Load batches in background workers, pinned, and keep the workers alive between epochs.",
			Snippet:  "DataLoader(ds, batch_size=B, num_workers=8, pin_memory=True, persistent_workers=True)",
			Verify:   "Re-profile: the DataLoader's share of step time should fall under 5%.",
			Refute:   "The GPU stays busy during the DataLoader time (ranks.idle_ns does not shrink when it does): the loading is already hidden.",
		})
	}
	return out
}

var (
	simtRE     = regexp.MustCompile(`(?i)(^|[^a-z])(sgemm|dgemm|gemv|gemmsn|gemmk1)`)
	tensorOpRE = regexp.MustCompile(`(?i)tensorop|xmma|hmma|wgmma|h884|h1688|s1688|h16816|i8816|nvjet|tf32|bf16|f16|fp16|sm8[0-9]_|sm9[0-9]_|sm1[0-9][0-9]_`)
)

// hasGem reports whether s holds "gem" in any case, as every name simtRE
// matches does: most kernel names do not, and the check spares them the
// regular expression (slow in the viewer module, which runs it per view).
func hasGem(s string) bool {
	for i := 0; i+3 <= len(s); i++ {
		if s[i]|0x20 == 'g' && s[i+1]|0x20 == 'e' && s[i+2]|0x20 == 'm' {
			return true
		}
	}
	return false
}

func simtGemm(c *ctx) []evidence.Finding {
	k := c.ev.Table("kernels")
	if k == nil {
		return nil
	}
	var cs []cand
	simt := map[string]int64{}
	for _, rr := range c.ranks {
		ri := c.rankInfo(rr.trace, rr.rank)
		if ri.GPUModel == "" || ri.Platform != "cuda" || rr.busy <= 0 {
			continue // no verdict from a blank device name; the tensor-core names here are NVIDIA's
		}
		s := sumBy(k, rr.trace, rr.rank, "total_ns", func(r int) bool {
			n := evidence.Str(k, r, "name")
			return hasGem(n) && simtRE.MatchString(n) && !tensorOpRE.MatchString(n)
		})
		simt[key(rr.trace, rr.rank)] = s
		if share := float64(s) / float64(rr.busy); share >= c.th["simt_gemm_share"] {
			cs = append(cs, cand{trace: rr.trace, rank: rr.rank, score: share})
		}
	}
	best, counts := worstPerTrace(cs)
	var out []evidence.Finding
	for _, b := range best {
		ri := c.rankInfo(b.trace, b.rank)
		out = append(out, evidence.Finding{Trace: b.trace, Rank: b.rank, Status: "hypothesis", Severity: "minor",
			Title: "GEMMs run without tensor cores",
			Observation: fmt.Sprintf("GEMM kernels whose names show the SIMT path (sgemm/gemv, no tensor-op marker) took %s, %s of GPU busy time on %s (%s)%s.",
				ms(simt[key(b.trace, b.rank)]), pct(b.score), ri.GPUModel, c.where(b.trace, b.rank), others(counts[b.trace])),
			Evidence: []evidence.Ref{ref("kernels", "rank", itoa(b.rank), "name", "*sgemm*|*gemv*")},
			Impact:   b.score / 2,
			Scope:    evidence.Scope{Platforms: []string{"cuda"}, Capture: []string{"device name in deviceProperties"}},
			Fix:      "Run the matmuls in a tensor-core type: allow TF32 for float32, or autocast to bfloat16.",
			Snippet:  "torch.backends.cuda.matmul.allow_tf32 = True",
			Verify:   "Re-profile: GEMM kernel names should carry a tensor-op marker (xmma, s1688/h16816, nvjet) and their time fall.",
			Refute:   "The device has no tensor cores (compute capability < 7.0), or the GEMMs need full fp32 precision.",
		})
	}
	return out
}
