-- collectives: each rank's collective time split into waiting for the last rank to arrive and transfer, with the ranks that arrived last.
-- INCLUDE: evidence_base
--
-- One row per (trace, rank, collective, pg).
--
-- Columns:
-- trace: Trace name. TEXT
-- rank: Rank. INT
-- collective: Collective name. TEXT
-- pg: Process group. TEXT
-- count: Collective kernels. COUNT
-- total_ns: Their summed duration. DURATION_NS
-- wait_ns: Time inside them before the last rank arrived. DURATION_NS
-- transfer_ns: Time after the last arrival. DURATION_NS
-- late: Instances in which this rank arrived last. COUNT
-- bytes: Message bytes. BYTES
--
-- No parameters: the filter (trace, rank, window: evidence_base's PARAMS)
-- is applied when evidence_base_events is built.
SELECT trace, rank, '' AS collective, '' AS pg, CAST(0 AS BIGINT) AS count, CAST(0 AS BIGINT) AS total_ns,
  CAST(0 AS BIGINT) AS wait_ns, CAST(0 AS BIGINT) AS transfer_ns, CAST(0 AS BIGINT) AS late, CAST(0 AS BIGINT) AS bytes
FROM evidence_base_events WHERE false
