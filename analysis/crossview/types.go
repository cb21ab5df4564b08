package crossview

// Frame is one host event of the slice's ranks: a python frame, an operator,
// a user annotation, or a runtime/driver call.
//
// Its enclosing frame is found by time containment on its thread: frames
// come in the thread's start order (ts ascending, end descending, ID), and
// the enclosing frame is the innermost open frame that contains it (the
// call stack walk of Stream). A frame no open frame contains is a root.
//
// A large trace holds millions of frames, so a Frame is kept small: what
// many frames share (the thread with its trace and rank, a Call stack) is
// stored once in the Input and named by index, and the kind is a byte.
type Frame struct {
	ID    int64 // > 0, unique in the Input
	TsNs  int64
	DurNs int64
	Name  string
	// Thread indexes Input.Threads: the frame's trace, rank and pid/tid.
	Thread int32
	// CallStack indexes Input.Stacks: an operator's "Call stack" arg
	// (2021-format traces captured with with_stack): python frames,
	// innermost first, separated by ';'; 0 = none. The preset sets it only
	// on ranks without python frames; it gives the python levels above the
	// operator (see Build).
	CallStack int32
	Kind      HostKind
	// GraphLaunch marks a runtime call that launches a CUDA/HIP graph (api
	// graph_launch).
	GraphLaunch bool
	// Blocking: the preset rates the frame as blocking the host on the
	// device (sync = SyncBlocking, by the macros of sql/views.sql): a scalar
	// read, a synchronize call, a synchronous copy, an Async copy whose GPU
	// copy waits.
	Blocking bool
}

// HostKind is the kind of a host frame (events.kind).
type HostKind uint8

// The host kinds a frame can have.
const (
	HostPython HostKind = iota + 1
	HostCPUOp
	HostAnnotation
	HostRuntime
	HostDriver
)

var hostKindNames = [...]string{"", "python", "cpu_op", "annotation", "runtime", "driver"}

// String returns the kind as events.kind writes it.
func (k HostKind) String() string {
	if int(k) < len(hostKindNames) {
		return hostKindNames[k]
	}
	return ""
}

// ParseHostKind returns the HostKind of an events.kind value; false when it
// is no host frame kind.
func ParseHostKind(s string) (HostKind, bool) {
	for i, n := range hostKindNames {
		if i > 0 && n == s {
			return HostKind(i), true
		}
	}
	return 0, false
}

// Thread is one host thread of a rank.
type Thread struct {
	Trace string
	Rank  int
	Name  string // "pid/tid" as written
}

// End returns the frame's end in nanoseconds.
func (f *Frame) End() int64 { return f.TsNs + f.DurNs }

// ThreadID returns the index in Threads of a thread, adding it when new.
func (in *Input) ThreadID(trace string, rank int, name string) int32 {
	return intern(&in.Threads, &in.threadIDs, Thread{trace, rank, name})
}

// StackID returns the index in Stacks of a Call stack, adding it when new;
// 0 for "".
func (in *Input) StackID(cs string) int32 {
	if cs == "" {
		return 0
	}
	if len(in.Stacks) == 0 {
		in.Stacks = []string{""}
	}
	return intern(&in.Stacks, &in.stackIDs, cs)
}

// intern returns the index of v in *list, appending it when absent; *ids
// indexes *list, and is built from it when nil (an Input made by hand).
func intern[T comparable](list *[]T, ids *map[T]int32, v T) int32 {
	if *ids == nil {
		*ids = make(map[T]int32, len(*list))
		for i, x := range *list {
			if _, dup := (*ids)[x]; !dup {
				(*ids)[x] = int32(i)
			}
		}
	}
	if id, ok := (*ids)[v]; ok {
		return id
	}
	id := int32(len(*list))
	*list = append(*list, v)
	(*ids)[v] = id
	return id
}

// TextID returns the index in Texts of s (an operation's trace or name),
// adding it when new.
func (in *Input) TextID(s string) int32 { return intern(&in.Texts, &in.textIDs, s) }

// OpTrace returns the name of an operation's trace.
func (in *Input) OpTrace(o *Op) string { return in.Texts[o.TraceID] }

// OpName returns an operation's name.
func (in *Input) OpName(o *Op) string { return in.Texts[o.NameID] }

// ThreadOf returns a frame's thread.
func (in *Input) ThreadOf(f *Frame) *Thread { return &in.Threads[f.Thread] }

// CallStackOf returns a frame's Call stack; "" when it has none.
func (in *Input) CallStackOf(f *Frame) string {
	if f.CallStack <= 0 || int(f.CallStack) >= len(in.Stacks) {
		return ""
	}
	return in.Stacks[f.CallStack]
}

