-- crossview: the linkage rows behind %crossview: host frames with the frame that encloses each, GPU operations with the runtime call that launched each, and each trace's first timestamp.
-- INCLUDE: (none)
--
-- One query, three row kinds (row_kind); analysis/crossview builds the GPU
-- view, the CPU view and the cross-check from them in Go, and takes the steps
-- and their phases from the steps preset.
--
-- frame: every host X event (python, cpu_op, annotation, runtime, driver).
--   Time containment on the same thread gives the enclosing frame: DuckDB
--   puts each thread's frames (a hash of trace, file, pid, tid) in start
--   order, an enclosing frame first (ts ascending, end descending, id), and
--   prev_id is the frame just before in that order (a window lag). The
--   enclosing frame is prev_id or the nearest enclosing frame of prev_id
--   that contains the frame; analysis/crossview walks that chain in one pass
--   in Go (the call stack walk), which costs less than a self-join of every
--   frame with every frame that could contain it. parent_id is the frame of
--   the Python parent id, used where no frame of the thread contains it.
-- op: every GPU X event (kernel, gpu_memcpy, gpu_memset). parent_id is the
--   runtime or driver call with the same correlation in the same file and
--   rank (Kineto's ac2g flow joins the same pair); 0 when no host call carries
--   it. Graph replays share the cudaGraphLaunch's correlation, so every kernel
--   a replay recorded points at that launch.
-- origin: one row per trace: ts_ns is the trace's first timestamp, the origin
--   of --window.
--
-- Columns:
-- row_kind: frame, op or origin. TEXT
-- trace: Trace name. TEXT
-- rank: Rank (NULL for origin rows). INT
-- id: The event's id in this result: its rowid + 1. INT
-- prev_id: frame: the previous frame in its thread's start order; 0 = first (and for other rows). INT
-- parent_id: frame: the frame of its Python parent id; op: the launching call's id; 0 = none. INT
-- thread: frame: pid/tid as written; NULL otherwise. TEXT
-- kind: Normalised category (events.kind). TEXT
-- api: Runtime/driver calls: launch, graph_launch, sync, memcpy, memset, other. TEXT
-- name: Event name. TEXT
-- ts_ns: Start (origin rows: the trace's first timestamp). TIMESTAMP_NS
-- dur_ns: Duration. DURATION_NS
-- stream: GPU stream of an op. INT
-- graph_id: Graph id of an op when the trace records it. INT
--
-- PARAMS: $1 trace (TEXT, '' = every trace), $2 rank (INT, -1 = every rank).
-- The window, phase, step and stream are applied in Go: an operation inside
-- the window may have been launched before it, and its launching stack must
-- still be found.
WITH
_t0 AS (
  SELECT trace, min(first_ts_ns) AS t0 FROM traces
  WHERE ($1::VARCHAR = '' OR trace = $1::VARCHAR)
  GROUP BY trace
),
_host AS (
  SELECT rowid + 1 AS id, trace, file_id, rank, coalesce(pid, '') AS pid, coalesce(tid, '') AS tid,
    hash(trace, file_id, pid, tid) AS th,
    kind, api, name, ts_ns, dur_ns, end_ns, correlation, python_id, python_parent_id
  FROM events
  WHERE ph = 'X' AND kind IN ('python', 'cpu_op', 'annotation', 'runtime', 'driver')
    AND ($1::VARCHAR = '' OR trace = $1::VARCHAR)
    AND ($2::INTEGER < 0 OR rank = $2::INTEGER)
),
_py AS (
  SELECT trace, file_id, rank, python_id, min(id) AS id
  FROM _host WHERE kind = 'python' AND python_id IS NOT NULL
  GROUP BY trace, file_id, rank, python_id
),
_launch AS (
  SELECT trace, file_id, rank, correlation, min(id) AS id
  FROM _host WHERE kind IN ('runtime', 'driver') AND correlation IS NOT NULL
  GROUP BY trace, file_id, rank, correlation
)
SELECT 'frame' AS row_kind, h.trace, h.rank, h.id,
  CAST(coalesce(lag(h.id) OVER (PARTITION BY h.th ORDER BY h.ts_ns, h.end_ns DESC, h.id), 0) AS BIGINT) AS prev_id,
  CAST(coalesce(py.id, 0) AS BIGINT) AS parent_id,
  h.pid || '/' || h.tid AS thread,
  h.kind, h.api, h.name, h.ts_ns, h.dur_ns,
  CAST(NULL AS BIGINT) AS stream, CAST(NULL AS BIGINT) AS graph_id
FROM _host h
LEFT JOIN _py py ON py.trace = h.trace AND py.file_id = h.file_id AND py.rank = h.rank AND py.python_id = h.python_parent_id
UNION ALL
SELECT 'op' AS row_kind, g.trace, g.rank, g.rowid + 1 AS id, CAST(0 AS BIGINT) AS prev_id,
  CAST(coalesce(l.id, 0) AS BIGINT) AS parent_id,
  CAST(NULL AS VARCHAR) AS thread,
  g.kind, g.api, g.name, g.ts_ns, g.dur_ns, g.stream, g.graph_id
FROM events g
LEFT JOIN _launch l ON l.trace = g.trace AND l.file_id = g.file_id AND l.rank = g.rank AND l.correlation = g.correlation
WHERE g.ph = 'X' AND g.kind IN ('kernel', 'gpu_memcpy', 'gpu_memset')
  AND ($1::VARCHAR = '' OR g.trace = $1::VARCHAR)
  AND ($2::INTEGER < 0 OR g.rank = $2::INTEGER)
UNION ALL
SELECT 'origin' AS row_kind, trace, CAST(NULL AS INTEGER) AS rank, CAST(0 AS BIGINT) AS id, CAST(0 AS BIGINT) AS prev_id,
  CAST(0 AS BIGINT) AS parent_id, CAST(NULL AS VARCHAR) AS thread,
  CAST(NULL AS VARCHAR) AS kind, CAST(NULL AS VARCHAR) AS api, CAST(NULL AS VARCHAR) AS name,
  t0 AS ts_ns, CAST(0 AS BIGINT) AS dur_ns, CAST(NULL AS BIGINT) AS stream, CAST(NULL AS BIGINT) AS graph_id
FROM _t0
