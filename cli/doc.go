// Package cli is tracebook's command line and composition root: it wires
// the analysis core, the pipeline that drives it (pipeline), the DuckDB
// engine (internal/duck), the notebook language (cells) and the Jupyter
// protocol (kernel) together. The tracebook command (main.go at the
// repository root) only calls Main. docs/DESIGN.md describes the whole.
//
// It owns the commands, their flags and their outputs; the end-to-end
// goldens of the report and the diff (testdata/, the Markdown that
// `tracebook report` and `tracebook diff` write for small real traces)
// belong to its tests. It leaves the analysis to pipeline and analysis/...,
// the SQL to internal/duck and sql, the cells to package cells and the wire
// protocol to package kernel.
//
// # Files
//
//   - main.go: Main, the dispatch and help generated from the command table,
//     and the profiles a developer asks for ($TRACEBOOK_CPUPROFILE,
//     $TRACEBOOK_MEMPROFILE).
//   - commands.go: the command table, commands: one literal row per command
//     (name, usage, one-line help, run function). A command is added by
//     adding its row there and its cmd_<name>.go. `tracebook help` lists
//     the rows, sorted by name.
//   - cmd_crossview.go, cmd_diff.go, cmd_evidence.go, cmd_install.go,
//     cmd_kernel.go, cmd_load.go, cmd_query.go, cmd_report.go, cmd_run.go,
//     cmd_synth.go: one command each (cmd_report.go also holds SampleTrace,
//     the trace `tracebook report` analyses when given none, which the
//     root main.go embeds; cmd_run.go runs a notebook's cells without a
//     Jupyter server).
//   - cli_args.go: the commands' argument parsing and the load options
//     they share.
//   - session.go: a cells.Session over a DuckDB database and the adapter
//     that makes it the kernel's Executor. The magics whose work lives
//     here are plugged into every new session through sessionHooks, which
//     the file that provides each one appends to in an init function:
//     %evidence (cmd_evidence.go), %report (cmd_report.go), %diff
//     (cmd_diff.go) and %crossview (session.go).
package cli
