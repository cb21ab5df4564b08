-- workload: what the trace shows about the workload and its framework: training or inference, torch.compile, DDP/FSDP/TorchRec, the DataLoader's iterator, the trace-format era.
-- INCLUDE: evidence_base
--
-- One row per (trace, rank, feature): the events that show a feature,
-- counted, with an example (the first name seen). The findings read it to
-- scope their fixes (analysis/findings/workload.go). A feature the trace does
-- not show has no row: no row is not proof of absence where the capture
-- could not record it (no python frames without with_stack).
--
-- Features (host events are cpu_op, user annotations, and the legacy
-- profiler's uncategorised events; GPU-side copies of annotations are not
-- counted):
-- - cpu_ops: CPU operators that compute (tb_host_op of views.sql: cpu_op
--     events; the legacy profiler's aten:: events; not bare allocations such
--     as aten::empty): without them no feature below can show, and the
--     absence of backward says nothing.
-- - backward: operators of the autograd engine (tb_backward_op): names
--     ending in Backward, Backward0, Backward1, ... or _backward
--     (aten::convolution_backward), and autograd::engine::evaluate_function: ...
-- - optimizer: Optimizer.step#... and Optimizer.zero_grad#... annotations
--     (tb_optimizer_op).
-- The step phase of a ProfilerStep# loop (sql/evidence_base.sql) is decided
-- by the same three macros.
-- - compiled: torch.compile in use: Torch-Compiled Region: ..., TorchDynamo
--     Cache Lookup, ## Call CompiledFxGraph ... ##; python frames of code that only a
--     compiled graph runs: torch/_inductor/, AOTAutograd's
--     runtime_wrappers.py, Dynamo's record_pregraph_bytecode, and vLLM's
--     compiled dispatch (vllm/compilation/ wrapper, backends,
--     piecewise_backend, caching, compiler_interface).
-- - aot_autograd: CompiledFunction/CompiledFunctionBackward, AOTAutograd's
--     operators: torch.compile's, or functorch's aot_function before
--     PyTorch 2.0 (df_index_resolver_v100, 2022, with eager kernels); the
--     workload counts them as compiled only beside another sign of
--     PyTorch 2 (Dynamo's frames, Triton kernels, a stated version).
-- - dynamo_frames: other python frames under torch/_dynamo/ or
--     torch/_functorch/: PyTorch 2 is installed, but eager code calls them
--     too (torch._disable_dynamo wraps optimizer and checkpoint functions),
--     so they do not prove compilation.
-- - inductor_kernels: kernels named triton_* (Inductor's naming). Not proof
--     of torch.compile by themselves: vLLM and SGLang ship Triton kernels.
-- - ddp: DistributedDataParallel.forward, DDP's reducer operators
--     (torch::distributed::reducer::..., torch.distributed.ddp.reducer::...),
--     python frames of torch/nn/parallel/distributed.py.
-- - allreduce_in_backward: c10d::allreduce* operators inside an autograd
--     engine operator of the same thread: gradients reduced from backward
--     hooks (DDP's reducer, or a compiled equivalent); the example is the
--     innermost such engine operator ("autograd::engine::evaluate_function:
--     CompiledFunctionBackward": the compiled backward's graph issues them).
-- - fsdp: FullyShardedDataParallel*, FSDP::* and python frames of
--     torch/distributed/fsdp/ or torch/distributed/_composable/fsdp/.
-- - torchrec: names containing torchrec or KJT, TorchRec's awaitables
--     (EmbeddingBagCollectionAwaitable, PooledEmbeddingsAwaitable, ...),
--     its pipeline's ## sparse_data_dist ## ranges, python frames of torchrec/.
-- - torchrec_pipeline: TorchRec's pipeline ranges ## sparse_data_dist ## and
--     ## wait_sparse_data_dist ##: TrainPipelineSparseDist (or a pipeline
--     built on it) runs the input dist under the previous batch.
-- - torchrec_bucketize: fbgemm::block_bucketize_sparse_features operators:
--     TorchRec's input dist bucketizes the features for row-wise sharding,
--     and builds the bucketized KeyedJaggedTensor without length_per_key
--     (negative_queue_length_a100).
-- - hf_pipeline: python frames of transformers/pipelines/: a Hugging Face
--     pipeline runs the loop and builds its DataLoader (its num_workers is
--     the pipeline call's).
-- - hf_chunk_forward: those ChunkPipelines' _forward frames, one a chunk:
--     count is how many times the pipeline ran the model (h100_owlv2: 5,
--     one per candidate label).
-- - hf_chunk_forward_gpu: the GPU time of the work those _forward frames
--     launched (kernels, copies and memsets whose launching call started
--     inside one: evidence_base_events' launch_ts): count is the frames,
--     total_ns the GPU time (h100_owlv2: 5 runs, each encoding the same
--     image, 552 ms).
-- - hf_chunk_pipeline: python frames of the transformers pipelines that are
--     ChunkPipelines (zero-shot object detection and classification,
--     question answering, document question answering, mask generation,
--     speech recognition, token classification): transformers runs their
--     DataLoader with at most one worker, whatever num_workers says.
-- - aiter_torch_gemm: python frames of aiter's tuned_gemm.py torch_gemm:
--     its gemm_a16w16 ran a GEMM through torch (F.linear, hipBLASLt's
--     default heuristic), what it does for a shape without a tuned entry;
--     count is the calls. aiter_torch_gemm_gpu: the GPU time of the work
--     those calls launched, as hf_chunk_forward_gpu's
--     (sglang_qwen3_prefilldecode_mi300x: 144 calls).
-- - sglang_overlap: python frames of SGLang's overlap_utils.py (future
--     token ids resolved on the GPU): the overlap scheduler is on.
-- - activation_checkpointing: python frames of torch/utils/checkpoint.py:
--     activation checkpointing recomputes the forward in the backward to
--     hold fewer activations (mi300x_resnet_act_checkpoint).
-- - dataloader_single / dataloader_workers: enumerate(DataLoader)#
--     _SingleProcessDataLoaderIter.__next__ (num_workers=0) /
--     _MultiProcessingDataLoaderIter.__next__ (workers).
-- - dataloader_gpu_idle: the GPU idle time inside the enumerate(DataLoader)#
--     calls (total_ns: each call's time inside the rank's GPU span less
--     the rank's GPU busy time in it, evidence_base_busy; covered_ns: those
--     calls' time inside the span; count: the calls): the DataLoader rule's
--     mechanism, the loop waiting for batches while the GPU has nothing
--     to run (a loading the GPU's work hides leaves the GPU busy).
-- - zero_grad_gpu_idle: the same for the Optimizer.zero_grad#... ranges:
--     zeroing every gradient launches a kernel per parameter, with the GPU
--     idle when the host is behind (resnet50_num_workers_4: 38 ms of its
--     187 ms of GPU idle).
-- - optimizer_gpu_idle: the same for the optimizer's outermost
--     Optimizer.step#... ranges (one nested in another counts once): its
--     for-loop implementation launches a few kernels per parameter
--     (dlrm_8rank's Adagrad: 64 launches for 16 dense parameters, 0.57 ms
--     of rank 7's 8.3 ms of GPU idle).
-- - foreach_ops: multi-tensor operators, aten::_foreach_* and
--     aten::_fused_*: an optimizer's foreach or fused implementation (or
--     other code) updates a list of tensors in a few launches.
-- - compiled_gpu_idle: the same for the outermost Torch-Compiled Region
--     ranges (none of its thread around them): the idle a CUDA-graph replay
--     of the compiled model can reach (xdit_sd35_mi300x: 370 ms of its 459
--     ms; the eager text encoders hold most of the rest).
-- - view_ops: the aten::view and aten::as_strided operators, which make a
--     view of a tensor without allocating or launching anything, and which
--     recorded no "Call stack" (a 2021 capture with with_stack=True walks
--     the stack for each operator of the Python thread): their mean time
--     (total_ns / count) is what the host and the profiler's recording take
--     per operator call (0.3-5 us in the captures of current hosts tracebook
--     was checked on; 24.6 us on nccl_data_a100, whose host-bound finding is
--     then capped and its fix checks the host first).
-- - legacy_categories: events whose cat is Operator, Runtime or Kernel
--     (kineto up to 2021: about PyTorch 1.8-1.10).
-- - torch_version: the version a metadata key "torch_version" states (as
--     example; count is the files that state it, total_ns 0).
-- - python_version: the Python version a process name states, where the
--     profiler named the process after its executable ("python3.8":
--     df_index_resolver_v100), as example ("3.8"; count 1, total_ns 0);
--     the highest where names differ. None where the names say no version
--     ("python3", "python").
-- - record_shapes: CPU operators that carry "Input Dims" (captured with
--     record_shapes=True, which adds host time to every operator), among
--     the first 200,000 events of each file: the profiler records shapes for
--     every operator or for none, and the zone maps of tb_events' idx skip
--     the rest of a large file. A capture setting, read whatever the
--     window: one row per rank (example: the first such operator; count 1,
--     total_ns 0).
-- - gemm_shapes: the matrix products whose shapes and bf16 or fp16 operands
--     the operators recorded (aten::mm, addmm, bmm and baddbmm with "Input
--     Dims" and "Input type", captured with record_shapes=True), and that
--     launched GPU work the trace holds: count is the calls, total_ns the
--     GPU time of the work their launches produced (linked by External id
--     and correlation, as the ops area's gpu_ns), gemm_flops and gemm_bytes
--     what their shapes make them compute and move at the least. The
--     report sets these against the device's peaks (analysis/device): a
--     GEMM's roofline. Other operand types (fp32, whose peak depends on
--     TF32 settings the trace does not record; fp8) and the GEMMs of
--     vendor or custom operators are not read.
-- - gemm_misaligned: the calls among those (bf16 or fp16 operands, and
--     fp32 on ranks that ran align1 kernels) where a matrix's leading
--     dimension (its row stride) is not a multiple of 16 bytes (8
--     elements of bf16 or fp16, 4 of fp32), which rules out cuBLAS's
--     wider kernels. With "Input Strides" recorded the operands' layouts
--     say which dimension leads: K or, transposed, M for the first
--     operand, N or, transposed, K for the second, N for the result (the
--     weight-gradient mm of a linear layer, [out, tokens] transposed by
--     [tokens, in], leads with out and in, whatever the token count); a
--     call whose operand is neither row- nor column-major, or leads with
--     a stride other than its dimension (a slice), is not read, nor is a
--     vector product (M, K or N of 1). Without strides the operands are
--     taken as row-major: K and N. total_ns is their GPU time (calls
--     whose GPU work is not linked count too, with none), and the example
--     the shape with the most of it: "aten::bmm [16, 5185, 64] by
--     [16, 64, 5185] c10::BFloat16 N=5185".
-- - conv_batch: the forward convolutions (aten::convolution) whose input's
--     shape was recorded: count is the calls, the example the batch most
--     of them take (the first dimension of the input: "10"), the samples
--     each step puts through the model on this rank where the
--     convolutions see the whole batch, as a CNN's do.
-- No trace seen states a vLLM or SGLang version (a pip list in metadata
-- names installed packages, not the workload), so none is read.
--
-- Columns:
-- trace: Trace name. TEXT
-- rank: Rank. INT
-- feature: What the events show (the list above). TEXT
-- example: One event name that shows it, the first seen: an example of the feature, not the name of every event counted. TEXT
-- count: Events that show it. COUNT
-- total_ns: Their summed duration (nested events counted again). DURATION_NS
-- covered_ns: The length of the union of their intervals: the time during which at least one of them ran; for compiled and aot_autograd (dataloader_gpu_idle, zero_grad_gpu_idle, optimizer_gpu_idle, compiled_gpu_idle: the calls' time inside the GPU span; NULL otherwise). DURATION_NS
-- gemm_flops: gemm_shapes only: the floating-point operations of the calls' matrix products, 2 x batch x M x K x N each; NULL for the other features. COUNT
-- gemm_bytes: gemm_shapes only: the least bytes those calls move, each operand read and the result written once at 2 bytes an element; NULL for the other features. BYTES
-- KEYED: e.kind IN ('cpu_op', 'annotation', 'other', 'kernel') plus python frames and categories from events
--
-- PARAMS: the four of evidence_base: $1 trace (TEXT, '' = every trace), $2
--   rank (INT, -1 = every rank), $3 window start and $4 window end
--   (DURATION_NS from the trace's first event, 0 = open). Host events come
--   from evidence_base_events, built for the whole filter; python frames and
--   the trace's own categories, which that table leaves out, are read here
--   from events under the same filter.
WITH
_t0 AS (
  SELECT * FROM tb_trace_t0($1::VARCHAR)
),
_host AS NOT MATERIALIZED (
  SELECT trace, rank, pid, tid, kind, name, ts_ns, dur_ns, end_ns
  FROM evidence_base_events
  WHERE kind IN ('cpu_op', 'annotation', 'other', 'kernel') AND name IS NOT NULL
),
-- The features a host event or kernel shows, decided once per distinct kind
-- and name (a trace repeats a few hundred names over millions of events:
-- ×21 vLLM, this preset 0.85 s → 0.75 s), then joined back to the events.
_hfn AS (
  SELECT kind, name, unnest([
    CASE WHEN tb_host_op(kind, name) THEN 'cpu_ops' END,
    CASE WHEN tb_backward_op(kind, name) THEN 'backward' END,
    CASE WHEN tb_optimizer_op(kind, name) THEN 'optimizer' END,
    CASE WHEN kind <> 'kernel' AND (starts_with(name, 'Torch-Compiled Region') OR name = 'TorchDynamo Cache Lookup'
      OR starts_with(name, '## Call CompiledFxGraph')) THEN 'compiled' END,
    CASE WHEN kind <> 'kernel' AND name IN ('CompiledFunction', 'CompiledFunctionBackward') THEN 'aot_autograd' END,
    CASE WHEN kind = 'kernel' AND starts_with(name, 'triton_') THEN 'inductor_kernels' END,
    CASE WHEN kind <> 'kernel' AND (starts_with(name, 'DistributedDataParallel') OR tb_ddp_reducer_op(name)) THEN 'ddp' END,
    CASE WHEN kind <> 'kernel' AND (starts_with(name, 'FullyShardedDataParallel') OR starts_with(name, 'FSDP::'))
      THEN 'fsdp' END,
    CASE WHEN kind <> 'kernel' AND (contains(lower(name), 'torchrec') OR contains(name, 'KJT')
      OR regexp_matches(name, '(EmbeddingBagCollection|EmbeddingCollection|PooledEmbeddings?)\w*Awaitable')
      OR regexp_matches(name, '^## (wait_)?sparse_data_dist')) THEN 'torchrec' END,
    CASE WHEN kind <> 'kernel' AND regexp_matches(name, '^## (wait_)?sparse_data_dist') THEN 'torchrec_pipeline' END,
    CASE WHEN kind = 'cpu_op' AND name = 'fbgemm::block_bucketize_sparse_features' THEN 'torchrec_bucketize' END,
    CASE WHEN kind <> 'kernel' AND starts_with(name, 'enumerate(DataLoader)#_SingleProcessDataLoaderIter') THEN 'dataloader_single' END,
    CASE WHEN kind <> 'kernel' AND starts_with(name, 'enumerate(DataLoader)#_MultiProcessingDataLoaderIter') THEN 'dataloader_workers' END,
    CASE WHEN kind = 'cpu_op' AND (starts_with(name, 'aten::_foreach_') OR starts_with(name, 'aten::_fused_')) THEN 'foreach_ops' END
  ]) AS feature
  FROM (SELECT DISTINCT kind, name FROM _host)
),
_hf AS (
  SELECT h.trace, h.rank, h.name, h.ts_ns, h.dur_ns, f.feature
  FROM _host h JOIN (SELECT * FROM _hfn WHERE feature IS NOT NULL) f ON f.kind = h.kind AND f.name = h.name
),
-- The python frame names that show a feature, tested once per distinct
-- string of the database (tb_strings, schema.sql), not on every frame.
_pyn AS (
  SELECT id FROM tb_strings
  WHERE regexp_matches(s, '(^|/)(torch/_(inductor|dynamo|functorch)/|vllm/compilation/|torch/nn/parallel/distributed\.py|torch/distributed/(fsdp|_composable/fsdp)/|torchrec/|transformers/pipelines/|sglang/srt/managers/overlap_utils\.py|torch/utils/checkpoint\.py|aiter/tuned_gemm\.py\(\d+\): torch_gemm$)')
),
-- Read from tb_events (schema.sql) by ids, the strings looked up for the
-- rows kept (_raw): the events view would look up every event's strings
-- first. Materialised, so that the lookups stay after the filter: joined
-- in the same step, DuckDB carried tb_dict's list through the join with
-- _t0 on every event (×21 vLLM: 32 s).
_raw0 AS MATERIALIZED (
  SELECT e.trace_id, e.rank, e.kind, e.cat_id, e.name_id, e.ts_ns, e.dur_ns
  FROM tb_events e JOIN _t0 t ON t.trace_id = e.trace_id
  WHERE ((e.kind = 'python' AND e.name_id IN (SELECT id FROM _pyn))
      OR e.cat_id IN (SELECT id FROM tb_strings WHERE s IN ('Operator', 'Runtime', 'Kernel')))
    AND ($2::INTEGER < 0 OR e.rank = $2::INTEGER)
    AND ($3::BIGINT <= 0 OR e.ts_ns - t.t0 >= $3::BIGINT)
    AND ($4::BIGINT <= 0 OR e.ts_ns - t.t0 < $4::BIGINT)
),
_raw AS (
  SELECT d.strings[r.trace_id + 1] AS trace, r.rank, r.kind, d.strings[r.cat_id + 1] AS cat,
    d.strings[r.name_id + 1] AS name, r.ts_ns, r.dur_ns
  FROM _raw0 r, tb_dict d
),
_rf AS (
  SELECT trace, rank, name, ts_ns, dur_ns,
    CASE
      WHEN kind <> 'python' THEN 'legacy_categories'
      WHEN regexp_matches(name, '(^|/)(torch/_inductor/|torch/_functorch/_aot_autograd/runtime_wrappers\.py|vllm/compilation/(wrapper|backends|piecewise_backend|caching|compiler_interface)\.py)')
        OR regexp_matches(name, '(^|/)torch/_dynamo/utils\.py\(\d+\): record_pregraph_bytecode') THEN 'compiled'
      WHEN regexp_matches(name, '(^|/)torch/_(dynamo|functorch)/') THEN 'dynamo_frames'
      WHEN regexp_matches(name, '(^|/)torch/nn/parallel/distributed\.py') THEN 'ddp'
      WHEN regexp_matches(name, '(^|/)torch/distributed/(fsdp|_composable/fsdp)/') THEN 'fsdp'
      WHEN regexp_matches(name, '(^|/)torchrec/') THEN 'torchrec'
      WHEN regexp_matches(name, '(^|/)transformers/pipelines/(zero_shot_object_detection|zero_shot_classification|question_answering|document_question_answering|mask_generation|automatic_speech_recognition|token_classification)\.py\(\d+\): _forward$') THEN 'hf_chunk_forward'
      WHEN regexp_matches(name, '(^|/)transformers/pipelines/(zero_shot_object_detection|zero_shot_classification|question_answering|document_question_answering|mask_generation|automatic_speech_recognition|token_classification)\.py') THEN 'hf_chunk_pipeline'
      WHEN regexp_matches(name, '(^|/)transformers/pipelines/') THEN 'hf_pipeline'
      WHEN regexp_matches(name, '(^|/)sglang/srt/managers/overlap_utils\.py') THEN 'sglang_overlap'
      WHEN regexp_matches(name, '(^|/)torch/utils/checkpoint\.py') THEN 'activation_checkpointing'
      WHEN regexp_matches(name, '(^|/)aiter/tuned_gemm\.py\(\d+\): torch_gemm$') THEN 'aiter_torch_gemm'
    END AS feature
  FROM _raw
),
_bwd AS (
  SELECT trace, rank, pid, tid, name, ts_ns, end_ns FROM _host
  WHERE kind = 'cpu_op' AND starts_with(name, 'autograd::engine::evaluate_function: ')
),
_arb AS (
  SELECT * FROM (
    SELECT a.trace, a.rank, a.ts_ns, a.dur_ns, 'allreduce_in_backward' AS feature,
      (SELECT arg_max(b.name, b.ts_ns) FROM _bwd b WHERE b.trace = a.trace AND b.rank = a.rank AND b.pid = a.pid AND b.tid = a.tid
        AND a.ts_ns >= b.ts_ns AND a.end_ns <= b.end_ns) AS name
    FROM _host a
    WHERE a.kind = 'cpu_op' AND starts_with(a.name, 'c10d::allreduce')
  )
  WHERE name IS NOT NULL
),
_tv AS (
  SELECT trace, rank, 'torch_version' AS feature,
    regexp_extract(CAST(metadata AS VARCHAR), '"torch_version":\s*"([^"]+)"', 1) AS name,
    CAST(NULL AS BIGINT) AS ts_ns, CAST(0 AS BIGINT) AS dur_ns
  FROM traces
  WHERE ($1::VARCHAR = '' OR trace = $1::VARCHAR) AND ($2::INTEGER < 0 OR rank = $2::INTEGER)
),
_pyv AS (
  SELECT trace, rank, 'python_version' AS feature,
    max_by(v, string_split(v, '.')[2]::INTEGER) AS name,
    CAST(NULL AS BIGINT) AS ts_ns, CAST(0 AS BIGINT) AS dur_ns
  FROM (
    SELECT DISTINCT trace, rank, regexp_extract(process_name, '^python(3\.\d+)$', 1) AS v
    FROM threads
    WHERE ($1::VARCHAR = '' OR trace = $1::VARCHAR) AND ($2::INTEGER < 0 OR rank = $2::INTEGER)
  )
  WHERE v <> ''
  GROUP BY trace, rank
),
-- One row per rank: whether its operators carry their input shapes.
_rs0 AS (
  SELECT e.trace_id, e.rank, arg_min(e.name_id, e.idx) AS name_id, count(*) AS n
  FROM tb_events e JOIN _t0 t ON t.trace_id = e.trace_id
  WHERE e.idx < 200000 AND e.kind = 'cpu_op' AND contains(e.args, '"Input Dims"')
    AND ($2::INTEGER < 0 OR e.rank = $2::INTEGER)
  GROUP BY e.trace_id, e.rank
),
_rs AS (
  SELECT d.strings[r.trace_id + 1] AS trace, r.rank, 'record_shapes' AS feature, d.strings[r.name_id + 1] AS name,
    CAST(NULL AS BIGINT) AS ts_ns, CAST(0 AS BIGINT) AS dur_ns
  FROM _rs0 r, tb_dict d
),
-- The view operators that recorded no stack: a 2021 capture with
-- with_stack=True writes a "Call stack" arg on the operators of the thread
-- that ran Python, and walking it is part of their time (resnet50_num_workers_0:
-- 19 µs on the main thread, 4 µs on the autograd thread).
_vo0 AS MATERIALIZED (
  SELECT e.trace_id, e.rank, e.name_id, e.ts_ns, e.dur_ns
  FROM tb_events e JOIN _t0 t ON t.trace_id = e.trace_id
  WHERE e.kind = 'cpu_op' AND e.name_id IN (SELECT id FROM tb_strings WHERE s IN ('aten::view', 'aten::as_strided'))
    AND (e.args IS NULL OR NOT contains(e.args, '"Call stack"'))
    AND ($2::INTEGER < 0 OR e.rank = $2::INTEGER)
    AND ($3::BIGINT <= 0 OR e.ts_ns - t.t0 >= $3::BIGINT)
    AND ($4::BIGINT <= 0 OR e.ts_ns - t.t0 < $4::BIGINT)
),
_vo AS (
  SELECT d.strings[v.trace_id + 1] AS trace, v.rank, 'view_ops' AS feature, d.strings[v.name_id + 1] AS name, v.ts_ns, v.dur_ns
  FROM _vo0 v, tb_dict d
),
-- The GEMM operators with their shapes, read from tb_events by ids (the
-- args are not in evidence_base_events; the name strings are not looked
-- up: a join with tb_dict carries its list through every row): the
-- operand dimensions and types of the two matrices (the first two inputs
-- of mm and bmm, the second and third of addmm and baddbmm, after the
-- bias), both read in one parse of the args, for the calls whose args
-- name a type read here (the others are not parsed): bf16 and fp16, and
-- fp32 only on ranks that ran align1 kernels (_al1), where its shapes
-- can name a misaligned dimension (parsing every fp32 GEMM's args cost
-- trace_diff_control_a100's preset a third more time).
_al1 AS (
  SELECT DISTINCT trace_id, rank FROM tb_events
  WHERE kind = 'kernel' AND name_id IN (SELECT id FROM tb_strings WHERE contains(s, 'align1'))
),
_gm0 AS (
  SELECT e.trace_id, e.rank, e.name_id, e.ts_ns, e.external_id,
    CASE WHEN e.name_id IN (SELECT id FROM tb_strings WHERE s IN ('aten::mm', 'aten::bmm')) THEN 1 ELSE 2 END AS o,
    json_extract(e.args, ['$."Input Dims"', '$."Input type"', '$."Input Strides"']) AS j
  FROM tb_events e JOIN _t0 t ON t.trace_id = e.trace_id
  WHERE e.kind = 'cpu_op' AND e.name_id IN (SELECT id FROM tb_strings WHERE s IN ('aten::mm', 'aten::addmm', 'aten::bmm', 'aten::baddbmm'))
    AND e.external_id IS NOT NULL AND contains(e.args, '"Input Dims"')
    AND (contains(e.args, 'c10::BFloat16') OR contains(e.args, 'c10::Half')
      OR (contains(e.args, '"float"') AND (e.trace_id, e.rank) IN (SELECT (trace_id, rank) FROM _al1)))
    AND ($2::INTEGER < 0 OR e.rank = $2::INTEGER)
    AND ($3::BIGINT <= 0 OR e.ts_ns - t.t0 >= $3::BIGINT)
    AND ($4::BIGINT <= 0 OR e.ts_ns - t.t0 < $4::BIGINT)
),
-- Cast once and kept, so that no filter below casts again.
_gm1 AS MATERIALIZED (
  SELECT trace_id, rank, name_id, ts_ns, external_id, d[o] AS a, d[o + 1] AS b, ty[o] AS ta, ty[o + 1] AS tb,
    st[o] AS sa, st[o + 1] AS sb
  FROM (SELECT *, TRY_CAST(j[1] AS BIGINT[][]) AS d, TRY_CAST(j[2] AS VARCHAR[]) AS ty,
      TRY_CAST(j[3] AS BIGINT[][]) AS st FROM _gm0)
),
-- batch, M, K and N of each call whose operands are both bf16, both fp16
-- or both fp32 (esz: bytes an element) and whose shapes multiply ([M, K]
-- by [K, N]; [B, M, K] by [B, K, N]); mis: the first leading dimension
-- that is not a multiple of 16 bytes, the alignment cuBLAS's wider
-- kernels need of a matrix's rows. la and lb name the operands' leading
-- dimensions from their strides (tb_gemm_lead: 'K' or 'M' for the
-- first, 'N' or 'K' for the second; '?' for a layout not read), or, with
-- no strides recorded, as row-major (K and N); the result leads with N.
-- A vector product (M, K or N of 1: a GEMV or an outer product, which
-- cuBLAS does not tile) is not read.
_gm2 AS (
  SELECT *,
    CASE WHEN la = '?' OR lb = '?' OR least(a[len(a) - 1], a[len(a)], b[len(b)]) = 1 THEN NULL
      WHEN la = 'K' AND a[len(a)] % (16 // esz) <> 0 THEN 'K=' || a[len(a)]
      WHEN la = 'M' AND a[len(a) - 1] % (16 // esz) <> 0 THEN 'M=' || a[len(a) - 1]
      WHEN lb = 'K' AND b[len(b) - 1] % (16 // esz) <> 0 THEN 'K=' || b[len(b) - 1]
      WHEN b[len(b)] % (16 // esz) <> 0 THEN 'N=' || b[len(b)] END AS mis
  FROM (
    SELECT *, CASE WHEN ta = 'float' THEN 4 ELSE 2 END AS esz,
      CASE WHEN len(a) = 2 AND len(b) = 2 AND a[2] = b[1] THEN 1
        WHEN len(a) = 3 AND len(b) = 3 AND a[1] = b[1] AND a[3] = b[2] THEN a[1] END AS bt,
      tb_gemm_lead(a, sa, 'K', 'M') AS la, tb_gemm_lead(b, sb, 'N', 'K') AS lb
    FROM _gm1
    WHERE ta IN ('c10::BFloat16', 'c10::Half', 'float') AND tb = ta
  )
  WHERE bt IS NOT NULL
),
_gmc AS MATERIALIZED (
  SELECT trace_id, rank, name_id, ts_ns, external_id, esz, mis, a, b, ta,
    2 * bt * a[len(a) - 1] * a[len(a)] * b[len(b)] AS flops,
    2 * bt * (a[len(a) - 1] * a[len(a)] + a[len(a)] * b[len(b)] + a[len(a) - 1] * b[len(b)]) AS bytes
  FROM _gm2
  WHERE esz = 2 OR mis IS NOT NULL
),
-- The GPU time of the work each call's launches produced: its runtime
-- calls by External id, their GPU work by correlation (as the ops area's
-- gpu_ns links them), on ids. The work is counted whole, where the window
-- cuts it too.
_gmr AS MATERIALIZED (
  SELECT e.trace_id, e.rank, e.external_id, e.correlation
  FROM tb_events e
  WHERE e.kind IN ('runtime', 'driver') AND e.correlation IS NOT NULL
    AND e.external_id IN (SELECT external_id FROM _gmc)
),
_gmk AS (
  SELECT r.trace_id, r.rank, r.external_id, sum(g.dur_ns) AS ns
  FROM _gmr r JOIN tb_events g ON g.trace_id = r.trace_id AND g.rank = r.rank AND g.correlation = r.correlation
  WHERE tb_gpu_work(g.kind) AND g.correlation IN (SELECT correlation FROM _gmr)
  GROUP BY ALL
),
-- ns: 0 for a call whose GPU work the trace does not link (no launch
-- carries its External id: negative_queue_length_a100's runtime calls
-- carry none).
_gmj AS MATERIALIZED (
  SELECT d.strings[c.trace_id + 1] AS trace, c.rank, d.strings[c.name_id + 1] AS name, c.ts_ns,
    CAST(c.ns AS BIGINT) AS dur_ns, c.flops, c.bytes, c.esz, c.mis, c.a, c.b, c.ta
  FROM (SELECT c.*, coalesce(k.ns, 0) AS ns FROM _gmc c
        LEFT JOIN _gmk k ON k.trace_id = c.trace_id AND k.rank = c.rank AND k.external_id = c.external_id) c, tb_dict d
),
_gm AS (
  SELECT trace, rank, 'gemm_shapes' AS feature, name, ts_ns, dur_ns, flops, bytes FROM _gmj WHERE esz = 2 AND dur_ns > 0
),
_gms AS (
  SELECT trace, rank, feature, CAST(sum(flops) AS BIGINT) AS flops, CAST(sum(bytes) AS BIGINT) AS bytes FROM _gm GROUP BY ALL
),
-- The forward convolutions' batches (conv_batch): ts_ns orders the
-- batches by the calls that take them, the most first, so that the
-- example is the most common.
_cb AS (
  SELECT d.strings[c.trace_id + 1] AS trace, c.rank, 'conv_batch' AS feature, CAST(c.n AS VARCHAR) AS name,
    -count(*) OVER (PARTITION BY c.trace_id, c.rank, c.n) AS ts_ns, CAST(0 AS BIGINT) AS dur_ns
  FROM (
    SELECT e.trace_id, e.rank, TRY_CAST(json_extract_string(e.args, '$."Input Dims"[0][0]') AS BIGINT) AS n
    FROM tb_events e JOIN _t0 t ON t.trace_id = e.trace_id
    WHERE e.kind = 'cpu_op' AND e.name_id IN (SELECT id FROM tb_strings WHERE s = 'aten::convolution')
      AND ($2::INTEGER < 0 OR e.rank = $2::INTEGER)
      AND ($3::BIGINT <= 0 OR e.ts_ns - t.t0 >= $3::BIGINT)
      AND ($4::BIGINT <= 0 OR e.ts_ns - t.t0 < $4::BIGINT)
  ) c, tb_dict d
  WHERE c.n > 0
),
-- The misaligned calls, named by their shape ("aten::bmm [16, 5185, 64]
-- by [16, 64, 5185] c10::BFloat16 N=5185"); ts_ns orders the shapes by
-- their GPU time, the most first, so that the example is the heaviest.
_gmx AS (
  SELECT trace, rank, 'gemm_misaligned' AS feature, shape AS name,
    -sum(dur_ns) OVER (PARTITION BY trace, rank, shape) AS ts_ns, dur_ns
  FROM (SELECT *, name || ' ' || CAST(a AS VARCHAR) || ' by ' || CAST(b AS VARCHAR) || ' ' || ta || ' ' || mis AS shape
        FROM _gmj WHERE mis IS NOT NULL)
),
-- The outermost Torch-Compiled Region ranges and the outermost
-- Optimizer.step# ranges, each kind apart: none of their thread's ranges
-- of the kind starts before them (or with them, longer) and ends at or
-- after their end (mtia_single_rank's Adam.step inside TorchRec's
-- CombinedOptimizer.step, itself inside another: counted once, not three
-- times). A running max of the ends in (start, longer first) order finds
-- them; a range's equals (same start and end) are left out of its max.
_outer AS (
  SELECT trace, rank, pid, tid, name, ts_ns, end_ns
  FROM (
    SELECT *, max(end_ns) OVER (PARTITION BY trace, rank, pid, tid, starts_with(name, 'Optimizer.step#') ORDER BY ts_ns, end_ns DESC
      ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW EXCLUDE GROUP) AS pm
    FROM _host WHERE kind <> 'kernel' AND (starts_with(name, 'Torch-Compiled Region') OR starts_with(name, 'Optimizer.step#'))
  )
  WHERE pm IS NULL OR pm < end_ns
),
-- The DataLoader's calls and the optimizer's zero_grad ranges clipped to
-- the rank's GPU span, and the outermost compiled regions and optimizer
-- steps likewise.
_dl AS (
  SELECT h.trace, h.rank, h.name, greatest(h.ts_ns, s.first_ns) AS ts_ns, least(h.end_ns, s.last_ns) AS end_ns,
    CASE WHEN starts_with(h.name, 'enumerate(DataLoader)#') THEN 'dataloader_gpu_idle'
      WHEN starts_with(h.name, 'Optimizer.zero_grad#') THEN 'zero_grad_gpu_idle'
      WHEN starts_with(h.name, 'Optimizer.step#') THEN 'optimizer_gpu_idle' ELSE 'compiled_gpu_idle' END AS feature
  FROM (
    SELECT trace, rank, name, ts_ns, end_ns FROM _host
    WHERE kind <> 'kernel' AND (starts_with(name, 'enumerate(DataLoader)#') OR starts_with(name, 'Optimizer.zero_grad#'))
    UNION ALL
    SELECT trace, rank, name, ts_ns, end_ns FROM _outer
  ) h
  JOIN (SELECT trace, rank, min(seg_ts) AS first_ns, max(seg_end) AS last_ns FROM evidence_base_busy GROUP BY ALL) s
    ON s.trace = h.trace AND s.rank = h.rank
  WHERE h.end_ns > s.first_ns AND h.ts_ns < s.last_ns
),
-- The GPU busy time inside each: the rank's busy time up to the range's
-- end less that up to its start (evidence_base_busy.busy_before, one ASOF
-- lookup each; a range join against every segment grew with the square
-- of the steps: resnet_2080ti ×100, 3,000 steps, 7.6 s).
_dli AS (
  SELECT l.trace, l.rank, l.feature, l.name, l.ts_ns, l.end_ns - l.ts_ns AS span_ns,
    l.end_ns - l.ts_ns - (coalesce(e.busy_before + least(l.end_ns, e.seg_end) - e.seg_ts, 0)
      - coalesce(b.busy_before + least(l.ts_ns, b.seg_end) - b.seg_ts, 0)) AS dur_ns
  FROM _dl l
  ASOF LEFT JOIN evidence_base_busy b ON b.trace = l.trace AND b.rank = l.rank AND b.seg_ts <= l.ts_ns
  ASOF LEFT JOIN evidence_base_busy e ON e.trace = l.trace AND e.rank = l.rank AND e.seg_ts <= l.end_ns
),
-- The GPU work each ChunkPipeline _forward frame and each aiter
-- torch_gemm frame launched (a few hundred frames at most against the
-- rank's GPU work; none on most traces).
_hcg AS (
  SELECT f.trace, f.rank, f.feature || '_gpu' AS feature, f.name, f.ts_ns,
    CAST(coalesce(sum(g.dur_ns), 0) AS BIGINT) AS dur_ns
  FROM (SELECT * FROM _rf WHERE feature IN ('hf_chunk_forward', 'aiter_torch_gemm')) f
  LEFT JOIN evidence_base_events g ON g.trace = f.trace AND g.rank = f.rank AND tb_gpu_work(g.kind)
    AND g.launch_ts >= f.ts_ns AND g.launch_ts < f.ts_ns + f.dur_ns
  GROUP BY f.trace, f.rank, f.feature, f.name, f.ts_ns
),
_all AS MATERIALIZED (
  SELECT trace, rank, feature, name, ts_ns, dur_ns FROM _hf WHERE feature IS NOT NULL
  UNION ALL
  SELECT trace, rank, feature, name, ts_ns, dur_ns FROM _rf WHERE feature IS NOT NULL
  UNION ALL
  SELECT trace, rank, feature, name, ts_ns, dur_ns FROM _arb
  UNION ALL
  SELECT trace, rank, feature, name, ts_ns, dur_ns FROM _pyv
  UNION ALL
  SELECT trace, rank, feature, name, ts_ns, dur_ns FROM _tv WHERE name <> ''
  UNION ALL
  SELECT trace, rank, feature, name, ts_ns, dur_ns FROM _rs
  UNION ALL
  SELECT trace, rank, feature, name, ts_ns, dur_ns FROM _dli
  UNION ALL
  SELECT trace, rank, feature, name, ts_ns, dur_ns FROM _vo
  UNION ALL
  SELECT trace, rank, feature, name, ts_ns, dur_ns FROM _gm
  UNION ALL
  SELECT trace, rank, feature, name, ts_ns, dur_ns FROM _gmx
  UNION ALL
  SELECT trace, rank, feature, name, ts_ns, dur_ns FROM _cb
  UNION ALL
  SELECT trace, rank, feature, name, ts_ns, dur_ns FROM _hcg
),
-- The union of the compiled and aot_autograd features' intervals, each
-- (what the eager-vLLM rule weighs): the end of the events before each one (max-end-so-far), so that
-- nested events (a compiled region inside another, python frames under the
-- region) count once. The other features' sums are not sorted for it: that
-- took the preset from 36 to 70 ms on the ×5 vLLM trace.
_cu AS (
  SELECT trace, rank, feature, CAST(sum(greatest(0, ts_ns + dur_ns - greatest(ts_ns, coalesce(pm, ts_ns)))) AS BIGINT) AS covered_ns
  FROM (
    SELECT *, max(ts_ns + dur_ns) OVER (PARTITION BY trace, rank, feature ORDER BY ts_ns, dur_ns DESC
      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS pm
    FROM _all WHERE feature IN ('compiled', 'aot_autograd')
  )
  GROUP BY trace, rank, feature
  UNION ALL
  SELECT trace, rank, feature, CAST(sum(span_ns) AS BIGINT) FROM _dli GROUP BY ALL
)
SELECT a.trace, a.rank, a.feature,
  arg_min(a.name, (coalesce(a.ts_ns, 9223372036854775807), a.name)) AS example,
  count(*) AS count,
  CAST(coalesce(sum(a.dur_ns), 0) AS BIGINT) AS total_ns,
  any_value(c.covered_ns) AS covered_ns,
  any_value(g.flops) AS gemm_flops,
  any_value(g.bytes) AS gemm_bytes
FROM _all a LEFT JOIN _cu c ON c.trace = a.trace AND c.rank = a.rank AND c.feature = a.feature
LEFT JOIN _gms g ON g.trace = a.trace AND g.rank = a.rank AND g.feature = a.feature
GROUP BY a.trace, a.rank, a.feature
ORDER BY a.trace, a.rank, a.feature
