package cells

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/evidence"
)

// filterOptions are the options of the one filter, in the order help shows
// them. Every magic whose row has filter set takes them.
var filterOptions = []option{
	{name: "trace", arg: "NAME", help: "one loaded trace (default: all)", complete: completeTraceNames},
	{name: "rank", arg: "N", help: "one rank", complete: completeRanks},
	{name: "window", arg: "START..END", help: "a time window in ms from the trace's first event, e.g. 120..180.5"},
	{name: "phase", arg: "PHASE", help: "prefill, decode, mixed or step:N (one step)", complete: completePhases},
	{name: "stream", arg: "S", help: "one GPU stream"},
}

// ParseFilter takes the filter options out of a magic's arguments:
// --trace NAME, --rank N, --window START..END (milliseconds from the
// trace's first event), --phase prefill|decode|mixed|step:N and --stream S,
// each as "--opt VALUE" or "--opt=VALUE" (one dash works too, as for the
// CLI's own options). It returns the filter and the arguments it did not
// take, in their order. Every magic that takes a filter parses it here, so
// the options mean the same everywhere.
func ParseFilter(args []string) (evidence.Filter, []string, error) {
	var f evidence.Filter
	var rest []string
	seen := map[string]bool{}
	for i := 0; i < len(args); i++ {
		name, value, inline := splitOption(args[i])
		if name == "" && strings.HasPrefix(args[i], "-") {
			// -rank 3 as well, as the CLI's own options take one dash too.
			name, value, inline = splitOption("-" + args[i])
		}
		if !isFilterOption(name) {
			rest = append(rest, args[i])
			continue
		}
		if seen[name] {
			return evidence.Filter{}, nil, usagef("--%s given twice", name)
		}
		seen[name] = true
		if !inline {
			if i+1 >= len(args) {
				return evidence.Filter{}, nil, usagef("--%s needs a value", name)
			}
			i++
			value = args[i]
		}
		if err := setFilter(&f, name, value); err != nil {
			return evidence.Filter{}, nil, err
		}
	}
	return f, rest, nil
}

// FilterOptionNames are the names of the filter's options (without
// dashes), for a command that suggests one for a misspelt option.
func FilterOptionNames() []string {
	names := make([]string, len(filterOptions))
	for i, o := range filterOptions {
		names[i] = o.name
	}
	return names
}

func isFilterOption(name string) bool {
	for _, o := range filterOptions {
		if o.name == name {
			return true
		}
	}
	return false
}

// splitOption splits "--name=value" or "--name"; name is "" for an
// argument that is not an option.
func splitOption(arg string) (name, value string, inline bool) {
	if !strings.HasPrefix(arg, "--") || len(arg) == 2 {
		return "", "", false
	}
	name, value, inline = strings.Cut(arg[2:], "=")
	return name, value, inline
}

func setFilter(f *evidence.Filter, name, value string) error {
	switch name {
	case "trace":
		if value == "" {
			return usagef("--trace: the trace name is empty")
		}
		f.Trace = value
	case "rank":
		n, err := parseRank(value)
		if err != nil {
			return err
		}
		f.Rank, f.HasRank = n, true
	case "window":
		a, b, err := parseWindow("--window", value)
		if err != nil {
			return err
		}
		f.WindowStartNs, f.WindowEndNs = a, b
	case "phase":
		switch {
		case value == "prefill" || value == "decode" || value == "mixed":
			f.Phase = value
		case strings.HasPrefix(value, "step:"):
			n, err := strconv.Atoi(value[len("step:"):])
			if err != nil || n < 0 {
				return usagef("--phase: %q is not step:N with N a step number", value)
			}
			f.Step, f.HasStep = n, true
		default:
			return usagef("--phase: %q is not prefill, decode, mixed or step:N", value)
		}
	case "stream":
		n, err := strconv.ParseInt(strings.TrimPrefix(value, "stream "), 10, 64)
		if err != nil || n < 0 {
			return usagef("--stream: %q is not a stream number", value)
		}
		f.Stream, f.HasStream = n, true
	}
	return nil
}

// parseRank parses a non-negative rank.
func parseRank(value string) (int, error) {
	n, err := strconv.Atoi(value)
	if err != nil || n < 0 {
		return 0, usagef("--rank: %q is not a rank (a non-negative integer)", value)
	}
	return n, nil
}

// parseWindow parses "START..END" in milliseconds into nanoseconds, exactly
// (no floating point): at most 6 decimals, START < END.
func parseWindow(opt, value string) (startNs, endNs int64, err error) {
	a, b, ok := strings.Cut(value, "..")
	if !ok {
		return 0, 0, usagef("%s: %q is not START..END in milliseconds", opt, value)
	}
	startNs, okA := msToNs(a)
	endNs, okB := msToNs(b)
	if !okA || !okB {
		return 0, 0, usagef("%s: %q is not START..END in milliseconds", opt, value)
	}
	if startNs >= endNs {
		return 0, 0, usagef("%s: start %s ms is not before end %s ms", opt, a, b)
	}
	return startNs, endNs, nil
}

// msToNs converts a non-negative decimal number of milliseconds with at most
// six decimals to nanoseconds.
func msToNs(s string) (int64, bool) {
	ip, fp, _ := strings.Cut(s, ".")
	if ip == "" && fp == "" || len(fp) > 6 || len(ip) > 12 {
		return 0, false
	}
	for _, r := range ip + fp {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	var ns int64
	for _, r := range ip {
		ns = ns*10 + int64(r-'0')
	}
	ns *= 1_000_000
	scale := int64(100_000)
	for _, r := range fp {
		ns += int64(r-'0') * scale
		scale /= 10
	}
	return ns, true
}

// parseSteps parses "A..B" with A <= B, both step numbers.
func parseSteps(value string) (first, last int, err error) {
	a, b, ok := strings.Cut(value, "..")
	first, errA := strconv.Atoi(a)
	last, errB := strconv.Atoi(b)
	if !ok || errA != nil || errB != nil || first < 0 || last < 0 {
		return 0, 0, usagef("--steps: %q is not FIRST..LAST with step numbers", value)
	}
	if first > last {
		return 0, 0, usagef("--steps: first step %d is after last step %d", first, last)
	}
	return first, last, nil
}

// usagef returns an ErrUsage error with the formatted message.
func usagef(format string, a ...any) error {
	return &usageError{msg: fmt.Sprintf(format, a...)}
}
