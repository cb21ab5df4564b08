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
  -- Parallel coordinates where known, else NULL. INT
  tp INTEGER, dp INTEGER, pp INTEGER, ep INTEGER,
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
  -- Capture capabilities. BOOL
  has_graphs BOOLEAN NOT NULL,
  has_sync_events BOOLEAN NOT NULL,
  has_python_stacks BOOLEAN NOT NULL,
  has_steps BOOLEAN NOT NULL,
  -- kineto (current cats), kineto_2021 (Operator/Runtime/Kernel cats) or legacy (autograd profiler array). TEXT
  format VARCHAR NOT NULL,
  -- Top-level schemaVersion, baseTimeNanoseconds and traceName. MIXED
  schema_version VARCHAR,
  base_time_ns BIGINT,
  trace_name VARCHAR,
  -- Profiling session this file belongs to (vLLM writes several into one folder). TEXT
  session VARCHAR,
  -- Non-metadata events of this rank in this file. COUNT
  events BIGINT NOT NULL,
  -- First ts and last ts+dur over those events. TIMESTAMP_NS
  first_ts_ns BIGINT,
  last_end_ns BIGINT,
  -- Top-level keys other than traceEvents (deviceProperties, distributedInfo, ...). JSON
  metadata JSON
);

-- One row per non-metadata event (X, i, s, f, C and the rest).
CREATE TABLE IF NOT EXISTS events(
  -- Trace name. JOINID(traces.trace)
  trace VARCHAR NOT NULL,
  -- File index inside the trace. JOINID(traces.file_id)
  file_id INTEGER NOT NULL,
  -- Rank. INT
  rank INTEGER NOT NULL,
  -- Process and thread as written (numbers in decimal; "stream 7" kept). TEXT
  pid VARCHAR,
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
  -- Start, duration, end. TIMESTAMP_NS / DURATION_NS
  ts_ns BIGINT NOT NULL,
  dur_ns BIGINT NOT NULL,
  end_ns BIGINT NOT NULL,
  -- Typed args, NULL when absent. INT
  correlation BIGINT,
  external_id BIGINT,
  python_id BIGINT,
  python_parent_id BIGINT,
  ev_idx BIGINT,
  seq_no BIGINT,
  fwd_tid BIGINT,
  stream BIGINT,
  device BIGINT,
  bytes BIGINT,
  -- memory bandwidth (GB/s) as written. DOUBLE
  mem_bw_gbps DOUBLE,
  graph_id BIGINT,
  -- Flow events: the id that pairs s with f. INT
  flow_id BIGINT,
  -- grid and block as written. TEXT
  grid VARCHAR,
  block VARCHAR,
  -- Every other arg. JSON
  args JSON
);

-- Process and thread names from the metadata events.
CREATE TABLE IF NOT EXISTS threads(
  -- Trace name. JOINID(traces.trace)
  trace VARCHAR NOT NULL,
  -- File index. JOINID(traces.file_id)
  file_id INTEGER NOT NULL,
  -- Rank. INT
  rank INTEGER NOT NULL,
  -- Process and thread (tid NULL for process rows). TEXT
  pid VARCHAR,
  tid VARCHAR,
  -- process_name / thread_name value, process_labels, sort index. MIXED
  process_name VARCHAR,
  thread_name VARCHAR,
  labels VARCHAR,
  sort_index BIGINT
);
