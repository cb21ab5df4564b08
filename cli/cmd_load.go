package cli

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/internal/duck"
)

// loadFlags are the load options (loadFlagsOf): the parse cache and -q,
// which every command that loads traces takes, and for load and query
// where the database is and how the traces are loaded.
type loadFlags struct {
	db    string
	cache string
	opts  trace.LoadOptions
	quiet bool
}

// parseLoadArgs is parseCommandArgs for the command cmd that loads
// traces: its options sets and cacheOptions, whose values (and those of
// traceLoadOptions when sets has them) it reads into loadFlags.
func parseLoadArgs(cmd string, args []string, sets ...options) (parsedArgs, loadFlags, error) {
	p, err := parseCommandArgs(cmd, args, append([]options{cacheOptions}, sets...)...)
	if err != nil {
		return p, loadFlags{}, err
	}
	f, err := loadFlagsOf(p)
	return p, f, err
}

// loadFlagsOf reads the load options of p (cacheOptions, and
// traceLoadOptions for load and query) into loadFlags, checking their
// values.
func loadFlagsOf(p parsedArgs) (loadFlags, error) {
	f := loadFlags{db: p.values["db"], cache: p.values["cache"], quiet: p.flags["quiet"]}
	f.opts.Name = p.values["name"]
	f.opts.NoPython = p.flags["no-python"]
	if v, ok := p.values["rank"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return f, fmt.Errorf("--rank %q: want a rank number", v)
		}
		f.opts.Rank, f.opts.HasRank = n, true
	}
	if v, ok := p.values["window"]; ok {
		lo, hi, err := parseRange(v, func(s string) (int64, error) {
			ms, err := strconv.ParseFloat(strings.TrimSuffix(s, "ms"), 64)
			return int64(ms * 1e6), err
		})
		if err != nil || hi <= lo {
			return f, fmt.Errorf("--window %q: want START..END in milliseconds from the trace's start, END > START", v)
		}
		f.opts.WindowStartNs, f.opts.WindowEndNs = lo, hi
	}
	if v, ok := p.values["steps"]; ok {
		lo, hi, err := parseRange(v, func(s string) (int64, error) { return strconv.ParseInt(s, 10, 32) })
		if err != nil || hi < lo {
			return f, fmt.Errorf("--steps %q: want A..B, step numbers with B >= A", v)
		}
		f.opts.FirstStep, f.opts.LastStep = int(lo), int(hi)
	}
	return f, nil
}

// parseRange parses "A..B" (a single A means A..A).
func parseRange(s string, num func(string) (int64, error)) (int64, int64, error) {
	a, b, ok := strings.Cut(s, "..")
	if !ok {
		b = a
	}
	lo, err := num(strings.TrimSpace(a))
	if err != nil {
		return 0, 0, err
	}
	hi, err := num(strings.TrimSpace(b))
	return lo, hi, err
}

func runLoad(args []string, stdout, stderr io.Writer) error {
	p, f, err := parseLoadArgs("load", args, traceLoadOptions, options{values: []string{"parquet"}})
	if err != nil {
		return err
	}
	paths, err := p.operands("load", p.rest)
	if err != nil {
		return err
	}
	dataset := p.values["parquet"]
	if f.db == "" && dataset == "" {
		return fmt.Errorf("--db FILE.duckdb or --parquet DIR is required (usage: tracebook %s)", commands["load"].usage)
	}
	if len(paths) == 0 {
		return fmt.Errorf("no trace given (usage: tracebook %s)", commands["load"].usage)
	}
	ctx, db, err := openTraces(context.Background(), f, paths, forSQL, stderr)
	if err != nil {
		return err
	}
	defer db.Close()
	res, err := db.load(ctx, paths, f.opts)
	if err != nil {
		return err
	}
	dest := f.db
	if dataset != "" {
		done := db.stage("writing the Parquet dataset " + dataset)
		err := db.ExportDataset(ctx, dataset, res.Trace)
		done()
		if err != nil {
			return err
		}
		dest = strings.TrimPrefix(dest+", "+dataset, ", ")
	}
	fmt.Fprintf(stdout, "%s: %d events, %d file(s), ranks %s%s -> %s\n", res.Trace, res.Events, res.Files, table.Runs(res.Ranks, 0), cachedNote(res), dest)
	for _, g := range res.Gaps {
		fmt.Fprintf(stderr, "note: %s\n", g)
	}
	if len(res.OtherSessions) > 0 {
		fmt.Fprintf(stderr, "note: loaded session %s; the folder also holds %s (load them by path)\n", res.Session, strings.Join(res.OtherSessions, ", "))
	}
	return nil
}

func cachedNote(res *trace.LoadResult) string {
	if res.Cached {
		return " (from the parse cache)"
	}
	return ""
}

// traceDB is the database a command loads its traces into (openTraces).
type traceDB struct {
	*duck.DB
	quiet  bool
	stderr io.Writer
	stop   context.CancelFunc
}

