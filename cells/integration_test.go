//go:build cgo

package cells_test

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tracebook/tracebook/analysis/trace/synth"
	"github.com/tracebook/tracebook/cells"
	"github.com/tracebook/tracebook/internal/duck"
	"github.com/tracebook/tracebook/internal/testutil"
)

// newSession opens an in-memory database without a parse cache and a
// session over it whose working directory is the repository's testdata.
func newSession(t *testing.T) (*cells.Session, string) {
	t.Helper()
	dir := testutil.Testdata(t)
	return sessionIn(t, dir), dir
}

// sessionIn is newSession working in dir.
func sessionIn(t *testing.T, dir string) *cells.Session {
	t.Helper()
	db, err := duck.Open("", duck.Options{CacheDir: "-", Threads: 2, MemoryLimit: "2GB"})
	if err != nil {
		t.Fatalf("duck.Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return cells.NewSession(db, cells.SessionOptions{WorkDir: dir})
}

// need skips the test when a trace of testdata is absent.
func need(t *testing.T, dir, rel string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, rel)); err != nil {
		t.Skipf("%s not in testdata: %v", rel, err)
	}
}

// recorder records what a cell publishes.
type recorder struct {
	mu      sync.Mutex
	kinds   []string
	ids     []string
	texts   []string
	onFirst func()
}

func (r *recorder) Stream(name, text string) { r.add("stream", name, text) }
func (r *recorder) Display(data, _ map[string]any, id string) {
	r.add("display", id, fmt.Sprint(data[cells.MIMEText]))
}
func (r *recorder) UpdateDisplay(data, _ map[string]any, id string) {
	r.add("update", id, fmt.Sprint(data[cells.MIMEText]))
}
func (r *recorder) ClearOutput(wait bool) { r.add("clear", "", fmt.Sprint(wait)) }
func (r *recorder) add(kind, id, text string) {
	r.mu.Lock()
	r.kinds, r.ids, r.texts = append(r.kinds, kind), append(r.ids, id), append(r.texts, text)
	first := len(r.kinds) == 1 && r.onFirst != nil
	r.mu.Unlock()
	if first {
		r.onFirst()
	}
}

func run(t *testing.T, s *cells.Session, code string) *cells.Result {
	t.Helper()
	res, err := s.Execute(context.Background(), code, nil)
	if err != nil {
		t.Fatalf("Execute(%q): %v", code, err)
	}
	return res
}

func text(res *cells.Result) string {
	if res == nil {
		return ""
	}
	s, _ := res.Data[cells.MIMEText].(string)
	return s
}

