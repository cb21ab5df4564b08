package cells

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/analysis/trace"
)

func TestDuckError(t *testing.T) {
	tests := []struct {
		name, msg  string
		bodyLine   int
		ename, val string
		tb         []string
	}{
		{
			name:  "binder error with position",
			msg:   "Binder Error: Referenced column \"x\" not found in FROM clause!\nCandidate bindings: \"range\"\n\nLINE 1: SELECT x FROM range(3)\n               ^",
			ename: "Binder Error", val: `Referenced column "x" not found in FROM clause!`,
			tb: []string{`Binder Error: Referenced column "x" not found in FROM clause!`, `Candidate bindings: "range"`, "", "LINE 1: SELECT x FROM range(3)", "               ^"},
		},
		{
			name: "wrapped by the engine", msg: "query: Parser Error: syntax error at or near \"SELEC\"\n\nLINE 1: SELEC 1\n        ^",
			ename: "Parser Error", val: `syntax error at or near "SELEC"`,
			tb: []string{`Parser Error: syntax error at or near "SELEC"`, "", "LINE 1: SELEC 1", "        ^"},
		},
		{
			name: "catalog", msg: "Catalog Error: Table with name nope does not exist!\nDid you mean \"pg_type\"?",
			ename: "Catalog Error", val: "Table with name nope does not exist!",
			tb: []string{"Catalog Error: Table with name nope does not exist!", `Did you mean "pg_type"?`},
		},
		{
			name: "longest type wins", msg: "Invalid Input Error: bad", ename: "Invalid Input Error", val: "bad",
			tb: []string{"Invalid Input Error: bad"},
		},
		{
			name: "%%sql body line", msg: "Parser Error: syntax error at end of input\n\nLINE 1: SELECT\n              ^", bodyLine: 2,
			ename: "Parser Error", val: "syntax error at end of input",
			tb: []string{"Parser Error: syntax error at end of input", "", "LINE 1: SELECT", "              ^", "(LINE 1 is line 2 of the cell, the first line below %%sql)"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, ok := duckError(tc.msg, tc.bodyLine)
			if !ok {
				t.Fatalf("duckError(%q) found no DuckDB error", tc.msg)
			}
			if e.EName != tc.ename || e.EValue != tc.val || !reflect.DeepEqual(e.Traceback, tc.tb) {
				t.Errorf("duckError(%q) = %q, %q, %q; want %q, %q, %q", tc.msg, e.EName, e.EValue, e.Traceback, tc.ename, tc.val, tc.tb)
			}
		})
	}
	if _, ok := duckError("open x.json: no such file or directory", 0); ok {
		t.Error("duckError took a non-DuckDB message for a DuckDB error")
	}
}

func TestExecuteSQL(t *testing.T) {
	eng := &fakeEngine{}
	s := NewSession(eng, SessionOptions{})
	ctx := context.Background()

	eng.result = &table.Table{Columns: []table.Column{{Name: "n", Type: "BIGINT"}}, Rows: [][]any{{int64(1)}, {int64(2)}}, Total: 70}
	res, err := s.Execute(ctx, "SELECT n FROM t", nil)
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Data[MIMEText].(string); !strings.HasSuffix(text, "showing 2 of 70 rows\n") {
		t.Errorf("text/plain = %q, want the row note", text)
	}
	for _, k := range []string{MIMEText, MIMEHTML, MIMEJSON} {
		if _, ok := res.Data[k]; !ok {
			t.Errorf("result has no %s", k)
		}
	}
	if got := eng.queries[len(eng.queries)-1]; got != "SELECT n FROM t" {
		t.Errorf("engine got %q", got)
	}

	// Blank and comment-only cells do not reach the engine.
	n := len(eng.queries)
	for _, code := range []string{"", "  \n", "-- just a note\n"} {
		if res, err := s.Execute(ctx, code, nil); res != nil || err != nil {
			t.Errorf("Execute(%q) = %v, %v; want nothing", code, res, err)
		}
	}
	if len(eng.queries) != n {
		t.Errorf("blank cells reached the engine: %q", eng.queries[n:])
	}

	// %%sql takes --max-rows.
	if _, err := s.Execute(ctx, "%%sql --max-rows 3\nSELECT 1", nil); err != nil {
		t.Fatal(err)
	}

	eng.queryErr = fmt.Errorf("query: %w", errors.New("Binder Error: Referenced column \"x\" not found in FROM clause!\n\nLINE 1: SELECT x\n               ^"))
	_, err = s.Execute(ctx, "SELECT x", nil)
	var ee *ExecError
	if !errors.As(err, &ee) || ee.EName != "Binder Error" || ee.Traceback[len(ee.Traceback)-1] != "               ^" {
		t.Errorf("Execute error = %#v, want a Binder Error ending in the caret line", err)
	}
	_, err = s.Execute(ctx, "%%sql\nSELECT x", nil)
	if !errors.As(err, &ee) || !strings.Contains(strings.Join(ee.Traceback, "\n"), "LINE 1 is line 2 of the cell") {
		t.Errorf("%%%%sql error = %#v, want the line note", err)
	}

	// An interrupted query is a KeyboardInterrupt, whatever the engine says.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	eng.queryErr = errors.New("INTERRUPT Error: Interrupted!")
	_, err = s.Execute(cctx, "SELECT 1", nil)
	if !errors.As(err, &ee) || ee.EName != "KeyboardInterrupt" {
		t.Errorf("interrupted Execute error = %#v, want KeyboardInterrupt", err)
	}
}

