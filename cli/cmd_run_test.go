package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/internal/nbformat"
	"github.com/tracebook/tracebook/internal/testutil"
)

// runNotebook writes src as dir/nb/test.ipynb, where ../testdata is the
// repository's testdata, and returns its path.
func runTestNotebook(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(testutil.Testdata(t), filepath.Join(dir, "testdata")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "nb"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "nb", "test.ipynb")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runToFile runs the notebook nb into a new file, parse cache off, and
// returns its path and what was written; a failed run fails the test.
func runToFile(t *testing.T, nb string) (string, []byte) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.ipynb")
	if code, _, stderr := tracebookRun(t, nb, "-o", out, "--cache-dir", "-"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return out, b
}

// tracebookRun runs `tracebook run args...` in-process and returns the exit
// code, stdout and stderr.
func tracebookRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"run"}, args...), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// testNotebook is written as Jupyter writes notebooks (nbformat.writes:
// sorted keys, 1-space indentation, non-ASCII as is, a trailing newline),
// so that every byte of it outside the outputs must survive a run.
const testNotebook = `{
 "cells": [
  {
   "cell_type": "markdown",
   "id": "intro",
   "metadata": {
    "tags": [
     "keep"
    ]
   },
   "source": [
    "# A test <b>notebook</b> — é & \"quotes\"\n",
    "\n",
    "weights 1.50 and 1e3 stay as written"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 7,
   "id": "load",
   "metadata": {
    "collapsed": false
   },
   "outputs": [
    {
     "name": "stdout",
     "output_type": "stream",
     "text": [
      "stale output\n"
     ]
    }
   ],
   "source": [
    "%trace load ../testdata/hta/critical_path_alexnet --name alexnet"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": null,
   "id": "blank",
   "metadata": {},
   "outputs": [],
   "source": []
  },
  {
   "cell_type": "code",
   "execution_count": null,
   "id": "top",
   "metadata": {},
   "outputs": [],
   "source": [
    "-- the top kernels by total time\n",
    "SELECT name, count(*) AS calls, sum(dur_ns) AS total_ns\n",
    "FROM kernels GROUP BY name ORDER BY total_ns DESC LIMIT 3"
   ]
  },
  {
   "cell_type": "raw",
   "id": "raw",
   "metadata": {},
   "source": [
    "raw <text>\n"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": null,
   "id": "bad",
   "metadata": {},
   "outputs": [],
   "source": [
    "SELECT nope FROM traces\n",
    "-- a second line"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": null,
   "id": "after",
   "metadata": {},
   "outputs": [],
   "source": [
    "%trace list"
   ]
  }
 ],
 "metadata": {
  "custom": {
   "ratio": 0.10,
   "unicode": "\u00e9"
  },
  "kernelspec": {
   "display_name": "tracebook",
   "language": "sql",
   "name": "tracebook"
  },
  "language_info": {
   "name": "sql"
  }
 },
 "nbformat": 4,
 "nbformat_minor": 5
}
`

// nbCell is the part of a cell the tests read.
type nbCell struct {
	ID             string          `json:"id"`
	CellType       string          `json:"cell_type"`
	ExecutionCount *int            `json:"execution_count"`
	Outputs        []nbOutput      `json:"outputs"`
	Metadata       json.RawMessage `json:"metadata"`
}

type nbOutput struct {
	OutputType     string                     `json:"output_type"`
	Name           string                     `json:"name"`
	Text           []string                   `json:"text"`
	Data           map[string]json.RawMessage `json:"data"`
	ExecutionCount *int                       `json:"execution_count"`
	EName          string                     `json:"ename"`
	EValue         string                     `json:"evalue"`
	Traceback      []string                   `json:"traceback"`
}

// plain is an output's text/plain, joined.
func (o nbOutput) plain(t *testing.T) string {
	t.Helper()
	raw, ok := o.Data["text/plain"]
	if !ok {
		return ""
	}
	var lines []string
	if err := json.Unmarshal(raw, &lines); err != nil {
		t.Fatalf("text/plain is not a list of lines: %s", raw)
	}
	return strings.Join(lines, "")
}

