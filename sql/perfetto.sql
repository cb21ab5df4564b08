-- perfetto: the events of one rank in one time window (a finding's worst step ±1), for the Chrome-trace JSON a report finding saves for Perfetto.
-- INCLUDE: schema
--
-- One query, five row kinds (row_kind). analysis/perfetto writes the rows as
-- a Chrome trace (JSON `{"traceEvents": [...]}`) and adds the finding's own
-- track; pipeline.AddPerfetto runs this file once per finding with the
-- window that analysis/report chose (report.PlanWindows).
--
-- event rows: the X events of the rank that overlap the window (start before its
--   end, end at or after its start): kernels, GPU copies and memsets, GPU
--   annotations, runtime and driver calls, CPU operators and user
--   annotations, and python frames when the window holds at most $6 of
--   them (with_stack traces hold many: they are left out past that, and
--   the origin row says how many there were). The $5 longest are kept
--   (ties: earlier first); the origin row counts them all.
-- gap rows: the GPU idle intervals of the rank that overlap the window: the gaps
--   between the segments of the union of its GPU operations (as in
--   sql/sync.sql), clipped to the window, longest $5 first. kind is
--   host_wait when the runtime call that launched the operation ending the
--   gap started after the gap began (HTA's host-wait test, on the union of
--   the rank's streams rather than per stream), kernel_wait when the gap is
--   shorter than 30 us, else other. GPU operations that start up to one
--   window length before the window are read to find the first gap.
-- process and thread rows: the process and thread names (threads table) of the
--   pids and tids of the kept events.
-- origin row (one): ts_ns is the trace's first timestamp (the origin of
--   the window), total the events that overlap the window, python the python
--   frames among them, and python_kept whether they are exported.
--
-- The rows come in no order: analysis/perfetto's SortRows puts them in
-- (row_kind, ts_ns, pid, tid, name, dur_ns descending, correlation,
-- external_id, kind), NULL last, in Go, which costs less than DuckDB's
-- sort of these rows with their strings.
--
-- Columns:
-- row_kind: event, gap, process, thread or origin. TEXT
-- pid: Process as written (events.pid); NULL for gap and origin rows. TEXT
-- tid: Thread as written (events.tid); NULL for gap, process and origin rows. TEXT
-- kind: event: events.kind; gap: host_wait, kernel_wait or other; NULL otherwise. TEXT
-- api: event: what a runtime/driver call does (events.api); NULL otherwise. TEXT
-- cat: event: the trace's own cat. TEXT
-- name: event: its name; process and thread: the name the metadata gives. TEXT
-- label: process: its process_labels value ("CPU", "GPU 0"); NULL otherwise. TEXT
-- sort_index: process and thread: the sort index the metadata gives. INT
-- ts_ns: event and gap: start (as in the trace, not from its first event); origin: the trace's first timestamp. TIMESTAMP_NS
-- dur_ns: event and gap: duration. DURATION_NS
-- correlation: event: arg "correlation" (links a runtime call and its GPU work). INT
-- external_id: event: arg "External id". INT
-- stream: event: arg "stream" of GPU work. INT
-- device: event: arg "device" of GPU work. INT
-- bytes: event: arg "bytes" of a copy or memset. BYTES
-- graph_id: event: arg "graph id". INT
-- class: event: COMP, COMM or MEM for GPU operations (tb_kernel_class, as in sql/kernels.sql); NULL otherwise. TEXT
-- total: origin: the events that overlap the window before the cap. COUNT
-- python: origin: python frames among them. COUNT
-- python_kept: origin: the python frames are exported (at most $6 of them). BOOL
-- sync: event: how a runtime or driver call synchronizes with the device, tb_sync_call given tb_copy_waits of the GPU copy with its correlation on the rank: blocking, stream or NULL. TEXT
-- src_kind: event: a GPU copy's source memory kind (tb_copy_src); for a host call, that of the copy it launched. TEXT
-- dst_kind: event: a GPU copy's destination memory kind (tb_copy_dst); for a host call, that of the copy it launched. TEXT
-- copy_bytes: event: for a host call, arg "bytes" of the copy it launched. BYTES
--
-- PARAMS: $1 trace (TEXT), $2 rank (INT), $3 window start and $4 window end
-- (DURATION_NS from the trace's first event, as the steps preset's
-- start_ns), $5 most events kept, and most gap rows (COUNT), $6 most python
-- frames in the window for them to be exported (COUNT).
WITH
_t0 AS (
  SELECT min(first_ts_ns) AS t0 FROM traces WHERE trace = $1::VARCHAR
),
_w AS (
  SELECT t0, t0 + $3::BIGINT AS w0, t0 + $4::BIGINT AS w1, $4::BIGINT - $3::BIGINT AS len FROM _t0
),
-- The rank's events, read from tb_events (schema.sql) by the trace's id:
-- a filter on the events view's trace would look up every event's trace
-- string first. Readers look up the strings they keep.
_e AS NOT MATERIALIZED (
  SELECT e.* FROM tb_events e
  WHERE e.trace_id = (SELECT id FROM tb_strings WHERE s = $1::VARCHAR) AND e.rank = $2::INTEGER
),
-- The window's events as ids: their strings are looked up for the
-- kept ones only (a window can hold most of the trace).
_win AS NOT MATERIALIZED (
  SELECT e.pid_id, e.tid_id, e.kind, e.api, e.cat_id, e.name_id, e.ts_ns, e.dur_ns, e.correlation, e.external_id,
    e.stream, e.device, e.bytes, e.graph_id
  FROM _e e, _w
  WHERE e.ph = 'X'
    AND (tb_gpu_work(e.kind) OR e.kind IN ('gpu_annotation', 'runtime', 'driver', 'cpu_op', 'annotation', 'python'))
    AND e.ts_ns < _w.w1 AND e.end_ns >= _w.w0
),
_py AS (
  SELECT count(*) FILTER (WHERE kind = 'python') AS python, count(*) AS total FROM _win
),
_cand AS NOT MATERIALIZED (
  SELECT w.* FROM _win w, _py
  WHERE w.kind <> 'python' OR _py.python <= $6::BIGINT
),
-- The $5-th longest candidate (ties: earlier first): every candidate
-- ordered before it or tied with it on duration and start can be kept,
-- whatever its strings; none when there are at most $5.
_cut AS (
  SELECT dur_ns, ts_ns, true AS cut FROM _cand ORDER BY dur_ns DESC, ts_ns LIMIT 1 OFFSET $5::BIGINT - 1
),
-- The candidates before the cut are kept whatever their strings; of those
-- tied with it on duration and start, the first by pid, tid, name,
-- correlation and external id fill the $5: the $5 first in the order
-- (duration descending, start, pid, tid, name, correlation, external id),
-- without sorting them all (a window under the cap, as vLLM H100's 12,770
-- events, is not sorted here at all: 9 ms of this query's 70-80).
_kept AS (
  SELECT d.strings[c.pid_id + 1] AS pid, d.strings[c.tid_id + 1] AS tid, c.kind, c.api,
    d.strings[c.cat_id + 1] AS cat, d.strings[c.name_id + 1] AS name, c.ts_ns, c.dur_ns, c.correlation, c.external_id,
    c.stream, c.device, c.bytes, c.graph_id
  FROM _cand c CROSS JOIN tb_dict d LEFT JOIN _cut u ON true
  WHERE u.cut IS NULL OR c.dur_ns > u.dur_ns OR (c.dur_ns = u.dur_ns AND c.ts_ns < u.ts_ns)
  UNION ALL
  (SELECT d.strings[c.pid_id + 1] AS pid, d.strings[c.tid_id + 1] AS tid, c.kind, c.api,
    d.strings[c.cat_id + 1] AS cat, d.strings[c.name_id + 1] AS name, c.ts_ns, c.dur_ns, c.correlation, c.external_id,
    c.stream, c.device, c.bytes, c.graph_id
  FROM _cand c CROSS JOIN tb_dict d JOIN _cut u ON c.dur_ns = u.dur_ns AND c.ts_ns = u.ts_ns
  ORDER BY pid, tid, name, c.correlation, c.external_id
  LIMIT $5::BIGINT - (SELECT count(*) FROM _cand c, _cut u WHERE c.dur_ns > u.dur_ns OR (c.dur_ns = u.dur_ns AND c.ts_ns < u.ts_ns)))
),
-- The GPU copies the kept host calls launched (same correlation on the
-- rank, in the window or not), which decide whether an Async copy call
-- blocks and whether it copies pageable memory: a correlation's first.
_copies AS (
  SELECT e.correlation, arg_min(d.strings[e.name_id + 1], [e.ts_ns, e.idx]) AS copy_name, arg_min(e.bytes, [e.ts_ns, e.idx]) AS copy_bytes
  FROM _e e, tb_dict d
  WHERE e.kind = 'gpu_memcpy'
    AND e.correlation IN (SELECT correlation FROM _kept WHERE kind IN ('runtime', 'driver') AND correlation IS NOT NULL)
  GROUP BY e.correlation
),
_gpu AS (
  SELECT e.ts_ns, e.end_ns, e.correlation,
    max(e.end_ns) OVER (ORDER BY e.ts_ns, e.end_ns ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS pm
  FROM _e e, _w
  WHERE e.ph = 'X'
    AND tb_gpu_work(e.kind)
    AND e.ts_ns < _w.w1 AND e.ts_ns >= _w.w0 - _w.len
),
_gap AS (
  SELECT g.pm AS g0, g.ts_ns AS g1, g.correlation
  FROM _gpu g
  WHERE g.pm IS NOT NULL AND g.ts_ns > g.pm
),
_launch AS (
  SELECT e.correlation, min(e.ts_ns) AS launch_ts
  FROM _e e
  WHERE e.kind IN ('runtime', 'driver')
    AND e.correlation IN (SELECT correlation FROM _gap WHERE correlation IS NOT NULL)
  GROUP BY e.correlation
),
_gaps AS (
  SELECT greatest(g.g0, _w.w0) AS ts_ns, least(g.g1, _w.w1) - greatest(g.g0, _w.w0) AS dur_ns,
    CASE WHEN l.launch_ts > g.g0 THEN 'host_wait'
         WHEN g.g1 - g.g0 < tb_kernel_wait_ns() THEN 'kernel_wait'
         ELSE 'other' END AS category
  FROM _gap g CROSS JOIN _w LEFT JOIN _launch l ON l.correlation = g.correlation
  WHERE g.g1 > _w.w0 AND g.g0 < _w.w1
  ORDER BY g.g1 - g.g0 DESC, g.g0
  LIMIT $5::BIGINT
),
_procs AS (
  SELECT pid, arg_min(process_name, file_id) FILTER (WHERE process_name IS NOT NULL) AS name,
    arg_min(labels, file_id) FILTER (WHERE labels IS NOT NULL) AS label,
    min(sort_index) FILTER (WHERE tid IS NULL) AS sort_index
  FROM threads
  WHERE trace = $1::VARCHAR AND rank = $2::INTEGER AND tid IS NULL AND pid IN (SELECT pid FROM _kept)
  GROUP BY pid
),
_threads AS (
  SELECT pid, tid, arg_min(thread_name, file_id) FILTER (WHERE thread_name IS NOT NULL) AS name, min(sort_index) AS sort_index
  FROM threads
  WHERE trace = $1::VARCHAR AND rank = $2::INTEGER AND tid IS NOT NULL
    AND (pid, tid) IN (SELECT (pid, tid) FROM _kept)
  GROUP BY pid, tid
)
SELECT 'origin' AS row_kind, NULL::VARCHAR AS pid, NULL::VARCHAR AS tid, NULL::VARCHAR AS kind, NULL::VARCHAR AS api,
  NULL::VARCHAR AS cat, NULL::VARCHAR AS name, NULL::VARCHAR AS label, NULL::BIGINT AS sort_index,
  _w.t0 AS ts_ns, NULL::BIGINT AS dur_ns, NULL::BIGINT AS correlation, NULL::BIGINT AS external_id,
  NULL::BIGINT AS stream, NULL::BIGINT AS device, NULL::BIGINT AS bytes, NULL::BIGINT AS graph_id,
  NULL::VARCHAR AS class, _py.total AS total, _py.python AS python, _py.python <= $6::BIGINT AS python_kept,
  NULL::VARCHAR AS sync, NULL::VARCHAR AS src_kind, NULL::VARCHAR AS dst_kind, NULL::BIGINT AS copy_bytes
FROM _w, _py
UNION ALL
SELECT 'process', pid, NULL, NULL, NULL, NULL, name, label, sort_index,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
FROM _procs
UNION ALL
SELECT 'thread', pid, tid, NULL, NULL, NULL, name, NULL, sort_index,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
FROM _threads
UNION ALL
SELECT 'gap', NULL, NULL, category, NULL, NULL, NULL, NULL, NULL,
  ts_ns, dur_ns, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
FROM _gaps
UNION ALL
SELECT 'event', k.pid, k.tid, k.kind, k.api, k.cat, k.name, NULL, NULL,
  k.ts_ns, k.dur_ns, k.correlation, k.external_id, k.stream, k.device, k.bytes, k.graph_id,
  tb_kernel_class(k.kind, k.name),
  NULL, NULL, NULL,
  tb_sync_call(k.kind, k.api, k.name, tb_copy_waits(c.copy_name)),
  CASE WHEN k.kind = 'gpu_memcpy' THEN tb_copy_src(k.name) ELSE tb_copy_src(c.copy_name) END,
  CASE WHEN k.kind = 'gpu_memcpy' THEN tb_copy_dst(k.name) ELSE tb_copy_dst(c.copy_name) END,
  c.copy_bytes
-- An equality on an expression of k alone: a condition on k in the ON
-- clause of a LEFT JOIN made DuckDB compare every pair.
FROM _kept k LEFT JOIN _copies c ON c.correlation = CASE WHEN k.kind IN ('runtime', 'driver') THEN k.correlation END
