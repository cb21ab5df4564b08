package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/cells"
	"github.com/tracebook/tracebook/internal/nbformat"
	"github.com/tracebook/tracebook/wasm"
)

// cellError is the error of a notebook whose cell failed: the cell's
// index in the notebook (from 0, as nbformat counts), its first line and
// the error it showed.
type cellError struct {
	index int
	line  string
	err   *cells.ExecError
}

func (e *cellError) Error() string {
	return fmt.Sprintf("cell %d (%q) failed: %s", e.index, e.line, e.err.Error())
}

func (e *cellError) Unwrap() error { return e.err }

// runOptions are the run command's options.
type runOptions struct {
	notebook    string
	out         string // "" = stdout, unless inplace
	inplace     bool
	allowErrors bool
	cacheDir    string
}

// parseRunArgs reads the run command's arguments; the notebook may come
// before or after the options. --cache-dir is the old name of --cache.
func parseRunArgs(args []string) (runOptions, error) {
	var o runOptions
	p, err := parseCommandArgs("run", args, options{values: []string{"o", "cache|cache-dir"}, flags: []string{"inplace", "allow-errors"}})
	if err != nil {
		return o, err
	}
	o.out, o.cacheDir = p.values["o"], p.values["cache"]
	o.inplace, o.allowErrors = p.flags["inplace"], p.flags["allow-errors"]
	pos, err := p.operands("run", p.rest)
	if err != nil {
		return o, err
	}
	switch {
	case len(pos) != 1:
		return o, fmt.Errorf("usage: tracebook %s", commands["run"].usage)
	case o.inplace && o.out != "":
		return o, errors.New("-o and --inplace exclude each other")
	}
	o.notebook = pos[0]
	return o, nil
}

// runRun executes a notebook as the kernel would, in the notebook's
// folder, and writes it back with its outputs.
func runRun(args []string, stdout, stderr io.Writer) error {
	o, err := parseRunArgs(args)
	if err != nil {
		return err
	}
	src, err := os.ReadFile(o.notebook)
	if err != nil {
		return err
	}
	nb, err := nbformat.Read(src)
	if err != nil {
		return fmt.Errorf("%s: %w", o.notebook, err)
	}
	if k := nb.KernelName(); k != "" && k != kernelName {
		return fmt.Errorf("%s: the notebook is for the kernel %q, not %q", o.notebook, k, kernelName)
	}
	out := o.out
	if o.inplace {
		out = o.notebook
	}
	if out != "" {
		if out, err = filepath.Abs(out); err != nil {
			return err
		}
	}
	if o.cacheDir != "" && o.cacheDir != "-" {
		// The run changes into the notebook's folder: keep the path the user meant.
		if o.cacheDir, err = filepath.Abs(o.cacheDir); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	runErr := executeNotebook(ctx, nb, filepath.Dir(o.notebook), sessionConfig{cacheDir: o.cacheDir, deterministic: true}, o.allowErrors)
	if runErr != nil {
		return fmt.Errorf("%s: %w", o.notebook, runErr)
	}
	b, err := nb.Encode()
	if err != nil {
		return err
	}
	if out == "" {
		_, err = stdout.Write(b)
		return err
	}
	return writeFileAtomic(out, b)
}

// executeNotebook runs nb's code cells in order in a fresh session whose
// working directory is dir, replacing their outputs and execution counts.
// It stops at the first failing cell unless allowErrors.
func executeNotebook(ctx context.Context, nb *nbformat.Notebook, dir string, cfg sessionConfig, allowErrors bool) error {
	if dir != "" && dir != "." {
		// The process's working directory, like Jupyter's kernel: DuckDB
		// resolves relative paths in SQL against it too.
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		if err := os.Chdir(dir); err != nil {
			return err
		}
		defer os.Chdir(wd)
	}
	s, db, err := newSession(cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	defer s.Shutdown(false)
	displays := map[string][]*nbformat.Output{} // display id → the outputs it shows, across cells
	var mu sync.Mutex                           // the recorders' one lock: a detached cell updates displays while the next cell runs
	for i, c := range nb.Cells() {
		if c.Type() != "code" {
			continue
		}
		c.Outputs = nil
		c.ExecutionCount = 0
		if strings.TrimSpace(c.Source()) == "" {
			continue // Jupyter does not execute an empty cell
		}
		pub := &recorder{mu: &mu, cell: c, displays: displays}
		res, err := s.Execute(ctx, c.Source(), pub)
		pub.finish()
		c.ExecutionCount = s.ExecutionCount()
		if res != nil {
			pub.add(&nbformat.Output{Type: "execute_result", Data: res.Data, Metadata: res.Metadata, ExecutionCount: c.ExecutionCount})
		}
		if err == nil {
			continue
		}
		var ee *cells.ExecError
		if !errors.As(err, &ee) {
			ee = &cells.ExecError{EName: "Error", EValue: err.Error(), Traceback: []string{err.Error()}}
		}
		pub.add(&nbformat.Output{Type: "error", EName: ee.EName, EValue: ee.EValue, Traceback: ee.Traceback})
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !allowErrors {
			return &cellError{index: i, line: firstLine(c.Source()), err: ee}
		}
	}
	return nil
}

// firstLine is a cell's first non-blank line, cut to 60 characters.
func firstLine(src string) string {
	for _, l := range strings.Split(src, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			if r := []rune(l); len(r) > 60 {
				return string(r[:59]) + "…"
			}
			return l
		}
	}
	return ""
}

// recorder is the Publisher of one cell: it appends outputs to the cell as
// Jupyter's client (nbclient) does, applying display updates and clears in
// place, so the notebook keeps the final state of what the cell showed. It
// also merges consecutive stream text into one output, as Jupyter's front
// ends show it.
type recorder struct {
	mu         *sync.Mutex // shared by the recorders of one notebook
	cell       *nbformat.Cell
	displays   map[string][]*nbformat.Output
	clearFirst bool // a ClearOutput(true) waits for the next output
	done       bool // the cell returned: later outputs have no cell to land in
	detached   bool // but its display updates still apply (Detach)
}

// Detach keeps the cell's display updates applying after it returned (a
// background load's progress display); its other outputs are still dropped.
func (r *recorder) Detach() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.detached = true
}

