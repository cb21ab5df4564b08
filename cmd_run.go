package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/cells"
)

func init() {
	register(command{
		name:  "run",
		usage: "run NOTEBOOK.ipynb [-o OUT.ipynb | --inplace] [--allow-errors] [--cache DIR|-]",
		help:  "execute a notebook's cells without a Jupyter server and write it with its outputs",
		run:   runRun,
	})
}

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
	nb, err := parseNotebook(src)
	if err != nil {
		return fmt.Errorf("%s: %w", o.notebook, err)
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
	b, err := nb.encode()
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
func executeNotebook(ctx context.Context, nb *notebook, dir string, cfg sessionConfig, allowErrors bool) error {
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
	displays := map[string][]*output{} // display id → the outputs it shows, across cells
	for i, c := range nb.cells {
		if c.cellType != "code" {
			continue
		}
		c.outputs = nil
		c.executionCount = 0
		if strings.TrimSpace(c.source) == "" {
			continue // Jupyter does not execute an empty cell
		}
		pub := &recorder{cell: c, displays: displays}
		res, err := s.Execute(ctx, c.source, pub)
		pub.mu.Lock()
		pub.done = true
		pub.mu.Unlock()
		c.executionCount = s.ExecutionCount()
		if res != nil {
			c.outputs = append(c.outputs, &output{kind: "execute_result", data: res.Data, metadata: res.Metadata, count: c.executionCount})
		}
		if err == nil {
			continue
		}
		var ee *cells.ExecError
		if !errors.As(err, &ee) {
			ee = &cells.ExecError{EName: "Error", EValue: err.Error(), Traceback: []string{err.Error()}}
		}
		c.outputs = append(c.outputs, &output{kind: "error", ename: ee.EName, evalue: ee.EValue, traceback: ee.Traceback})
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !allowErrors {
			return &cellError{index: i, line: firstLine(c.source), err: ee}
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
// Jupyter's client would, merging consecutive stream text and applying
// display updates in place, so the notebook keeps a display's final state.
type recorder struct {
	mu       sync.Mutex
	cell     *cell
	displays map[string][]*output
	done     bool // the cell returned: later outputs have no cell to land in
}

func (r *recorder) Stream(name, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	if n := len(r.cell.outputs); n > 0 {
		if last := r.cell.outputs[n-1]; last.kind == "stream" && last.name == name {
			last.text += text
			return
		}
	}
	r.cell.outputs = append(r.cell.outputs, &output{kind: "stream", name: name, text: text})
}

func (r *recorder) Display(data, metadata map[string]any, displayID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	o := &output{kind: "display_data", data: data, metadata: metadata}
	r.cell.outputs = append(r.cell.outputs, o)
	if displayID != "" {
		r.displays[displayID] = append(r.displays[displayID], o)
	}
}

func (r *recorder) UpdateDisplay(data, metadata map[string]any, displayID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	for _, o := range r.displays[displayID] {
		o.data, o.metadata = data, metadata
	}
}

// notebook is an nbformat 4 document read for execution. Everything but the
// code cells' outputs and execution counts is kept as the raw JSON it was
// read from, in its order, so that it is written back unchanged.
type notebook struct {
	fields []field // the top-level object; the "cells" value is rebuilt
	cells  []*cell
}

// field is one member of a JSON object, its value as read.
type field struct {
	key   string
	value json.RawMessage
}

type cell struct {
	fields         []field // "outputs" and "execution_count" are rebuilt for code cells
	cellType       string
	source         string
	outputs        []*output
	executionCount int // 0 = null
}

// output is one output of a code cell.
//
// Spec: https://nbformat.readthedocs.io/en/latest/format_description.html#code-cell-outputs
type output struct {
	kind           string // stream, display_data, execute_result, error
	name, text     string // stream
	data, metadata map[string]any
	count          int // execute_result
	ename, evalue  string
	traceback      []string
}

// parseNotebook reads an nbformat 4 notebook.
func parseNotebook(b []byte) (*notebook, error) {
	top, err := readObject(b)
	if err != nil {
		return nil, fmt.Errorf("not a notebook: %w", err)
	}
	nb := &notebook{fields: top}
	var major int
	var cellsRaw json.RawMessage
	var meta struct {
		Kernelspec struct {
			Name string `json:"name"`
		} `json:"kernelspec"`
	}
	for _, f := range top {
		switch f.key {
		case "nbformat":
			if err := json.Unmarshal(f.value, &major); err != nil {
				return nil, fmt.Errorf("nbformat: %w", err)
			}
		case "cells":
			cellsRaw = f.value
		case "metadata":
			if err := json.Unmarshal(f.value, &meta); err != nil {
				return nil, fmt.Errorf("metadata: %w", err)
			}
		}
	}
	if major != 4 {
		return nil, fmt.Errorf("nbformat %d: only nbformat 4 notebooks run (open and save it in Jupyter to upgrade it)", major)
	}
	if k := meta.Kernelspec.Name; k != "" && k != kernelName {
		return nil, fmt.Errorf("the notebook is for the kernel %q, not %q", k, kernelName)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(cellsRaw, &raws); err != nil {
		return nil, fmt.Errorf("cells: %w", err)
	}
	for i, raw := range raws {
		fs, err := readObject(raw)
		if err != nil {
			return nil, fmt.Errorf("cells[%d]: %w", i, err)
		}
		c := &cell{fields: fs}
		for _, f := range fs {
			switch f.key {
			case "cell_type":
				if err := json.Unmarshal(f.value, &c.cellType); err != nil {
					return nil, fmt.Errorf("cells[%d].cell_type: %w", i, err)
				}
			case "source":
				if c.source, err = multiline(f.value); err != nil {
					return nil, fmt.Errorf("cells[%d].source: %w", i, err)
				}
			}
		}
		nb.cells = append(nb.cells, c)
	}
	return nb, nil
}

// readObject reads a JSON object's members in order, each value as raw JSON.
func readObject(b []byte) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("want a JSON object")
	}
	var fs []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var f field
		f.key = tok.(string) // the decoder allows only strings as keys
		if err := dec.Decode(&f.value); err != nil {
			return nil, fmt.Errorf("%s: %w", f.key, err)
		}
		fs = append(fs, f)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON object")
	}
	return fs, nil
}

// multiline reads nbformat's multiline string: a string or a list of strings.
func multiline(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []string
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("want a string or a list of strings")
	}
	return strings.Join(parts, ""), nil
}

// encode writes the notebook as Jupyter does: 1-space indentation, a
// trailing newline, non-ASCII characters as they are, multiline strings as
// lists of lines, mime bundles with JSON types as JSON.
func (nb *notebook) encode() ([]byte, error) {
	var compact bytes.Buffer
	cellsRaw := make([]json.RawMessage, len(nb.cells))
	for i, c := range nb.cells {
		raw, err := c.encode()
		if err != nil {
			return nil, fmt.Errorf("cells[%d]: %w", i, err)
		}
		cellsRaw[i] = raw
	}
	fs := append([]field(nil), nb.fields...)
	for i := range fs {
		if fs[i].key == "cells" {
			fs[i].value = marshalRawArray(cellsRaw)
		}
	}
	writeObject(&compact, fs)
	var out bytes.Buffer
	if err := json.Indent(&out, compact.Bytes(), "", " "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func (c *cell) encode() (json.RawMessage, error) {
	if c.cellType != "code" {
		var b bytes.Buffer
		writeObject(&b, c.fields)
		return b.Bytes(), nil
	}
	outs := make([]json.RawMessage, len(c.outputs))
	for i, o := range c.outputs {
		raw, err := o.encode()
		if err != nil {
			return nil, fmt.Errorf("outputs[%d]: %w", i, err)
		}
		outs[i] = raw
	}
	count := json.RawMessage("null")
	if c.executionCount > 0 {
		count = json.RawMessage(fmt.Sprint(c.executionCount))
	}
	fs := append([]field(nil), c.fields...)
	var haveOut, haveCount bool
	for i := range fs {
		switch fs[i].key {
		case "outputs":
			fs[i].value, haveOut = marshalRawArray(outs), true
		case "execution_count":
			fs[i].value, haveCount = count, true
		}
	}
	if !haveCount {
		fs = append(fs, field{"execution_count", count})
	}
	if !haveOut {
		fs = append(fs, field{"outputs", marshalRawArray(outs)})
	}
	var b bytes.Buffer
	writeObject(&b, fs)
	return b.Bytes(), nil
}

func (o *output) encode() (json.RawMessage, error) {
	var v any
	switch o.kind {
	case "stream":
		v = struct {
			Name       string   `json:"name"`
			OutputType string   `json:"output_type"`
			Text       []string `json:"text"`
		}{o.name, o.kind, splitLines(o.text)}
	case "error":
		tb := o.traceback
		if tb == nil {
			tb = []string{}
		}
		v = struct {
			EName      string   `json:"ename"`
			EValue     string   `json:"evalue"`
			OutputType string   `json:"output_type"`
			Traceback  []string `json:"traceback"`
		}{o.ename, o.evalue, o.kind, tb}
	default:
		data, err := mimeBundle(o.data)
		if err != nil {
			return nil, err
		}
		meta := o.metadata
		if meta == nil {
			meta = map[string]any{}
		}
		if o.kind == "execute_result" {
			v = struct {
				Data           map[string]json.RawMessage `json:"data"`
				ExecutionCount int                        `json:"execution_count"`
				Metadata       map[string]any             `json:"metadata"`
				OutputType     string                     `json:"output_type"`
			}{data, o.count, meta, o.kind}
		} else {
			v = struct {
				Data       map[string]json.RawMessage `json:"data"`
				Metadata   map[string]any             `json:"metadata"`
				OutputType string                     `json:"output_type"`
			}{data, meta, o.kind}
		}
	}
	return marshal(v)
}

// mimeBundle encodes a MIME bundle as nbformat stores it: a JSON type
// (application/json, anything ending in +json) as JSON, any other type as
// a list of lines. Bytes are stored as base64.
func mimeBundle(data map[string]any) (map[string]json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(data))
	for mime, v := range data {
		jsonType := mime == "application/json" || strings.HasSuffix(mime, "+json")
		var raw json.RawMessage
		var err error
		switch x := v.(type) {
		case json.RawMessage:
			if jsonType {
				raw, err = normalJSON(x)
			} else {
				raw, err = marshal(splitLines(string(x)))
			}
		case string:
			if jsonType && json.Valid([]byte(x)) {
				raw, err = normalJSON([]byte(x))
			} else {
				raw, err = marshal(splitLines(x))
			}
		case []byte:
			raw, err = marshal(splitLines(base64.StdEncoding.EncodeToString(x)))
		default:
			raw, err = marshal(x)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", mime, err)
		}
		out[mime] = raw
	}
	return out, nil
}

// normalJSON re-encodes JSON as Jupyter writes it: keys sorted, no HTML
// escapes, numbers as written.
func normalJSON(b []byte) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return marshal(v)
}

// splitLines splits text after each newline, as nbformat stores multiline
// strings: "a\nb" is ["a\n", "b"].
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if lines == nil {
		lines = []string{}
	}
	return lines
}

