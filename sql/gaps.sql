-- gaps: GPU idle intervals per stream, split the HTA way into host wait, kernel wait and other, keyed by (trace, rank, step, phase, stream).
-- INCLUDE: (none)
--
-- HTA's idle time breakdown: on each stream, GPU events (kernels, memcpy,
-- memset; cuda_sync rows excluded as HTA does) sorted by start; the idle
-- interval before an event is its start minus the previous event's end.
-- Categories: host_wait when the event's launching call started after the previous event
-- ended (the CPU did not enqueue in time); kernel_wait: otherwise, and the
-- interval is under 30 us (HTA's consecutive_kernel_delay, which HTA compares
-- against microsecond timestamps); other: the rest (cross-stream waits,
-- launch delays). Each row also keeps a log-bucket histogram (see
-- kernels.sql) and the longest interval with its start, so that other
-- cutoffs, percentiles and the longest gaps survive a merge. An interval
-- belongs to the step of the event that ends it. Device-level idle time
-- (all streams together) is ranks.idle_ns.
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
-- KEYED: e.kind IN ('kernel', 'gpu_memcpy', 'gpu_memset')
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
    WHERE e.kind IN ('kernel', 'gpu_memcpy', 'gpu_memset')
  ) x
  ASOF LEFT JOIN _steps s ON s.trace = x.trace AND s.rank = x.rank AND x.host_ts >= s.ts_ns
),
_w AS (
  SELECT trace, rank, step, phase, coalesce(stream, -1) AS stream, ts_ns, host_ts,
    lag(end_ns) OVER (PARTITION BY trace, rank, coalesce(stream, -1) ORDER BY ts_ns, end_ns, correlation, name) AS prev_end
  FROM _keyed
),
_i AS (
  SELECT w.trace, w.rank, w.step, w.phase, w.stream, w.ts_ns - w.prev_end AS len, w.prev_end - t.t0 AS at_ns,
    CASE WHEN w.host_ts > w.prev_end THEN 'host_wait'
         WHEN w.ts_ns - w.prev_end < 30000 THEN 'kernel_wait'
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
  string_agg(b || ':' || n, ' ' ORDER BY b) AS hist
FROM _b GROUP BY ALL
ORDER BY trace, rank, step, phase, stream, category