// Op is one GPU operation: a kernel, a GPU memcpy or a GPU memset. It
// holds no pointer, and its trace and name are indexes in Input.Texts: a
// large trace's cross-view holds millions of operations (×250 vLLM: 3.5 M;
// a 10 GB training trace 3.85 M), which the garbage collector then never
// scans; with the two strings each was 128 bytes, now 96. Its words (kind,
// link, class) are a byte each, after the numbers.
type Op struct {
	ID     int64
	Launch int64 // ID of the runtime/driver Frame with the same correlation; 0 = none
	// Operator is, when Launch is 0, the ID of the cpu_op Frame whose
	// External id the operation carries, when exactly one operator of its
	// file and rank has it; 0 = none.
	Operator int64
	Rank     int
	Stream   int64
	TsNs     int64
	DurNs    int64
	GraphID  int64 // "graph id" when the trace records it, else 0
	// Host is the frame the operation hangs from, when Input.Hosts says
	// the rows carry it: the launching call (Launch), else the operator
	// (Operator). HostThread indexes Input.Threads; -1 = no such frame.
	// The cross-check needs its time before the frames stream in.
	HostTsNs, HostDurNs int64
	HostThread          int32
	// TraceID and NameID index Input.Texts (Input.TextID): the trace's
	// name and the operation's.
	TraceID, NameID int32
	Kind            OpKind
	// Link says how the operation was linked to the host, or why it was
	// not; LinkUnknown when the rows do not say.
	Link OpLink
	// Class is the operation's class as the preset rates it
	// (tb_kernel_class of sql/views.sql): ClassComp, ClassComm or ClassMem.
	Class OpClass
}

// OpKind is what a GPU operation is (the crossview preset's kind).
type OpKind uint8

// The kinds of GPU operation.
const (
	OpKernel OpKind = iota // kernel
	OpMemcpy               // gpu_memcpy
	OpMemset               // gpu_memset
)

var opKinds = []string{"kernel", "gpu_memcpy", "gpu_memset"}

func (k OpKind) String() string { return wordText(opKinds, k) }

// ParseOpKind returns the kind named s (kernel, gpu_memcpy, gpu_memset).
func ParseOpKind(s string) (OpKind, bool) { return parseWord[OpKind](opKinds, s) }

// OpLink is how a GPU operation was linked to the host, or why it was not
// (the crossview preset's link column).
type OpLink uint8

// The links of a GPU operation to the host.
const (
	// LinkUnknown: the rows do not say.
	LinkUnknown OpLink = iota
	// LinkCorrelation: a runtime or driver call carries its correlation.
	LinkCorrelation
	// LinkExternalID: no call carries its correlation; exactly one
	// operator of its file and rank has its External id.
	LinkExternalID
	// LinkAmbiguous: no call carries its correlation, and several
	// operators have its External id: left unlinked.
	LinkAmbiguous
	// LinkBeforeCapture: no link, and its correlation id is lower than
	// that of every runtime call the rank captured: it was launched before
	// the host capture began.
	LinkBeforeCapture
	// LinkNone: no link and no reason known.
	LinkNone
)

var opLinks = []string{"", "correlation", "external_id", "external_id_ambiguous", "before_capture", "none"}

func (l OpLink) String() string { return wordText(opLinks, l) }

// ParseOpLink returns the link named s ("" is LinkUnknown).
func ParseOpLink(s string) (OpLink, bool) { return parseWord[OpLink](opLinks, s) }

// OpClass is a GPU operation's class (tb_kernel_class of sql/views.sql).
type OpClass uint8

// The classes of a GPU operation.
const (
	ClassUnknown OpClass = iota // the rows do not say
	ClassComp                   // COMP: computation kernels
	ClassComm                   // COMM: communication kernels (NCCL, RCCL, HCCL, vLLM custom all-reduce, DeepEP, ...)
	ClassMem                    // MEM: copies and memsets
)

var opClasses = []string{"", "COMP", "COMM", "MEM"}

func (c OpClass) String() string { return wordText(opClasses, c) }

// ParseOpClass returns the class named s (COMP, COMM, MEM; "" is
// ClassUnknown).
func ParseOpClass(s string) (OpClass, bool) { return parseWord[OpClass](opClasses, s) }

// wordText is the text of word w of words, "" past them.
func wordText[W ~uint8](words []string, w W) string {
	if int(w) < len(words) {
		return words[w]
	}
	return ""
}

