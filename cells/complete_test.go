package cells

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// at splits a test cell at the "|" that marks the cursor and returns the
// code and the cursor in code points.
func at(s string) (string, int) {
	i := strings.Index(s, "|")
	return s[:i] + s[i+1:], len([]rune(s[:i]))
}

func completionSession(t *testing.T) *Session {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"a-merged_trace.json.gz", "rank0.json", "notes.txt", ".hidden.json", "runs/r0.pt.trace.json.gz", "données/t.json", "my runs/x.json"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	eng := &fakeEngine{tables: testCatalog(), traces: []string{"llama", "qwen"}}
	return NewSession(eng, SessionOptions{WorkDir: dir})
}

func TestComplete(t *testing.T) {
	s := completionSession(t)
	tests := []struct {
		name  string
		in    string // "|" marks the cursor
		want  []string
		start int // in code points; -1 = the cursor
	}{
		{"magic names", "%|", []string{"%%sql", "%context", "%crossview", "%diff", "%evidence", "%help", "%report", "%trace"}, 0},
		{"magic prefix", "%tr|", []string{"%trace"}, 0},
		{"cell magic", "%%s|", []string{"%%sql"}, 0},
		{"magic after blank line", "\n  %ev|", []string{"%evidence"}, 3},
		{"subcommands", "%trace |", []string{"drop", "info", "list", "load"}, 7},
		{"subcommand prefix", "%trace l|", []string{"list", "load"}, 7},
		{"areas", "%evidence s|", []string{"steps", "sync"}, 10},
		{"all areas", "%evidence |", []string{"all", "capture", "collectives", "gaps", "graphs", "kernels", "launch", "memcpy", "memory", "ops", "overlap", "overview", "phases", "ranks", "steps", "sync", "workload"}, 10},
		{"no second area", "%evidence sync |", nil, -1},
		{"options", "%evidence sync --|", []string{"--phase", "--rank", "--stream", "--trace", "--window"}, 15},
		{"report options", "%report --h|", []string{"--html"}, 8},
		{"load options", "%trace load --n|", []string{"--name", "--no-python"}, 12},
		{"trace names after --trace", "%crossview --trace |", []string{"llama", "qwen"}, 19},
		{"trace name prefix", "%crossview --trace q|", []string{"qwen"}, 19},
		{"inline --trace=", "%crossview --trace=l|", []string{"--trace=llama"}, 11},
		{"phases", "%evidence sync --phase d|", []string{"decode"}, 23},
		{"ranks", "%report --rank |", []string{"0", "1"}, 15},
		{"rank prefix", "%crossview --rank 1|", []string{"1"}, 18},
		{"trace info", "%trace info |", []string{"llama", "qwen"}, 12},
		{"trace drop", "%trace drop ll|", []string{"llama"}, 12},
		{"diff", "%diff llama |", []string{"llama", "qwen"}, 12},
		{"help", "%help tr|", []string{"trace"}, 6},
		{"context keys", "%context max|", []string{"max-num-batched-tokens=", "max-num-seqs="}, 9},
		{"paths", "%trace load |", []string{"a-merged_trace.json.gz", "données/", "'my runs/'", "rank0.json", "runs/"}, 12},
		{"path prefix", "%trace load r|", []string{"rank0.json", "runs/"}, 12},
		{"path in dir", "%trace load runs/|", []string{"runs/r0.pt.trace.json.gz"}, 12},
		{"hidden on demand", "%trace load .h|", []string{".hidden.json"}, 12},
		{"non-ASCII dir", "%trace load donn|", []string{"données/"}, 12},
		{"after non-ASCII path", "%trace load données/|", []string{"données/t.json"}, 12},
		{"quoted path", "%trace load 'my r|", []string{"'my runs/'"}, 12},
		{"report path", "%report --md n|", []string{"notes.txt"}, 13},
		{"unknown magic", "%nope |", nil, -1},
		{"sql tables", "SELECT * FROM |", []string{"données", "events", "traces"}, 14},
		{"sql table prefix", "SELECT * FROM ev|", []string{"events"}, 14},
		{"sql columns of mentioned table", "SELECT du| FROM events", []string{"dur_ns"}, 7},
		{"sql columns and keywords", "SELECT * FROM traces WHERE ra|", []string{"rank"}, 27},
		{"sql keyword case", "sel|", []string{"select"}, 0},
		{"sql dotted", "SELECT events.d| FROM events", []string{"events.dur_ns"}, 7},
		{"sql dotted any case", "SELECT EVENTS.D|", []string{"EVENTS.dur_ns"}, 7},
		{"non-ASCII before cursor", "SELECT 'é日本', ev|", []string{"events", "events"}, 14},
		{"non-ASCII table", "SELECT * FROM donn|", []string{"données"}, 14},
		{"non-ASCII column", "SELECT é| FROM données", []string{"été"}, 7},
		{"sql body of %%sql", "%%sql\nSELECT * FROM tr|", []string{"traces"}, 20},
		{"second line after a magic", "%trace list\n# x|", nil, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, cur := at(tc.in)
			got, start, end := s.Complete(code, cur)
			want := tc.want
			if tc.name == "non-ASCII before cursor" {
				want = []string{"events"}
			}
			wantStart := tc.start
			if wantStart < 0 {
				wantStart = cur
			}
			if !reflect.DeepEqual(got, want) || start != wantStart || end != cur {
				t.Errorf("Complete(%q, %d) = %q, %d, %d; want %q, %d, %d", code, cur, got, start, end, want, wantStart, cur)
			}
		})
	}
}

