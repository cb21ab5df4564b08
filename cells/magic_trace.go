package cells

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/analysis/trace"
)

func runTraceLoad(ctx context.Context, c *call) (*Result, error) {
	opts, pos, err := parseOptions(c.m, c.full, c.args)
	if err != nil {
		return nil, err
	}
	lo := trace.LoadOptions{Name: opts["name"], Rank: -1, NoPython: opts["no-python"] == "true"}
	if v, ok := opts["rank"]; ok {
		if lo.Rank, err = parseRank(v); err != nil {
			return nil, err
		}
		lo.HasRank = true
	}
	if v, ok := opts["window"]; ok {
		if lo.WindowStartNs, lo.WindowEndNs, err = parseWindow("--window", v); err != nil {
			return nil, err
		}
	}
	if v, ok := opts["steps"]; ok {
		if lo.FirstStep, lo.LastStep, err = parseSteps(v); err != nil {
			return nil, err
		}
	}
	paths, picked, err := c.s.resolveLoadPaths(pos)
	if err != nil {
		return nil, err
	}
	if c.s.eng == nil {
		return nil, errors.New("no database in this session")
	}
	what := strings.Join(pos, " ")
	if picked != "" {
		what = filepath.Base(picked)
	}
	p := &loadProgress{s: c.s, pub: c.pub, id: fmt.Sprintf("tracebook-load-%d", c.count), what: what, files: len(paths)}
	p.begin()
	if opts["background"] == "true" {
		eng := c.s.eng
		return c.s.startBackgroundLoad(c, p, func(ctx context.Context) (*trace.LoadResult, error) {
			return eng.Load(ctx, paths, lo, p.update)
		})
	}
	res, err := c.s.eng.Load(ctx, paths, lo, p.update)
	if err != nil {
		p.end(nil, err, ctx.Err() != nil)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if de, ok := duckError(err.Error(), 0); ok {
			return nil, de
		}
		msg := err.Error()
		return nil, &ExecError{EName: "LoadError", EValue: msg, Traceback: strings.Split("LoadError: "+msg, "\n")}
	}
	elapsed := p.end(res, nil, false)
	if c.s.opts.Deterministic {
		return loadSummary(res, picked, -1), nil
	}
	return loadSummary(res, picked, elapsed), nil
}

// resolveLoadPaths turns %trace load's arguments into paths for the
// engine: relative to the working directory, globs expanded, existence
// checked. With no argument it picks the newest trace in the working
// directory and returns it as picked.
func (s *Session) resolveLoadPaths(args []string) (paths []string, picked string, err error) {
	dir := s.opts.WorkDir
	if len(args) == 0 {
		p, err := newestTrace(dir)
		if err != nil {
			return nil, "", err
		}
		return []string{p}, p, nil
	}
	for _, a := range args {
		p := a
		if dir != "" && !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if strings.ContainsAny(a, "*?[") {
			m, err := filepath.Glob(p)
			if err != nil {
				return nil, "", usagef("%%trace load: bad pattern %q: %v", a, err)
			}
			if len(m) == 0 {
				return nil, "", fmt.Errorf("%w: no file matches %q", ErrNoTrace, a)
			}
			paths = append(paths, m...)
			continue
		}
		if _, err := os.Stat(p); err != nil {
			return nil, "", fmt.Errorf("%w: %q does not exist (relative paths start from %s)", ErrNoTrace, a, displayDir(dir))
		}
		paths = append(paths, p)
	}
	return paths, "", nil
}

func displayDir(dir string) string {
	if dir == "" {
		if wd, err := os.Getwd(); err == nil {
			return wd
		}
		return "the working directory"
	}
	return dir
}

