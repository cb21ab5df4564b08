package cells

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/internal/suggest"
)

// magic is one row of the magic table: everything about a magic lives here,
// and %help, completion, inspection and Execute read it from here.
type magic struct {
	name string // without % or %%
	cell bool   // a cell magic (%%name): its body follows the first line
	args string // the positional arguments in the synopsis: "AREA", "[PATH...]"
	help string // one line
	long string // paragraphs shown by %help NAME and Shift-Tab
	// options of the magic (or of the subcommand), in the order help shows them.
	options []option
	// filter says whether the magic takes the shared filter options.
	filter bool
	// subs are the subcommands (%trace load, ...): rows of the same shape,
	// whose name is the subcommand's. A magic with subs has no run of its own.
	subs []*magic
	// run runs the magic.
	run func(ctx context.Context, c *call) (*Result, error)
	// complete returns the candidates for the positional argument being
	// typed; before holds the positional arguments already written.
	complete func(s *Session, before []string, word string) []string
}

// option is one --option of a magic.
type option struct {
	name string // without the leading --
	arg  string // the placeholder of its value ("N", "PATH"); "" for a flag
	help string
	// complete returns the candidates for the option's value; nil for none.
	complete func(s *Session, word string) []string
}

// call is one running magic: the session, the parsed cell, the arguments
// that follow the magic's name (and subcommand), where outputs go, and the
// execution counter of the cell.
type call struct {
	s     *Session
	m     *magic
	full  string // "%trace load", for messages
	cell  Cell
	args  []string
	pub   Publisher
	count int
}

// areaNames are the areas %evidence takes: analysis/evidence's areas,
// "phases" (another name for steps) and "all".
func areaNames() []string {
	return append(append([]string(nil), evidence.Areas...), "phases", "all")
}

// magics is the magic table. It is filled in init because the run
// functions of %help read it.
var magics []*magic