func TestIntegrationLoadQueryInfo(t *testing.T) {
	s, dir := newSession(t)
	const rel = "param/dlrm_8rank"
	need(t, dir, rel)

	pub := &recorder{}
	res, err := s.Execute(context.Background(), "%trace load "+rel+"/ --name dlrm", pub)
	if err != nil {
		t.Fatalf("%%trace load: %v", err)
	}
	sum := text(res)
	for _, want := range []string{`trace "dlrm": 8 files, ranks 0–7,`, "parsed ", "next: %trace info dlrm"} {
		if !strings.Contains(sum, want) {
			t.Errorf("load summary %q does not contain %q", sum, want)
		}
	}
	if len(pub.kinds) < 2 || pub.kinds[0] != "display" || pub.kinds[len(pub.kinds)-1] != "update" {
		t.Errorf("load published %q, want a display then updates", pub.kinds)
	}
	for _, id := range pub.ids {
		if id != "tracebook-load-1" {
			t.Errorf("display id %q, want tracebook-load-1", id)
		}
	}
	if last := pub.texts[len(pub.texts)-1]; !strings.HasPrefix(last, "loaded 8 files: ") {
		t.Errorf("final progress line %q", last)
	}

	list := text(run(t, s, "%trace list"))
	if !strings.Contains(list, "dlrm") || !strings.Contains(list, "1 row") {
		t.Errorf("%%trace list = %q", list)
	}
	info := run(t, s, "%trace info dlrm")
	if got := text(info); !strings.Contains(got, "8 rows") || !strings.Contains(got, "capabilities") || !strings.Contains(got, "gaps") {
		t.Errorf("%%trace info dlrm = %q", got)
	}
	var js struct {
		Columns []struct{ Name string } `json:"columns"`
		Total   int                     `json:"total"`
	}
	if err := json.Unmarshal(info.Data[cells.MIMEJSON].(json.RawMessage), &js); err != nil || js.Total != 8 {
		t.Errorf("%%trace info application/json: total %d, %v", js.Total, err)
	}
	_, err = s.Execute(context.Background(), "%trace info nope", nil)
	if ee, ok := err.(*cells.ExecError); !ok || !strings.Contains(ee.EValue, `no trace named "nope" is loaded`) {
		t.Errorf("%%trace info nope: %v", err)
	}

	// A SQL cell: the same cell twice renders byte-identical bundles.
	const q = "SELECT kind, count(*) AS n, sum(dur_ns) AS dur_ns FROM events WHERE trace = 'dlrm' GROUP BY kind ORDER BY n DESC, kind"
	a, b := run(t, s, q), run(t, s, q)
	for _, k := range []string{cells.MIMEText, cells.MIMEHTML} {
		if a.Data[k] != b.Data[k] {
			t.Errorf("%s differs between two runs of the same cell", k)
		}
	}
	if string(a.Data[cells.MIMEJSON].(json.RawMessage)) != string(b.Data[cells.MIMEJSON].(json.RawMessage)) {
		t.Error("application/json differs between two runs of the same cell")
	}
	if !strings.Contains(text(a), "kernel") {
		t.Errorf("kinds = %q, want kernel among them", text(a))
	}

	// The row cap says how many rows there were.
	capped := text(run(t, s, "SELECT * FROM range(120)"))
	if !strings.HasSuffix(capped, "showing 50 of 120 rows\n") {
		t.Errorf("capped result ends %q", capped[max(0, len(capped)-40):])
	}
	capped = text(run(t, s, "%%sql --max-rows 5\nSELECT * FROM range(120)"))
	if !strings.HasSuffix(capped, "showing 5 of 120 rows\n") {
		t.Errorf("--max-rows 5 result ends %q", capped[max(0, len(capped)-40):])
	}

	// Completion and inspection read the real catalog, refreshed after the load.
	m, _, _ := s.Complete("SELECT * FROM eve", 17)
	if !contains(m, "events") {
		t.Errorf("completions of eve = %q", m)
	}
	m, _, _ = s.Complete("SELECT dur FROM kernels", 10)
	if !contains(m, "dur_ns") {
		t.Errorf("completions of dur in kernels = %q", m)
	}
	m, _, _ = s.Complete("%trace info d", 13)
	if !contains(m, "dlrm") {
		t.Errorf("trace name completions = %q", m)
	}
	data, found := s.Inspect("SELECT * FROM traces", 16, 0)
	if !found || !strings.Contains(fmt.Sprint(data[cells.MIMEText]), "rank_source") {
		t.Errorf("Inspect(traces) = %v, %v", data, found)
	}

	// Drop, and the name is free again.
	if got := text(run(t, s, "%trace drop dlrm")); got != "dropped trace \"dlrm\"\n" {
		t.Errorf("%%trace drop = %q", got)
	}
	if got := text(run(t, s, "%trace list")); !strings.HasPrefix(got, "no trace loaded") {
		t.Errorf("%%trace list after drop = %q", got)
	}
	if _, err := s.Execute(context.Background(), "%trace drop dlrm", nil); err == nil {
		t.Error("dropping a dropped trace succeeded")
	}
}

