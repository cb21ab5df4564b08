package cells

import (
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Cell
	}{
		{"plain SQL", "SELECT 1", Cell{Kind: SQLCell, Body: "SELECT 1", BodyLine: 1}},
		{"empty", "", Cell{Kind: SQLCell, Body: "", BodyLine: 1}},
		{"blank lines", "\n  \n", Cell{Kind: SQLCell, Body: "\n  \n", BodyLine: 1}},
		{"SQL with modulo", "SELECT 7\n% 3", Cell{Kind: SQLCell, Body: "SELECT 7\n% 3", BodyLine: 1}},
		{"SQL comment first", "-- %trace\nSELECT 1", Cell{Kind: SQLCell, Body: "-- %trace\nSELECT 1", BodyLine: 1}},
		{"line magic", "%trace load a.json b.json --name x",
			Cell{Kind: LineMagic, Name: "trace", Args: []string{"load", "a.json", "b.json", "--name", "x"}}},
		{"magic after blank lines", "\n\n  %trace list\n", Cell{Kind: LineMagic, Name: "trace", Args: []string{"list"}}},
		{"magic no args", "%help", Cell{Kind: LineMagic, Name: "help"}},
		{"single quotes", `%trace load 'my runs/a b.json'`, Cell{Kind: LineMagic, Name: "trace", Args: []string{"load", "my runs/a b.json"}}},
		{"double quotes with escapes", `%trace load --name "say \"hi\" \\ now"`, Cell{Kind: LineMagic, Name: "trace", Args: []string{"load", "--name", `say "hi" \ now`}}},
		{"backslash space", `%trace load my\ runs/a.json`, Cell{Kind: LineMagic, Name: "trace", Args: []string{"load", "my runs/a.json"}}},
		{"windows path kept", `%trace load C:\traces\a.json`, Cell{Kind: LineMagic, Name: "trace", Args: []string{"load", `C:\traces\a.json`}}},
		{"quotes join a word", `%trace load a'b c'd`, Cell{Kind: LineMagic, Name: "trace", Args: []string{"load", "ab cd"}}},
		{"empty quoted arg", `%context model=""`, Cell{Kind: LineMagic, Name: "context", Args: []string{"model="}}},
		{"comment", "%trace load runs/llama-tp4/            # per-rank files", Cell{Kind: LineMagic, Name: "trace", Args: []string{"load", "runs/llama-tp4/"}}},
		{"hash inside a word", "%trace load a#b.json", Cell{Kind: LineMagic, Name: "trace", Args: []string{"load", "a#b.json"}}},
		{"continuation", "%context tp=4 \\\n  isl=1024", Cell{Kind: LineMagic, Name: "context", Args: []string{"tp=4", "isl=1024"}}},
		{"comment lines after", "%trace list\n# the loaded traces\n", Cell{Kind: LineMagic, Name: "trace", Args: []string{"list"}}},
		{"non-ASCII args", "%trace load données/trace.json --name 日本", Cell{Kind: LineMagic, Name: "trace", Args: []string{"load", "données/trace.json", "--name", "日本"}}},
		{"cell magic", "%%sql\nSELECT 1\nFROM t", Cell{Kind: CellMagic, Name: "sql", Body: "SELECT 1\nFROM t", BodyLine: 2}},
		{"cell magic with options", "\n%%sql --max-rows 5\nSELECT 1", Cell{Kind: CellMagic, Name: "sql", Args: []string{"--max-rows", "5"}, Body: "SELECT 1", BodyLine: 3}},
		{"cell magic, empty body", "%%sql", Cell{Kind: CellMagic, Name: "sql", Body: "", BodyLine: 2}},
		{"CRLF", "%trace list\r\n", Cell{Kind: LineMagic, Name: "trace", Args: []string{"list"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.in)
			if err != nil {
				t.Fatalf("Parse(%q) error: %v", tc.in, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Parse(%q) = %#v, want %#v", tc.in, got, tc.want)
			}
		})
	}
}

func TestParse_Errors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"no name", "% trace", "line 1: a magic needs a name after %"},
		{"no cell magic name", "%%\nSELECT 1", "line 1: a cell magic needs a name after %%"},
		{"bad name", "%1trace", `line 1: "%1trace" is not a magic name`},
		{"bad cell magic name", "%%s!ql", `line 1: "%%s!ql" is not a magic name`},
		{"unterminated quote", "%trace load 'a.json", `line 1: %trace: unterminated ' quote in "load 'a.json"`},
		{"unterminated double quote", "\n%trace load --name \"x", `line 2: %trace: unterminated " quote in "load --name \"x"`},
		{"two magics", "%trace load a.json\n%evidence sync", `line 2: only one line magic per cell: "%evidence sync" follows %trace (give it its own cell)`},
		{"SQL after magic", "%trace list\nSELECT 1", `line 2: only one line magic per cell: "SELECT 1" follows %trace (give it its own cell)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.in)
			if err == nil || err.Error() != tc.want {
				t.Errorf("Parse(%q) error = %v, want %q", tc.in, err, tc.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"SELECT 1", "%trace load a.json --name x", "%%sql --max-rows 3\nSELECT 1", "%evidence sync --rank 0 --window 1..2",
		`%trace load "a b" 'c' d\ e # comment`, "%context tp=4 \\\n isl=1", "%", "%%", "%'", "\"", "%x\n%y", "%trace load 'données",
		"\r\n%help trace", "%a\\", "%a \\\\\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		c, err := Parse(code)
		if err != nil {
			return
		}
		switch c.Kind {
		case SQLCell:
			if c.Body != code || c.Name != "" {
				t.Errorf("Parse(%q) = %#v: a SQL cell keeps the code as its body", code, c)
			}
		case LineMagic, CellMagic:
			if !validName(c.Name) {
				t.Errorf("Parse(%q) = %#v: invalid magic name", code, c)
			}
		default:
			t.Errorf("Parse(%q): kind %v", code, c.Kind)
		}
		// Completion and is-complete never panic on what Parse accepts or rejects.
		s := NewSession(nil, SessionOptions{WorkDir: t.TempDir()})
		for _, cur := range []int{0, len([]rune(code)) / 2, len([]rune(code))} {
			s.Complete(code, cur)
			s.Inspect(code, cur, 0)
		}
		s.IsComplete(code)
	})
}
