-- ranks: GPU busy, compute, communication, memory and idle time of every rank, keyed by step.
-- INCLUDE: (none)
--
-- HTA's temporal breakdown, made mergeable. GPU events are kernels,
-- gpu_memcpy, gpu_memset and gpu_sync rows. busy is the length of the union
-- of their intervals on the rank; idle is HTA's idle time: the rank's GPU
-- span (first start to last end) minus busy. Both are summed from per-event
-- contributions (max-end-so-far over events in start order: an event adds the
-- part of itself past every earlier end, and the gap before it), so summing a
-- column over every row of a rank gives the exact rank value, and a step's
-- rows hold the busy time its events added and the gaps they closed.
-- Classes: COMM = NCCL/RCCL/HCCL kernels, vLLM cross_device_reduce, DeepEP;
-- MEM = memcpy/memset; COMP = other kernels. Unlike HTA, a CPU operator that
-- carries a stream arg is not GPU time.
--
-- Columns:
-- trace: Trace name. TEXT
-- rank: Rank. INT
-- step: Step number (-1 outside every step). INT
-- phase: Phase of the step: prefill, decode, mixed, idle, train, unknown or ''. TEXT
-- events: GPU events launched in this step. COUNT
-- first_ns: Start of the first GPU event, from the trace's first event. TIMESTAMP_NS
-- last_ns: End of the last GPU event, from the trace's first event. TIMESTAMP_NS
-- busy_ns: Union of all GPU event intervals (contributions). DURATION_NS
-- idle_ns: GPU idle time inside the rank's GPU span (gaps closed by this step's events). DURATION_NS
-- compute_ns: Union of COMP kernel intervals (contributions). DURATION_NS
-- comm_ns: Union of COMM kernel intervals (contributions). DURATION_NS
-- mem_ns: Union of memcpy/memset intervals (contributions). DURATION_NS
-- comm_comp_ns: Union of COMM and COMP intervals together (contributions). DURATION_NS
-- kernel_ns: Sum of GPU event durations (overlaps counted twice). DURATION_NS
-- step_ns: Host wall time of the step (0 for step -1). DURATION_NS
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
    WHERE e.kind IN ('kernel', 'gpu_memcpy', 'gpu_memset', 'gpu_sync')
  ) x
  ASOF LEFT JOIN _steps s ON s.trace = x.trace AND s.rank = x.rank AND x.host_ts >= s.ts_ns
),
_g AS (
  SELECT trace, rank, step, phase, ts_ns, end_ns, kind, name, stream, correlation,
    CASE WHEN kind IN ('gpu_memcpy', 'gpu_memset') THEN 'MEM'
         WHEN kind = 'gpu_sync' THEN 'SYNC'
         WHEN regexp_matches(name, '^(nccl|rccl|hccl)|ncclDevKernel|ncclKernel|cross_device_reduce|deep_ep::|dpsk::ep::', 'i') THEN 'COMM'
         ELSE 'COMP' END AS class
  FROM _keyed
),
_w AS (
  SELECT *,
    max(end_ns) OVER (PARTITION BY trace, rank ORDER BY ts_ns, end_ns, stream, correlation, name
      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS pm_all,
    max(end_ns) OVER (PARTITION BY trace, rank, class ORDER BY ts_ns, end_ns, stream, correlation, name
      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS pm_cls,
    max(end_ns) OVER (PARTITION BY trace, rank, class IN ('COMM', 'COMP') ORDER BY ts_ns, end_ns, stream, correlation, name
      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS pm_cc
  FROM _g
),
_c AS (
  SELECT trace, rank, step, phase, class, ts_ns, end_ns,
    greatest(0, end_ns - greatest(ts_ns, coalesce(pm_all, ts_ns))) AS busy,
    CASE WHEN pm_all IS NULL THEN 0 ELSE greatest(0, ts_ns - pm_all) END AS gap,
    greatest(0, end_ns - greatest(ts_ns, coalesce(pm_cls, ts_ns))) AS cls,
    greatest(0, end_ns - greatest(ts_ns, coalesce(pm_cc, ts_ns))) AS cc
  FROM _w
),
_agg AS (
  SELECT c.trace, c.rank, c.step, c.phase,
    count(*) AS events,
    min(c.ts_ns) - any_value(t.t0) AS first_ns,
    max(c.end_ns) - any_value(t.t0) AS last_ns,
    sum(c.busy) AS busy_ns,
    sum(c.gap) AS idle_ns,
    coalesce(sum(c.cls) FILTER (WHERE c.class = 'COMP'), 0) AS compute_ns,
    coalesce(sum(c.cls) FILTER (WHERE c.class = 'COMM'), 0) AS comm_ns,
    coalesce(sum(c.cls) FILTER (WHERE c.class = 'MEM'), 0) AS mem_ns,
    coalesce(sum(c.cc) FILTER (WHERE c.class IN ('COMM', 'COMP')), 0) AS comm_comp_ns,
    sum(c.end_ns - c.ts_ns) AS kernel_ns
  FROM _c c JOIN _t0 t ON t.trace = c.trace
  GROUP BY c.trace, c.rank, c.step, c.phase
),
_sw AS (
  SELECT trace, rank, step, phase, sum(end_ns - ts_ns) AS step_ns FROM _steps GROUP BY ALL
)
SELECT coalesce(a.trace, s.trace) AS trace, coalesce(a.rank, s.rank) AS rank,
  coalesce(a.step, s.step) AS step, coalesce(a.phase, s.phase) AS phase,
  coalesce(a.events, 0) AS events, a.first_ns, a.last_ns,
  CAST(coalesce(a.busy_ns, 0) AS BIGINT) AS busy_ns, CAST(coalesce(a.idle_ns, 0) AS BIGINT) AS idle_ns,
  CAST(coalesce(a.compute_ns, 0) AS BIGINT) AS compute_ns, CAST(coalesce(a.comm_ns, 0) AS BIGINT) AS comm_ns,
  CAST(coalesce(a.mem_ns, 0) AS BIGINT) AS mem_ns, CAST(coalesce(a.comm_comp_ns, 0) AS BIGINT) AS comm_comp_ns,
  CAST(coalesce(a.kernel_ns, 0) AS BIGINT) AS kernel_ns, CAST(coalesce(s.step_ns, 0) AS BIGINT) AS step_ns
FROM _agg a FULL OUTER JOIN _sw s ON s.trace = a.trace AND s.rank = a.rank AND s.step = a.step AND s.phase = a.phase
ORDER BY trace, rank, step, phase
