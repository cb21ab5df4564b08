-- evidence_base: the events of the filter with their step and phase, and the steps themselves: what every evidence preset reads.
-- INCLUDE: schema
--
-- Tables, built in this order for one filter and read by every preset
-- (sql/<area>.sql) instead of each rescanning events and assigning steps on
-- its own. %evidence (pipeline.CollectEvidence) rebuilds them at the start of
-- each collection, as CREATE OR REPLACE TABLE ... with the filter's
-- parameters, and they stay in the database next to the evidence_<area>
-- tables: a preset copied from the %evidence output runs as is against the
-- filter of the last collection. To run a preset by hand for another filter,
-- run this file first with that filter's parameters (replacing the tables
-- made by an earlier run). Tables, not views: a view would be evaluated once
-- per preset, which is the cost this module removes.
--
-- PARAMS: $1 trace (TEXT, '' = every trace), $2 rank (INT, -1 = every rank),
--   $3 window start and $4 window end (DURATION_NS from the trace's first event,
--   0 = open): an event is kept when its start lies in the window. Steps are
--   found among the annotations of the window, so a window renumbers the
--   steps of families numbered by order (all but ProfilerStep#N).
--
-- Steps: one annotation family per (trace, rank), the first present of
-- tb_step_family (views.sql): vLLM execute_*, SGLang step[KIND bs=N toks=N],
-- ProfilerStep#N, and failing those the python frames of vLLM's
-- gpu_model_runner execute_model (a hypothesis: phase unknown), and failing
-- those the optimizer's step annotations (Optimizer.step#…, a training loop
-- profiled without a schedule; one optimizer's, when several step in each
-- iteration): each iteration runs from the end of one optimizer step to
-- the end of the next, the first from the rank's first event or the
-- window's start (a hypothesis: phase train). An event
-- belongs to the step whose host interval holds its host time: its own start
-- for host events, the start of the runtime call with the same correlation for
-- GPU events (graph replays take the cudaGraphLaunch's); GPU work launched
-- before the window (no launching call, a correlation id below every
-- runtime call's of the rank) is in no step of it. Outside every step:
-- step -1, phase ''. Steps of one family may nest or overlap (vLLM's
-- execute_* inside a python frame does not): an event takes the step that
-- started last at or before its host time.

-- The steps of the filter: one row per step annotation of the chosen family.
CREATE TABLE evidence_base_steps AS
WITH
_t0 AS (
  SELECT * FROM tb_trace_t0($1::VARCHAR)
),
_names AS (
  SELECT id AS name_id, tb_step_family('annotation', s) AS host_prio, tb_step_family('python', s) AS py_prio
  FROM tb_strings
  WHERE tb_step_family('annotation', s) IS NOT NULL OR tb_step_family('python', s) IS NOT NULL
  -- The names that can name a step, each tested once (tb_strings: a few
  -- hundred distinct names however long the trace), for a host annotation
  -- or operator and for a python frame (tb_step_family's two cases).
),
-- Kineto's Record Window End marker of each file: written once the
-- profiler has stopped, after everything it recorded. A step annotation
-- that ends after it ends at the marker (triton_example: ProfilerStep#1
-- holds all of the window's work from 353.8 ms on, and its end is stamped
-- 13.3 s past the marker); one that starts after it is no step.
_rwe AS (
  SELECT e.trace_id, e.file_id, e.rank, min(e.ts_ns) AS rwe
  FROM tb_events e JOIN tb_strings s ON s.id = e.name_id
  WHERE e.kind = 'instant' AND s.s = 'Record Window End'
  GROUP BY ALL
),
_ann0 AS (
  SELECT e.trace_id, e.rank, e.ts_ns, least(e.end_ns, coalesce(w.rwe, e.end_ns)) AS end_ns, e.name_id,
    CASE WHEN e.kind = 'python' THEN n.py_prio ELSE n.host_prio END AS prio
  FROM tb_events e
  JOIN _names n ON n.name_id = e.name_id
  JOIN _t0 ON _t0.trace_id = e.trace_id
  LEFT JOIN _rwe w ON w.trace_id = e.trace_id AND w.file_id = e.file_id AND w.rank = e.rank
  WHERE e.kind IN ('annotation', 'cpu_op', 'python') AND e.dur_ns > 0
    AND (w.rwe IS NULL OR e.ts_ns < w.rwe)
    AND ($2::INTEGER < 0 OR e.rank = $2::INTEGER)
    AND ($3::BIGINT <= 0 OR e.ts_ns - _t0.t0 >= $3::BIGINT)
    AND ($4::BIGINT <= 0 OR e.ts_ns - _t0.t0 < $4::BIGINT)
),
_ann AS (
  SELECT d.strings[a.trace_id + 1] AS trace, a.rank, a.ts_ns, a.end_ns, d.strings[a.name_id + 1] AS name, a.prio
  FROM _ann0 a, tb_dict d
  WHERE a.prio IS NOT NULL
),
_fam AS (
  SELECT trace, rank, min(prio) AS prio FROM _ann WHERE prio IS NOT NULL GROUP BY trace, rank
),
-- Whether each rank of a ProfilerStep# loop trains (trains: a backward
-- operator or an optimizer step among the host events of the filter) and
-- whether it shows CPU operators that compute (computes), the workload
-- area's backward, optimizer and cpu_ops features, by the same macros of
-- views.sql. An inference loop under torch.profiler writes ProfilerStep#N
-- too (h100_owlv2, xdit_sd35); a loop with neither says nothing either way
-- (cpu_only: aten::empty beside gloo all-reduces). Tested once per distinct
-- (kind, name) of a rank, on the ranks whose steps are ProfilerStep#.
_infer AS (
  SELECT t.s AS trace, k.rank,
    bool_or(tb_backward_op(k.kind, s.s) OR tb_optimizer_op(k.kind, s.s)) AS trains,
    bool_or(tb_host_op(k.kind, s.s)) AS computes
  FROM (
    SELECT DISTINCT e.trace_id, e.rank, e.kind, e.name_id
    FROM tb_events e JOIN _t0 ON _t0.trace_id = e.trace_id
    WHERE e.kind IN ('cpu_op', 'annotation', 'other')
      AND ($2::INTEGER < 0 OR e.rank = $2::INTEGER)
      AND ($3::BIGINT <= 0 OR e.ts_ns - _t0.t0 >= $3::BIGINT)
      AND ($4::BIGINT <= 0 OR e.ts_ns - _t0.t0 < $4::BIGINT)
      AND (e.trace_id, e.rank) IN (SELECT trace_id, rank FROM _ann0 WHERE prio = 3)
  ) k
  JOIN tb_strings s ON s.id = k.name_id JOIN tb_strings t ON t.id = k.trace_id
  GROUP BY t.s, k.rank
),
-- The optimizer steps that delimit iterations (family 5): of one name per
-- rank, the least (a GAN's two optimizers step once each per iteration),
-- each interval once (an annotation recorded as both a user annotation and
-- an operator).
_ann5 AS (
  SELECT DISTINCT a.* FROM _ann a
  JOIN (SELECT trace, rank, min(name) AS name FROM _ann WHERE prio = 5 GROUP BY trace, rank) o
    ON o.trace = a.trace AND o.rank = a.rank AND o.name = a.name
  WHERE a.prio = 5
),
-- Where a rank's first optimizer-delimited iteration starts: its first
-- event, or the window's start.
_r0 AS (
  SELECT r.trace, r.rank,
    greatest(min(r.first_ts_ns), CASE WHEN $3::BIGINT > 0 THEN min(t.t0) + $3::BIGINT ELSE min(r.first_ts_ns) END) AS r0
  FROM traces r JOIN (SELECT trace, min(first_ts_ns) AS t0 FROM traces GROUP BY trace) t ON t.trace = r.trace
  WHERE ($1::VARCHAR = '' OR r.trace = $1::VARCHAR)
  GROUP BY r.trace, r.rank
),
_steps0 AS (
  SELECT a.trace, a.rank,
    CASE WHEN a.prio = 5 THEN coalesce(lag(a.end_ns) OVER (PARTITION BY a.trace, a.rank ORDER BY a.ts_ns, a.end_ns DESC), r.r0)
         ELSE a.ts_ns END AS ts_ns,
    a.end_ns, a.name, a.prio,
    CASE WHEN a.prio = 3 THEN CAST(regexp_extract(a.name, '#(\d+)$', 1) AS INTEGER)
         ELSE CAST(row_number() OVER (PARTITION BY a.trace, a.rank ORDER BY a.ts_ns, a.end_ns DESC) - 1 AS INTEGER) END AS step,
    CASE
      WHEN regexp_matches(a.name, '^execute_(\d+_)?context_') THEN TRY_CAST(regexp_extract(a.name, '^execute_(?:\d+_)?context_(\d+)\(', 1) AS BIGINT)
      WHEN starts_with(a.name, 'execute_new_') THEN TRY_CAST(regexp_extract(a.name, '^execute_new_(\d+)_cached_(\d+)', 1) AS BIGINT)
      WHEN regexp_matches(a.name, '^step\[(EXTEND|PREFILL)') THEN TRY_CAST(regexp_extract(a.name, 'bs=(\d+)', 1) AS BIGINT)
      WHEN regexp_matches(a.name, '^step\[DECODE') THEN 0
    END AS ctx_req,
    CASE
      WHEN regexp_matches(a.name, '^execute_(\d+_)?context_') THEN TRY_CAST(regexp_extract(a.name, '^execute_(?:\d+_)?context_\d+\((?:sq)?(\d+)', 1) AS BIGINT)
      WHEN regexp_matches(a.name, '^step\[(EXTEND|PREFILL)') THEN TRY_CAST(regexp_extract(a.name, 'toks=(\d+)', 1) AS BIGINT)
      WHEN regexp_matches(a.name, '^step\[DECODE') THEN 0
    END AS ctx_tok,
    CASE
      WHEN regexp_matches(a.name, '^execute_(\d+_)?context_') THEN TRY_CAST(regexp_extract(a.name, '_generation_(\d+)\(', 1) AS BIGINT)
      WHEN starts_with(a.name, 'execute_new_') THEN TRY_CAST(regexp_extract(a.name, '^execute_new_(\d+)_cached_(\d+)', 2) AS BIGINT)
      WHEN regexp_matches(a.name, '^step\[DECODE') THEN TRY_CAST(regexp_extract(a.name, 'bs=(\d+)', 1) AS BIGINT)
      WHEN regexp_matches(a.name, '^step\[(EXTEND|PREFILL)') THEN 0
    END AS gen_req,
    CASE
      WHEN regexp_matches(a.name, '^execute_(\d+_)?context_') THEN TRY_CAST(regexp_extract(a.name, '_generation_\d+\((?:sq)?(\d+)', 1) AS BIGINT)
      WHEN regexp_matches(a.name, '^step\[DECODE') THEN TRY_CAST(regexp_extract(a.name, 'bs=(\d+)', 1) AS BIGINT)
      WHEN regexp_matches(a.name, '^step\[(EXTEND|PREFILL)') THEN 0
    END AS gen_tok
    , coalesce(i.trains, false) AS trains, coalesce(i.computes, false) AS computes
  FROM (SELECT * FROM _ann WHERE prio <> 5 UNION ALL SELECT * FROM _ann5) a
    JOIN _fam f ON f.trace = a.trace AND f.rank = a.rank AND f.prio = a.prio
    LEFT JOIN _infer i ON i.trace = a.trace AND i.rank = a.rank
    LEFT JOIN _r0 r ON r.trace = a.trace AND r.rank = a.rank
)

SELECT
  -- Trace name. JOINID(traces.trace)
  trace,
  -- Rank. INT
  rank,
  -- Step start: the annotation's start (family 5: the previous optimizer step's end, the first the rank's first event or the window's start). TIMESTAMP_NS
  ts_ns,
  -- Step end: the annotation's end. TIMESTAMP_NS
  end_ns,
  -- Annotation name. TEXT
  name,
  -- Family: 1 vLLM execute_*, 2 SGLang step[...], 3 ProfilerStep#N, 4 python execute_model, 5 Optimizer.step#. INT
  prio,
  -- Step number: N of ProfilerStep#N, else the ordinal from 0 in start order. INT
  step,
  -- Prefill (context) requests, or new requests; NULL when the name does not say. COUNT
  ctx_req,
  -- Prefill tokens; NULL when the name does not say. COUNT
  ctx_tok,
  -- Decode (generation) requests, or cached requests; NULL when the name does not say. COUNT
  gen_req,
  -- Decode tokens; NULL when the name does not say. COUNT
  gen_tok,
  -- prefill, decode, mixed, idle, train, inference or unknown. ProfilerStep#N steps are train on a rank with a backward operator or an optimizer step, else inference on a rank with CPU operators that compute (tb_host_op), else unknown. TEXT
  CASE
    WHEN prio = 3 AND trains THEN 'train'
    WHEN prio = 3 AND computes THEN 'inference'
    WHEN prio = 3 THEN 'unknown'
    WHEN prio = 4 THEN 'unknown'
    WHEN prio = 5 THEN 'train'
    WHEN regexp_matches(name, '^step\[MIXED') THEN 'mixed'
    WHEN regexp_matches(name, '^step\[IDLE') THEN 'idle'
    WHEN coalesce(ctx_req, 0) > 0 AND coalesce(gen_req, 0) > 0 THEN 'mixed'
    WHEN coalesce(ctx_req, 0) > 0 THEN 'prefill'
    WHEN coalesce(gen_req, 0) > 0 THEN 'decode'
    ELSE 'idle'
  END AS phase,
  -- The annotation the steps come from: execute_tokens (vLLM's execute_context_*_generation_*, which some SGLang builds write too), execute_new_cached (vLLM's execute_new_*_cached_*), sglang (SGLang's step[...]), profiler_step, python_execute_model or optimizer_step. TEXT
  CASE prio WHEN 1 THEN CASE WHEN starts_with(name, 'execute_new_') THEN 'execute_new_cached' ELSE 'execute_tokens' END
    WHEN 2 THEN 'sglang' WHEN 3 THEN 'profiler_step' WHEN 4 THEN 'python_execute_model' ELSE 'optimizer_step' END AS source,
  -- The step or its phase is inferred, not annotated. BOOL
  prio IN (4, 5) OR starts_with(name, 'execute_new_') AS hypothesis
FROM _steps0;

-- Every event of the filter (the columns presets read) but python frames
-- and flow events, which no preset reads (python frames are most of a vLLM
-- trace's events; overview counts them from events), with its host time and
-- the step and phase that time falls in: the last step start at or before
-- the host time is its step (a step start before an event at the same
-- time), kept when the time lies before that step's end. Each step is
-- the step of the times from its start to the next step's start or its own
-- end (_rg), and an event finds its span by time bucket (_rb): an ASOF
-- join of the wide rows costs several times more. Two steps of one family
-- starting at the same time: the one that ends last (then the higher
-- number) is taken.
--
-- It reads tb_events, the ids behind events (schema.sql): the joins key on
-- integer ids, not strings, and the trace, pid, tid and name are looked up
-- once, for the rows kept. The kernel class is computed once per distinct
-- kernel name.
CREATE TABLE evidence_base_events AS
WITH
_t0 AS (
  SELECT * FROM tb_trace_t0($1::VARCHAR)
),
_ev AS NOT MATERIALIZED (
  SELECT e.trace_id, e.file_id, e.idx, e.rank, e.pid_id, e.tid_id, e.kind, e.api, e.name_id, e.ts_ns, e.dur_ns, e.end_ns,
    e.correlation, e.external_id, e.stream, e.device, e.bytes, e.graph_id
  FROM tb_events e JOIN _t0 ON _t0.trace_id = e.trace_id
  WHERE e.kind NOT IN ('python', 'flow')
    AND ($2::INTEGER < 0 OR e.rank = $2::INTEGER)
    AND ($3::BIGINT <= 0 OR e.ts_ns - _t0.t0 >= $3::BIGINT)
    AND ($4::BIGINT <= 0 OR e.ts_ns - _t0.t0 < $4::BIGINT)
),
_host AS (
  SELECT trace_id, rank, correlation, min(ts_ns) AS host_ts
  FROM _ev WHERE kind IN ('runtime', 'driver') AND correlation IS NOT NULL
  GROUP BY trace_id, rank, correlation
),
-- The lowest correlation id of each rank's runtime calls: GPU work with a
-- lower one and no launching call was launched before the window.
_c0 AS (
  SELECT trace_id, rank, min(correlation) AS c0 FROM _host GROUP BY trace_id, rank
),
-- GPU-side events (GPU work, device-side sync records, GPU annotations)
-- take the start of their launching call as host_ts. pre: such an event
-- launched before the window, which is in no step of it.
_x AS NOT MATERIALIZED (
  SELECT e.*,
    CASE WHEN tb_gpu_work(e.kind) OR e.kind IN ('gpu_sync', 'gpu_annotation')
      THEN coalesce(h.host_ts, e.ts_ns) ELSE e.ts_ns END AS host_ts,
    CASE WHEN tb_gpu_work(e.kind) OR e.kind IN ('gpu_sync', 'gpu_annotation') THEN h.host_ts END AS launch_ts,
    (tb_gpu_work(e.kind) OR e.kind IN ('gpu_sync', 'gpu_annotation')) AND h.host_ts IS NULL
      AND e.correlation < c.c0 AS pre
  FROM _ev e LEFT JOIN _host h ON h.trace_id = e.trace_id AND h.rank = e.rank AND h.correlation = e.correlation
    LEFT JOIN _c0 c ON c.trace_id = e.trace_id AND c.rank = e.rank
),
-- The steps of each rank, one per start: where two of one family start
-- at the same time, the one that ends last (then the higher number).
_st AS (
  SELECT s.id AS trace_id, b.rank, b.ts_ns, arg_max(b.step, (b.end_ns, b.step)) AS step,
    arg_max(b.end_ns, (b.end_ns, b.step)) AS end_ns, arg_max(b.phase, (b.end_ns, b.step)) AS phase
  FROM evidence_base_steps b JOIN tb_strings s ON s.s = b.trace
  GROUP BY s.id, b.rank, b.ts_ns
),
-- Where each step is the one a host time falls in: from its start to the
-- next step's start or its own end, whichever comes first (after its end,
-- and before the rank's first step, a time is in no step). These spans do
-- not overlap, so a host time is in one at most. A step without an end
-- holds no time.
_rg AS (
  SELECT trace_id, rank, step, phase, ts_ns AS r0,
    CASE WHEN end_ns IS NOT NULL THEN least(end_ns, coalesce(lead(ts_ns) OVER (PARTITION BY trace_id, rank ORDER BY ts_ns), end_ns)) END AS r1
  FROM _st
),
-- The spans listed in every time bucket they overlap, the width a quarter
-- of the rank's mean step span (per rank: traces loaded together may lie
-- days apart): each event joins the few spans of its own bucket. (Merging
-- every event's host time with the step starts took a window over the
-- distinct host times and a join of each event to them: ×250 vLLM, 8.4 M
-- host times, 9 s of the 20 s this table took.)
_bw AS (
  SELECT trace_id, rank, greatest(1, (max(r1) - min(r0)) // (4 * count(*))) AS w
  FROM _rg WHERE r1 > r0 GROUP BY trace_id, rank
),
_rb AS (
  SELECT g.*, unnest(tb_buckets(g.r0, g.r1 - 1, w.w)) AS b
  FROM _rg g JOIN _bw w ON w.trace_id = g.trace_id AND w.rank = g.rank
  WHERE g.r1 > g.r0
),
_cls AS (
  -- The class of each distinct string as a kernel name, computed once
  -- (tb_strings, schema.sql: a trace repeats a few hundred names over
  -- millions of kernels) and joined to the kernels by id.
  SELECT id AS name_id, tb_kernel_class('kernel', s) AS class FROM tb_strings
)
SELECT
  -- Trace name. JOINID(traces.trace)
  d.strings[x.trace_id + 1] AS trace,
  -- File index. JOINID(traces.file_id)
  x.file_id AS file_id,
  -- Index of the event in its file. JOINID(events.idx)
  x.idx AS idx,
  -- Rank. INT
  x.rank AS rank,
  -- Process as written. TEXT
  d.strings[x.pid_id + 1] AS pid,
  -- Thread as written. TEXT
  d.strings[x.tid_id + 1] AS tid,
  -- Normalised category (events.kind). TEXT
  x.kind AS kind,
  -- What a runtime/driver call does (events.api); NULL otherwise. TEXT
  x.api AS api,
  -- Event name. TEXT
  d.strings[x.name_id + 1] AS name,
  -- Start. TIMESTAMP_NS
  x.ts_ns AS ts_ns,
  -- Duration. DURATION_NS
  x.dur_ns AS dur_ns,
  -- End. TIMESTAMP_NS
  x.end_ns AS end_ns,
  -- Arg "correlation"; NULL when absent. INT
  x.correlation AS correlation,
  -- Arg "External id"; NULL when absent. INT
  x.external_id AS external_id,
  -- Arg "stream"; NULL when absent. INT
  x.stream AS stream,
  -- Arg "device"; NULL when absent. INT
  x.device AS device,
  -- Arg "bytes"; NULL when absent. BYTES
  x.bytes AS bytes,
  -- Arg "graph id"; NULL when absent. INT
  x.graph_id AS graph_id,
  -- Host time that places the event in a step: the start of the runtime call with the same correlation for GPU events (its own start when none), else its own start. TIMESTAMP_NS
  x.host_ts AS host_ts,
  -- Start of the launching runtime call of a GPU event (same correlation); NULL when the trace has none, and for host events. The host-wait tests (gaps, ranks, sync) read this, so that GPU work whose launch is not in the trace is never called a late launch (HTA: such work is never host wait). TIMESTAMP_NS
  x.launch_ts AS launch_ts,
  -- Step number (evidence_base_steps.step), -1 outside every step (and for GPU work launched before the window: no launching call, a correlation id below every runtime call's of the rank). INT
  CASE WHEN x.pre THEN -1 ELSE coalesce(s.step, -1) END AS step,
  -- Phase of that step, '' outside every step. TEXT
  CASE WHEN x.pre THEN '' ELSE coalesce(s.phase, '') END AS phase,
  -- GPU-side event launched before the window: no launching call in the trace and a correlation id below every runtime call's of the rank (work the previous iteration queued before the capture began; its step is -1). The capture area's pre_window rows and the kernels area's pre_window_ns read this. BOOL
  coalesce(x.pre, false) AS pre,
  -- Class of a GPU event, tb_kernel_class(kind, name) (views.sql): COMP, COMM, MEM or SYNC; NULL for host events. Computed here once per kernel name, so that no preset matches kernel names row by row. TEXT
  CASE WHEN x.kind = 'kernel' THEN coalesce(c.class, 'COMP') ELSE tb_kernel_class(x.kind, NULL) END AS class
FROM _x x
LEFT JOIN _bw w ON w.trace_id = x.trace_id AND w.rank = x.rank
LEFT JOIN _rb s ON s.trace_id = x.trace_id AND s.rank = x.rank AND s.b = x.host_ts // w.w
  AND x.host_ts >= s.r0 AND x.host_ts < s.r1
LEFT JOIN _cls c ON c.name_id = x.name_id,
tb_dict d;

-- The rank's GPU work (tb_gpu_work: kernels, copies and memsets) in one
-- order, with the latest end before each: the one definition of the union
-- of GPU work that the ranks, overlap, steps and capture areas and the busy
-- segments below measure. An operation adds to a union what it runs past
-- the latest end before it (end_ns - greatest(ts_ns, pm)); the union's
-- idle gaps are where it starts after that end (ts_ns > pm). The order is
-- start, end, stream, correlation, then the place in its file (file_id,
-- idx), which makes it total: rows that tie on start and end (one launch,
-- so one step) get the same sums in any order, and the row that opens a
-- gap is always the same one. One window computes every maximum (the
-- class's are filtered maxima over it); each area computing its own sorted
-- the operations again (about 20 ms of CPU each on the 48 MB vLLM trace).
CREATE TABLE evidence_base_gpu AS
SELECT
  -- Trace name. TEXT
  trace,
  -- Rank. INT
  rank,
  -- kernel, gpu_memcpy or gpu_memset. TEXT
  kind,
  -- Event name. TEXT
  name,
  -- Start. TIMESTAMP_NS
  ts_ns,
  -- End. TIMESTAMP_NS
  end_ns,
  -- GPU stream. INT
  stream,
  -- Correlation id. INT
  correlation,
  -- Step (evidence_base_events.step). INT
  step,
  -- Phase of the step. TEXT
  phase,
  -- COMP, COMM or MEM (evidence_base_events.class). TEXT
  class,
  -- File of the event (tb_events.file_id). INT
  file_id,
  -- Its place in that file (tb_events.idx). INT
  idx,
  -- Start of the launching call (evidence_base_events.launch_ts). TIMESTAMP_NS
  launch_ts,
  -- Launched before the window (evidence_base_events.pre). BOOL
  pre,
  -- Latest end among the rank's GPU work before this row; NULL for the first. TIMESTAMP_NS
  max(end_ns) OVER w AS pm_all,
  -- Latest end before this row among the work of its class. TIMESTAMP_NS
  CASE class WHEN 'COMP' THEN max(end_ns) FILTER (WHERE class = 'COMP') OVER w
    WHEN 'COMM' THEN max(end_ns) FILTER (WHERE class = 'COMM') OVER w
    WHEN 'MEM' THEN max(end_ns) FILTER (WHERE class = 'MEM') OVER w END AS pm_cls,
  -- Latest end before this row on its side of compute-or-communication: among COMM and COMP kernels for those, among MEM work for MEM. TIMESTAMP_NS
  CASE WHEN class IN ('COMM', 'COMP') THEN max(end_ns) FILTER (WHERE class IN ('COMM', 'COMP')) OVER w
    WHEN class = 'MEM' THEN max(end_ns) FILTER (WHERE class = 'MEM') OVER w END AS pm_cc
FROM evidence_base_events
WHERE tb_gpu_work(kind)
WINDOW w AS (PARTITION BY trace, rank ORDER BY ts_ns, end_ns, stream, correlation, file_id, idx
  ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING);

-- The rank's GPU busy time as segments: the union of its GPU work
-- (evidence_base_gpu; what the ranks area counts as busy), one row per
-- maximal busy interval, with the next segment's start (the idle gap after
-- it) and when the work that ends that gap was launched.
CREATE TABLE evidence_base_busy AS
WITH
_gs AS (
  SELECT trace, rank, min(ts_ns) AS seg_ts, max(end_ns) AS seg_end, arg_min_null(launch_ts, (ts_ns, coalesce(launch_ts, ts_ns))) AS seg_host
  FROM (SELECT *, sum(CASE WHEN pm_all IS NULL OR ts_ns > pm_all THEN 1 ELSE 0 END)
          OVER (PARTITION BY trace, rank ORDER BY ts_ns, end_ns, stream, correlation, file_id, idx ROWS UNBOUNDED PRECEDING) AS seg
        FROM evidence_base_gpu WHERE ts_ns IS NOT NULL)
  GROUP BY trace, rank, seg
)
SELECT
  -- Trace name. TEXT
  trace,
  -- Rank. INT
  rank,
  -- Start of the busy segment. TIMESTAMP_NS
  seg_ts,
  -- Its end. TIMESTAMP_NS
  seg_end,
  -- Start of the next segment (NULL for the last). TIMESTAMP_NS
  lead(seg_ts) OVER (PARTITION BY trace, rank ORDER BY seg_ts) AS next_ts,
  -- Start of the launching call of the work that starts the next segment (evidence_base_events.launch_ts; NULL when the trace has none): before this segment's end, it was queued when the GPU went idle. TIMESTAMP_NS
  lead(seg_host) OVER (PARTITION BY trace, rank ORDER BY seg_ts) AS next_host_ts,
  -- The rank's GPU busy time before this segment, in ns (its earlier segments' lengths; 0 for the first): the busy time up to a moment t is busy_before of the last segment that starts at or before t, plus that segment's part before t (an ASOF join, instead of a range join against every segment). BIGINT
  CAST(coalesce(sum(seg_end - seg_ts) OVER (PARTITION BY trace, rank ORDER BY seg_ts
    ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS BIGINT) AS busy_before
FROM _gs;

-- Host waits on work the trace does not show: the runtime calls that can
-- block (api sync or memcpy) of 1 ms or more, with the part of each that
-- lies in idle gaps of 1 ms or more between the rank's GPU work (the gaps
-- after evidence_base_busy's segments), kept when that part is 1 ms or
-- more. A call that waits for queued work the trace shows finds the GPU
-- busy, or idle only in the short bubbles between queued kernels; one that
-- waits through a long idle gap waits for work outside the trace: held by a
-- dependency (an event on another stream, a peer), launched before the
-- window, another process's, or graph replays the trace did not record.
-- Time before the rank's first GPU work or after its last is not held: the
-- trace shows nothing of what a call waited for there (a first copy's own
-- start-up, below; the profiler's stop). The sync and memcpy presets report
-- the held part as held_ns and the rules leave it out; the capture area
-- counts the calls (held_wait).
--
-- First copy calls: a copy call (api memcpy) among the first 20 of its
-- name on the rank, made before any GPU work the trace shows was launched
-- (it launches the rank's first, or comes before it), whose part before
-- the rank's first GPU work is 1 ms or more and 20x the median time its
-- name's calls spend before their own copy starts (or which is the only
-- call of its name, as first_use of sql/capture.sql). That part ran no copy
-- and waited on no queued work the trace shows: a one-time cost at the
-- window's start (the first copy's set-up: staging buffers, allocator
-- growth, lazy initialisation; or work from before the window the capture
-- clipped), not the loop's (resnet50_num_workers_4: the first
-- cudaMemcpyAsync of ProfilerStep#5 blocks 40.0 ms, 36.4 ms of it before
-- its 3.6 ms copy, the GPU's first work, starts; the later input copies
-- block 3.1 ms, 0.2 ms before their copies). The sync and memcpy presets
-- report it as one_time_ns and the rules leave it out; the capture area
-- lists it (first_copy). Ranks without GPU work have none.
--
-- Uploads before any computation: on a rank that runs kernels and whose
-- every GPU copy ends before its first kernel starts, outside every step,
-- the copy calls that launched those copies moved data to the device
-- once, before the work (critical_path_alexnet, no steps: 16 HtoD copies
-- of 244 MB, AlexNet's weights, end before its first kernel; the forward
-- follows), not a copy the loop makes each step. The whole call is
-- one-time (one_time_ns, upload), none of it held; the capture area lists
-- the calls (upload). A rank with one copy after its first kernel has
-- none: the copies before it are the first of the loop's
-- (resnet50_num_workers_4: the first batch's upload precedes the first
-- kernel, the next batches' follow); nor has a rank whose copies lie in a
-- step (vllm_decode_full_mi300x: one decode step, its inputs copied
-- before its forward's kernels).
CREATE TABLE evidence_base_waits AS
WITH
_c AS (
  SELECT trace, rank, correlation, name, ts_ns, end_ns, dur_ns FROM evidence_base_events
  WHERE kind IN ('runtime', 'driver') AND api IN ('sync', 'memcpy') AND dur_ns >= 1000000 AND correlation IS NOT NULL
    AND (trace, rank) IN (SELECT trace, rank FROM evidence_base_busy)
),
-- The long idle gaps: few, so the range join below stays small.
_g AS (
  SELECT trace, rank, seg_end AS g0, next_ts AS g1 FROM evidence_base_busy
  WHERE next_ts IS NOT NULL AND next_ts - seg_end >= 1000000
),
_h AS (
  SELECT c.trace, c.rank, c.correlation, c.name, c.ts_ns, c.end_ns,
    sum(least(g.g1, c.end_ns) - greatest(g.g0, c.ts_ns)) AS held
  FROM _c c JOIN _g g ON g.trace = c.trace AND g.rank = c.rank AND g.g0 < c.end_ns AND g.g1 > c.ts_ns
  GROUP BY ALL
),
-- Each rank's first GPU work and the first launch of its GPU work.
_first AS (
  SELECT trace, rank, min(ts_ns) AS fs, min(launch_ts) AS fl FROM evidence_base_events
  WHERE tb_gpu_work(kind) AND ts_ns IS NOT NULL
  GROUP BY trace, rank
),
-- Copy calls with the time each spent before its own copy started.
_cc AS (
  SELECT r.trace, r.rank, r.correlation, r.name, r.ts_ns, r.end_ns,
    row_number() OVER (PARTITION BY r.trace, r.rank, r.name ORDER BY r.ts_ns) AS k,
    greatest(0, least(g.gts, r.end_ns) - r.ts_ns) AS lead
  FROM evidence_base_events r
  JOIN (SELECT trace, rank, correlation, min(ts_ns) AS gts FROM evidence_base_events
        WHERE kind = 'gpu_memcpy' AND correlation IS NOT NULL AND ts_ns IS NOT NULL GROUP BY ALL) g
    ON g.trace = r.trace AND g.rank = r.rank AND g.correlation = r.correlation
  WHERE r.kind IN ('runtime', 'driver') AND r.api = 'memcpy' AND r.ts_ns IS NOT NULL
),
_ccm AS (
  SELECT trace, rank, name, median(lead) AS med, count(*) AS n FROM _cc GROUP BY ALL
),
_f AS (
  SELECT c.trace, c.rank, c.correlation, c.name, c.ts_ns, c.end_ns, least(c.end_ns, f.fs) - c.ts_ns AS first_use
  FROM _cc c
  JOIN _ccm m ON m.trace = c.trace AND m.rank = c.rank AND m.name = c.name
  JOIN _first f ON f.trace = c.trace AND f.rank = c.rank
  WHERE c.k <= 20 AND f.fl >= c.ts_ns
    AND least(c.end_ns, f.fs) - c.ts_ns >= 1000000 AND (m.n = 1 OR least(c.end_ns, f.fs) - c.ts_ns >= 20 * m.med)
),
-- Ranks whose every GPU copy ends before their first kernel starts.
_upr AS (
  SELECT c.trace, c.rank
  FROM evidence_base_events c
  JOIN (SELECT trace, rank, min(ts_ns) AS k0 FROM evidence_base_events WHERE kind = 'kernel' AND ts_ns IS NOT NULL GROUP BY ALL) k
    ON k.trace = c.trace AND k.rank = c.rank
  WHERE c.kind = 'gpu_memcpy' AND c.ts_ns IS NOT NULL
  GROUP BY c.trace, c.rank
  HAVING max(c.end_ns) <= min(k.k0) AND bool_and(c.step = -1)
),
_up AS (
  SELECT r.trace, r.rank, r.correlation, r.name, r.ts_ns, r.end_ns, r.dur_ns
  FROM evidence_base_events r
  SEMI JOIN _upr u ON u.trace = r.trace AND u.rank = r.rank
  SEMI JOIN (SELECT trace, rank, correlation FROM evidence_base_events WHERE kind = 'gpu_memcpy' AND correlation IS NOT NULL) g
    ON g.trace = r.trace AND g.rank = r.rank AND g.correlation = r.correlation
  WHERE r.kind IN ('runtime', 'driver') AND r.api = 'memcpy' AND r.correlation IS NOT NULL
),
_w AS (
  SELECT trace, rank, correlation, name, ts_ns, end_ns, held, 0 AS first_use, false AS upload FROM _h WHERE held >= 1000000
  UNION ALL
  SELECT trace, rank, correlation, name, ts_ns, end_ns, 0, first_use, false FROM _f
  UNION ALL
  SELECT trace, rank, correlation, name, ts_ns, end_ns, 0, dur_ns, true FROM _up
)
SELECT
  -- Trace name. TEXT
  trace,
  -- Rank. INT
  rank,
  -- Correlation id of the call. INT
  correlation,
  -- Call name. TEXT
  any_value(name) AS name,
  -- Start of the call. TIMESTAMP_NS
  ts_ns,
  -- End of the call. TIMESTAMP_NS
  any_value(end_ns) AS end_ns,
  -- The part of the call inside idle gaps of 1 ms or more between the rank's GPU work (0 when under 1 ms, and for an upload). DURATION_NS
  CAST(CASE WHEN bool_or(upload) THEN 0 ELSE sum(held) END AS BIGINT) AS held_ns,
  -- A one-time cost: the part of a first copy call before the rank's first GPU work, or the whole of an upload call (0 for other calls). DURATION_NS
  CAST(CASE WHEN bool_or(upload) THEN max(first_use) FILTER (WHERE upload) ELSE sum(first_use) END AS BIGINT) AS one_time_ns,
  -- The call launched an upload before any computation: a copy on a rank whose every GPU copy ends before its first kernel starts, outside every step. BOOL
  bool_or(upload) AS upload
FROM _w
GROUP BY trace, rank, correlation, ts_ns;

-- The rank's synchronising calls at the window's edge: sync calls (api
-- sync) that block the host (tb_sync_call: a *StreamWaitEvent makes a
-- stream wait, not the host, and is no sync of the window's edge;
-- train_h800_ep64 counted one beside its cudaDeviceSynchronize) and start
-- after the rank's last GPU work started (the profiler's
-- stop synchronisation, a harness sync), before the rank's first launching
-- call (it can only wait for work launched before the window: a harness's
-- sync after warm-up) or, on a rank with steps, outside every step. One
-- definition for the capture area (its edge_sync kind) and the sync preset
-- (its edge column): the sync rule leaves these calls out, whatever
-- operator issued them (vllm_h100_tp4_rank0: a cudaStreamSynchronize of
-- aten::to and the cudaDeviceSynchronize after the last step).
CREATE TABLE evidence_base_edge AS
WITH
_rt AS (
  SELECT trace, rank, kind, api, name, ts_ns, end_ns, correlation, step FROM evidence_base_events
  WHERE kind IN ('runtime', 'driver') AND ts_ns IS NOT NULL
),
_glast AS (
  SELECT trace, rank, max(ts_ns) AS glast FROM evidence_base_events
  WHERE tb_gpu_work(kind) AND ts_ns IS NOT NULL GROUP BY trace, rank
),
_first_launch AS (
  SELECT trace, rank, min(ts_ns) AS fl FROM _rt
  WHERE api IN ('launch', 'graph_launch', 'memcpy', 'memset') GROUP BY trace, rank
),
_has_steps AS (
  SELECT DISTINCT trace, rank FROM evidence_base_steps
)
SELECT
  -- Trace name. TEXT
  r.trace AS trace,
  -- Rank. INT
  r.rank AS rank,
  -- Correlation id of the call. INT
  r.correlation AS correlation,
  -- Call name. TEXT
  r.name AS name,
  -- Start of the call. TIMESTAMP_NS
  r.ts_ns AS ts_ns,
  -- End of the call. TIMESTAMP_NS
  r.end_ns AS end_ns
FROM _rt r
LEFT JOIN _glast g ON g.trace = r.trace AND g.rank = r.rank
LEFT JOIN _has_steps h ON h.trace = r.trace AND h.rank = r.rank
LEFT JOIN _first_launch f ON f.trace = r.trace AND f.rank = r.rank
WHERE r.api = 'sync' AND tb_sync_call(r.kind, r.api, r.name, false) = 'blocking'
  AND (r.ts_ns >= g.glast OR r.ts_ns < f.fl OR (h.trace IS NOT NULL AND r.step < 0));
