package cli

import (
	"fmt"
	"io"
	"maps"
	"os"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/internal/suggest"
)

// Main runs the tracebook command line: args are the arguments after the
// program's name, and the returned code is the process's exit status (0
// done, 1 the command failed, 2 an unknown command). The profiles a
// developer asks for through the environment wrap the whole command
// (profile).
func Main(args []string, stdout, stderr io.Writer) int {
	stop := profile()
	code := run(args, stdout, stderr)
	stop()
	return code
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

// run is Main without the profiles, for tests.
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
		fmt.Fprintf(stderr, "tracebook: unknown command %q%s\n\n", name, suggest.DidYouMean(name, slices.Sorted(maps.Keys(commands)), strconv.Quote))
		usage(stderr)
		return 2
	}
	if help || wantsHelp(args[1:]) {
		commandHelp(stdout, c)
		return 0
	}
	if err := c.run(args[1:], stdout, stderr); err != nil {
		// An error that names its command already ("evidence: ...")
		// keeps one name.
		fmt.Fprintf(stderr, "tracebook %s: %s\n", c.name, strings.TrimPrefix(err.Error(), c.name+": "))
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
