package findings

import (
	"sort"
	"strings"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/table"
)

// The rule table. Each finding rule is one row of Rules: its evaluation
// (the rule itself, in rules.go, levers.go or collectives.go), its per-step
// measure (which step of a rank is the finding's worst: report.PlanWindows),
// the events it flags in its Perfetto window (analysis/perfetto) and the
// kind of instance a window on a rank without steps centres on
// (sql/perfetto_anchor.sql), whether it reads GPU idle time (which the
// capture gate caps), and the cross-check verdict that names the same
// constraint. The report and the perfetto packages read the row (RuleOf)
// instead of switching on a rule's ID, so adding a rule is one row here plus
// its evaluation.
//
// Where a rule reads a class of rows or events, the row and the rule share
// one named predicate (IsFP32SIMT, IsAlign1GEMM, isHostWait, isLaunchWait, isDataLoader,
// pageableCopy, isComm, SyncBlocking, eagerElementwise, tinyKernel,
// slowInstance): the events flagged in Perfetto are the ones the rule
// counted, and the worst step is where it counted most (catalogue_test.go
// checks both). Where what a finding counts depends on the finding (the
// kernel a kernel_slow_instances finding names, the kernel names a
// short_kernel_storm finding found tiny, the copy size above which a
// sync_bound_loop finding leaves pageable copies to pageable_copies), the
// row's Subject reads it from the evidence and thresholds the finding was
// judged with, and the measure and the marks read the Subject.

// Rule is one finding rule: its row of Rules holds everything about it.
type Rule struct {
	ID         string
	Doc        string
	Thresholds []string
	eval       func(c *ctx) []evidence.Finding
	// Subject, where set, reads what one finding of the rule counts (its
	// kernel names, its shortest slow instance, the pageable copies it
	// leaves out) from the rolled-up evidence ev and the thresholds th the
	// finding was judged with; nil where the rule's predicate is the same
	// for every finding.
	Subject func(ev *evidence.Evidence, th evidence.Thresholds, f evidence.Finding) Subject
	// Step is the rule's per-step measure; nil where None says why (the
	// report then takes the rank's slowest step).
	Step *StepMeasure
	// Marks are the events a finding of the rule flags in its Perfetto
	// window; nil where None says why.
	Marks *Marks
	// Anchor is the kind of instance (a row of sql/perfetto_anchor.sql,
	// one of AnchorWords) a finding's window centres on when its rank has
	// no steps.
	Anchor string
	// None says why Step or Marks is nil; "" when the row has both.
	None string
	// Idle: the rule reads GPU idle time and the launch order, and its
	// impact is a share of the rank's GPU idle time. Capture artifacts that
	// make idle time or launch order unreliable cap its findings, and two
	// such findings count the same idle twice (SharesIdle).
	Idle bool
	// Constraint is the cross-check verdict (crossview.Verdict*) that names
	// the same constraint as the rule, which the report weighs the
	// rule's findings against; "" when none does.
	Constraint string
	// Shares is another cross-check verdict that reads the slice as the
	// rule's findings do, without being their constraint: a launching
	// thread waiting in the DataLoader for its workers is waiting-for-work
	// there (resnet_2080ti); "" when none.
	Shares string
}

// StepMeasure is a rule's measure per step: the same evidence rows the
// rule reads, summed per step of one rank.
type StepMeasure struct {
	// What names the measure: "step N has the largest <What> of rank R".
	What string
	// Values returns the measure per step (step -> ns, or bytes where
	// Bytes) of (trace, rank) for the finding's Subject (the zero Subject
	// for a rule without one); rows outside every step are left out.
	Values func(b *evidence.Bundle, trace string, rank int, s Subject) map[int]int64
	// Bytes: the measure is bytes, not ns.
	Bytes bool
	// Else is the measure to use where Values is zero in every step (nil
	// for none): the sync rule's blocked time where the syncs opened no
	// GPU gap.
	Else *StepMeasure
}

// Format writes one value of the measure: ms, or bytes where Bytes.
func (m *StepMeasure) Format(v int64) string {
	if m.Bytes {
		return table.Int(v) + " bytes"
	}
	return ms(v)
}