func TestCompleteOffsetsAreCodePoints(t *testing.T) {
	s := completionSession(t)
	// Two-byte and three-byte characters and an emoji (a surrogate pair in
	// UTF-16) before the cursor: the range counts code points.
	code := "-- ⚠️ café 日本 😀\nSELECT * FROM eve"
	got, start, end := s.Complete(code, len([]rune(code)))
	n := len([]rune(code))
	if !reflect.DeepEqual(got, []string{"events"}) || start != n-3 || end != n {
		t.Errorf("Complete(%q) = %q, %d, %d; want [events], %d, %d", code, got, start, end, n-3, n)
	}
	// The replaced range, cut out of the code in code points, is the word typed.
	if w := string([]rune(code)[start:end]); w != "eve" {
		t.Errorf("range [%d,%d) covers %q, want %q", start, end, w, "eve")
	}
	// A cursor past the end is clamped.
	if _, start, end := s.Complete(code, n+10); start != n-3 || end != n {
		t.Errorf("Complete past the end: [%d,%d), want [%d,%d)", start, end, n-3, n)
	}
}

func TestCompleteCachesColumns(t *testing.T) {
	s := completionSession(t)
	eng := s.eng.(*fakeEngine)
	s.Complete("SELECT * FROM ev", 16)
	s.Complete("SELECT * FROM tr", 16)
	if eng.columnsCalls != 1 {
		t.Errorf("Columns called %d times for two completions, want 1 (cached)", eng.columnsCalls)
	}
	s.invalidate() // what Execute does after every cell
	s.Complete("SELECT * FROM tr", 16)
	if eng.columnsCalls != 2 {
		t.Errorf("Columns called %d times after invalidation, want 2", eng.columnsCalls)
	}
}

func TestInspect(t *testing.T) {
	s := completionSession(t)
	tests := []struct {
		name string
		in   string
		want string // a substring of text/plain; "" = not found
	}{
		{"magic help", "%tr|ace load x", "%trace load [PATH...] [options]"},
		{"magic help on an option", "%evidence sync --ra|nk 0", "--rank N"},
		{"cell magic help", "%%s|ql\nSELECT 1", "--max-rows N"},
		{"table", "SELECT * FROM ev|ents", "dur_ns | BIGINT  | ns"},
		{"table under the cursor's end", "SELECT * FROM events|", "kind"},
		{"non-ASCII table", "SELECT * FROM donn|ées", "été"},
		{"dotted column", "SELECT events.dur|_ns", "events.dur_ns BIGINT (ns): duration"},
		{"column in two tables", "SELECT tra|ce FROM x", "events.trace VARCHAR\ntraces.trace VARCHAR"},
		{"unknown word", "SELECT fo|o", ""},
		{"unknown magic", "%no|pe", ""},
		{"blank", "|", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, cur := at(tc.in)
			data, found := s.Inspect(code, cur, 0)
			if tc.want == "" {
				if found {
					t.Errorf("Inspect(%q, %d) found %v, want nothing", code, cur, data)
				}
				return
			}
			if !found {
				t.Fatalf("Inspect(%q, %d) found nothing, want %q", code, cur, tc.want)
			}
			if text, _ := data[MIMEText].(string); !strings.Contains(text, tc.want) {
				t.Errorf("Inspect(%q, %d) = %q, want it to contain %q", code, cur, text, tc.want)
			}
			if _, ok := data[MIMEHTML]; !ok {
				t.Errorf("Inspect(%q, %d) has no text/html", code, cur)
			}
		})
	}
}

func TestIsComplete(t *testing.T) {
	s := NewSession(nil, SessionOptions{})
	tests := []struct{ in, status, indent string }{
		{"SELECT 1", "complete", ""},
		{"SELECT 1;", "complete", ""},
		{"", "complete", ""},
		{"SELECT 'abc", "incomplete", ""},
		{"SELECT 'it''s'", "complete", ""},
		{`SELECT "col`, "incomplete", ""},
		{"SELECT count(*", "incomplete", "    "},
		{"SELECT ((1", "incomplete", "        "},
		{"SELECT 1)", "invalid", ""},
		{"SELECT 1 -- (unbalanced in a comment\n", "complete", ""},
		{"SELECT 1 /* open", "incomplete", ""},
		{"SELECT 1 /* ( */ + 2", "complete", ""},
		{"SELECT 'é(日本'", "complete", ""},
		{"%trace load 'unterminated", "complete", ""},
		{"%evidence sync (", "complete", ""},
		{"%%sql\nSELECT (1", "incomplete", "    "},
		{"%%sql\nSELECT 1", "complete", ""},
	}
	for _, tc := range tests {
		status, indent := s.IsComplete(tc.in)
		if status != tc.status || indent != tc.indent {
			t.Errorf("IsComplete(%q) = %q, %q; want %q, %q", tc.in, status, indent, tc.status, tc.indent)
		}
	}
}
