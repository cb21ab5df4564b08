-- steps: one row per step with its phase, request and token counts, wall time, GPU busy time and the host gap before it (the phases area).
-- INCLUDE: evidence_base
--
-- Steps and phases as sql/evidence_base.sql finds them. vLLM execute_context_N(T)
-- _generation_N(T) and execute_N_context_N(sqT…)_generation_N(sqT…) give
-- request and token counts (the b200 form execute_context_1(888_788544) reads
-- 888 tokens); execute_new_N_cached_N gives new and cached requests only (the
-- phase is then a hypothesis: cached requests may still be prefilling); SGLang
-- step[DECODE bs=N] / step[EXTEND bs=N toks=T] / step[MIXED …] give the kind;
-- ProfilerStep#N is a training step (phase train) on a rank with a backward
-- operator or an optimizer step, an inference one (phase inference) on a
-- rank whose CPU operators compute without either, and unknown on a rank
-- with neither (the workload area's test, sql/evidence_base.sql).
-- With none of these the python frames of vLLM's execute_model are used and
-- the phase is unknown (hypothesis = true). GPU busy time is the union contribution of the GPU
-- events launched in the step (see ranks.sql): GPU work as tb_gpu_work
-- (views.sql) defines it, device-side sync records left out.
--
-- One row per step: the rollup keeps the rows as they are.
-- MERGE: none
--
-- Columns:
-- trace: Trace name. TEXT
-- rank: Rank. INT
-- step: Step number: N of ProfilerStep#N, else the ordinal from 0. INT
-- phase: prefill, decode, mixed, idle, train, inference or unknown. TEXT
-- source: the annotation the steps come from: execute_tokens (vLLM's execute_context_*_generation_*, which some SGLang builds write too), execute_new_cached (vLLM's execute_new_*_cached_*), sglang (SGLang's step[...]), profiler_step or python_execute_model. TEXT
-- hypothesis: The step or its phase is inferred, not annotated. BOOL
-- name: Annotation name. TEXT
-- start_ns: Step start, from the trace's first event. TIMESTAMP_NS
-- wall_ns: Host wall time of the step. DURATION_NS
-- ctx_req: Prefill (context) requests, or new requests. COUNT
-- ctx_tok: Prefill tokens. COUNT
-- gen_req: Decode (generation) requests, or cached requests. COUNT
-- gen_tok: Decode tokens. COUNT
-- gpu_events: GPU events launched in the step. COUNT
-- gpu_busy_ns: Union contribution of those events. DURATION_NS
-- kernel_ns: Sum of their durations. DURATION_NS
-- host_gap_ns: Host time between the previous step's end and this step's start (0 for the first). DURATION_NS
-- kv_tokens: Tokens the step wrote to vLLM's KV cache: the grid of its vllm::reshape_and_cache kernels, one block per token (in a CUDA-graph replay, the graph's captured size, padding included); NULL where the step ran none. COUNT
-- loader_ns: Time of the step's enumerate(DataLoader)# and enumerate(DataPipe)# ranges, the loop waiting for its next batch (resnet_2080ti: 73-90% of 14 of its 29 steps, under 6% of the other 15); NULL where the step has none. DURATION_NS
--
-- PARAMS: none of its own: it reads the tables evidence_base_steps and
--   evidence_base_events that sql/evidence_base.sql built for the filter
--   (trace, rank, window), where the step families and the rule that puts an
--   event in a step are documented.
WITH
_t0 AS (
  SELECT trace, min(first_ts_ns) AS t0 FROM traces GROUP BY trace
),
_gw AS (
  SELECT trace, rank, step, ts_ns, end_ns, pm_all AS pm FROM evidence_base_gpu
),
-- vLLM's KV-cache writes, by step: a few kernels a layer.
_kv AS (
  SELECT b.trace, b.rank, b.step,
    max(TRY_CAST(regexp_extract(d.strings[e.grid_id + 1], '^\[(\d+)', 1) AS BIGINT)) AS kv_tokens
  FROM tb_events e CROSS JOIN tb_dict d
  JOIN evidence_base_events b ON b.file_id = e.file_id AND b.idx = e.idx AND b.rank = e.rank AND b.trace = d.strings[e.trace_id + 1]
  WHERE e.kind = 'kernel' AND e.name_id IN (SELECT id FROM tb_strings WHERE contains(s, 'vllm::reshape_and_cache')) AND b.step >= 0
  GROUP BY ALL
),
-- The DataLoader's batches, by step: the ranges the ops area reads as
-- enumerate(DataLoader)# (findings' isDataLoader), which do not nest.
_dl AS (
  SELECT trace, rank, step, sum(dur_ns) AS loader_ns
  FROM evidence_base_events
  WHERE kind = 'annotation' AND step >= 0
    AND (starts_with(name, 'enumerate(DataLoader)#') OR starts_with(name, 'enumerate(DataPipe)#'))
  GROUP BY ALL
),
_gb AS (
  SELECT trace, rank, step, count(*) AS gpu_events,
    sum(greatest(0, end_ns - greatest(ts_ns, coalesce(pm, ts_ns)))) AS busy,
    sum(end_ns - ts_ns) AS kern
  FROM _gw WHERE step >= 0 GROUP BY ALL
)
SELECT s.trace, s.rank, s.step, s.phase, s.source, s.hypothesis, s.name,
  s.ts_ns - t.t0 AS start_ns,
  s.end_ns - s.ts_ns AS wall_ns,
  s.ctx_req, s.ctx_tok, s.gen_req, s.gen_tok,
  coalesce(g.gpu_events, 0) AS gpu_events,
  CAST(coalesce(g.busy, 0) AS BIGINT) AS gpu_busy_ns,
  CAST(coalesce(g.kern, 0) AS BIGINT) AS kernel_ns,
  greatest(0, s.ts_ns - coalesce(lag(s.end_ns) OVER (PARTITION BY s.trace, s.rank ORDER BY s.ts_ns), s.ts_ns)) AS host_gap_ns,
  kv.kv_tokens,
  CAST(dl.loader_ns AS BIGINT) AS loader_ns
FROM evidence_base_steps s JOIN _t0 t ON t.trace = s.trace
LEFT JOIN _gb g ON g.trace = s.trace AND g.rank = s.rank AND g.step = s.step
LEFT JOIN _kv kv ON kv.trace = s.trace AND kv.rank = s.rank AND kv.step = s.step
LEFT JOIN _dl dl ON dl.trace = s.trace AND dl.rank = s.rank AND dl.step = s.step
ORDER BY trace, rank, step