// parseWord returns the word of words that s is, false when none is.
func parseWord[W ~uint8](words []string, s string) (W, bool) {
	for i, w := range words {
		if w == s {
			return W(i), true
		}
	}
	return 0, false
}

// End returns the operation's end in nanoseconds.
func (o *Op) End() int64 { return o.TsNs + o.DurNs }

// Step is one step annotation on the host: its number (ProfilerStep#N's N,
// else the step's ordinal on its rank from 0) and its phase (prefill,
// decode, mixed; "" when the annotation does not say).
type Step struct {
	Trace  string
	Rank   int
	Name   string
	Number int
	Phase  string
	TsNs   int64
	DurNs  int64
}

// Input is what the crossview preset returns, typed: the host frames, the
// GPU operations with their launching frame, the step annotations, and each
// trace's first timestamp (the origin of windows).
type Input struct {
	Frames []Frame
	// Threads are the frames' threads (Frame.Thread), each once; Stacks
	// the Call stacks (Frame.CallStack), each once, Stacks[0] = "" (none).
	Threads []Thread
	Stacks  []string
	// threadIDs and stackIDs index Threads and Stacks (ThreadID, StackID).
	threadIDs map[Thread]int32
	stackIDs  map[string]int32
	Ops       []Op
	// Texts are the operations' traces and names (Op.TraceID, Op.NameID),
	// each once; textIDs indexes them (TextID).
	Texts   []string
	textIDs map[string]int32
	Steps   []Step
	Origins map[string]int64 // trace name -> first timestamp, ns
	// Spans are the first start and the last end of each thread's frames,
	// by thread index, and Hosts says that every Op carries its host frame
	// (Op.HostTsNs ...): with both, the frames can stream in after the rest
	// (Stream) instead of sitting in Frames. Build fills them from Frames.
	Spans []Span
	Hosts bool
	// LeftOut is, per rank, what the capture gate leaves out of the slice
	// the rules judge (sql/capture.sql's excluded and edge_sync
	// intervals); the cross-check leaves out the same (see LeftOut).
	LeftOut []LeftOut
	// EngineFuncs are the autograd engine's functions (the preset's engine
	// rows): see "Sync frames and waits".
	EngineFuncs []EngineFunc
}

// EngineFunc is one autograd engine operator
// (`autograd::engine::evaluate_function: ...`, a node such as
// `CudnnConvolutionBackward`, or an operator of DDP's reducer, which the
// engine runs) on a thread (an index in Input.Threads): its start and
// duration.
type EngineFunc struct {
	Thread      int32
	TsNs, DurNs int64
}

// LeftOut is what the capture gate (analysis/findings) leaves out of the
// slice the rules judge on one rank, from the capture area's intervals,
// in nanoseconds from the trace's first timestamp. The cross-check judges
// the same slice: the GPU idle time inside Idle (start-up and held
// intervals: first-use calls, warm-up, work held by what the trace does
// not show, graph capture) leaves the idle time and the span, and
// EdgeSyncs (the profiler's start and stop syncs, a harness's sync) are
// no sync frame of the loop: they open no gap, block nothing, and their
// time leaves the launching threads' host time.
type LeftOut struct {
	Trace     string
	Rank      int
	Idle      [][2]int64
	EdgeSyncs [][2]int64
}

// Span is a thread's extent: its first frame's start, its last frame's end.
type Span struct{ StartNs, EndNs int64 }

// Slice is the part of the loaded traces both views show. It has the fields
// of evidence.Filter (the one filter of magics, CLI and viewer), copied by
// the caller so that this package does not depend on the Bundle's.
type Slice struct {
	Trace   string `msgpack:"trace,omitempty" json:"trace,omitempty"`
	Rank    int    `msgpack:"rank" json:"rank"`
	HasRank bool   `msgpack:"has_rank" json:"has_rank"`
	// Window in nanoseconds relative to the trace's first timestamp; both zero = everything.
	WindowStartNs int64  `msgpack:"window_start_ns,omitempty" json:"window_start_ns,omitempty"`
	WindowEndNs   int64  `msgpack:"window_end_ns,omitempty" json:"window_end_ns,omitempty"`
	Phase         string `msgpack:"phase,omitempty" json:"phase,omitempty"`
	Step          int    `msgpack:"step" json:"step"`
	HasStep       bool   `msgpack:"has_step" json:"has_step"`
	Stream        int64  `msgpack:"stream" json:"stream"`
	HasStream     bool   `msgpack:"has_stream" json:"has_stream"`
}

// HasWindow reports whether the slice has a window.
func (s Slice) HasWindow() bool { return s.WindowStartNs != 0 || s.WindowEndNs != 0 }

