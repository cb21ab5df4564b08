-- memory: allocator activity from [memory] instant events, peak allocated and reserved memory against the device's total, and cudaFree/hipFree calls, keyed by step.
-- INCLUDE: evidence_base
--
-- [memory] events exist only with profile_memory=True; without them the
-- area is empty and the bundle records an evidence gap. Peaks are the largest
-- "Total Allocated" / "Total Reserved" seen (mergeable with max). total_mem is
-- deviceProperties' totalGlobalMem of the rank (NULL where the trace does not
-- say). cudaFree/hipFree synchronise the device; their rows count the calls
-- (device -1).
--
-- Merged rows keep the device's memory (the same on every row of a device):
-- MERGE: total_mem = max
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
-- No parameters: the filter (trace, rank, window: evidence_base's PARAMS)
-- is applied when evidence_base_events is built.
--
-- Steps and phases: an event's step and phase are those of
-- evidence_base_events (sql/evidence_base.sql, which documents how steps are
-- found). %evidence builds that table for the filter before it runs this
-- file; to run this file by hand, run sql/evidence_base.sql first.
WITH
_keyed AS (
  SELECT b.trace, b.rank, b.pid, b.tid, b.kind, b.api, b.name, b.ts_ns, b.dur_ns, b.end_ns,
    b.correlation, b.external_id, b.stream, b.device, b.bytes, b.graph_id, ev.args,
    b.host_ts, b.step, b.phase
  FROM evidence_base_events b
  -- args from tb_events (schema.sql), by name id: the events view would
  -- look up every event's name to test it.
  JOIN (
    SELECT d.strings[e.trace_id + 1] AS trace, e.file_id, e.rank, e.idx, e.args
    FROM tb_events e, tb_dict d
    WHERE e.name_id IN (SELECT id FROM tb_strings WHERE s = '[memory]' OR s LIKE '%Free%')
  ) ev
    ON ev.trace = b.trace AND ev.file_id = b.file_id AND ev.rank = b.rank AND ev.idx = b.idx
  WHERE (b.kind IN ('instant', 'other') AND b.name = '[memory]') OR (b.kind IN ('runtime', 'driver') AND b.name IN ('cudaFree', 'hipFree', 'cudaFreeHost', 'hipHostFree', 'cuMemFree', 'cuMemFree_v2'))
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