func TestExecutionCounterAndShutdown(t *testing.T) {
	s := NewSession(nil, SessionOptions{})
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		s.Execute(ctx, "%help", nil)
	}
	if n := s.ExecutionCount(); n != 3 {
		t.Errorf("ExecutionCount() = %d, want 3", n)
	}
	s.Execute(ctx, "%context tp=2", nil)
	if err := s.Shutdown(true); err != nil {
		t.Fatal(err)
	}
	if n, c := s.ExecutionCount(), s.Context(); n != 0 || len(c) != 0 {
		t.Errorf("after restart: count %d, context %v; want 0 and empty", n, c)
	}
	if err := s.Shutdown(false); err != nil {
		t.Fatal(err)
	}
	_, err := s.Execute(ctx, "%help", nil)
	if ee, ok := err.(*ExecError); !ok || ee.EValue != "session is shut down" {
		t.Errorf("Execute after Shutdown = %v, want a session error", err)
	}
}

func TestHooks(t *testing.T) {
	s := NewSession(nil, SessionOptions{})
	var gotArgs []string
	s.Evidence = func(ctx context.Context, hs *Session, args []string, pub Publisher) (*Result, error) {
		if hs != s {
			t.Error("hook got another session")
		}
		gotArgs = args
		f, rest, err := ParseFilter(args)
		if err != nil {
			return nil, err
		}
		return textResult(fmt.Sprintf("%s rank %d\n", rest[0], f.Rank)), nil
	}
	res, err := s.Execute(context.Background(), "%evidence sync --rank 2", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotArgs, []string{"sync", "--rank", "2"}) || res.Data[MIMEText] != "sync rank 2\n" {
		t.Errorf("hook got %q and returned %v", gotArgs, res.Data[MIMEText])
	}
	// A usage error from a hook quotes the magic's synopsis.
	_, err = s.Execute(context.Background(), "%evidence sync --rank x", nil)
	ee, ok := err.(*ExecError)
	if !ok || ee.EName != "UsageError" || ee.Traceback[1] != "usage: %evidence AREA [filter]" {
		t.Errorf("hook usage error = %#v", err)
	}
}

func TestTraceLoadProgress(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a.json", "b.json"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	clock := &fakeClock{now: time.Unix(0, 0), step: 100 * time.Millisecond}
	eng := &fakeEngine{}
	var gotPaths []string
	var gotOpts trace.LoadOptions
	eng.load = func(ctx context.Context, paths []string, opts trace.LoadOptions, progress func(trace.Progress)) (*trace.LoadResult, error) {
		gotPaths, gotOpts = paths, opts
		// 20 progress reports, 100ms apart on the fake clock: at most one
		// update per 250ms gets through.
		for i := 0; i < 20; i++ {
			progress(trace.Progress{File: paths[i/10], FileIndex: i / 10, Files: 2, BytesRead: int64(i%10+1) * 1e6, BytesTotal: 10e6, DiskRead: int64(i%10+1) * 1e6, Events: int64(i * 1000)})
		}
		return &trace.LoadResult{Trace: "ab", Files: 2, Ranks: []int{0, 1}, Events: 20000, JSONBytes: 20e6,
			OtherSessions: []string{"s2"}, Gaps: []string{"rank defaulted to 0 in b.json"}}, nil
	}
	s := NewSession(eng, SessionOptions{WorkDir: dir, Clock: clock.Now})
	s.Execute(context.Background(), "%help", nil) // counter 1
	pub := &recorder{}
	res, err := s.Execute(context.Background(), "%trace load a.json 'b.json' --name ab --rank 1 --no-python --window 1..2.5 --steps 3..4", pub)
	if err != nil {
		t.Fatal(err)
	}
	wantPaths := []string{filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")}
	wantOpts := trace.LoadOptions{Name: "ab", Rank: 1, HasRank: true, NoPython: true, WindowStartNs: 1e6, WindowEndNs: 2.5e6, FirstStep: 3, LastStep: 4}
	if !reflect.DeepEqual(gotPaths, wantPaths) || gotOpts != wantOpts {
		t.Errorf("Load(%q, %+v), want Load(%q, %+v)", gotPaths, gotOpts, wantPaths, wantOpts)
	}
	if len(pub.events) < 3 || pub.events[0].kind != "display" {
		t.Fatalf("published %v, want a display and updates", pub.events)
	}
	updates := 0
	for _, e := range pub.events {
		if e.id != "tracebook-load-2" {
			t.Errorf("display id %q, want tracebook-load-2", e.id)
		}
		if e.kind == "update" {
			updates++
		}
	}
	// 2 s of fake time at one update per 250 ms, plus the final one.
	if updates < 2 || updates > 9 {
		t.Errorf("%d updates for 2 s of loading, want at most 4 a second", updates)
	}
	last := pub.events[len(pub.events)-1].text
	if !strings.HasPrefix(last, "loaded 2 files: 20,000 events, 20.0 MB of JSON (") {
		t.Errorf("final progress line = %q", last)
	}
	text := res.Data[MIMEText].(string)
	for _, want := range []string{`trace "ab": 2 files, ranks 0–1, 20,000 events`, "MB/s", "other sessions in the folder, not loaded: s2", "  - rank defaulted to 0 in b.json", "next: %trace info ab"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary %q does not contain %q", text, want)
		}
	}
}

