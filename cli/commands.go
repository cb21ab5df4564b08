package cli

import (
	"io"
	"strings"

	"github.com/tracebook/tracebook/analysis/evidence"
)

// command is one row of the CLI: a subcommand, its one-line help and the
// function that runs it with the remaining arguments.
type command struct {
	name  string
	usage string
	help  string
	run   func(args []string, stdout, stderr io.Writer) error
}

// commands is the one table of subcommands, by name; help is generated
// from it. Each row's run function lives in cmd_<name>.go. The table is
// filled by init, not by its declaration: the run functions name it in
// their usage errors, which a declaration's initializer may not.
var commands map[string]command

func init() {
	commands = map[string]command{}
	for _, c := range []command{
		{
			name:  "report",
			usage: "report [TRACE...] [--db FILE] [--from NOTEBOOK.ipynb] [-o report.html] [--md report.md] [--perfetto DIR] [filter] [--cache DIR|-] [-q] | --check FILE.html",
			help:  "the report: at most 3 critical issues with fixes, as one offline HTML file (and Markdown)",
			run:   runReport,
		},
		{
			name:  "evidence",
			usage: "evidence AREA [TRACE...] [--db FILE] [--format md|csv|json] [--raw] [filter] [--cache DIR|-] [-q]",
			help:  "one evidence area (" + strings.Join(evidence.Areas, ", ") + ", phases, or all) of the traces, rolled up for the filter; --raw prints the preset's mergeable rows",
			run:   runEvidence,
		},
		{
			name:  "crossview",
			usage: "crossview [TRACE...] [--db FILE] [filter] [--depth N] [--min-pct P] [--format tree|folded|html] [--view gpu|cpu] [--cache DIR|-] [-q]",
			help:  "the GPU view and the CPU view of the same slice, and which side is the constraint",
			run:   runCrossview,
		},
		{
			name:  "diff",
			usage: "diff BASE TEST [--db FILE] [-o diff.html] [--md diff.md] [--base-context K=V,...] [--test-context K=V,...] [filter] [--cache DIR|-] [-q] | --check FILE.html",
			help:  "did the fix work? compare two traces of the same workload, step-normalised (Markdown on stdout without -o/--md; -o writes one offline page whose rank and phase filters recompute the diff)",
			run:   runDiff,
		},
		{
			name:  "query",
			usage: "query [TRACE...] -e SQL [--format csv|json|md] [--db FILE] [--max-rows N] [load options]",
			help:  "run SQL over traces (loaded for the query, or already in --db FILE)",
			run:   runQuery,
		},
		{
			name:  "load",
			usage: "load TRACE... (--db FILE.duckdb | --parquet DIR) [--name N] [--rank N] [--no-python] [--window START..END] [--steps A..B] [--cache DIR|-] [-q]",
			help:  "load traces into a DuckDB database file that a notebook (or duckdb) can reopen, or write them as a Parquet dataset (one folder per trace and rank) that every command takes as a TRACE",
			run:   runLoad,
		},
		{
			name:  "run",
			usage: "run NOTEBOOK.ipynb [-o OUT.ipynb | --inplace] [--allow-errors] [--cache DIR|-]",
			help:  "execute a notebook's cells without a Jupyter server and write it with its outputs",
			run:   runRun,
		},
		{
			name:  "synth",
			usage: "synth TRACE -n N -o OUT.json[.gz]",
			help:  "write a trace N times the size of a real one (its steps repeated, shifted in time, ids renumbered), for benchmarks",
			run:   runSynth,
		},
		{
			name:  "kernel",
			usage: "kernel -f CONNECTION_FILE",
			help:  "run the Jupyter kernel (Jupyter starts it through the kernelspec)",
			run:   runKernel,
		},
		{
			name:  "install",
			usage: "install [--user | --prefix DIR]",
			help:  "register the tracebook kernelspec with Jupyter",
			run:   runInstall,
		},
	} {
		commands[c.name] = c
	}
}