func init() {
	magics = []*magic{
		{
			name: "trace",
			help: "load, list, describe and drop traces",
			long: "A trace is one loaded job: a file, the per-rank files of one profiling session, " +
				"or a merged file holding several ranks. Loading is atomic: a trace that fails to parse " +
				"leaves the database as it was, and the error names the file and the byte offset. " +
				"Loaded traces land in the tables traces, events and threads; a plain cell queries them.",
			subs: []*magic{
				{
					name: "load",
					args: "[PATH...]",
					help: "load trace files (.json, .json.gz), a folder of per-rank files, or a glob",
					long: "With no PATH, the newest trace in the working directory is loaded, " +
						"preferring *-merged_trace.json(.gz). Progress is shown while the files are read. " +
						"With --background the cell returns at once: %trace list answers meanwhile and shows the " +
						"progress, any other cell waits for the load first, and an interrupt cancels it.",
					options: []option{
						{name: "name", arg: "NAME", help: "name of the trace (default: derived from the path)"},
						{name: "rank", arg: "N", help: "the rank of a single-rank trace, overriding the one in the file"},
						{name: "no-python", help: "skip python_function events to save memory"},
						{name: "window", arg: "START..END", help: "load only events overlapping this window, in ms from the first event"},
						{name: "steps", arg: "FIRST..LAST", help: "load only these steps (inclusive)"},
						{name: "background", help: "return at once and load behind the cells"},
					},
					run:      runTraceLoad,
					complete: func(s *Session, _ []string, word string) []string { return s.completePath(word, true) },
				},
				{
					name: "list",
					help: "list the loaded traces: files, ranks, events, producer, platform, span",
					run:  runTraceList,
				},
				{
					name:     "info",
					args:     "[NAME]",
					help:     "one row per file and rank: producer, platform, GPU, capabilities, span, events, evidence gaps",
					run:      runTraceInfo,
					complete: completeFirstTrace,
				},
				{
					name:     "drop",
					args:     "NAME",
					help:     "remove a trace and its events from the database",
					run:      runTraceDrop,
					complete: completeFirstTrace,
				},
			},
		},
		{
			name: "sql",
			cell: true,
			help: "run the cell's body as SQL (a plain cell does the same)",
			long: "The body is sent to DuckDB as written. The result shows at most --max-rows rows " +
				"(default 50) and says how many there were. Errors keep DuckDB's LINE and caret lines; " +
				"in a %%sql cell LINE 1 is the first line below %%sql.",
			options: []option{
				{name: "max-rows", arg: "N", help: "show at most N rows (default 50)"},
			},
			run: runSQLMagic,
		},
		{
			name:   "evidence",
			args:   "AREA",
			filter: true,
			help:   "one evidence area as a table, with the SQL that produced it",
			long: "AREA is one of " + strings.Join(evidence.Areas, ", ") + "; phases is another name for steps, " +
				"and all collects every area. Each area is one preset in sql/; its result is kept as the table evidence_<area>.",
			run:      runHook(func(s *Session) Hook { return s.Evidence }),
			complete: completeAreas,
		},
		{
			name:   "crossview",
			filter: true,
			help:   "the GPU view and the CPU view of the same slice, side by side, and which side is the constraint",
			long: "The GPU view attributes GPU time to the CPU call stack that launched it (python frames, " +
				"operators, runtime call, kernel); the CPU view is host self time by stack, under the same filter.",
			run: runHook(func(s *Session) Hook { return s.Crossview }),
		},
		{
			name:   "report",
			filter: true,
			help:   "the report: findings, at most 3 critical issues, each with a fix",
			long:   "Shown as Markdown in the notebook; --html writes one self-contained file that works offline, --md writes Markdown, --perfetto DIR writes each finding's Perfetto file.",
			options: []option{
				{name: "html", arg: "PATH", help: "write the self-contained HTML report to PATH",
					complete: func(s *Session, w string) []string { return s.completePath(w, false) }},
				{name: "md", arg: "PATH", help: "write the Markdown report to PATH",
					complete: func(s *Session, w string) []string { return s.completePath(w, false) }},
				{name: "perfetto", arg: "DIR", help: "write each finding's Perfetto file (its worst step ±1 as a Chrome trace) into DIR",
					complete: func(s *Session, w string) []string { return s.completePath(w, false) }},
			},
			run: runHook(func(s *Session) Hook { return s.Report }),
		},
		{
			name:   "diff",
			args:   "BASE TEST",
			filter: true,
			help:   "compare two traces of the same workload, step-normalised",
			long:   "Deltas, findings resolved, new and persisting, and a warning when the two %context records differ.",
			options: []option{
				{name: "html", arg: "PATH", help: "write the diff as one offline HTML file to PATH"},
				{name: "md", arg: "PATH", help: "write the diff as Markdown to PATH"},
				{name: "base-context", arg: "K=V,...", help: "what BASE ran with, where the trace cannot show it (tp, max-num-seqs, ...)"},
				{name: "test-context", arg: "K=V,...", help: "what TEST ran with"},
			},
			run: runHook(func(s *Session) Hook { return s.Diff }),
			complete: func(s *Session, before []string, word string) []string {
				if len(before) < 2 {
					return s.traceNames()
				}
				return nil
			},
		},
		{
			name: "context",
			args: "[KEY=VALUE...]",
			help: "record what a trace cannot show (TP, max-num-seqs, cudagraph mode, ISL/OSL, batch size)",
			long: "With no argument, shows the record. KEY= removes a key. Keys: " + contextKeyList() +
				". Findings and %diff read the record.",
			options: []option{
				{name: "clear", help: "forget every key first"},
			},
			run: runContext,
			complete: func(s *Session, _ []string, word string) []string {
				var out []string
				for _, k := range contextKeys {
					out = append(out, k.name+"=")
				}
				return out
			},
		},
		{
			name: "help",
			args: "[MAGIC]",
			help: "this help, or one magic's usage and options",
			run:  runHelp,
			complete: func(s *Session, before []string, word string) []string {
				if len(before) > 0 {
					return nil
				}
				var out []string
				for _, m := range magics {
					out = append(out, m.name)
				}
				return out
			},
		},
	}
}

