-- perfetto_anchor: the worst instance of each kind of problem on one rank, where a trace without steps places a finding's Perfetto window.
-- INCLUDE: schema
--
-- A trace without step annotations has no "worst step": analysis/report
-- (report.PlanWindows) then centres a finding's window on the longest
-- instance of what the finding is about, with a fixed margin either side.
-- This file finds those instances, one row per anchor kind that the rank
-- shows (a kind with no instance has no row):
--
-- anchor sync: the longest blocking host sync (tb_sync_call of views.sql
--   without the copy check: runtime/driver api 'sync' other than the
--   non-blocking *StreamWaitEvent, and synchronous copies: memcpy calls
--   without Async in the name, such as cudaMemcpy or hipMemcpyWithStream).
-- anchor pageable: the longest GPU copy whose name records pageable host
--   memory (tb_copy_pageable).
-- anchor gap: the longest GPU idle interval: a gap between the segments of the
--   union of the rank's GPU operations (as in sql/sync.sql).
-- anchor host_wait: the longest such gap whose closing operation's launch call
--   started after the gap began (HTA's host-wait test, on the union).
-- anchor dataloader: the longest enumerate(DataLoader)# or enumerate(DataPipe)#
--   annotation or operator.
-- anchor comm: the longest communication kernel (class COMM: tb_comm_kernel).
-- anchor kernel: the longest kernel.
--
-- Columns:
-- anchor: sync, pageable, gap, host_wait, dataloader, comm or kernel. TEXT
-- name: The instance's event name (for gaps, the name of the operation that ends the gap). TEXT
-- start_ns: Its start, from the trace's first event. TIMESTAMP_NS
-- dur_ns: Its length. DURATION_NS
--
-- PARAMS: $1 trace (TEXT), $2 rank (INT).
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
  FROM _ev WHERE kind IN ('kernel', 'gpu_memcpy', 'gpu_memset')
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
_cand AS (
  SELECT 'sync' AS anchor, name, ts_ns, dur_ns FROM _ev
  WHERE kind IN ('runtime', 'driver')
    AND tb_sync_call(kind, api, name, false) = 'blocking'
  UNION ALL
  SELECT 'pageable', name, ts_ns, dur_ns FROM _ev WHERE kind = 'gpu_memcpy' AND tb_copy_pageable(name)
  UNION ALL
  SELECT 'gap', name, ts_ns, dur_ns FROM _gap
  UNION ALL
  SELECT 'host_wait', name, ts_ns, dur_ns FROM _gap WHERE host_wait
  UNION ALL
  SELECT 'dataloader', name, ts_ns, dur_ns FROM _ev
  WHERE kind IN ('annotation', 'cpu_op', 'python')
    AND (starts_with(name, 'enumerate(DataLoader)#') OR starts_with(name, 'enumerate(DataPipe)#'))
  UNION ALL
  SELECT 'comm', name, ts_ns, dur_ns FROM _ev
  WHERE kind = 'kernel' AND tb_comm_kernel(name)
  UNION ALL
  SELECT 'kernel', name, ts_ns, dur_ns FROM _ev WHERE kind = 'kernel'
)
SELECT anchor,
  arg_max(name, (dur_ns, -ts_ns)) AS name,
  arg_max(ts_ns, (dur_ns, -ts_ns)) - (SELECT t0 FROM _t0) AS start_ns,
  max(dur_ns) AS dur_ns
FROM _cand
GROUP BY anchor
ORDER BY anchor
