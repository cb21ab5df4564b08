// Package crossview builds the two views of one slice of a trace and the
// cross-check between them:
//
//   - the GPU view: every GPU operation (kernel, GPU memcpy, GPU memset)
//     attributed to the host call stack that launched it — python frames,
//     operators and user annotations enclosing the launch, the runtime call
//     (joined by correlation), then the operation as a `→ kernel` leaf —
//     aggregated into a call tree weighted by GPU time;
//   - the CPU view: host self time by stack for the same slice (same ranks,
//     threads, window, phase), split into time spent working, time blocked
//     in synchronizing calls and time waiting for work;
//   - the cross-check: the GPU busy share of the slice, the host frames that
//     were active during the largest GPU idle gaps, and a verdict taken from
//     a documented decision table (Rules).
//
// It works on rows that the crossview SQL preset (sql/crossview.sql) returns.
// DuckDB does the joins: which runtime call launched which GPU operation
// (correlation) and, where the trace lacks that call, which operator did
// (External id), with that host frame's time and thread; each thread's span;
// and it sorts the frames into each thread's start order (ts ascending, end
// descending, ID) and hands them over last. It also rates each row with the
// classifiers of sql/views.sql (an operation's class, a frame's sync), the
// definitions the evidence presets use, so that no name is classified twice;
// the steps preset (sql/steps.sql) says which step and phase each
// annotation is.
//
// This package never holds the frames (a vLLM trace with python stacks has
// tens of millions): a Stream takes everything else first, works out from the
// GPU operations alone each rank's device intervals, busy time, gaps and
// longest gaps, then takes the frames one at a time and walks each thread's
// call stack (the innermost open frame that contains a frame encloses it;
// the frames it does not contain are closed). An open frame gets its node in
// the trees when it has time in the slice or hangs GPU work; a closed one
// adds its self time; a frame of the main launching thread open at the
// middle of a longest gap gives that gap its host stack, and a python
// frame of that thread that starts and ends inside the gap adds to the
// gap's count of python calls and the time they cover (two counters a
// gap: HostStack.PyCalls). Its memory is the GPU operations', the
// aggregated trees' and one open stack per thread.
// Build and BuildAll stream an Input that holds its frames. The package
// filters the rows to the slice, clips them to the window, folds small
// nodes, draws the trees as text, HTML and folded stacks, and decides the
// verdict. Running the SQL is the engine's job (internal/duck, through
// pipeline.CrossViews); carrying a Result in the evidence Bundle is
// analysis/evidence's; the report draws it with analysis/report. The
// package imports the standard library, analysis/table and sql (for the
// one communication-kernel pattern, read from sql/views.sql's
// tb_comm_kernel macro), so it builds for the WebAssembly viewer.
//
// # Accounting
//
// Nothing is dropped. Every GPU operation in the slice ends in exactly one
// leaf of the GPU tree: under the runtime call that launched it; under its
// operator and a "[launch not captured]" level when no host call carries
// its correlation but exactly one operator of its file and rank has its
// External id (Kineto writes the launching operator's External id on GPU
// work); under the bucket "[no launching CPU event]" otherwise; or in an
// "other" node when folding merged it away. Several operators with the
// External id leave the operation in the bucket, and so does a rank whose
// GPU operations mostly carry their correlation id as External id (some
// exporters copy it there, and such numbers collide with operators' ids by
// chance); the evidence gaps count both, and the operations launched before
// the host capture began (a correlation id lower than every captured
// runtime call's). The leaves
// of the GPU tree therefore sum to the GPU time of the slice exactly, in
// integer nanoseconds (Tree.TotalNs). Likewise the self times of the CPU tree
// sum to the host time the profiler recorded in the slice: each thread's
// union of frames, where frames that overlap without nesting (a
// record_function range that crosses the python frames around it, as in
// b200_eager) count their shared time once, for the frame that started
// first.
//
// A window clips: an operation or frame that straddles an edge counts only
// for its part inside the window. A phase or step selects the step
// annotations of that phase (vLLM `execute_context_N(T)_generation_N(T)`,
// `execute_new_N_cached_N`, SGLang `step[EXTEND|DECODE|MIXED ...]`,
// `ProfilerStep#N`): host frames are clipped to those steps' host intervals,
// and a GPU operation belongs to a step when the runtime call that launched
// it lies inside the step (without a launching call: when the operator its
// External id names starts inside it, else when the operation does). A
// stream restricts the GPU view and the device-side
// numbers; the CPU view is the host's and is not filtered by stream.
//
// # Python frames from a Call stack
//
// Traces of 2021 (and others captured with with_stack but without
// python_function events) carry an operator's python stack as its
// "Call stack" arg: frames separated by ';', innermost first. On a rank
// with no python frames, those frames become the python levels above the
// operator, outermost first, as nodes of kind call_stack with no time of
// their own; an operator nested in another draws only the frames beyond
// the enclosing one's. A region (an annotation, or an operator recorded in
// record_function's __enter__, as ProfilerStep#N is) gets no levels of its
// own: the frames at its start need not enclose it. Stack capture counts
// as captured python stacks for the verdict (Metrics.StackCapture).
//
// # Sync frames and waits
//
// A frame is a sync frame (⚠️) when the preset rates it blocking (Frame.Sync):
// cuda/hip/cu Stream/Device/Event/Ctx Synchronize, a synchronous memcpy
// (cudaMemcpy, hipMemcpy, hipMemcpyWithStream, cuMemcpyDtoH, ...), a
// cudaMemcpyAsync whose copy is device-to-host or from pageable memory
// (tb_sync_call), and the scalar reads aten::item, aten::_local_scalar_dense
// and aten::is_nonzero (tb_scalar_read). Its blocked host
// time is its own duration inside the slice; in the GPU view an outermost
// sync frame also carries the GPU idle time of the gaps it opened (it was
// open when the device ran dry, and a launch ended the gap). Host self time inside a sync
// frame is "sync" in the CPU view; self time inside a frame that matches
// WaitPatterns (a vLLM worker in shm_broadcast dequeue / acquire_read /
// sched_yield waiting on the engine core, a Condition or queue wait, an idle
// DataLoader waiting for its workers, a zmq poll) is "waiting", and so is
// the self time of autograd's run_backward (python stacks) and, on a
// launching thread, the self time of a frame while another thread of the
// rank runs the autograd engine's operators (`autograd::engine::evaluate_function:`,
// the nodes, `...Backward0`, and DDP's reducer, `torch.distributed.ddp.reducer::...`:
// the preset's engine rows) that started inside it: the thread called
// backward() and is blocked until the engine's device thread has run it
// (nccl_data_a100: the main thread's `## backward ##`); its
// callees, and its self time before the first and after the last of those
// functions, are classed on their own. A stretch of a launching thread's
// self time of PollMinNs or more that ends when the GPU work of the
// thread's last launch ends (within PollSlackNs) is the thread polling the
// device, as DeepEP's dispatch spins on a counter its notify kernel writes
// (train_h800_ep64: 66 ms in dispatch(F)): it joins the sync time (⚠️
// polling the device) and the blocked-while-busy share though no sync call
// is in the trace; the gap causes read sync calls only, as the sync
// evidence does. So does a launch call of QueueFullMinNs or more made with
// QueueFullDepth or more of its rank's launches queued ahead of it (called,
// their GPU work not yet started): the driver holds a launch while its queue
// is full, until the device takes an entry (ns_resolution_v100: 533
// cudaLaunchKernel calls over 100 µs, each with 1,011-1,021 queued; ⚠️
// launch queue full). The rest is "working".
//
// # CUDA graphs
//
// A cudaGraphLaunch/hipGraphLaunch node expands to the kernels it replayed
// (same correlation). They are marked as having no per-kernel CPU
// attribution, and the node records how many kernels each replay recorded
// against the most any replay of the same graph recorded (the trace's
// coverage of the replays; a profiler buffer that overflows under continuous
// replay records only some of them).
//
// # The verdict
//
// Rules is the decision table; the first rule whose condition holds gives
// the verdict, except among the rules that name a constraint on the idle
// or exposed time (comm-exposed, waiting, sync-gaps, host-gaps): where
// several of them hold, the one whose constraint takes the largest share
// of the span (comm; idle × wait, sync or host) decides. Its numbers are shares of the GPU span: the slice's wall time
// (the window, the selected steps, or the span of the rank's events) from
// each rank's first GPU operation to its last, summed over ranks; the wall
// before and after (Metrics.EdgeIdleNs) is the capture's edge, in no share.
// The span is the one the rules judge (Input.LeftOut, from the capture
// gate of analysis/findings): the GPU idle inside start-up and held
// intervals (first-use calls, warm-up, work held by what the trace does not
// show, a graph capture) leaves the span and the idle time
// (Metrics.LeftOutIdleNs; each cause of a gap keeps its share of the gap's
// time outside them), and the sync calls at the window's edge (the
// profiler's start and stop syncs, a harness's sync) are no sync frame of
// the loop: they open no gap and block nothing, and their time leaves the
// launching threads' host time (Metrics.EdgeSyncs). The reason says what
// was left out. The report, %crossview and `tracebook crossview` all hand
// the cross-check the capture gate's intervals (pipeline.CrossView
// collects the capture area's evidence beside the rows, as the report
// does), so they judge the same slice. The launching threads' host time is measured in the same
// span:
//
//	busy      GPU busy time (union of GPU operations, all streams) / span
//	idle      1 - busy
//	sync      idle time in gaps opened by a sync call on the same rank (the host
//	          was blocked in it when the device ran dry) / idle
//	wait      idle time in gaps during which the launching thread sat in a wait
//	          frame (no work to launch) / idle
//	host      idle time in gaps that ended with a launch issued after the gap had
//	          begun while the host was working (the device waited for the host) / idle
//	comm      communication kernels' time not overlapped by computation / span
//	blocked   launching threads' time blocked in sync calls or polling the
//	          device while it was busy (the host ahead, waiting on the
//	          device) / span
//	queued    time the device was busy while work whose launch call had
//	          returned waited to start (the host kept the queue filled) / span
//
//	rule               verdict             condition                                        label
//	no-gpu-work        inconclusive        no GPU operation in the slice                    -
//	graph-undercount   inconclusive        graph replays recorded < 50% of their kernels    -
//	comm-exposed       communication-bound comm >= 0.20                                     hypothesis
//	device-saturated   gpu-bound           busy >= 0.85                                     confirmed when blocked >= 0.05, or queued >= 0.75 with host time in the span
//	host-ahead         gpu-bound           busy >= 0.70 and queued >= 0.75                  hypothesis
//	waiting            waiting-for-work    idle >= 0.15 and wait >= 0.40                    linked
//	sync-gaps          sync-bound          idle >= 0.15 and sync >= 0.40                    linked
//	host-gaps          host/launch-bound   idle >= 0.15 and host >= 0.50                    linked; hypothesis with python stacks
//	device-mostly-busy gpu-bound           busy >= 0.70 and blocked >= 0.05                 hypothesis
//	otherwise          inconclusive        -                                                -
//
// A window that is no run of the workload at all (a graph capture over
// most of it: captured work is recorded, not executed; a counter capture:
// synthetic timings) gets no reading (Check.Unread, rule
// no-steady-state), as the capture gate decides. Nor does a slice of one
// GPU stream of ranks that ran work on others (rule one-stream): their
// work fills the stream's idle time, which is then not the device's.
//
// "linked" means confirmed when a mechanism links at least half of the
// idle time the verdict rests on, else hypothesis. A gap's cause is linked
// when the operation that ends it was launched after the gap began (same
// rank; for an operation linked by External id, when its operator started
// after the gap began, since the launch lay inside the operator): the
// device demonstrably waited for that launch. The other rules
// whose conditions also hold are reported as runners-up.
//
// A verdict is "confirmed" only when a mechanism links cause and effect in
// the same rank: a sync call and the device gap it opens, a launch issued
// after the device went idle, a wait frame that held the launching thread
// while the device was idle, the host blocked on the busy device or its
// launched work queued behind it for most of the span. Overlap in time
// alone gives "hypothesis". When python stacks were captured, the
// cross-check says that stack capture inflates host time before it calls
// anything host-bound, and a host-bound verdict is never better than a
// hypothesis; so does an operator's Call stack.
package crossview
