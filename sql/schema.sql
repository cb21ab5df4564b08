-- schema: the tables every loaded trace lands in, and the views over them.
-- INCLUDE: (none)
--
-- Time is BIGINT nanoseconds everywhere (Kineto ts/dur are float microseconds,
-- converted exactly). A trace is one loaded job: a file, the per-rank files of
-- one profiling session, or a merged file holding several ranks.

-- One row per (trace, file, rank): what was loaded and what it can show.
CREATE TABLE IF NOT EXISTS traces(
  -- Trace (job) name, unique in the database. TEXT
  trace VARCHAR NOT NULL,
  -- File index inside the trace, from 0. INT
  file_id INTEGER NOT NULL,
  -- Path of the file as given. TEXT
  path VARCHAR NOT NULL,
  -- SHA-256 of the file's bytes (compressed bytes for .gz), hex. TEXT
  sha256 VARCHAR NOT NULL,
  -- Size of the file on disk. BYTES
  file_bytes BIGINT,
  -- Size of the uncompressed JSON. BYTES
  json_bytes BIGINT,
  -- Rank of this row. INT
  rank INTEGER NOT NULL,
  -- Where the rank came from: merged_prefix, filename, distributed_info, override or default (an evidence gap). TEXT
  rank_source VARCHAR NOT NULL,
  -- Tensor-parallel coordinate where known, else NULL. INT
  tp INTEGER,
  -- Data-parallel coordinate where known, else NULL. INT
  dp INTEGER,
  -- Pipeline-parallel coordinate where known, else NULL. INT
  pp INTEGER,
  -- Expert-parallel coordinate where known, else NULL. INT
  ep INTEGER,
  -- World size from distributedInfo, else NULL. INT
  world_size INTEGER,
  -- training, vllm, sglang or unknown. TEXT
  producer VARCHAR NOT NULL,
  -- cuda, rocm, mtia, cpu or unknown. TEXT
  platform VARCHAR NOT NULL,
  -- GPU model from deviceProperties, NULL when the trace does not name it. TEXT
  gpu_model VARCHAR,
  -- Total memory of device 0 from deviceProperties. BYTES
  gpu_total_mem BIGINT,
  -- Compute capability major of device 0 from deviceProperties (computeMajor; on ROCm the GFXIP major: 9 for gfx90a and gfx942, not Hopper), NULL when the trace does not give it. INT
  gpu_cc_major INTEGER,
  -- Compute capability minor of device 0 from deviceProperties (computeMinor; on ROCm the GFXIP minor), NULL when the trace does not give it. INT
  gpu_cc_minor INTEGER,
  -- The trace shows CUDA/HIP graph launches (cudaGraphLaunch, graph id args). BOOL
  has_graphs BOOLEAN NOT NULL,
  -- The trace has cuda_sync events (synchronization tracking was on). BOOL
  has_sync_events BOOLEAN NOT NULL,
  -- The trace has python_function events (with_stack=True). BOOL
  has_python_stacks BOOLEAN NOT NULL,
  -- The trace has step annotations (ProfilerStep#, execute_*, SGLang steps). BOOL
  has_steps BOOLEAN NOT NULL,
  -- kineto (current cats), kineto_2021 (Operator/Runtime/Kernel cats) or legacy (autograd profiler array). TEXT
  format VARCHAR NOT NULL,
  -- Top-level schemaVersion as written. TEXT
  schema_version VARCHAR,
  -- Top-level baseTimeNanoseconds: the epoch offset of ts. TIMESTAMP_NS
  base_time_ns BIGINT,
  -- Top-level traceName. TEXT
  trace_name VARCHAR,
  -- Profiling session this file belongs to (vLLM writes several into one folder). TEXT
  session VARCHAR,
  -- Non-metadata events of this rank in this file. COUNT
  events BIGINT NOT NULL,
  -- First ts over those events. TIMESTAMP_NS
  first_ts_ns BIGINT,
  -- Last ts+dur over those events. TIMESTAMP_NS
  last_end_ns BIGINT,
  -- Top-level keys other than traceEvents (deviceProperties, distributedInfo, ...). JSON
  metadata JSON,
  -- The slice loaded when the load was partial ("window 100ms..200ms", "steps 3..5"), NULL for all. TEXT
  slice VARCHAR
);

-- Columns added to traces after databases were first written: a database
-- made by an older build (tracebook load --db) gets them here, NULL in its
-- rows, so it stays readable and loadable. The loader names its columns,
-- so their position (last in such a database) does not matter.

ALTER TABLE traces ADD COLUMN IF NOT EXISTS gpu_cc_major INTEGER;
ALTER TABLE traces ADD COLUMN IF NOT EXISTS gpu_cc_minor INTEGER;

-- One row per non-metadata event (X, i, s, f, C and the rest).
CREATE TABLE IF NOT EXISTS events(
  -- Trace name. JOINID(traces.trace)
  trace VARCHAR NOT NULL,
  -- File index inside the trace. JOINID(traces.file_id)
  file_id INTEGER NOT NULL,
  -- Rank. INT
  rank INTEGER NOT NULL,
  -- Process as written (numbers in decimal; strings such as "Spans" kept). TEXT
  pid VARCHAR,
  -- Thread as written (numbers in decimal; "stream 7" kept). TEXT
  tid VARCHAR,
  -- Phase as written. TEXT
  ph VARCHAR NOT NULL,
  -- The trace's own cat. TEXT
  cat VARCHAR,
  -- Normalised category: kernel, gpu_memcpy, gpu_memset, gpu_sync, gpu_annotation, cpu_op, annotation, python, runtime, driver, instant, counter, flow, overhead, other. TEXT
  kind VARCHAR NOT NULL,
  -- Runtime/driver calls: launch, graph_launch, sync, memcpy, memset, other; NULL otherwise. TEXT
  api VARCHAR,
  -- Event name. TEXT
  name VARCHAR,
  -- Start; NULL for an event written without a ts (a gap, not time zero). TIMESTAMP_NS
  ts_ns BIGINT,
  -- Duration, 0 when the event has none. DURATION_NS
  dur_ns BIGINT NOT NULL,
  -- End: ts_ns + dur_ns; NULL when ts_ns is. TIMESTAMP_NS
  end_ns BIGINT,
  -- Arg "correlation": links a runtime call to its GPU activity; NULL when absent. INT
  correlation BIGINT,
  -- Arg "External id": links a CPU op to its runtime calls and kernels; NULL when absent. INT
  external_id BIGINT,
  -- Arg "Python id" of a python_function frame; NULL when absent. INT
  python_id BIGINT,
  -- Arg "Python parent id": the caller frame; NULL when absent. INT
  python_parent_id BIGINT,
  -- Arg "Ev Idx"; NULL when absent. INT
  ev_idx BIGINT,
  -- Arg "Sequence number" (autograd); NULL when absent. INT
  seq_no BIGINT,
  -- Arg "Fwd thread id" (autograd); NULL when absent. INT
  fwd_tid BIGINT,
  -- Arg "stream" of GPU activity; NULL when absent. INT
  stream BIGINT,
  -- Arg "device" of GPU activity; NULL when absent. INT
  device BIGINT,
  -- Arg "bytes" of a copy or memset; NULL when absent. BYTES
  bytes BIGINT,
  -- Arg "memory bandwidth (GB/s)" as written; NULL when absent. GBPS
  mem_bw_gbps DOUBLE,
  -- Arg "graph id" of a CUDA graph launch or replayed kernel; NULL when absent. INT
  graph_id BIGINT,
  -- Flow events: the id that pairs s with f. INT
  flow_id BIGINT,
  -- Arg "grid" of a kernel as written ("[x, y, z]"); NULL when absent. TEXT
  grid VARCHAR,
  -- Arg "block" of a kernel as written; NULL when absent. TEXT
  block VARCHAR,
  -- Every other arg as a JSON object; NULL when none remain. JSON
  args JSON,
  -- Index of the event in its file, from 0 in file order (metadata events not counted); unique per (trace, file_id, rank). INT
  idx BIGINT NOT NULL
);

-- Process and thread names from the metadata events.
CREATE TABLE IF NOT EXISTS threads(
  -- Trace name. JOINID(traces.trace)
  trace VARCHAR NOT NULL,
  -- File index. JOINID(traces.file_id)
  file_id INTEGER NOT NULL,
  -- Rank. INT
  rank INTEGER NOT NULL,
  -- Process as written. TEXT
  pid VARCHAR,
  -- Thread as written; NULL for process rows. TEXT
  tid VARCHAR,
  -- The process_name metadata value (process rows). TEXT
  process_name VARCHAR,
  -- The thread_name metadata value (thread rows). TEXT
  thread_name VARCHAR,
  -- The process_labels metadata value ("CPU", "GPU 0"). TEXT
  labels VARCHAR,
  -- process_sort_index or thread_sort_index. INT
  sort_index BIGINT
);
