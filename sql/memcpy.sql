-- memcpy: GPU copies and memsets by direction, memory kinds, launching call, keyed by (trace, rank, step, phase, stream).
-- INCLUDE: evidence_base
--
-- Direction and memory kinds are parsed from the Kineto name
-- "Memcpy DtoH (Device -> Pageable)"; where the trace does not name them
-- (some ROCm builds) they are ''. The launching call comes from the runtime
-- event with the same correlation; a memcpy call without "Async" in its
-- name is synchronous (tb_sync_call of views.sql, without the copy check).
-- Bandwidth is bytes / total_ns, computed after any merge.
--
-- Columns:
-- trace: Trace name. TEXT
-- rank: Rank. INT
-- step: Step number (-1 outside every step). INT
-- phase: Phase of the step. TEXT
-- stream: GPU stream (-1 when none). INT
-- kind: memcpy or memset. TEXT
-- direction: HtoD, DtoH, DtoD, HtoH, PtoP, ... ('' when not named). TEXT
-- src: Source memory kind: Pageable, Pinned, Device, Managed, ... ('' when not named). TEXT
-- dst: Destination memory kind ('' when not named). TEXT
-- call: Launching runtime call ('' when not found). TEXT
-- sync: The launching call is a synchronous copy (a memcpy call without Async in its name). BOOL
-- count: Copies. COUNT
-- bytes: Bytes moved. BYTES
-- total_ns: Sum of GPU durations. DURATION_NS
-- host_ns: Sum of the launching calls' durations. DURATION_NS
-- held_ns: The part of host_ns inside idle gaps of 1 ms or more between the rank's GPU work (evidence_base_waits, sql/evidence_base.sql: a wait on work the trace does not show). DURATION_NS
-- one_time_ns: The part of host_ns that is a one-time cost, not the loop's (evidence_base_waits): of first copy calls, their part before the rank's first GPU work; of uploads before any computation (every GPU copy of the rank ends before its first kernel, outside every step), the whole call. DURATION_NS
-- max_ns: Longest GPU duration. DURATION_NS
-- KEYED: e.kind IN ('gpu_memcpy', 'gpu_memset')
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
  WHERE kind IN ('gpu_memcpy', 'gpu_memset')
),
_rt AS (
  SELECT e.trace, e.rank, e.correlation, any_value(e.name) AS call, sum(e.dur_ns) AS host_ns,
    bool_or(coalesce(tb_sync_call(e.kind, e.api, e.name, false) = 'blocking', false)) AS sync_call,
    sum(coalesce(w.held_ns, 0)) AS held_ns,
    sum(coalesce(w.one_time_ns, 0)) AS one_time_ns
  FROM evidence_base_events e
  LEFT JOIN evidence_base_waits w ON w.trace = e.trace AND w.rank = e.rank AND w.correlation = e.correlation AND w.ts_ns = e.ts_ns
  WHERE e.kind IN ('runtime', 'driver') AND e.correlation IS NOT NULL AND (e.api IN ('memcpy', 'memset') OR e.name LIKE '%Mem%')
  GROUP BY ALL
)
SELECT k.trace, k.rank, k.step, k.phase, coalesce(k.stream, -1) AS stream,
  CASE WHEN k.kind = 'gpu_memset' THEN 'memset' ELSE 'memcpy' END AS kind,
  coalesce(tb_copy_direction(k.name), '') AS direction,
  coalesce(tb_copy_src(k.name), '') AS src,
  coalesce(tb_copy_dst(k.name), '') AS dst,
  coalesce(r.call, '') AS call,
  coalesce(r.sync_call, false) AS sync,
  count(*) AS count,
  CAST(sum(coalesce(k.bytes, 0)) AS BIGINT) AS bytes,
  CAST(sum(k.dur_ns) AS BIGINT) AS total_ns,
  CAST(coalesce(sum(r.host_ns), 0) AS BIGINT) AS host_ns,
  CAST(coalesce(sum(r.held_ns), 0) AS BIGINT) AS held_ns,
  CAST(coalesce(sum(r.one_time_ns), 0) AS BIGINT) AS one_time_ns,
  max(k.dur_ns) AS max_ns
FROM _keyed k LEFT JOIN _rt r ON r.trace = k.trace AND r.rank = k.rank AND r.correlation = k.correlation
GROUP BY ALL
ORDER BY trace, rank, step, phase, stream, kind, direction, src, dst, call, sync