// openTraces opens the database of a command that loads traces (paths,
// which may be none with --db): f.db; else, when the traces hold more
// than spillJSONBytes of JSON, a temporary database file that Close
// removes; else one in memory. It has f's parse cache (--cache DIR; - for
// none; the user cache directory by default). A database file runs with
// fileMemoryLimit: DuckDB keeps the events compressed in the file and
// spills what a query needs past the limit, so the memory a large trace
// needs no longer grows with its size (an in-memory database compresses
// the events too, but holds them all, and whatever queries hold). The
// context it returns is ctx cancelled by Ctrl-C until Close, so that a
// long load, or the work after it, stops instead of killing the process.
// use says what runs on it: the user's SQL (query, load) or tracebook's
// analysis; an analysis of traces held in memory runs on one DuckDB
// thread (analysisThreads). Every command that loads traces goes through
// here and traceDB.load.
func openTraces(ctx context.Context, f loadFlags, paths []string, use dbUse, stderr io.Writer) (context.Context, *traceDB, error) {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	opts := duck.Options{CacheDir: f.cache, Scratch: f.db == "" && jsonBytes(paths) > spillJSONBytes}
	if f.db != "" || opts.Scratch {
		opts.MemoryLimit = fileMemoryLimit
		debug.SetMemoryLimit(goMemoryLimit)
	} else if use == forAnalysis {
		opts.Threads = analysisThreads
	}
	db, err := duck.Open(f.db, opts)
	if err != nil {
		stop()
		return nil, nil, err
	}
	return ctx, &traceDB{DB: db, quiet: f.quiet, stderr: stderr, stop: stop}, nil
}

// dbUse says what a command runs on the database openTraces opens.
type dbUse int

const (
	forSQL      dbUse = iota // the user's SQL: query, load
	forAnalysis              // tracebook's analysis: report, crossview, evidence, diff
)

// analysisThreads is DuckDB's thread count for an analysis of traces held
// in memory. Its statements already run one per core, each on one thread
// (duck.DB.OneThread, around the load and the report's presets), and a
// database that starts at one thread never changes its count: each change
// costs DuckDB a relaunch of its threads at the next statement's end, in
// which it purges its allocator (jemalloc's arenas, glibc's malloc_trim),
// so that the statements after it page their memory in afresh instead of
// reusing what the load freed (a report changed it four times). Measured
// against the thread count of the machine (2 here), alternating pairs,
// medians: the 48 MB vLLM report 0.88× the wall and 0.86× the CPU at 1.03×
// the peak (7 pairs; 0.79× the page faults); dlrm_8rank 0.90× and 0.88× at
// 1.04× (7 pairs); mtia 0.91× and 0.91× at 1.04×, xdit 0.92× and 0.88× at
// 1.07× (5 pairs each); `crossview` on the vLLM trace 0.90× and 0.86×,
// `evidence all` 1.01× and 0.81× at 0.94× (5 pairs each); reports
// byte-identical. A database file (a large trace) keeps every thread: its
// large statements gain from them (5 copies of the vLLM trace on one
// thread: 0.74-0.85× the CPU, the wall within 1.1× either way).
const analysisThreads = 1

// spillJSONBytes is the size of JSON past which a command without --db
// loads its traces into a temporary database file instead of memory.
// Below it memory is faster and small; above it the file keeps the peak
// memory flat (measured on 5 copies of the 48 MB vLLM trace, 194 MB of
// JSON: the report's peak RSS 1.16 GB in memory, 0.71 GB with the file).
var spillJSONBytes int64 = 128 << 20 // a variable for the tests

// fileMemoryLimit is DuckDB's memory_limit on a database file: its buffer
// pool and what queries hold before they spill to its temporary
// directory.
const fileMemoryLimit = "512MB"

// goMemoryLimit is the Go heap's soft limit while a command analyses
// traces in a database file (--db, or past spillJSONBytes): the garbage
// collector then runs before the heap doubles its live size (its
// default), which for the cross-view of a large trace is hundreds of MB.
// The live heap may pass it; the collector then runs more often, never
// stops the work.
const goMemoryLimit = 512 << 20

// jsonBytes estimates the JSON the traces at paths hold: a file's size,
// a .gz file's uncompressed size (its trailer gives it modulo 4 GiB;
// a smaller figure than the compressed one is taken as wrapped), a
// Parquet dataset's files times parquetJSONRatio, a directory's files
// summed, a glob's matches summed. A path that cannot
// be read counts nothing: the load reports it.
func jsonBytes(paths []string) int64 {
	var n int64
	var add func(p string)
	add = func(p string) {
		st, err := os.Stat(p)
		if err != nil {
			if m, gerr := filepath.Glob(p); gerr == nil {
				for _, q := range m {
					add(q)
				}
			}
			return
		}
		if st.IsDir() {
			_ = filepath.WalkDir(p, func(q string, e os.DirEntry, err error) error {
				if err == nil && !e.IsDir() && (strings.HasSuffix(q, ".json") || strings.HasSuffix(q, ".gz") || strings.HasSuffix(q, ".parquet")) {
					add(q)
				}
				return nil
			})
			return
		}
		n += uncompressedSize(p, st.Size())
	}
	for _, p := range paths {
		add(p)
	}
	return n
}

