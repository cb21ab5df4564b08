package cli

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/trace"
)

// testOptions are a command's options as report and evidence have them:
// value options with an alias, the load options' flag with its alias, and
// a flag of its own.
var testOptions = []options{cacheOptions, {values: []string{"out|o", "md", "e"}, flags: []string{"raw"}}}

func TestParseArgs(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		values map[string]string
		flags  map[string]bool
		rest   []string
		after  []string
	}{
		{"nothing", nil, map[string]string{}, map[string]bool{}, nil, nil},
		{"--name value", []string{"--md", "r.md"}, map[string]string{"md": "r.md"}, map[string]bool{}, nil, nil},
		{"--name=value", []string{"--md=r.md"}, map[string]string{"md": "r.md"}, map[string]bool{}, nil, nil},
		{"-name value", []string{"-md", "r.md"}, map[string]string{"md": "r.md"}, map[string]bool{}, nil, nil},
		{"-x value", []string{"-o", "r.html"}, map[string]string{"out": "r.html"}, map[string]bool{}, nil, nil},
		{"-x=value", []string{"-o=r.html"}, map[string]string{"out": "r.html"}, map[string]bool{}, nil, nil},
		{"an alias under the first name", []string{"--out", "r.html"}, map[string]string{"out": "r.html"}, map[string]bool{}, nil, nil},
		{"the last one wins", []string{"-o", "a.html", "--out=b.html"}, map[string]string{"out": "b.html"}, map[string]bool{}, nil, nil},
		{"an empty value", []string{"--md="}, map[string]string{"md": ""}, map[string]bool{}, nil, nil},
		{"a value with =", []string{"-e", "SELECT 1 = 1", "--cache=a=b"}, map[string]string{"e": "SELECT 1 = 1", "cache": "a=b"}, map[string]bool{}, nil, nil},
		{"a value that looks like an option", []string{"--cache", "-", "-e", "--raw"}, map[string]string{"cache": "-", "e": "--raw"}, map[string]bool{}, nil, nil},
		{"flags", []string{"-q", "--raw"}, map[string]string{}, map[string]bool{"quiet": true, "raw": true}, nil, nil},
		{"a flag's alias", []string{"--quiet", "--q"}, map[string]string{}, map[string]bool{"quiet": true}, nil, nil},
		{
			"the rest in order: operands, the filter and its values, unknown options",
			[]string{"a.json", "--rank", "1", "-q", "b.json", "--bogus", "--window=1..2", "-o", "r.html", "c.json"},
			map[string]string{"out": "r.html"}, map[string]bool{"quiet": true},
			[]string{"a.json", "--rank", "1", "b.json", "--bogus", "--window=1..2", "c.json"}, nil,
		},
		{"- and ---x are not options", []string{"-", "---md", "x"}, map[string]string{}, map[string]bool{}, []string{"-", "---md", "x"}, nil},
		{
			"-- ends the options",
			[]string{"a.json", "-q", "--", "-b.json", "--md", "x", "--"},
			map[string]string{}, map[string]bool{"quiet": true}, []string{"a.json"}, []string{"-b.json", "--md", "x", "--"},
		},
		{"-- as a value", []string{"--md", "--", "a.json"}, map[string]string{"md": "--"}, map[string]bool{}, []string{"a.json"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := parseArgs(tc.args, testOptions...)
			if err != nil {
				t.Fatalf("parseArgs(%q) = %v", tc.args, err)
			}
			if !reflect.DeepEqual(p.values, tc.values) {
				t.Errorf("parseArgs(%q) values = %q, want %q", tc.args, p.values, tc.values)
			}
			if !reflect.DeepEqual(p.flags, tc.flags) {
				t.Errorf("parseArgs(%q) flags = %v, want %v", tc.args, p.flags, tc.flags)
			}
			if !reflect.DeepEqual(p.rest, tc.rest) {
				t.Errorf("parseArgs(%q) rest = %q, want %q", tc.args, p.rest, tc.rest)
			}
			if !reflect.DeepEqual(p.after, tc.after) {
				t.Errorf("parseArgs(%q) after = %q, want %q", tc.args, p.after, tc.after)
			}
		})
	}
}

func TestParseArgs_Errors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--md"}, "--md needs a value"},
		{[]string{"a.json", "-o"}, "-o needs a value"},
		{[]string{"--cache"}, "--cache needs a value"},
		{[]string{"-q", "--out"}, "--out needs a value"},
		{[]string{"--raw=1"}, "--raw takes no value"},
		{[]string{"-q=true"}, "-q takes no value"},
		{[]string{"--quiet="}, "--quiet takes no value"},
	}
	for _, tc := range tests {
		if _, err := parseArgs(tc.args, testOptions...); err == nil || err.Error() != tc.want {
			t.Errorf("parseArgs(%q) = %v, want the error %q", tc.args, err, tc.want)
		}
	}
}

