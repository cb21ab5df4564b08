-- kernels: GPU time per kernel name, keyed by (trace, rank, step, phase, stream).
-- INCLUDE: evidence_base
--
-- One row per kernel name (and memcpy/memset name) per key: count, total,
-- min, max and a log-bucket histogram of durations, so that means, p50 and
-- p99 can be computed after any merge. HTA's kernel breakdown (which includes
-- memory kernels) sums these rows over a rank. Classes are
-- tb_kernel_class's (views.sql): COMM = NCCL/RCCL/HCCL kernels, vLLM
-- cross_device_reduce, DeepEP and PyTorch symmetric-memory kernels (HTA
-- counts all but the first as computation); MEM = memcpy/memset; COMP = the
-- rest. Shares of GPU busy time are computed by the rollup from ranks.busy_ns.
-- Histogram: "b:n b:n ...", bucket b = floor(8*log2(max(dur_ns, 1))), n
-- events; bucket b covers [2^(b/8), 2^((b+1)/8)) ns.
--
-- Columns:
-- trace: Trace name. TEXT
-- rank: Rank. INT
-- step: Step number (-1 outside every step). INT
-- phase: Phase of the step. TEXT
-- stream: GPU stream (-1 when the event has none). INT
-- name: Kernel name as written. TEXT
-- class: COMP, COMM or MEM. TEXT
-- count: Events. COUNT
-- total_ns: Sum of durations. DURATION_NS
-- min_ns: Shortest duration. DURATION_NS
-- max_ns: Longest duration. DURATION_NS
-- hist: Log-bucket histogram of durations. HIST
-- pre_window_ns: Of total_ns, the work launched before the window (evidence_base_events.pre: queued by an iteration before the capture began, so in step -1): what a total over the whole window holds that the window's own launches did not cause. DURATION_NS
-- graph_ns: Of total_ns, the work that CUDA/HIP graph replays ran: its correlation is that of a graph launch call of the rank (cudaGraphLaunch, hipGraphLaunch), as CUPTI gives the kernels of a replay their launch's (trace_diff_test_v100: 177.8 of its 199.7 ms of fp32 sgemm time). DURATION_NS
-- KEYED: tb_gpu_work(e.kind)
--
-- No parameters: the filter (trace, rank, window: evidence_base's PARAMS)
-- is applied when evidence_base_events is built.
--
-- Steps and phases: an event's step and phase are those of
-- evidence_base_events (sql/evidence_base.sql, which documents how steps are
-- found). %evidence builds that table for the filter before it runs this
-- file; to run this file by hand, run sql/evidence_base.sql first.
WITH
_keyed AS NOT MATERIALIZED (
  SELECT trace, rank, pid, tid, kind, api, name, ts_ns, dur_ns, end_ns,
    correlation, external_id, stream, device, bytes, graph_id,
    host_ts, step, phase, class, pre
  FROM evidence_base_events
  WHERE tb_gpu_work(kind)
),
-- The correlation ids of the graph launch calls.
_gl AS (
  SELECT DISTINCT trace, rank, correlation FROM evidence_base_events
  WHERE api = 'graph_launch' AND correlation IS NOT NULL
),
_g AS (
  SELECT k.trace, k.rank, k.step, k.phase, coalesce(k.stream, -1) AS stream, k.name,
    k.class,
    k.dur_ns, k.pre, gl.correlation IS NOT NULL AS replay,
    CAST(floor(8 * log2(greatest(k.dur_ns, 1))) AS INTEGER) AS bucket
  FROM _keyed k
  LEFT JOIN _gl gl ON gl.trace = k.trace AND gl.rank = k.rank AND gl.correlation = k.correlation
),
_b AS (
  SELECT trace, rank, step, phase, stream, name, class, bucket,
    count(*) AS n, sum(dur_ns) AS total, min(dur_ns) AS mn, max(dur_ns) AS mx,
    coalesce(sum(dur_ns) FILTER (WHERE pre), 0) AS pre,
    coalesce(sum(dur_ns) FILTER (WHERE replay), 0) AS replay
  FROM _g GROUP BY trace, rank, step, phase, stream, name, class, bucket
)
SELECT trace, rank, step, phase, stream, name, class,
  CAST(sum(n) AS BIGINT) AS count, CAST(sum(total) AS BIGINT) AS total_ns,
  min(mn) AS min_ns, max(mx) AS max_ns,
  tb_hist(list({'b': bucket, 'n': n})) AS hist,
  CAST(sum(pre) AS BIGINT) AS pre_window_ns,
  CAST(sum(replay) AS BIGINT) AS graph_ns
FROM _b
GROUP BY trace, rank, step, phase, stream, name, class
ORDER BY trace, rank, step, phase, stream, total_ns DESC, name
