// Command tracebook turns PyTorch-profiler (Kineto) and vLLM/SGLang traces
// into evidence, a GPU/CPU cross-view and a report with fixes. It is a
// Jupyter kernel (tracebook kernel), a command-line tool and the builder of
// a single-file offline HTML report.
//
// This file set is the composition root: it wires the analysis core, the
// DuckDB engine, the notebook language and the Jupyter protocol together.
// Each subcommand lives in its own cmd_*.go file and is listed once in the
// commands table in main.go.
package main
