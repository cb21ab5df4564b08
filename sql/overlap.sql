-- overlap: communication time and the part of it overlapped by computation, per rank, keyed by step.
-- INCLUDE: evidence_base
--
-- HTA's comm/comp overlap: |union(COMM) ∩ union(COMP)| / |union(COMM)|,
-- with |A ∩ B| = |A| + |B| - |A ∪ B|. Unions are summed from per-event
-- contributions (max-end-so-far, see ranks.sql), so every ns column adds up
-- exactly over a rank's rows and comm_overlap_pct is recomputed after a
-- merge from overlap_ns / comm_ns. Classes are tb_kernel_class's
-- (views.sql), as in ranks.sql (COMM includes vLLM cross_device_reduce,
-- DeepEP and PyTorch symmetric-memory kernels, which HTA counts as
-- computation).
--
-- Columns:
-- trace: Trace name. TEXT
-- rank: Rank. INT
-- step: Step number (-1 outside every step). INT
-- phase: Phase of the step. TEXT
-- comm_ns: Union of COMM kernel intervals (contributions). DURATION_NS
-- compute_ns: Union of COMP kernel intervals (contributions). DURATION_NS
-- overlap_ns: Communication time during which computation ran. DURATION_NS
-- comm_overlap_pct: overlap_ns / comm_ns (NULL without communication). PCT
-- comm_kernels: COMM kernels. COUNT
-- KEYED: e.kind = 'kernel'
--
-- No parameters: the filter (trace, rank, window: evidence_base's PARAMS)
-- is applied when evidence_base_events is built.
--
-- Steps and phases: an event's step and phase are those of
-- evidence_base_events (sql/evidence_base.sql, which documents how steps are
-- found). %evidence builds that table for the filter before it runs this
-- file; to run this file by hand, run sql/evidence_base.sql first.
WITH
-- Communication and computation kernels only: a transfer written as a
-- kernel (class MEM, MTIA's dma_request) is neither. pm_cls and pm_cc are
-- the latest ends before each among its class and among both classes, in
-- the one order of evidence_base_gpu (sql/evidence_base.sql).
_w AS (
  SELECT trace, rank, step, phase, ts_ns, end_ns, class, pm_cls, pm_cc
  FROM evidence_base_gpu
  WHERE kind = 'kernel' AND class IN ('COMM', 'COMP')
),
_a AS (
  SELECT trace, rank, step, phase,
    coalesce(sum(greatest(0, end_ns - greatest(ts_ns, coalesce(pm_cls, ts_ns)))) FILTER (WHERE class = 'COMM'), 0) AS comm,
    coalesce(sum(greatest(0, end_ns - greatest(ts_ns, coalesce(pm_cls, ts_ns)))) FILTER (WHERE class = 'COMP'), 0) AS comp,
    sum(greatest(0, end_ns - greatest(ts_ns, coalesce(pm_cc, ts_ns)))) AS cc,
    count(*) FILTER (WHERE class = 'COMM') AS comm_kernels
  FROM _w GROUP BY ALL
)
SELECT trace, rank, step, phase,
  CAST(comm AS BIGINT) AS comm_ns, CAST(comp AS BIGINT) AS compute_ns,
  CAST(comm + comp - cc AS BIGINT) AS overlap_ns,
  CASE WHEN comm > 0 THEN round(100.0 * (comm + comp - cc) / comm, 2) END AS comm_overlap_pct,
  comm_kernels
FROM _a
ORDER BY trace, rank, step, phase