func readCells(t *testing.T, b []byte) map[string]nbCell {
	t.Helper()
	var nb struct{ Cells []nbCell }
	if err := json.Unmarshal(b, &nb); err != nil {
		t.Fatalf("the output is not JSON: %v", err)
	}
	out := map[string]nbCell{}
	for _, c := range nb.Cells {
		out[c.ID] = c
	}
	return out
}

func TestRunAllowErrors(t *testing.T) {
	nb := runTestNotebook(t, testNotebook)
	out := filepath.Join(t.TempDir(), "out.ipynb")
	code, _, stderr := tracebookRun(t, nb, "-o", out, "--allow-errors", "--cache-dir", "-")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	cells := readCells(t, b)

	load := cells["load"]
	if load.ExecutionCount == nil || *load.ExecutionCount != 1 || len(load.Outputs) != 2 {
		t.Fatalf("load cell: count %v, %d outputs, want 1 and 2 (the final progress, the summary)", load.ExecutionCount, len(load.Outputs))
	}
	if got, want := load.Outputs[0].plain(t), "loaded 1 file: 1,370 events\n"; load.Outputs[0].OutputType != "display_data" || got != want {
		t.Errorf("progress display = %s %q, want display_data %q (its final state)", load.Outputs[0].OutputType, got, want)
	}
	if got := load.Outputs[1].plain(t); !strings.HasPrefix(got, `trace "alexnet": 1 file, rank 0, 1,370 events`+"\n") || strings.Contains(got, "MB/s") || strings.Contains(got, " s\n") {
		t.Errorf("load summary = %q: want the trace line and no timing", got)
	}

	if c := cells["blank"]; c.ExecutionCount != nil || len(c.Outputs) != 0 {
		t.Errorf("a blank cell ran: count %v, %d outputs", c.ExecutionCount, len(c.Outputs))
	}

	top := cells["top"]
	if top.ExecutionCount == nil || *top.ExecutionCount != 2 || len(top.Outputs) != 1 {
		t.Fatalf("top cell: count %v, %d outputs", top.ExecutionCount, len(top.Outputs))
	}
	res := top.Outputs[0]
	if res.OutputType != "execute_result" || res.ExecutionCount == nil || *res.ExecutionCount != 2 {
		t.Errorf("top cell output: %s with count %v, want execute_result 2", res.OutputType, res.ExecutionCount)
	}
	if lines := strings.Split(res.plain(t), "\n"); len(lines) < 3 || !strings.HasPrefix(lines[2], "ampere_sgemm_32x32_sliced1x4_tn ") {
		t.Errorf("top kernel table:\n%s\nwant ampere_sgemm_32x32_sliced1x4_tn first", res.plain(t))
	}
	for _, mime := range []string{"text/html", "application/json"} {
		if _, ok := res.Data[mime]; !ok {
			t.Errorf("the table has no %s", mime)
		}
	}
	var tbl struct{ Total int }
	if err := json.Unmarshal(res.Data["application/json"], &tbl); err != nil || tbl.Total != 3 {
		t.Errorf("application/json is not stored as JSON with total 3: %v %s", err, res.Data["application/json"])
	}

	bad := cells["bad"]
	if len(bad.Outputs) != 1 || bad.Outputs[0].OutputType != "error" || bad.Outputs[0].EName != "Binder Error" {
		t.Fatalf("failing cell outputs: %+v, want one Binder Error", bad.Outputs)
	}
	after := cells["after"]
	if after.ExecutionCount == nil || *after.ExecutionCount != 4 || len(after.Outputs) != 1 {
		t.Errorf("the cell after the error: count %v, %d outputs; want it run with --allow-errors", after.ExecutionCount, len(after.Outputs))
	}

	// A second run over the output gives the same bytes, and everything but
	// outputs and counts is kept: markdown, raw, metadata, ids, numbers as written.
	out2 := filepath.Join(filepath.Dir(nb), "out2.ipynb")
	if err := os.WriteFile(filepath.Join(filepath.Dir(nb), "again.ipynb"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := tracebookRun(t, filepath.Join(filepath.Dir(nb), "again.ipynb"), "-o", out2, "--allow-errors", "--cache-dir", "-"); code != 0 {
		t.Fatalf("second run: exit %d: %s", code, stderr)
	}
	b2, err := os.ReadFile(out2)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, b2) {
		t.Errorf("a re-run changed the notebook:\n%s", testutil.Diff(string(b), string(b2)))
	}
	for _, keep := range []string{
		"    \"# A test <b>notebook</b> — é & \\\"quotes\\\"\\n\",\n",
		"   \"metadata\": {\n    \"tags\": [\n     \"keep\"\n    ]\n   },\n",
		"   \"metadata\": {\n    \"collapsed\": false\n   },\n",
		"    \"raw <text>\\n\"\n",
		"   \"ratio\": 0.10,\n   \"unicode\": \"\\u00e9\"\n  },\n",
		"   \"id\": \"blank\",\n",
	} {
		if !strings.Contains(string(b), keep) {
			t.Errorf("the output lost %q", keep)
		}
	}
	if !bytes.HasSuffix(b, []byte("}\n")) || bytes.Contains(b, []byte("stale output")) {
		t.Errorf("want a trailing newline and no stale output")
	}
}

func TestRunStopsAtFailingCell(t *testing.T) {
	nb := runTestNotebook(t, testNotebook)
	out := filepath.Join(t.TempDir(), "out.ipynb")
	code, _, stderr := tracebookRun(t, nb, "-o", out, "--cache-dir", "-")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	want := `tracebook run: ` + nb + `: cell 5 ("SELECT nope FROM traces") failed: Binder Error: `
	if !strings.HasPrefix(stderr, want) {
		t.Errorf("stderr = %q, want it to start with %q", stderr, want)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed run wrote %s (err %v)", out, err)
	}
}

func TestRunInplaceAndStdout(t *testing.T) {
	src := strings.Replace(testNotebook, `"SELECT nope FROM traces\n",`, `"SELECT 1 AS one\n",`, 1)
	nb := runTestNotebook(t, src)
	code, stdout, stderr := tracebookRun(t, nb, "--cache-dir", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if code, _, stderr := tracebookRun(t, "--inplace", nb, "--cache-dir", "-"); code != 0 {
		t.Fatalf("--inplace: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(nb)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != stdout {
		t.Errorf("--inplace and stdout differ:\n%s", testutil.Diff(stdout, string(b)))
	}
}

func TestRunUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "usage: tracebook run NOTEBOOK.ipynb"},
		{[]string{"a.ipynb", "b.ipynb"}, "usage: tracebook run NOTEBOOK.ipynb"},
		{[]string{"a.ipynb", "-o", "x.ipynb", "--inplace"}, "-o and --inplace exclude each other"},
	} {
		code, _, stderr := tracebookRun(t, tc.args...)
		if code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("run %q: exit %d, stderr %q; want %q", tc.args, code, stderr, tc.want)
		}
	}
	for _, tc := range []struct{ src, want string }{
		{`{"nbformat": 3, "cells": []}`, "nbformat 3: only nbformat 4 notebooks are read"},
		{`{"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {"name": "python3"}}, "cells": []}`, `the notebook is for the kernel "python3", not "tracebook"`},
		{`[]`, "not a notebook: want a JSON object"},
	} {
		nb := runTestNotebook(t, tc.src)
		code, _, stderr := tracebookRun(t, nb)
		if code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("run %s: exit %d, stderr %q; want %q", tc.src, code, stderr, tc.want)
		}
	}
}