// Measure returns the per-step values of (trace, rank) and the measure
// they are: m's, or, where m's are zero in every step, m.Else's.
func (m *StepMeasure) Measure(b *evidence.Bundle, trace string, rank int, s Subject) (*StepMeasure, map[int]int64) {
	vals := m.Values(b, trace, rank, s)
	if m.Else != nil {
		for _, v := range vals {
			if v != 0 {
				return m, vals
			}
		}
		return m.Else.Measure(b, trace, rank, s)
	}
	return m, vals
}

// Subject is what one finding counts beyond its rule's class of events
// (Rule.Subject): the report computes it when it plans the finding's
// window and hands it to the measure and the marks.
type Subject struct {
	// Names are the kernel names the finding counts, sorted; nil: any.
	Names []string `msgpack:"names,omitempty" json:"names,omitempty"`
	// FloorNs is the shortest instance the finding counts as slow
	// (slowInstance); 0: every instance.
	FloorNs int64 `msgpack:"floor_ns,omitempty" json:"floor_ns,omitempty"`
	// PageableMinBytes: pageable copies larger than this are the
	// pageable-copy finding's, which a sync finding leaves out
	// (largePageable); nil: none is left out.
	PageableMinBytes *float64 `msgpack:"pageable_min_bytes,omitempty" json:"pageable_min_bytes,omitempty"`
}

// Has reports whether the Subject names name.
func (s Subject) Has(name string) bool {
	i := sort.SearchStrings(s.Names, name)
	return i < len(s.Names) && s.Names[i] == name
}

// Event is what Marks reads of one event of a Perfetto window (a row of
// sql/perfetto.sql whose row_kind is event).
type Event struct {
	Kind, API, Name, Class string
	// Dur is its length in ns.
	Dur int64
	// Sync is how a host call synchronizes with the device, as
	// sql/perfetto.sql rates it with tb_sync_call of sql/views.sql (given
	// the copy it launched): blocking, stream or "".
	Sync string
	// SrcKind and DstKind are a GPU copy's memory kinds (tb_copy_src,
	// tb_copy_dst), or those of the copy a host call launched; "" when the
	// name gives none. CopyBytes is the size of the copy a host call
	// launched.
	SrcKind, DstKind string
	CopyBytes        int64
}

// MarkText names a flagged interval, Prefix + a name + Suffix, and says
// what it is.
type MarkText struct{ Prefix, Suffix, What string }

// Name is the slice name of the interval named s.
func (m MarkText) Name(s string) string { return m.Prefix + s + m.Suffix }

// Marks say which intervals of a Perfetto window a finding flags.
type Marks struct {
	// Event picks the events the finding is about (nil: none), given the
	// finding's Subject; each is flagged as Named.Name(its name).
	Event func(e Event, s Subject) bool
	Named MarkText
	// During, when set, also flags the GPU idle gaps that open while a
	// picked event runs, as During.Name(the event's name): the GPU a
	// blocking call drained.
	During *MarkText
	// Launch, when set, also flags the host call that launched a picked
	// GPU event (same correlation), as Launch.Name(the call's name).
	Launch *MarkText
	// Gap picks GPU idle gaps by their category (host_wait, kernel_wait or
	// other; nil: none); each is flagged as GapNamed.Name(its category).
	Gap      func(category string) bool
	GapNamed MarkText
}

// AnchorWords are the kinds of instance sql/perfetto_anchor.sql finds, in
// the words the report uses for them.
var AnchorWords = map[string]string{
	"sync": "blocking sync call that opened the longest GPU gap (or the longest such call)", "pageable": "longest pageable copy", "gap": "longest GPU idle gap",
	"host_wait": "longest host-wait GPU gap", "dataloader": "longest DataLoader call", "comm": "longest communication kernel",
	"kernel": "longest kernel", "elementwise": "longest eager elementwise or reduction kernel",
	"memory": "allocator peak", "fp32": "longest fp32 SIMT GEMM or convolution", "slow": "longest slow instance of the finding's kernel",
	"tiny": "longest tiny kernel", "softmax": "longest eager softmax kernel", "align1": "longest align1 GEMM kernel",
}

