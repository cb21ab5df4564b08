-- gaps: GPU idle intervals per stream, split the HTA way into host wait, kernel wait and other, keyed by (trace, rank, step, phase, stream).
-- INCLUDE: evidence_base
--
-- HTA's idle time breakdown: on each stream, GPU events (kernels, memcpy,
-- memset; cuda_sync rows excluded as HTA does) sorted by start; the idle
-- interval before an event is its start minus the previous event's end.
-- Categories: host_wait when the event's launching call started after the previous event
-- ended (the CPU did not enqueue in time; an event whose launching call is not
-- in the trace is never host wait, as in HTA); kernel_wait: otherwise, and the
-- interval is under 30 us (HTA's consecutive_kernel_delay, which HTA compares
-- against microsecond timestamps); other: the rest (cross-stream waits,
-- launch delays). Each row also keeps a log-bucket histogram (see
-- kernels.sql) and the longest interval with its start, so that other
-- cutoffs, percentiles and the longest gaps survive a merge. An interval
-- belongs to the step of the event that ends it. Device-level idle time
-- (all streams together) is ranks.idle_ns.
--
-- The rollup keeps one row per stream and category (idle time is measured per
-- stream) and the start of the longest interval with it:
-- MERGE: stream = key, max_at_ns = argmax(max_ns)
--
-- Columns:
-- trace: Trace name. TEXT
-- rank: Rank. INT
-- step: Step number (-1 outside every step). INT
-- phase: Phase of the step. TEXT
-- stream: GPU stream (-1 when none). INT
-- category: host_wait, kernel_wait or other. TEXT
-- count: Idle intervals (zero-length ones excluded). COUNT
-- idle_ns: Sum of their lengths. DURATION_NS
-- max_ns: Longest interval. DURATION_NS
-- max_at_ns: Start of the longest interval, from the trace's first event. TIMESTAMP_NS
-- hist: Log-bucket histogram of interval lengths. HIST
-- KEYED: tb_gpu_work(e.kind)
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
_keyed AS NOT MATERIALIZED (
  SELECT trace, rank, pid, tid, kind, api, name, ts_ns, dur_ns, end_ns,
    correlation, external_id, stream, device, bytes, graph_id,
    host_ts, launch_ts, step, phase, file_id, idx
  FROM evidence_base_events
  WHERE tb_gpu_work(kind)
),
_w AS (
  SELECT trace, rank, step, phase, coalesce(stream, -1) AS stream, ts_ns, launch_ts,
    lag(end_ns) OVER (PARTITION BY trace, rank, coalesce(stream, -1) ORDER BY ts_ns, end_ns, correlation, file_id, idx) AS prev_end
  FROM _keyed
),
_i AS (
  SELECT w.trace, w.rank, w.step, w.phase, w.stream, w.ts_ns - w.prev_end AS len, w.prev_end - t.t0 AS at_ns,
    CASE WHEN w.launch_ts > w.prev_end THEN 'host_wait'
         WHEN w.ts_ns - w.prev_end < tb_kernel_wait_ns() THEN 'kernel_wait'
         ELSE 'other' END AS category
  FROM _w w JOIN _t0 t ON t.trace = w.trace
  WHERE w.prev_end IS NOT NULL AND w.ts_ns > w.prev_end
),
_b AS (
  SELECT trace, rank, step, phase, stream, category, CAST(floor(8 * log2(greatest(len, 1))) AS INTEGER) AS b,
    count(*) AS n, sum(len) AS s, max(len) AS mx, arg_max(at_ns, len) AS mx_at
  FROM _i GROUP BY ALL
)
SELECT trace, rank, step, phase, stream, category,
  CAST(sum(n) AS BIGINT) AS count, CAST(sum(s) AS BIGINT) AS idle_ns, max(mx) AS max_ns, arg_max(mx_at, mx) AS max_at_ns,
  tb_hist(list({'b': b, 'n': n})) AS hist
FROM _b GROUP BY ALL
ORDER BY trace, rank, step, phase, stream, category