// TestRecorder: the run's Publisher keeps what a Jupyter client would
// show: streams merged, displays updated in place (across cells too),
// clear_output applied at once or, with wait, before the next output, and
// nothing after the cell returned.
func TestRecorder(t *testing.T) {
	text := func(s string) map[string]any { return map[string]any{"text/plain": s} }
	type step func(r *recorder)
	tests := []struct {
		name  string
		steps []step
		want  []string // output type and text
	}{
		{"streams merge", []step{
			func(r *recorder) { r.Stream("stdout", "a") },
			func(r *recorder) { r.Stream("stdout", "b") },
			func(r *recorder) { r.Stream("stderr", "c") },
		}, []string{"stream ab", "stream c"}},
		{"display updated in place", []step{
			func(r *recorder) { r.Display(text("0%"), nil, "p") },
			func(r *recorder) { r.Stream("stdout", "s") },
			func(r *recorder) { r.UpdateDisplay(text("100%"), nil, "p") },
		}, []string{"display_data 100%", "stream s"}},
		{"clear at once", []step{
			func(r *recorder) { r.Stream("stdout", "old") },
			func(r *recorder) { r.ClearOutput(false) },
			func(r *recorder) { r.Stream("stdout", "new") },
		}, []string{"stream new"}},
		{"clear waits for the next output", []step{
			func(r *recorder) { r.Display(text("frame 1"), nil, "") },
			func(r *recorder) { r.ClearOutput(true) },
			func(r *recorder) { r.ClearOutput(true) },
			func(r *recorder) { r.Display(text("frame 2"), nil, "") },
		}, []string{"display_data frame 2"}},
		{"a waiting clear does not merge streams", []step{
			func(r *recorder) { r.Stream("stdout", "old") },
			func(r *recorder) { r.ClearOutput(true) },
			func(r *recorder) { r.Stream("stdout", "new") },
		}, []string{"stream new"}},
		{"a waiting clear applies to the result", []step{
			func(r *recorder) { r.Stream("stdout", "progress") },
			func(r *recorder) { r.ClearOutput(true) },
			func(r *recorder) { r.finish() },
			func(r *recorder) { r.add(&nbformat.Output{Type: "execute_result", Data: text("42")}) },
		}, []string{"execute_result 42"}},
		{"a cleared display is not revived by an update", []step{
			func(r *recorder) { r.Display(text("a"), nil, "p") },
			func(r *recorder) { r.ClearOutput(false) },
			func(r *recorder) { r.UpdateDisplay(text("b"), nil, "p") },
		}, nil},
		{"nothing after the cell returned", []step{
			func(r *recorder) { r.Stream("stdout", "in") },
			func(r *recorder) { r.finish() },
			func(r *recorder) { r.Stream("stdout", "late") },
			func(r *recorder) { r.ClearOutput(false) },
		}, []string{"stream in"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{mu: new(sync.Mutex), cell: &nbformat.Cell{}, displays: map[string][]*nbformat.Output{}}
			for _, s := range tc.steps {
				s(r)
			}
			var got []string
			for _, o := range r.cell.Outputs {
				s := o.Text
				if o.Type != "stream" {
					s = o.Data["text/plain"].(string)
				}
				got = append(got, o.Type+" "+s)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("outputs = %q, want %q", got, tc.want)
			}
		})
	}

	// A display shown in one cell and updated from a later one changes in
	// the first cell, as in Jupyter; a clear in the later cell leaves it.
	displays := map[string][]*nbformat.Output{}
	first := &recorder{mu: new(sync.Mutex), cell: &nbformat.Cell{}, displays: displays}
	first.Display(text("v1"), nil, "d")
	first.finish()
	second := &recorder{mu: first.mu, cell: &nbformat.Cell{}, displays: displays}
	second.ClearOutput(false)
	second.UpdateDisplay(text("v2"), nil, "d")
	if got := first.cell.Outputs[0].Data["text/plain"]; got != "v2" {
		t.Errorf("the first cell's display = %v, want v2", got)
	}
}

