-- sync: host synchronisation calls and blocking copies, the CPU operator that issued them, and the GPU gap each opens.
-- INCLUDE: (none)
--
-- Calls: cuda/hip Stream/Device/EventSynchronize, cuStreamSynchronize,
-- cuCtxSynchronize, cudaStreamWaitEvent (does not block the host: blocking =
-- false), synchronous copies (cudaMemcpy, hipMemcpy without Async) and async
-- copies whose GPU op is DtoH or names pageable memory (both wait for queued
-- work). The issuing operator is chosen among the cpu_ops that enclose the
-- call on the same thread: the outermost scalar read (aten::item,
-- _local_scalar_dense, is_nonzero), else dynamic shape (nonzero,
-- masked_select, unique, repeat_interleave), else copy to host (aten::to,
-- _to_copy, copy_, cpu), else the innermost operator; '' when none, and for
-- the non-blocking cudaStreamWaitEvent (not looked up: they are many).
-- GPU gap: the rank's GPU union segment that ends last before the call
-- returns is found; when it ended while the host waited (its end is at or
-- after the call's start) and no GPU work covers the call's end, the idle
-- interval from that end to the next GPU start is the gap the call opened.
-- That link (same rank, same step) is the mechanism a finding may confirm.
--
-- Columns:
-- trace: Trace name. TEXT
-- rank: Rank. INT
-- step: Step number (-1 outside every step). INT
-- phase: Phase of the step. TEXT
-- stream: Stream of the copy or of the call's stream arg (-1 when unknown). INT
-- call: Runtime call name. TEXT
-- op: Issuing CPU operator ('' when none). TEXT
-- trigger: item, dynamic_shape, to_host, operator, explicit (no enclosing operator), or '' for non-blocking calls. TEXT
-- direction: Copy direction (HtoD, DtoH, DtoD, ...) or '' for sync calls. TEXT
-- pageable: The copy names pageable host memory. BOOL
-- blocking: The call blocks the host (false for cudaStreamWaitEvent). BOOL
-- count: Calls. COUNT
-- blocked_ns: Sum of call durations (host time blocked). DURATION_NS
-- max_blocked_ns: Longest call. DURATION_NS
-- gaps: Calls that opened a GPU gap. COUNT
-- gpu_gap_ns: Sum of the GPU gaps the calls opened. DURATION_NS
-- max_gap_ns: Longest such gap. DURATION_NS
-- bytes: Bytes copied by the copies. BYTES
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
_cp AS (
  SELECT trace, rank, correlation, any_value(name) AS copy_name, any_value(stream) AS stream, sum(coalesce(bytes, 0)) AS bytes
  FROM _ev WHERE kind = 'gpu_memcpy' AND correlation IS NOT NULL GROUP BY ALL
),
_s AS (
  SELECT k.trace, k.rank, k.step, k.phase, k.pid, k.tid, k.name AS call, k.ts_ns, k.end_ns, k.dur_ns,
    coalesce(cp.stream, k.stream, -1) AS stream,
    coalesce(regexp_extract(cp.copy_name, '^Memcpy (\w+)', 1), '') AS direction,
    coalesce(cp.copy_name LIKE '%Pageable%', false) AS pageable,
    k.name NOT IN ('cudaStreamWaitEvent', 'hipStreamWaitEvent') AS blocking,
    coalesce(cp.bytes, k.bytes, 0) AS bytes
  FROM _keyed k LEFT JOIN _cp cp ON cp.trace = k.trace AND cp.rank = k.rank AND cp.correlation = k.correlation
  WHERE k.name IN ('cudaStreamSynchronize', 'cudaDeviceSynchronize', 'cudaEventSynchronize', 'cudaStreamWaitEvent',
                   'hipStreamSynchronize', 'hipDeviceSynchronize', 'hipEventSynchronize', 'hipStreamWaitEvent',
                   'cuStreamSynchronize', 'cuCtxSynchronize', 'cuEventSynchronize')
     OR (k.name IN ('cudaMemcpy', 'hipMemcpy', 'cuMemcpy', 'cuMemcpyDtoH', 'cuMemcpyDtoH_v2'))
     OR ((k.api = 'memcpy' OR k.name LIKE '%Memcpy%') AND (cp.copy_name LIKE 'Memcpy DtoH%' OR cp.copy_name LIKE '%Pageable%'))
),
_enc AS (
  SELECT s.trace, s.rank, s.pid, s.tid, s.ts_ns, s.end_ns, c.name, c.ts_ns AS c_ts,
    CASE WHEN c.name IN ('aten::item', 'aten::_local_scalar_dense', 'aten::is_nonzero') THEN 1
         WHEN c.name IN ('aten::nonzero', 'aten::nonzero_static', 'aten::masked_select', 'aten::unique', 'aten::_unique',
                         'aten::_unique2', 'aten::unique_consecutive', 'aten::unique_dim', 'aten::repeat_interleave') THEN 2
         WHEN c.name IN ('aten::to', 'aten::_to_copy', 'aten::copy_', 'aten::cpu') THEN 3
         ELSE 9 END AS prio
  FROM _s s JOIN _ev c ON c.trace = s.trace AND c.rank = s.rank AND c.pid = s.pid AND c.tid = s.tid
  WHERE s.blocking AND c.kind = 'cpu_op' AND c.ts_ns <= s.ts_ns AND c.end_ns >= s.end_ns
),
_op AS (
  SELECT trace, rank, pid, tid, ts_ns, end_ns,
    arg_min(name, [prio, CASE WHEN prio < 9 THEN c_ts ELSE -c_ts END]) AS op,
    min(prio) AS prio
  FROM _enc GROUP BY ALL
),
_gw AS (
  SELECT trace, rank, ts_ns, end_ns,
    max(end_ns) OVER (PARTITION BY trace, rank ORDER BY ts_ns, end_ns ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS pm
  FROM _ev WHERE kind IN ('kernel', 'gpu_memcpy', 'gpu_memset')
),
_gs AS (
  SELECT trace, rank, seg, min(ts_ns) AS seg_ts, max(end_ns) AS seg_end
  FROM (SELECT *, sum(CASE WHEN pm IS NULL OR ts_ns > pm THEN 1 ELSE 0 END)
          OVER (PARTITION BY trace, rank ORDER BY ts_ns, end_ns ROWS UNBOUNDED PRECEDING) AS seg FROM _gw)
  GROUP BY ALL
),
_seg AS (
  SELECT *, lead(seg_ts) OVER (PARTITION BY trace, rank ORDER BY seg_ts) AS next_ts FROM _gs
),
_gap AS (
  SELECT s.*, g.seg_end, g.next_ts,
    CASE WHEN s.blocking AND g.seg_end IS NOT NULL AND g.seg_end >= s.ts_ns AND g.seg_end <= s.end_ns AND g.next_ts IS NOT NULL
         THEN g.next_ts - g.seg_end ELSE 0 END AS gap_ns
  FROM _s s ASOF LEFT JOIN _seg g ON g.trace = s.trace AND g.rank = s.rank AND s.end_ns >= g.seg_ts
)
SELECT g.trace, g.rank, g.step, g.phase, g.stream, g.call,
  coalesce(o.op, '') AS op,
  CASE WHEN NOT g.blocking THEN '' ELSE CASE o.prio WHEN 1 THEN 'item' WHEN 2 THEN 'dynamic_shape' WHEN 3 THEN 'to_host' WHEN 9 THEN 'operator' ELSE 'explicit' END END AS trigger,
  g.direction, g.pageable, g.blocking,
  count(*) AS count,
  CAST(sum(g.dur_ns) AS BIGINT) AS blocked_ns,
  max(g.dur_ns) AS max_blocked_ns,
  count(*) FILTER (WHERE g.gap_ns > 0) AS gaps,
  CAST(sum(g.gap_ns) AS BIGINT) AS gpu_gap_ns,
  max(g.gap_ns) AS max_gap_ns,
  CAST(sum(g.bytes) AS BIGINT) AS bytes
FROM _gap g LEFT JOIN _op o ON o.trace = g.trace AND o.rank = g.rank AND o.pid = g.pid AND o.tid = g.tid
  AND o.ts_ns = g.ts_ns AND o.end_ns = g.end_ns
GROUP BY ALL
ORDER BY trace, rank, step, phase, stream, call, op, trigger, direction, pageable, blocking
