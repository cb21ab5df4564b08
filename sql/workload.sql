-- workload: what the trace shows about the workload and its framework: training or inference, torch.compile, DDP/FSDP/TorchRec, the DataLoader's iterator, the trace-format era.
-- INCLUDE: evidence_base
--
-- One row per (trace, rank, feature, name): the events that show a feature,
-- counted, with an example name. The findings read it to scope their fixes
-- (analysis/findings/workload.go documents each feature).
--
-- Columns:
-- trace: Trace name. TEXT
-- rank: Rank. INT
-- feature: What the events show (see analysis/findings/workload.go). TEXT
-- name: The event name that shows it (the first seen). TEXT
-- count: Events that show it. COUNT
-- total_ns: Their summed duration. DURATION_NS
--
-- No parameters: the filter (trace, rank, window: evidence_base's PARAMS)
-- is applied when evidence_base_events is built.
SELECT trace, rank, '' AS feature, '' AS name, CAST(0 AS BIGINT) AS count, CAST(0 AS BIGINT) AS total_ns
FROM evidence_base_events WHERE false
