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
-- an ASOF join; of two that start together the longer is the outer, and
-- of two with the same start and end the earlier in the file, as in the
-- cross-view: torch::distributed::reducer::mul_out around the aten::mul
-- it calls, both of one µs span on negative_queue_length_a100). Launches
-- are the runtime/driver calls whose
-- External id is the operator's, and GPU time the GPU events sharing those
-- calls' correlation: the GPU work the operator itself launched (Kineto
-- links a launch to its innermost operator), not its children's. A rank
-- (of a file) whose launching calls mostly carry their own correlation id
-- as External id links none by id: those numbers name no operator, and
-- some equal an operator's id by chance (resnet_2080ti: all 25,928
-- runtime calls, 2,543 of its 9,628 kernel launches matching an
-- operator's id; dlrm_8rank, df_index_resolver_v100 and 8 more shared
-- traces write ids so). There each launching call is the innermost
-- operator's (or annotation's) that is open on its thread when the call
-- starts, the link Kineto makes: the calls join the sweep below, each
-- after the operators that start before it or with it and end later, and
-- an ASOF join finds the last operator started at the depth the call is
-- nested to (the cross-view nests a launch in the operator around it the
-- same way).
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
-- launches: Runtime/driver calls linked to the operator: by External id, or, on a rank whose calls carry their own correlation id as External id, the calls of its thread that start while it is the innermost operator open (see above). COUNT
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
-- query up to its PASS line: the operator calls and, on the ranks above,
-- the launching calls), in _o's id order: the rest of this file is the
-- definition it follows, and a test holds the two equal on every shared
-- trace.
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
-- the GPU work those produced (none by id on the ranks above), and on
-- those ranks the launching calls themselves, one launch each with the
-- GPU work it produced.
_calls AS NOT MATERIALIZED (
  SELECT k.trace, k.rank, k.pid, k.tid, k.file_id, k.idx, k.kind, k.name, k.ts_ns, k.end_ns, k.dur_ns, k.step, k.phase,
    CASE WHEN cp.rank IS NULL THEN coalesce(l.launches, 0) ELSE 0 END AS launches,
    CAST(CASE WHEN cp.rank IS NULL THEN coalesce(l.n, 0) ELSE 0 END AS BIGINT) AS gpu_events,
    CAST(CASE WHEN cp.rank IS NULL THEN coalesce(l.d, 0) ELSE 0 END AS BIGINT) AS gpu_ns
  FROM evidence_base_events k
  LEFT JOIN _l l ON l.trace = k.trace AND l.rank = k.rank AND l.external_id = k.external_id
  LEFT JOIN _copied cp ON cp.trace = k.trace AND cp.file_id = k.file_id AND cp.rank = k.rank
  WHERE k.kind IN ('cpu_op', 'annotation')
  UNION ALL
  SELECT r.trace, r.rank, r.pid, r.tid, r.file_id, r.idx, r.kind, r.name, r.ts_ns, r.end_ns, r.dur_ns, r.step, r.phase,
    1, CAST(coalesce(g.n, 0) AS BIGINT), CAST(coalesce(g.d, 0) AS BIGINT)
  FROM evidence_base_events r
  SEMI JOIN _copied c ON c.trace = r.trace AND c.file_id = r.file_id AND c.rank = r.rank
  LEFT JOIN _gpu g ON g.trace = r.trace AND g.rank = r.rank AND g.correlation = r.correlation
  WHERE r.kind IN ('runtime', 'driver') AND r.correlation IS NOT NULL
    AND (r.api IN ('launch', 'graph_launch', 'memcpy', 'memset') OR g.n IS NOT NULL)
),
-- PASS: _calls ORDER BY trace, rank, pid, tid, ts_ns, end_ns DESC, file_id, idx
_o AS (
  SELECT k.trace, k.rank, k.step, k.phase, k.name, k.kind, k.ts_ns, k.end_ns, k.dur_ns,
    k.launches, k.gpu_events, k.gpu_ns,
    row_number() OVER (ORDER BY k.trace, k.rank, k.pid, k.tid, k.ts_ns, k.end_ns DESC, k.file_id, k.idx) AS id,
    dense_rank() OVER (ORDER BY k.trace, k.rank, k.pid, k.tid) AS th,
    k.kind IN ('cpu_op', 'annotation') AS op
  FROM _calls k
),
-- At equal times ends come first (typ 0: an operator that ends where the
-- next starts is its sibling), except a zero-length operator's own end
-- (typ 2), which must follow its start: before it, the operator would take
-- its parent's depth and become the parent of the parent's next children
-- (torch 1.13's µs timestamps: aten::empty calls of 0 ns inside forward).
-- A launching call is a point (typ 1, d 0) that opens nothing.
_pt AS (
  SELECT id, th, ts_ns AS t, 1 AS typ, CASE WHEN op THEN 1 ELSE 0 END AS d FROM _o
  UNION ALL
  SELECT id, th, end_ns, CASE WHEN end_ns = ts_ns THEN 2 ELSE 0 END, -1 FROM _o WHERE op
),
-- Each start's open count less one: an operator's depth, and for a call
-- the depth of the innermost operator open at its start, whose ASOF join
-- (_anc) then finds that operator.
_dep AS (
  SELECT id, th, sum(d) OVER (PARTITION BY th ORDER BY t, typ, id ROWS UNBOUNDED PRECEDING) - 1 AS depth
  FROM _pt QUALIFY typ = 1
),
-- A call is nested in one of its own name when an earlier call of that
-- name on the thread (earlier by id: start, then the longer first) ends at
-- or after its end; incl_ns sums the others only.
_outer AS (
  SELECT id, coalesce(max(end_ns) OVER (PARTITION BY th, name ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) < end_ns, true) AS outer_call
  FROM _o WHERE op
),
-- An operator's parent is the last earlier operator one level up; a
-- call's is the last earlier operator at its depth.
_anc AS (
  SELECT c.id AS cid, p.id AS pid
  FROM (SELECT d.*, o.op FROM _dep d JOIN _o o ON o.id = d.id) c
  ASOF JOIN (SELECT d.* FROM _dep d SEMI JOIN _o o ON o.id = d.id AND o.op) p
    ON p.th = c.th AND p.depth = CASE WHEN c.op THEN c.depth - 1 ELSE c.depth END AND c.id > p.id
),
-- The time of an operator's direct child operators, and the launches of
-- the calls directly in it.
_child AS (
  SELECT a.pid AS id, sum(o.dur_ns) FILTER (WHERE o.op) AS child_ns,
    sum(o.launches) FILTER (WHERE NOT o.op) AS launches, sum(o.gpu_events) FILTER (WHERE NOT o.op) AS gpu_events,
    sum(o.gpu_ns) FILTER (WHERE NOT o.op) AS gpu_ns
  FROM _anc a JOIN _o o ON o.id = a.cid GROUP BY a.pid
)
SELECT o.trace, o.rank, o.step, o.phase, o.name,
  count(*) AS count,
  CAST(coalesce(sum(o.dur_ns) FILTER (WHERE u.outer_call), 0) AS BIGINT) AS incl_ns,
  CAST(sum(greatest(0, o.dur_ns - coalesce(c.child_ns, 0))) AS BIGINT) AS self_ns,
  max(o.dur_ns) AS max_ns,
  CAST(sum(o.launches + coalesce(c.launches, 0)) AS BIGINT) AS launches,
  CAST(sum(o.gpu_events + coalesce(c.gpu_events, 0)) AS BIGINT) AS gpu_events,
  CAST(sum(o.gpu_ns + coalesce(c.gpu_ns, 0)) AS BIGINT) AS gpu_ns,
  o.kind = 'annotation' AS annotation
FROM _o o JOIN _outer u ON u.id = o.id
LEFT JOIN _child c ON c.id = o.id
GROUP BY ALL
ORDER BY trace, rank, step, phase, self_ns DESC, name