// MarkedAnchors are the anchor kinds that are no row of
// sql/perfetto_anchor.sql: the window centres on the longest instance the
// rule's marks flag among the preset's kernel_name and host_name rows
// (report.PlaceAnchor), so that the names are judged by the rule's own
// predicate only.
var MarkedAnchors = map[string]bool{"dataloader": true, "elementwise": true, "fp32": true, "slow": true, "tiny": true, "softmax": true, "align1": true}

// gpuIdle is what a flagged GPU idle gap is.
const gpuIdle = "GPU idle: no kernel, copy or memset ran on this rank"

// Rules is the catalogue, in evaluation order.
var Rules = []Rule{
	{ID: "sync_bound_loop", Doc: "host syncs (.item(), DtoH copies, synchronize) that drain the GPU and open a gap",
		Thresholds: []string{"sync_gap_critical", "sync_gap_minor", "sync_blocked_minor"}, eval: syncBound,
		Subject: func(_ *evidence.Evidence, th evidence.Thresholds, _ evidence.Finding) Subject {
			bytes := th["pageable_min_bytes"]
			return Subject{PageableMinBytes: &bytes}
		},
		Step: &StepMeasure{What: "GPU gap opened by host syncs", Values: syncSteps,
			Else: &StepMeasure{What: "host time blocked in syncs (they opened no GPU gap)", Values: syncBlockedSteps}},
		Marks: &Marks{Event: func(e Event, s Subject) bool {
			return SyncBlocking(e) && !s.leftToPageable(pageableCopy(e.SrcKind, e.DstKind), 1, e.CopyBytes)
		},
			Named:  MarkText{Prefix: "host blocked: ", What: "the host waits in this call until the GPU work queued before it is done"},
			During: &MarkText{Prefix: "GPU idle after ", What: "the GPU drained while the host was blocked, drawn up to the call's duration: the rest of the gap is the host's own work after it"}},
		Anchor: "sync", Idle: true, Constraint: crossview.VerdictSync},
	{ID: "pageable_copies", Doc: "host copies through pageable memory (staged, effectively synchronous)",
		Thresholds: []string{"pageable_min_bytes", "pageable_critical"}, eval: pageable,
		Step: &StepMeasure{What: "host time blocked in pageable copies", Values: func(b *evidence.Bundle, tr string, rk int, _ Subject) map[int]int64 {
			return sumStepsLess(b.Table("memcpy"), tr, rk, "host_ns", []string{"held_ns", "one_time_ns"}, func(t *table.Table, r int) bool {
				return pageableCopy(evidence.Str(t, r, "src"), evidence.Str(t, r, "dst"))
			})
		}},
		Marks: &Marks{Event: func(e Event, _ Subject) bool { return e.Kind == "gpu_memcpy" && pageableCopy(e.SrcKind, e.DstKind) },
			Named:  MarkText{Prefix: "pageable copy: ", What: "staged through a pinned bounce buffer by the driver"},
			Launch: &MarkText{Prefix: "host blocked: ", Suffix: " (pageable copy)", What: "the call returns only when the pageable copy is done"}},
		Anchor: "pageable"},
	{ID: "host_bound_idle", Doc: "GPU idle while the CPU had not yet launched the next kernel (HTA host wait)",
		Thresholds: []string{"host_wait_minor", "host_wait_critical", "idle_critical"}, eval: hostBound,
		Step:   &StepMeasure{What: "host-wait GPU idle (the step's GPU idle closed by work launched after it began)", Values: hostWaitSteps},
		Marks:  &Marks{Gap: isHostWait, GapNamed: MarkText{Prefix: "GPU waits for the host (", Suffix: ")", What: gpuIdle}},
		Anchor: "host_wait", Idle: true, Constraint: crossview.VerdictHost},
	{ID: "launch_bound", Doc: "kernels shorter than their launches, GPU idle between them; eager vLLM without CUDA graphs, unless every step is larger than the largest default capture size (then graphs would not replay it either)",
		Thresholds: []string{"short_kernel_share", "launch_min_count", "launch_idle_minor", "launch_explains_min", "idle_critical", "host_wait_critical"}, eval: launchBound,
		Step:   &StepMeasure{What: "GPU idle between launches (host and kernel waits, summed over streams, at most the step's GPU idle)", Values: gapSteps(isLaunchWait)},
		Marks:  &Marks{Gap: isLaunchWait, GapNamed: MarkText{Prefix: "GPU idle between launches (", Suffix: ")", What: gpuIdle}},
		Anchor: "gap", Idle: true, Constraint: crossview.VerdictHost},
	{ID: "rank_straggler", Doc: "one rank arrives last at the collectives and the others wait for it (start times of matched instances); without matched collectives, the rank that computes longest, as a hypothesis",
		Thresholds: []string{"straggler_wait_minor", "straggler_wait_critical", "imbalance_minor", "imbalance_critical"}, eval: straggler,
		Step:   &StepMeasure{What: "computation beyond the median rank's", Values: stragglerExcess},
		Anchor: "kernel", Constraint: crossview.VerdictComm,
		None: "no marks: the finding is about a whole rank's pace, which no single event of the window shows"},
	{ID: "comm_not_overlapped", Doc: "communication that computation does not hide, split into waiting for a late rank and transfer where collectives match across ranks",
		Thresholds: []string{"comm_share", "comm_overlap_low", "comm_critical", "comm_wait_share"}, eval: commExposed,
		Step: &StepMeasure{What: "communication not overlapped by computation", Values: func(b *evidence.Bundle, tr string, rk int, _ Subject) map[int]int64 {
			comm := sumSteps(b.Table("overlap"), tr, rk, "comm_ns", nil)
			ov := sumSteps(b.Table("overlap"), tr, rk, "overlap_ns", nil)
			for s := range comm {
				comm[s] -= ov[s]
			}
			return comm
		}},
		Marks:  &Marks{Event: func(e Event, _ Subject) bool { return isComm(e.Class) }, Named: MarkText{Prefix: "communication: ", What: "a communication kernel"}},
		Anchor: "comm", Constraint: crossview.VerdictComm},
	{ID: "dataloader_share", Doc: "time in the DataLoader inside training steps",
		Thresholds: []string{"dataloader_share", "dataloader_critical"}, eval: dataloader,
		Step: &StepMeasure{What: "time in the DataLoader", Values: func(b *evidence.Bundle, tr string, rk int, _ Subject) map[int]int64 {
			return sumSteps(b.Table("ops"), tr, rk, "incl_ns", func(t *table.Table, r int) bool { return isDataLoader(evidence.Str(t, r, "name")) })
		}},
		Marks: &Marks{Event: func(e Event, _ Subject) bool { return isDataLoader(e.Name) }, Named: MarkText{Prefix: "DataLoader: ", What: "the loop waits for the next batch"}},
		// The loop's own thread loads the batches: the GPU waits for the host.
		Anchor: "dataloader", Constraint: crossview.VerdictHost, Shares: crossview.VerdictWaiting},
	{ID: "fp32_no_tensor_cores", Doc: "fp32 GEMMs and convolutions on the SIMT path of a GPU with tensor cores: float16 AMP on CC 7.x, TF32 or bfloat16 from CC 8.0",
		Thresholds: []string{"fp32_simt_share", "fp32_simt_critical", "gpu_busy_critical"}, eval: fp32NoTensorCores,
		Step: &StepMeasure{What: "fp32 GEMM and convolution time on the SIMT path", Values: func(b *evidence.Bundle, tr string, rk int, _ Subject) map[int]int64 {
			return sumSteps(b.Table("kernels"), tr, rk, "total_ns", func(t *table.Table, r int) bool { return IsFP32SIMT(evidence.Str(t, r, "name")) })
		}},
		Marks: &Marks{Event: func(e Event, _ Subject) bool { return e.Kind == "kernel" && IsFP32SIMT(e.Name) },
			Named: MarkText{Prefix: "fp32 SIMT: ", What: "an fp32 GEMM or convolution kernel whose name shows no tensor-core path"}},
		Anchor: "fp32", Constraint: crossview.VerdictGPU},
	{ID: "elementwise_dominated", Doc: "eager elementwise and reduction kernels take most of GPU busy time: fuse them with torch.compile where the device and framework allow",
		Thresholds: []string{"elementwise_share", "gpu_busy_critical"}, eval: elementwiseDominated,
		Step: &StepMeasure{What: "GPU time in eager elementwise and reduction kernels", Values: func(b *evidence.Bundle, tr string, rk int, _ Subject) map[int]int64 {
			return sumSteps(b.Table("kernels"), tr, rk, "total_ns", func(t *table.Table, r int) bool {
				return eagerElementwise(evidence.Str(t, r, "class"), evidence.Str(t, r, "name"))
			})
		}},
		Marks: &Marks{Event: func(e Event, _ Subject) bool { return e.Kind == "kernel" && eagerElementwise(e.Class, e.Name) },
			Named: MarkText{Prefix: "eager elementwise: ", What: "an eager at::native elementwise or reduction kernel, which a compiler could fuse with its neighbours"}},
		Anchor: "elementwise", Constraint: crossview.VerdictGPU},
	{ID: "eager_attention", Doc: "eager softmax kernels beside batched matmuls, with no fused attention kernel: an attention that stores its score matrix; use scaled_dot_product_attention",
		Thresholds: []string{"attention_softmax_share", "gpu_busy_critical"}, eval: eagerAttention,
		Step: &StepMeasure{What: "GPU time in eager softmax kernels", Values: func(b *evidence.Bundle, tr string, rk int, _ Subject) map[int]int64 {
			return sumSteps(b.Table("kernels"), tr, rk, "total_ns", func(t *table.Table, r int) bool {
				return eagerSoftmax(evidence.Str(t, r, "class"), evidence.Str(t, r, "name"))
			})
		}},
		Marks: &Marks{Event: func(e Event, _ Subject) bool { return e.Kind == "kernel" && eagerSoftmax(e.Class, e.Name) },
			Named: MarkText{Prefix: "eager softmax: ", What: "an eager softmax kernel, which a fused attention kernel would not run"}},
		Anchor: "softmax", Constraint: crossview.VerdictGPU},
	{ID: "misaligned_gemm", Doc: "CUTLASS GEMM kernels built for 1-element alignment (align1) take a share of GPU busy time: a GEMM dimension or leading dimension is not a multiple of 16 bytes, so each load moves one element and the wider kernels are ruled out",
		Thresholds: []string{"align1_gemm_share", "align1_gemm_critical", "gpu_busy_critical"}, eval: misalignedGEMM,
		Step: &StepMeasure{What: "GPU time in align1 GEMM kernels", Values: func(b *evidence.Bundle, tr string, rk int, _ Subject) map[int]int64 {
			return sumSteps(b.Table("kernels"), tr, rk, "total_ns", func(t *table.Table, r int) bool { return IsAlign1GEMM(evidence.Str(t, r, "name")) })
		}},
		Marks: &Marks{Event: func(e Event, _ Subject) bool { return e.Kind == "kernel" && IsAlign1GEMM(e.Name) },
			Named: MarkText{Prefix: "align1 GEMM: ", What: "a CUTLASS GEMM kernel built for 1-element alignment: a dimension or leading dimension not a multiple of 16 bytes"}},
		Anchor: "align1", Constraint: crossview.VerdictGPU},
	{ID: "kernel_slow_instances", Doc: "a kernel's slowest instances run far above its median and add up to a share of busy time (shape, clocks or contention)",
		Thresholds: []string{"slow_instance_ratio", "slow_instance_share", "slow_instance_min_count", "slow_instance_tail"}, eval: slowInstances,
		Subject: slowSubject,
		Step: &StepMeasure{What: "time in the slow instances of the finding's kernel (at least slow_instance_ratio times its median, by histogram bucket)", Values: func(b *evidence.Bundle, tr string, rk int, s Subject) map[int]int64 {
			out := map[int]int64{}
			forSteps(b.Table("kernels"), tr, rk, func(t *table.Table, r, step int) {
				if s.Has(evidence.Str(t, r, "name")) {
					_, ns := slowTail(t, r, s.FloorNs)
					out[step] += ns
				}
			})
			return out
		}},
		Marks: &Marks{Event: func(e Event, s Subject) bool {
			return e.Kind == "kernel" && s.Has(e.Name) && slowInstance(e.Dur, s.FloorNs)
		},
			Named: MarkText{Prefix: "slow instance: ", What: "an instance of the finding's kernel at least slow_instance_ratio times its median"}},
		Anchor: "slow", Constraint: crossview.VerdictGPU},
	{ID: "short_kernel_storm", Doc: "a busy GPU running mostly tiny kernels (launch_bound covers the idle case)",
		Thresholds: []string{"storm_kernel_ns", "storm_count_share", "storm_min_count", "storm_time_share", "launch_idle_minor"}, eval: shortKernelStorm,
		Subject: stormSubject,
		Step: &StepMeasure{What: "GPU time in tiny kernels (kernel names whose median is under storm_kernel_ns)", Values: func(b *evidence.Bundle, tr string, rk int, s Subject) map[int]int64 {
			return sumSteps(b.Table("kernels"), tr, rk, "total_ns", func(t *table.Table, r int) bool {
				return evidence.Str(t, r, "class") != "MEM" && s.Has(evidence.Str(t, r, "name"))
			})
		}},
		Marks: &Marks{Event: func(e Event, s Subject) bool { return e.Kind == "kernel" && e.Class != "MEM" && s.Has(e.Name) },
			Named: MarkText{Prefix: "tiny kernel: ", What: "a kernel whose name's median instance is under storm_kernel_ns"}},
		Anchor: "tiny", Constraint: crossview.VerdictGPU},
	{ID: "memory_peak", Doc: "the allocator's peak close to the device's memory: fragmentation and out-of-memory risk",
		Thresholds: []string{"memory_peak_share"}, eval: memoryPeak,
		Step: &StepMeasure{What: "allocator peak (reserved or allocated)", Bytes: true, Values: func(b *evidence.Bundle, tr string, rk int, _ Subject) map[int]int64 {
			out := map[int]int64{}
			forSteps(b.Table("memory"), tr, rk, func(t *table.Table, r, step int) {
				if p, ok := memoryPeakOf(t, r); ok && p > out[step] {
					out[step] = p
				}
			})
			return out
		}},
		Anchor: "memory",
		None:   "no marks: the allocator's [memory] events are instants, which the Perfetto window does not export; the window is the step with the largest peak, or, on a rank without steps, the peak's instant"},
}

