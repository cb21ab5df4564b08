-- ops: CPU operators: inclusive and self time, launches, and the GPU time they caused, keyed by (trace, rank, step, phase, name).
-- INCLUDE: (none)
--
-- Operators are cpu_op events (aten::*, record_param_comms, vllm::*, …) and
-- user annotations (ProfilerStep#N, enumerate(DataLoader)#…, execute_*).
-- Self time is the inclusive time minus that of the direct child operators
-- on the same thread (nesting by time containment: the innermost enclosing
-- operator is the parent: a sweep gives each operator its depth (+1 at
-- each start, -1 at each end, ends first at equal times), and the parent is
-- the last earlier-starting operator of the thread one level up, found by
-- an ASOF join). Launches are the runtime/driver calls whose
-- External id is the operator's, and GPU time the GPU events sharing those
-- calls' correlation: the GPU work the operator itself launched (Kineto
-- links a launch to its innermost operator), not its children's.
--
-- Columns:
-- trace: Trace name. TEXT
-- rank: Rank. INT
-- step: Step number (-1 outside every step). INT
-- phase: Phase of the step. TEXT
-- name: Operator name. TEXT
-- count: Calls. COUNT
-- incl_ns: Sum of inclusive durations. DURATION_NS
-- self_ns: Sum of self durations. DURATION_NS
-- max_ns: Longest call. DURATION_NS
-- launches: Runtime/driver calls linked to the operator. COUNT
-- gpu_events: GPU events those calls produced. COUNT
-- gpu_ns: Sum of those GPU events' durations. DURATION_NS
-- KEYED: e.kind IN ('cpu_op', 'annotation')
--
-- PARAMS: $1 trace (TEXT, '' = every trace), $2 rank (INT, -1 = every rank),
--   $3 window start and $4 window end (DURATION_NS from the trace's first event,
--   0 = open): an event is kept when its start lies in the window.
--
-- Steps: one annotation family per (trace, rank), the first present of: vLLM
-- execute_* (execute_context_N(T)_generation_N(T), execute_N_context_N(sq…)
-- _generation_N(sq…), execute_new_N_cached_N), SGLang step[KIND bs=N toks=N],
-- ProfilerStep#N, and failing those the python frames of vLLM's
-- gpu_model_runner execute_model (a hypothesis: phase unknown). An event
-- belongs to the step whose host interval holds its host time: its own start
-- for host events, the start of the runtime call with the same correlation for
-- GPU events (graph replays take the cudaGraphLaunch's). Outside every step:
-- step -1, phase ''.
WITH
_t0 AS (
  SELECT trace, min(first_ts_ns) AS t0 FROM traces GROUP BY trace
),
_ev AS NOT MATERIALIZED (
  SELECT e.trace, e.rank, e.pid, e.tid, e.kind, e.api, e.name, e.ts_ns, e.dur_ns, e.end_ns,
    e.correlation, e.external_id, e.stream, e.device, e.bytes, e.graph_id
  FROM events e JOIN _t0 ON _t0.trace = e.trace
  WHERE ($1::VARCHAR = '' OR e.trace = $1::VARCHAR)
    AND ($2::INTEGER < 0 OR e.rank = $2::INTEGER)
    AND ($3::BIGINT <= 0 OR e.ts_ns - _t0.t0 >= $3::BIGINT)
    AND ($4::BIGINT <= 0 OR e.ts_ns - _t0.t0 < $4::BIGINT)
),
_ann AS (
  SELECT trace, rank, ts_ns, end_ns, name,
    CASE
      WHEN regexp_matches(name, '^execute_(\d+_)?context_\d+\(') OR regexp_matches(name, '^execute_new_\d+_cached_\d+') THEN 1
      WHEN regexp_matches(name, '^step\[[A-Z]+') THEN 2
      WHEN regexp_matches(name, '^ProfilerStep#\d+$') THEN 3
      WHEN kind = 'python' AND regexp_matches(name, 'gpu_model_runner\.py\(\d+\): execute_model$') THEN 4
    END AS prio
  FROM _ev
  WHERE dur_ns > 0 AND (
    (kind IN ('annotation', 'cpu_op') AND (starts_with(name, 'execute_') OR starts_with(name, 'step[') OR starts_with(name, 'ProfilerStep#')))
    OR (kind = 'python' AND ends_with(name, ': execute_model')))
),
_fam AS (
  SELECT trace, rank, min(prio) AS prio FROM _ann WHERE prio IS NOT NULL GROUP BY trace, rank
),
_steps0 AS (
  SELECT a.trace, a.rank, a.ts_ns, a.end_ns, a.name, a.prio,
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
  FROM _ann a JOIN _fam f ON f.trace = a.trace AND f.rank = a.rank AND f.prio = a.prio
),
_steps AS (
  SELECT *,
    CASE
      WHEN prio = 3 THEN 'train'
      WHEN prio = 4 THEN 'unknown'
      WHEN regexp_matches(name, '^step\[MIXED') THEN 'mixed'
      WHEN regexp_matches(name, '^step\[IDLE') THEN 'idle'
      WHEN coalesce(ctx_req, 0) > 0 AND coalesce(gen_req, 0) > 0 THEN 'mixed'
      WHEN coalesce(ctx_req, 0) > 0 THEN 'prefill'
      WHEN coalesce(gen_req, 0) > 0 THEN 'decode'
      ELSE 'idle'
    END AS phase,
    CASE prio WHEN 1 THEN CASE WHEN starts_with(name, 'execute_new_') THEN 'vllm_new_cached' ELSE 'vllm_tokens' END
      WHEN 2 THEN 'sglang' WHEN 3 THEN 'profiler_step' ELSE 'python_execute_model' END AS source,
    prio = 4 OR starts_with(name, 'execute_new_') AS hypothesis
  FROM _steps0
),
_host AS (
  SELECT trace, rank, correlation, min(ts_ns) AS host_ts
  FROM _ev WHERE kind IN ('runtime', 'driver') AND correlation IS NOT NULL
  GROUP BY trace, rank, correlation
),
_keyed AS (
  SELECT x.*,
    CASE WHEN s.step IS NOT NULL AND x.host_ts < s.end_ns THEN s.step ELSE -1 END AS step,
    CASE WHEN s.step IS NOT NULL AND x.host_ts < s.end_ns THEN s.phase ELSE '' END AS phase
  FROM (
    SELECT e.*,
      CASE WHEN e.kind IN ('kernel', 'gpu_memcpy', 'gpu_memset', 'gpu_sync', 'gpu_annotation')
        THEN coalesce(h.host_ts, e.ts_ns) ELSE e.ts_ns END AS host_ts
    FROM _ev e LEFT JOIN _host h ON h.trace = e.trace AND h.rank = e.rank AND h.correlation = e.correlation
    WHERE e.kind IN ('cpu_op', 'annotation')
  ) x
  ASOF LEFT JOIN _steps s ON s.trace = x.trace AND s.rank = x.rank AND x.host_ts >= s.ts_ns
),
_o AS (
  SELECT k.trace, k.rank, k.step, k.phase, k.name, k.ts_ns, k.end_ns, k.dur_ns, k.external_id,
    row_number() OVER (ORDER BY k.trace, k.rank, k.pid, k.tid, k.ts_ns, k.end_ns DESC, k.name) AS id,
    dense_rank() OVER (ORDER BY k.trace, k.rank, k.pid, k.tid) AS th
  FROM _keyed k
),
_pt AS (
  SELECT id, th, ts_ns AS t, 1 AS typ, 1 AS d FROM _o
  UNION ALL
  SELECT id, th, end_ns, 0, -1 FROM _o
),
_dep AS (
  SELECT id, th, sum(d) OVER (PARTITION BY th ORDER BY t, typ, id ROWS UNBOUNDED PRECEDING) - 1 AS depth
  FROM _pt QUALIFY typ = 1
),
_anc AS (
  SELECT c.id AS cid, p.id AS pid
  FROM _dep c ASOF JOIN _dep p ON p.th = c.th AND p.depth = c.depth - 1 AND c.id > p.id
),
_child AS (
  SELECT a.pid AS id, sum(o.dur_ns) AS child_ns FROM _anc a JOIN _o o ON o.id = a.cid GROUP BY a.pid
),
_gpu AS (
  SELECT trace, rank, correlation, count(*) AS n, sum(dur_ns) AS d
  FROM _ev WHERE kind IN ('kernel', 'gpu_memcpy', 'gpu_memset') AND correlation IS NOT NULL GROUP BY ALL
),
_l AS (
  SELECT r.trace, r.rank, r.external_id, count(*) AS launches, sum(coalesce(g.n, 0)) AS n, sum(coalesce(g.d, 0)) AS d
  FROM _ev r LEFT JOIN _gpu g ON g.trace = r.trace AND g.rank = r.rank AND g.correlation = r.correlation
  WHERE r.kind IN ('runtime', 'driver') AND r.external_id IS NOT NULL
    AND (r.api IN ('launch', 'graph_launch', 'memcpy', 'memset') OR g.n IS NOT NULL)
  GROUP BY ALL
)
SELECT o.trace, o.rank, o.step, o.phase, o.name,
  count(*) AS count,
  CAST(sum(o.dur_ns) AS BIGINT) AS incl_ns,
  CAST(sum(greatest(0, o.dur_ns - coalesce(c.child_ns, 0))) AS BIGINT) AS self_ns,
  max(o.dur_ns) AS max_ns,
  CAST(coalesce(sum(l.launches), 0) AS BIGINT) AS launches,
  CAST(coalesce(sum(l.n), 0) AS BIGINT) AS gpu_events,
  CAST(coalesce(sum(l.d), 0) AS BIGINT) AS gpu_ns
FROM _o o LEFT JOIN _child c ON c.id = o.id
LEFT JOIN _l l ON l.trace = o.trace AND l.rank = o.rank AND l.external_id = o.external_id
GROUP BY ALL
ORDER BY trace, rank, step, phase, self_ns DESC, name