func TestTraceLoadNewest(t *testing.T) {
	dir := t.TempDir()
	old := time.Unix(1_700_000_000, 0)
	files := map[string]time.Time{
		"config.json":                    old.Add(3 * time.Hour),
		"rank0.pt.trace.json.gz":         old.Add(2 * time.Hour),
		"x-merged_trace.json.gz":         old,
		"y-merged_trace.json":            old.Add(time.Hour),
		"z-merged_trace.json.gz.partial": old.Add(4 * time.Hour),
	}
	for f, mt := range files {
		p := filepath.Join(dir, f)
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		remove []string
		want   string
	}{
		{nil, "y-merged_trace.json"},
		{[]string{"y-merged_trace.json", "x-merged_trace.json.gz"}, "rank0.pt.trace.json.gz"},
		{[]string{"rank0.pt.trace.json.gz"}, "config.json"},
	}
	for _, tc := range tests {
		for _, f := range tc.remove {
			os.Remove(filepath.Join(dir, f))
		}
		got, err := newestTrace(dir)
		if err != nil || got != filepath.Join(dir, tc.want) {
			t.Errorf("newestTrace = %q, %v; want %q", got, err, tc.want)
		}
	}
	os.Remove(filepath.Join(dir, "config.json"))
	_, err := newestTrace(dir)
	if !errors.Is(err, ErrNoTrace) {
		t.Errorf("newestTrace in a folder without traces: %v, want ErrNoTrace", err)
	}
}

func TestTraceLoad_Errors(t *testing.T) {
	dir := t.TempDir()
	eng := &fakeEngine{load: func(ctx context.Context, paths []string, opts trace.LoadOptions, progress func(trace.Progress)) (*trace.LoadResult, error) {
		return nil, errors.New(`a.json: byte 17: invalid character '}'`)
	}}
	os.WriteFile(filepath.Join(dir, "a.json"), []byte("{"), 0o644)
	s := NewSession(eng, SessionOptions{WorkDir: dir})
	tests := []struct{ code, ename, evalue string }{
		{"%trace load nope.json", "TraceNotFound", fmt.Sprintf(`no trace found: "nope.json" does not exist (relative paths start from %s)`, dir)},
		{"%trace load *.gz", "TraceNotFound", `no trace found: no file matches "*.gz"`},
		{"%trace load a.json", "LoadError", `a.json: byte 17: invalid character '}'`},
	}
	for _, tc := range tests {
		pub := &recorder{}
		_, err := s.Execute(context.Background(), tc.code, pub)
		ee, ok := err.(*ExecError)
		if !ok || ee.EName != tc.ename || ee.EValue != tc.evalue {
			t.Errorf("Execute(%q) = %#v, want %s: %s", tc.code, err, tc.ename, tc.evalue)
		}
		if tc.ename == "LoadError" && (len(pub.events) != 2 || pub.events[1].text != "load failed: nothing was added\n") {
			t.Errorf("progress of a failed load = %v", pub.events)
		}
	}
}

func TestFormatRanks(t *testing.T) {
	tests := []struct {
		in   []int
		want string
	}{
		{nil, "no rank"}, {[]int{3}, "rank 3"}, {[]int{0, 1, 2, 3}, "ranks 0–3"}, {[]int{4, 0, 2, 5, 6}, "ranks 0, 2, 4–6"},
	}
	for _, tc := range tests {
		if got := formatRanks(tc.in); got != tc.want {
			t.Errorf("formatRanks(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