// SharesIdle reports whether rule's impact is a share of the rank's GPU
// idle time (its row's Idle), so that two such findings are the same idle
// counted twice.
func SharesIdle(rule string) bool {
	r := RuleOf(rule)
	return r != nil && r.Idle
}

// idleRules is the set of the rules whose row says Idle.
func idleRules() map[string]bool {
	out := map[string]bool{}
	for _, r := range Rules {
		if r.Idle {
			out[r.ID] = true
		}
	}
	return out
}

// RuleOf returns the row of the rule with id, or nil.
func RuleOf(id string) *Rule {
	for i := range Rules {
		if Rules[i].ID == id {
			return &Rules[i]
		}
	}
	return nil
}

// The predicates the rules and their rows share.

// SyncBlocking reports whether a host call blocks the host on the device:
// its row's sync rating (tb_sync_call of sql/views.sql, given the copy it
// launched) is blocking. sql/sync.sql's blocking column, which
// sync_bound_loop reads, is the same macro.
func SyncBlocking(e Event) bool { return e.Sync == crossview.SyncBlocking }

// pageableCopy: a copy whose memory kinds (tb_copy_src, tb_copy_dst of
// sql/views.sql: the memcpy area's src and dst, the Perfetto rows'
// src_kind and dst_kind) name pageable host memory, which is
// tb_copy_pageable's test on those kinds.
func pageableCopy(src, dst string) bool { return src == "Pageable" || dst == "Pageable" }

