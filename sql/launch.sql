-- launch: kernel launches: host call time, launch delay, short kernels and outliers, keyed by (trace, rank, step, phase, stream, call).
-- INCLUDE: (none)
--
-- Every runtime/driver launch (kernel launches, cudaMemcpyAsync and
-- cudaMemsetAsync as HTA's launch stats, cudaGraphLaunch separately) joined
-- to its GPU op by correlation. delay = GPU start - call start (the brief's
-- definition, queue time included); hta_delay = max(0, GPU start - call end)
-- (HTA's launch_delay). short: HTA's short GPU kernel, cpu_dur <= 50 us and
-- gpu_dur < cpu_dur; runtime_outliers: cpu_dur > 50 us; delay_outliers:
-- hta_delay > 100 us (HTA's default cutoffs, runtime_cutoff=50,
-- launch_delay_cutoff=100). Histograms (see kernels.sql) let other cutoffs be
-- applied after a merge. A graph launch counts once, with the sum of its
-- kernels' GPU time and the delay to its first kernel.
--
-- Columns:
-- trace: Trace name. TEXT
-- rank: Rank. INT
-- step: Step number (-1 outside every step). INT
-- phase: Phase of the step. TEXT
-- stream: GPU stream of the launched work (-1 when none was recorded). INT
-- call: Runtime or driver call name. TEXT
-- launches: Calls. COUNT
-- with_gpu: Calls whose GPU work is in the trace. COUNT
-- cpu_ns: Sum of call durations. DURATION_NS
-- gpu_ns: Sum of the launched GPU durations. DURATION_NS
-- delay_ns: Sum of GPU start - call start. DURATION_NS
-- hta_delay_ns: Sum of max(0, GPU start - call end). DURATION_NS
-- short: Short GPU kernels (cpu_dur <= 50 us and gpu_dur < cpu_dur). COUNT
-- short_cpu_ns: Call time spent launching those short kernels. DURATION_NS
-- runtime_outliers: Calls longer than 50 us. COUNT
-- delay_outliers: Launches with hta_delay over 100 us. COUNT
-- cpu_hist: Log-bucket histogram of call durations. HIST
-- delay_hist: Log-bucket histogram of delay. HIST
-- KEYED: e.kind IN ('runtime', 'driver')
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
    WHERE e.kind IN ('runtime', 'driver')
  ) x
  ASOF LEFT JOIN _steps s ON s.trace = x.trace AND s.rank = x.rank AND x.host_ts >= s.ts_ns
),
_gpu AS (
  SELECT trace, rank, correlation, min(ts_ns) AS g_ts, sum(dur_ns) AS g_dur, any_value(stream) AS stream
  FROM _ev WHERE kind IN ('kernel', 'gpu_memcpy', 'gpu_memset') AND correlation IS NOT NULL
  GROUP BY ALL
),
_l AS (
  SELECT k.trace, k.rank, k.step, k.phase, coalesce(g.stream, -1) AS stream, k.name AS call, k.dur_ns AS cpu,
    g.g_ts IS NOT NULL AS has_gpu, coalesce(g.g_dur, 0) AS gpu,
    CASE WHEN g.g_ts IS NULL THEN 0 ELSE greatest(0, g.g_ts - k.ts_ns) END AS delay,
    CASE WHEN g.g_ts IS NULL THEN 0 ELSE greatest(0, g.g_ts - k.end_ns) END AS hdelay
  FROM _keyed k LEFT JOIN _gpu g ON g.trace = k.trace AND g.rank = k.rank AND g.correlation = k.correlation
  WHERE k.api IN ('launch', 'graph_launch')
     OR k.name IN ('cudaLaunchKernel', 'cudaLaunchKernelExC', 'cuLaunchKernel', 'cuLaunchKernelEx', 'hipLaunchKernel',
                   'hipExtModuleLaunchKernel', 'hipModuleLaunchKernel', 'cudaGraphLaunch', 'hipGraphLaunch',
                   'cudaMemcpyAsync', 'cudaMemsetAsync', 'hipMemcpyAsync', 'hipMemsetAsync', 'hipMemcpyWithStream')
),
_h AS (
  SELECT trace, rank, step, phase, stream, call, 'cpu' AS which, CAST(floor(8 * log2(greatest(cpu, 1))) AS INTEGER) AS b, count(*) AS n
  FROM _l GROUP BY ALL
  UNION ALL
  SELECT trace, rank, step, phase, stream, call, 'delay', CAST(floor(8 * log2(greatest(delay, 1))) AS INTEGER), count(*)
  FROM _l WHERE has_gpu GROUP BY ALL
),
_hs AS (
  SELECT trace, rank, step, phase, stream, call,
    string_agg(b || ':' || n, ' ' ORDER BY b) FILTER (WHERE which = 'cpu') AS cpu_hist,
    string_agg(b || ':' || n, ' ' ORDER BY b) FILTER (WHERE which = 'delay') AS delay_hist
  FROM _h GROUP BY ALL
),
_a AS (
  SELECT trace, rank, step, phase, stream, call,
    count(*) AS launches,
    count(*) FILTER (WHERE has_gpu) AS with_gpu,
    CAST(sum(cpu) AS BIGINT) AS cpu_ns,
    CAST(sum(gpu) AS BIGINT) AS gpu_ns,
    CAST(sum(delay) AS BIGINT) AS delay_ns,
    CAST(sum(hdelay) AS BIGINT) AS hta_delay_ns,
    count(*) FILTER (WHERE has_gpu AND cpu <= 50000 AND gpu < cpu) AS short,
    CAST(coalesce(sum(cpu) FILTER (WHERE has_gpu AND cpu <= 50000 AND gpu < cpu), 0) AS BIGINT) AS short_cpu_ns,
    count(*) FILTER (WHERE cpu > 50000) AS runtime_outliers,
    count(*) FILTER (WHERE hdelay > 100000) AS delay_outliers
  FROM _l GROUP BY ALL
)
SELECT a.*, coalesce(h.cpu_hist, '') AS cpu_hist, coalesce(h.delay_hist, '') AS delay_hist
FROM _a a JOIN _hs h USING (trace, rank, step, phase, stream, call)
ORDER BY trace, rank, step, phase, stream, call
