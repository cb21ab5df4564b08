-- sync: host synchronisation calls and blocking copies, the CPU operator that issued them, and the GPU gap each opens.
-- INCLUDE: evidence_base
--
-- Calls: those tb_sync_call (views.sql) classifies: cuda/hip/cu Stream,
-- Device, Event and Ctx Synchronize, *StreamWaitEvent (does not block the
-- host: blocking = false), synchronous copies (memcpy calls without Async in
-- the name: cudaMemcpy, hipMemcpyWithStream, cuMemcpyDtoH_v2, ...) and async
-- copies whose GPU op is DtoH or names pageable memory (tb_copy_waits: both
-- wait for queued work). The issuing operator is chosen among the cpu_ops
-- that enclose the call on the same thread: the outermost scalar read
-- (aten::item, _local_scalar_dense, is_nonzero), else dynamic shape
-- (nonzero, masked_select, unique, repeat_interleave), else copy to host
-- (aten::to, _to_copy, copy_, cpu), else the innermost operator; '' when
-- none, and for the non-blocking cudaStreamWaitEvent (not looked up: they
-- are many).
-- GPU gap: the rank's GPU union segment that ends last before the call
-- returns is found; when it ended while the host waited (its end is at or
-- after the call's start), no GPU work covers the call's end and the work
-- that ends the idle was launched after it began (work queued before makes
-- it a wait on the queue), the idle interval from that end to the next GPU
-- start is the gap the call opened,
-- counted up to the call's duration less its held and one-time parts (below): without the call
-- the host would have spent that time ahead of the GPU, so removing it
-- saves at most that much;
-- the rest of the gap is the host's own work after the call (a 2 s
-- DataLoader start-up after a 6 us sync is the DataLoader's idle, not the
-- sync's). That link (same rank, same step) is the mechanism a finding may
-- confirm.
-- Held: the part of a call inside idle gaps of 1 ms or more between the
-- rank's GPU work (evidence_base_waits): the call waited for work the trace
-- does not show, not for the queue it shows; the rules leave it out. An
-- edge call (evidence_base_edge: a sync at the window's edge, left out
-- whole) holds none, as in the capture area's held_wait, so that the
-- column adds up to the capture's held time.
-- Edge: syncs at the window's edge (evidence_base_edge) are rows of their
-- own (edge true), whatever operator issued them.
-- One-time: the part of a first copy call before the rank's first GPU
-- work (evidence_base_waits): a one-time cost at the window's start; the
-- rules leave it out too.
--
-- Columns:
-- trace: Trace name. TEXT
-- rank: Rank. INT
-- step: Step number (-1 outside every step). INT
-- phase: Phase of the step. TEXT
-- stream: Stream of the copy or of the call's stream arg (-1 when unknown). INT
-- call: Runtime call name. TEXT
-- op: Issuing CPU operator ('' when none). TEXT
-- trigger: item, dynamic_shape, copy (aten::to, _to_copy, copy_ or cpu: a tensor copied between host and device, either way; direction says which), operator, explicit (no enclosing operator), or '' for non-blocking calls. TEXT
-- direction: Copy direction (HtoD, DtoH, DtoD, ...) or '' for sync calls. TEXT
-- pageable: The copy names pageable host memory. BOOL
-- blocking: The call blocks the host (false for cudaStreamWaitEvent). BOOL
-- edge: The calls are syncs at the window's edge (evidence_base_edge: the capture area's edge_sync), which the sync rule leaves out. BOOL
-- count: Calls. COUNT
-- blocked_ns: Sum of call durations (host time blocked). DURATION_NS
-- max_blocked_ns: Longest call. DURATION_NS
-- gaps: Calls that opened a GPU gap. COUNT
-- gpu_gap_ns: Sum of the GPU gaps the calls opened, each at most its call's duration less its held and one-time parts. DURATION_NS
-- max_gap_ns: Longest such gap (at most its call's duration less its held and one-time parts). DURATION_NS
-- bytes: Bytes copied by the copies. BYTES
-- held_ns: Blocked time inside idle gaps of 1 ms or more between the rank's GPU work (evidence_base_waits: a wait on work the trace does not show; 1 ms or more per call); 0 for edge calls, whose whole time is the edge's (the capture area's held_wait likewise). DURATION_NS
-- one_time_ns: Blocked time that is a one-time cost, not the loop's (evidence_base_waits): of first copy calls, their part before the rank's first GPU work; of uploads before any computation (every GPU copy of the rank ends before its first kernel, outside every step), the whole call. DURATION_NS
-- dist_ns: Blocked time of the calls inside a ## sparse_data_dist ## range of their thread: TorchRec's train pipeline running its input dist, which reads lengths and splits back to the host to size its all-to-alls; NULL on a rank without such ranges. DURATION_NS
-- upload_blocked_ns: Blocked time of the sync calls (no copy themselves) issued by a copy operator whose last copy before them, on their thread inside that operator, went host to device: PyTorch's copy from pageable memory synchronises after its upload, so these syncs wait for the upload and the work queued ahead of it, not for a read-back (h100_owlv2: 358 of aten::to's 359 ms of cudaStreamSynchronize follow uploads of an 82,944-byte tensor). DURATION_NS
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
_cp AS (
  SELECT trace, rank, correlation, arg_min(name, [ts_ns, file_id, idx]) AS copy_name, arg_min(stream, [ts_ns, file_id, idx]) AS stream,
    sum(coalesce(bytes, 0)) AS bytes
  FROM evidence_base_events WHERE kind = 'gpu_memcpy' AND correlation IS NOT NULL GROUP BY ALL
),
_s AS (
  SELECT k.trace, k.rank, k.step, k.phase, k.pid, k.tid, k.name AS call, k.ts_ns, k.end_ns, k.dur_ns, k.correlation,
    coalesce(cp.stream, k.stream, -1) AS stream,
    coalesce(tb_copy_direction(cp.copy_name), '') AS direction,
    coalesce(tb_copy_pageable(cp.copy_name), false) AS pageable,
    tb_sync_call(k.kind, k.api, k.name, tb_copy_waits(cp.copy_name)) = 'blocking' AS blocking,
    coalesce(cp.bytes, k.bytes, 0) AS bytes
  FROM _keyed k LEFT JOIN _cp cp ON cp.trace = k.trace AND cp.rank = k.rank AND cp.correlation = k.correlation
  WHERE tb_sync_call(k.kind, k.api, k.name, tb_copy_waits(cp.copy_name)) IS NOT NULL
),
-- The operators that enclose a blocking call. Joined on the thread alone,
-- every call met every operator of its thread (blocking calls × operators:
-- quadratic in the trace). Each operator is listed once per 2^24 ns
-- (16.8 ms) bucket its span touches, and a call looks only in the bucket of
-- its start, which every operator that encloses it touches (×21 vLLM:
-- 0.35 s → 0.12 s for this join).
_cb AS (
  SELECT trace, rank, pid, tid, name, ts_ns, end_ns, idx,
    unnest(tb_buckets(ts_ns, end_ns, 16777216)) AS b
  FROM evidence_base_events
  WHERE kind = 'cpu_op'
),
_enc AS (
  SELECT s.trace, s.rank, s.pid, s.tid, s.ts_ns, s.end_ns, c.name, c.ts_ns AS c_ts, c.end_ns AS c_end, c.idx AS c_idx,
    CASE WHEN tb_scalar_read(c.name) THEN 1
         WHEN c.name IN ('aten::nonzero', 'aten::nonzero_static', 'aten::masked_select', 'aten::unique', 'aten::_unique',
                         'aten::_unique2', 'aten::unique_consecutive', 'aten::unique_dim', 'aten::repeat_interleave') THEN 2
         WHEN c.name IN ('aten::to', 'aten::_to_copy', 'aten::copy_', 'aten::cpu') THEN 3
         ELSE 9 END AS prio
  FROM _s s JOIN _cb c ON c.trace = s.trace AND c.rank = s.rank AND c.pid = s.pid AND c.tid = s.tid
    AND c.b = s.ts_ns // 16777216
  WHERE s.blocking AND c.ts_ns <= s.ts_ns AND c.end_ns >= s.end_ns
),
-- Outermost and innermost in the thread's start order (start ascending,
-- end descending, file order: the order the cross-view walks), so that
-- operators that start and end at the same time, as aten::to and the
-- aten::_to_copy it calls do on a microsecond clock, name the same one
-- whatever the plan (the outer, written first).
_op AS (
  SELECT trace, rank, pid, tid, ts_ns, end_ns,
    arg_min(name, CASE WHEN prio < 9 THEN [prio, c_ts, -c_end, c_idx] ELSE [prio, -c_ts, c_end, -c_idx] END) AS op,
    arg_min(c_ts, CASE WHEN prio < 9 THEN [prio, c_ts, -c_end, c_idx] ELSE [prio, -c_ts, c_end, -c_idx] END) AS op_ts,
    min(prio) AS prio
  FROM _enc GROUP BY ALL
),
-- The copy calls (those with a GPU copy), for the copy each sync call
-- follows on its thread.
_cpy AS (
  SELECT k.trace, k.rank, k.pid, k.tid, k.ts_ns, tb_copy_direction(cp.copy_name) AS dir
  FROM _keyed k JOIN _cp cp ON cp.trace = k.trace AND cp.rank = k.rank AND cp.correlation = k.correlation
),
_seg AS (
  SELECT trace, rank, seg_ts, seg_end, next_ts, next_host_ts FROM evidence_base_busy
),
_edged AS (
  SELECT s.*, EXISTS (SELECT 1 FROM evidence_base_edge e WHERE e.trace = s.trace AND e.rank = s.rank AND e.ts_ns = s.ts_ns
    AND e.name = s.call AND e.correlation IS NOT DISTINCT FROM s.correlation) AS edge
  FROM _s s
),
_held AS (
  SELECT s.*, CASE WHEN s.edge THEN 0 ELSE coalesce(w.held_ns, 0) END AS held_ns, coalesce(w.one_time_ns, 0) AS one_time_ns
  FROM _edged s LEFT JOIN evidence_base_waits w ON w.trace = s.trace AND w.rank = s.rank AND w.correlation = s.correlation
    AND w.ts_ns = s.ts_ns
),
-- TorchRec's input-dist ranges (none on most traces).
_sd AS (
  SELECT trace, rank, pid, tid, ts_ns, end_ns FROM evidence_base_events
  WHERE kind = 'annotation' AND name = '## sparse_data_dist ##'
),
_gap AS (
  SELECT s.*, g.seg_end, g.next_ts,
    CASE WHEN s.blocking AND g.seg_end IS NOT NULL AND g.seg_end >= s.ts_ns AND g.seg_end <= s.end_ns AND g.next_ts IS NOT NULL
           AND g.next_host_ts >= g.seg_end
         THEN least(g.next_ts - g.seg_end, s.dur_ns - s.held_ns - s.one_time_ns) ELSE 0 END AS gap_ns
  FROM _held s ASOF LEFT JOIN _seg g ON g.trace = s.trace AND g.rank = s.rank AND s.end_ns >= g.seg_ts
),
-- Each call with its issuing operator, and for a sync call of a copy
-- operator whether the last copy before it, inside that operator, was an
-- upload.
_gu AS (
  SELECT g.*,
    coalesce(g.blocking AND g.direction = '' AND g.prio = 3 AND c.dir = 'HtoD' AND c.ts_ns >= g.op_ts, false) AS after_upload
  FROM (SELECT g.*, o.op, o.prio, o.op_ts FROM _gap g LEFT JOIN _op o ON o.trace = g.trace AND o.rank = g.rank AND o.pid = g.pid
          AND o.tid = g.tid AND o.ts_ns = g.ts_ns AND o.end_ns = g.end_ns) g
  ASOF LEFT JOIN _cpy c ON c.trace = g.trace AND c.rank = g.rank AND c.pid = g.pid AND c.tid = g.tid AND c.ts_ns < g.ts_ns
)
SELECT g.trace, g.rank, g.step, g.phase, g.stream, g.call,
  coalesce(g.op, '') AS op,
  CASE WHEN NOT g.blocking THEN '' ELSE CASE g.prio WHEN 1 THEN 'item' WHEN 2 THEN 'dynamic_shape' WHEN 3 THEN 'copy' WHEN 9 THEN 'operator' ELSE 'explicit' END END AS trigger,
  g.direction, g.pageable, g.blocking, g.edge,
  count(*) AS count,
  CAST(sum(g.dur_ns) AS BIGINT) AS blocked_ns,
  max(g.dur_ns) AS max_blocked_ns,
  count(*) FILTER (WHERE g.gap_ns > 0) AS gaps,
  CAST(sum(g.gap_ns) AS BIGINT) AS gpu_gap_ns,
  max(g.gap_ns) AS max_gap_ns,
  CAST(sum(g.bytes) AS BIGINT) AS bytes,
  CAST(sum(g.held_ns) AS BIGINT) AS held_ns,
  CAST(sum(g.one_time_ns) AS BIGINT) AS one_time_ns,
  CASE WHEN bool_or(sr.trace IS NOT NULL) THEN
    CAST(coalesce(sum(g.dur_ns) FILTER (WHERE g.blocking AND EXISTS (SELECT 1 FROM _sd d WHERE d.trace = g.trace AND d.rank = g.rank
      AND d.pid = g.pid AND d.tid = g.tid AND d.ts_ns <= g.ts_ns AND d.end_ns >= g.end_ns)), 0) AS BIGINT) END AS dist_ns,
  CAST(coalesce(sum(g.dur_ns) FILTER (WHERE g.after_upload), 0) AS BIGINT) AS upload_blocked_ns
FROM _gu g
LEFT JOIN (SELECT DISTINCT trace, rank FROM _sd) sr ON sr.trace = g.trace AND sr.rank = g.rank
GROUP BY ALL
ORDER BY trace, rank, step, phase, stream, call, op, trigger, direction, pageable, blocking, edge
