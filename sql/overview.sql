-- overview: what each loaded rank holds: events, span, devices, streams, steps, producer, platform and capture settings.
-- INCLUDE: evidence_base
--
-- One row per (trace, rank). Counts honour the filter (window included);
-- metadata columns come from the traces table. Capture settings say what
-- evidence the trace can show: no cuda_sync events means GPU-side waits are
-- invisible, no python stacks means no python frames in the cross-view,
-- graphs mean per-kernel CPU attribution is lost for replayed kernels.
--
-- One row per rank: the rollup keeps the rows as they are.
-- MERGE: none
--
-- Columns:
-- trace: Trace name. TEXT
-- rank: Rank. INT
-- files: Files loaded for this rank. COUNT
-- rank_source: merged_prefix, filename, distributed_info, override or default. TEXT
-- world_size: World size from distributedInfo (NULL when absent). INT
-- producer: vllm, sglang, profiler_step (torch.profiler ProfilerStep# steps: training or inference, the workload area says which) or unknown. TEXT
-- platform: cuda, rocm, mtia, cpu or unknown. TEXT
-- gpu_model: GPU model (NULL when the trace does not name it). TEXT
-- gpu_total_mem: Device memory. BYTES
-- format: kineto, kineto_2021 or legacy. TEXT
-- has_graphs: CUDA/HIP graph launches present. BOOL
-- has_sync_events: cuda_sync GPU events captured. BOOL
-- has_python_stacks: python_function events captured. BOOL
-- events: Events in the filter. COUNT
-- first_ns: First event start, from the trace's first event. TIMESTAMP_NS
-- span_ns: Last end minus first start; the end leaves out Kineto's Record Window End marker, which it writes when it has processed the profiler's stop, after the recorded work (h100_qwen15_05b_chat: 14 ms after the last event; vllm_graph_capture_full_mi300x: 60 ms), and a host annotation's or operator's end stamped after it is the marker's (triton_example: ProfilerStep#1 ends 13.3 s past it, a span of 355.7 ms, not 13,690 ms; GPU work the window queued can end after it, and keeps its end). DURATION_NS
-- gpu_events: GPU operations (tb_gpu_work, views.sql): kernels, copies and memsets; device-side sync records (has_sync_events) are not counted. COUNT
-- kernels: Kernels. COUNT
-- devices: Distinct GPU devices. COUNT
-- streams: Distinct GPU streams. COUNT
-- cpu_ops: CPU operators. COUNT
-- op_ids: CPU operators that carry an External id. COUNT
-- op_id_span: The range of those ids, the largest less the smallest plus one (0 without any): the profiler numbers every operator it records, so a range many times op_ids says most were dropped (a sampled or filtered trace). COUNT
-- python_events: python_function events. COUNT
-- indexed: Events other than python frames that carry an Ev Idx, in the rank's whole files whatever the window, of the processes with two or more: PyTorch numbers every event it hands the profiler's trace from 0 (passEventsToKineto; python frames have numbers of their own), and each of the 24 complete shared traces that carry it holds every number from 0 to its highest. COUNT
-- index_missing: Ev Idx numbers from 0 to each process's highest that no event of it carries, summed over the rank's files and processes: events the profiler recorded that the file does not hold (an excerpt cut from a longer trace, or a filtered one). COUNT
-- index_before: Of index_missing, those below each process's lowest: events recorded before the first one the file holds (a trace cut at its start: vllm_decode_full_mi300x's first event is number 1,414,018). COUNT
-- runtime_calls: Runtime and driver calls. COUNT
-- graph_launches: cudaGraphLaunch/hipGraphLaunch calls. COUNT
-- steps: Steps found. COUNT
-- step_source: Annotation family of the steps (of the first step, by number; '' when none). TEXT
-- KEYED: false
--
-- PARAMS: the four of evidence_base: $1 trace (TEXT, '' = every trace), $2
--   rank (INT, -1 = every rank), $3 window start and $4 window end
--   (DURATION_NS from the trace's first event, 0 = open). $1 and $2 select
--   the rows of the traces table; the events counted are those of
--   evidence_base_events, built for the whole filter (window included), and
--   the python frames, which that table leaves out: they are counted here
--   from events under the same filter.
--
-- Steps and phases: an event's step and phase are those of
-- evidence_base_events (sql/evidence_base.sql, which documents how steps are
-- found). %evidence builds that table for the filter before it runs this
-- file; to run this file by hand, run sql/evidence_base.sql first.
WITH
_t0 AS (
  SELECT trace, min(first_ts_ns) AS t0 FROM traces GROUP BY trace
),
_steps AS NOT MATERIALIZED (
  SELECT * FROM evidence_base_steps
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
-- Kineto's Record Window End marker of each file (evidence_base.sql's
-- _rwe): no host annotation or operator it recorded ends after it
-- (capture.sql's past_window).
_rwe AS (
  SELECT trace, file_id, rank, min(ts_ns) AS rwe FROM evidence_base_events
  WHERE kind = 'instant' AND name = 'Record Window End'
  GROUP BY ALL
),
_ea AS (
  SELECT e.trace, e.rank, count(*) AS events, min(e.ts_ns) AS first_ts,
    max(CASE WHEN e.kind IN ('annotation', 'cpu_op') THEN least(e.end_ns, coalesce(w.rwe, e.end_ns)) ELSE e.end_ns END)
      FILTER (WHERE NOT (e.kind = 'instant' AND e.name = 'Record Window End')) AS last_end,
    count(*) FILTER (WHERE tb_gpu_work(e.kind)) AS gpu_events,
    count(*) FILTER (WHERE e.kind = 'kernel') AS kernels,
    count(DISTINCT e.device) FILTER (WHERE tb_gpu_work(e.kind)) AS devices,
    count(DISTINCT e.stream) FILTER (WHERE tb_gpu_work(e.kind)) AS streams,
    count(*) FILTER (WHERE e.kind = 'cpu_op') AS cpu_ops,
    count(*) FILTER (WHERE e.kind = 'cpu_op' AND e.external_id IS NOT NULL) AS op_ids,
    max(e.external_id) FILTER (WHERE e.kind = 'cpu_op') - min(e.external_id) FILTER (WHERE e.kind = 'cpu_op') + 1 AS op_id_span,
    count(*) FILTER (WHERE e.kind IN ('runtime', 'driver')) AS runtime_calls,
    count(*) FILTER (WHERE tb_graph_launch(e.kind, e.api, e.name)) AS graph_launches
  FROM evidence_base_events e
  LEFT JOIN _rwe w ON w.trace = e.trace AND w.file_id = e.file_id AND w.rank = e.rank
  WHERE e.kind NOT IN ('flow', 'counter')
  GROUP BY e.trace, e.rank
),
-- The python frames, counted in tb_events (schema.sql) by trace id
-- (tb_trace_t0, views.sql).
_py0 AS (
  SELECT e.trace_id, e.rank, count(*) AS python_events, min(e.ts_ns) AS first_ts, max(e.end_ns) AS last_end
  FROM tb_events e JOIN tb_trace_t0($1::VARCHAR) t ON t.trace_id = e.trace_id
  WHERE e.kind = 'python'
    AND ($2::INTEGER < 0 OR e.rank = $2::INTEGER)
    AND ($3::BIGINT <= 0 OR e.ts_ns - t.t0 >= $3::BIGINT)
    AND ($4::BIGINT <= 0 OR e.ts_ns - t.t0 < $4::BIGINT)
  GROUP BY e.trace_id, e.rank
),
_py AS (
  SELECT d.strings[p.trace_id + 1] AS trace, p.rank, p.python_events, p.first_ts, p.last_end
  FROM _py0 p, tb_dict d
),
-- Ev Idx per process of each file of the rank, over the whole file (a
-- window cuts the numbering, not the file). The numbering is one
-- profiler's, so one process's; a process with a single numbered event
-- tells nothing of its numbering (triton_example: a ProfilerStep#1 of
-- another pid, Ev Idx 36777, beside its own process's 0 to 2).
_idx0 AS (
  SELECT e.trace_id, e.file_id, e.rank, e.pid_id, count(DISTINCT e.ev_idx) AS n, min(e.ev_idx) AS lo, max(e.ev_idx) AS hi
  FROM tb_events e JOIN tb_trace_t0($1::VARCHAR) t ON t.trace_id = e.trace_id
  WHERE e.ev_idx IS NOT NULL AND e.kind <> 'python'
    AND ($2::INTEGER < 0 OR e.rank = $2::INTEGER)
  GROUP BY e.trace_id, e.file_id, e.rank, e.pid_id
  HAVING count(DISTINCT e.ev_idx) >= 2
),
_idx AS (
  SELECT d.strings[i.trace_id + 1] AS trace, i.rank, sum(i.n) AS indexed,
    sum(i.hi + 1 - i.n) AS index_missing, sum(i.lo) AS index_before
  FROM _idx0 i, tb_dict d
  GROUP BY d.strings[i.trace_id + 1], i.rank
),
_sc AS (
  SELECT trace, rank, count(*) AS steps, arg_min(source, step) AS step_source FROM _steps GROUP BY ALL
)
SELECT r.trace, r.rank, r.files, r.rank_source, r.world_size, r.producer, r.platform, r.gpu_model, r.gpu_total_mem,
  r.format, r.has_graphs, r.has_sync_events, r.has_python_stacks,
  coalesce(a.events, 0) + coalesce(p.python_events, 0) AS events,
  least(a.first_ts, p.first_ts) - t.t0 AS first_ns,
  coalesce(greatest(a.last_end, p.last_end) - least(a.first_ts, p.first_ts), 0) AS span_ns,
  coalesce(a.gpu_events, 0) AS gpu_events, coalesce(a.kernels, 0) AS kernels, coalesce(a.devices, 0) AS devices,
  coalesce(a.streams, 0) AS streams, coalesce(a.cpu_ops, 0) AS cpu_ops,
  coalesce(a.op_ids, 0) AS op_ids, coalesce(a.op_id_span, 0) AS op_id_span, coalesce(p.python_events, 0) AS python_events,
  coalesce(x.indexed, 0)::BIGINT AS indexed, coalesce(x.index_missing, 0)::BIGINT AS index_missing,
  coalesce(x.index_before, 0)::BIGINT AS index_before,
  coalesce(a.runtime_calls, 0) AS runtime_calls, coalesce(a.graph_launches, 0) AS graph_launches,
  coalesce(s.steps, 0) AS steps, coalesce(s.step_source, '') AS step_source
FROM _tr r JOIN _t0 t ON t.trace = r.trace
LEFT JOIN _ea a ON a.trace = r.trace AND a.rank = r.rank
LEFT JOIN _py p ON p.trace = r.trace AND p.rank = r.rank
LEFT JOIN _sc s ON s.trace = r.trace AND s.rank = r.rank
LEFT JOIN _idx x ON x.trace = r.trace AND x.rank = r.rank
ORDER BY trace, rank