// lookupMagic returns the row of a magic, or nil.
func lookupMagic(name string) *magic {
	for _, m := range magics {
		if m.name == name {
			return m
		}
	}
	return nil
}

// magicHint is the " (did you mean %name?)" of an unknown magic's error,
// "" when no magic's name is close to name.
func magicHint(name string) string {
	names := make([]string, len(magics))
	for i, m := range magics {
		names[i] = m.name
	}
	return suggest.DidYouMean(name, names, func(s string) string { return "%" + s })
}

// sub returns the subcommand row of m, or nil.
func (m *magic) sub(name string) *magic {
	for _, s := range m.subs {
		if s.name == name {
			return s
		}
	}
	return nil
}

// allOptions returns the options a row takes: its own and the filter's.
func (m *magic) allOptions() []option {
	if !m.filter {
		return m.options
	}
	return append(append([]option(nil), m.options...), filterOptions...)
}

// synopsis is the usage line of a row; prefix is "%trace" for subcommands.
func (m *magic) synopsis(prefix string) string {
	s := prefix
	switch {
	case prefix != "":
		s += " " + m.name
	case m.cell:
		s = "%%" + m.name
	default:
		s = "%" + m.name
	}
	if m.args != "" {
		s += " " + m.args
	}
	if m.filter {
		s += " [filter]"
	}
	if len(m.options) > 0 {
		s += " [options]"
	}
	return s
}

// helpIndex is %help with no argument.
func helpIndex() string {
	type line struct{ syn, help string }
	var lines []line
	for _, m := range magics {
		if len(m.subs) > 0 {
			for _, sub := range m.subs {
				lines = append(lines, line{sub.synopsis("%" + m.name), sub.help})
			}
			continue
		}
		lines = append(lines, line{m.synopsis(""), m.help})
	}
	width := 0
	for _, l := range lines {
		width = max(width, len(l.syn))
	}
	var b strings.Builder
	b.WriteString("A plain cell is SQL over the loaded traces (tables traces, events, threads).\n")
	b.WriteString("A cell whose first line starts with % is a magic:\n\n")
	for _, l := range lines {
		// The help column wraps at 100 columns, continuation lines aligned.
		col := 2 + width + 2
		fmt.Fprintf(&b, "  %-*s ", width, l.syn)
		at := col - 1
		for _, w := range strings.Fields(l.help) {
			if at+1+len(w) > 100 && at > col {
				fmt.Fprintf(&b, "\n%*s", col-1, "")
				at = col - 1
			}
			b.WriteString(" " + w)
			at += 1 + len(w)
		}
		b.WriteString("\n")
	}
	b.WriteString("\nfilter: ")
	for i, o := range filterOptions {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "--%s %s", o.name, o.arg)
	}
	b.WriteString(" (%help evidence explains it)\n")
	b.WriteString("%help MAGIC shows a magic's options. Tab completes; Shift-Tab shows help.\n")
	return b.String()
}

// magicHelp is %help NAME.
func magicHelp(m *magic) string {
	var b strings.Builder
	if len(m.subs) == 0 {
		fmt.Fprintf(&b, "%s\n    %s\n", m.synopsis(""), m.help)
		writeOptions(&b, m)
	} else {
		fmt.Fprintf(&b, "%%%s: %s\n", m.name, m.help)
		for _, sub := range m.subs {
			fmt.Fprintf(&b, "\n%s\n    %s\n", sub.synopsis("%"+m.name), sub.help)
			writeOptions(&b, sub)
			if sub.long != "" {
				b.WriteString("\n")
				writeWrapped(&b, sub.long, "    ")
			}
		}
	}
	if m.long != "" {
		b.WriteString("\n")
		writeWrapped(&b, m.long, "")
	}
	return b.String()
}