// isHostWait: a GPU idle gap the launch of the next kernel opened (HTA's
// host wait), by its category in the gaps area and the Perfetto rows.
func isHostWait(category string) bool { return category == "host_wait" }

// isLaunchWait: a GPU idle gap that is a host or kernel wait (HTA's
// categories other than other).
func isLaunchWait(category string) bool { return category != "other" }

// isComm: a GPU operation of class COMM (tb_kernel_class), what the ranks
// area's comm_ns unites.
func isComm(class string) bool { return class == "COMM" }

// isDataLoader: the annotation or operator of one DataLoader (or
// DataPipe) iteration.
func isDataLoader(name string) bool {
	return strings.HasPrefix(name, "enumerate(DataLoader)#") || strings.HasPrefix(name, "enumerate(DataPipe)#")
}

// The per-step measures.

// largePageable: n pageable copies of bytes in all, larger on average
// than minBytes (pageable_min_bytes), are the pageable-copy finding's,
// which the sync finding leaves out.
func largePageable(pageable bool, n, bytes int64, minBytes float64) bool {
	return pageable && n > 0 && float64(bytes)/float64(n) > minBytes
}

// leftToPageable is largePageable with the Subject's threshold; false
// without one.
func (s Subject) leftToPageable(pageable bool, n, bytes int64) bool {
	return s.PageableMinBytes != nil && largePageable(pageable, n, bytes, *s.PageableMinBytes)
}