// newestTrace returns the newest trace file in dir, preferring
// *-merged_trace.json(.gz), then names holding "trace", then any
// .json(.gz); among equals, the newest, then the first by name.
func newestTrace(dir string) (string, error) {
	d := dir
	if d == "" {
		d = "."
	}
	entries, err := os.ReadDir(d)
	if err != nil {
		return "", fmt.Errorf("looking for a trace in %s: %w", displayDir(dir), err)
	}
	type cand struct {
		name string
		tier int
		mod  time.Time
	}
	var cands []cand
	for _, e := range entries {
		n := e.Name()
		lower := strings.ToLower(n)
		if e.IsDir() || !(strings.HasSuffix(lower, ".json") || strings.HasSuffix(lower, ".json.gz")) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		tier := 2
		switch {
		case strings.HasSuffix(lower, "-merged_trace.json") || strings.HasSuffix(lower, "-merged_trace.json.gz"):
			tier = 0
		case strings.Contains(lower, "trace"):
			tier = 1
		}
		cands = append(cands, cand{n, tier, info.ModTime()})
	}
	if len(cands) == 0 {
		return "", fmt.Errorf("%w in %s: give a PATH (a .json or .json.gz file, a folder of per-rank files, or a glob)", ErrNoTrace, displayDir(dir))
	}
	sort.Slice(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if a.tier != b.tier {
			return a.tier < b.tier
		}
		if !a.mod.Equal(b.mod) {
			return a.mod.After(b.mod)
		}
		return a.name < b.name
	})
	return filepath.Join(dir, cands[0].name), nil
}

// loadProgress shows a load in flight: one Display with a display id
// derived from the execution counter, then UpdateDisplay at most once per
// ProgressInterval, then a final update.
type loadProgress struct {
	s     *Session
	pub   Publisher
	id    string
	what  string // the paths as written, for the first line
	files int

	mu        sync.Mutex
	start     time.Time
	last      time.Time
	fileIndex int
	fileBytes int64 // JSON bytes of the current file so far
	doneBytes int64 // JSON bytes of the files before it
	events    int64
	closed    bool
	shown     string // the line on display
}

func (p *loadProgress) begin() {
	p.start = p.s.opts.Clock()
	p.last = p.start
	p.shown = fmt.Sprintf("loading %s…", p.what)
	p.pub.Display(progressBundle(p.shown, 0), map[string]any{}, p.id)
}

// text is the progress line on display.
func (p *loadProgress) text() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.shown
}

// update is the engine's progress callback; it may be called from any goroutine.
func (p *loadProgress) update(pr trace.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	if pr.FileIndex != p.fileIndex {
		p.doneBytes += p.fileBytes
		p.fileIndex, p.fileBytes = pr.FileIndex, 0
	}
	p.fileBytes = pr.BytesRead
	p.events = pr.Events
	now := p.s.opts.Clock()
	if now.Sub(p.last) < p.s.opts.ProgressInterval {
		return
	}
	p.last = now
	files := max(pr.Files, p.files, 1)
	frac := float64(pr.FileIndex)
	if pr.BytesTotal > 0 {
		frac += min(1, float64(pr.DiskRead)/float64(pr.BytesTotal))
	}
	frac /= float64(files)
	speed := rate(p.doneBytes+p.fileBytes, now.Sub(p.start))
	if p.s.opts.Deterministic {
		speed = ""
	}
	text := fmt.Sprintf("loading file %d of %d (%s): %.0f%% · %s of JSON · %s events%s",
		pr.FileIndex+1, files, filepath.Base(pr.File), 100*frac, megabytes(p.doneBytes+p.fileBytes),
		commas(pr.Events), speed)
	p.shown = text
	p.pub.UpdateDisplay(progressBundle(text, frac), map[string]any{}, p.id)
}