// Options shape the trees that Build keeps.
type Options struct {
	// Depth is the number of tree levels kept below the top frames; deeper
	// frames fold into their ancestor at that level (GPU view: their kernels
	// become its leaves). 0 keeps every level.
	Depth int `msgpack:"depth" json:"depth"`
	// MinPct folds, under each node, the children whose time is under this
	// percentage of the tree's total into one "other" node. 0 keeps all.
	MinPct float64 `msgpack:"min_pct" json:"min_pct"`
	// TopGaps is how many of the largest GPU idle gaps the cross-check
	// reports with the host frames active during them. 0 means 5.
	TopGaps int `msgpack:"top_gaps" json:"top_gaps"`
}

// DefaultOptions are the options of the %crossview magic and the CLI:
// 16 levels (after chains of single frames are folded into one line), nodes
// under 1% folded, five gaps.
func DefaultOptions() Options { return Options{Depth: 16, MinPct: 1, TopGaps: 5} }

// Result is one cross-view: both trees of the same slice and the
// cross-check. It is a plain struct that msgpack encodes, so the evidence
// Bundle carries it and the report and the viewer draw it.
type Result struct {
	Slice Slice `msgpack:"slice" json:"slice"`
	// Label names the slice in words: trace, ranks, window, phase, stream.
	Label string `msgpack:"label" json:"label"`
	GPU   Tree   `msgpack:"gpu" json:"gpu"`
	CPU   Tree   `msgpack:"cpu" json:"cpu"`
	Check Check  `msgpack:"check" json:"check"`
	// Gaps are the evidence gaps: what this slice of the trace cannot show.
	Gaps []string `msgpack:"gaps" json:"gaps"`
}

// Tree is one view.
type Tree struct {
	View string `msgpack:"view" json:"view"` // "gpu" or "cpu"
	// TotalNs is the view's time: GPU time of the slice (GPU view), host
	// self time recorded in the slice (CPU view). The self times of all
	// nodes sum to it exactly.
	TotalNs int64 `msgpack:"total_ns" json:"total_ns"`
	// Roots are the top frames (and, in the GPU view, the bucket
	// "[no launching CPU event]"), largest first.
	Roots []*Node `msgpack:"roots" json:"roots"`
}

// Node is one frame of a tree: every host event with the same stack of
// names, aggregated.
type Node struct {
	Name string `msgpack:"name" json:"name"`
	// Via are the frames between the parent and this node that had no
	// other child and no time of their own; they are folded into this
	// line and kept for the folded stacks.
	Via []string `msgpack:"via,omitempty" json:"via,omitempty"`
	// Kind: python, cpu_op, annotation, runtime, driver; call_stack (a
	// python frame taken from an operator's Call stack arg: no time of its
	// own); kernel, gpu_memcpy, gpu_memset (GPU view leaves); bucket (the
	// GPU view's NoLaunchBucket, and LaunchNotCaptured under an operator);
	// other (folded small nodes).
	Kind string `msgpack:"kind" json:"kind"`
	// Ns is the node's time including its children; SelfNs its own.
	// GPU view: GPU time, held by the leaves. CPU view: host self time.
	Ns     int64 `msgpack:"ns" json:"ns"`
	SelfNs int64 `msgpack:"self_ns" json:"self_ns"`
	// Count is the number of events aggregated into the node.
	Count int64 `msgpack:"count" json:"count"`
	// Sync marks a frame that blocks the host on the device (⚠️);
	// BlockedNs is its host time in the slice.
	Sync      bool  `msgpack:"sync,omitempty" json:"sync,omitempty"`
	BlockedNs int64 `msgpack:"blocked_ns,omitempty" json:"blocked_ns,omitempty"`
	// GapNs (GPU view, sync frames) is the GPU idle time in the gaps the
	// frame opened: it was open when the device ran dry, and a launch ended
	// the gap (see Metrics.GapSyncNs).
	GapNs int64 `msgpack:"gap_ns,omitempty" json:"gap_ns,omitempty"`
	// CPU view: the parts of SelfNs blocked in sync frames or polling the
	// device, and waiting (for work, data or the backward); the rest is
	// working.
	SyncNs int64 `msgpack:"sync_ns,omitempty" json:"sync_ns,omitempty"`
	WaitNs int64 `msgpack:"wait_ns,omitempty" json:"wait_ns,omitempty"`
	// PollNs (CPU view) is the part of SyncNs the frame's own self time
	// spent polling the device (see PollMinNs), not in a sync call.
	PollNs int64 `msgpack:"poll_ns,omitempty" json:"poll_ns,omitempty"`
	// QueueFullNs (CPU view) is the part of SyncNs the frame's own self
	// time spent in launch calls a full launch queue held (see
	// QueueFullMinNs).
	QueueFullNs int64 `msgpack:"queue_full_ns,omitempty" json:"queue_full_ns,omitempty"`
	// Graph is set on a graph launch node of the GPU view.
	Graph *GraphReplay `msgpack:"graph,omitempty" json:"graph,omitempty"`
	// NoCPUAttribution marks GPU leaves replayed by a graph: the kernels
	// have no host stack of their own.
	NoCPUAttribution bool    `msgpack:"no_cpu_attribution,omitempty" json:"no_cpu_attribution,omitempty"`
	Children         []*Node `msgpack:"children,omitempty" json:"children,omitempty"`
}