// TestParsedArgsFilter: the filter is read from the rest; the operands
// are what it leaves followed by the arguments after "--", and an option
// nobody knows is an error that shows the command's usage.
func TestParsedArgsFilter(t *testing.T) {
	p, err := parseCommandArgs("report", []string{"a.json", "--rank", "1", "-o", "r.html", "--phase=decode", "--", "-b.json", "--trace"}, cacheOptions, options{values: []string{"out|o"}})
	if err != nil {
		t.Fatal(err)
	}
	f, ops, err := p.filter("report")
	if err != nil {
		t.Fatal(err)
	}
	if !f.HasRank || f.Rank != 1 || f.Phase != "decode" || f.Trace != "" {
		t.Errorf("filter = %+v, want rank 1, phase decode and no trace", f)
	}
	if want := []string{"a.json", "-b.json", "--trace"}; !reflect.DeepEqual(ops, want) {
		t.Errorf("operands = %q, want %q", ops, want)
	}

	p, err = parseCommandArgs("report", []string{"a.json", "--bogus", "1"}, cacheOptions)
	if err != nil {
		t.Fatal(err)
	}
	want := "unknown option --bogus (usage: tracebook " + commands["report"].usage + ")"
	if _, _, err := p.filter("report"); err == nil || err.Error() != want {
		t.Errorf("filter of an unknown option = %v, want %q", err, want)
	}
	// A misspelt option: the closest of the usage's options and the
	// filter's, which the usage line names only as [filter].
	for _, c := range []struct{ arg, hint string }{
		{"--perfeto", " (did you mean --perfetto?)"},
		{"--rnak", " (did you mean --rank?)"},
		{"-qq", " (did you mean -q?)"},
		{"--zzzz", ""},
	} {
		p, err = parseCommandArgs("report", []string{"a.json", c.arg}, cacheOptions)
		if err != nil {
			t.Fatal(err)
		}
		want := "unknown option " + c.arg + c.hint + " (usage: tracebook " + commands["report"].usage + ")"
		if _, _, err := p.filter("report"); err == nil || err.Error() != want {
			t.Errorf("filter of %s = %v, want %q", c.arg, err, want)
		}
	}
	want = "--cache needs a value (usage: tracebook " + commands["diff"].usage + ")"
	if _, err := parseCommandArgs("diff", []string{"a", "b", "--cache"}, cacheOptions); err == nil || err.Error() != want {
		t.Errorf("parseCommandArgs(diff a b --cache) = %v, want %q", err, want)
	}
}

func TestLoadFlagsOf(t *testing.T) {
	tests := []struct {
		args []string
		want loadFlags
		err  string
	}{
		{[]string{"--cache", "-", "-q"}, loadFlags{cache: "-", quiet: true}, ""},
		{[]string{"--db=x.duckdb", "--name", "n", "--no-python"}, loadFlags{db: "x.duckdb", opts: trace.LoadOptions{Name: "n", NoPython: true}}, ""},
		{[]string{"--rank", "3", "--steps", "2..4"}, loadFlags{opts: trace.LoadOptions{Rank: 3, HasRank: true, FirstStep: 2, LastStep: 4}}, ""},
		{[]string{"--window", "1..2.5ms"}, loadFlags{opts: trace.LoadOptions{WindowStartNs: 1e6, WindowEndNs: 2.5e6}}, ""},
		{[]string{"--rank", "-1"}, loadFlags{}, `--rank "-1": want a rank number`},
		{[]string{"--window", "5..2"}, loadFlags{}, `--window "5..2"`},
		{[]string{"--steps", "4..2"}, loadFlags{}, `--steps "4..2"`},
	}
	for _, tc := range tests {
		p, err := parseArgs(tc.args, cacheOptions, traceLoadOptions)
		if err != nil {
			t.Fatalf("parseArgs(%q) = %v", tc.args, err)
		}
		got, err := loadFlagsOf(p)
		switch {
		case tc.err != "":
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("loadFlagsOf(%q) = %v, want the error %q", tc.args, err, tc.err)
			}
		case err != nil:
			t.Errorf("loadFlagsOf(%q) = %v", tc.args, err)
		case !reflect.DeepEqual(got, tc.want):
			t.Errorf("loadFlagsOf(%q) = %+v, want %+v", tc.args, got, tc.want)
		}
	}
}

// TestDashDashEndsOptions: a trace after "--" is loaded as it is after
// the options, by the commands that read the filter and by those that do
// not.
func TestDashDashEndsOptions(t *testing.T) {
	tiny := "../internal/duck/testdata/tiny.json"
	tests := []struct {
		name       string
		plain, dd  []string
		wantStdout string
	}{
		{"query", []string{"query", tiny, "--cache", "-", "-e", "SELECT count(*) AS n FROM kernels"}, []string{"query", "--cache", "-", "-e", "SELECT count(*) AS n FROM kernels", "--", tiny}, "n\n"},
		{"evidence", []string{"evidence", "overview", smallTrace, "--cache", "-", "-q"}, []string{"evidence", "--cache", "-", "-q", "--", "overview", smallTrace}, "inference_rank_1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var plain, dd, stderr bytes.Buffer
			if rc := run(tc.plain, &plain, &stderr); rc != 0 {
				t.Fatalf("tracebook %q: exit %d: %s", tc.plain, rc, stderr.String())
			}
			if rc := run(tc.dd, &dd, &stderr); rc != 0 {
				t.Fatalf("tracebook %q: exit %d: %s", tc.dd, rc, stderr.String())
			}
			if !strings.Contains(plain.String(), tc.wantStdout) {
				t.Errorf("tracebook %q: stdout %q lacks %q", tc.plain, plain.String(), tc.wantStdout)
			}
			if dd.String() != plain.String() {
				t.Errorf("tracebook %q: stdout %q, want that of %q: %q", tc.dd, dd.String(), tc.plain, plain.String())
			}
		})
	}
}
