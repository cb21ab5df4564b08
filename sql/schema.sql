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
  -- vllm, sglang, profiler_step (ProfilerStep# steps: a torch.profiler loop, training or inference) or unknown. TEXT
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

-- The events are stored lean and read through the events view: every
-- repeated string (trace, pid, tid, cat, name, grid, block) once, in
-- tb_strings, and an integer id per event in tb_events; kind and api as
-- ENUMs of their fixed words. ph stays text: almost every query filters
-- ph = 'X', and DuckDB applies that filter in the scan only to a column it
-- stores (over a looked-up ph, the x5 cross-view took 0.5 s and 100 MB more). DuckDB stores a string value about ten times
-- slower than an integer (measured on the x21 vLLM trace, 3.75 M events:
-- 0.45-1.1 s per string column into a database file against 0.05-0.12 s
-- per integer column), and the parser, which has seen each string before,
-- hands over the id for almost nothing. The view looks each id up in
-- tb_dict's one list, a vectorised list index rather than a join: DuckDB
-- computes only the columns a query reads, and the reports of the 48 MB and
-- x21 vLLM traces take the same time over it as over the wide table.

-- kind's words, those of analysis/trace's Kind, in alphabetical order: an
-- ENUM sorts and compares by its order, and kind sorts as text would.
CREATE TYPE IF NOT EXISTS tb_kind AS ENUM ('annotation', 'counter', 'cpu_op', 'driver', 'flow',
  'gpu_annotation', 'gpu_memcpy', 'gpu_memset', 'gpu_sync', 'instant', 'kernel', 'other',
  'overhead', 'python', 'runtime');

-- api's words, those of analysis/trace's API, in alphabetical order.
CREATE TYPE IF NOT EXISTS tb_api AS ENUM ('graph_launch', 'launch', 'memcpy', 'memset', 'other', 'sync');

-- Every string the events hold, once (the loader interns them).
CREATE TABLE IF NOT EXISTS tb_strings(
  -- The string's id, from 0 without gaps: its position in tb_dict.strings less one. INT
  id INTEGER NOT NULL,
  -- The string. TEXT
  s VARCHAR NOT NULL
);

-- One row: tb_strings' strings in id order, what the events view indexes.
CREATE TABLE IF NOT EXISTS tb_dict(
  -- Every string of tb_strings, the string of id i at position i + 1. TEXT
  strings VARCHAR[] NOT NULL
);
INSERT INTO tb_dict SELECT [] WHERE NOT EXISTS (SELECT 1 FROM tb_dict);

-- One row per non-metadata event, lean: what the events view reads.
CREATE TABLE IF NOT EXISTS tb_events(
  -- The trace name's id. JOINID(tb_strings.id)
  trace_id INTEGER NOT NULL,
  -- File index inside the trace. JOINID(traces.file_id)
  file_id INTEGER NOT NULL,
  -- Rank. INT
  rank INTEGER NOT NULL,
  -- The pid's id. JOINID(tb_strings.id)
  pid_id INTEGER,
  -- The tid's id. JOINID(tb_strings.id)
  tid_id INTEGER,
  -- As events.ph. TEXT
  ph VARCHAR NOT NULL,
  -- The cat's id; NULL when the event has none. JOINID(tb_strings.id)
  cat_id INTEGER,
  -- As events.kind. TEXT
  kind tb_kind NOT NULL,
  -- As events.api. TEXT
  api tb_api,
  -- The name's id. JOINID(tb_strings.id)
  name_id INTEGER,
  -- As events.ts_ns. TIMESTAMP_NS
  ts_ns BIGINT,
  -- As events.dur_ns. DURATION_NS
  dur_ns BIGINT NOT NULL,
  -- As events.end_ns. TIMESTAMP_NS
  end_ns BIGINT,
  -- As events.correlation. INT
  correlation BIGINT,
  -- As events.external_id. INT
  external_id BIGINT,
  -- As events.python_id. INT
  python_id BIGINT,
  -- As events.python_parent_id. INT
  python_parent_id BIGINT,
  -- As events.ev_idx. INT
  ev_idx BIGINT,
  -- As events.seq_no. INT
  seq_no BIGINT,
  -- As events.fwd_tid. INT
  fwd_tid BIGINT,
  -- As events.stream. INT
  stream BIGINT,
  -- As events.device. INT
  device BIGINT,
  -- As events.bytes. BYTES
  bytes BIGINT,
  -- As events.mem_bw_gbps. GBPS
  mem_bw_gbps DOUBLE,
  -- As events.graph_id. INT
  graph_id BIGINT,
  -- As events.flow_id. INT
  flow_id BIGINT,
  -- The grid's id; NULL when absent. JOINID(tb_strings.id)
  grid_id INTEGER,
  -- The block's id; NULL when absent. JOINID(tb_strings.id)
  block_id INTEGER,
  -- As events.args. JSON
  args JSON,
  -- As events.idx. INT
  idx BIGINT NOT NULL
);

-- tb_events_from(t): the events of the lean table t (tb_events, or the
-- loader's staging table) with their strings: the columns of events.
CREATE OR REPLACE MACRO tb_events_from(t) AS TABLE
SELECT d.strings[e.trace_id + 1] AS trace, e.file_id, e.rank,
  d.strings[e.pid_id + 1] AS pid, d.strings[e.tid_id + 1] AS tid, e.ph,
  d.strings[e.cat_id + 1] AS cat, e.kind, e.api, d.strings[e.name_id + 1] AS name,
  e.ts_ns, e.dur_ns, e.end_ns, e.correlation, e.external_id, e.python_id, e.python_parent_id,
  e.ev_idx, e.seq_no, e.fwd_tid, e.stream, e.device, e.bytes, e.mem_bw_gbps, e.graph_id, e.flow_id,
  d.strings[e.grid_id + 1] AS grid, d.strings[e.block_id + 1] AS block, e.args, e.idx
FROM query_table(t) e, tb_dict d;

-- One row per non-metadata event (X, i, s, f, C and the rest).
CREATE OR REPLACE VIEW events AS
SELECT
  -- Trace name. JOINID(traces.trace)
  trace,
  -- File index inside the trace. JOINID(traces.file_id)
  file_id,
  -- Rank. INT
  rank,
  -- Process as written (numbers in decimal; strings such as "Spans" kept). TEXT
  pid,
  -- Thread as written (numbers in decimal; "stream 7" kept). TEXT
  tid,
  -- Phase as written. TEXT
  ph,
  -- The trace's own cat. TEXT
  cat,
  -- Normalised category: kernel, gpu_memcpy, gpu_memset, gpu_sync, gpu_annotation, cpu_op, annotation, python, runtime, driver, instant, counter, flow, overhead, other. TEXT
  kind,
  -- Runtime/driver calls: launch, graph_launch, sync, memcpy, memset, other; NULL otherwise. TEXT
  api,
  -- Event name. TEXT
  name,
  -- Start; NULL for an event written without a ts (a gap, not time zero). TIMESTAMP_NS
  ts_ns,
  -- Duration, 0 when the event has none. DURATION_NS
  dur_ns,
  -- End: ts_ns + dur_ns; NULL when ts_ns is. TIMESTAMP_NS
  end_ns,
  -- Arg "correlation": links a runtime call to its GPU activity; NULL when absent. INT
  correlation,
  -- Arg "External id": links a CPU op to its runtime calls and kernels; NULL when absent. INT
  external_id,
  -- Arg "Python id" of a python_function frame; NULL when absent. INT
  python_id,
  -- Arg "Python parent id": the caller frame; NULL when absent. INT
  python_parent_id,
  -- Arg "Ev Idx"; NULL when absent. INT
  ev_idx,
  -- Arg "Sequence number" (autograd); NULL when absent. INT
  seq_no,
  -- Arg "Fwd thread id" (autograd); NULL when absent. INT
  fwd_tid,
  -- Arg "stream" of GPU activity; NULL when absent. INT
  stream,
  -- Arg "device" of GPU activity; NULL when absent. INT
  device,
  -- Arg "bytes" of a copy or memset; NULL when absent. BYTES
  bytes,
  -- Arg "memory bandwidth (GB/s)" as written; NULL when absent. GBPS
  mem_bw_gbps,
  -- Arg "graph id" of a CUDA graph launch or replayed kernel; NULL when absent. INT
  graph_id,
  -- Flow events: the id that pairs s with f. INT
  flow_id,
  -- Arg "grid" of a kernel as written ("[x, y, z]"); NULL when absent. TEXT
  grid,
  -- Arg "block" of a kernel as written; NULL when absent. TEXT
  block,
  -- Every other arg as a JSON object; NULL when none remain. JSON
  args,
  -- Index of the event in its file, from 0 in file order (metadata events not counted); unique per (trace, file_id, rank). INT
  idx
FROM tb_events_from('tb_events');

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
