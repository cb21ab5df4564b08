-- views: named slices of the events table that presets and users query.
-- INCLUDE: schema
--
-- Each view is a plain SELECT over events (or a self-join of it), so a
-- filter on trace, rank or time pushes down into the scan. Views are created
-- with CREATE OR REPLACE: reopening a database made by an older tracebook
-- refreshes them. Columns not listed under a view are those of events, with
-- the meaning documented in schema.sql.

-- GPU kernels (kind = 'kernel'), every column of events.
CREATE OR REPLACE VIEW kernels AS
SELECT * FROM events WHERE kind = 'kernel';

-- tb_gpu_work(kind): whether an event is GPU work: a kernel, a copy or a
-- memset (kind in kernel, gpu_memcpy, gpu_memset). The one definition of
-- GPU work: every preset that counts GPU events or operations, GPU busy
-- and idle time, a GPU span or a host wait on the GPU calls it, and so does
-- the cross-view's preset. A device-side sync record (kind gpu_sync,
-- Kineto's cuda_sync: Event Sync, Stream Sync, Context Sync, Stream Wait
-- Event) is not GPU work: CUPTI times the synchronisation, not anything the
-- device ran, so it adds no busy time, no GPU event and no edge of the GPU
-- span (event_sync_multi_stream: 6 operations, 0.372 ms busy, not 11 events
-- and 0.399 ms). HTA's temporal breakdown counts the records whose stream
-- is not -1 as GPU time (critical_path_alexnet: its GPU span ends with a
-- Context Sync 75.8 ms after the last operation); pipeline/hta_test.go
-- models that when it compares idle time.
CREATE OR REPLACE MACRO tb_gpu_work(kind) AS
  kind IN ('kernel', 'gpu_memcpy', 'gpu_memset');

-- The longest idle between two GPU operations that still counts as the
-- device's own time between work queued back to back (HTA's kernel wait:
-- consecutive_kernel_delay 30, which HTA compares with µs timestamps), in
-- ns: the gaps and perfetto presets' kernel_wait, and the cross-check's
-- KernelWaitMaxNs (analysis/crossview), which a test keeps equal to it.
CREATE OR REPLACE MACRO tb_kernel_wait_ns() AS 30000;

