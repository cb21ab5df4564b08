-- graphs: CUDA/HIP graph launches, the kernels recorded for them, and kernels that no CPU event launched, keyed by step.
-- INCLUDE: evidence_base
--
-- Kernels replayed from a graph share the correlation of their
-- cudaGraphLaunch. Under continuous replay the profiler's buffer can overflow
-- and record only some replays: launches with no kernel, or far fewer kernels
-- than the largest replay of the same graph, mean per-kernel attribution and
-- idle time are unreliable (an evidence gap, not idle time). Graph identity is
-- the 'graph id' arg where the trace has it, else -1 (all graphs together).
-- The row with graph = -2 counts GPU events whose correlation matches no
-- runtime or driver event (no launching CPU event in the trace).
--
-- Columns:
-- trace: Trace name. TEXT
-- rank: Rank. INT
-- step: Step number (-1 outside every step). INT
-- phase: Phase of the step. TEXT
-- graph: Graph id (-1 unknown, -2 the row of kernels without a launching CPU event). INT
-- launches: Graph launches. COUNT
-- empty_launches: Graph launches with no GPU work recorded. COUNT
-- kernels: GPU events recorded for these launches (or without a launch on the -2 row). COUNT
-- min_per_launch: Fewest GPU events recorded for one launch. COUNT
-- max_per_launch: Most GPU events recorded for one launch. COUNT
-- gpu_ns: Sum of those GPU events' durations. DURATION_NS
-- span_ns: Sum over the launches of the span of each one's GPU events, first start to last end (NULL on the -2 row, whose events have no launch): far above gpu_ns, the replays' recorded nodes leave gaps between them, where the replay ran nodes the trace does not record or waited, on other streams or a dependency (negative_queue_length_a100: 105 ms of recorded work over 399 ms of spans). DURATION_NS
-- KEYED: e.kind IN ('runtime', 'driver') OR tb_gpu_work(e.kind)
--
-- No parameters: the filter (trace, rank, window: evidence_base's PARAMS)
-- is applied when evidence_base_events is built.
--
-- Steps and phases: an event's step and phase are those of
-- evidence_base_events (sql/evidence_base.sql, which documents how steps are
-- found). %evidence builds that table for the filter before it runs this
-- file; to run this file by hand, run sql/evidence_base.sql first.
WITH
_keyed AS NOT MATERIALIZED (
  SELECT trace, rank, pid, tid, kind, api, name, ts_ns, dur_ns, end_ns,
    correlation, external_id, stream, device, bytes, graph_id,
    host_ts, step, phase
  FROM evidence_base_events
  WHERE kind IN ('runtime', 'driver') OR tb_gpu_work(kind)
),
_gpu AS (
  SELECT trace, rank, correlation, count(*) AS n, sum(dur_ns) AS d, max(graph_id) AS gid, max(end_ns) - min(ts_ns) AS sp
  FROM _keyed WHERE tb_gpu_work(kind) AND correlation IS NOT NULL
  GROUP BY trace, rank, correlation
),
_gl AS (
  SELECT k.trace, k.rank, k.step, k.phase, coalesce(g.gid, -1) AS graph, coalesce(g.n, 0) AS n, coalesce(g.d, 0) AS d, coalesce(g.sp, 0) AS sp
  FROM _keyed k LEFT JOIN _gpu g ON g.trace = k.trace AND g.rank = k.rank AND g.correlation = k.correlation
  WHERE tb_graph_launch(k.kind, k.api, k.name)
),
_rt AS (
  SELECT DISTINCT trace, rank, correlation FROM evidence_base_events WHERE kind IN ('runtime', 'driver') AND correlation IS NOT NULL
),
_orph AS (
  SELECT k.trace, k.rank, k.step, k.phase, -2 AS graph, 0 AS launches, 0 AS empty_launches, count(*) AS kernels,
    0 AS min_per_launch, 0 AS max_per_launch, CAST(sum(k.dur_ns) AS BIGINT) AS gpu_ns, CAST(NULL AS BIGINT) AS span_ns
  FROM _keyed k LEFT JOIN _rt r ON r.trace = k.trace AND r.rank = k.rank AND r.correlation = k.correlation
  WHERE tb_gpu_work(k.kind) AND r.correlation IS NULL
  GROUP BY ALL
)
SELECT trace, rank, step, phase, graph, count(*) AS launches, count(*) FILTER (WHERE n = 0) AS empty_launches,
  CAST(sum(n) AS BIGINT) AS kernels, min(n) AS min_per_launch, max(n) AS max_per_launch, CAST(sum(d) AS BIGINT) AS gpu_ns,
  CAST(sum(sp) AS BIGINT) AS span_ns
FROM _gl GROUP BY ALL
UNION ALL
SELECT * FROM _orph
ORDER BY trace, rank, step, phase, graph
