-- ranks: GPU busy, compute, communication, memory and idle time of every rank, keyed by step.
-- INCLUDE: evidence_base
--
-- HTA's temporal breakdown, made mergeable. GPU events are GPU work as
-- tb_gpu_work (views.sql) defines it: kernels, gpu_memcpy and gpu_memset
-- rows; device-side sync records (gpu_sync) are not GPU work and are left
-- out (HTA counts those with a stream: pipeline/hta_test.go models that
-- when it compares idle time). busy is the length of the union
-- of their intervals on the rank; idle is HTA's idle time: the rank's GPU
-- span (first start to last end) minus busy. Both are summed from per-event
-- contributions (max-end-so-far over events in start order: an event adds the
-- part of itself past every earlier end, and the gap before it), so summing a
-- column over every row of a rank gives the exact rank value, and a step's
-- rows hold the busy time its events added and the gaps they closed.
-- Classes are tb_kernel_class's (views.sql): COMM = NCCL/RCCL/HCCL kernels,
-- vLLM cross_device_reduce, DeepEP, PyTorch symmetric-memory kernels; MEM =
-- memcpy/memset; COMP = other kernels. Unlike HTA, a CPU operator that
-- carries a stream arg is not GPU time.
--
-- Merged over steps, the rank's row counts its distinct steps (column steps):
-- MERGE: step = steps
--
-- Columns:
-- trace: Trace name. TEXT
-- rank: Rank. INT
-- step: Step number (-1 outside every step). INT
-- phase: Phase of the step: prefill, decode, mixed, idle, train, inference, unknown or ''. TEXT
-- events: GPU events launched in this step. COUNT
-- first_ns: Start of the first GPU event, from the trace's first event. TIMESTAMP_NS
-- last_ns: End of the last GPU event, from the trace's first event. TIMESTAMP_NS
-- busy_ns: Union of all GPU event intervals (contributions). DURATION_NS
-- idle_ns: GPU idle time inside the rank's GPU span (gaps closed by this step's events). DURATION_NS
-- host_wait_ns: The part of idle_ns whose gaps were closed by work whose launching call started after the gap began (work whose launch is not in the trace never counts): HTA's host-wait test on the union of the rank's GPU work (the gaps area applies it per stream, where a stream used once a step idles for most of it). DURATION_NS
-- host_wait_untraced_ns: The part of host_wait_ns in which no launching thread of the rank recorded anything (no operator, annotation, runtime or driver call, python frame) for 1 ms or more: the host was idle or did work outside the profiler's view (a harness, code outside every operator), so the trace does not show the GPU waiting on launch work there (the host-wait finding's refutation: the host idle too). DURATION_NS
-- unlaunched_idle_ns: The part of idle_ns whose gaps were closed by work with no launching call in the trace (launched before the window, a device-side transfer its producer records without a launch, a call the trace left out): the host-wait test cannot classify these gaps, so neither host_wait_ns nor the rest of idle_ns says why the GPU waited there (mtia_single_rank: 4,611 of its 5,634 ms of idle end at DMA transfers recorded without a launch). DURATION_NS
-- compute_ns: Union of COMP kernel intervals (contributions). DURATION_NS
-- comm_ns: Union of COMM kernel intervals (contributions). DURATION_NS
-- mem_ns: Union of memcpy/memset intervals (contributions). DURATION_NS
-- comm_comp_ns: Union of COMM and COMP intervals together (contributions). DURATION_NS
-- kernel_ns: Sum of GPU event durations (overlaps counted twice). DURATION_NS
-- step_ns: Host wall time of the step (0 for step -1). DURATION_NS
--
-- Host silences: a launching thread is one whose runtime or driver call
-- launched GPU work of the rank; its recorded host events are the
-- window's operators, annotations, runtime and driver calls and python
-- frames (the python frames of the rank's window: those between its first
-- and last event of evidence_base_events). A silence is an interval of 1 ms
-- or more in which none of the rank's launching threads had an event open
-- (the threads' events merged, max-end-so-far in start order); the short
-- stretches between operators are the host's own work (python between
-- calls), recorded in all but name. event_sync_multi_stream: 18.4 of 19.1
-- ms of host wait fall in one such silence between two matmuls.
--
-- No parameters: the filter (trace, rank, window: evidence_base's PARAMS)
-- is applied when evidence_base_events is built.
--
-- Steps and phases: an event's step and phase are those of
-- evidence_base_events (sql/evidence_base.sql, which documents how steps are
-- found). %evidence builds that table for the filter before it runs this
-- file; to run this file by hand, run sql/evidence_base.sql first.
WITH
_t0 AS (
  SELECT trace, min(first_ts_ns) AS t0 FROM traces GROUP BY trace
),
_steps AS NOT MATERIALIZED (
  SELECT * FROM evidence_base_steps
),
-- The rank's GPU work with the latest end before each operation among all
-- of it (pm_all), among its class (pm_cls) and on its side of
-- compute-or-communication (pm_cc), in the one order that
-- evidence_base_gpu (sql/evidence_base.sql) defines for every area.
_g AS (
  SELECT trace, rank, step, phase, ts_ns, end_ns, kind, stream, correlation,
    class, file_id, idx, launch_ts, pm_all, pm_cls, pm_cc
  FROM evidence_base_gpu
),
-- The launching threads and their recorded host events, merged over the
-- rank: the silences of 1 ms or more between them. The python frames are
-- read from tb_events by ids (trace_id, tid_id: the launching threads'
-- strings looked up once each), and the short events are merged per 1 ms
-- bucket before the sweep sorts them (_hk): sorting every frame, and
-- looking up two strings a frame, took 0.75 s and 580 MB on the ×21 vLLM
-- trace and ran the report's ranks out of its 128 MB. Merging the short
-- events per bucket replaced leaving out those inside the union of the
-- long ones (resnet_2080ti ×100 has no long frame: the preset 0.66× the
-- wall; ×21 vLLM 0.88×; ×250 0.76× under 256 MB; the same rows).
_lt AS (
  SELECT DISTINCT h.trace, h.rank, h.tid
  FROM evidence_base_events h JOIN _g g ON g.trace = h.trace AND g.rank = h.rank AND g.correlation = h.correlation
  WHERE h.kind IN ('runtime', 'driver') AND h.correlation IS NOT NULL
),
-- The rank's window: its python frames are those that start between its
-- first and last event of evidence_base_events.
_span AS (
  SELECT trace, rank, min(ts_ns) AS t0, max(ts_ns) AS t1 FROM evidence_base_events GROUP BY trace, rank
),
_lti AS (
  SELECT t.trace, t.rank, s.id AS trace_id, i.id AS tid_id, p.t0, p.t1
  FROM _lt t JOIN tb_strings s ON s.s = t.trace JOIN tb_strings i ON i.s = t.tid
  JOIN _span p ON p.trace = t.trace AND p.rank = t.rank
),
_he AS NOT MATERIALIZED (
  SELECT h.trace, h.rank, h.ts_ns, h.end_ns FROM evidence_base_events h
  JOIN _lt t ON t.trace = h.trace AND t.rank = h.rank AND t.tid = h.tid
  WHERE h.kind IN ('cpu_op', 'annotation', 'runtime', 'driver') AND h.end_ns IS NOT NULL
  UNION ALL
  SELECT t.trace, t.rank, e.ts_ns, e.end_ns FROM tb_events e
  JOIN _lti t ON t.trace_id = e.trace_id AND t.rank = e.rank AND t.tid_id = e.tid_id AND e.ts_ns BETWEEN t.t0 AND t.t1
  WHERE e.kind = 'python' AND e.end_ns IS NOT NULL
),
-- The events of 1 ms or more as they are, and the shorter ones merged per
-- 1 ms bucket of their start into one interval, from the bucket's first
-- start to its latest end: every start lies inside the bucket, so no
-- silence of 1 ms or more lies between them, and a silence's bounds (the
-- latest end before it, the first start after it) are those the events
-- give. The sweep then sorts the long events and a row per busy
-- millisecond, not every host event.
_hk AS (
  SELECT trace, rank, ts_ns, end_ns FROM _he WHERE end_ns - ts_ns >= 1000000
  UNION ALL
  SELECT trace, rank, min(ts_ns), max(end_ns) FROM _he
  WHERE end_ns - ts_ns < 1000000
  GROUP BY trace, rank, ts_ns // 1000000
),
_sil AS (
  SELECT trace, rank, pe AS s0, ts_ns AS s1 FROM (
    SELECT trace, rank, ts_ns,
      max(end_ns) OVER (PARTITION BY trace, rank ORDER BY ts_ns, end_ns ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS pe
    FROM _hk)
  WHERE ts_ns - pe >= 1000000
),
_c AS (
  SELECT trace, rank, step, phase, class, ts_ns, end_ns,
    greatest(0, end_ns - greatest(ts_ns, coalesce(pm_all, ts_ns))) AS busy,
    CASE WHEN pm_all IS NULL THEN 0 ELSE greatest(0, ts_ns - pm_all) END AS gap,
    CASE WHEN pm_all IS NOT NULL AND launch_ts > pm_all THEN greatest(0, ts_ns - pm_all) ELSE 0 END AS hw,
    CASE WHEN pm_all IS NOT NULL AND launch_ts IS NULL THEN greatest(0, ts_ns - pm_all) ELSE 0 END AS nl,
    greatest(0, end_ns - greatest(ts_ns, coalesce(pm_cls, ts_ns))) AS cls,
    greatest(0, end_ns - greatest(ts_ns, coalesce(pm_cc, ts_ns))) AS cc,
    file_id, idx, pm_all
  FROM _g
),
-- The silent part of each host-wait gap (few silences: the range join
-- stays small).
_un AS (
  SELECT c.trace, c.rank, c.file_id, c.idx, sum(least(c.ts_ns, s.s1) - greatest(c.pm_all, s.s0)) AS un
  FROM _c c JOIN _sil s ON s.trace = c.trace AND s.rank = c.rank AND s.s0 < c.ts_ns AND s.s1 > c.pm_all
  WHERE c.hw > 0
  GROUP BY ALL
),
_agg AS (
  SELECT c.trace, c.rank, c.step, c.phase,
    count(*) AS events,
    min(c.ts_ns) - any_value(t.t0) AS first_ns,
    max(c.end_ns) - any_value(t.t0) AS last_ns,
    sum(c.busy) AS busy_ns,
    sum(c.gap) AS idle_ns,
    sum(c.hw) AS host_wait_ns,
    coalesce(sum(u.un), 0) AS host_wait_untraced_ns,
    sum(c.nl) AS unlaunched_idle_ns,
    coalesce(sum(c.cls) FILTER (WHERE c.class = 'COMP'), 0) AS compute_ns,
    coalesce(sum(c.cls) FILTER (WHERE c.class = 'COMM'), 0) AS comm_ns,
    coalesce(sum(c.cls) FILTER (WHERE c.class = 'MEM'), 0) AS mem_ns,
    coalesce(sum(c.cc) FILTER (WHERE c.class IN ('COMM', 'COMP')), 0) AS comm_comp_ns,
    sum(c.end_ns - c.ts_ns) AS kernel_ns
  FROM _c c JOIN _t0 t ON t.trace = c.trace
  LEFT JOIN _un u ON u.trace = c.trace AND u.rank = c.rank AND u.file_id = c.file_id AND u.idx = c.idx
  GROUP BY c.trace, c.rank, c.step, c.phase
),
_sw AS (
  SELECT trace, rank, step, phase, sum(end_ns - ts_ns) AS step_ns FROM _steps GROUP BY ALL
)
SELECT coalesce(a.trace, s.trace) AS trace, coalesce(a.rank, s.rank) AS rank,
  coalesce(a.step, s.step) AS step, coalesce(a.phase, s.phase) AS phase,
  coalesce(a.events, 0) AS events, a.first_ns, a.last_ns,
  CAST(coalesce(a.busy_ns, 0) AS BIGINT) AS busy_ns, CAST(coalesce(a.idle_ns, 0) AS BIGINT) AS idle_ns,
  CAST(coalesce(a.host_wait_ns, 0) AS BIGINT) AS host_wait_ns,
  CAST(coalesce(a.host_wait_untraced_ns, 0) AS BIGINT) AS host_wait_untraced_ns,
  CAST(coalesce(a.unlaunched_idle_ns, 0) AS BIGINT) AS unlaunched_idle_ns,
  CAST(coalesce(a.compute_ns, 0) AS BIGINT) AS compute_ns, CAST(coalesce(a.comm_ns, 0) AS BIGINT) AS comm_ns,
  CAST(coalesce(a.mem_ns, 0) AS BIGINT) AS mem_ns, CAST(coalesce(a.comm_comp_ns, 0) AS BIGINT) AS comm_comp_ns,
  CAST(coalesce(a.kernel_ns, 0) AS BIGINT) AS kernel_ns, CAST(coalesce(s.step_ns, 0) AS BIGINT) AS step_ns
FROM _agg a FULL OUTER JOIN _sw s ON s.trace = a.trace AND s.rank = a.rank AND s.step = a.step AND s.phase = a.phase
ORDER BY trace, rank, step, phase
