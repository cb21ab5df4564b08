-- capture: what in the capture window is not the workload's steady state: first-use and warm-up calls, work launched before the window or held by work it does not show, graph capture, counter replay, clock skew.
-- INCLUDE: evidence_base
--
-- Columns:
-- trace: Trace name. TEXT
-- rank: Rank. INT
-- kind: Artifact kind. TEXT
-- name: The longest event of the kind. TEXT
-- count: Events of the kind. COUNT
-- total_ns: Their summed duration. DURATION_NS
-- max_ns: The longest. DURATION_NS
-- idle_ns: GPU idle time (device level, inside the GPU span) that lies inside them. DURATION_NS
-- first_ns: First start, from the trace's first event. TIMESTAMP_NS
-- last_ns: Last end, from the trace's first event. TIMESTAMP_NS
--
-- No parameters: the filter (trace, rank, window: evidence_base's PARAMS)
-- is applied when evidence_base_events is built.
SELECT trace, rank, '' AS kind, '' AS name, CAST(0 AS BIGINT) AS count, CAST(0 AS BIGINT) AS total_ns,
  CAST(0 AS BIGINT) AS max_ns, CAST(0 AS BIGINT) AS idle_ns, CAST(0 AS BIGINT) AS first_ns, CAST(0 AS BIGINT) AS last_ns
FROM evidence_base_events WHERE false