// TestRunNotebooks runs the worked notebooks of notebooks/ twice: the two
// runs must give the same bytes, equal to the committed notebook (when they
// differ, the committed notebook is stale: `tracebook run --inplace` it), and
// key outputs must be there.
// TestParseRunArgs: run spells its options as the other commands do
// (--cache DIR|-, one or two dashes); --cache-dir still works but is not
// in the usage.
func TestParseRunArgs(t *testing.T) {
	tests := []struct {
		args []string
		want runOptions
	}{
		{[]string{"nb.ipynb"}, runOptions{notebook: "nb.ipynb"}},
		{[]string{"nb.ipynb", "--cache", "-"}, runOptions{notebook: "nb.ipynb", cacheDir: "-"}},
		{[]string{"--cache=dir", "nb.ipynb"}, runOptions{notebook: "nb.ipynb", cacheDir: "dir"}},
		{[]string{"nb.ipynb", "--cache-dir", "dir"}, runOptions{notebook: "nb.ipynb", cacheDir: "dir"}},
		{[]string{"-cache-dir=dir", "nb.ipynb"}, runOptions{notebook: "nb.ipynb", cacheDir: "dir"}},
		{[]string{"-o", "out.ipynb", "nb.ipynb", "--allow-errors"}, runOptions{notebook: "nb.ipynb", out: "out.ipynb", allowErrors: true}},
		{[]string{"-inplace", "nb.ipynb", "-allow-errors"}, runOptions{notebook: "nb.ipynb", inplace: true, allowErrors: true}},
		{[]string{"--inplace", "--", "-nb.ipynb"}, runOptions{notebook: "-nb.ipynb", inplace: true}},
	}
	for _, tc := range tests {
		got, err := parseRunArgs(tc.args)
		if err != nil || got != tc.want {
			t.Errorf("parseRunArgs(%q) = %+v, %v; want %+v", tc.args, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"nb.ipynb", "--cache"}, "--cache needs a value"},
		{[]string{"nb.ipynb", "--inplace=true"}, "--inplace takes no value"},
		{[]string{"nb.ipynb", "--bogus"}, "unknown option --bogus"},
	} {
		if _, err := parseRunArgs(tc.args); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("parseRunArgs(%q) = %v, want an error %q", tc.args, err, tc.want)
		}
	}
	if u := commands["run"].usage; !strings.Contains(u, "[--cache DIR|-]") || strings.Contains(u, "cache-dir") {
		t.Errorf("run's usage %q: want --cache DIR|- and not --cache-dir", u)
	}
}