-- Time buckets, for a join on a rank or thread plus a time condition (an
-- interval around a point, two intervals that overlap): an interval
-- [s, e] is listed in each bucket of width w it touches (unnest of
-- tb_buckets), a point or the start of an overlap joins its own bucket
-- (t // w), and the time test picks from those: the join grows with the
-- trace, not with its square.
CREATE OR REPLACE MACRO tb_buckets(s, e, w) AS range(s // w, e // w + 1);

-- The bucket width for intervals a point is looked up in (tb_buckets),
-- given the longest of them: 1 ms, or the longest interval's 1024th, so
-- that none is listed in more than 1025 buckets.
CREATE OR REPLACE MACRO tb_bucket_ns(longest) AS greatest(1000000, coalesce(longest, 0) // 1024);

-- A log-bucket histogram as text, "b:n b:n ..." in bucket order, from a
-- list of {b, n} structs (an aggregate's list({'b': b, 'n': n})). The list
-- is sorted after the aggregate: string_agg(... ORDER BY b) holds its
-- input per group in memory DuckDB cannot spill (the launch preset at
-- 3,000 steps, 12,201 groups, ran out of 128 MB that way).
CREATE OR REPLACE MACRO tb_hist(l) AS
  array_to_string(list_transform(list_sort(l), lambda x: x.b || ':' || x.n), ' ');

-- GPU-side work: kernels, copies and memsets (tb_gpu_work), every column
-- of events.
CREATE OR REPLACE VIEW gpu_ops AS
SELECT * FROM events WHERE tb_gpu_work(kind);

-- Host operators (kind = 'cpu_op': aten::*, autograd nodes, custom ops),
-- every column of events.
CREATE OR REPLACE VIEW cpu_ops AS
SELECT * FROM events WHERE kind = 'cpu_op';

-- Host runtime and driver calls (kind in runtime, driver), every column of
-- events; api says what the call does (launch, graph_launch, sync, memcpy,
-- memset, other).
CREATE OR REPLACE VIEW runtime AS
SELECT * FROM events WHERE kind IN ('runtime', 'driver');

-- The classifiers below are the one definition of what a kernel, a copy or
-- a host call is: every preset that classifies calls them, and the
-- cross-view reads their answer from its preset (sql/crossview.sql's class
-- and sync columns) instead of classifying in Go;
-- analysis/crossview/classify_sql_test.go checks that the cross-view and
-- the evidence rate the same events the same way.

-- tb_ccl_kernel(name): whether a kernel is a collective library's own
-- (NCCL, RCCL, HCCL), case-insensitively: a name that starts with nccl, rccl
-- or hccl, or ncclDevKernel_* and ncclKernel_* anywhere, as RCCL and older
-- NCCL write them. Such a kernel runs a collective the library names.
CREATE OR REPLACE MACRO tb_ccl_kernel(name) AS
  regexp_matches(name, '^(nccl|rccl|hccl)|ncclDevKernel|ncclKernel', 'i');

-- tb_comm_kernel(name): whether a kernel is a communication kernel, by its
-- name, case-insensitively: NCCL, RCCL and HCCL kernels (a name that starts
-- with nccl, rccl or hccl; ncclDevKernel_* and ncclKernel_* anywhere, as
-- RCCL and older NCCL write them), vLLM's custom all-reduce
-- (vllm::cross_device_reduce_1stage/2stage), DeepEP (deep_ep::,
-- dpsk::ep::) and PyTorch's symmetric-memory collectives
-- (multimem_all_reduce_kernel, multimem_all_gather_kernel,
-- multimem_one_shot_reduce_kernel, one_shot_all_reduce_kernel,
-- two_shot_all_reduce_kernel). A name that only contains all_reduce or the
-- like is not one: Inductor names a fused pointwise kernel after the ops it
-- fuses (triton_poi_fused_add_all_reduce_... holds torch.all). HTA counts
-- only ^nccl, ^hccl and ncclKernel.
CREATE OR REPLACE MACRO tb_comm_kernel(name) AS
  tb_ccl_kernel(name)
  OR regexp_matches(name, 'cross_device_reduce|deep_ep::|dpsk::ep::|multimem_(all_reduce|all_gather|one_shot)|(one|two)_shot_all_reduce', 'i');

-- tb_kernel_class(kind, name): the class of a GPU event: MEM for copies and
-- memsets (kind gpu_memcpy, gpu_memset) and for device transfers written as
-- kernels (a name that starts with dma: MTIA's dma_request, whose args give
-- a direction and a size; HTA counts ^dma as memory too), SYNC for GPU-side
-- waits (kind gpu_sync), COMM for kernels that tb_comm_kernel matches, COMP
-- for every other kernel; NULL for host events.
CREATE OR REPLACE MACRO tb_kernel_class(kind, name) AS
  CASE
    WHEN kind IN ('gpu_memcpy', 'gpu_memset') THEN 'MEM'
    WHEN kind = 'gpu_sync' THEN 'SYNC'
    WHEN kind <> 'kernel' THEN NULL
    WHEN tb_comm_kernel(name) THEN 'COMM'
    WHEN starts_with(name, 'dma') THEN 'MEM'
    ELSE 'COMP'
  END;

-- tb_copy_direction(name): the direction of a GPU copy from its Kineto name
-- (`Memcpy DtoH (Device -> Pageable)` gives DtoH; HtoD, DtoD, HtoH, PtoP,
-- ...); NULL when the name does not say.
CREATE OR REPLACE MACRO tb_copy_direction(name) AS
  NULLIF(regexp_extract(name, '^Memcpy (\w+)', 1), '');

-- tb_copy_src(name): the memory kind a GPU copy's name gives for its
-- source (`(Pageable -> Device)` gives Pageable; Pinned, Device, Managed,
-- Host, ...); NULL when it gives none.
CREATE OR REPLACE MACRO tb_copy_src(name) AS
  NULLIF(regexp_extract(name, '\((\w+) -> \w+\)', 1), '');

-- tb_copy_dst(name): the memory kind a GPU copy's name gives for its
-- destination (`(Pageable -> Device)` gives Device); NULL when it gives none.
CREATE OR REPLACE MACRO tb_copy_dst(name) AS
  NULLIF(regexp_extract(name, '\(\w+ -> (\w+)\)', 1), '');

-- tb_copy_pageable(name): whether a GPU copy's name records pageable host
-- memory as its source or destination (tb_copy_src or tb_copy_dst is
-- Pageable, the memcpy area's src and dst): the driver stages such a copy
-- through a pinned bounce buffer.
CREATE OR REPLACE MACRO tb_copy_pageable(name) AS
  coalesce(tb_copy_src(name) = 'Pageable' OR tb_copy_dst(name) = 'Pageable', false);

-- tb_copy_waits(name): whether a GPU copy makes even the Async call that
-- launched it wait for the device: one that records pageable host memory
-- (CUDA stages it, and a copy into pageable memory returns only when it is
-- done), or a device-to-host copy whose name does not record pinned
-- memory as its destination (`Memcpy DtoH (Device -> Pinned)` is
-- asynchronous; a name without memory kinds, or ROCm's `(Device -> Host)`,
-- does not say, and a DtoH copy is how .item() and .cpu() read a value).
-- False for NULL (no copy).
CREATE OR REPLACE MACRO tb_copy_waits(name) AS
  coalesce(tb_copy_pageable(name)
    OR (tb_copy_direction(name) = 'DtoH' AND coalesce(tb_copy_dst(name), '') <> 'Pinned'), false);

-- tb_sync_call(kind, api, name, copy_waits): how a host runtime or driver
-- call synchronizes with the device. 'blocking': the host waits: a
-- synchronize call (api sync: cuda/hip/cu Stream, Device, Event or Ctx
-- Synchronize), a synchronous copy (api memcpy without Async in the name:
-- cudaMemcpy, hipMemcpyWithStream, cuMemcpyDtoH_v2, ...), or an Async copy
-- whose GPU copy tb_copy_waits (copy_waits: pass tb_copy_waits of the copy
-- with the call's correlation, or false to leave those out). 'stream': a
-- *StreamWaitEvent (api sync): the stream waits, the host does not. NULL
-- for every other event.
CREATE OR REPLACE MACRO tb_sync_call(kind, api, name, copy_waits) AS
  CASE
    WHEN kind NOT IN ('runtime', 'driver') THEN NULL
    WHEN api = 'sync' THEN CASE WHEN contains(name, 'WaitEvent') THEN 'stream' ELSE 'blocking' END
    WHEN api = 'memcpy' AND (NOT contains(name, 'Async') OR coalesce(copy_waits, false)) THEN 'blocking'
  END;

-- tb_graph_launch(kind, api, name): whether a host call launches a CUDA or
-- HIP graph replay (cudaGraphLaunch, hipGraphLaunch: the importer's api
-- graph_launch, or the name where a store predates it), whose GPU work
-- carries the call's correlation: the graphs, overview and capture presets'
-- one test.
CREATE OR REPLACE MACRO tb_graph_launch(kind, api, name) AS
  kind IN ('runtime', 'driver') AND (api = 'graph_launch' OR name IN ('cudaGraphLaunch', 'hipGraphLaunch'));

-- tb_scalar_read(name): whether a host operator reads a device value back
-- to the host (aten::item, aten::_local_scalar_dense, aten::is_nonzero):
-- the host waits for the device inside it, whatever runtime call does the
-- copy.
CREATE OR REPLACE MACRO tb_scalar_read(name) AS
  name IN ('aten::item', 'aten::_local_scalar_dense', 'aten::is_nonzero');

-- tb_host_op(kind, name): whether a host event is a CPU operator that
-- computes: a cpu_op event, or an aten:: event of the legacy profiler (kind
-- other), other than a bare allocation (aten::empty and its kin), which a
-- capture holds around any work, a model's or not (cpu_only: four
-- aten::empty beside gloo all-reduces, no model operator). Without one, a
-- trace cannot show tb_backward_op or tb_optimizer_op, and their absence
-- says nothing.
CREATE OR REPLACE MACRO tb_host_op(kind, name) AS
  (kind = 'cpu_op' OR (kind = 'other' AND starts_with(name, 'aten::')))
    AND name NOT IN ('aten::empty', 'aten::empty_strided', 'aten::empty_like', 'aten::resize_');

-- tb_backward_op(kind, name): whether a host event is an operator of the
-- autograd engine: a name ending in Backward, Backward0, Backward1, ... or
-- _backward (aten::convolution_backward), or autograd::engine::
-- evaluate_function: ...
CREATE OR REPLACE MACRO tb_backward_op(kind, name) AS
  kind IN ('cpu_op', 'other') AND (regexp_matches(name, '(Backward\d*|_backward)$')
    OR starts_with(name, 'autograd::engine::evaluate_function: '));

-- tb_ddp_reducer_op(name): whether a host operator is DDP's reducer's
-- (torch::distributed::reducer::..., torch.distributed.ddp.reducer::...):
-- its gradient hooks and its finalisation, which the autograd engine runs
-- as part of the backward.
CREATE OR REPLACE MACRO tb_ddp_reducer_op(name) AS
  starts_with(name, 'torch::distributed::reducer::') OR starts_with(name, 'torch.distributed.ddp.reducer::');

-- tb_optimizer_op(kind, name): whether a host event is an optimizer's
-- Optimizer.step#... or Optimizer.zero_grad#... annotation.
CREATE OR REPLACE MACRO tb_optimizer_op(kind, name) AS
  kind IN ('cpu_op', 'annotation', 'other')
    AND (starts_with(name, 'Optimizer.step#') OR starts_with(name, 'Optimizer.zero_grad#'));

-- tb_gemm_lead(dims, strides, row_dim, col_dim): which dimension of a matrix
-- operand of a GEMM leads (its row stride, which cuBLAS's kernels need a
-- multiple of 16 bytes): row_dim (the last dimension) when the operand is
-- row-major, col_dim (the one before it) when it is column-major (a
-- transposed view: its last two strides swapped), '?' when its strides
-- say neither (a slice whose row stride is not its dimension, an expanded
-- operand); row_dim when the trace recorded no "Input Strides", as the
-- shapes alone suggest.
CREATE OR REPLACE MACRO tb_gemm_lead(dims, strides, row_dim, col_dim) AS
  CASE WHEN strides IS NULL OR len(strides) <> len(dims) OR len(dims) < 2 THEN row_dim
    WHEN strides[len(dims)] = 1 AND (strides[len(dims) - 1] = dims[len(dims)] OR dims[len(dims) - 1] = 1) THEN row_dim
    WHEN strides[len(dims) - 1] = 1 AND (strides[len(dims)] = dims[len(dims) - 1] OR dims[len(dims)] = 1) THEN col_dim
    ELSE '?' END;

-- GPU copies and memsets, with what the name says about them: a name such as
-- `Memcpy HtoD (Pageable -> Device)` gives direction HtoD, src_kind Pageable
-- and dst_kind Device; `Memset (Device)` gives dst_kind Device.
CREATE OR REPLACE VIEW memops AS
SELECT
  *,
  -- HtoD, DtoH, DtoD, HtoH, PtoP, ... from the name (tb_copy_direction); NULL when the name does not say. TEXT
  tb_copy_direction(name) AS direction,
  -- Memory kind of the source (Pageable, Pinned, Device, Managed, ...); NULL when the name does not say. TEXT
  tb_copy_src(name) AS src_kind,
  -- Memory kind of the destination; for a memset, the memory it writes. TEXT
  COALESCE(tb_copy_dst(name), NULLIF(regexp_extract(name, '^Memset \((\w+)\)', 1), '')) AS dst_kind
FROM events
WHERE kind IN ('gpu_memcpy', 'gpu_memset');

-- User annotations on the host (record_function, ProfilerStep#N,
-- execute_*) and their GPU-side copies (kind in annotation, gpu_annotation),
-- every column of events.
CREATE OR REPLACE VIEW annotations AS
SELECT * FROM events WHERE kind IN ('annotation', 'gpu_annotation');

-- Python frames recorded with with_stack=True (kind = 'python'); the call
-- tree links python_id to python_parent_id. Every column of events.
CREATE OR REPLACE VIEW python_frames AS
SELECT * FROM events WHERE kind = 'python';

-- Flow arrows: each start event (ph 's') paired with every finish event
-- (ph 'f') of the same trace, rank, cat and id. A cudaGraphLaunch has one
-- start and many finishes, so it gives one row per replayed kernel; a start
-- or a finish without its partner (outside the capture window) gives none.
CREATE OR REPLACE VIEW flows AS
SELECT
  -- Trace name. JOINID(traces.trace)
  s.trace AS trace,
  -- Rank. INT
  s.rank AS rank,
  -- Flow category: ac2g (CPU launch to GPU), fwdbwd, async, ... TEXT
  s.cat AS cat,
  -- The id that pairs the two ends (the correlation id for ac2g). INT
  s.flow_id AS flow_id,
  -- Name of the start event. TEXT
  s.name AS name,
  -- File of the start event. JOINID(traces.file_id)
  s.file_id AS src_file_id,
  -- Index of the start event in its file. JOINID(events.idx)
  s.idx AS src_idx,
  -- Start time of the arrow (the launching call's start for ac2g). TIMESTAMP_NS
  s.ts_ns AS src_ts_ns,
  -- Process of the start (the CPU process for ac2g). TEXT
  s.pid AS src_pid,
  -- Thread of the start. TEXT
  s.tid AS src_tid,
  -- File of the finish event. JOINID(traces.file_id)
  f.file_id AS dst_file_id,
  -- Index of the finish event in its file. JOINID(events.idx)
  f.idx AS dst_idx,
  -- End time of the arrow (the GPU activity's start for ac2g). TIMESTAMP_NS
  f.ts_ns AS dst_ts_ns,
  -- Process of the finish (the device for ac2g). TEXT
  f.pid AS dst_pid,
  -- Thread of the finish (the stream for ac2g). TEXT
  f.tid AS dst_tid
FROM events s
JOIN events f
  ON f.trace = s.trace AND f.rank = s.rank AND f.cat IS NOT DISTINCT FROM s.cat AND f.flow_id = s.flow_id
WHERE s.ph = 's' AND f.ph = 'f';

-- tb_trace_t0(tr): each trace's id in tb_strings (trace_id, as tb_events
-- holds it) and its first timestamp (t0, the origin of a window), for
-- trace tr or, when tr is '', every trace: what a preset reads tb_events by,
-- an integer id, where a filter on the events view's trace would look up
-- every event's trace string first.
CREATE OR REPLACE MACRO tb_trace_t0(tr) AS TABLE
SELECT s.id AS trace_id, min(t.first_ts_ns) AS t0
FROM traces t JOIN tb_strings s ON s.s = t.trace
WHERE (tr = '' OR t.trace = tr)
GROUP BY s.id;

-- tb_step_family(kind, name): the step-annotation family an event belongs
-- to, NULL when none: 1 vLLM execute_* (execute_context_N(T)_generation_N(T),
-- execute_N_context_N(sq…)_generation_N(sq…), execute_new_N_cached_N),
-- 2 SGLang step[KIND …], 3 ProfilerStep#N, 4 the python frame of vLLM's
-- gpu_model_runner execute_model, 5 the optimizer's step annotation
-- (Optimizer.step#SGD.step: a training loop profiled without a schedule,
-- whose iterations end where each optimizer step ends). On each rank the
-- lowest family present gives the steps: sql/evidence_base.sql numbers them
-- for the evidence, and a load's --steps slice numbers them the same way.
CREATE OR REPLACE MACRO tb_step_family(kind, name) AS
  CASE
    WHEN NOT ((kind IN ('annotation', 'cpu_op') AND (starts_with(name, 'execute_') OR starts_with(name, 'step[') OR starts_with(name, 'ProfilerStep#') OR starts_with(name, 'Optimizer.step#')))
      OR (kind = 'python' AND ends_with(name, ': execute_model'))) THEN NULL
    WHEN kind <> 'python' AND (regexp_matches(name, '^execute_(\d+_)?context_\d+\(') OR regexp_matches(name, '^execute_new_\d+_cached_\d+')) THEN 1
    WHEN kind <> 'python' AND regexp_matches(name, '^step\[[A-Z]+') THEN 2
    WHEN kind <> 'python' AND regexp_matches(name, '^ProfilerStep#\d+$') THEN 3
    WHEN kind = 'python' AND regexp_matches(name, 'gpu_model_runner\.py\(\d+\): execute_model$') THEN 4
    WHEN kind <> 'python' AND starts_with(name, 'Optimizer.step#') THEN 5
  END;
