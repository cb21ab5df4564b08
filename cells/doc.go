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
//   - the Session: the engine it talks to, the execution counter that
//     derives display ids, the %context record, the caches that completion
//     reads, and the hooks through which %evidence, %crossview, %report and
//     %diff are plugged in;
//   - results as MIME bundles (text/plain, text/html, application/json),
//     DuckDB errors as Jupyter errors, live load progress;
//   - completion, inspection and the is-complete check.
//
// It leaves to others: running SQL and loading traces (an Engine, which
// internal/duck implements), the Jupyter wire protocol (package kernel, which
// the composition root adapts a Session to: cells and kernel do not import
// each other), the evidence presets and the report (analysis/..., sql), and
// the work behind %evidence, %crossview, %report and %diff (hooks on the
// Session that other files fill in). cells never reaches cgo, DuckDB or
// zmq4; a fence test enforces it.
//
// # Files
//
//   - parse.go: Parse, the shell-like argument splitting.
//   - magics.go: the magic table, %help, option parsing, the Hook type.
//   - filter.go: ParseFilter and the filter options.
//   - session.go: Session, Engine, Publisher, Result, ExecError, Execute, SQL cells.
//   - magic_trace.go: %trace load (with live progress), list, info, drop.
//   - magic_context.go: %context and its keys.
//   - render.go: tables and text as MIME bundles.
//   - sqlerr.go: DuckDB error messages as Jupyter errors.
//   - complete.go: Complete, Inspect, IsComplete.
//   - evidence.go, crossview.go, report.go: the runners and hooks of
//     %evidence, %crossview and %report, kept by the engineers of those magics.
package cells
