-- launch: kernel launches: host call time, launch delay, short kernels and outliers, keyed by (trace, rank, step, phase, stream, call).
-- INCLUDE: evidence_base
--
-- Every runtime/driver launch (kernel launches, cudaMemcpyAsync and
-- cudaMemsetAsync as HTA's launch stats, cudaGraphLaunch separately) joined
-- to its GPU op by correlation. delay = GPU start - call start (tracebook's
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
-- min_cpu_ns: Shortest call. DURATION_NS
-- max_cpu_ns: Longest call. DURATION_NS
-- min_delay_ns: Least delay of the calls whose GPU work is in the trace (NULL when none is). DURATION_NS
-- max_delay_ns: Most delay of those calls (NULL when none is). DURATION_NS
-- cpu_hist: Log-bucket histogram of call durations. HIST
-- delay_hist: Log-bucket histogram of delay. HIST
-- KEYED: e.kind IN ('runtime', 'driver')
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
    host_ts, step, phase
  FROM evidence_base_events
  WHERE kind IN ('runtime', 'driver')
),
_gpu AS (
  SELECT trace, rank, correlation, min(ts_ns) AS g_ts, sum(dur_ns) AS g_dur,
    -- The first operation's stream (a graph launch's kernels share its
    -- correlation and may run on several), in file order on a tie.
    arg_min(stream, [ts_ns, file_id, idx]) AS stream
  FROM evidence_base_events WHERE tb_gpu_work(kind) AND correlation IS NOT NULL
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
    tb_hist(list({'b': b, 'n': n}) FILTER (WHERE which = 'cpu')) AS cpu_hist,
    tb_hist(list({'b': b, 'n': n}) FILTER (WHERE which = 'delay')) AS delay_hist
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
    count(*) FILTER (WHERE hdelay > 100000) AS delay_outliers,
    min(cpu) AS min_cpu_ns,
    max(cpu) AS max_cpu_ns,
    min(delay) FILTER (WHERE has_gpu) AS min_delay_ns,
    max(delay) FILTER (WHERE has_gpu) AS max_delay_ns
  FROM _l GROUP BY ALL
)
SELECT a.*, coalesce(h.cpu_hist, '') AS cpu_hist, coalesce(h.delay_hist, '') AS delay_hist
FROM _a a JOIN _hs h USING (trace, rank, step, phase, stream, call)
ORDER BY trace, rank, step, phase, stream, call