func TestIntegrationSQLErrors(t *testing.T) {
	s, _ := newSession(t)
	tests := []struct {
		code, ename string
		tbLast      string // the last traceback line; "" = not checked
	}{
		{"SELECT nope FROM traces", "Binder Error", "               ^"},
		{"SELEC 1", "Parser Error", "        ^"},
		{"SELECT * FROM nope", "Catalog Error", ""},
		{"%%sql\nSELECT nope FROM traces", "Binder Error", "(LINE 1 is line 2 of the cell, the first line below %%sql)"},
	}
	for _, tc := range tests {
		t.Run(tc.code, func(t *testing.T) {
			_, err := s.Execute(context.Background(), tc.code, nil)
			var ee *cells.ExecError
			if !errors.As(err, &ee) {
				t.Fatalf("Execute(%q) error = %v, want *ExecError", tc.code, err)
			}
			if ee.EName != tc.ename {
				t.Errorf("Execute(%q) = %q: %q, want %s", tc.code, ee.EName, ee.EValue, tc.ename)
			}
			tb := strings.Join(ee.Traceback, "\n")
			if tc.ename != "Catalog Error" && !strings.Contains(tb, "LINE 1: ") {
				t.Errorf("traceback %q has no LINE line", tb)
			}
			if tc.tbLast != "" && ee.Traceback[len(ee.Traceback)-1] != tc.tbLast {
				t.Errorf("traceback ends %q, want %q", ee.Traceback[len(ee.Traceback)-1], tc.tbLast)
			}
		})
	}
	// The session is usable after errors.
	if got := text(run(t, s, "SELECT 42 AS answer")); !strings.Contains(got, "42") {
		t.Errorf("SELECT 42 = %q", got)
	}
}

func TestIntegrationInterruptQuery(t *testing.T) {
	s, _ := newSession(t)
	ctx, cancel := context.WithCancel(context.Background())
	var cancelled time.Time
	timer := time.AfterFunc(300*time.Millisecond, func() { cancelled = time.Now(); cancel() })
	defer timer.Stop()
	_, err := s.Execute(ctx, "SELECT sum(i) FROM range(1000000000000) t(i)", nil)
	returned := time.Now()
	var ee *cells.ExecError
	if !errors.As(err, &ee) || ee.EName != "KeyboardInterrupt" {
		t.Fatalf("interrupted query error = %v, want KeyboardInterrupt", err)
	}
	if cancelled.IsZero() {
		t.Fatal("the query ended before it was interrupted")
	}
	if d := returned.Sub(cancelled); d > interruptLimit {
		t.Errorf("the query stopped %v after the interrupt, want under %v", d, time.Duration(interruptLimit))
	}
	if got := text(run(t, s, "SELECT 7 AS x")); !strings.Contains(got, "7") {
		t.Errorf("after an interrupt, SELECT 7 = %q", got)
	}
}