func TestRunNotebooks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three notebooks")
	}
	root := testutil.RepoRoot(t)
	for _, tc := range []struct {
		name string
		want []string // substrings of the text/plain outputs
	}{
		{"training.ipynb", []string{`trace "resnet50": 1 file, rank 0, 75,698 events`}},
		{"vllm-serving.ipynb", []string{`trace "piecewise": 1 file, rank 0, 19,289 events`}},
		{"multi-rank.ipynb", []string{`trace "dlrm": 8 files, ranks 0–7, 26,202 events`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(root, "notebooks", tc.name)
			committed, err := os.ReadFile(path)
			if err != nil {
				t.Skipf("%s: %v", tc.name, err)
			}
			dir := t.TempDir()
			var outs [2][]byte
			for i := range outs {
				out := filepath.Join(dir, tc.name+string(rune('0'+i)))
				if code, _, stderr := tracebookRun(t, path, "-o", out, "--cache-dir", "-"); code != 0 {
					t.Fatalf("run %d: exit %d: %s", i, code, stderr)
				}
				if outs[i], err = os.ReadFile(out); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(outs[0], outs[1]) {
				t.Fatalf("two runs differ:\n%s", testutil.Diff(string(outs[0]), string(outs[1])))
			}
			if !bytes.Equal(outs[0], committed) {
				t.Errorf("notebooks/%s is stale (run `tracebook run --inplace notebooks/%s`):\n%s", tc.name, tc.name, shortDiff(string(committed), string(outs[0])))
			}
			var text strings.Builder
			for _, c := range readCells(t, outs[0]) {
				for _, o := range c.Outputs {
					text.WriteString(o.plain(t))
					if o.OutputType == "error" {
						t.Errorf("cell %s failed: %s: %s", c.ID, o.EName, o.EValue)
					}
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(text.String(), w) {
					t.Errorf("no output holds %q", w)
				}
			}
		})
	}
}

// TestRunNbformatValid checks the written notebook with nbformat's own
// validator and writer, when /usr/bin/python3 has nbformat: valid, and
// written byte for byte as Jupyter writes it.
func TestRunNbformatValid(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import nbformat").Run(); err != nil {
		t.Skipf("%s has no nbformat: %v", py, err)
	}
	nb := runTestNotebook(t, testNotebook)
	out := filepath.Join(t.TempDir(), "out.ipynb")
	if code, _, stderr := tracebookRun(t, nb, "-o", out, "--allow-errors", "--cache-dir", "-"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	script := `import sys, nbformat
src = open(sys.argv[1], encoding="utf-8").read()
nb = nbformat.reads(src, as_version=4)
nbformat.validate(nb)
sys.stdout.write(nbformat.writes(nb) + "\n")
`
	got, err := exec.Command(py, "-c", script, out).Output()
	if err != nil {
		t.Fatalf("nbformat rejects the notebook: %v", err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// The test notebook's metadata writes 0.10 and \u00e9, which Python
	// writes as 0.1 and é: compare everything else.
	norm := strings.NewReplacer(`"ratio": 0.10`, `"ratio": 0.1`, `"unicode": "\u00e9"`, `"unicode": "é"`).Replace(string(b))
	if norm != string(got) {
		t.Errorf("nbformat writes the notebook differently:\n%s", testutil.Diff(norm, string(got)))
	}
}

// TestRunReportSource runs a notebook whose %report output carries the
// report's source, reads it back as `tracebook report --from` does, and
// renders the Markdown again: it must equal the saved text/markdown.
func TestRunReportSource(t *testing.T) {
	src := strings.Replace(testNotebook, "\"SELECT nope FROM traces\\n\",\n    \"-- a second line\"", `"%report"`, 1)
	if src == testNotebook {
		t.Fatal("the test notebook has no failing cell to replace")
	}
	nb := runTestNotebook(t, src)
	out, b := runToFile(t, nb)
	rep := readCells(t, b)["bad"]
	if len(rep.Outputs) != 1 {
		t.Fatalf("report cell: %d outputs", len(rep.Outputs))
	}
	var saved []string
	if err := json.Unmarshal(rep.Outputs[0].Data["text/markdown"], &saved); err != nil {
		t.Fatalf("text/markdown: %v", err)
	}
	if _, ok := rep.Outputs[0].Data[mimeReportSource]; !ok {
		t.Fatalf("the report output has no %s", mimeReportSource)
	}
	source, err := reportSourceFromNotebook(out)
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := report.GenerateView(&md, source, report.View{}, report.Markdown); err != nil {
		t.Fatal(err)
	}
	if got, want := md.String(), strings.Join(saved, ""); got != want {
		t.Errorf("the Markdown rendered from the saved source differs from the saved Markdown:\n%s", testutil.Diff(want, got))
	}

	// The CLI: `tracebook report --from` writes the same Markdown.
	mdPath := filepath.Join(t.TempDir(), "report.md")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"report", "--from", out, "--md", mdPath}, &stdout, &stderr); code != 0 {
		t.Fatalf("tracebook report --from: exit %d: %s", code, stderr.String())
	}
	if got, err := os.ReadFile(mdPath); err != nil || string(got) != strings.Join(saved, "") {
		t.Errorf("tracebook report --from --md wrote other Markdown than the notebook's (err %v)", err)
	}

	if _, err := reportSourceFromNotebook(nb); err == nil || !strings.Contains(err.Error(), "no %report output with "+mimeReportSource) {
		t.Errorf("a notebook without a report output: err %v", err)
	}
}

// shortDiff lists the first lines where two notebooks differ, each cut to
// 160 characters (outputs hold long lines: base64, wide tables).
func shortDiff(want, got string) string {
	cut := func(s string) string {
		if r := []rune(s); len(r) > 160 {
			return string(r[:159]) + "…"
		}
		return s
	}
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < 8; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  committed %q\n  now       %q\n", i+1, cut(wl), cut(gl))
			shown++
		}
	}
	return b.String()
}