// GraphReplay describes the replays behind a graph launch node: how many
// launches, how many kernels the trace recorded, and how many the fullest
// replay of the same graph recorded times the number of replays.
type GraphReplay struct {
	Replays  int64 `msgpack:"replays" json:"replays"`
	Recorded int64 `msgpack:"recorded" json:"recorded"`
	Expected int64 `msgpack:"expected" json:"expected"`
	// Keyed counts the replays whose kernels carry a graph id. A replay
	// without one is compared only with replays of the same recorded
	// kernels, which it always matches: with Keyed 0, Coverage is 1
	// whatever the trace left out (negative_queue_length_a100, 2023), so
	// the views say the completeness is unknown (Known).
	Keyed int64 `msgpack:"keyed,omitempty" json:"keyed,omitempty"`
}

// Known: some replay carries a graph id, so Coverage can show kernels the
// trace did not record.
func (g *GraphReplay) Known() bool { return g != nil && g.Keyed > 0 }

// Coverage returns the share of the replays' kernels the trace recorded, 0..1.
func (g *GraphReplay) Coverage() float64 {
	if g == nil || g.Expected == 0 {
		return 1
	}
	return float64(g.Recorded) / float64(g.Expected)
}

// Check is the cross-check: the numbers both views give together, and the verdict.
type Check struct {
	Metrics Metrics `msgpack:"metrics" json:"metrics"`
	// TopGaps are the largest GPU idle gaps with the host frames active in them.
	TopGaps []Gap `msgpack:"top_gaps" json:"top_gaps"`
	// HostStacks are, per rank, the host stacks at the middle of the
	// late-launch gaps (cause host) among the rank's longest gaps, with
	// how many of those gaps and how much of their time each holds: what
	// a host-bound finding's frame is measured on.
	HostStacks []HostStack `msgpack:"host_stacks,omitempty" json:"host_stacks,omitempty"`
	// Verdict: gpu-bound, host/launch-bound, sync-bound,
	// communication-bound, waiting-for-work or inconclusive.
	Verdict string `msgpack:"verdict" json:"verdict"`
	// Rule is the name of the Rules row that gave the verdict.
	Rule string `msgpack:"rule" json:"rule"`
	// Label is "confirmed" or "hypothesis" ("" for inconclusive).
	Label string `msgpack:"label" json:"label"`
	// Reason states the numbers that support the verdict.
	Reason string `msgpack:"reason" json:"reason"`
	// AlsoHolds names the later rules whose conditions hold too, with
	// their verdicts: the runners-up.
	AlsoHolds []string `msgpack:"also_holds" json:"also_holds"`
	// Notes come before the verdict: caveats such as stack-capture inflation.
	Notes []string `msgpack:"notes" json:"notes"`
}

// HostStack is one host stack (Gap.Host; empty: no frame was open) at the
// middle of late-launch gaps of a rank.
type HostStack struct {
	Trace string   `msgpack:"trace,omitempty" json:"trace,omitempty"`
	Rank  int      `msgpack:"rank" json:"rank"`
	Host  []string `msgpack:"host" json:"host"`
	Gaps  int      `msgpack:"gaps" json:"gaps"` // the late-launch gaps with this stack
	Ns    int64    `msgpack:"ns" json:"ns"`     // their time
	Of    int      `msgpack:"of" json:"of"`     // the rank's gaps looked at: its longest, at most 256
	// PyCalls are the python events (python_function: python frames and
	// the C calls they make, such as <built-in method ...>) that the
	// thread whose stack the gaps have recorded from start to end inside
	// them; PyNs is the time those calls cover (each instant once, so a
	// call nested in another adds nothing): their own time, the sum of
	// their self times. A thick run of short calls in a late-launch gap
	// is the Python tracer's per-call cost as much as the host's work
	// (vllm_mi300x_tp4_rank0: about 1,340 calls in each 22-28 ms gap at
	// the compiled forward's entry, covering about 0.25 ms). Zero where
	// the gaps have no stack, and in a trace without python events.
	PyCalls int64 `msgpack:"py_calls,omitempty" json:"py_calls,omitempty"`
	PyNs    int64 `msgpack:"py_ns,omitempty" json:"py_ns,omitempty"`
}