func TestIntegrationInterruptLoad(t *testing.T) {
	s, dir := newSession(t)
	const rel = "kineto/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
	need(t, dir, rel)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelled time.Time
	// The interrupt comes 10 ms after the load's first progress: inside
	// the parse of the 35 MB trace, which takes about 150 ms on a fast
	// machine (at 200 ms, the load had ended before it on this one).
	pub := &recorder{onFirst: func() {
		time.AfterFunc(10*time.Millisecond, func() { cancelled = time.Now(); cancel() })
	}}
	_, err := s.Execute(ctx, "%trace load "+rel+" --name resnet", pub)
	returned := time.Now()
	var ee *cells.ExecError
	if !errors.As(err, &ee) || ee.EName != "KeyboardInterrupt" {
		t.Fatalf("interrupted load error = %v, want KeyboardInterrupt", err)
	}
	if cancelled.IsZero() {
		t.Fatal("the load ended before it was interrupted")
	}
	if d := returned.Sub(cancelled); d > interruptLimit {
		t.Errorf("the load stopped %v after the interrupt, want under %v", d, time.Duration(interruptLimit))
	}
	if last := pub.texts[len(pub.texts)-1]; last != "load interrupted: nothing was added\n" {
		t.Errorf("final progress line %q", last)
	}
	// Atomic: nothing was added, and the same load then succeeds.
	if got := text(run(t, s, "%trace list")); !strings.HasPrefix(got, "no trace loaded") {
		t.Errorf("%%trace list after an interrupted load = %q", got)
	}
	pub = &recorder{}
	start := time.Now()
	res, err := s.Execute(context.Background(), "%trace load "+rel+" --name resnet", pub)
	if err != nil {
		t.Fatalf("load after an interrupted one: %v", err)
	}
	elapsed := time.Since(start)
	updates := 0
	for _, k := range pub.kinds {
		if k == "update" {
			updates++
		}
	}
	// At most ~4 updates a second, plus the final one.
	if limit := int(elapsed.Seconds()*4) + 2; updates > limit {
		t.Errorf("%d progress updates in %v, want at most %d", updates, elapsed, limit)
	}
	if !strings.Contains(text(res), `trace "resnet": 1 file,`) {
		t.Errorf("summary = %q", text(res))
	}
	t.Logf("loaded in %v with %d updates: %s", elapsed, updates, pub.texts[len(pub.texts)-1])
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestQuickstartNotebook runs the code cells of notebooks/quickstart.ipynb
// through a session, as the kernel would, and checks that none fails. It
// does not write outputs into the notebook.
func TestQuickstartNotebook(t *testing.T) {
	root := testutil.RepoRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, "notebooks", "quickstart.ipynb"))
	if err != nil {
		t.Fatal(err)
	}
	var nb struct {
		Cells []struct {
			CellType string   `json:"cell_type"`
			Source   []string `json:"source"`
		} `json:"cells"`
		Metadata struct {
			Kernelspec struct{ Name, Language string } `json:"kernelspec"`
		} `json:"metadata"`
		NBFormat int `json:"nbformat"`
	}
	if err := json.Unmarshal(raw, &nb); err != nil {
		t.Fatalf("quickstart.ipynb: %v", err)
	}
	if nb.NBFormat != 4 || nb.Metadata.Kernelspec.Name != "tracebook" || nb.Metadata.Kernelspec.Language != "sql" {
		t.Errorf("quickstart.ipynb: nbformat %d, kernelspec %+v", nb.NBFormat, nb.Metadata.Kernelspec)
	}
	db, err := duck.Open("", duck.Options{CacheDir: "-", Threads: 2, MemoryLimit: "2GB"})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := cells.NewSession(db, cells.SessionOptions{WorkDir: filepath.Join(root, "notebooks")})
	ran := 0
	for _, c := range nb.Cells {
		if c.CellType != "code" {
			continue
		}
		code := strings.Join(c.Source, "")
		res, err := s.Execute(context.Background(), code, &recorder{})
		if err != nil {
			t.Errorf("cell %q: %v", code, err)
			continue
		}
		if res == nil || text(res) == "" {
			t.Errorf("cell %q has no output", code)
		}
		ran++
	}
	if ran < 4 {
		t.Errorf("ran %d code cells, want at least 4", ran)
	}
}

// TestIntegrationLoadNewest loads with no PATH: the newest trace of the
// working directory.
func TestIntegrationLoadNewest(t *testing.T) {
	src := filepath.Join(testutil.Testdata(t), "hta/triton_example/triton_example.json.gz")
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Skipf("no small trace in testdata: %v", err)
	}
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for name, mtime := range map[string]time.Time{"older.pt.trace.json.gz": old, "newer.pt.trace.json.gz": time.Now()} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	db, err := duck.Open("", duck.Options{CacheDir: "-", Threads: 2, MemoryLimit: "2GB"})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := cells.NewSession(db, cells.SessionOptions{WorkDir: dir, Deterministic: true})
	got := text(run(t, s, "%trace load --name first"))
	for _, want := range []string{"no PATH given: loaded the newest trace in the working directory, " + filepath.Join(dir, "newer.pt.trace.json.gz"), "1 file, rank 0"} {
		if !strings.Contains(got, want) {
			t.Errorf("%%trace load with no PATH = %q, want %q in it", got, want)
		}
	}
	if strings.Contains(got, "MB/s") || strings.Contains(got, "parsed ") {
		t.Errorf("a deterministic session shows timings: %q", got)
	}
	// Loading it again under the same name fails and says why.
	_, err = s.Execute(context.Background(), "%trace load older.pt.trace.json.gz --name first", nil)
	var ee *cells.ExecError
	if !errors.As(err, &ee) || ee.EName != "LoadError" || !strings.Contains(ee.EValue, "already loaded") {
		t.Errorf("loading a name twice: %v", err)
	}
}