// A background load under `tracebook run`: its display ends on the loaded
// line (the cell's display updates outlive it), %trace list waits for it in
// a deterministic run, and a second run writes the same notebook.
func TestRunBackgroundLoad(t *testing.T) {
	const src = `{"cells": [
  {"cell_type": "code", "execution_count": null, "id": "load", "metadata": {}, "outputs": [], "source": ["%trace load --background --name dlrm ../testdata/param/dlrm_8rank"]},
  {"cell_type": "code", "execution_count": null, "id": "list", "metadata": {}, "outputs": [], "source": ["%trace list"]}
 ],
 "metadata": {"kernelspec": {"display_name": "tracebook", "language": "sql", "name": "tracebook"}},
 "nbformat": 4, "nbformat_minor": 5}`
	nb := runTestNotebook(t, src)
	var runs [2][]byte
	for i := range runs {
		_, runs[i] = runToFile(t, nb)
	}
	if !bytes.Equal(runs[0], runs[1]) {
		t.Errorf("two runs differ:\n%s", shortDiff(string(runs[0]), string(runs[1])))
	}
	cells := readCells(t, runs[0])
	load := cells["load"]
	if len(load.Outputs) != 2 || load.Outputs[0].plain(t) != "loaded 8 files: 26,202 events\n" {
		t.Fatalf("load cell outputs: %+v, want the final progress display and the background note", load.Outputs)
	}
	if got := load.Outputs[1].plain(t); !strings.Contains(got, "in the background") {
		t.Errorf("load cell result = %q", got)
	}
	list := cells["list"]
	if len(list.Outputs) != 1 || !strings.Contains(list.Outputs[0].plain(t), "dlrm ") {
		t.Errorf("%%trace list after the background load: %+v, want the table alone (no waiting line: it depends on timing)", list.Outputs)
	}
}

