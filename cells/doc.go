// Package cells is the notebook language of tracebook: it turns the text of
// a cell into work and the work into Jupyter outputs.
//
// It owns:
//   - parsing a cell into a line magic (%name args...), a cell magic
//     (%%sql on the first line, a body below) or plain SQL (Parse);
//   - the one declarative magic table (magics.go): every magic's name,
//     usage, help, options, the function that runs it and the completion of
//     its arguments; %help is generated from it;
//   - the filter options shared by every magic that takes them (ParseFilter);
//   - the Session: the engine it talks to (a pipeline.Engine), the
//     execution counter that derives display ids, the %context record, the
//     caches that completion reads, and the hooks through which %evidence,
//     %crossview, %report and %diff are plugged in;
//   - the hooks of %evidence, %crossview, %report and %diff: each parses its
//     options, calls the pipeline and shows the result;
//   - results as MIME bundles (text/plain, text/html, application/json),
//     DuckDB errors as Jupyter errors, live load progress;
//   - completion, inspection and the is-complete check.
//
// It leaves to others: running SQL and loading traces (a pipeline.Engine,
// which internal/duck implements), the Jupyter wire protocol (package kernel,
// which package cli adapts a Session to: cells and kernel do not import
// each other), the evidence presets and the report (analysis/..., sql), and
// the work behind %evidence, %crossview, %report and %diff: collecting
// evidence, the cross-view input, the report source, the Perfetto windows
// and the diff input are package pipeline's, which the command-line tool
// calls too. cells never reaches cgo, DuckDB or zmq4; a fence test enforces
// it.
//
// # Files
//
//   - parse.go: Parse, the shell-like argument splitting.
//   - magics.go: the magic table, %help, option parsing, the Hook type.
//   - filter.go: ParseFilter and the filter options.
//   - session.go: Session, Publisher, Result, ExecError, Execute, SQL cells.
//   - magic_trace.go: %trace load (with live progress), list, info, drop.
//   - background.go: %trace load --background, the load behind the cells.
//   - magic_context.go: %context and its keys.
//   - render.go: tables and text as MIME bundles.
//   - sqlerr.go: DuckDB error messages as Jupyter errors.
//   - complete.go: Complete, Inspect, IsComplete.
//   - magic_evidence.go, magic_crossview.go, magic_report.go,
//     magic_diff.go: the hooks of %evidence, %crossview, %report and %diff
//     over package pipeline, and their cell outputs.
//   - report_charts.go: charts in a cell's outputs, the Markdown report as
//     text/plain.
package cells