// Gap is one GPU idle gap of a rank.
type Gap struct {
	Trace   string `msgpack:"trace,omitempty" json:"trace,omitempty"`
	Rank    int    `msgpack:"rank" json:"rank"`
	StartNs int64  `msgpack:"start_ns" json:"start_ns"` // relative to the trace's first timestamp
	DurNs   int64  `msgpack:"dur_ns" json:"dur_ns"`
	Cause   string `msgpack:"cause" json:"cause"` // sync, wait, host, device, other (see Metrics)
	// Host is the stack of the launching thread at the gap's middle,
	// outermost first, at most the innermost 4 frames; empty when the
	// thread had no frame open.
	Host []string `msgpack:"host" json:"host"`
	// HostClass is working, sync or waiting.
	HostClass string `msgpack:"host_class" json:"host_class"`
}

// Metrics are the cross-check's numbers, summed over the slice's ranks.
type Metrics struct {
	Ranks     int   `msgpack:"ranks" json:"ranks"`
	WallNs    int64 `msgpack:"wall_ns" json:"wall_ns"`         // slice wall time, summed over ranks
	GPUTimeNs int64 `msgpack:"gpu_time_ns" json:"gpu_time_ns"` // sum of GPU operation time (streams overlap)
	BusyNs    int64 `msgpack:"busy_ns" json:"busy_ns"`         // union of GPU operations
	IdleNs    int64 `msgpack:"idle_ns" json:"idle_ns"`         // GPU idle inside each rank's GPU span, less LeftOutIdleNs
	// EdgeIdleNs is the wall time before each rank's first GPU operation of
	// the slice and after its last (a rank without any: all of its wall):
	// the capture's edges, which HTA's idle time (the ranks area's
	// idle_ns) leaves out too. Not in IdleNs nor in any gap cause.
	EdgeIdleNs int64 `msgpack:"edge_idle_ns,omitempty" json:"edge_idle_ns,omitempty"`
	// LeftOutIdleNs is the GPU idle time inside each rank's GPU span that
	// lies in the start-up and held intervals the capture gate leaves out
	// of the slice the rules judge (Input.LeftOut): not in IdleNs nor in
	// any gap cause, and not in SpanNs.
	LeftOutIdleNs int64 `msgpack:"left_out_idle_ns,omitempty" json:"left_out_idle_ns,omitempty"`
	// EdgeSyncs are the launching threads' outermost sync frames around
	// the capture gate's edge syncs (Input.LeftOut), left out of the sync
	// frames; EdgeSyncNs their time inside the GPU span, left out of the
	// launching threads' host time.
	EdgeSyncs  int   `msgpack:"edge_syncs,omitempty" json:"edge_syncs,omitempty"`
	EdgeSyncNs int64 `msgpack:"edge_sync_ns,omitempty" json:"edge_sync_ns,omitempty"`
	// Idle time by the cause of its gap: opened by a sync call; the
	// launching thread waiting for work; a launch issued after the device
	// went idle while the host worked; work queued before the gap (a device
	// dependency: another stream, an event, a collective; or, in a gap of
	// a few µs, the device's own time between queued kernels, which HTA
	// calls kernel wait); none of these
	// (trailing idle, operations without a launching call, and the part of
	// a late launch's gap in which no launching thread had a frame open
	// for HeldMinNs or more: the host idle too, its work outside the
	// profiler's view).
	GapSyncNs   int64 `msgpack:"gap_sync_ns" json:"gap_sync_ns"`
	GapWaitNs   int64 `msgpack:"gap_wait_ns" json:"gap_wait_ns"`
	GapHostNs   int64 `msgpack:"gap_host_ns" json:"gap_host_ns"`
	GapDeviceNs int64 `msgpack:"gap_device_ns" json:"gap_device_ns"`
	GapOtherNs  int64 `msgpack:"gap_other_ns" json:"gap_other_ns"`
	// GapDeviceShortNs is the part of GapDeviceNs in gaps shorter than
	// KernelWaitMaxNs: HTA's kernel wait, the device's own time between
	// kernels queued back to back, not a dependency.
	GapDeviceShortNs int64 `msgpack:"gap_device_short_ns,omitempty" json:"gap_device_short_ns,omitempty"`
	// Gaps whose cause a mechanism confirms (the operation that ends the
	// gap was launched after the gap began), in ns of idle time: in all and
	// for the sync, wait and host causes.
	GapConfirmedNs     int64 `msgpack:"gap_confirmed_ns" json:"gap_confirmed_ns"`
	GapSyncConfirmedNs int64 `msgpack:"gap_sync_confirmed_ns" json:"gap_sync_confirmed_ns"`
	GapWaitConfirmedNs int64 `msgpack:"gap_wait_confirmed_ns" json:"gap_wait_confirmed_ns"`
	GapHostConfirmedNs int64 `msgpack:"gap_host_confirmed_ns" json:"gap_host_confirmed_ns"`
	// Communication kernels' time not overlapped by other GPU work.
	CommExposedNs int64 `msgpack:"comm_exposed_ns" json:"comm_exposed_ns"`
	CommNs        int64 `msgpack:"comm_ns" json:"comm_ns"`
	// Launching threads' time blocked in sync calls, polling the device or
	// in launch calls a full launch queue held, while the device was busy
	// (inside the GPU span, since busy time is).
	BlockedWhileBusyNs int64 `msgpack:"blocked_while_busy_ns" json:"blocked_while_busy_ns"`
	// QueuedWhileBusyNs is the time inside the GPU span in which the
	// device was busy while GPU work whose launch call had returned waited
	// to start (from the call's return to the work's start): the host had
	// queued its next work ahead of the device.
	QueuedWhileBusyNs int64 `msgpack:"queued_while_busy_ns,omitempty" json:"queued_while_busy_ns,omitempty"`
	// QueueFullCalls and QueueFullNs: the launch calls a full launch
	// queue held (QueueFullMinNs, QueueFullDepth) and their host time in
	// the slice.
	QueueFullCalls int64 `msgpack:"queue_full_calls,omitempty" json:"queue_full_calls,omitempty"`
	QueueFullNs    int64 `msgpack:"queue_full_ns,omitempty" json:"queue_full_ns,omitempty"`
	// QueueFullMinDepth and QueueFullMaxDepth: the fewest and the most
	// launches queued ahead of one of those calls.
	QueueFullMinDepth int64 `msgpack:"queue_full_min_depth,omitempty" json:"queue_full_min_depth,omitempty"`
	QueueFullMaxDepth int64 `msgpack:"queue_full_max_depth,omitempty" json:"queue_full_max_depth,omitempty"`
	// SyncLaunchNs is the part of LaunchedKernelNs, the kernels' time in
	// the slice where a launch call of the trace launched them, that ran
	// while that call was still open: a launch that returns only once its
	// kernel has run, so the host cannot queue work ahead (MTIA's
	// runFunction). IdleNoLaunchNs is the part of IdleNs in which no
	// launch call of the rank that launched work was open.
	LaunchedKernelNs int64 `msgpack:"launched_kernel_ns,omitempty" json:"launched_kernel_ns,omitempty"`
	SyncLaunchNs     int64 `msgpack:"sync_launch_ns,omitempty" json:"sync_launch_ns,omitempty"`
	IdleNoLaunchNs   int64 `msgpack:"idle_no_launch_ns,omitempty" json:"idle_no_launch_ns,omitempty"`
	// Launching threads' host self time by class inside their rank's GPU
	// span, the base of the GPU-side numbers (the wall before the first
	// GPU operation and after the last is left out, as EdgeIdleNs is): a
	// thread's frames count once where they overlap, so each launching
	// thread has at most the span; LaunchThreads of them share it.
	// HostSyncNs holds the time in sync calls, polling the device
	// (Node.PollNs) and in launch calls a full queue held
	// (Node.QueueFullNs); HostWaitNs the time waiting for work, data or
	// the backward another thread runs.
	HostWorkNs int64 `msgpack:"host_work_ns" json:"host_work_ns"`
	HostSyncNs int64 `msgpack:"host_sync_ns" json:"host_sync_ns"`
	HostWaitNs int64 `msgpack:"host_wait_ns" json:"host_wait_ns"`
	// LaunchThreads is the number of launching threads, summed over ranks:
	// the threads that launched the slice's GPU operations.
	LaunchThreads int `msgpack:"launch_threads,omitempty" json:"launch_threads,omitempty"`
	// LaunchSpanNs is the base of the launching threads' host time: each
	// launching thread's rank span (the rank's busy and kept idle time),
	// summed; over one rank, LaunchThreads × SpanNs.
	LaunchSpanNs int64 `msgpack:"launch_span_ns,omitempty" json:"launch_span_ns,omitempty"`
	// Python frames in the slice's ranks (stack capture on when > 0).
	PythonFrames int64 `msgpack:"python_frames" json:"python_frames"`
	// Operators in the slice's ranks whose "Call stack" arg gives the python
	// levels above them (2021-format traces with with_stack; stack capture
	// on when > 0).
	CallStackOps int64 `msgpack:"call_stack_ops,omitempty" json:"call_stack_ops,omitempty"`
	// Graph replays: kernels recorded / expected; both 0 without graphs.
	GraphRecorded int64 `msgpack:"graph_recorded" json:"graph_recorded"`
	GraphExpected int64 `msgpack:"graph_expected" json:"graph_expected"`
}

