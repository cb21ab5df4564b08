// Command tracebook turns PyTorch-profiler (Kineto) and vLLM/SGLang traces
// into evidence, a GPU/CPU cross-view and a report with fixes. It is a
// Jupyter kernel (tracebook kernel), a command-line tool and the builder of
// a single-file offline HTML report.
//
// This package is the composition root: it wires the analysis core, the
// pipeline that drives it (pipeline), the DuckDB engine (internal/duck), the
// notebook language (cells) and the Jupyter protocol (kernel) together.
// docs/DESIGN.md describes the whole.
//
// # Files
//
//   - main.go: the command table, commands: one literal row per command
//     (name, usage, one-line help, run function), and the dispatch and
//     help generated from it. A command is added by adding its row here
//     and its cmd_<name>.go. `tracebook help` lists the rows, sorted by
//     name.
//   - cmd_crossview.go, cmd_diff.go, cmd_evidence.go, cmd_install.go,
//     cmd_kernel.go, cmd_load.go, cmd_query.go, cmd_report.go, cmd_run.go,
//     cmd_synth.go: one command each (cmd_report.go also embeds the sample
//     trace `tracebook report` analyses when given none; cmd_run.go runs
//     a notebook's cells without a Jupyter server).
//   - cli_args.go: the commands' argument parsing and the load options
//     they share.
//   - session.go: a cells.Session over a DuckDB database and the adapter
//     that makes it the kernel's Executor. The magics whose work lives
//     here are plugged into every new session through sessionHooks, which
//     the file that provides each one appends to in an init function:
//     %evidence (cmd_evidence.go), %report (cmd_report.go), %diff
//     (cmd_diff.go) and %crossview (session.go).
package main