// end shows the final state and stops further updates; it returns the
// time the load took.
func (p *loadProgress) end(res *trace.LoadResult, err error, interrupted bool) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	elapsed := p.s.opts.Clock().Sub(p.start)
	var text string
	frac := 1.0
	switch {
	case interrupted:
		text, frac = "load interrupted: nothing was added", 0
	case err != nil:
		text, frac = "load failed: nothing was added", 0
	case p.s.opts.Deterministic:
		text = fmt.Sprintf("loaded %s: %s events", plural(res.Files, "file"), commas(res.Events))
	case res.Cached:
		text = fmt.Sprintf("loaded %s from the parse cache: %s events", plural(res.Files, "file"), commas(res.Events))
	default:
		text = fmt.Sprintf("loaded %s: %s events, %s of JSON%s", plural(res.Files, "file"), commas(res.Events),
			megabytes(res.JSONBytes), rate(res.JSONBytes, elapsed))
	}
	p.shown = text
	p.pub.UpdateDisplay(progressBundle(text, frac), map[string]any{}, p.id)
	return elapsed
}

func progressBundle(text string, frac float64) map[string]any {
	pct := int(100*frac + 0.5)
	return map[string]any{
		MIMEText: text + "\n",
		MIMEHTML: fmt.Sprintf(`<div><progress value="%d" max="100"></progress> <code>%s</code></div>`+"\n",
			pct, template.HTMLEscapeString(text)),
	}
}

// loadSummary is the value of %trace load. A negative elapsed (a
// deterministic session) leaves out the time and the parse cache.
func loadSummary(res *trace.LoadResult, picked string, elapsed time.Duration) *Result {
	var b strings.Builder
	fmt.Fprintf(&b, "trace %q: %s, %s, %s events\n", res.Trace, plural(res.Files, "file"), formatRanks(res.Ranks), commas(res.Events))
	if picked != "" {
		fmt.Fprintf(&b, "no PATH given: loaded the newest trace in the working directory, %s\n", picked)
	}
	switch {
	case elapsed < 0:
	case res.Cached:
		b.WriteString("served from the parse cache (the files were not parsed again)\n")
	default:
		fmt.Fprintf(&b, "parsed %s of JSON in %.2f s%s\n", megabytes(res.JSONBytes), elapsed.Seconds(), rate(res.JSONBytes, elapsed))
	}
	if res.Session != "" {
		fmt.Fprintf(&b, "profiling session: %s\n", res.Session)
	}
	if len(res.OtherSessions) > 0 {
		fmt.Fprintf(&b, "other sessions in the folder, not loaded: %s (load one by its files' paths)\n", strings.Join(res.OtherSessions, ", "))
	}
	if len(res.Gaps) > 0 {
		b.WriteString("evidence gaps:\n")
		for _, g := range res.Gaps {
			fmt.Fprintf(&b, "  - %s\n", g)
		}
	}
	fmt.Fprintf(&b, "next: %%trace info %s · %%evidence overview --trace %s\n", quoteArg(res.Trace), quoteArg(res.Trace))
	return textResult(b.String())
}