func share(a, b int64) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// SpanNs is the GPU span the cross-check judges: the wall less the edges
// (first GPU operation to last, summed over ranks) and less the idle time
// the capture gate leaves out (LeftOutIdleNs), the base of the GPU-side
// shares.
func (m Metrics) SpanNs() int64 { return m.WallNs - m.EdgeIdleNs - m.LeftOutIdleNs }

// Busy is the GPU busy share of the GPU span, 0..1.
func (m Metrics) Busy() float64 { return share(m.BusyNs, m.SpanNs()) }

// Idle is 1 - Busy.
func (m Metrics) Idle() float64 { return share(m.IdleNs, m.SpanNs()) }

// Comm is the exposed communication share of the GPU span.
func (m Metrics) Comm() float64 { return share(m.CommExposedNs, m.SpanNs()) }

// Blocked is the share of the GPU span the launching threads spent blocked
// in sync calls while the device was busy.
func (m Metrics) Blocked() float64 { return share(m.BlockedWhileBusyNs, m.SpanNs()) }

// Queued is the share of the GPU span in which the device was busy with
// launched work waiting behind it (QueuedWhileBusyNs).
func (m Metrics) Queued() float64 { return share(m.QueuedWhileBusyNs, m.SpanNs()) }

// HostNs is the launching threads' host self time inside the GPU span.
func (m Metrics) HostNs() int64 { return m.HostWorkNs + m.HostSyncNs + m.HostWaitNs }

