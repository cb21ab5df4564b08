-- ops: CPU operators: inclusive and self time, launches, and the GPU time they caused, keyed by (trace, rank, step, phase, name).
-- INCLUDE: evidence_base
--
-- Operators are cpu_op events (aten::*, record_param_comms, vllm::*, …) and
-- user annotations (ProfilerStep#N, enumerate(DataLoader)#…, execute_*).
-- Self time is the inclusive time minus that of the direct child operators
-- on the same thread (nesting by time containment: the innermost enclosing
-- operator is the parent: a sweep gives each operator its depth (+1 at
-- each start, -1 at each end, ends first at equal times but a zero-length
-- operator's own), and the parent is
-- the last earlier-starting operator of the thread one level up, found by
-- an ASOF join). Launches are the runtime/driver calls whose
-- External id is the operator's, and GPU time the GPU events sharing those
-- calls' correlation: the GPU work the operator itself launched (Kineto
-- links a launch to its innermost operator), not its children's. A rank
-- (of a file) whose launching calls mostly carry their own correlation id
-- as External id links none: those numbers name no operator, and some
-- equal an operator's id by chance (resnet_2080ti: all 25,928 runtime
-- calls, 2,543 of its 9,628 kernel launches matching an operator's id;
-- dlrm_8rank, df_index_resolver_v100 and 8 more shared traces write ids
-- so): its operators' launches, gpu_events and gpu_ns are NULL (unknown,
-- not none), and the cross-view, which links a launch to the operator
-- around it, says which launched what.
--
-- Columns:
-- trace: Trace name. TEXT
-- rank: Rank. INT
-- step: Step number (-1 outside every step). INT
-- phase: Phase of the step. TEXT
-- name: Operator name. TEXT
-- count: Calls. COUNT
-- incl_ns: Sum of inclusive durations of the calls not nested in a call of the same name on their thread (aten::copy_ inside aten::copy_ counts once), so a name's inclusive time never exceeds its thread's time. DURATION_NS
-- self_ns: Sum of self durations. DURATION_NS
-- max_ns: Longest call. DURATION_NS
-- launches: Runtime/driver calls linked to the operator (NULL, unknown, on a rank whose calls carry their correlation id as External id: see above; so are gpu_events and gpu_ns). COUNT
-- gpu_events: GPU events those calls produced. COUNT
-- gpu_ns: Sum of those GPU events' durations. DURATION_NS
-- annotation: true for user annotations (record_function ranges, ProfilerStep#N, enumerate(DataLoader)#...), whose self time is their thread outside every operator (waiting, or Python the profiler does not see); false for cpu_op events. BOOL
-- KEYED: e.kind IN ('cpu_op', 'annotation')
--
-- No parameters: the filter (trace, rank, window: evidence_base's PARAMS)
-- is applied when evidence_base_events is built.
--
-- Steps and phases: an event's step and phase are those of
-- evidence_base_events (sql/evidence_base.sql, which documents how steps are
-- found). %evidence builds that table for the filter before it runs this
-- file; to run this file by hand, run sql/evidence_base.sql first.
--
-- analysis/pass computes the same rows in Go from the rows of _calls (the
-- query up to its PASS line), in _o's id order: the rest of this file is
-- the definition it follows, and a test holds the two equal on every
-- shared trace.
WITH
_gpu AS (
  SELECT trace, rank, correlation, count(*) AS n, sum(dur_ns) AS d
  FROM evidence_base_events WHERE tb_gpu_work(kind) AND correlation IS NOT NULL GROUP BY ALL
),
-- Ranks of a file whose runtime and driver calls mostly carry their own
-- correlation id as External id (the cross-view's test on GPU work, sql/
-- crossview.sql's _copies, reads the same ids).
_copied AS (
  SELECT trace, file_id, rank FROM evidence_base_events
  WHERE kind IN ('runtime', 'driver') AND external_id IS NOT NULL AND correlation IS NOT NULL
  GROUP BY ALL
  HAVING 2 * count(*) FILTER (WHERE external_id = correlation) > count(*)
),
_l AS (
  SELECT r.trace, r.rank, r.external_id, count(*) AS launches, sum(coalesce(g.n, 0)) AS n, sum(coalesce(g.d, 0)) AS d
  FROM evidence_base_events r LEFT JOIN _gpu g ON g.trace = r.trace AND g.rank = r.rank AND g.correlation = r.correlation
  ANTI JOIN _copied c ON c.trace = r.trace AND c.file_id = r.file_id AND c.rank = r.rank
  WHERE r.kind IN ('runtime', 'driver') AND r.external_id IS NOT NULL
    AND (r.api IN ('launch', 'graph_launch', 'memcpy', 'memset') OR g.n IS NOT NULL)
  GROUP BY ALL
),
-- The operator calls, each with the launches its External id links and
-- the GPU work those produced.
_calls AS NOT MATERIALIZED (
  SELECT k.trace, k.rank, k.pid, k.tid, k.kind, k.name, k.ts_ns, k.end_ns, k.dur_ns, k.step, k.phase,
    CASE WHEN cp.rank IS NULL THEN coalesce(l.launches, 0) END AS launches,
    CASE WHEN cp.rank IS NULL THEN CAST(coalesce(l.n, 0) AS BIGINT) END AS gpu_events,
    CASE WHEN cp.rank IS NULL THEN CAST(coalesce(l.d, 0) AS BIGINT) END AS gpu_ns
  FROM evidence_base_events k
  LEFT JOIN _l l ON l.trace = k.trace AND l.rank = k.rank AND l.external_id = k.external_id
  LEFT JOIN _copied cp ON cp.trace = k.trace AND cp.file_id = k.file_id AND cp.rank = k.rank
  WHERE k.kind IN ('cpu_op', 'annotation')
),
-- PASS: _calls ORDER BY trace, rank, pid, tid, ts_ns, end_ns DESC, name
_o AS (
  SELECT k.trace, k.rank, k.step, k.phase, k.name, k.kind, k.ts_ns, k.end_ns, k.dur_ns,
    k.launches, k.gpu_events, k.gpu_ns,
    row_number() OVER (ORDER BY k.trace, k.rank, k.pid, k.tid, k.ts_ns, k.end_ns DESC, k.name) AS id,
    dense_rank() OVER (ORDER BY k.trace, k.rank, k.pid, k.tid) AS th
  FROM _calls k
),
-- At equal times ends come first (typ 0: an operator that ends where the
-- next starts is its sibling), except a zero-length operator's own end
-- (typ 2), which must follow its start: before it, the operator would take
-- its parent's depth and become the parent of the parent's next children
-- (torch 1.13's µs timestamps: aten::empty calls of 0 ns inside forward).
_pt AS (
  SELECT id, th, ts_ns AS t, 1 AS typ, 1 AS d FROM _o
  UNION ALL
  SELECT id, th, end_ns, CASE WHEN end_ns = ts_ns THEN 2 ELSE 0 END, -1 FROM _o
),
_dep AS (
  SELECT id, th, sum(d) OVER (PARTITION BY th ORDER BY t, typ, id ROWS UNBOUNDED PRECEDING) - 1 AS depth
  FROM _pt QUALIFY typ = 1
),
-- A call is nested in one of its own name when an earlier call of that
-- name on the thread (earlier by id: start, then the longer first) ends at
-- or after its end; incl_ns sums the others only.
_outer AS (
  SELECT id, coalesce(max(end_ns) OVER (PARTITION BY th, name ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) < end_ns, true) AS outer_call
  FROM _o
),
_anc AS (
  SELECT c.id AS cid, p.id AS pid
  FROM _dep c ASOF JOIN _dep p ON p.th = c.th AND p.depth = c.depth - 1 AND c.id > p.id
),
_child AS (
  SELECT a.pid AS id, sum(o.dur_ns) AS child_ns FROM _anc a JOIN _o o ON o.id = a.cid GROUP BY a.pid
)
SELECT o.trace, o.rank, o.step, o.phase, o.name,
  count(*) AS count,
  CAST(coalesce(sum(o.dur_ns) FILTER (WHERE u.outer_call), 0) AS BIGINT) AS incl_ns,
  CAST(sum(greatest(0, o.dur_ns - coalesce(c.child_ns, 0))) AS BIGINT) AS self_ns,
  max(o.dur_ns) AS max_ns,
  CAST(sum(o.launches) AS BIGINT) AS launches,
  CAST(sum(o.gpu_events) AS BIGINT) AS gpu_events,
  CAST(sum(o.gpu_ns) AS BIGINT) AS gpu_ns,
  o.kind = 'annotation' AS annotation
FROM _o o JOIN _outer u ON u.id = o.id
LEFT JOIN _child c ON c.id = o.id
GROUP BY ALL
ORDER BY trace, rank, step, phase, self_ns DESC, name
