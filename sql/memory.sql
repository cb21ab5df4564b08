-- memory: allocator activity from [memory] instant events, peak allocated and reserved memory against the device's total, and cudaFree/hipFree calls, keyed by step.
-- INCLUDE: (none)
--
-- [memory] events exist only with profile_memory=True; without them the
-- area is empty and the bundle records an evidence gap. Peaks are the largest
-- "Total Allocated" / "Total Reserved" seen (mergeable with max). total_mem is
-- deviceProperties' totalGlobalMem of the rank (NULL where the trace does not
-- say). cudaFree/hipFree synchronise the device; their rows count the calls
-- (device -1).
--
-- Columns:
-- trace: Trace name. TEXT
-- rank: Rank. INT
-- step: Step number (-1 outside every step). INT
-- phase: Phase of the step. TEXT
-- device: Device id of the allocator events (-1 for the free-call rows and CPU). INT
-- allocs: Allocations (positive Bytes). COUNT
-- frees: Frees (negative Bytes). COUNT
-- alloc_bytes: Bytes allocated. BYTES
-- freed_bytes: Bytes freed. BYTES
-- peak_allocated: Largest Total Allocated. BYTES
-- peak_reserved: Largest Total Reserved. BYTES
-- total_mem: Device memory from deviceProperties. BYTES
-- free_calls: cudaFree/hipFree calls. COUNT
-- free_ns: Time in those calls. DURATION_NS
-- KEYED: (e.kind IN ('instant', 'other') AND e.name = '[memory]') OR (e.kind IN ('runtime', 'driver') AND e.name IN ('cudaFree', 'hipFree', 'cudaFreeHost', 'hipHostFree', 'cuMemFree', 'cuMemFree_v2'))
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
    e.correlation, e.external_id, e.stream, e.device, e.bytes, e.graph_id, e.args
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
    WHERE (e.kind IN ('instant', 'other') AND e.name = '[memory]') OR (e.kind IN ('runtime', 'driver') AND e.name IN ('cudaFree', 'hipFree', 'cudaFreeHost', 'hipHostFree', 'cuMemFree', 'cuMemFree_v2'))
  ) x
  ASOF LEFT JOIN _steps s ON s.trace = x.trace AND s.rank = x.rank AND x.host_ts >= s.ts_ns
),
_m AS (
  SELECT trace, rank, step, phase, name, dur_ns,
    coalesce(TRY_CAST(json_extract_string(args, '$."Device Type"') AS INTEGER), 1) AS dev_type,
    coalesce(device, TRY_CAST(json_extract_string(args, '$."Device Id"') AS BIGINT), -1) AS dev,
    coalesce(bytes, TRY_CAST(json_extract_string(args, '$.Bytes') AS BIGINT), 0) AS b,
    TRY_CAST(json_extract_string(args, '$."Total Allocated"') AS BIGINT) AS ta,
    TRY_CAST(json_extract_string(args, '$."Total Reserved"') AS BIGINT) AS tr
  FROM _keyed
),
_tm AS (
  SELECT trace, rank, max(gpu_total_mem) AS total_mem FROM traces GROUP BY ALL
)
SELECT m.trace, m.rank, m.step, m.phase,
  CASE WHEN m.name = '[memory]' AND m.dev_type <> 0 THEN m.dev ELSE -1 END AS device,
  count(*) FILTER (WHERE m.name = '[memory]' AND m.b > 0) AS allocs,
  count(*) FILTER (WHERE m.name = '[memory]' AND m.b < 0) AS frees,
  CAST(coalesce(sum(m.b) FILTER (WHERE m.name = '[memory]' AND m.b > 0), 0) AS BIGINT) AS alloc_bytes,
  CAST(coalesce(-sum(m.b) FILTER (WHERE m.name = '[memory]' AND m.b < 0), 0) AS BIGINT) AS freed_bytes,
  max(m.ta) AS peak_allocated,
  max(m.tr) AS peak_reserved,
  any_value(t.total_mem) AS total_mem,
  count(*) FILTER (WHERE m.name <> '[memory]') AS free_calls,
  CAST(coalesce(sum(m.dur_ns) FILTER (WHERE m.name <> '[memory]'), 0) AS BIGINT) AS free_ns
FROM _m m LEFT JOIN _tm t ON t.trace = m.trace AND t.rank = m.rank
GROUP BY ALL
ORDER BY trace, rank, step, phase, device
