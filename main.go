package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"sort"
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

func main() {
	stop := profile()
	code := run(os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// profile starts the profiles a developer asked for: $TRACEBOOK_CPUPROFILE
// names a file for a CPU profile of the whole command and
// $TRACEBOOK_MEMPROFILE one for the heap profile at its end (go tool pprof
// reads both). The returned func writes them.
func profile() (stop func()) {
	var done []func()
	if p := os.Getenv("TRACEBOOK_CPUPROFILE"); p != "" {
		if f, err := os.Create(p); err == nil && pprof.StartCPUProfile(f) == nil {
			done = append(done, func() { pprof.StopCPUProfile(); f.Close() })
		}
	}
	if p := os.Getenv("TRACEBOOK_MEMPROFILE"); p != "" {
		done = append(done, func() {
			if f, err := os.Create(p); err == nil {
				_ = pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		})
	}
	return func() {
		for _, d := range done {
			d()
		}
	}
}

// run is main without the exit, for tests.
func run(args []string, stdout, stderr io.Writer) int {
	help := false
	for len(args) > 0 && args[0] == "help" {
		args, help = args[1:], true // tracebook help [CMD]
	}
	if len(args) == 0 || isHelp(args[0]) {
		usage(stdout)
		return 0
	}
	name := args[0]
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "tracebook: unknown command %q\n\n", name)
		usage(stderr)
		return 2
	}
	if help || wantsHelp(args[1:]) {
		commandHelp(stdout, c)
		return 0
	}
	if err := c.run(args[1:], stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "tracebook %s: %v\n", c.name, err)
		return 1
	}
	return 0
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "tracebook: evidence, a GPU/CPU cross-view and a report from PyTorch-profiler and vLLM traces")
	fmt.Fprintln(w, "\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c := commands[n]
		fmt.Fprintf(w, "  tracebook %s\n      %s\n", c.usage, c.help)
	}
}

// isHelp reports whether arg asks for help (-help too, which the commands
// parsed with the flag package would take as a request for their own).
func isHelp(arg string) bool {
	return arg == "-h" || arg == "--help" || arg == "-help"
}

// wantsHelp reports whether a command's arguments ask for its help: -h or
// --help anywhere before a "--" that ends the options. This is the one
// place the commands' help is handled: no command sees these arguments.
func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if isHelp(a) {
			return true
		}
	}
	return false
}

// commandHelp prints a command's usage and its one-line help, for
// `tracebook CMD -h` and `tracebook help CMD`.
func commandHelp(w io.Writer, c command) {
	fmt.Fprintf(w, "usage: tracebook %s\n\n%s\n", c.usage, c.help)
}