// bigTrace writes resnet's trace scaled n times into a temporary folder:
// a load that takes long enough to be seen running.
func bigTrace(t *testing.T, dir string, n int) string {
	t.Helper()
	const rel = "kineto/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
	need(t, dir, rel)
	in, err := os.Open(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "big.pt.trace.json")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := synth.Scale(zr, f, n); err != nil {
		t.Fatal(err)
	}
	return out
}

// A background load returns at once; %trace list answers while it runs and
// shows its progress; the next query waits for it and sees its events; its
// display ends on the loaded line.
func TestIntegrationBackgroundLoad(t *testing.T) {
	s, dir := newSession(t)
	path := bigTrace(t, dir, 3)
	pub := &recorder{}
	start := time.Now()
	res, err := s.Execute(context.Background(), "%trace load --background --name big "+path, pub)
	if err != nil {
		t.Fatalf("background load: %v", err)
	}
	if !strings.Contains(text(res), "in the background") {
		t.Errorf("load cell = %q", text(res))
	}
	returned := time.Since(start)
	listPub := &recorder{}
	start = time.Now()
	list, err := s.Execute(context.Background(), "%trace list", listPub)
	if err != nil {
		t.Fatalf("%%trace list during the load: %v", err)
	}
	listed := time.Since(start)
	t.Logf("load cell returned in %v, %%trace list in %v", returned, listed)
	if listed > time.Second {
		t.Errorf("%%trace list took %v during the load, want under 1 s", listed)
	}
	out := text(list) + strings.Join(listPub.texts, "")
	if !strings.Contains(out, "in the background: load") {
		t.Errorf("%%trace list during the load does not show it: %q", out)
	}
	waitPub := &recorder{}
	n := text(must(t, s, "SELECT count(*) AS n FROM events WHERE trace = 'big'", waitPub))
	if strings.Contains(n, " 0\n") || !strings.Contains(strings.Join(waitPub.texts, ""), "waiting for the background load of") {
		t.Errorf("query after the load = %q, its stream %q", n, waitPub.texts)
	}
	pub.mu.Lock()
	last := pub.texts[len(pub.texts)-1]
	pub.mu.Unlock()
	if !strings.HasPrefix(last, "loaded 1 file: ") {
		t.Errorf("the load's display ends on %q", last)
	}
	if got := text(run(t, s, "%trace list")); !strings.Contains(got, "big") {
		t.Errorf("%%trace list after the load = %q", got)
	}
}

// An interrupt with no cell running cancels a background load, which adds
// nothing; the next cell says so, once.
func TestIntegrationBackgroundLoadInterrupted(t *testing.T) {
	s, dir := newSession(t)
	path := bigTrace(t, dir, 3)
	run(t, s, "%trace load --background --name big "+path)
	time.Sleep(100 * time.Millisecond)
	s.Interrupt()
	pub := &recorder{}
	if got := text(must(t, s, "%trace info", pub)); !strings.HasPrefix(got, "no trace loaded") {
		t.Errorf("%%trace info after a cancelled load = %q", got)
	}
	if got := strings.Join(pub.texts, ""); !strings.Contains(got, "the background load of "+path+" was cancelled: nothing was added") {
		t.Errorf("the next cell's stream = %q", got)
	}
	pub = &recorder{}
	must(t, s, "SELECT 1", pub)
	if len(pub.texts) != 0 {
		t.Errorf("the cancelled load is reported again: %q", pub.texts)
	}
	// Interrupting a cell that waits for a background load cancels the load.
	run(t, s, "%trace load --background --name big "+path)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := s.Execute(ctx, "SELECT count(*) FROM events", nil)
	var ee *cells.ExecError
	if !errors.As(err, &ee) || ee.EName != "KeyboardInterrupt" {
		t.Fatalf("interrupted wait = %v, want KeyboardInterrupt", err)
	}
	if got := text(run(t, s, "%trace list")); !strings.HasPrefix(got, "no trace loaded") {
		t.Errorf("%%trace list after an interrupted wait = %q", got)
	}
}

// must runs code with pub and fails the test on an error.
func must(t *testing.T, s *cells.Session, code string, pub cells.Publisher) *cells.Result {
	t.Helper()
	res, err := s.Execute(context.Background(), code, pub)
	if err != nil {
		t.Fatalf("Execute(%q): %v", code, err)
	}
	return res
}