// GapShare returns the share of idle time of one gap cause: sync, wait,
// host, device or other.
func (m Metrics) GapShare(cause string) float64 {
	switch cause {
	case CauseSync:
		return share(m.GapSyncNs, m.IdleNs)
	case CauseWait:
		return share(m.GapWaitNs, m.IdleNs)
	case CauseHost:
		return share(m.GapHostNs, m.IdleNs)
	case CauseDevice:
		return share(m.GapDeviceNs, m.IdleNs)
	}
	return share(m.GapOtherNs, m.IdleNs)
}

// StackCapture reports whether python stacks were captured: python
// frames, or operators carrying a Call stack.
func (m Metrics) StackCapture() bool { return m.PythonFrames > 0 || m.CallStackOps > 0 }

// GraphCoverage is the share of graph-replayed kernels the trace recorded;
// 1 without graphs.
func (m Metrics) GraphCoverage() float64 {
	if m.GraphExpected == 0 {
		return 1
	}
	return share(m.GraphRecorded, m.GraphExpected)
}

// The causes of a GPU idle gap.
const (
	CauseSync   = "sync"
	CauseWait   = "wait"
	CauseHost   = "host"
	CauseDevice = "device"
	CauseOther  = "other"
)

// The host time classes of the CPU view.
const (
	ClassWorking = "working"
	ClassSync    = "sync"
	ClassWaiting = "waiting"
)

// The verdicts.
const (
	VerdictGPU          = "gpu-bound"
	VerdictHost         = "host/launch-bound"
	VerdictSync         = "sync-bound"
	VerdictComm         = "communication-bound"
	VerdictWaiting      = "waiting-for-work"
	VerdictInconclusive = "inconclusive"
)

// The labels of a verdict.
const (
	Confirmed  = "confirmed"
	Hypothesis = "hypothesis"
)

// NoLaunchBucket names the GPU view's node for operations that no host
// call launched (no runtime call carries their correlation) and no single
// operator claims by External id.
const NoLaunchBucket = "[no launching CPU event]"

// LaunchNotCaptured names the GPU view's level, under an operator, for the
// operations linked to it by External id: the runtime call that launched
// them is missing from the trace.
const LaunchNotCaptured = "[launch not captured]"

// KindCallStack is the node kind of a python frame taken from an
// operator's Call stack arg.
const KindCallStack = "call_stack"