// syncBlocking: a sync row the sync rule counts (blocking, not a sync at
// the window's edge, and not a pageable copy the pageable rule takes).
func syncBlocking(s Subject) func(t *table.Table, r int) bool {
	return func(t *table.Table, r int) bool {
		return evidence.Bool(t, r, "blocking") && !evidence.Bool(t, r, "edge") &&
			!s.leftToPageable(evidence.Bool(t, r, "pageable"), evidence.Int(t, r, "count"), evidence.Int(t, r, "bytes"))
	}
}

// syncSteps: the GPU gap opened by blocking syncs per step.
func syncSteps(b *evidence.Bundle, tr string, rk int, s Subject) map[int]int64 {
	return sumSteps(b.Table("sync"), tr, rk, "gpu_gap_ns", syncBlocking(s))
}

// syncBlockedSteps: the host time blocked in those syncs per step, less
// what they held.
func syncBlockedSteps(b *evidence.Bundle, tr string, rk int, s Subject) map[int]int64 {
	return sumStepsLess(b.Table("sync"), tr, rk, "blocked_ns", []string{"held_ns", "one_time_ns"}, syncBlocking(s))
}

// gapSteps: the GPU idle of the gaps whose category passes keep, per step.
func gapSteps(keep func(category string) bool) func(b *evidence.Bundle, tr string, rk int, _ Subject) map[int]int64 {
	return func(b *evidence.Bundle, tr string, rk int, _ Subject) map[int]int64 {
		out := sumSteps(b.Table("gaps"), tr, rk, "idle_ns", func(t *table.Table, r int) bool { return keep(evidence.Str(t, r, "category")) })
		// Summed over streams, a step's gaps can pass its own length: at
		// most the step's GPU idle time (the union of its streams).
		idle := sumSteps(b.Table("ranks"), tr, rk, "idle_ns", nil)
		for s, v := range out {
			if i, ok := idle[s]; ok && v > i {
				out[s] = i
			}
		}
		return out
	}
}

