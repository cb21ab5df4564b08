-- overview: what each loaded rank holds: events, span, devices, streams, steps, producer, platform and capture settings.
-- INCLUDE: (none)
--
-- One row per (trace, rank). Counts honour the filter (window included);
-- metadata columns come from the traces table. Capture settings say what
-- evidence the trace can show: no cuda_sync events means GPU-side waits are
-- invisible, no python stacks means no python frames in the cross-view,
-- graphs mean per-kernel CPU attribution is lost for replayed kernels.
--
-- Columns:
-- trace: Trace name. TEXT
-- rank: Rank. INT
-- files: Files loaded for this rank. COUNT
-- rank_source: merged_prefix, filename, distributed_info, override or default. TEXT
-- world_size: World size from distributedInfo (NULL when absent). INT
-- producer: training, vllm, sglang or unknown. TEXT
-- platform: cuda, rocm, mtia, cpu or unknown. TEXT
-- gpu_model: GPU model (NULL when the trace does not name it). TEXT
-- gpu_total_mem: Device memory. BYTES
-- format: kineto, kineto_2021 or legacy. TEXT
-- has_graphs: CUDA/HIP graph launches present. BOOL
-- has_sync_events: cuda_sync GPU events captured. BOOL
-- has_python_stacks: python_function events captured. BOOL
-- events: Events in the filter. COUNT
-- first_ns: First event start, from the trace's first event. TIMESTAMP_NS
-- span_ns: Last end minus first start. DURATION_NS
-- gpu_events: Kernels, copies, memsets and GPU sync events. COUNT
-- kernels: Kernels. COUNT
-- devices: Distinct GPU devices. COUNT
-- streams: Distinct GPU streams. COUNT
-- cpu_ops: CPU operators. COUNT
-- python_events: python_function events. COUNT
-- runtime_calls: Runtime and driver calls. COUNT
-- graph_launches: cudaGraphLaunch/hipGraphLaunch calls. COUNT
-- steps: Steps found. COUNT
-- step_source: Annotation family of the steps ('' when none). TEXT
-- KEYED: false
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
    WHERE false
  ) x
  ASOF LEFT JOIN _steps s ON s.trace = x.trace AND s.rank = x.rank AND x.host_ts >= s.ts_ns
),
_tr AS (
  SELECT trace, rank, count(*) AS files, any_value(rank_source ORDER BY file_id) AS rank_source,
    max(world_size) AS world_size, any_value(producer ORDER BY file_id) AS producer,
    any_value(platform ORDER BY file_id) AS platform, max(gpu_model) AS gpu_model, max(gpu_total_mem) AS gpu_total_mem,
    any_value(format ORDER BY file_id) AS format, bool_or(has_graphs) AS has_graphs,
    bool_or(has_sync_events) AS has_sync_events, bool_or(has_python_stacks) AS has_python_stacks
  FROM traces
  WHERE ($1::VARCHAR = '' OR trace = $1::VARCHAR) AND ($2::INTEGER < 0 OR rank = $2::INTEGER)
  GROUP BY ALL
),
_ea AS (
  SELECT e.trace, e.rank, count(*) AS events, min(e.ts_ns) - any_value(t.t0) AS first_ns,
    max(e.end_ns) - min(e.ts_ns) AS span_ns,
    count(*) FILTER (WHERE e.kind IN ('kernel', 'gpu_memcpy', 'gpu_memset', 'gpu_sync')) AS gpu_events,
    count(*) FILTER (WHERE e.kind = 'kernel') AS kernels,
    count(DISTINCT e.device) FILTER (WHERE e.kind IN ('kernel', 'gpu_memcpy', 'gpu_memset')) AS devices,
    count(DISTINCT e.stream) FILTER (WHERE e.kind IN ('kernel', 'gpu_memcpy', 'gpu_memset')) AS streams,
    count(*) FILTER (WHERE e.kind = 'cpu_op') AS cpu_ops,
    count(*) FILTER (WHERE e.kind = 'python') AS python_events,
    count(*) FILTER (WHERE e.kind IN ('runtime', 'driver')) AS runtime_calls,
    count(*) FILTER (WHERE e.kind IN ('runtime', 'driver') AND (e.api = 'graph_launch' OR e.name IN ('cudaGraphLaunch', 'hipGraphLaunch'))) AS graph_launches
  FROM _ev e JOIN _t0 t ON t.trace = e.trace
  WHERE e.kind NOT IN ('flow', 'counter')
  GROUP BY e.trace, e.rank
),
_sc AS (
  SELECT trace, rank, count(*) AS steps, any_value(source) AS step_source FROM _steps GROUP BY ALL
)
SELECT r.trace, r.rank, r.files, r.rank_source, r.world_size, r.producer, r.platform, r.gpu_model, r.gpu_total_mem,
  r.format, r.has_graphs, r.has_sync_events, r.has_python_stacks,
  coalesce(a.events, 0) AS events, a.first_ns, coalesce(a.span_ns, 0) AS span_ns,
  coalesce(a.gpu_events, 0) AS gpu_events, coalesce(a.kernels, 0) AS kernels, coalesce(a.devices, 0) AS devices,
  coalesce(a.streams, 0) AS streams, coalesce(a.cpu_ops, 0) AS cpu_ops, coalesce(a.python_events, 0) AS python_events,
  coalesce(a.runtime_calls, 0) AS runtime_calls, coalesce(a.graph_launches, 0) AS graph_launches,
  coalesce(s.steps, 0) AS steps, coalesce(s.step_source, '') AS step_source
FROM _tr r LEFT JOIN _ea a ON a.trace = r.trace AND a.rank = r.rank
LEFT JOIN _sc s ON s.trace = r.trace AND s.rank = r.rank
ORDER BY trace, rank
