// Package nbformat reads and writes Jupyter notebooks: .ipynb files in
// nbformat 4, the JSON format that Jupyter, nbconvert and GitHub use.
//
// It is made for running a notebook and saving it with new outputs, and for
// reading the outputs of a saved one. Read keeps every member of the file as
// the JSON it was read from, in its order; Encode writes them back
// unchanged and rebuilds only what a caller may change: a code cell's
// Outputs and ExecutionCount. A notebook that Jupyter wrote therefore comes
// back byte for byte when nothing was changed, and a run changes only its
// outputs and counts.
//
// Encode writes as Jupyter's nbformat.writes does: 1-space indentation, a
// trailing newline, non-ASCII characters as they are, multiline strings as
// lists of lines, and the values of JSON MIME types (application/json,
// anything ending in +json) as JSON with sorted keys.
//
// Spec: https://nbformat.readthedocs.io/en/latest/format_description.html
package nbformat

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Notebook is an nbformat 4 notebook.
type Notebook struct {
	fields []field // the top-level object; "cells" is rebuilt from cells
	cells  []*Cell
	kernel string
}

// Cell is one cell of a notebook.
type Cell struct {
	// Outputs are a code cell's outputs, in order. An output read from the
	// file is written back as it was read; to change one, replace it.
	Outputs []*Output
	// ExecutionCount is a code cell's execution count; 0 is written as null.
	ExecutionCount int

	fields   []field // as read; "outputs" and "execution_count" are rebuilt for code cells
	cellType string
	source   string
}

// Output is one output of a code cell.
//
// Spec: https://nbformat.readthedocs.io/en/latest/format_description.html#code-cell-outputs
type Output struct {
	// Type is "stream", "display_data", "execute_result" or "error".
	Type string
	// Name ("stdout" or "stderr") and Text are a stream's.
	Name, Text string
	// Data is the MIME bundle of display_data and execute_result: a string
	// for text types, []byte for binary data (written as base64), a value
	// that encoding/json can marshal, or json.RawMessage. A JSON type
	// (application/json, anything ending in +json) is written as JSON. In
	// an output read from a file, a JSON type's value is the
	// json.RawMessage read and any other type's value is a string.
	Data map[string]any
	// Metadata goes with Data; nil is written as {}.
	Metadata map[string]any
	// ExecutionCount is an execute_result's.
	ExecutionCount int
	// EName, EValue and Traceback are an error's.
	EName, EValue string
	Traceback     []string

	raw json.RawMessage // the JSON read, written back as is
}

// field is one member of a JSON object, its value as read.
type field struct {
	key   string
	value json.RawMessage
}

// Cells returns the notebook's cells, in order.
func (nb *Notebook) Cells() []*Cell { return nb.cells }

// KernelName is metadata.kernelspec.name, the kernel the notebook is for;
// "" when the notebook names none.
func (nb *Notebook) KernelName() string { return nb.kernel }

// Type is the cell's cell_type: "code", "markdown" or "raw".
func (c *Cell) Type() string { return c.cellType }

// Source is the cell's source text.
func (c *Cell) Source() string { return c.source }

// Read reads an nbformat 4 notebook. Errors name the member that is wrong,
// as in "cells[3].source: want a string or a list of strings".
func Read(b []byte) (*Notebook, error) {
	top, err := readObject(b)
	if err != nil {
		return nil, fmt.Errorf("not a notebook: %w", err)
	}
	nb := &Notebook{fields: top}
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
		return nil, fmt.Errorf("nbformat %d: only nbformat 4 notebooks are read (open and save it in Jupyter to upgrade it)", major)
	}
	nb.kernel = meta.Kernelspec.Name
	if cellsRaw == nil {
		return nil, errors.New("cells: missing")
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(cellsRaw, &raws); err != nil {
		return nil, fmt.Errorf("cells: %w", err)
	}
	for i, raw := range raws {
		c, err := readCell(raw)
		if err != nil {
			return nil, fmt.Errorf("cells[%d]%w", i, err)
		}
		nb.cells = append(nb.cells, c)
	}
	return nb, nil
}

// readCell reads one cell; its errors start with the member's path, as
// in ".source: …", or with ": " for the cell itself.
func readCell(raw json.RawMessage) (*Cell, error) {
	fs, err := readObject(raw)
	if err != nil {
		return nil, fmt.Errorf(": %w", err)
	}
	c := &Cell{fields: fs}
	for _, f := range fs {
		if f.key == "cell_type" {
			if err := json.Unmarshal(f.value, &c.cellType); err != nil {
				return nil, fmt.Errorf(".cell_type: %w", err)
			}
		}
	}
	for _, f := range fs {
		switch {
		case f.key == "source":
			if c.source, err = multiline(f.value); err != nil {
				return nil, fmt.Errorf(".source: %w", err)
			}
		case f.key == "execution_count" && c.cellType == "code":
			var n *int
			if err := json.Unmarshal(f.value, &n); err != nil {
				return nil, fmt.Errorf(".execution_count: %w", err)
			}
			if n != nil && *n > 0 {
				c.ExecutionCount = *n
			}
		case f.key == "outputs" && c.cellType == "code":
			var raws []json.RawMessage
			if err := json.Unmarshal(f.value, &raws); err != nil {
				return nil, fmt.Errorf(".outputs: %w", err)
			}
			c.Outputs = make([]*Output, len(raws))
			for j, raw := range raws {
				if c.Outputs[j], err = readOutput(raw); err != nil {
					return nil, fmt.Errorf(".outputs[%d]%w", j, err)
				}
			}
		}
	}
	return c, nil
}