// hostWaitSteps is the host-wait GPU idle of each step of a rank: the
// ranks area's host_wait_ns, HTA's test on the union of the rank's GPU
// work; the gaps area's per-stream host waits, at most the step's idle,
// where a bundle has no such column.
func hostWaitSteps(b *evidence.Bundle, tr string, rk int, s Subject) map[int]int64 {
	if t := b.Table("ranks"); t != nil && t.Col("host_wait_ns") >= 0 {
		return sumSteps(t, tr, rk, "host_wait_ns", nil)
	}
	return gapSteps(isHostWait)(b, tr, rk, s)
}

// sumSteps sums col over the rows of t of one rank that pass keep, per step
// (rows outside every step are left out).
func sumSteps(t *table.Table, trace string, rank int, col string, keep func(*table.Table, int) bool) map[int]int64 {
	return sumStepsLess(t, trace, rank, col, nil, keep)
}

// sumStepsLess is sumSteps of col less the columns less: a host time less
// its held and first-use parts.
func sumStepsLess(t *table.Table, trace string, rank int, col string, less []string, keep func(*table.Table, int) bool) map[int]int64 {
	out := map[int]int64{}
	forSteps(t, trace, rank, func(t *table.Table, r, step int) {
		if keep == nil || keep(t, r) {
			out[step] += evidence.Int(t, r, col)
			for _, l := range less {
				out[step] -= evidence.Int(t, r, l)
			}
		}
	})
	return out
}

