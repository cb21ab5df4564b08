-- crossview: the linkage rows behind %crossview: host frames with the frame that encloses each, GPU operations with the runtime call (or, failing that, the operator) that launched each, and each trace's first timestamp.
-- INCLUDE: schema
--
-- One query, four row kinds (row_kind); analysis/crossview builds the GPU
-- view, the CPU view and the cross-check from them in Go, and takes the steps
-- and their phases from the steps preset.
--
-- frame: every host X event (python, cpu_op, annotation, runtime, driver).
--   Time containment on the same thread gives the enclosing frame:
--   analysis/crossview puts each thread's frames in start order, an
--   enclosing frame first (ts ascending, end descending, id), and walks
--   that order in one pass (the call stack walk), which costs less than a
--   self-join of every frame with every frame that could contain it, and
--   less than a window over these wide rows here. On a large slice Go
--   sorts this result so, the frames last (pipeline.CrossViews), and takes
--   the frames as a stream without holding them.
--   call_stack_id names an operator's "Call stack" arg (2021-format traces
--   with with_stack on) on ranks that have no python frames; Go turns it
--   into the python levels above the operator.
--   sync is read here, by the macros of views.sql, so that the cross-view
--   and the evidence rate the same call the same way.
-- op: every GPU X event (kernel, gpu_memcpy, gpu_memset). parent_id is the
--   runtime or driver call with the same correlation in the same file and
--   rank (Kineto's ac2g flow joins the same pair); 0 when no host call carries
--   it. Graph replays share the cudaGraphLaunch's correlation, so every kernel
--   a replay recorded points at that launch. Where no call carries the
--   correlation, operator_id is the cpu_op of the same file and rank whose
--   External id the operation carries, when exactly one operator has it
--   (Kineto writes the launching operator's External id on its GPU work);
--   several operators with it leave the operation unlinked. A rank whose GPU
--   operations mostly carry their own correlation id as External id (some
--   exporters copy it there) links nothing this way: those numbers are not
--   operator ids, and some of them collide with operators' by chance.
--   link says which link was found, or why none was. host_ts_ns,
--   host_dur_ns and host_thread_id are the launching call's (else the
--   operator's): the cross-check times the launch against the GPU gaps
--   before the frames stream in.
-- origin: one row per trace: ts_ns is the trace's first timestamp, the origin
--   of --window.
-- name: one row per distinct event name of the frames and ops: id is its
--   name_id (the name's id in tb_strings + 1), name the text. Frames and ops carry name_id and no name: a
--   large trace repeats a few hundred names over millions of frames, and one
--   string per row is most of what reading the rows costs (measured on the
--   ×21 vLLM trace: 2.9 M frames, 515 names).
-- thread: one row per thread of the frames: id is its thread_id; trace, rank
--   and thread (pid/tid as written) say which; ts_ns and dur_ns are the
--   span of its frames. Frames carry thread_id and no trace, rank or thread.
-- engine: one row per autograd engine operator (a cpu_op that
--   tb_backward_op of views.sql rates one: `autograd::engine::
--   evaluate_function: ...`, and the node itself, `...Backward0`, as
--   traces before PyTorch 1.11 name it alone), and per operator of DDP's
--   reducer (tb_ddp_reducer_op of views.sql), which the engine runs
--   as part of the backward: its gradient hooks, and the finalisation
--   that waits for the last bucket's all-reduce and copies the buckets
--   to the gradients once every autograd node has run: ts_ns and dur_ns
--   are its own, thread_id its thread row. The thread that called
--   backward() is blocked while the engine's device thread runs them:
--   analysis/crossview counts a launching thread's self time as waiting
--   where another thread of the rank runs engine functions that started
--   inside the frame (nccl_data_a100: the main thread's `## backward ##`,
--   310 ms, while the autograd thread ran the backward, the last 18 ms of
--   each step in the reducer's copy_bucket_to_grad).
-- stack: one row per distinct Call stack: id is its call_stack_id, name its
--   text. The 15,000 operators with a Call stack in the 2021 resnet50 trace
--   share 91 of them: 83 kB come back instead of 12 MB.
--
-- Columns:
-- row_kind: frame, op, origin, stack, name, thread or engine. TEXT
-- trace: Trace name of op, origin and thread rows; NULL otherwise (a frame's is its thread row's). TEXT
-- rank: Rank of op and thread rows; NULL otherwise. INT
-- id: The event's id in this result: its rowid in tb_events + 1 (stack rows: the call_stack_id; name rows: the name_id; thread rows: the thread_id). INT
-- parent_id: op: the launching call's id; 0 = none (frames: 0). INT
-- thread: thread rows: pid/tid as written; NULL otherwise. TEXT
-- kind: Normalised category (events.kind). TEXT
-- api: Runtime/driver calls: launch, graph_launch, sync, memcpy, memset, other. TEXT
-- name: stack rows: the Call stack; name rows: the event name; NULL otherwise. TEXT
-- ts_ns: Start (origin rows: the trace's first timestamp; thread rows: its first frame's start; engine rows: the engine function's start). TIMESTAMP_NS
-- dur_ns: Duration (thread rows: from its first frame's start to its last frame's end; engine rows: the engine function's). DURATION_NS
-- stream: GPU stream of an op. INT
-- graph_id: Graph id of an op when the trace records it. INT
-- operator_id: op: the cpu_op frame linked by External id where parent_id is 0; 0 = none. INT
-- link: op: correlation (a runtime call carries it), external_id (operator_id is set), external_id_ambiguous (several operators have its External id), before_capture (its correlation id is lower than every captured runtime call's of the rank: launched before the host capture began), none. TEXT
-- call_stack_id: frame: the stack row holding the operator's "Call stack" arg (innermost frame first, frames separated by ';'); 0 on ranks with python frames and where absent or empty. INT
-- class: op: tb_kernel_class (views.sql): COMP, COMM or MEM; NULL for other rows. TEXT
-- sync: frame: how it synchronizes with the device: blocking (a scalar read, tb_scalar_read, or a call tb_sync_call rates blocking, given tb_copy_waits of the copy it launched), stream, or NULL. TEXT
-- name_id: frame and op: the name row holding the event's name; NULL when the event has none. INT
-- thread_id: frame and engine: the thread row of its thread. INT
-- host_ts_ns: op: the start of its launching call, else of the operator operator_id names; NULL without either. TIMESTAMP_NS
-- host_dur_ns: op: that frame's duration. DURATION_NS
-- host_thread_id: op: that frame's thread row. INT
--
-- PARAMS: $1 trace (TEXT, '' = every trace), $2 rank (INT, -1 = every rank).
-- The window, phase, step and stream are applied in Go: an operation inside
-- the window may have been launched before it, and its launching stack must
-- still be found.
--
-- No CTE holding a row per GPU operation or per host frame is read twice:
-- DuckDB would materialise it outside what it can spill (measured on the
-- ×250 vLLM trace, 3.5 M operations: out of memory at 256 MB), so _launch
-- is NOT MATERIALIZED and _names and _first read _ev and _host.
-- _host is NOT MATERIALIZED: each reader scans events for its own columns
-- and kinds, which costs less than storing every host frame once and
-- reading the whole stored row back five times (measured on the ×21 vLLM
-- trace: 5.5 s for this query materialised, 3.4 s not).
WITH
-- The complete events (ph X) of the trace and rank this query reads, with
-- their rowid in tb_events (frame and operation ids) and their strings as
-- ids (tb_strings): the events view (sql/schema.sql) cannot give the rowid,
-- and every join and grouping below is on the ids. Strings are looked up
-- for the few rows of _names and _threads, for the ops' trace, the copies'
-- names and the frames' names (which their sync needs), never joined on
-- (measured on the ×21 vLLM trace, 3.2 M result rows: the query in 0.5-0.8×
-- the time of joining and grouping on the looked-up strings, its frames in
-- start order 0.86× under the same 64 MB; xdit, mtia and the 48 MB vLLM
-- trace 0.55-0.75×).
_ev AS NOT MATERIALIZED (
  SELECT e.rowid AS tb_rowid, e.trace_id, e.file_id, e.rank, coalesce(e.pid_id, -1) AS pid_id,
    coalesce(e.tid_id, -1) AS tid_id, e.kind, e.api, e.name_id, e.ts_ns, e.dur_ns, e.end_ns,
    e.correlation, e.external_id, e.stream, e.graph_id, e.args
  FROM tb_events e
  WHERE e.ph = 'X'
    AND ($1::VARCHAR = '' OR e.trace_id = (SELECT id FROM tb_strings WHERE s = $1::VARCHAR))
    AND ($2::INTEGER < 0 OR e.rank = $2::INTEGER)
),
_t0 AS (
  SELECT trace, min(first_ts_ns) AS t0 FROM traces
  WHERE ($1::VARCHAR = '' OR trace = $1::VARCHAR)
  GROUP BY trace
),
_host AS NOT MATERIALIZED (
  SELECT tb_rowid + 1 AS id, trace_id, file_id, rank, pid_id, tid_id,
    kind, api, name_id, ts_ns, dur_ns, end_ns, correlation, external_id
  FROM _ev
  WHERE kind IN ('python', 'cpu_op', 'annotation', 'runtime', 'driver')
),
-- Ranks (of a file) with python frames: their operators' Call stack is not read.
_pyrank AS (
  SELECT DISTINCT trace_id, file_id, rank FROM _host WHERE kind = 'python'
),
-- Operators' Call stack on ranks without python frames; the frames carry
-- the id of their distinct text (_stacks).
_cs AS (
  SELECT e.tb_rowid + 1 AS id, nullif(json_extract_string(e.args, '$."Call stack"'), '') AS call_stack
  FROM _ev e
  LEFT JOIN _pyrank pr ON pr.trace_id = e.trace_id AND pr.file_id = e.file_id AND pr.rank = e.rank
  WHERE e.kind IN ('cpu_op', 'annotation') AND e.args IS NOT NULL AND pr.trace_id IS NULL
),
_stacks AS (
  SELECT call_stack, row_number() OVER (ORDER BY call_stack) AS sid
  FROM (SELECT DISTINCT call_stack FROM _cs WHERE call_stack IS NOT NULL)
),
_launch AS NOT MATERIALIZED (
  SELECT trace_id, file_id, rank, correlation, min(id) AS id,
    arg_min(ts_ns, id) AS ts_ns, arg_min(dur_ns, id) AS dur_ns, arg_min(pid_id, id) AS pid_id, arg_min(tid_id, id) AS tid_id
  FROM _host WHERE kind IN ('runtime', 'driver') AND correlation IS NOT NULL
  GROUP BY trace_id, file_id, rank, correlation
),
-- The first correlation id a captured runtime call carries, per rank of a file.
_first AS (
  SELECT trace_id, file_id, rank, min(correlation) AS c0 FROM _host
  WHERE kind IN ('runtime', 'driver') AND correlation IS NOT NULL
  GROUP BY trace_id, file_id, rank
),
-- The External ids of the GPU operations that no runtime or driver call
-- of their file and rank carries the correlation of (no _launch row): only
-- those operations are linked by External id.
_unlinked AS (
  SELECT DISTINCT g.trace_id, g.file_id, g.rank, g.external_id
  FROM _ev g
  ANTI JOIN (SELECT trace_id, file_id, rank, correlation FROM _host
             WHERE kind IN ('runtime', 'driver') AND correlation IS NOT NULL) r
    ON r.trace_id = g.trace_id AND r.file_id = g.file_id AND r.rank = g.rank AND r.correlation = g.correlation
  WHERE tb_gpu_work(g.kind) AND g.external_id IS NOT NULL
),
-- Operators by External id, for those ids only: n > 1 is ambiguous.
-- Grouping every operator by its External id held most of this query's
-- memory and time where the runtime calls link nearly every operation
-- (×21 vLLM: 470,000 groups, 0.32 s of the query's 0.72 s, and out of
-- DuckDB memory at 128 MB).
_ext AS (
  SELECT h.trace_id, h.file_id, h.rank, h.external_id, min(h.id) AS id, count(*) AS n,
    arg_min(h.ts_ns, h.id) AS ts_ns, arg_min(h.dur_ns, h.id) AS dur_ns, arg_min(h.pid_id, h.id) AS pid_id, arg_min(h.tid_id, h.id) AS tid_id
  FROM _host h
  SEMI JOIN _unlinked u ON u.trace_id = h.trace_id AND u.file_id = h.file_id AND u.rank = h.rank AND u.external_id = h.external_id
  WHERE h.kind = 'cpu_op' AND h.external_id IS NOT NULL
  GROUP BY h.trace_id, h.file_id, h.rank, h.external_id
),
-- Per rank of a file: the GPU operations whose External id copies their
-- correlation id, against those that carry both.
_copies AS (
  SELECT trace_id, file_id, rank,
    count(*) FILTER (WHERE external_id = correlation) AS copies,
    count(*) FILTER (WHERE external_id IS NOT NULL AND correlation IS NOT NULL) AS comparable
  FROM _ev
  WHERE tb_gpu_work(kind)
  GROUP BY trace_id, file_id, rank
),
-- Launching calls whose GPU copy waits for the device (tb_copy_waits): the
-- copy of the same correlation, file and rank, as op rows link them.
_waits AS (
  SELECT l.id, bool_or(g.waits) AS waits
  FROM (SELECT g.trace_id, g.file_id, g.rank, g.correlation, tb_copy_waits(d.strings[g.name_id + 1]) AS waits
        FROM _ev g, tb_dict d WHERE g.kind = 'gpu_memcpy') g
  JOIN _launch l ON l.trace_id = g.trace_id AND l.file_id = g.file_id AND l.rank = g.rank AND l.correlation = g.correlation
  GROUP BY l.id
),
_ops AS (
  SELECT g.trace_id, g.rank, g.tb_rowid + 1 AS id, g.kind, g.api, g.name_id, g.ts_ns, g.dur_ns, g.stream, g.graph_id,
    coalesce(l.id, 0) AS launch_id, x.id AS ext_id, coalesce(x.n, 0) AS ext_n,
    l.ts_ns AS l_ts, l.dur_ns AS l_dur, l.pid_id AS l_pid, l.tid_id AS l_tid,
    x.ts_ns AS x_ts, x.dur_ns AS x_dur, x.pid_id AS x_pid, x.tid_id AS x_tid,
    g.correlation < f.c0 AS before_capture,
    -- External ids that name operators: not copies of correlation ids.
    2 * c.copies <= c.comparable AS ext_names_ops
  FROM _ev g
  LEFT JOIN _launch l ON l.trace_id = g.trace_id AND l.file_id = g.file_id AND l.rank = g.rank AND l.correlation = g.correlation
  LEFT JOIN _ext x ON x.trace_id = g.trace_id AND x.file_id = g.file_id AND x.rank = g.rank AND x.external_id = g.external_id
  LEFT JOIN _first f ON f.trace_id = g.trace_id AND f.file_id = g.file_id AND f.rank = g.rank
  JOIN _copies c ON c.trace_id = g.trace_id AND c.file_id = g.file_id AND c.rank = g.rank
  WHERE tb_gpu_work(g.kind)
),
-- The distinct names of the frames and ops, from tb_strings: DuckDB then
-- sizes this table by tb_strings, not by the events, and joins it to the
-- ops as the small side. kclass: the class the name gives a kernel
-- (tb_kernel_class), tested once per name for the ops' class.
_names AS (
  SELECT id AS name_id, s AS name, tb_kernel_class('kernel', s) AS kclass
  FROM tb_strings
  WHERE id IN (
    SELECT DISTINCT name_id FROM _ev
    WHERE kind IN ('python', 'cpu_op', 'annotation', 'runtime', 'driver') OR tb_gpu_work(kind))
),
-- The threads of the frames, first by their ids (_tids), then by their
-- text (_threads: a missing pid or tid reads as ''), and which thread each
-- pair of ids is (_thmap).
_tids AS (
  SELECT t.*, d.strings[t.trace_id + 1] AS trace,
    CASE WHEN t.pid_id < 0 THEN '' ELSE d.strings[t.pid_id + 1] END AS pid,
    CASE WHEN t.tid_id < 0 THEN '' ELSE d.strings[t.tid_id + 1] END AS tid
  FROM (SELECT trace_id, rank, pid_id, tid_id, min(ts_ns) AS t0, max(end_ns) AS t1
        FROM _host GROUP BY trace_id, rank, pid_id, tid_id) t, tb_dict d
),
_threads AS (
  SELECT trace, rank, pid, tid, t0, t1, row_number() OVER (ORDER BY trace, rank, pid, tid) AS thid
  FROM (SELECT trace, rank, pid, tid, min(t0) AS t0, max(t1) AS t1 FROM _tids GROUP BY trace, rank, pid, tid)
),
_thmap AS (
  SELECT i.trace_id, i.rank, i.pid_id, i.tid_id, th.thid
  FROM _tids i JOIN _threads th ON th.trace = i.trace AND th.rank = i.rank AND th.pid = i.pid AND th.tid = i.tid
),
-- An op's host frame: its launching call, else its operator by External id.
_ophost AS (
  SELECT o.*, d.strings[o.trace_id + 1] AS trace,
    CASE WHEN o.launch_id <> 0 THEN 1 WHEN o.ext_n = 1 AND o.ext_names_ops THEN 2 ELSE 0 END AS host
  FROM _ops o, tb_dict d
)
SELECT 'frame' AS row_kind, CAST(NULL AS VARCHAR) AS trace, CAST(NULL AS INTEGER) AS rank, h.id,
  CAST(0 AS BIGINT) AS parent_id,
  CAST(NULL AS VARCHAR) AS thread,
  h.kind, h.api, CAST(NULL AS VARCHAR) AS name, h.ts_ns, h.dur_ns,
  CAST(NULL AS BIGINT) AS stream, CAST(NULL AS BIGINT) AS graph_id,
  CAST(0 AS BIGINT) AS operator_id, CAST(NULL AS VARCHAR) AS link, CAST(coalesce(st.sid, 0) AS BIGINT) AS call_stack_id,
  CAST(NULL AS VARCHAR) AS class,
  CASE WHEN h.kind = 'cpu_op' AND tb_scalar_read(h.name) THEN 'blocking'
       ELSE tb_sync_call(h.kind, h.api, h.name, coalesce(w.waits, false)) END AS sync,
  CAST(h.name_id + 1 AS BIGINT) AS name_id, CAST(th.thid AS BIGINT) AS thread_id,
  CAST(NULL AS BIGINT) AS host_ts_ns, CAST(NULL AS BIGINT) AS host_dur_ns, CAST(NULL AS BIGINT) AS host_thread_id
-- Every frame has its thread, but an inner join here lets DuckDB estimate
-- the frames as few and build the hash tables of the joins below on them
-- (×21 vLLM: out of memory at 512 MB, where 64 MB do with this LEFT JOIN).
FROM (SELECT h.*, d.strings[h.name_id + 1] AS name FROM _host h, tb_dict d) h
LEFT JOIN _thmap th ON th.trace_id = h.trace_id AND th.rank = h.rank AND th.pid_id = h.pid_id AND th.tid_id = h.tid_id
LEFT JOIN _cs cs ON cs.id = h.id
LEFT JOIN _stacks st ON st.call_stack = cs.call_stack
LEFT JOIN _waits w ON w.id = h.id
UNION ALL
SELECT 'op' AS row_kind, o.trace, o.rank, o.id,
  CAST(o.launch_id AS BIGINT) AS parent_id,
  CAST(NULL AS VARCHAR) AS thread,
  o.kind, o.api, CAST(NULL AS VARCHAR) AS name, o.ts_ns, o.dur_ns, o.stream, o.graph_id,
  CAST(CASE WHEN o.launch_id = 0 AND o.ext_n = 1 AND o.ext_names_ops THEN o.ext_id ELSE 0 END AS BIGINT) AS operator_id,
  CASE
    WHEN o.launch_id <> 0 THEN 'correlation'
    WHEN o.ext_n = 1 AND o.ext_names_ops THEN 'external_id'
    WHEN o.ext_n > 1 AND o.ext_names_ops THEN 'external_id_ambiguous'
    WHEN o.before_capture THEN 'before_capture'
    ELSE 'none'
  END AS link,
  CAST(0 AS BIGINT) AS call_stack_id,
  CASE WHEN o.kind = 'kernel' THEN n.kclass ELSE tb_kernel_class(o.kind, NULL) END AS class,
  CAST(NULL AS VARCHAR) AS sync,
  CAST(o.name_id + 1 AS BIGINT) AS name_id, CAST(NULL AS BIGINT) AS thread_id,
  CAST(CASE o.host WHEN 1 THEN o.l_ts WHEN 2 THEN o.x_ts END AS BIGINT) AS host_ts_ns,
  CAST(CASE o.host WHEN 1 THEN o.l_dur WHEN 2 THEN o.x_dur END AS BIGINT) AS host_dur_ns,
  CAST(th.thid AS BIGINT) AS host_thread_id
FROM _ophost o
LEFT JOIN _names n ON n.name_id = o.name_id
LEFT JOIN _thmap th ON th.trace_id = o.trace_id AND th.rank = o.rank
  AND th.pid_id = CASE o.host WHEN 1 THEN o.l_pid WHEN 2 THEN o.x_pid END AND th.tid_id = CASE o.host WHEN 1 THEN o.l_tid WHEN 2 THEN o.x_tid END
UNION ALL
SELECT 'origin' AS row_kind, trace, CAST(NULL AS INTEGER) AS rank, CAST(0 AS BIGINT) AS id,
  CAST(0 AS BIGINT) AS parent_id, CAST(NULL AS VARCHAR) AS thread,
  CAST(NULL AS VARCHAR) AS kind, CAST(NULL AS VARCHAR) AS api, CAST(NULL AS VARCHAR) AS name,
  t0 AS ts_ns, CAST(0 AS BIGINT) AS dur_ns, CAST(NULL AS BIGINT) AS stream, CAST(NULL AS BIGINT) AS graph_id,
  CAST(0 AS BIGINT) AS operator_id, CAST(NULL AS VARCHAR) AS link, CAST(0 AS BIGINT) AS call_stack_id,
  CAST(NULL AS VARCHAR) AS class, CAST(NULL AS VARCHAR) AS sync,
  CAST(NULL AS BIGINT) AS name_id, CAST(NULL AS BIGINT) AS thread_id,
  CAST(NULL AS BIGINT) AS host_ts_ns, CAST(NULL AS BIGINT) AS host_dur_ns, CAST(NULL AS BIGINT) AS host_thread_id
FROM _t0
UNION ALL
SELECT 'stack' AS row_kind, CAST(NULL AS VARCHAR) AS trace, CAST(NULL AS INTEGER) AS rank, CAST(sid AS BIGINT) AS id,
  CAST(0 AS BIGINT) AS parent_id, CAST(NULL AS VARCHAR) AS thread,
  CAST(NULL AS VARCHAR) AS kind, CAST(NULL AS VARCHAR) AS api, call_stack AS name,
  CAST(NULL AS BIGINT) AS ts_ns, CAST(0 AS BIGINT) AS dur_ns, CAST(NULL AS BIGINT) AS stream, CAST(NULL AS BIGINT) AS graph_id,
  CAST(0 AS BIGINT) AS operator_id, CAST(NULL AS VARCHAR) AS link, CAST(0 AS BIGINT) AS call_stack_id,
  CAST(NULL AS VARCHAR) AS class, CAST(NULL AS VARCHAR) AS sync,
  CAST(NULL AS BIGINT) AS name_id, CAST(NULL AS BIGINT) AS thread_id,
  CAST(NULL AS BIGINT) AS host_ts_ns, CAST(NULL AS BIGINT) AS host_dur_ns, CAST(NULL AS BIGINT) AS host_thread_id
FROM _stacks
UNION ALL
SELECT 'name' AS row_kind, CAST(NULL AS VARCHAR) AS trace, CAST(NULL AS INTEGER) AS rank, CAST(name_id + 1 AS BIGINT) AS id,
  CAST(0 AS BIGINT) AS parent_id, CAST(NULL AS VARCHAR) AS thread,
  CAST(NULL AS VARCHAR) AS kind, CAST(NULL AS VARCHAR) AS api, name,
  CAST(NULL AS BIGINT) AS ts_ns, CAST(0 AS BIGINT) AS dur_ns, CAST(NULL AS BIGINT) AS stream, CAST(NULL AS BIGINT) AS graph_id,
  CAST(0 AS BIGINT) AS operator_id, CAST(NULL AS VARCHAR) AS link, CAST(0 AS BIGINT) AS call_stack_id,
  CAST(NULL AS VARCHAR) AS class, CAST(NULL AS VARCHAR) AS sync,
  CAST(NULL AS BIGINT) AS name_id, CAST(NULL AS BIGINT) AS thread_id,
  CAST(NULL AS BIGINT) AS host_ts_ns, CAST(NULL AS BIGINT) AS host_dur_ns, CAST(NULL AS BIGINT) AS host_thread_id
FROM _names
UNION ALL
SELECT 'thread' AS row_kind, trace, rank, CAST(thid AS BIGINT) AS id,
  CAST(0 AS BIGINT) AS parent_id, pid || '/' || tid AS thread,
  CAST(NULL AS VARCHAR) AS kind, CAST(NULL AS VARCHAR) AS api, CAST(NULL AS VARCHAR) AS name,
  t0 AS ts_ns, t1 - t0 AS dur_ns, CAST(NULL AS BIGINT) AS stream, CAST(NULL AS BIGINT) AS graph_id,
  CAST(0 AS BIGINT) AS operator_id, CAST(NULL AS VARCHAR) AS link, CAST(0 AS BIGINT) AS call_stack_id,
  CAST(NULL AS VARCHAR) AS class, CAST(NULL AS VARCHAR) AS sync,
  CAST(NULL AS BIGINT) AS name_id, CAST(NULL AS BIGINT) AS thread_id,
  CAST(NULL AS BIGINT) AS host_ts_ns, CAST(NULL AS BIGINT) AS host_dur_ns, CAST(NULL AS BIGINT) AS host_thread_id
FROM _threads
UNION ALL
SELECT 'engine' AS row_kind, CAST(NULL AS VARCHAR) AS trace, CAST(NULL AS INTEGER) AS rank, CAST(0 AS BIGINT) AS id,
  CAST(0 AS BIGINT) AS parent_id, CAST(NULL AS VARCHAR) AS thread,
  CAST(NULL AS VARCHAR) AS kind, CAST(NULL AS VARCHAR) AS api, CAST(NULL AS VARCHAR) AS name,
  h.ts_ns, h.dur_ns, CAST(NULL AS BIGINT) AS stream, CAST(NULL AS BIGINT) AS graph_id,
  CAST(0 AS BIGINT) AS operator_id, CAST(NULL AS VARCHAR) AS link, CAST(0 AS BIGINT) AS call_stack_id,
  CAST(NULL AS VARCHAR) AS class, CAST(NULL AS VARCHAR) AS sync,
  CAST(NULL AS BIGINT) AS name_id, CAST(th.thid AS BIGINT) AS thread_id,
  CAST(NULL AS BIGINT) AS host_ts_ns, CAST(NULL AS BIGINT) AS host_dur_ns, CAST(NULL AS BIGINT) AS host_thread_id
FROM _host h
JOIN _thmap th ON th.trace_id = h.trace_id AND th.rank = h.rank AND th.pid_id = h.pid_id AND th.tid_id = h.tid_id
WHERE h.kind = 'cpu_op'
  AND h.name_id IN (SELECT id FROM tb_strings WHERE tb_backward_op('cpu_op', s) OR tb_ddp_reducer_op(s))
