package cells

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/internal/testutil"
)

// TestHelpGolden renders %help and %help NAME for every magic into one
// golden file.
func TestHelpGolden(t *testing.T) {
	s := NewSession(nil, SessionOptions{})
	var b strings.Builder
	cells := []string{"%help"}
	for _, m := range magics {
		cells = append(cells, "%help "+m.name)
	}
	for _, code := range cells {
		res, err := s.Execute(context.Background(), code, nil)
		if err != nil {
			t.Fatalf("Execute(%q) error: %v", code, err)
		}
		b.WriteString("=== " + code + "\n")
		b.WriteString(res.Data[MIMEText].(string))
	}
	testutil.Golden(t, filepath.Join("testdata", "help.golden"), []byte(b.String()))
}

// TestHelpListsEveryMagic checks that the index names every row and every
// option of every row, so the table and the help cannot drift apart.
func TestHelpListsEveryMagic(t *testing.T) {
	index := helpIndex()
	for _, m := range magics {
		rows := []*magic{m}
		prefix := ""
		if len(m.subs) > 0 {
			rows, prefix = m.subs, "%"+m.name
		}
		for _, r := range rows {
			if syn := r.synopsis(prefix); !strings.Contains(index, syn) {
				t.Errorf("%%help does not list %q", syn)
			}
			if r.help == "" {
				t.Errorf("magic %s %s has no one-line help", m.name, r.name)
			}
			if r.run == nil {
				t.Errorf("magic %s %s has no run function", m.name, r.name)
			}
		}
		long := magicHelp(m)
		for _, r := range rows {
			for _, o := range r.allOptions() {
				if !strings.Contains(long, "--"+o.name) || o.help == "" {
					t.Errorf("%%help %s does not document --%s", m.name, o.name)
				}
			}
		}
	}
}

func TestHelp_Errors(t *testing.T) {
	s := NewSession(nil, SessionOptions{})
	tests := []struct{ code, ename, evalue string }{
		{"%help nosuch", "UsageError", `unknown magic "nosuch" (%help lists the magics)`},
		{"%help a b", "UsageError", "%help takes at most one magic name, got 2 arguments"},
		{"%nosuch", "UsageError", "unknown magic %nosuch (%help lists the magics)"},
		{"%%nosuch\nx", "UsageError", "unknown magic %%nosuch (%help lists the magics)"},
		{"%sql SELECT 1", "UsageError", "%sql is a cell magic: write %%sql on the first line and the body below it"},
		{"%%trace\nlist", "UsageError", "%%trace is not a cell magic: write %trace"},
		{"%trace", "UsageError", "%trace needs a subcommand: load, list, info, drop"},
		{"%trace lod", "UsageError", `%trace has no subcommand "lod" (did you mean load?): load, list, info, drop`},
		{"%trace zap", "UsageError", `%trace has no subcommand "zap": load, list, info, drop`},
		{"%evidnce sync", "UsageError", "unknown magic %evidnce (did you mean %evidence?) (%help lists the magics)"},
		{"%help crosview", "UsageError", `unknown magic "crosview" (did you mean %crossview?) (%help lists the magics)`},
		{"%trace load --no-pyton", "UsageError", "%trace load has no option --no-pyton (did you mean --no-python?)"},
		{"%%sql --max-row 5\nSELECT 1", "UsageError", "%%sql has no option --max-row (did you mean --max-rows?)"},
		{"%context max_num_seq=8", "UsageError", `%context: unknown key "max_num_seq" (did you mean max-num-seqs?) (keys: tp, pp, dp, ep, max-num-seqs, max-num-batched-tokens, cudagraph-mode, isl, osl, batch-size, model, dtype)`},
		{"%trace load --nope", "UsageError", "%trace load has no option --nope"},
		{"%trace load --no-python=1", "UsageError", "--no-python takes no value"},
		{"%trace load --name", "UsageError", "--name needs a value"},
		{"%trace load --rank x", "UsageError", `--rank: "x" is not a rank (a non-negative integer)`},
		{"%trace load --steps 3..1", "UsageError", "--steps: first step 3 is after last step 1"},
		{"%trace load --steps x", "UsageError", `--steps: "x" is not FIRST..LAST with step numbers`},
		{"%trace list x", "UsageError", `%trace list takes no argument, got "x"`},
		{"%trace drop", "UsageError", "%trace drop takes one trace name, got 0 arguments"},
		{"%%sql --max-rows 0\nSELECT 1", "UsageError", `--max-rows: "0" is not a positive number of rows`},
		{"%%sql x\nSELECT 1", "UsageError", `%%sql takes no argument on its first line but options, got "x"`},
		{"%trace load 'x", "SyntaxError", `line 1: %trace: unterminated ' quote in "load 'x"`},
		{"%evidence sync", "NotAvailable", "%evidence is not available in this build"},
		{"%crossview --rank 0", "NotAvailable", "%crossview is not available in this build"},
		{"%report --html r.html", "NotAvailable", "%report is not available in this build"},
		{"%diff a b", "NotAvailable", "%diff is not available in this build"},
		{"%context tp", "UsageError", `%context: "tp" is not KEY=VALUE`},
		{"%context foo=1", "UsageError", `%context: unknown key "foo" (keys: tp, pp, dp, ep, max-num-seqs, max-num-batched-tokens, cudagraph-mode, isl, osl, batch-size, model, dtype)`},
		{"%context tp=0", "UsageError", `%context: tp="0" is not a positive integer`},
	}
	for _, tc := range tests {
		t.Run(tc.code, func(t *testing.T) {
			_, err := s.Execute(context.Background(), tc.code, nil)
			ee, ok := err.(*ExecError)
			if !ok {
				t.Fatalf("Execute(%q) error = %v (%T), want *ExecError", tc.code, err, err)
			}
			if ee.EName != tc.ename || ee.EValue != tc.evalue {
				t.Errorf("Execute(%q) = %q: %q, want %q: %q", tc.code, ee.EName, ee.EValue, tc.ename, tc.evalue)
			}
			if len(ee.Traceback) == 0 {
				t.Errorf("Execute(%q): empty traceback", tc.code)
			}
		})
	}
}

