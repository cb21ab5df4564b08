// Package pipeline drives tracebook's analysis over a database of loaded
// traces: the command-line tool and the notebook both call it, so a number
// on the report is computed the same way in a terminal and in a cell.
//
// It owns:
//   - the Engine interface, the database the pipeline and the notebook run
//     against (internal/duck.DB implements it);
//   - running the presets in order over an Engine: sql/evidence_base.sql for
//     the filter first, then each evidence area's preset, kept as the table
//     evidence_<area> and returned with its header's units, then the findings
//     for the filter (CollectEvidence, BuildEvidenceBase, Params); an area
//     that analysis/pass computes in Go reads its preset's PASS input
//     instead and is stored through the engine (TableWriter), where the
//     slice fits the pass's bound;
//   - the cross-views: the crossview preset's rows, the host frames streamed
//     through once where the engine can (RowStreamer), and the steps when a
//     slice names a phase or a step (CrossViews, CrossView, CrossViewInput,
//     SliceOf);
//   - the report source: the evidence of every area, the cross-view of the
//     filter and of each rank (CollectReport);
//   - the findings' Perfetto windows, their rows, their files and their
//     timelines (PerfettoWindows, AddPerfetto, AddTimelines,
//     WritePerfettoFiles);
//   - the diff input: both sides' evidence and cross-views (CollectDiffInput,
//     CollectDiff).
//
// It leaves to others: what the SQL computes (sql/), running it (an Engine,
// which internal/duck implements), what the rows mean and how they are
// judged, compared and shown (analysis/...), the notebook language and its
// MIME outputs (cells), the commands and their flags (the command-line tool), and the offline
// page around the report (wasm). pipeline never reaches cgo, DuckDB or zmq4;
// a fence test (internal/fence) enforces it.
//
// # Files
//
//   - engine.go: Engine.
//   - evidence.go: CollectEvidence, BuildEvidenceBase, Params, and the
//     splitting of a SQL module into statements.
//   - pass.go: runPass, TableWriter.
//   - crossview.go: CrossViews, CrossView, CrossViewInput, RowStreamer, SliceOf.
//   - report.go: CollectReport.
//   - perfetto.go: PerfettoWindows, AddPerfetto, AddTimelines,
//     WritePerfettoFiles.
//   - diff.go: CollectDiffInput, CollectDiff.
package pipeline