// forSteps calls fn for each row of t of one rank inside a step.
func forSteps(t *table.Table, trace string, rank int, fn func(t *table.Table, r, step int)) {
	if t == nil {
		return
	}
	for r := range t.Rows {
		if evidence.Str(t, r, "trace") != trace || int(evidence.Int(t, r, "rank")) != rank {
			continue
		}
		if s := int(evidence.Int(t, r, "step")); s >= 0 {
			fn(t, r, s)
		}
	}
}

// slowSubject: the kernel a kernel_slow_instances finding names (its
// kernels reference) and its shortest slow instance, from the kernel's
// median on the finding's rank.
func slowSubject(ev *evidence.Evidence, th evidence.Thresholds, f evidence.Finding) Subject {
	var name string
	for _, r := range f.Evidence {
		if r.Preset == "kernels" && r.Where["name"] != "" {
			name = r.Where["name"]
			break
		}
	}
	k := ev.Table("kernels")
	if name == "" || k == nil {
		return Subject{}
	}
	for r := range k.Rows {
		if evidence.Str(k, r, "trace") == f.Trace && int(evidence.Int(k, r, "rank")) == f.Rank && evidence.Str(k, r, "name") == name {
			return Subject{Names: []string{name}, FloorNs: slowFloor(evidence.Int(k, r, "p50_ns"), th["slow_instance_ratio"])}
		}
	}
	return Subject{}
}

// stormSubject: the kernel names of a short_kernel_storm finding's rank
// that the rule counted as tiny (tinyKernel).
func stormSubject(ev *evidence.Evidence, th evidence.Thresholds, f evidence.Finding) Subject {
	k := ev.Table("kernels")
	if k == nil {
		return Subject{}
	}
	seen := map[string]bool{}
	var s Subject
	for r := range k.Rows {
		if evidence.Str(k, r, "trace") != f.Trace || int(evidence.Int(k, r, "rank")) != f.Rank || !tinyKernel(k, r, th) {
			continue
		}
		if n := evidence.Str(k, r, "name"); !seen[n] {
			seen[n] = true
			s.Names = append(s.Names, n)
		}
	}
	sort.Strings(s.Names)
	return s
}

// memoryPeakOf is the allocator's peak (reserved or allocated) of memory
// row r, and whether the row is a device's (memory_peak reads the same).
func memoryPeakOf(m *table.Table, r int) (int64, bool) {
	if evidence.Int(m, r, "device") < 0 {
		return 0, false
	}
	return max(evidence.Int(m, r, "peak_allocated"), evidence.Int(m, r, "peak_reserved")), true
}

// stragglerExcess is, per step, the rank's computation time minus the
// median rank's in that step (evidence.ComputeMedian).
func stragglerExcess(b *evidence.Bundle, trace string, rank int, _ Subject) map[int]int64 {
	t := b.Table("ranks")
	out := map[int]int64{}
	if t == nil {
		return out
	}
	type ct struct{ compute, busy int64 }
	per := map[int]map[int]ct{} // step -> rank -> times
	for r := range t.Rows {
		if evidence.Str(t, r, "trace") != trace {
			continue
		}
		s := int(evidence.Int(t, r, "step"))
		if s < 0 {
			continue
		}
		if per[s] == nil {
			per[s] = map[int]ct{}
		}
		rk := int(evidence.Int(t, r, "rank"))
		x := per[s][rk]
		x.compute += evidence.Int(t, r, "compute_ns")
		x.busy += evidence.Int(t, r, "busy_ns")
		per[s][rk] = x
	}
	for s, byRank := range per {
		mine, ok := byRank[rank]
		if !ok {
			continue
		}
		var compute, busy []int64
		for _, v := range byRank {
			compute = append(compute, v.compute)
			busy = append(busy, v.busy)
		}
		med, n := evidence.ComputeMedian(compute, busy)
		if n == 0 {
			continue
		}
		out[s] = mine.compute - int64(med)
	}
	return out
}