// readOutput reads one output; its errors start as readCell's do.
func readOutput(raw json.RawMessage) (*Output, error) {
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return nil, errors.New(": want a JSON object")
	}
	var in struct {
		OutputType     string                     `json:"output_type"`
		Name           string                     `json:"name"`
		Text           json.RawMessage            `json:"text"`
		Data           map[string]json.RawMessage `json:"data"`
		Metadata       map[string]any             `json:"metadata"`
		ExecutionCount *int                       `json:"execution_count"`
		EName          string                     `json:"ename"`
		EValue         string                     `json:"evalue"`
		Traceback      []string                   `json:"traceback"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf(": %w", err)
	}
	o := &Output{
		Type: in.OutputType, Name: in.Name, Metadata: in.Metadata,
		EName: in.EName, EValue: in.EValue, Traceback: in.Traceback, raw: raw,
	}
	if in.ExecutionCount != nil {
		o.ExecutionCount = *in.ExecutionCount
	}
	if in.Text != nil {
		var err error
		if o.Text, err = multiline(in.Text); err != nil {
			return nil, fmt.Errorf(".text: %w", err)
		}
	}
	if in.Data != nil {
		o.Data = make(map[string]any, len(in.Data))
		for mime, v := range in.Data {
			if isJSONType(mime) {
				o.Data[mime] = v
				continue
			}
			s, err := multiline(v)
			if err != nil {
				return nil, fmt.Errorf(".data[%q]: %w", mime, err)
			}
			o.Data[mime] = s
		}
	}
	return o, nil
}

// isJSONType says whether nbformat stores a MIME type's value as JSON.
func isJSONType(mime string) bool {
	return mime == "application/json" || strings.HasSuffix(mime, "+json")
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

// multiline reads nbformat's multiline string: a string or a list of
// strings, joined.
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

// Encode writes the notebook as Jupyter does (see the package doc).
func (nb *Notebook) Encode() ([]byte, error) {
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
			fs[i].value = rawArray(cellsRaw)
		}
	}
	var compact, out bytes.Buffer
	writeObject(&compact, fs)
	if err := json.Indent(&out, compact.Bytes(), "", " "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func (c *Cell) encode() (json.RawMessage, error) {
	if c.cellType != "code" {
		var b bytes.Buffer
		writeObject(&b, c.fields)
		return b.Bytes(), nil
	}
	outs := make([]json.RawMessage, len(c.Outputs))
	for i, o := range c.Outputs {
		raw, err := o.encode()
		if err != nil {
			return nil, fmt.Errorf("outputs[%d]: %w", i, err)
		}
		outs[i] = raw
	}
	count := json.RawMessage("null")
	if c.ExecutionCount > 0 {
		count = json.RawMessage(fmt.Sprint(c.ExecutionCount))
	}
	fs := append([]field(nil), c.fields...)
	var haveOut, haveCount bool
	for i := range fs {
		switch fs[i].key {
		case "outputs":
			fs[i].value, haveOut = rawArray(outs), true
		case "execution_count":
			fs[i].value, haveCount = count, true
		}
	}
	if !haveCount {
		fs = append(fs, field{"execution_count", count})
	}
	if !haveOut {
		fs = append(fs, field{"outputs", rawArray(outs)})
	}
	var b bytes.Buffer
	writeObject(&b, fs)
	return b.Bytes(), nil
}

func (o *Output) encode() (json.RawMessage, error) {
	if o.raw != nil {
		return o.raw, nil
	}
	var v any
	switch o.Type {
	case "stream":
		v = struct {
			Name       string   `json:"name"`
			OutputType string   `json:"output_type"`
			Text       []string `json:"text"`
		}{o.Name, o.Type, splitLines(o.Text)}
	case "error":
		tb := o.Traceback
		if tb == nil {
			tb = []string{}
		}
		v = struct {
			EName      string   `json:"ename"`
			EValue     string   `json:"evalue"`
			OutputType string   `json:"output_type"`
			Traceback  []string `json:"traceback"`
		}{o.EName, o.EValue, o.Type, tb}
	case "display_data", "execute_result":
		data, err := mimeBundle(o.Data)
		if err != nil {
			return nil, err
		}
		meta := o.Metadata
		if meta == nil {
			meta = map[string]any{}
		}
		if o.Type == "execute_result" {
			v = struct {
				Data           map[string]json.RawMessage `json:"data"`
				ExecutionCount int                        `json:"execution_count"`
				Metadata       map[string]any             `json:"metadata"`
				OutputType     string                     `json:"output_type"`
			}{data, o.ExecutionCount, meta, o.Type}
		} else {
			v = struct {
				Data       map[string]json.RawMessage `json:"data"`
				Metadata   map[string]any             `json:"metadata"`
				OutputType string                     `json:"output_type"`
			}{data, meta, o.Type}
		}
	default:
		return nil, fmt.Errorf("output type %q: want stream, display_data, execute_result or error", o.Type)
	}
	return marshal(v)
}

// mimeBundle encodes a MIME bundle as nbformat stores it: a JSON type as
// JSON, any other type as a list of lines. Bytes are stored as base64.
func mimeBundle(data map[string]any) (map[string]json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(data))
	for mime, v := range data {
		jsonType := isJSONType(mime)
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

func rawArray(items []json.RawMessage) json.RawMessage {
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
