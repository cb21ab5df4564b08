-- perfetto_anchor: the worst instance of each kind of problem on one rank, where a trace without steps places a finding's Perfetto window.
-- INCLUDE: schema
--
-- A trace without step annotations has no "worst step": analysis/report
-- (report.PlanWindows) then centres a finding's window on the longest
-- instance of what the finding is about, with a fixed margin either side.
-- This file finds those instances, one row per anchor kind that the rank
-- shows (a kind with no instance has no row):
--
-- anchor sync: the blocking host sync (tb_sync_call of views.sql with the
--   copy check: runtime/driver api 'sync' other than the non-blocking
--   *StreamWaitEvent, synchronous copies such as cudaMemcpy or
--   hipMemcpyWithStream, and Async copies whose GPU copy waits, less those
--   whose copy records pageable memory, the pageable anchor's) that opened
--   the longest GPU gap: a gap (below) that starts while the call runs, as
--   sql/sync.sql links a gap to the call; among calls that opened none, the
--   longest.
-- anchor pageable: the longest GPU copy whose name records pageable host
--   memory (tb_copy_pageable).
-- anchor gap: the longest GPU idle interval: a gap between the segments of the
--   union of the rank's GPU operations (as in sql/sync.sql).
-- anchor host_wait: the longest such gap whose closing operation's launch call
--   started after the gap began (HTA's host-wait test, on the union).
-- anchor comm: the longest communication kernel (class COMM: tb_comm_kernel).
-- anchor kernel: the longest kernel.
-- anchor kernel_name: one row per kernel name of the rank: its longest
--   instance (outside the start-up, below, where it has one), with the
--   name's class (tb_kernel_class).
-- anchor host_name: one row per (kind, name) of the rank's annotations,
--   operators and python frames: its longest instance (outside the
--   start-up where it has one).
--   A finding whose rule's marks flag some of these names (the eager
--   elementwise kernels, the DataLoader's iterations, fp32 SIMT GEMMs, the
--   storm's tiny kernels, the slow kernel) centres on the longest instance
--   its marks flag (report.PlaceAnchor): the names are judged by the rule's
--   own predicate in analysis/findings, not again here.
-- anchor memory: the allocator's peak: the [memory] event of a GPU (Device
--   Type other than 0, the CPU) whose larger of Total Allocated and Total
--   Reserved is the largest (the memory preset's peak_allocated and
--   peak_reserved); an instant, so its length is 0.
--
-- Columns:
-- anchor: sync, pageable, gap, host_wait, comm, kernel, memory, kernel_name or host_name. TEXT
-- name: The instance's event name (for gaps, the name of the operation that ends the gap). TEXT
-- start_ns: Its start, from the trace's first event. TIMESTAMP_NS
-- dur_ns: Its length (0 for the memory peak). DURATION_NS
-- kind: kernel_name and host_name: the events' kind (events.kind); NULL otherwise. TEXT
-- class: kernel_name: the kernel's class (tb_kernel_class: COMP or COMM); NULL otherwise. TEXT
--
-- Instances that lie mostly (more than half their length) inside $3..$4,
-- the start-up the capture area leaves out of the judged slice, come after
-- the others of their anchor: a finding about the loop is shown on the
-- loop (resnet_2080ti: the longest gap and DataLoader call are the workers'
-- 2 s start-up).
--
-- PARAMS: $1 trace (TEXT), $2 rank (INT), $3 and $4 the start-up to pass
-- over (DURATION_NS from the trace's first event; $4 <= $3: none).
WITH
_t0 AS (
  SELECT min(first_ts_ns) AS t0 FROM traces WHERE trace = $1::VARCHAR
),
_ev AS NOT MATERIALIZED (
  SELECT kind, api, name, ts_ns, dur_ns, end_ns, correlation
  FROM events
  WHERE trace = $1::VARCHAR AND rank = $2::INTEGER AND ph = 'X'
),
_gpu AS (
  SELECT name, ts_ns, end_ns, correlation,
    max(end_ns) OVER (ORDER BY ts_ns, end_ns ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS pm
  FROM _ev WHERE tb_gpu_work(kind)
),
_launch AS (
  SELECT correlation, min(ts_ns) AS launch_ts FROM _ev
  WHERE kind IN ('runtime', 'driver') AND correlation IS NOT NULL
  GROUP BY correlation
),
_gap AS (
  SELECT g.name, g.pm AS ts_ns, g.ts_ns - g.pm AS dur_ns, coalesce(l.launch_ts > g.pm, false) AS host_wait
  FROM _gpu g LEFT JOIN _launch l ON l.correlation = g.correlation
  WHERE g.pm IS NOT NULL AND g.ts_ns > g.pm
),
_mem AS (
  SELECT name, ts_ns,
    greatest(coalesce(TRY_CAST(json_extract_string(args, '$."Total Allocated"') AS BIGINT), 0),
             coalesce(TRY_CAST(json_extract_string(args, '$."Total Reserved"') AS BIGINT), 0)) AS peak
  FROM events
  WHERE trace = $1::VARCHAR AND rank = $2::INTEGER AND name = '[memory]'
    AND coalesce(TRY_CAST(json_extract_string(args, '$."Device Type"') AS INTEGER), 1) <> 0
),
_copy AS (
  SELECT correlation, arg_min(name, ts_ns) AS copy_name FROM _ev
  WHERE kind = 'gpu_memcpy' AND correlation IS NOT NULL
  GROUP BY correlation
),
_sync AS (
  SELECT e.name, e.ts_ns, e.dur_ns, e.end_ns FROM _ev e LEFT JOIN _copy c ON c.correlation = e.correlation
  WHERE e.kind IN ('runtime', 'driver')
    AND tb_sync_call(e.kind, e.api, e.name, tb_copy_waits(c.copy_name)) = 'blocking'
    AND NOT coalesce(tb_copy_pageable(c.copy_name), false)
),
_sync_gap AS (
  SELECT s.name, s.ts_ns, s.dur_ns, coalesce(max(g.dur_ns), 0) AS gap_ns
  FROM _sync s LEFT JOIN _gap g ON g.ts_ns >= s.ts_ns AND g.ts_ns <= s.end_ns
  GROUP BY s.name, s.ts_ns, s.dur_ns
),
_cand0 AS (
  -- score orders the instances of an anchor before their length: the
  -- GPU gap a sync opened; 0 for the other anchors.
  SELECT 'sync' AS anchor, name, ts_ns, dur_ns, gap_ns AS score FROM _sync_gap
  UNION ALL
  SELECT 'pageable', name, ts_ns, dur_ns, 0 FROM _ev WHERE kind = 'gpu_memcpy' AND tb_copy_pageable(name)
  UNION ALL
  SELECT 'gap', name, ts_ns, dur_ns, 0 FROM _gap
  UNION ALL
  SELECT 'host_wait', name, ts_ns, dur_ns, 0 FROM _gap WHERE host_wait
  UNION ALL
  SELECT 'comm', name, ts_ns, dur_ns, 0 FROM _ev
  WHERE kind = 'kernel' AND tb_comm_kernel(name)
  UNION ALL
  SELECT 'kernel', name, ts_ns, dur_ns, 0 FROM _ev WHERE kind = 'kernel'
),
_up AS (
  SELECT t0 + $3::BIGINT AS lo, t0 + $4::BIGINT AS hi FROM _t0 WHERE $4::BIGINT > $3::BIGINT
),
-- loop: the instance is not mostly inside the start-up.
_cand AS (
  SELECT c.*, coalesce(2 * (least(c.ts_ns + c.dur_ns, u.hi) - greatest(c.ts_ns, u.lo)) <= c.dur_ns, true) AS loop
  FROM _cand0 c LEFT JOIN _up u ON true
),
_host AS (
  SELECT e.kind, e.name, e.ts_ns, e.dur_ns,
    coalesce(2 * (least(e.ts_ns + e.dur_ns, u.hi) - greatest(e.ts_ns, u.lo)) <= e.dur_ns, true) AS loop
  FROM _ev e LEFT JOIN _up u ON true
  WHERE e.kind IN ('kernel', 'annotation', 'cpu_op', 'python')
)
SELECT anchor,
  arg_max(name, (loop, score, dur_ns, -ts_ns)) AS name,
  arg_max(ts_ns, (loop, score, dur_ns, -ts_ns)) - (SELECT t0 FROM _t0) AS start_ns,
  arg_max(dur_ns, (loop, score, dur_ns, -ts_ns)) AS dur_ns,
  NULL::VARCHAR AS kind, NULL::VARCHAR AS class
FROM _cand
GROUP BY anchor
UNION ALL
SELECT 'memory', arg_max(name, (peak, -ts_ns)), arg_max(ts_ns, (peak, -ts_ns)) - (SELECT t0 FROM _t0), 0, NULL, NULL
FROM _mem
HAVING count(*) > 0 AND max(peak) > 0
UNION ALL
SELECT CASE WHEN kind = 'kernel' THEN 'kernel_name' ELSE 'host_name' END, name,
  arg_max(ts_ns, (loop, dur_ns, -ts_ns)) - (SELECT t0 FROM _t0), arg_max(dur_ns, (loop, dur_ns, -ts_ns)), kind,
  CASE WHEN kind = 'kernel' THEN tb_kernel_class(kind, name) END
FROM _host
GROUP BY kind, name
ORDER BY anchor, name, kind