// marshal is json.Marshal without HTML escaping, as Python writes JSON.
func marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func marshalRawArray(items []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it)
	}
	b.WriteByte(']')
	return b.Bytes()
}

func writeObject(b *bytes.Buffer, fs []field) {
	b.WriteByte('{')
	for i, f := range fs {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := marshal(f.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(f.value)
	}
	b.WriteByte('}')
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
	var nb struct {
		Cells []struct {
			Outputs []struct {
				Data map[string]json.RawMessage `json:"data"`
			} `json:"outputs"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(b, &nb); err != nil {
		return nil, fmt.Errorf("%s: not a notebook: %w", path, err)
	}
	var raw json.RawMessage
	for _, c := range nb.Cells {
		for _, o := range c.Outputs {
			if r, ok := o.Data[mimeReportSource]; ok {
				raw = r
			}
		}
	}
	if raw == nil {
		return nil, fmt.Errorf("%s: no %%report output with %s: run the notebook's %%report cell and save it", path, mimeReportSource)
	}
	text, err := multiline(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", path, mimeReportSource, err)
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
// lf (progress on stderr) and analysed.
func reportSource(ctx context.Context, from string, paths []string, f evidence.Filter, lf loadFlags, stderr io.Writer) (*report.Source, error) {
	if from == "" {
		return collectReport(ctx, paths, f, lf, stderr)
	}
	if len(paths) > 0 {
		return nil, fmt.Errorf("--from %s takes no TRACE: the notebook holds the evidence", from)
	}
	return reportSourceFromNotebook(from)
}
