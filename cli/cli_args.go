package cli

import (
	"fmt"
	"strings"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/cells"
	"github.com/tracebook/tracebook/internal/suggest"
)

// options names a command's own options: those that take a value and the
// flags, which take none. An entry may list aliases, "out|o"; its first
// name is the key of the parsed arguments.
type options struct {
	values []string
	flags  []string
}

// cacheOptions are the load options of every command that loads traces:
// the database file (--db FILE: the traces go into it, and a command
// given no trace reads what it holds), the parse cache (--cache DIR, - for
// none) and -q (--quiet) for no progress line.
var cacheOptions = options{values: []string{"db", "cache"}, flags: []string{"quiet|q"}}

// traceLoadOptions are how load and query load the traces (loadFlagsOf);
// report, evidence, crossview and diff take only cacheOptions (their
// --rank and --window filter the analysis, not the load).
var traceLoadOptions = options{values: []string{"name", "rank", "window", "steps"}, flags: []string{"no-python"}}

// parsedArgs are a command's arguments split by parseArgs.
type parsedArgs struct {
	values map[string]string // the value of each value option given (the last one), by key
	flags  map[string]bool   // the flags given, by key
	rest   []string          // the other arguments in order: the filter with its values, the operands, unknown options
	after  []string          // the arguments after "--": operands, even those that start with "-"
}

// parseArgs takes the options of sets out of args. An option is written
// with one or two dashes, its value after "=" or as the next argument
// (-o out.html, --md=r.md, --cache -); a flag takes no value. "--" ends
// the options. What no set names stays in rest, in order, for
// cells.ParseFilter and the operands (the filter options take values:
// an argument is only consumed as the value of an option of sets).
func parseArgs(args []string, sets ...options) (parsedArgs, error) {
	key := map[string]string{}   // each name of an option: its key
	isValue := map[string]bool{} // each name of a value option
	add := func(entries []string, takesValue bool) {
		for _, e := range entries {
			names := strings.Split(e, "|")
			for _, n := range names {
				key[n], isValue[n] = names[0], takesValue
			}
		}
	}
	for _, s := range sets {
		add(s.values, true)
		add(s.flags, false)
	}
	p := parsedArgs{values: map[string]string{}, flags: map[string]bool{}}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			p.after = append(p.after, args[i+1:]...)
			break
		}
		name, value, inline := splitArg(arg)
		k, ok := key[name]
		if !ok {
			p.rest = append(p.rest, arg)
			continue
		}
		spelled, _, _ := strings.Cut(arg, "=")
		switch {
		case !isValue[name] && inline:
			return p, fmt.Errorf("%s takes no value", spelled)
		case !isValue[name]:
			p.flags[k] = true
			continue
		case !inline:
			if i+1 >= len(args) {
				return p, fmt.Errorf("%s needs a value", spelled)
			}
			i++
			value = args[i]
		}
		p.values[k] = value
	}
	return p, nil
}

// usageOptions are the names of the options cmd's usage line shows, and
// the filter's where it takes one: what a misspelt option is matched
// against.
func usageOptions(cmd string) []string {
	usage := commands[cmd].usage
	var names []string
	for _, w := range strings.FieldsFunc(usage, func(r rune) bool { return strings.ContainsRune(" []|()", r) }) {
		if name, _, _ := splitArg(w); name != "" {
			names = append(names, name)
		}
	}
	if strings.Contains(usage, "[filter]") {
		names = append(names, cells.FilterOptionNames()...)
	}
	return names
}

// splitArg splits "-name", "--name", "-name=value" and "--name=value";
// name is "" for an argument that is not an option ("-", "---x", "x").
func splitArg(arg string) (name, value string, inline bool) {
	s, ok := strings.CutPrefix(arg, "-")
	s = strings.TrimPrefix(s, "-")
	if !ok || s == "" || s[0] == '-' {
		return "", "", false
	}
	return strings.Cut(s, "=")
}

// parseCommandArgs is parseArgs for the command cmd, whose usage its
// errors show.
func parseCommandArgs(cmd string, args []string, sets ...options) (parsedArgs, error) {
	p, err := parseArgs(args, sets...)
	if err != nil {
		return p, fmt.Errorf("%w (usage: tracebook %s)", err, commands[cmd].usage)
	}
	return p, nil
}

// value returns the value of the option key, or def when it was not given.
func (p parsedArgs) value(key, def string) string {
	if v, ok := p.values[key]; ok {
		return v
	}
	return def
}

// operands returns pos, the arguments left once the command has read its
// options (and the filter), followed by those after "--"; an argument of
// pos that looks like an option is one the command does not know.
func (p parsedArgs) operands(cmd string, pos []string) ([]string, error) {
	for _, a := range pos {
		if strings.HasPrefix(a, "-") {
			name, _, _ := splitArg(a)
			hint := suggest.DidYouMean(name, usageOptions(cmd), func(s string) string {
				if len(s) == 1 {
					return "-" + s // as the usage writes it: -o, -q
				}
				return "--" + s
			})
			return nil, fmt.Errorf("unknown option %s%s (usage: tracebook %s)", a, hint, commands[cmd].usage)
		}
	}
	return append(pos, p.after...), nil
}

// filter reads the filter (--trace --rank --window --phase --stream ...)
// from the rest of the arguments with cells.ParseFilter, as the magics do,
// and returns it with the operands.
func (p parsedArgs) filter(cmd string) (evidence.Filter, []string, error) {
	f, pos, err := cells.ParseFilter(p.rest)
	if err != nil {
		return f, nil, err
	}
	ops, err := p.operands(cmd, pos)
	return f, ops, err
}