func TestUsageTracebackQuotesSynopsis(t *testing.T) {
	s := NewSession(nil, SessionOptions{})
	_, err := s.Execute(context.Background(), "%trace load --nope", nil)
	ee := err.(*ExecError)
	want := []string{"UsageError: %trace load has no option --nope", "usage: %trace load [PATH...] [options]", "%help trace shows the options"}
	if strings.Join(ee.Traceback, "\n") != strings.Join(want, "\n") {
		t.Errorf("traceback = %q, want %q", ee.Traceback, want)
	}
}

func TestContext(t *testing.T) {
	s := NewSession(nil, SessionOptions{})
	ctx := context.Background()
	if _, err := s.Execute(ctx, "%context TP=4 max_num_seqs=256 cudagraph=full isl=1024 osl=128 batch=32", nil); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"tp": "4", "max-num-seqs": "256", "cudagraph-mode": "full", "isl": "1024", "osl": "128", "batch-size": "32"}
	if got := s.Context(); !equalMaps(got, want) {
		t.Errorf("Context() = %v, want %v", got, want)
	}
	if _, err := s.Execute(ctx, "%context osl= model='Qwen 0.5B'", nil); err != nil {
		t.Fatal(err)
	}
	delete(want, "osl")
	want["model"] = "Qwen 0.5B"
	if got := s.Context(); !equalMaps(got, want) {
		t.Errorf("Context() = %v, want %v", got, want)
	}
	res, err := s.Execute(ctx, "%context", nil)
	if err != nil {
		t.Fatal(err)
	}
	text := res.Data[MIMEText].(string)
	for _, line := range []string{"tp             | 4", "model          | Qwen 0.5B"} {
		if !strings.Contains(text, line) {
			t.Errorf("%%context shows\n%s\nwant a line with %q", text, line)
		}
	}
	if _, err := s.Execute(ctx, "%context --clear", nil); err != nil {
		t.Fatal(err)
	}
	if got := s.Context(); len(got) != 0 {
		t.Errorf("after --clear, Context() = %v", got)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