// finish ends the cell's publishing: the cell returned, so later outputs
// are dropped, as the kernel drops them.
func (r *recorder) finish() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = true
}

// add appends the cell's execute_result or error, after a pending clear.
func (r *recorder) add(o *nbformat.Output) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.append(o)
}

// append adds o to the cell's outputs, clearing them first when a
// ClearOutput(true) waits. r.mu is held.
func (r *recorder) append(o *nbformat.Output) {
	if r.clearFirst {
		r.clear()
	}
	r.cell.Outputs = append(r.cell.Outputs, o)
}

// clear removes the cell's outputs, and from the displays that showed
// them, so that a later update of their display id does not revive them.
// r.mu is held.
func (r *recorder) clear() {
	r.clearFirst = false
	if len(r.cell.Outputs) == 0 {
		return
	}
	gone := map[*nbformat.Output]bool{}
	for _, o := range r.cell.Outputs {
		gone[o] = true
	}
	for id, outs := range r.displays {
		r.displays[id] = slices.DeleteFunc(outs, func(o *nbformat.Output) bool { return gone[o] })
	}
	r.cell.Outputs = nil
}

func (r *recorder) Stream(name, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	if n := len(r.cell.Outputs); n > 0 && !r.clearFirst {
		if last := r.cell.Outputs[n-1]; last.Type == "stream" && last.Name == name {
			last.Text += text
			return
		}
	}
	r.append(&nbformat.Output{Type: "stream", Name: name, Text: text})
}

func (r *recorder) Display(data, metadata map[string]any, displayID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	o := &nbformat.Output{Type: "display_data", Data: data, Metadata: metadata}
	r.append(o)
	if displayID != "" {
		r.displays[displayID] = append(r.displays[displayID], o)
	}
}

func (r *recorder) UpdateDisplay(data, metadata map[string]any, displayID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done && !r.detached {
		return
	}
	for _, o := range r.displays[displayID] {
		o.Data, o.Metadata = data, metadata
	}
}

func (r *recorder) ClearOutput(wait bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	if wait {
		r.clearFirst = true
		return
	}
	r.clear()
}

// writeFileAtomic writes b to path through a temporary file in the same
// folder, so that a reader never sees half a notebook.
func writeFileAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		mode := os.FileMode(0o644)
		if fi, serr := os.Stat(path); serr == nil {
			mode = fi.Mode().Perm()
		}
		err = os.Chmod(tmp, mode)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// reportSourceFromNotebook reads what the last %report of a saved notebook
// was made of (its mimeReportSource output), for `tracebook report --from`.
func reportSourceFromNotebook(path string) (*report.Source, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	nb, err := nbformat.Read(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var text string
	found := false
	for _, c := range nb.Cells() {
		for _, o := range c.Outputs {
			if v, ok := o.Data[mimeReportSource].(string); ok {
				text, found = v, true
			}
		}
	}
	if !found {
		return nil, fmt.Errorf("%s: no %%report output with %s: run the notebook's %%report cell and save it", path, mimeReportSource)
	}
	data, err := decodeReportSource(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", path, mimeReportSource, err)
	}
	src, err := report.DecodeSource(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", path, mimeReportSource, err)
	}
	return src, nil
}

// reportSource is what `tracebook report` renders: with --from, the source
// saved in a notebook's %report output; otherwise the traces, loaded with
// lf (progress on stderr) and analysed, with the page collectReport drew
// (nil with --from).
func reportSource(ctx context.Context, from string, paths []string, f evidence.Filter, lf loadFlags, stderr io.Writer) (*report.Source, *wasm.ReportPage, error) {
	if from == "" {
		return collectReport(ctx, paths, f, lf, stderr)
	}
	if len(paths) > 0 {
		return nil, nil, fmt.Errorf("--from %s takes no TRACE: the notebook holds the evidence", from)
	}
	src, err := reportSourceFromNotebook(from)
	return src, nil, err
}