// TestRunSliceError: in a notebook, a magic whose filter selects nothing
// the loaded trace holds fails as a SliceError that says what it holds.
func TestRunSliceError(t *testing.T) {
	src := `{"cells": [
  {"cell_type": "code", "execution_count": null, "id": "load", "metadata": {}, "outputs": [], "source": ["%trace load ../testdata/hta/critical_path_alexnet"]},
  {"cell_type": "code", "execution_count": null, "id": "rank", "metadata": {}, "outputs": [], "source": ["%evidence kernels --rank 9"]},
  {"cell_type": "code", "execution_count": null, "id": "phase", "metadata": {}, "outputs": [], "source": ["%report --phase decode"]}
 ],
 "metadata": {"kernelspec": {"display_name": "tracebook", "language": "sql", "name": "tracebook"}},
 "nbformat": 4, "nbformat_minor": 5}`
	nb := runTestNotebook(t, src)
	out := filepath.Join(t.TempDir(), "out.ipynb")
	if code, _, stderr := tracebookRun(t, nb, "-o", out, "--allow-errors", "--cache-dir", "-"); code != 0 {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	cells := readCells(t, b)
	for id, want := range map[string]string{"rank": "no loaded trace has rank 9 (ranks: 0)", "phase": "the slice holds no step, so no decode phase"} {
		outs := cells[id].Outputs
		if len(outs) != 1 || outs[0].OutputType != "error" || outs[0].EName != "SliceError" || !strings.HasPrefix(outs[0].EValue, want) {
			t.Errorf("cell %s: outputs %+v, want one SliceError starting %q", id, outs, want)
		}
	}
}
