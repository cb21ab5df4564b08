package nbformat

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/internal/testutil"
)

// seedNotebooks returns the notebooks the tests read: testdata/*.ipynb
// (outputs.ipynb was written by Python's nbformat.writes, with every kind
// of output and cell) and the worked notebooks of notebooks/, written by
// `tracebook run`.
func seedNotebooks(t testing.TB) map[string][]byte {
	t.Helper()
	var paths []string
	for _, dir := range []string{"testdata", filepath.Join(testutil.RepoRoot(t), "notebooks")} {
		m, err := filepath.Glob(filepath.Join(dir, "*.ipynb"))
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, m...)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = b
	}
	if _, ok := out["outputs.ipynb"]; !ok {
		t.Fatal("testdata/outputs.ipynb is missing")
	}
	return out
}

// TestRoundTrip: a notebook Jupyter (or `tracebook run`) wrote comes back
// byte for byte from Read and Encode.
func TestRoundTrip(t *testing.T) {
	for name, b := range seedNotebooks(t) {
		t.Run(name, func(t *testing.T) {
			nb, err := Read(b)
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			got, err := nb.Encode()
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if string(got) != string(b) {
				t.Errorf("Encode(Read(%s)) differs:\n%s", name, testutil.Diff(string(b), string(got)))
			}
		})
	}
}