// uncompressedSize is size for a plain file; for a .gz file the size its
// gzip trailer records, or 10× size when that is smaller than size (the
// trailer holds it modulo 4 GiB); for a Parquet file of a dataset,
// parquetJSONRatio× its size.
func uncompressedSize(path string, size int64) int64 {
	if strings.HasSuffix(path, ".parquet") {
		return parquetJSONRatio * size
	}
	if !strings.HasSuffix(path, ".gz") || size < 4 {
		return size
	}
	f, err := os.Open(path)
	if err != nil {
		return size
	}
	defer f.Close()
	var b [4]byte
	if _, err := f.ReadAt(b[:], size-4); err != nil {
		return size
	}
	isize := int64(binary.LittleEndian.Uint32(b[:]))
	if isize < size {
		return 10 * size
	}
	return isize
}

// parquetJSONRatio is about how much larger a trace's JSON is than its
// events in a dataset's zstd Parquet (measured: 48 MB of vLLM JSON, 2.9 MB
// of Parquet).
const parquetJSONRatio = 16

// load loads paths with opts, printing a progress line on stderr that
// updates in place once the load has taken more than a second (none with
// -q).
func (d *traceDB) load(ctx context.Context, paths []string, opts trace.LoadOptions) (*trace.LoadResult, error) {
	if len(paths) == 0 {
		return &trace.LoadResult{}, nil // --db FILE alone: what it holds
	}
	p := &progressLine{w: d.stderr, start: time.Now(), quiet: d.quiet}
	res, err := d.Load(ctx, paths, opts, p.update)
	p.finish()
	return res, err
}

// stage shows what the command does after its load (what, such as
// "analysing: evidence and cross-views") with the seconds it has taken, on
// one line of stderr that updates in place once it has run longer than
// progressAfter (none with -q); done clears the line. A large trace's
// analysis runs for tens of seconds after its load.
func (d *traceDB) stage(what string) (done func()) {
	if d.quiet {
		return func() {}
	}
	start := time.Now()
	stop := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		shown, width := "", 0
		for {
			select {
			case <-stop:
				if width > 0 {
					fmt.Fprintf(d.stderr, "\r%s\r", strings.Repeat(" ", width))
				}
				return
			case now := <-tick.C:
				if now.Sub(start) < progressAfter {
					continue
				}
				line := fmt.Sprintf("%s (%.0f s)", what, now.Sub(start).Seconds())
				if line == shown {
					continue
				}
				fmt.Fprintf(d.stderr, "\r%s%s", line, strings.Repeat(" ", max(0, width-len(line))))
				shown, width = line, len(line)
			}
		}
	}()
	return func() {
		close(stop)
		<-finished
	}
}

// Close closes the database (and removes a scratch one) and stops
// listening for Ctrl-C.
func (d *traceDB) Close() error {
	defer d.stop()
	return d.DB.Close()
}

// progressAfter is how long a load runs before its progress line shows (a
// variable for the tests, which load small traces).
var progressAfter = time.Second

// progressLine prints `file  MB read  MB/s  events` on one updating line.
type progressLine struct {
	w       io.Writer
	start   time.Time
	quiet   bool
	mu      sync.Mutex
	last    time.Time
	shown   bool
	width   int
	jsonMB  float64 // JSON bytes of the files already finished
	current trace.Progress
}

func (p *progressLine) update(pr trace.Progress) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if pr.FileIndex != p.current.FileIndex && p.current.File != "" {
		p.jsonMB += float64(p.current.BytesRead) / 1e6
	}
	p.current = pr
	if now.Sub(p.start) < progressAfter || now.Sub(p.last) < 200*time.Millisecond {
		return
	}
	p.last = now
	total := p.jsonMB + float64(pr.BytesRead)/1e6
	rate := total / now.Sub(p.start).Seconds()
	pct := ""
	if pr.BytesTotal > 0 {
		pct = fmt.Sprintf(" (%d%% of the file)", min(100, pr.DiskRead*100/pr.BytesTotal))
	}
	line := fmt.Sprintf("%s [%d/%d]  %.1f MB read%s  %.0f MB/s  %d events", filepath.Base(pr.File), pr.FileIndex+1, pr.Files, float64(pr.BytesRead)/1e6, pct, rate, pr.Events)
	pad := ""
	if n := p.width - len(line); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	p.width = len(line)
	fmt.Fprintf(p.w, "\r%s%s", line, pad)
	p.shown = true
}

func (p *progressLine) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.width))
	}
}