func writeOptions(b *strings.Builder, m *magic) {
	write := func(title string, opts []option) {
		if len(opts) == 0 {
			return
		}
		fmt.Fprintf(b, "  %s:\n", title)
		for _, o := range opts {
			flag := "--" + o.name
			if o.arg != "" {
				flag += " " + o.arg
			}
			fmt.Fprintf(b, "    %-22s %s\n", flag, o.help)
		}
	}
	write("options", m.options)
	if m.filter {
		write("filter (the same for every magic)", filterOptions)
	}
}

// writeWrapped writes text wrapped at 80 columns with an indent.
func writeWrapped(b *strings.Builder, text, indent string) {
	col := 0
	for _, w := range strings.Fields(text) {
		if col > 0 && col+1+len(w) > 80 {
			b.WriteString("\n")
			col = 0
		}
		if col == 0 {
			b.WriteString(indent)
			col = len(indent)
		} else {
			b.WriteString(" ")
			col++
		}
		b.WriteString(w)
		col += len(w)
	}
	b.WriteString("\n")
}

func runHelp(_ context.Context, c *call) (*Result, error) {
	switch len(c.args) {
	case 0:
		return textResult(helpIndex()), nil
	case 1:
		name := strings.TrimLeft(c.args[0], "%")
		m := lookupMagic(name)
		if m == nil {
			return nil, fmt.Errorf("%w %q%s (%%help lists the magics)", ErrUnknownMagic, c.args[0], magicHint(name))
		}
		return textResult(magicHelp(m)), nil
	}
	return nil, usagef("%%help takes at most one magic name, got %d arguments", len(c.args))
}

// Hook runs a magic whose work another part of the program provides:
// %evidence, %crossview, %report and %diff. args are the magic's arguments
// as written (ParseFilter takes the filter out of them); pub is for outputs
// while it runs. A nil Hook makes the magic fail with "...is not available
// in this build".
type Hook func(ctx context.Context, s *Session, args []string, pub Publisher) (*Result, error)

func runHook(get func(s *Session) Hook) func(ctx context.Context, c *call) (*Result, error) {
	return func(ctx context.Context, c *call) (*Result, error) {
		h := get(c.s)
		if h == nil {
			return nil, fmt.Errorf("%s is %w", c.full, ErrNotAvailable)
		}
		return h(ctx, c.s, c.args, c.pub)
	}
}

// parseOptions splits args into the row's options and positional
// arguments. Flags map to "true". An unknown option is a usage error.
func parseOptions(m *magic, full string, args []string) (map[string]string, []string, error) {
	opts := map[string]string{}
	var pos []string
	for i := 0; i < len(args); i++ {
		name, value, inline := splitOption(args[i])
		if name == "" {
			pos = append(pos, args[i])
			continue
		}
		var o *option
		for j := range m.options {
			if m.options[j].name == name {
				o = &m.options[j]
			}
		}
		if o == nil {
			var names []string
			for _, o := range m.allOptions() {
				names = append(names, o.name)
			}
			return nil, nil, usagef("%s has no option --%s%s", full, name, suggest.DidYouMean(name, names, func(s string) string { return "--" + s }))
		}
		if _, dup := opts[name]; dup {
			return nil, nil, usagef("--%s given twice", name)
		}
		switch {
		case o.arg == "" && inline:
			return nil, nil, usagef("--%s takes no value", name)
		case o.arg == "":
			value = "true"
		case !inline:
			if i+1 >= len(args) {
				return nil, nil, usagef("--%s needs a value", name)
			}
			i++
			value = args[i]
		}
		opts[name] = value
	}
	return opts, pos, nil
}

// magicNames returns every magic as written in a cell ("%trace", "%%sql"), sorted.
func magicNames() []string {
	var out []string
	for _, m := range magics {
		if m.cell {
			out = append(out, "%%"+m.name)
		} else {
			out = append(out, "%"+m.name)
		}
	}
	sort.Strings(out)
	return out
}