func TestRead(t *testing.T) {
	b, err := os.ReadFile("testdata/outputs.ipynb")
	if err != nil {
		t.Fatal(err)
	}
	nb, err := Read(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := nb.KernelName(); got != "tracebook" {
		t.Errorf("KernelName() = %q, want tracebook", got)
	}
	type cellWant struct {
		typ, source string
		count       int
		outputs     []string // output type, then what identifies it
	}
	var got []cellWant
	for _, c := range nb.Cells() {
		w := cellWant{typ: c.Type(), source: c.Source(), count: c.ExecutionCount}
		for _, o := range c.Outputs {
			s := o.Type
			switch o.Type {
			case "stream":
				s += " " + o.Name + " " + o.Text
			case "error":
				s += " " + o.EName + " " + strings.Join(o.Traceback, "|")
			default:
				s += " " + o.Data["text/plain"].(string)
			}
			w.outputs = append(w.outputs, s)
		}
		got = append(got, w)
	}
	want := []cellWant{
		{typ: "markdown", source: "# Every kind of output\n\nA <b>markdown</b> cell — é & \"quotes\", with an attachment: ![dot](attachment:dot.png)"},
		{typ: "code", source: "%trace load ../testdata/hta/critical_path_alexnet --name alexnet", count: 1, outputs: []string{
			"display_data loaded 1 file: 1,370 events\n",
			"stream stdout line one\nline two\n",
			"stream stderr a warning\n",
			"execute_result trace \"alexnet\": 1 file\nnext: %trace info alexnet\n",
		}},
		{typ: "code", source: "SELECT name, count(*) AS calls\nFROM kernels GROUP BY name\nORDER BY calls DESC LIMIT 2", count: 2, outputs: []string{
			"execute_result name  calls\n----  -----\n",
		}},
		{typ: "code", source: "SELECT nope FROM traces", count: 3, outputs: []string{
			`error Binder Error Binder Error: Referenced column "nope" not found|LINE 1: SELECT nope FROM traces|               ^`,
		}},
		{typ: "code", source: ""},
		{typ: "raw", source: "raw <text>\n"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cells =\n%+v\nwant\n%+v", got, want)
	}

	// The table's bundle: JSON types as the JSON read, other types as text.
	res := nb.Cells()[2].Outputs[0]
	for mime, want := range map[string]any{
		"application/json":                     json.RawMessage(`{"columns":`),
		"application/vnd.tracebook.table+json": json.RawMessage(`{`),
		"image/png":                            "iVBORw0KGgo",
		"image/svg+xml":                        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"4\" height=\"4\">\n<rect",
	} {
		v := res.Data[mime]
		switch w := want.(type) {
		case json.RawMessage:
			raw, ok := v.(json.RawMessage)
			if !ok || !strings.HasPrefix(strings.Join(strings.Fields(string(raw)), ""), string(w)) {
				t.Errorf("Data[%s] = %T %.40v, want json.RawMessage starting %s", mime, v, v, w)
			}
		case string:
			s, ok := v.(string)
			if !ok || !strings.HasPrefix(s, w) {
				t.Errorf("Data[%s] = %T %.40v, want a string starting %q", mime, v, v, w)
			}
		}
	}
	if res.ExecutionCount != 2 || !reflect.DeepEqual(res.Metadata, map[string]any{"tracebook": map[string]any{"rows": 2.0}}) {
		t.Errorf("execute_result count %d, metadata %v", res.ExecutionCount, res.Metadata)
	}
}

// TestRead_Errors: what Read rejects, with the member that is wrong.
func TestRead_Errors(t *testing.T) {
	const head = `{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, `
	tests := []struct {
		name, in, want string
	}{
		{"empty", ``, "not a notebook: EOF"},
		{"array", `[]`, "not a notebook: want a JSON object"},
		{"trailing data", `{"nbformat": 4, "cells": []} {}`, "not a notebook: data after the JSON object"},
		{"nbformat 3", `{"nbformat": 3, "cells": []}`, "nbformat 3: only nbformat 4 notebooks are read (open and save it in Jupyter to upgrade it)"},
		{"no nbformat", `{"cells": []}`, "nbformat 0: only nbformat 4 notebooks are read (open and save it in Jupyter to upgrade it)"},
		{"nbformat string", `{"nbformat": "4"}`, "nbformat: json: cannot unmarshal string into Go value of type int"},
		{"metadata string", `{"nbformat": 4, "metadata": "x", "cells": []}`, "metadata: json: cannot unmarshal string into Go value of type struct { Kernelspec struct { Name string \"json:\\\"name\\\"\" } \"json:\\\"kernelspec\\\"\" }"},
		{"no cells", `{"nbformat": 4}`, "cells: missing"},
		{"cells object", head + `"cells": {}}`, "cells: json: cannot unmarshal object into Go value of type []json.RawMessage"},
		{"cell not object", head + `"cells": [1]}`, "cells[0]: want a JSON object"},
		{"cell_type number", head + `"cells": [{"cell_type": 1}]}`, "cells[0].cell_type: json: cannot unmarshal number into Go value of type string"},
		{"source number", head + `"cells": [{"cell_type": "code", "source": 1}]}`, "cells[0].source: want a string or a list of strings"},
		{"execution_count float", head + `"cells": [{"cell_type": "code", "execution_count": 1.5}]}`, "cells[0].execution_count: json: cannot unmarshal number 1.5 into Go value of type int"},
		{"outputs object", head + `"cells": [{"cell_type": "code", "outputs": {}}]}`, "cells[0].outputs: json: cannot unmarshal object into Go value of type []json.RawMessage"},
		{"output not object", head + `"cells": [{"cell_type": "code", "outputs": [null]}]}`, "cells[0].outputs[0]: want a JSON object"},
		{"stream text number", head + `"cells": [{"cell_type": "code", "outputs": [{"output_type": "stream", "text": 1}]}]}`, "cells[0].outputs[0].text: want a string or a list of strings"},
		{"text data number", head + `"cells": [{"cell_type": "code", "outputs": [{"output_type": "display_data", "data": {"text/plain": 1}}]}]}`, `cells[0].outputs[0].data["text/plain"]: want a string or a list of strings`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read([]byte(tc.in))
			if err == nil || err.Error() != tc.want {
				t.Errorf("Read(%s) = %v, want %q", tc.in, err, tc.want)
			}
		})
	}
}

// TestEncode: outputs made by a run are written as Jupyter writes them;
// everything else keeps the bytes it was read with (numbers, escapes,
// order), and a code cell without outputs or count gets both.
func TestEncode(t *testing.T) {
	const in = `{"cells": [
  {"cell_type": "markdown", "metadata": {"w": 0.10, "u": "\u00e9"}, "source": "kept <as> read"},
  {"source": ["SELECT 1"], "cell_type": "code", "outputs": [{"output_type": "stream", "name": "stdout", "text": "stale"}], "execution_count": 9, "metadata": {}},
  {"cell_type": "code", "metadata": {}, "source": ""}
 ],
 "nbformat_minor": 5, "nbformat": 4, "metadata": {"kernelspec": {"name": "tracebook"}}}`
	nb, err := Read([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	c := nb.Cells()[1]
	c.ExecutionCount = 3
	c.Outputs = []*Output{
		{Type: "stream", Name: "stdout", Text: "a\nb"},
		{Type: "display_data", Data: map[string]any{
			"text/plain":                   "x <y> & z\n",
			"application/json":             `{"b": 1, "a": 1.50}`,
			"application/x":                []byte{0, 1, 2},
			"text/csv":                     json.RawMessage("a,b\n1,2\n"),
			"application/vnd.example+json": map[string]any{"k": []int{1, 2}},
		}},
		{Type: "execute_result", ExecutionCount: 3, Data: map[string]any{"text/plain": ""}, Metadata: map[string]any{"m": true}},
		{Type: "error", EName: "Binder Error", EValue: "no"},
	}
	got, err := nb.Encode()
	if err != nil {
		t.Fatal(err)
	}
	want := `{
 "cells": [
  {
   "cell_type": "markdown",
   "metadata": {
    "w": 0.10,
    "u": "\u00e9"
   },
   "source": "kept <as> read"
  },
  {
   "source": [
    "SELECT 1"
   ],
   "cell_type": "code",
   "outputs": [
    {
     "name": "stdout",
     "output_type": "stream",
     "text": [
      "a\n",
      "b"
     ]
    },
    {
     "data": {
      "application/json": {
       "a": 1.50,
       "b": 1
      },
      "application/vnd.example+json": {
       "k": [
        1,
        2
       ]
      },
      "application/x": [
       "AAEC"
      ],
      "text/csv": [
       "a,b\n",
       "1,2\n"
      ],
      "text/plain": [
       "x <y> & z\n"
      ]
     },
     "metadata": {},
     "output_type": "display_data"
    },
    {
     "data": {
      "text/plain": []
     },
     "execution_count": 3,
     "metadata": {
      "m": true
     },
     "output_type": "execute_result"
    },
    {
     "ename": "Binder Error",
     "evalue": "no",
     "output_type": "error",
     "traceback": []
    }
   ],
   "execution_count": 3,
   "metadata": {}
  },
  {
   "cell_type": "code",
   "metadata": {},
   "source": "",
   "execution_count": null,
   "outputs": []
  }
 ],
 "nbformat_minor": 5,
 "nbformat": 4,
 "metadata": {
  "kernelspec": {
   "name": "tracebook"
  }
 }
}
`
	if string(got) != want {
		t.Errorf("Encode:\n%s", testutil.Diff(want, string(got)))
	}
}

func TestEncode_Errors(t *testing.T) {
	tests := []struct {
		name string
		out  *Output
		want string
	}{
		{"unknown type", &Output{Type: "clear_output"}, `cells[0]: outputs[0]: output type "clear_output": want stream, display_data, execute_result or error`},
		{"NaN", &Output{Type: "display_data", Data: map[string]any{"application/json": math.NaN()}}, "cells[0]: outputs[0]: application/json: json: unsupported value: NaN"},
		{"bad JSON text", &Output{Type: "display_data", Data: map[string]any{"application/json": json.RawMessage("{")}}, "cells[0]: outputs[0]: application/json: unexpected EOF"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nb, err := Read([]byte(`{"nbformat": 4, "cells": [{"cell_type": "code", "source": ""}]}`))
			if err != nil {
				t.Fatal(err)
			}
			nb.Cells()[0].Outputs = []*Output{tc.out}
			if _, err := nb.Encode(); err == nil || err.Error() != tc.want {
				t.Errorf("Encode() = %v, want %q", err, tc.want)
			}
		})
	}
}

// FuzzRead: Read never panics, and what it reads Encode writes; writing
// is idempotent (Read(Encode(nb)) encodes to the same bytes). The seeds
// include the worked notebooks (hundreds of kB), so fuzz with
// -fuzzminimizetime 0, or minimizing an input can take minutes:
//
//	go test ./internal/nbformat -run '^$' -fuzz FuzzRead -fuzzminimizetime 0
//
// A crasher it finds is saved under testdata/fuzz/FuzzRead and replays in
// every `go test` run from then on.
func FuzzRead(f *testing.F) {
	for _, b := range seedNotebooks(f) {
		f.Add(b)
	}
	f.Add([]byte(`{"nbformat": 4, "cells": null}`))
	f.Add([]byte(`{"nbformat": 4, "cells": [{"cell_type": "code", "execution_count": 0, "outputs": [{}]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		nb, err := Read(b)
		if err != nil {
			return
		}
		once, err := nb.Encode()
		if err != nil {
			t.Fatalf("Encode of a read notebook: %v", err)
		}
		nb2, err := Read(once)
		if err != nil {
			t.Fatalf("Read of an encoded notebook: %v\n%s", err, once)
		}
		twice, err := nb2.Encode()
		if err != nil {
			t.Fatalf("second Encode: %v", err)
		}
		if string(once) != string(twice) {
			t.Fatalf("Encode is not idempotent:\n%s", testutil.Diff(string(once), string(twice)))
		}
	})
}
