package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestMain gives the tests a parse cache of their own: the commands they run
// use the default cache (under $XDG_CACHE_HOME), which must not be the
// user's. It also sets SampleTrace as the tracebook command does.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tracebook-test-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	// The sample trace the tracebook command embeds (main.go at the root).
	if SampleTrace, err = os.ReadFile(filepath.Join("..", "testdata", SampleTracePath)); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestCommandHelp: `tracebook CMD -h`, `--help` (first or later among the
// arguments) and `tracebook help CMD` print the command's usage and its
// one-line help on stdout and exit 0, for every registered command.
func TestCommandHelp(t *testing.T) {
	var names []string
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, want := range []string{"crossview", "diff", "evidence", "install", "kernel", "load", "query", "report", "run", "synth"} {
		if !slices.Contains(names, want) {
			t.Errorf("command %q is not registered (registered: %v)", want, names)
		}
	}
	forms := []struct {
		name string
		args func(cmd string) []string
	}{
		{"-h", func(cmd string) []string { return []string{cmd, "-h"} }},
		{"--help", func(cmd string) []string { return []string{cmd, "--help"} }},
		{"--help after an argument", func(cmd string) []string { return []string{cmd, "trace.json", "--help"} }},
		{"-h after an option's value", func(cmd string) []string { return []string{cmd, "-o", "out", "-h"} }},
		{"help CMD", func(cmd string) []string { return []string{"help", cmd} }},
	}
	for _, n := range names {
		c := commands[n]
		for _, form := range forms {
			t.Run(n+"/"+form.name, func(t *testing.T) {
				args := form.args(n)
				var stdout, stderr bytes.Buffer
				rc := run(args, &stdout, &stderr)
				if rc != 0 {
					t.Errorf("tracebook %s: exit %d, want 0", strings.Join(args, " "), rc)
				}
				want := "usage: tracebook " + c.usage + "\n"
				if got := stdout.String(); !strings.HasPrefix(got, want) || !strings.Contains(got, c.help) {
					t.Errorf("tracebook %s: stdout %q, want the usage %q and the help %q", strings.Join(args, " "), got, want, c.help)
				}
				if stderr.Len() > 0 {
					t.Errorf("tracebook %s: stderr %q, want nothing", strings.Join(args, " "), stderr.String())
				}
			})
		}
	}
}

// TestGeneralHelp: no command, -h, --help and help alone print the list
// of commands on stdout and exit 0.
func TestGeneralHelp(t *testing.T) {
	for _, args := range [][]string{nil, {"-h"}, {"--help"}, {"help"}, {"help", "help"}} {
		var stdout, stderr bytes.Buffer
		if rc := run(args, &stdout, &stderr); rc != 0 || stderr.Len() > 0 {
			t.Errorf("tracebook %q: exit %d, stderr %q; want 0 and nothing", args, rc, stderr.String())
		}
		for _, n := range []string{"report", "diff", "kernel"} {
			if !strings.Contains(stdout.String(), "tracebook "+commands[n].usage+"\n") {
				t.Errorf("tracebook %q: the command list lacks %s", args, n)
			}
		}
	}
}

// TestUnknownCommand goes through Main, the entry the tracebook command
// calls: an unknown command exits 2 and says so on stderr.
func TestUnknownCommand(t *testing.T) {
	for _, args := range [][]string{{"nope"}, {"nope", "--help"}, {"help", "nope"}} {
		var stdout, stderr bytes.Buffer
		if rc := Main(args, &stdout, &stderr); rc != 2 || !strings.Contains(stderr.String(), `unknown command "nope"`) {
			t.Errorf("tracebook %q: exit %d, stderr %q; want 2 and unknown command", args, rc, stderr.String())
		}
		if stdout.Len() > 0 {
			t.Errorf("tracebook %q: stdout %q, want nothing", args, stdout.String())
		}
	}
	// A misspelt command names the one it most likely meant.
	var stdout, stderr bytes.Buffer
	if rc := Main([]string{"reprot"}, &stdout, &stderr); rc != 2 || !strings.Contains(stderr.String(), `unknown command "reprot" (did you mean "report"?)`) {
		t.Errorf("tracebook reprot: exit %d, stderr %q", rc, stderr.String())
	}
}

// TestWantsHelp: a -h after "--" is an argument, not a request for help.
func TestWantsHelp(t *testing.T) {
	tests := []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"a", "-help"}, true},
		{[]string{"--", "-h"}, false},
		{[]string{"-e", "SELECT '-h'"}, false},
		{[]string{"--helper"}, false},
	}
	for _, tc := range tests {
		if got := wantsHelp(tc.args); got != tc.want {
			t.Errorf("wantsHelp(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

// smallTrace is a 1.5 kB trace (HTA's inference test trace, MIT).
const smallTrace = "../testdata/hta/inference_rank1_oldcats/inference_rank_1.json.gz"

// withProgress shows the load progress line at once, for the duration of
// the test, so that a load of a small trace prints it.
func withProgress(t *testing.T) {
	saved := progressAfter
	progressAfter = 0
	t.Cleanup(func() { progressAfter = saved })
}

// cacheFiles lists the files under dir (none when it does not exist).
func cacheFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if os.IsNotExist(err) {
			return filepath.SkipDir
		}
		if err != nil {
			return err
		}
		if !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestEvidenceCacheAndQuiet: evidence loads through the parse cache of the
// user cache directory by default, into --cache DIR when given, and into
// none with --cache -; the progress line is on stderr unless -q; stdout is
// the same every time.
func TestEvidenceCacheAndQuiet(t *testing.T) {
	withProgress(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	userCache := filepath.Join(home, "cache", "tracebook")
	dir := filepath.Join(t.TempDir(), "parse-cache")

	tests := []struct {
		name      string
		args      []string
		userFiles bool // files in the user cache directory afterwards
		dirFiles  bool // files in dir afterwards
		progress  bool
	}{
		{"--cache -", []string{"--cache", "-"}, false, false, true},
		{"--cache - -q", []string{"--cache=-", "-q"}, false, false, false},
		{"--cache DIR", []string{"--cache", dir}, false, true, true},
		{"--cache DIR --quiet (from the cache)", []string{"--quiet", "--cache", dir}, false, true, false},
		{"the user cache", nil, true, true, true},
	}
	var first string
	for _, tc := range tests {
		args := append([]string{"evidence", "overview", smallTrace}, tc.args...)
		var stdout, stderr bytes.Buffer
		if rc := run(args, &stdout, &stderr); rc != 0 {
			t.Fatalf("%s: exit %d: %s", tc.name, rc, stderr.String())
		}
		if first == "" {
			first = stdout.String()
			if !strings.Contains(first, "inference_rank_1") {
				t.Errorf("%s: the overview does not name the trace:\n%s", tc.name, first)
			}
		} else if stdout.String() != first {
			t.Errorf("%s: stdout differs from the first run's:\n%s\nwant\n%s", tc.name, stdout.String(), first)
		}
		if got := len(cacheFiles(t, userCache)) > 0; got != tc.userFiles {
			t.Errorf("%s: files in the user cache %s: %v, want %v", tc.name, userCache, got, tc.userFiles)
		}
		if got := len(cacheFiles(t, dir)) > 0; got != tc.dirFiles {
			t.Errorf("%s: files in --cache %s: %v, want %v", tc.name, dir, got, tc.dirFiles)
		}
		if got := strings.Contains(stderr.String(), "inference_rank_1.json.gz [1/1]"); got != tc.progress {
			t.Errorf("%s: progress line on stderr: %v, want %v (stderr %q)", tc.name, got, tc.progress, stderr.String())
		}
		if !tc.progress && stderr.Len() > 0 {
			t.Errorf("%s: stderr %q, want nothing", tc.name, stderr.String())
		}
	}
	// Only the user cache and dir were written.
	if files := cacheFiles(t, home); len(files) != len(cacheFiles(t, userCache)) {
		t.Errorf("files under HOME outside the user cache: %v", files)
	}
}

// TestLoadOptionsEveryCommand: report, crossview and diff take --cache DIR
// and -q as evidence does: the parse cache fills and no progress shows.
func TestLoadOptionsEveryCommand(t *testing.T) {
	withProgress(t)
	other := "../testdata/hta/event_sync_multi_stream/event_sync_trace.json.gz"
	tests := []struct {
		name string
		args []string
	}{
		{"report", []string{"report", smallTrace, "--md", "MD"}},
		{"crossview", []string{"crossview", smallTrace}},
		{"diff", []string{"diff", smallTrace, other}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			dir := filepath.Join(tmp, "cache")
			args := append(slices.Clone(tc.args), "-q", "--cache", dir)
			for i, a := range args {
				if a == "MD" {
					args[i] = filepath.Join(tmp, "r.md")
				}
			}
			var stdout, stderr bytes.Buffer
			if rc := run(args, &stdout, &stderr); rc != 0 {
				t.Fatalf("exit %d: %s", rc, stderr.String())
			}
			if stdout.Len() == 0 {
				t.Error("nothing on stdout")
			}
			if strings.Contains(stderr.String(), "MB read") {
				t.Errorf("-q: progress on stderr %q", stderr.String())
			}
			if len(cacheFiles(t, dir)) == 0 {
				t.Errorf("--cache %s: no files written", dir)
			}
		})
	}
}

// TestStageLine: the analysis after a load shows its stage and seconds on
// one line of stderr once it runs longer than progressAfter, cleared when
// done; -q shows nothing.
func TestStageLine(t *testing.T) {
	withProgress(t)
	for _, quiet := range []bool{false, true} {
		var stderr bytes.Buffer
		d := &traceDB{quiet: quiet, stderr: &stderr}
		done := d.stage("analysing: evidence")
		time.Sleep(350 * time.Millisecond)
		done()
		got := stderr.String()
		if quiet {
			if got != "" {
				t.Errorf("-q: stderr %q, want nothing", got)
			}
			continue
		}
		if !strings.HasPrefix(got, "\ranalysing: evidence (0 s)") || !strings.HasSuffix(got, "\r") ||
			strings.TrimSpace(got[strings.LastIndex(strings.TrimSuffix(got, "\r"), "\r"):]) != "" {
			t.Errorf("stderr %q: want the stage line, then a blank line that clears it", got)
		}
	}
}

// TestFilterOutsideTrace: a filter that selects nothing the trace holds
// (a mistyped rank, a window past its end or over no event, a step it
// lacks), or a trace of no event, fails with an
// error that says what the trace holds, where the report would have read
// "no rule flagged this slice"; the report writes no file, and the error
// names its command once.
func TestFilterOutsideTrace(t *testing.T) {
	withProgress(t)
	out := filepath.Join(t.TempDir(), "r.html")
	empty := filepath.Join(t.TempDir(), "empty.json")
	if err := os.WriteFile(empty, []byte(`{"traceEvents":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"evidence", "kernels", smallTrace, "--rank", "9"}, "tracebook evidence: no loaded trace has rank 9 (ranks: 1)\n"},
		{[]string{"report", smallTrace, "--rank", "9", "-o", out}, "tracebook report: no loaded trace has rank 9 (ranks: 1)\n"},
		{[]string{"evidence", "kernels", smallTrace, "--window", "9000..9500"}, "the window starts at 9000ms, after the end of the trace"},
		{[]string{"report", smallTrace, "--phase", "step:3", "-o", out}, "the slice holds no step, so no step 3"},
		{[]string{"evidence", "kernels", smallTrace, "--stream", "99"}, "the slice holds no GPU stream 99 (its streams: 7)"},
		{[]string{"crossview", smallTrace, "--rank", "9"}, "tracebook crossview: no loaded trace has rank 9 (ranks: 1)\n"},
		{[]string{"crossview", smallTrace, "--stream", "99"}, "the slice holds no GPU stream 99 (its streams: 7)"},
		{[]string{"evidence", "kernels", smallTrace, "--window", "1500..1501"}, "tracebook evidence: the window 1500ms..1501ms holds no event\n"},
		{[]string{"report", empty, "-o", out}, "tracebook report: the trace holds no event"},
	}
	for _, tc := range tests {
		var stdout, stderr bytes.Buffer
		rc := Main(append(tc.args, "--cache", "-", "-q"), &stdout, &stderr)
		if rc != 1 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("tracebook %q: exit %d, stderr %q; want 1 and %q", tc.args, rc, stderr.String(), tc.want)
		}
		if strings.Contains(stderr.String(), "evidence: evidence:") {
			t.Errorf("tracebook %q: the command is named twice: %q", tc.args, stderr.String())
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a report of a slice outside the trace wrote %s", out)
	}
	// The same trace's rank 1, stream 7: no error.
	var stdout, stderr bytes.Buffer
	if rc := Main([]string{"evidence", "kernels", smallTrace, "--rank", "1", "--stream", "7", "--cache", "-", "-q"}, &stdout, &stderr); rc != 0 {
		t.Errorf("rank 1, stream 7: exit %d, stderr %q", rc, stderr.String())
	}
}

// TestReportOfOneStream: a report of one GPU stream of several says which
// evidence the stream narrows, and gives its cross-check no host/device
// reading: the other streams' work fills the stream's idle time.
func TestReportOfOneStream(t *testing.T) {
	withProgress(t)
	md := filepath.Join(t.TempDir(), "r.md")
	var stdout, stderr bytes.Buffer
	if rc := Main([]string{"report", "../testdata/hta/event_sync_multi_stream", "--stream", "20", "--md", md, "--cache", "-", "-q"}, &stdout, &stderr); rc != 0 {
		t.Fatalf("exit %d: %s", rc, stderr.String())
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"stream 20 (the stream narrows the sync, kernels, memcpy, gaps and launch evidence and the call trees; GPU busy and idle time, the other areas and the findings on them count every stream)",
		"No host/device reading: the slice is GPU stream 20, and its ranks ran work on other streams too (24, 28)",
		"Cross-view verdict: none for one GPU stream of several",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the report does not say %q", want)
		}
	}
}