// quoteArg quotes an argument for a magic line when it needs it.
func quoteArg(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t'\"\\#") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// formatRanks is "rank 3", "ranks 0–7" or "ranks 0, 2, 4–6".
func formatRanks(ranks []int) string {
	switch len(ranks) {
	case 0:
		return "no rank"
	case 1:
		return "rank " + strconv.Itoa(ranks[0])
	}
	return "ranks " + table.Runs(ranks, 0)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// commas writes an integer with thousands separators: 1,234,567.
func commas(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// megabytes is a size in MB, or in kB under 1 MB.
func megabytes(n int64) string {
	if n < 1e6 {
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

// rate is " (12.3 MB/s)", or "" when no time has passed.
func rate(bytes int64, d time.Duration) string {
	if d <= 0 || bytes <= 0 {
		return ""
	}
	return fmt.Sprintf(" (%.1f MB/s)", float64(bytes)/1e6/d.Seconds())
}

// traceInfoSQL lists the traces table, one row per (trace, file, rank),
// with the capabilities and the evidence gaps spelled out.
const traceInfoSQL = `SELECT trace, file_id, path, rank, rank_source, session, producer, platform,
  gpu_model AS gpu,
  concat_ws(', ',
    CASE WHEN has_steps THEN 'steps' END,
    CASE WHEN has_sync_events THEN 'sync events' END,
    CASE WHEN has_python_stacks THEN 'python stacks' END,
    CASE WHEN has_graphs THEN 'cuda graphs' END) AS capabilities,
  events,
  slice,
  round((last_end_ns - first_ts_ns) / 1e6, 3) AS span_ms,
  concat_ws('; ',
    CASE WHEN rank_source = 'default' THEN 'rank defaulted to 0' END,
    CASE WHEN NOT has_steps THEN 'no step annotations' END,
    CASE WHEN NOT has_sync_events THEN 'no cuda_sync events' END,
    CASE WHEN NOT has_python_stacks THEN 'no python stacks' END,
    CASE WHEN gpu_model IS NULL THEN 'GPU model unknown' END,
    CASE WHEN has_graphs THEN 'CUDA graphs hide per-kernel attribution' END) AS gaps
FROM traces
WHERE ? = '' OR trace = ?
ORDER BY trace, file_id, rank`

// traceListSQL lists the loaded traces, one row each.
const traceListSQL = `SELECT trace,
  count(DISTINCT file_id) AS files,
  count(DISTINCT rank) AS ranks,
  sum(events) AS events,
  string_agg(DISTINCT producer, ', ' ORDER BY producer) AS producer,
  string_agg(DISTINCT platform, ', ' ORDER BY platform) AS platform,
  string_agg(DISTINCT gpu_model, ', ' ORDER BY gpu_model) AS gpu,
  round((max(last_end_ns) - min(first_ts_ns)) / 1e6, 3) AS span_ms
FROM traces
GROUP BY trace
ORDER BY trace`

// traceRowsMax is the most rows %trace list and %trace info show.
const traceRowsMax = 1000

func runTraceList(ctx context.Context, c *call) (*Result, error) {
	if len(c.args) > 0 {
		return nil, usagef("%%trace list takes no argument, got %q", c.args[0])
	}
	if c.s.eng == nil {
		return nil, errors.New("no database in this session")
	}
	t, err := c.s.eng.Query(ctx, traceListSQL, traceRowsMax)
	if err != nil {
		return nil, fmt.Errorf("listing traces: %w", err)
	}
	note := c.s.backgroundNote()
	if len(t.Rows) == 0 {
		return textResult("no trace loaded (%trace load PATH loads one)\n" + note), nil
	}
	if note != "" {
		c.pub.Stream("stdout", note)
	}
	t.Name = "traces"
	return TableResult(t), nil
}

func runTraceInfo(ctx context.Context, c *call) (*Result, error) {
	if len(c.args) > 1 {
		return nil, usagef("%%trace info takes at most one trace name, got %d arguments", len(c.args))
	}
	if c.s.eng == nil {
		return nil, errors.New("no database in this session")
	}
	name := ""
	if len(c.args) == 1 {
		name = c.args[0]
	}
	t, err := c.s.eng.Query(ctx, traceInfoSQL, traceRowsMax, name, name)
	if err != nil {
		return nil, fmt.Errorf("describing traces: %w", err)
	}
	if len(t.Rows) == 0 {
		if name != "" {
			return nil, fmt.Errorf("%w: no trace named %q is loaded (%%trace list shows them)", ErrNoTrace, name)
		}
		return textResult("no trace loaded (%trace load PATH loads one)\n"), nil
	}
	t.Name = "traces"
	return TableResult(t), nil
}

func runTraceDrop(ctx context.Context, c *call) (*Result, error) {
	if len(c.args) != 1 {
		return nil, usagef("%%trace drop takes one trace name, got %d arguments", len(c.args))
	}
	if c.s.eng == nil {
		return nil, errors.New("no database in this session")
	}
	if err := c.s.eng.Drop(ctx, c.args[0]); err != nil {
		return nil, err // the engine's error names the trace
	}
	return textResult(fmt.Sprintf("dropped trace %q\n", c.args[0])), nil
}
