-- capture: what in the capture window is not the workload's steady state: first-use and warm-up work, GPU work held by work the window does not show, work launched before the window, graph capture, counter replay, clock skew and the syncs at the window's edge.
-- INCLUDE: evidence_base
--
-- A profiler window often holds more than the loop it was meant to show:
-- the CUDA context being created, lazy module loading, cuDNN autotuning, a
-- warm-up iteration, a CUDA/HIP graph capture at engine start-up, kernels
-- queued before the capture began. The rules must not read these as the
-- workload's behaviour; analysis/findings/capture.go reads this preset,
-- names each artifact in the report and takes the GPU idle time inside
-- them out of the slice the rules judge.
--
-- Kinds (one row per trace, rank and kind):
--   first_use: runtime/driver calls other than syncs, copies and graph
--     launches that take at least 1 ms and at least 20x the median of their
--     name on the rank, or are the only call of their name and take 1 ms:
--     context creation, lazy module loading, allocator growth. A kernel
--     launch must be the first launch of its kernel (a module loads on its
--     kernel's first launch, which can come late; negative_queue_length's
--     slow launches of the same three kernels in every step are the
--     loop's); another call must be among the first 20 of its name
--     (nccl_data_a100's 821st cudaStreamGetPriority, 2.4 ms in the loop, is
--     a hiccup of the loop). A graph launch's time grows with its graph
--     (sglang_qwen3_decode_mi300x: one hipGraphLaunch of 544 kernels, 1.6
--     ms, is its decode step). At most 20 such calls of one name: more
--     recur through the run (a submission call blocking behind a busy
--     device), which is no one-time cost.
--   first_copy: the part of a first copy call before the rank's first GPU
--     work, when it is 1 ms or more and 20x the median time the calls of
--     its name spend before their own copy starts (or the call is the only
--     one of its name), the call among the first 20 of its name and made
--     before any GPU work the trace shows was launched
--     (evidence_base_waits, sql/evidence_base.sql, decides; the first_use
--     test above skips copies, whose time is mostly their copy's): the
--     call ran no copy and waited on no queued work there, a one-time cost
--     at the window's start (resnet50_num_workers_4: the first
--     cudaMemcpyAsync of ProfilerStep#5, 40.0 ms, 36.4 ms of it before its
--     3.6 ms copy, the GPU's first work). The sync and copy rules leave
--     that part out of their blocked time.
--   upload: a copy call that moved data to the device before any
--     computation, on a rank whose every GPU copy ends before its first
--     kernel starts, outside every step (evidence_base_waits decides): a model's weights or
--     its inputs uploaded once, before the work, not a copy the loop makes
--     each step (critical_path_alexnet: 16 HtoD copies, 244 MB). The sync
--     and copy rules leave the whole call out of their blocked time.
--   first_op: the first call of a CPU operator on its thread when it takes at
--     least 10 ms and 20x the median of the later calls (cuDNN autotune,
--     compile warm-up), unless a sync or copy call takes half of it, or a
--     launch call held open while its own kernel ran through half of it.
--   loader_start: the first batch of a multi-process DataLoader iterator
--     (enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__) on
--     its thread when it takes at least 100 ms and 5x the median of the
--     later ones (two or more): the workers starting up (and re-spawning
--     each epoch without persistent_workers), not the steady loading.
--   profiler_overhead: the profiler's overhead events (CUPTI's Lazy
--     Function Loading: a kernel's module loaded on its first launch, with
--     CUDA's lazy module loading; Activity Buffer Request and Buffer
--     Flush: the profiler allocating and writing out its own buffers),
--     each as the innermost CPU operator around it, which paid for it
--     (b200_eager: first aten::addmm calls of 1.5-2.5 ms against a 0.06 ms
--     median), or as the event itself where no operator is around it.
--   warmup: annotations or operators whose name says warm-up (warmup,
--     warm_up, warm-up), the outermost of each thread: one nested in
--     another counts once.
--   harness: a benchmark harness's own work between the measured runs:
--     PARAM's operator benchmark ([param|clear_cache], before each
--     measured run when the L2 cache is to be cold: a multiply of a
--     CPU tensor the size of the L2, then torch.cuda.empty_cache()).
--     critical_path_alexnet: 2 ranges, 56 ms, 52.9 ms of GPU idle.
--   warmup_step: the first step of a phase when it is at least twice the
--     median of that phase's other steps (three steps or more), a step
--     delimited by optimizer steps counted from the rank's first GPU work
--     on. Not for
--     phase unknown: steps found from vLLM's execute_model frames carry no
--     phase, and their first is often the prefill, real work.
--   held: the part of a GPU idle interval (of the union of the rank's GPU
--     work) after the launching call of the work that ends it returned, when
--     that call returned at least 1 ms before the work started: the device
--     had the work and did not run it, held by a dependency (an event on
--     another stream, a peer) or by work the trace does not show (another
--     process, work queued before the window), not by the host. The part
--     before that call returned is the host's, whatever else was queued.
--     Parts under 30 us are left out: the gaps between queued kernels
--     (HTA's kernel_wait), not a hold.
--   held_graph: the held intervals whose work is a node of a CUDA/HIP graph
--     replay (its launching call a cudaGraphLaunch or hipGraphLaunch): the
--     replay ran nodes the trace does not record there, or waited on a
--     dependency before or inside the graph. A part of held, not in
--     excluded on its own. negative_queue_length_a100: 616 of its 664 ms
--     of held idle, each step's replays of the compiled backward starting
--     up to 64 ms after the work before them ended.
--   late_start: the rank's first GPU work (no GPU work of the trace
--     before it), when it started 1 ms or more after its launching call
--     returned: the device was busy with work the trace does not show (a
--     step before the window, another process) or its clock is offset from
--     the host's. From the call's return to the work's start; it lies
--     before the GPU span, so no rule judges it (not in excluded).
--     vllm_decode_full_mi300x: its first copy, launched at 0.5 ms, starts
--     7.8 ms later.
--   held_wait: blocking calls (syncs, copies) of which 1 ms or more lies
--     in idle gaps of 1 ms or more between the rank's GPU work
--     (evidence_base_waits), edge syncs (below) left to edge_sync: the host
--     waited for work the trace does not show. Each call counts from its
--     start for the length of that part (its held_ns), so total_ns is the
--     held time. The sync and copy rules leave it out of their blocked
--     time.
--   pre_window: GPU work with a correlation id but no launching call in the
--     window, the id lower than every runtime call's of the rank: launched
--     before the capture began (evidence_base_events.pre, which the kernels
--     area's pre_window_ns reads too; the cross-view's before_capture link,
--     sql/crossview.sql, makes the same test over the whole rank for the
--     operations no operator's External id links).
--   graph_capture: CUDA/HIP stream capture and instantiation calls and
--     capture_* annotations; the interval spans the first to the last.
--     Captured work is not executed.
--   counter_range: cuda_profiler_range events: a CUPTI counter capture whose
--     timestamps are synthetic.
--   past_window: host annotations and operators that end after their
--     file's Record Window End marker, which Kineto writes once the
--     profiler has stopped, after all it recorded: an end stamped late, of
--     a range still open at the stop or by an exporter's error
--     (triton_example: ProfilerStep#1, which holds all the window's work,
--     ends 13.3 s past it). The steps end such a step at the marker
--     (evidence_base_steps); the interval is the event's own.
--   clock_skew: GPU work that starts before its launching call started;
--     interval from the work's start to the call's start.
--   edge_sync: blocking synchronising calls after the rank's last GPU work started
--     (the profiler's stop synchronisation, a harness sync), before the
--     rank's first launching call (it can only wait for work launched
--     before the window: a harness's sync after warm-up) or, on a rank
--     with steps, outside every step (evidence_base_edge, which the sync
--     preset's edge column reads too). name is the longest call's.
--   excluded: the union of first_use, first_copy, upload, first_op, loader_start,
--     profiler_overhead, warmup, warmup_step, harness, held and graph_capture: what
--     the rules take out of the judged slice.
--   interval: one row per merged interval of excluded and of edge_sync
--     (name says which; first_ns and last_ns its bounds, idle_ns 0): the
--     CPU cross-check leaves out of its slice what the rules leave out of
--     theirs (analysis/crossview's LeftOut). The pipeline hands these rows
--     to the cross-check and keeps them out of the capture area's table.
--
-- Columns:
-- trace: Trace name. TEXT
-- rank: Rank. INT
-- kind: Artifact kind (see above). TEXT
-- name: Name of the longest event of the kind (ties: the earliest, then by name; '' for excluded). TEXT
-- count: Events (for excluded: merged intervals). COUNT
-- total_ns: Summed duration of the events (for excluded: length of the union). DURATION_NS
-- max_ns: The longest event. DURATION_NS
-- idle_ns: Device-level GPU idle time inside the kind's merged intervals (the idle of ranks.idle_ns). DURATION_NS
-- span_ns: Part of the merged intervals inside the rank's GPU span (first GPU start to last GPU end). DURATION_NS
-- first_ns: First start, from the trace's first event. TIMESTAMP_NS
-- last_ns: Last end, from the trace's first event. TIMESTAMP_NS
-- steps: held only: the steps (of its launching calls) in which held work left the GPU idle 1 ms or more at once, summed over ranks when merged; NULL for the other kinds. COUNT
--
-- PARAMS: the four of evidence_base: $1 trace (TEXT, '' = every trace), $2
--   rank (INT, -1 = every rank), $3 window start and $4 window end
--   (DURATION_NS from the trace's first event, 0 = open). They select the
--   cuda_profiler_range events, which evidence_base_events does not mark;
--   the rest reads evidence_base_events, built for the same filter.
WITH
_t0 AS (
  SELECT trace, min(first_ts_ns) AS t0 FROM traces GROUP BY trace
),
-- The rank's GPU work, with the latest end before each (pm) in the one
-- order of evidence_base_gpu (sql/evidence_base.sql). Not materialised:
-- its readers each scan for their own columns.
_gpu AS NOT MATERIALIZED (
  SELECT trace, rank, kind, name, ts_ns, end_ns, correlation, step, pm_all AS pm, pre
  FROM evidence_base_gpu
  WHERE ts_ns IS NOT NULL
),
_gspan AS (
  SELECT trace, rank, min(ts_ns) AS gs, max(end_ns) AS ge FROM _gpu GROUP BY trace, rank
),
-- The idle gaps of the union of GPU work: evidence_base_busy's, between
-- one busy segment and the next.
_idle AS (
  SELECT trace, rank, seg_end AS s, next_ts AS e FROM evidence_base_busy WHERE next_ts IS NOT NULL
),
-- The cuda_profiler_range events of the filter, read from tb_events
-- (schema.sql) by ids and materialised, so that their strings are looked
-- up after the filter (_art): a filter on the events view's cat looks up
-- every event's cat first (×21 vLLM: 0.17 s of this preset's 0.5-0.8 s).
_cr AS MATERIALIZED (
  SELECT e.trace_id, e.rank, e.name_id, e.ts_ns, e.end_ns
  FROM tb_events e JOIN tb_trace_t0($1::VARCHAR) t ON t.trace_id = e.trace_id
  WHERE e.cat_id IN (SELECT id FROM tb_strings WHERE s = 'cuda_profiler_range') AND e.ts_ns IS NOT NULL
    AND ($2::INTEGER < 0 OR e.rank = $2::INTEGER)
    AND ($3::BIGINT <= 0 OR e.ts_ns - t.t0 >= $3::BIGINT)
    AND ($4::BIGINT <= 0 OR e.ts_ns - t.t0 < $4::BIGINT)
),
_rt AS (
  SELECT trace, rank, tid, kind, api, name, ts_ns, dur_ns, end_ns, correlation, step
  FROM evidence_base_events
  WHERE kind IN ('runtime', 'driver') AND ts_ns IS NOT NULL
),
-- t20: the start of the name's 20th call (its last where it has fewer),
-- the calls that can be a first use counted: a call among the first 20
-- starts at or before it.
_rtm AS (
  SELECT trace, rank, name, median(dur_ns) AS med, count(*) AS n,
    list_last(min(ts_ns, 20) FILTER (WHERE api NOT IN ('sync', 'memcpy', 'memset', 'graph_launch'))) AS t20
  FROM _rt GROUP BY trace, rank, name
),
_launch AS (
  SELECT trace, rank, correlation, min(ts_ns) AS ls, min(end_ns) AS le,
    bool_or(tb_graph_launch(kind, api, name)) AS graph
  FROM _rt WHERE correlation IS NOT NULL
  GROUP BY trace, rank, correlation
),
-- The GPU work with its launching call, joined once for held, held_graph
-- and clock_skew.
_linked AS (
  SELECT g.trace, g.rank, g.name, g.ts_ns, g.step, g.pm, l.ls, l.le, l.graph
  FROM _gpu g JOIN _launch l ON l.trace = g.trace AND l.rank = g.rank AND l.correlation = g.correlation
),
-- The steps in which held work (below) leaves the GPU idle 1 ms or more
-- at once: a hold in step after step is the loop's own, not a one-off.
_heldsteps AS (
  SELECT trace, rank, count(DISTINCT step) AS steps FROM _linked
  WHERE pm IS NOT NULL AND ts_ns - le >= 1000000 AND ts_ns - greatest(pm, le) >= 1000000 AND step >= 0
  GROUP BY trace, rank
),
-- The profiler's overhead events (CUPTI: Lazy Function Loading, a
-- kernel's module loaded on its first launch; Activity Buffer Request, the
-- profiler's own buffers), each with the innermost CPU operator around it,
-- which paid for it (the event's own interval where none is). The
-- operators are listed in every time bucket they overlap (the width 1 ms,
-- or the longest operator's 1024th) and an event looks among those of the
-- bucket of its start: on the rank alone, each event was compared with
-- every operator (×250 vLLM: 500 events by 5.6 M operators, 9.3 s).
_ovw AS (
  SELECT tb_bucket_ns(max(dur_ns)) AS w FROM evidence_base_events WHERE kind = 'cpu_op'
),
_ovh AS (
  SELECT v.trace, v.rank, v.name, v.ts_ns, v.end_ns,
    arg_min(c.name, c.dur_ns) AS op, arg_min(c.ts_ns, c.dur_ns) AS op_ts, arg_min(c.end_ns, c.dur_ns) AS op_end
  FROM (SELECT v.*, v.ts_ns // _ovw.w AS b FROM evidence_base_events v, _ovw WHERE v.kind = 'overhead' AND v.dur_ns > 0) v
  LEFT JOIN (
    SELECT c.trace, c.rank, c.name, c.ts_ns, c.end_ns, c.dur_ns, unnest(tb_buckets(c.ts_ns, c.end_ns, _ovw.w)) AS b
    FROM evidence_base_events c, _ovw WHERE c.kind = 'cpu_op'
  ) c ON c.trace = v.trace AND c.rank = v.rank AND c.b = v.b AND c.ts_ns <= v.ts_ns AND c.end_ns >= v.end_ns
  GROUP BY v.trace, v.rank, v.name, v.ts_ns, v.end_ns
),
_ops AS (
  SELECT trace, rank, tid, name, ts_ns, dur_ns, end_ns,
    row_number() OVER (PARTITION BY trace, rank, tid, name ORDER BY ts_ns, end_ns DESC) AS k
  FROM evidence_base_events
  WHERE kind = 'cpu_op' AND ts_ns IS NOT NULL AND dur_ns >= 10000000
),
_opm AS (
  SELECT trace, rank, tid, name, median(dur_ns) AS med, count(*) AS n
  FROM evidence_base_events
  WHERE kind = 'cpu_op' AND ts_ns IS NOT NULL
  GROUP BY trace, rank, tid, name
),
_loader AS (
  SELECT trace, rank, tid, name, ts_ns, end_ns, dur_ns,
    row_number() OVER (PARTITION BY trace, rank, tid, name ORDER BY ts_ns, end_ns DESC) AS k
  FROM evidence_base_events
  WHERE kind IN ('annotation', 'cpu_op') AND ts_ns IS NOT NULL
    AND name = 'enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__'
),
_loaderm AS (
  SELECT trace, rank, tid, name, median(dur_ns) AS med, count(*) AS n FROM _loader WHERE k > 1 GROUP BY ALL
),
-- d: the step's time; for a step delimited by optimizer steps (prio 5),
-- from the rank's first GPU work on: the first such step begins with the
-- rank's first event, not at a boundary the loop marked, and holds the
-- capture's lead-in (with_gpu_user_annotation's step 0, 4.0 ms of which
-- 2.4 ms before any GPU work, against steps of 1.9 ms). An annotated
-- step's time before its first kernel is its own (a DataLoader's worker
-- start-up).
_stepd AS (
  SELECT s.trace, s.rank, s.step, s.phase, s.ts_ns, s.end_ns,
    s.end_ns - CASE WHEN s.prio = 5 THEN greatest(s.ts_ns, coalesce(g.g0, s.ts_ns)) ELSE s.ts_ns END AS d,
    row_number() OVER (PARTITION BY s.trace, s.rank, s.phase ORDER BY s.ts_ns) AS k
  FROM evidence_base_steps s
  LEFT JOIN (SELECT trace, rank, min(seg_ts) AS g0 FROM evidence_base_busy GROUP BY ALL) g ON g.trace = s.trace AND g.rank = s.rank
),
_stepm AS (
  SELECT trace, rank, phase, median(d) AS med, count(*) AS n FROM _stepd WHERE k > 1 GROUP BY trace, rank, phase
),
-- Each kernel's first launch (correlation ids grow with launch order) and
-- the launches of kernels: a launch can load a module only the first time
-- its kernel runs. One row per launch (a graph launch runs many kernels),
-- joined to the calls (_slow): as a correlated subquery, DuckDB grouped
-- the calls by all their columns first. With the anti join of first_op
-- and _linked read twice, vLLM H100 on one thread: this preset 85 → 59 ms
-- of CPU (medians of 20 runs).
-- k_ts and k_end span the kernels of the launch.
_kfirst AS (
  SELECT trace, rank, correlation, bool_or(c1 = correlation) AS first_of_kernel, min(ts_ns) AS k_ts, max(end_ns) AS k_end
  FROM (
    SELECT trace, rank, correlation, ts_ns, end_ns, min(correlation) OVER (PARTITION BY trace, rank, name) AS c1
    FROM _gpu WHERE kind = 'kernel' AND correlation IS NOT NULL
  )
  GROUP BY trace, rank, correlation
),
-- A launch call that stays open while its own kernel runs through half of
-- it or more spent that time on the kernel, not on a first use (a runtime
-- whose launch returns once the kernel has run: mtia_single_rank's 212 ms
-- call holds its 211 ms split_eb_bwd_rowwise_adagrad kernel).
_slow AS (
  SELECT trace, rank, name, ts_ns, end_ns,
    count(*) OVER (PARTITION BY trace, rank, name) AS n_slow
  FROM (
    SELECT r.*, m.t20, f.first_of_kernel, f.k_ts, f.k_end
    FROM _rt r JOIN _rtm m ON m.trace = r.trace AND m.rank = r.rank AND m.name = r.name
    LEFT JOIN _kfirst f ON f.trace = r.trace AND f.rank = r.rank AND f.correlation = r.correlation
    WHERE r.api NOT IN ('sync', 'memcpy', 'memset', 'graph_launch')
      AND r.dur_ns >= 1000000 AND (m.n = 1 OR r.dur_ns >= 20 * m.med)
  )
  WHERE CASE WHEN api = 'launch' THEN coalesce(first_of_kernel, true)
      AND coalesce(2 * (least(k_end, end_ns) - greatest(k_ts, ts_ns)) < dur_ns, true)
    ELSE ts_ns <= t20 END
),
-- Launch calls of 1 ms or more held open while their own kernel ran
-- through half of them or more: kernel time, on a runtime whose launch
-- returns once its kernel has run (mtia_single_rank: the first aten::cat,
-- 13.9 ms around its 13.0 ms kernel).
_held_launch AS (
  SELECT r.trace, r.rank, r.tid, r.ts_ns, r.end_ns, r.dur_ns
  FROM _rt r JOIN _kfirst f ON f.trace = r.trace AND f.rank = r.rank AND f.correlation = r.correlation
  WHERE r.api = 'launch' AND r.dur_ns >= 1000000
    AND 2 * (least(f.k_end, r.end_ns) - greatest(f.k_ts, r.ts_ns)) >= r.dur_ns
),
_edge AS (
  SELECT trace, rank, name, ts_ns, end_ns, correlation FROM evidence_base_edge
),
_rwe AS (
  SELECT trace, file_id, rank, min(ts_ns) AS rwe FROM evidence_base_events
  WHERE kind = 'instant' AND name = 'Record Window End'
  GROUP BY ALL
),
_art AS (
  SELECT trace, rank, 'first_use' AS kind, name, ts_ns, end_ns
  FROM _slow WHERE n_slow <= 20
  UNION ALL
  SELECT o.trace, o.rank, 'first_op', o.name, o.ts_ns, o.end_ns
  FROM (
    SELECT o.* FROM _ops o
    JOIN _opm m ON m.trace = o.trace AND m.rank = o.rank AND m.tid IS NOT DISTINCT FROM o.tid AND m.name = o.name
    WHERE o.k = 1 AND m.n >= 2 AND o.dur_ns >= 20 * m.med
  ) o
  -- a first call that mostly waited in a sync or a copy, or in a launch
  -- call held open while its own kernel ran (_held_launch), is a wait,
  -- not a first use (an anti join: as a correlated NOT EXISTS, DuckDB
  -- grouped the operators by all their columns first)
  ANTI JOIN (
    SELECT trace, rank, tid, ts_ns, end_ns, dur_ns FROM _rt WHERE api IN ('sync', 'memcpy')
    UNION ALL
    SELECT trace, rank, tid, ts_ns, end_ns, dur_ns FROM _held_launch
  ) r ON r.trace = o.trace AND r.rank = o.rank AND r.tid IS NOT DISTINCT FROM o.tid
    AND r.ts_ns >= o.ts_ns AND r.end_ns <= o.end_ns AND 2 * r.dur_ns >= o.dur_ns
  UNION ALL
  SELECT l.trace, l.rank, 'loader_start', l.name, l.ts_ns, l.end_ns
  FROM _loader l JOIN _loaderm m ON m.trace = l.trace AND m.rank = l.rank AND m.tid IS NOT DISTINCT FROM l.tid AND m.name = l.name
  WHERE l.k = 1 AND m.n >= 2 AND l.dur_ns >= 100000000 AND l.dur_ns >= 5 * m.med
  UNION ALL
  -- the outermost warm-up ranges of each thread: PARAM writes its label
  -- twice, one range inside the other (critical_path_alexnet: 12,757 and
  -- 12,744 ms), one warm-up, not two
  SELECT trace, rank, 'warmup', name, ts_ns, end_ns
  FROM (
    SELECT trace, rank, name, ts_ns, end_ns,
      max(end_ns) OVER (PARTITION BY trace, rank, pid, tid ORDER BY ts_ns, end_ns DESC
        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW EXCLUDE GROUP) AS pm
    FROM evidence_base_events
    WHERE kind IN ('annotation', 'cpu_op') AND dur_ns > 0 AND name IN (SELECT s FROM tb_strings WHERE regexp_matches(s, 'warm[-_ ]?up', 'i'))
  )
  WHERE pm IS NULL OR pm < end_ns
  UNION ALL
  SELECT trace, rank, 'harness', name, ts_ns, end_ns
  FROM evidence_base_events
  WHERE kind IN ('annotation', 'cpu_op') AND dur_ns > 0 AND name = '[param|clear_cache]'
  UNION ALL
  SELECT trace, rank, 'profiler_overhead', CASE WHEN op IS NULL THEN name ELSE name || ' in ' || op END,
    coalesce(op_ts, ts_ns), coalesce(op_end, end_ns)
  FROM _ovh
  UNION ALL
  SELECT s.trace, s.rank, 'warmup_step', 'step ' || s.step, s.ts_ns, s.end_ns
  FROM _stepd s JOIN _stepm m ON m.trace = s.trace AND m.rank = s.rank AND m.phase = s.phase AND s.phase <> 'unknown'
  WHERE s.k = 1 AND m.n >= 2 AND s.d >= 2 * m.med
  UNION ALL
  SELECT trace, rank, unnest(CASE WHEN graph THEN ['held', 'held_graph'] ELSE ['held'] END), name, greatest(pm, le), ts_ns
  FROM _linked
  WHERE pm IS NOT NULL AND ts_ns - le >= 1000000
    AND ts_ns - greatest(pm, le) >= 30000
  UNION ALL
  SELECT trace, rank, 'late_start', name, le, ts_ns
  FROM _linked
  WHERE pm IS NULL AND ts_ns - le >= 1000000
  UNION ALL
  SELECT trace, rank, 'pre_window', name, ts_ns, end_ns
  FROM _gpu WHERE pre
  UNION ALL
  SELECT trace, rank, 'graph_capture', name, ts_ns, end_ns
  FROM evidence_base_events
  WHERE (kind IN ('runtime', 'driver') AND name IN (SELECT s FROM tb_strings WHERE regexp_matches(s, 'StreamBeginCapture|StreamEndCapture|GraphInstantiate', 'i')))
     OR (kind IN ('annotation', 'cpu_op') AND name IN (SELECT s FROM tb_strings WHERE regexp_matches(s, '^capture_|graph_capture', 'i')))
  UNION ALL
  SELECT d.strings[c.trace_id + 1], c.rank, 'counter_range', d.strings[c.name_id + 1], c.ts_ns, c.end_ns
  FROM _cr c, tb_dict d
  UNION ALL
  SELECT e.trace, e.rank, 'past_window', e.name, e.ts_ns, e.end_ns
  FROM evidence_base_events e JOIN _rwe w ON w.trace = e.trace AND w.file_id = e.file_id AND w.rank = e.rank
  WHERE e.kind IN ('annotation', 'cpu_op') AND e.end_ns > w.rwe
  UNION ALL
  SELECT trace, rank, 'clock_skew', name, ts_ns, ls
  FROM _linked WHERE ts_ns < ls
  UNION ALL
  SELECT trace, rank, 'first_copy', name, ts_ns, ts_ns + one_time_ns FROM evidence_base_waits WHERE one_time_ns > 0 AND NOT upload
  UNION ALL
  SELECT trace, rank, 'upload', name, ts_ns, ts_ns + one_time_ns FROM evidence_base_waits WHERE upload
  UNION ALL
  SELECT w.trace, w.rank, 'held_wait', w.name, w.ts_ns, w.ts_ns + w.held_ns FROM evidence_base_waits w
  WHERE w.held_ns > 0 AND NOT EXISTS (SELECT 1 FROM _edge e WHERE e.trace = w.trace AND e.rank = w.rank AND e.correlation = w.correlation AND e.ts_ns = w.ts_ns)
  UNION ALL
  SELECT trace, rank, 'edge_sync', name, ts_ns, end_ns FROM _edge
),
-- The intervals of each kind merged (max-end-so-far), and the union of the
-- kinds that cut the steady state as kind 'excluded'.
_all AS (
  SELECT trace, rank, kind, ts_ns, end_ns FROM _art
  UNION ALL
  SELECT trace, rank, 'excluded', ts_ns, end_ns FROM _art
  WHERE kind IN ('first_use', 'first_copy', 'upload', 'first_op', 'loader_start', 'profiler_overhead', 'warmup', 'warmup_step', 'harness', 'held', 'graph_capture')
),
_m AS (
  SELECT *,
    max(end_ns) OVER (PARTITION BY trace, rank, kind ORDER BY ts_ns, end_ns ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS pm
  FROM _all
),
_grp AS (
  SELECT *,
    sum(CASE WHEN pm IS NULL OR ts_ns > pm THEN 1 ELSE 0 END) OVER (PARTITION BY trace, rank, kind ORDER BY ts_ns, end_ns ROWS UNBOUNDED PRECEDING) AS g
  FROM _m
),
_iv AS (
  SELECT trace, rank, kind, min(ts_ns) AS s, max(end_ns) AS e FROM _grp GROUP BY trace, rank, kind, g
),
_ivs AS (
  SELECT i.trace, i.rank, i.kind, count(*) AS n, sum(i.e - i.s) AS len,
    coalesce(sum(greatest(0, least(i.e, g.ge) - greatest(i.s, g.gs))), 0) AS in_span
  FROM _iv i LEFT JOIN _gspan g ON g.trace = i.trace AND g.rank = i.rank
  GROUP BY i.trace, i.rank, i.kind
),
-- The GPU idle time inside each kind's intervals. Joined on the rank alone,
-- every interval met every idle interval (quadratic in the trace: ×21 vLLM,
-- 443 × 287,027). Both sides are listed once per 2^24 ns (16.8 ms) bucket
-- their span touches, and a pair that overlaps counts in the bucket where
-- its overlap starts, which both touch.
_ivb AS (
  SELECT trace, rank, kind, s, e, unnest(tb_buckets(s, e, 16777216)) AS b FROM _iv
),
_idleb AS (
  SELECT trace, rank, s, e, unnest(tb_buckets(s, e, 16777216)) AS b FROM _idle
),
_ov AS (
  SELECT a.trace, a.rank, a.kind, sum(least(a.e, i.e) - greatest(a.s, i.s)) AS idle_ns
  FROM _ivb a JOIN _idleb i ON i.trace = a.trace AND i.rank = a.rank AND i.b = a.b
  WHERE i.s < a.e AND a.s < i.e AND a.b = greatest(a.s, i.s) // 16777216
  GROUP BY a.trace, a.rank, a.kind
),
_sum AS (
  SELECT trace, rank, kind, first(name ORDER BY end_ns - ts_ns DESC, ts_ns, name) AS name, count(*) AS count,
    sum(end_ns - ts_ns) AS total_ns, max(end_ns - ts_ns) AS max_ns, min(ts_ns) AS first_ts, max(end_ns) AS last_ts
  FROM _art GROUP BY trace, rank, kind
  UNION ALL
  SELECT trace, rank, kind, '', count(*), sum(e - s), max(e - s), min(s), max(e)
  FROM _iv WHERE kind = 'excluded' GROUP BY trace, rank, kind
)
SELECT s.trace, s.rank, s.kind, s.name,
  CAST(s.count AS BIGINT) AS count, CAST(s.total_ns AS BIGINT) AS total_ns, CAST(s.max_ns AS BIGINT) AS max_ns,
  CAST(coalesce(o.idle_ns, 0) AS BIGINT) AS idle_ns, CAST(coalesce(v.in_span, 0) AS BIGINT) AS span_ns,
  s.first_ts - t.t0 AS first_ns, s.last_ts - t.t0 AS last_ns,
  CAST(CASE WHEN s.kind = 'held' THEN coalesce(h.steps, 0) END AS BIGINT) AS steps
FROM _sum s
JOIN _t0 t ON t.trace = s.trace
LEFT JOIN _ov o ON o.trace = s.trace AND o.rank = s.rank AND o.kind = s.kind
LEFT JOIN _ivs v ON v.trace = s.trace AND v.rank = s.rank AND v.kind = s.kind
LEFT JOIN _heldsteps h ON h.trace = s.trace AND h.rank = s.rank
UNION ALL
SELECT i.trace, i.rank, 'interval', i.kind, CAST(1 AS BIGINT), CAST(i.e - i.s AS BIGINT), CAST(i.e - i.s AS BIGINT),
  CAST(0 AS BIGINT), CAST(0 AS BIGINT), i.s - t.t0, i.e - t.t0, CAST(NULL AS BIGINT)
FROM _iv i JOIN _t0 t ON t.trace = i.trace
WHERE i.kind IN ('excluded', 'edge_sync')
ORDER BY trace, rank, kind, name, first_ns
