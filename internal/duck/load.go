//go:build cgo

package duck

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/analysis/trace"
)

// Load loads the traces at paths (files, a directory holding the per-rank
// files of one job, or globs) as one trace named opts.Name (derived from the
// paths when empty). It returns what was added.
//
// # Notes
//
//   - A load is atomic: it runs in one transaction, and a file that fails to
//     parse (the error names the file and the byte offset) leaves the
//     database exactly as it was.
//   - Events stream from the parser into DuckDB while the file is read: the
//     parser runs on its own goroutine, DuckDB pulls batches of 2048 events
//     through the tracebook_scan table function. The files of a job that all
//     stream from the parser (none in the parse cache, no slice) are stored
//     by one statement that reads their streams in file order, each file
//     parsed while DuckDB stores the one before (loadStreamed).
//   - A merged file holding several ranks gets its rank per pid from the
//     process names ([TP00-DP00-PP00-EP00]); those are known only once the
//     file is read, so its events are stored with the file's rank and fixed
//     with one UPDATE ... FROM a pid map inside the transaction.
//   - opts.WindowStartNs/WindowEndNs and opts.FirstStep/LastStep load a slice:
//     the files are loaded into a temporary staging table, then only events
//     that overlap the window (relative to the first timestamp of the whole
//     trace), or the steps' time ranges (per rank: the ProfilerStep#N
//     annotations on the host and the GPU; failing those, vLLM's execute_*
//     step annotations numbered from 0 in time order), are copied to
//     tb_events (the table under the events view).
//     Process and thread names are kept whole.
//   - Parsed files are cached by their SHA-256 (see Options.CacheDir): loading
//     the same file again reads the cache instead of parsing
//     (LoadResult.Cached). The cache holds every event of the file; the
//     slice and the rank are applied when it is read.
//   - Cancelling ctx stops the parser at its next batch and interrupts the
//     running statement; the transaction is rolled back.
//   - progress (may be nil) is called from the parser's goroutine, a few
//     times a second; Progress.Events counts over all files of the load.
//   - While a file streams in (or is read from the cache), DuckDB runs with
//     one thread: more cannot help a single stream, and the waiting thread
//     would spin on the core the parser needs. Queries that run during a
//     load run single-threaded until it ends.
func (d *DB) Load(ctx context.Context, paths []string, opts trace.LoadOptions, progress func(trace.Progress)) (*trace.LoadResult, error) {
	res, err := d.load(ctx, paths, opts, progress)
	return res, d.diskFull(err)
}

// load is Load.
func (d *DB) load(ctx context.Context, paths []string, opts trace.LoadOptions, progress func(trace.Progress)) (*trace.LoadResult, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("load: %w", trace.ErrNoTraceFiles)
	}
	if len(paths) == 1 && IsDataset(paths[0]) {
		return d.loadDataset(ctx, paths[0], opts)
	}
	jobs, err := discover(paths)
	if err != nil {
		return nil, err
	}
	if len(jobs) > 1 {
		names := make([]string, len(jobs))
		for i, j := range jobs {
			names[i] = j.Name
		}
		return nil, fmt.Errorf("load: the paths hold %d jobs (%s): load them one at a time", len(jobs), strings.Join(names, ", "))
	}
	j := jobs[0]
	if opts.HasRank && len(j.Files) > 1 {
		return nil, fmt.Errorf("load: a rank override applies to a single file; %s holds %d files", j.Name, len(j.Files))
	}
	name := opts.Name
	if name == "" {
		name = j.Name
	}

	d.mu.Lock()
	defer d.mu.Unlock()
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := d.ensureScan(conn); err != nil {
		return nil, err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()

	var taken int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM traces WHERE trace = ?`, name).Scan(&taken); err != nil {
		return nil, err
	}
	if taken > 0 {
		return nil, fmt.Errorf("load %q: %w (drop it first, or give another name)", name, ErrDuplicateTrace)
	}

	strs, err := readDict(ctx, tx)
	if err != nil {
		return nil, err
	}
	l := &loader{d: d, ctx: ctx, tx: tx, name: name, opts: opts, progress: progress, job: j, target: "tb_events", strs: strs, traceID: strs.id(name)}
	sliced := opts.WindowStartNs != 0 || opts.WindowEndNs != 0 || opts.FirstStep != 0 || opts.LastStep != 0
	if sliced {
		l.target = "tb_stage"
		if _, err := tx.ExecContext(ctx, `CREATE OR REPLACE TEMP TABLE tb_stage AS SELECT * FROM tb_events LIMIT 0`); err != nil {
			return nil, err
		}
	}
	res := &trace.LoadResult{Trace: name, Files: len(j.Files), Session: j.Session, OtherSessions: j.OtherSessions, Cached: len(j.Files) > 0}
	hits := 0
	l.probes = make([]cacheProbe, len(j.Files))
	for i, ref := range j.Files {
		p := &l.probes[i]
		p.key, p.hit = d.cacheLookup(ref.Path, opts.NoPython)
		if p.hit != nil {
			hits++
		}
	}
	keep := func(f *loadedFile) {
		l.files = append(l.files, f)
		res.JSONBytes += f.jsonBytes
		res.Cached = res.Cached && f.cached
	}
	files := func() error {
		for i, ref := range j.Files {
			f, err := l.loadFile(i, ref)
			if err != nil {
				return err
			}
			keep(f)
		}
		return nil
	}
	// Files that all stream from the parser share one setting of DuckDB's
	// threads and memory limit, not one each (dlrm_8rank, 8 files: the
	// load in 0.89× the wall and the CPU, 15 alternating pairs). A file
	// read from the parse cache runs on every thread, and a slice's cache
	// entries are stored one file at a time: those keep their own.
	if len(j.Files) > 1 && hits == 0 && !sliced {
		l.streamSet = true
		err = d.loadMemory(ctx, func() error {
			return d.OneThread(ctx, func() error {
				fs, err := l.loadStreamed()
				for _, f := range fs {
					keep(f)
				}
				return err
			})
		})
	} else {
		err = files()
	}
	if err != nil {
		return nil, err
	}
	// The new strings, once for the whole load: what reads the events view
	// from here on (a slice, the counts of a slice's ranks) finds them.
	if err := l.strs.flush(ctx, tx); err != nil {
		return nil, err
	}
	if len(l.files) > 1 {
		resolved := make([]fileRef, 0, len(l.files))
		for _, f := range l.files {
			if f.pidRank == nil {
				r := f.ref
				r.Rank = f.rank
				resolved = append(resolved, r)
			}
		}
		if err := trace.CheckRanks(j.Name, resolved); err != nil {
			return nil, err
		}
	}
	if sliced {
		if err := l.slice(); err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, `DROP TABLE tb_stage`); err != nil {
			return nil, err
		}
	}
	if err := l.insertMetadata(res); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	if d.path == "" {
		// Compresses the new events (memoryCatalog). They are committed:
		// a checkpoint that fails (cancelled, out of memory) leaves them
		// uncompressed, not lost, and the load stands.
		d.db.ExecContext(ctx, `CHECKPOINT `+memoryCatalog)
	}
	if len(l.pendingCache) > 0 {
		d.cacheWrites.Add(1)
		go d.writeCache(name, l.pendingCache)
	}
	return res, nil
}

// ensureScan registers the scan function once per database.
func (d *DB) ensureScan(conn *sql.Conn) error {
	d.scanOnce.Do(func() { d.scanErr = registerScan(conn) })
	return d.scanErr
}

type loader struct {
	d        *DB
	ctx      context.Context
	tx       *sql.Tx
	name     string
	opts     trace.LoadOptions
	progress func(trace.Progress)
	job      job
	target   string // tb_events, or tb_stage for a sliced load
	strs     *dict  // the strings of tb_strings and those of this load
	traceID  int32  // the id of name
	files    []*loadedFile
	events   int64 // events parsed so far, for progress

	pendingCache []cacheWrite // cache entries to write once committed
	probes       []cacheProbe // each file's parse cache key and entry
	// streamSet: DuckDB's threads and memory limit are set for the
	// parser's stream around every file at once (load), not per file.
	streamSet bool
}

// cacheProbe is what the parse cache holds for one file of a load: its
// key ("" without a cache) and its entry (nil when none).
type cacheProbe struct {
	key string
	hit *cacheEntry
}

// loadedFile is what the loader keeps of one file.
type loadedFile struct {
	index      int
	ref        fileRef
	info       *trace.FileInfo
	rank       int
	rankSource string
	pidRank    map[string]trace.Coords // merged files: pid -> coordinates
	pids       map[string]*pidStat     // events per pid, as parsed
	cached     bool
	jsonBytes  int64
}

func (l *loader) loadFile(i int, ref fileRef) (*loadedFile, error) {
	f := &loadedFile{index: i, ref: ref}
	provisional := l.provisionalRank(ref)

	key, cacheHit := l.probes[i].key, l.probes[i].hit
	if cacheHit != nil {
		f.info, f.pids, f.cached = cacheHit.info, cacheHit.pids, true
		where := ""
		if l.opts.NoPython && !cacheHit.noPython && f.info.HasPython {
			// The pid counts include the python events: count again.
			where = ` WHERE kind <> 'python'`
			f.pids = nil
		}
		m := cacheHit.remap(l.strs)
		// On every thread, not OneThread: DuckDB reads the Parquet
		// row groups in parallel and keeps their order (the events' rowids
		// are those of one thread). The ×5 vLLM trace loads from its cache
		// in 0.62× the time at 0.82× the peak, the 48 MB report takes 0.93×.
		if _, err := l.tx.ExecContext(l.ctx, cacheInsert(l.target, cacheHit.parquet, where), l.traceID, i, provisional, m); err != nil {
			return nil, fmt.Errorf("trace %s: reading the parse cache %s: %w", ref.Path, cacheHit.parquet, err)
		}
		if l.progress != nil {
			l.events += f.info.Events
			l.progress(trace.Progress{File: ref.Path, FileIndex: i, Files: len(l.job.Files), BytesRead: f.info.JSONBytes, BytesTotal: f.info.FileBytes, DiskRead: f.info.FileBytes, Events: l.events, Done: true})
		}
	} else {
		fs := l.startFile(i, ref, provisional, nil)
		insert := func() error {
			_, err := l.tx.ExecContext(l.ctx, fmt.Sprintf(`INSERT INTO %s (%s) SELECT ?, ?, ?, %s FROM %s(%d)`,
				l.target, leanColumns, scanSelect, scanFunction, fs.s.id), l.traceID, i, provisional)
			return err
		}
		var qerr error
		if l.streamSet {
			qerr = insert()
		} else {
			qerr = l.d.loadMemory(l.ctx, func() error { return l.d.OneThread(l.ctx, insert) })
		}
		perr := fs.s.close() // after it, the parser's goroutine has handed out its last id
		if err := l.endFile(f, fs, perr, qerr, key); err != nil {
			return nil, err
		}
	}
	if err := l.fileRank(f, provisional); err != nil {
		return nil, err
	}
	return f, nil
}

// fileStream is one file on its way from the parser into DuckDB.
type fileStream struct {
	s    *stream
	info *trace.FileInfo // the parser's, once s is done
}

// startFile starts parsing file i of the job (ref) into a stream of its
// events, stored with rank provisional until its own is known (fileRank),
// once after is closed (nil: at once). The events counted for progress
// include those of the files parsed before it.
func (l *loader) startFile(i int, ref fileRef, provisional int, after <-chan struct{}) *fileStream {
	fs := &fileStream{}
	fs.s = startStream(l.ctx, l.strs, streamBatches(l.d.path != ""), int32(i), int32(provisional), after, func(emit func(*trace.Event) error) error {
		base := l.events
		info, err := parseFile(ref.Path, l.opts, emit, func(p trace.Progress) {
			if l.progress != nil {
				p.FileIndex, p.Files = i, len(l.job.Files)
				p.Events += base
				l.progress(p)
			}
		})
		fs.info = info
		if err == nil && info != nil {
			l.events += info.Events - info.Skipped
		}
		return err
	})
	return fs
}

// endFile keeps in f what the parser found in a file, once its stream is
// closed with the parser's error perr and the statement that read it has
// returned qerr; key is its parse cache key ("": none). The parser's error
// comes first: it names the file and the offset.
func (l *loader) endFile(f *loadedFile, fs *fileStream, perr, qerr error, key string) error {
	ref := f.ref
	switch {
	case perr != nil:
		return perr
	case qerr != nil:
		if cerr := l.ctx.Err(); cerr != nil {
			return fmt.Errorf("trace %s: %w", ref.Path, cerr)
		}
		return fmt.Errorf("trace %s: storing events: %w", ref.Path, qerr)
	case fs.info == nil:
		return fmt.Errorf("trace %s: the importer returned no file info", ref.Path)
	}
	f.info, f.pids = fs.info, fs.s.pids
	f.jsonBytes = fs.info.JSONBytes
	if key != "" {
		// A cache that cannot be written costs the next load a parse,
		// nothing else. A whole load's entries are written after its
		// commit, off the load's time; a slice's now, from the staging
		// table that holds the whole file.
		w := cacheWrite{key: key, noPython: l.opts.NoPython, fileID: f.index, info: fs.info, pids: fs.s.pids}
		if l.target == "tb_events" {
			l.pendingCache = append(l.pendingCache, w)
		} else {
			_ = l.d.OneThread(l.ctx, func() error {
				if err := l.strs.flush(l.ctx, l.tx); err != nil {
					return err
				}
				return l.d.cacheStore(l.ctx, l.tx, l.target, l.name, w)
			})
		}
	}
	return nil
}

// loadStreamed stores every file of the job, none of them in the parse
// cache, with one statement: the files are parsed one after the other
// (so that their strings take the ids one at a time would give them), and
// tracebook_scan reads their streams in file order. A statement costs
// DuckDB about 10 ms to plan and start whatever it stores, which a job of
// many small rank files paid once per file (dlrm_8rank: 8 files of 3,300
// events). In memory, each file is parsed while DuckDB stores the one
// before (dlrm_8rank's load and query in 0.90x the wall of one file at a
// time, for 5 MB more); into a database file, whose streams queue eight
// times the batches (streamBatches), a file's parse starts once DuckDB
// has read the one before: overlapped, four 48 MB files peaked 1.26x the
// memory in the same time. It returns the files stored, in order, with
// the first error.
func (l *loader) loadStreamed() ([]*loadedFile, error) {
	files := make([]*loadedFile, len(l.job.Files))
	streams := make([]*fileStream, len(l.job.Files))
	ss := make([]*stream, len(l.job.Files))
	var after <-chan struct{}
	for i, ref := range l.job.Files {
		files[i] = &loadedFile{index: i, ref: ref}
		streams[i] = l.startFile(i, ref, l.provisionalRank(ref), after)
		ss[i], after = streams[i].s, streams[i].s.done
		if l.d.path != "" {
			after = streams[i].s.consumed
		}
	}
	id, drop := chainStreams(ss)
	// Each row's file and provisional rank are its stream's (a single
	// file's INSERT gives them as parameters: DuckDB then reads neither
	// column of the scan).
	_, qerr := l.tx.ExecContext(l.ctx, fmt.Sprintf(`INSERT INTO %s (%s) SELECT ?, scan_file, scan_rank, %s FROM %s(%d)`,
		l.target, leanColumns, scanSelect, scanFunction, id), l.traceID)
	drop()
	// Every stream is closed, in order, whatever failed; a parser's error
	// (the file that failed, and where) comes before the statement's.
	var perr error
	for _, fs := range streams {
		if err := fs.s.close(); perr == nil {
			perr = err
		}
	}
	switch {
	case perr != nil:
		return nil, perr
	case qerr != nil:
		if cerr := l.ctx.Err(); cerr != nil {
			return nil, fmt.Errorf("trace %s: %w", l.job.Name, cerr)
		}
		return nil, fmt.Errorf("trace %s (%d files): storing events: %w", l.job.Name, len(files), qerr)
	}
	for i, fs := range streams {
		if err := l.endFile(files[i], fs, nil, nil, l.probes[i].key); err != nil {
			return nil, err
		}
	}
	for _, f := range files {
		if err := l.fileRank(f, l.provisionalRank(f.ref)); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// provisionalRank is the rank a file's events are stored with before the
// file is read: the override, else the rank its path gives (0 when none).
func (l *loader) provisionalRank(ref fileRef) int {
	if l.opts.HasRank {
		return l.opts.Rank
	}
	return max(ref.Rank, 0)
}

// fileRank resolves the rank of a stored file, whose events were stored
// with rank provisional, and stores it with them: one rank for the file,
// or each pid's where the file merges several ranks.
func (l *loader) fileRank(f *loadedFile, provisional int) error {
	ref := f.ref
	i := f.index
	f.rank, f.rankSource = resolveRank(ref, f.info)
	if l.opts.HasRank {
		f.rank, f.rankSource = l.opts.Rank, "override"
	}
	if f.rank != provisional {
		if _, err := l.tx.ExecContext(l.ctx, fmt.Sprintf(`UPDATE %s SET rank = ? WHERE trace_id = ? AND file_id = ?`, l.target), f.rank, l.traceID, i); err != nil {
			return err
		}
	}
	if len(f.info.PidCoords) > 0 && !l.opts.HasRank {
		f.pidRank = f.info.PidCoords
		var vals []string
		var args []any
		for pid, c := range f.info.PidCoords {
			if id, ok := l.strs.ids[pid]; ok { // else no event has the pid
				vals = append(vals, "(?, ?)")
				args = append(args, id, c.Rank)
			}
		}
		args = append(args, l.traceID, i)
		q := fmt.Sprintf(`UPDATE %[1]s SET rank = m.rank FROM (VALUES %[2]s) m(pid_id, rank)
			WHERE %[1]s.trace_id = ? AND %[1]s.file_id = ? AND %[1]s.pid_id = m.pid_id`, l.target, strings.Join(vals, ", "))
		if len(vals) > 0 {
			if _, err := l.tx.ExecContext(l.ctx, q, args...); err != nil {
				return err
			}
		}
	}
	return nil
}

// WithMemoryLimit runs fn with DuckDB's memory_limit at limit, on a
// database file, and restores the limit Open set afterwards. An in-memory
// database keeps its limit: its tables live in the buffer pool, and a
// smaller limit would make them spill or fail. The limit is the
// database's: queries that run meanwhile run under it too.
func (d *DB) WithMemoryLimit(ctx context.Context, limit string, fn func() error) error {
	if d.path == "" || d.memoryLimit == "" {
		return fn()
	}
	return d.withGlobal(ctx, "memory_limit", quote(limit), quote(d.memoryLimit), fn)
}

// setGlobal sets a database-wide DuckDB setting to value and returns the
// function that sets it back to back. Both run on a connection of their
// own: a failed statement aborts a load's transaction, and the setting
// must be restored all the same.
func (d *DB) setGlobal(ctx context.Context, setting, value, back string) (restore func() error, err error) {
	if _, err := d.db.ExecContext(ctx, `SET GLOBAL `+setting+` = `+value); err != nil {
		return nil, err
	}
	return func() error {
		_, err := d.db.ExecContext(context.WithoutCancel(ctx), `SET GLOBAL `+setting+` = `+back)
		return err
	}, nil
}

// withGlobal runs fn with setting at value (setGlobal), then back; fn's
// error comes first.
func (d *DB) withGlobal(ctx context.Context, setting, value, back string, fn func() error) error {
	restore, err := d.setGlobal(ctx, setting, value, back)
	if err != nil {
		return err
	}
	err = fn()
	if rerr := restore(); rerr != nil && err == nil {
		err = rerr
	}
	return err
}

// loadMemoryLimit is DuckDB's memory_limit while the parser's stream
// writes a file's events into a database file, unless the database's own
// limit is lower. The stream writes its row groups to the file as they
// fill, so a small buffer pool is enough: the blocks it has written stay
// in the pool until the limit evicts them (they are clean), and with more
// room the load's peak grows with the trace. Measured on an 820 MB trace:
// 0.25× its JSON at 256 MB against 0.52× with the default (half the
// machine's memory), no slower; then at 128 MB against the 512 MB a
// command's database file has (fileMemoryLimit), load peaks of 236 MiB
// against 299 MiB, 0.91× the wall. A file read back from the parse cache
// keeps the database's limit: DuckDB inserts its Parquet on every thread,
// and under 128 MB it used one (the same trace: 1.7× the wall). An
// in-memory database keeps its limit: its events live in the buffer pool,
// and a small limit would only make them spill.
const loadMemoryLimit = "128MB"

// loadMemory runs fn, the parser's stream into the database, with
// memory_limit lowered to loadMemoryLimit on a database file whose limit
// is higher, and restores it.
func (d *DB) loadMemory(ctx context.Context, fn func() error) error {
	low, _ := limitBytes(loadMemoryLimit)
	if n, ok := limitBytes(d.memoryLimit); d.path == "" || !ok || n <= low {
		return fn()
	}
	return d.withGlobal(ctx, "memory_limit", quote(loadMemoryLimit), quote(d.memoryLimit), fn)
}

// limitBytes reads a memory limit written as DuckDB takes it: a number
// and KB, MB, GB or TB (powers of 1000) or KiB, MiB, GiB or TiB (powers
// of 1024); false for anything else.
func limitBytes(limit string) (int64, bool) {
	s := strings.TrimSpace(limit)
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i <= 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	if err != nil {
		return 0, false
	}
	units := map[string]float64{"KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
		"KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30, "TIB": 1 << 40}
	u, ok := units[strings.ToUpper(strings.TrimSpace(s[i:]))]
	if !ok {
		return 0, false
	}
	return int64(v * u), true
}

// OneThread runs fn with DuckDB's thread pool at one thread, then back.
// The load's scan is a single stream that the parser feeds, so more DuckDB
// threads cannot help, and with more the thread that waits for the
// stream's query spins for tasks, taking the core the parser needs
// (measured: a third more CPU per load). A caller that runs statements side
// by side, one per core, uses it too: a report of a small slice
// (pipeline.CollectReport). threads is a database-wide setting: queries
// that run meanwhile run single-threaded until fn ends. Each change of it
// costs more than a SET: at the end of the next statement DuckDB relaunches
// its threads and purges its allocator, which the statements after it pay
// for in fresh pages; a database opened at one thread (Options.Threads,
// as the command-line analysis of an in-memory trace does) never changes.
func (d *DB) OneThread(ctx context.Context, fn func() error) error {
	if d.threads <= 1 {
		return fn()
	}
	return d.withGlobal(ctx, "threads", "1", strconv.Itoa(d.threads), fn)
}

// stageEvents reads the staging table of a sliced load as events.
const stageEvents = "tb_events_from('tb_stage')"

// slice copies the events of the requested window or steps from the staging
// table to tb_events.
func (l *loader) slice() error {
	o := l.opts
	if o.WindowStartNs != 0 || o.WindowEndNs != 0 {
		first := int64(0)
		found := false
		for _, f := range l.files {
			if f.info.Events > 0 && (!found || f.info.FirstTsNs < first) {
				first, found = f.info.FirstTsNs, true
			}
		}
		lo, hi := first+o.WindowStartNs, first+o.WindowEndNs
		if o.WindowEndNs == 0 {
			hi = 1<<63 - 1
		}
		if hi <= lo {
			return fmt.Errorf("load: empty window %d..%d ns", o.WindowStartNs, o.WindowEndNs)
		}
		_, err := l.tx.ExecContext(l.ctx, `INSERT INTO tb_events SELECT * FROM tb_stage
			WHERE ts_ns < ? AND (end_ns > ? OR ts_ns >= ?)`, hi, lo, lo)
		return err
	}
	if o.LastStep < o.FirstStep {
		return fmt.Errorf("load: empty step range %d..%d", o.FirstStep, o.LastStep)
	}
	// The steps the evidence numbers (sql/evidence_base.sql): on each
	// rank the first step family present (tb_step_family), ProfilerStep#N
	// by its N, the others by their order from 0; an optimizer-delimited
	// iteration (family 5, one optimizer's steps, each once) starts where
	// the previous optimizer step ended, the first at the rank's first event.
	steps := `WITH a0 AS (
			SELECT file_id, rank, ts_ns, end_ns, name, tb_step_family(kind, name) AS prio FROM ` + stageEvents + `
			WHERE dur_ns > 0 AND tb_step_family(kind, name) IS NOT NULL),
		a AS (
			SELECT * FROM a0 WHERE prio <> 5
			UNION ALL
			SELECT DISTINCT a0.* FROM a0 JOIN (SELECT file_id, rank, min(name) AS name FROM a0 WHERE prio = 5 GROUP BY ALL) o USING (file_id, rank, name)
			WHERE a0.prio = 5),
		fam AS (SELECT file_id, rank, min(prio) AS prio FROM a GROUP BY ALL),
		r0 AS (SELECT file_id, rank, min(ts_ns) AS r0 FROM ` + stageEvents + ` WHERE (file_id, rank) IN (SELECT file_id, rank FROM fam WHERE prio = 5) GROUP BY ALL)
		SELECT file_id, rank,
			CASE WHEN prio = 5 THEN coalesce(lag(end_ns) OVER (PARTITION BY file_id, rank ORDER BY ts_ns, end_ns DESC), r0.r0) ELSE ts_ns END AS ts_ns,
			end_ns,
			CASE WHEN prio = 3 THEN TRY_CAST(regexp_extract(name, '#(\d+)$', 1) AS BIGINT)
				ELSE row_number() OVER (PARTITION BY file_id, rank ORDER BY ts_ns, end_ns DESC) - 1 END AS step
		FROM a JOIN fam USING (file_id, rank, prio) LEFT JOIN r0 USING (file_id, rank)`
	res, err := l.tx.ExecContext(l.ctx, `INSERT INTO tb_events
		WITH steps AS (`+steps+`),
		ranges AS (SELECT file_id, rank, min(ts_ns) AS lo, max(end_ns) AS hi FROM steps WHERE step BETWEEN ? AND ? GROUP BY ALL)
		SELECT e.* FROM tb_stage e JOIN ranges r ON e.file_id = r.file_id AND e.rank = r.rank
		WHERE e.ts_ns < r.hi AND (e.end_ns > r.lo OR e.ts_ns >= r.lo)`, o.FirstStep, o.LastStep)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("load: no events in steps %d..%d (the trace has no step annotations there: %s)", o.FirstStep, o.LastStep, evidence.StepAnnotations)
	}
	return nil
}

func (l *loader) sliceLabel() any {
	o := l.opts
	switch {
	case o.WindowStartNs != 0 || o.WindowEndNs != 0:
		return fmt.Sprintf("window %s..%s", table.WindowMs(o.WindowStartNs), table.WindowMs(o.WindowEndNs))
	case o.FirstStep != 0 || o.LastStep != 0:
		return fmt.Sprintf("steps %d..%d", o.FirstStep, o.LastStep)
	}
	return nil
}

// insertMetadata writes the traces rows (one per file and rank) and the
// threads rows, and fills res.
func (l *loader) insertMetadata(res *trace.LoadResult) error {
	ranks := map[int]bool{}
	// The columns are named: a database made by an older build has the
	// later ones (gpu_cc_major, ...) last (schema.sql).
	traces := l.newRowBatch(`INSERT INTO traces (trace, file_id, path, sha256, file_bytes, json_bytes, rank, rank_source,
		tp, dp, pp, ep, world_size, producer, platform, gpu_model, gpu_total_mem, gpu_cc_major, gpu_cc_minor,
		has_graphs, has_sync_events, has_python_stacks, has_steps, format,
		schema_version, base_time_ns, trace_name, session, events, first_ts_ns, last_end_ns, metadata, slice) VALUES `,
		"(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::JSON, ?)")
	threads := l.newRowBatch(`INSERT INTO threads VALUES `, "(?, ?, ?, ?, ?, ?, ?, ?, ?)")
	for _, f := range l.files {
		info := f.info
		counts, err := l.rankCounts(f)
		if err != nil {
			return err
		}
		if len(counts) == 0 {
			counts[f.rank] = &pidStat{}
		}
		fileRanks := make([]int, 0, len(counts))
		for r := range counts {
			fileRanks = append(fileRanks, r)
		}
		sort.Ints(fileRanks)
		for _, r := range fileRanks {
			c := counts[r]
			ranks[r] = true
			var tp, dp, pp, ep any
			source := f.rankSource
			if f.ref.HasCoords {
				tp, dp, pp, ep = f.ref.TP, f.ref.DP, f.ref.PP, f.ref.EP
			}
			if f.pidRank != nil {
				source = trace.RankDefault // events of pids without coordinates
				for _, co := range f.pidRank {
					if co.Rank == r {
						tp, dp, pp, ep, source = co.TP, co.DP, co.PP, co.EP, trace.RankFromMergedPrefix
						break
					}
				}
			}
			if source == trace.RankDefault {
				res.Gaps = append(res.Gaps, fmt.Sprintf("%s: no rank in the file name, distributedInfo or process names; rank %d assumed", f.ref.Path, r))
			}
			var first, last any
			if c.HasTs {
				first, last = c.FirstTsNs, c.LastEndNs
			}
			var worldSize, gpuMem, ccMajor, ccMinor, baseTime, gpuModel, traceName, session any
			if info.WorldSize > 0 {
				worldSize = info.WorldSize
			}
			if info.GPUTotalMem > 0 {
				gpuMem = info.GPUTotalMem
			}
			if info.CCMajor >= 0 && info.CCMinor >= 0 {
				ccMajor, ccMinor = info.CCMajor, info.CCMinor
			}
			if info.BaseTimeNs != 0 {
				baseTime = info.BaseTimeNs
			}
			if info.GPUModel != "" && info.GPUModel != "unknown" {
				gpuModel = info.GPUModel
			}
			if info.TraceName != "" {
				traceName = info.TraceName
			}
			if l.job.Session != "" {
				session = l.job.Session
			}
			var schemaVersion any
			if info.SchemaVersion != 0 {
				schemaVersion = fmt.Sprint(info.SchemaVersion)
			}
			meta := string(info.Metadata)
			if meta == "" {
				meta = "{}"
			}
			if err := traces.add(l.name, f.index, f.ref.Path, info.SHA256, info.FileBytes, info.JSONBytes, r, source,
				tp, dp, pp, ep, worldSize, orUnknown(info.Producer), orUnknown(info.Platform), gpuModel, gpuMem, ccMajor, ccMinor,
				info.HasGraphs, info.HasSyncEvents, info.HasPython, info.HasSteps, orUnknown(info.Format),
				schemaVersion, baseTime, traceName, session, c.Events, first, last, meta, l.sliceLabel()); err != nil {
				return err
			}
			res.Events += c.Events
		}
		if err := l.addThreads(threads, f); err != nil {
			return err
		}
	}
	if err := errors.Join(traces.flush(), threads.flush()); err != nil {
		return err
	}
	for r := range ranks {
		res.Ranks = append(res.Ranks, r)
	}
	sort.Ints(res.Ranks)
	return nil
}

// rankCounts returns the events of file f per rank: from the counts made
// while parsing, or, for a slice (or a cache entry read without its python
// events), from the rows stored.
func (l *loader) rankCounts(f *loadedFile) (map[int]*pidStat, error) {
	counts := map[int]*pidStat{}
	if f.pids != nil && l.target == "tb_events" {
		for pid, st := range f.pids {
			r := f.rank
			if c, ok := f.pidRank[pid]; ok {
				r = c.Rank
			}
			if counts[r] == nil {
				counts[r] = &pidStat{}
			}
			counts[r].merge(st)
		}
		return counts, nil
	}
	rows, err := l.tx.QueryContext(l.ctx, `SELECT rank, count(*), min(ts_ns), max(end_ns) FROM events
		WHERE trace = ? AND file_id = ? GROUP BY rank`, l.name, f.index)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var r int
		c := &pidStat{HasTs: true}
		if err := rows.Scan(&r, &c.Events, &c.FirstTsNs, &c.LastEndNs); err != nil {
			return nil, err
		}
		counts[r] = c
	}
	return counts, rows.Err()
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// addThreads queues the threads rows of file f (its process and thread
// names and sort indexes, with the rank of each pid) on b.
func (l *loader) addThreads(b *rowBatch, f *loadedFile) error {
	rankOf := func(pid string) int {
		if c, ok := f.pidRank[pid]; ok {
			return c.Rank
		}
		return f.rank
	}
	for _, p := range f.info.Processes {
		var sortIndex any
		if p.HasSortIndex {
			sortIndex = p.SortIndex
		}
		if err := b.add(l.name, f.index, rankOf(p.Pid), p.Pid, nil, nullIfEmpty(p.Name), nil, nullIfEmpty(p.Labels), sortIndex); err != nil {
			return err
		}
	}
	for _, t := range f.info.Threads {
		var sortIndex any
		if t.HasSortIndex {
			sortIndex = t.SortIndex
		}
		if err := b.add(l.name, f.index, rankOf(t.Pid), t.Pid, t.Tid, nil, nullIfEmpty(t.Name), nil, sortIndex); err != nil {
			return err
		}
	}
	return nil
}

// rowBatch inserts rows a statement at a time, rowBatchMax rows each: a
// job of many files writes its traces and threads rows in a few
// statements, not one per file and rank.
type rowBatch struct {
	l           *loader
	head, tuple string // "INSERT INTO t VALUES ", "(?, ?)"
	vals        []string
	args        []any
}

// rowBatchMax is the most rows one statement of a rowBatch inserts.
const rowBatchMax = 500

func (l *loader) newRowBatch(head, tuple string) *rowBatch {
	return &rowBatch{l: l, head: head, tuple: tuple}
}

// add queues a row, and inserts the queued ones when they are rowBatchMax.
func (b *rowBatch) add(row ...any) error {
	b.vals = append(b.vals, b.tuple)
	b.args = append(b.args, row...)
	if len(b.vals) == rowBatchMax {
		return b.flush()
	}
	return nil
}

// flush inserts the queued rows.
func (b *rowBatch) flush() error {
	if len(b.vals) == 0 {
		return nil
	}
	_, err := b.l.tx.ExecContext(b.l.ctx, b.head+strings.Join(b.vals, ", "), b.args...)
	b.vals, b.args = b.vals[:0], b.args[:0]
	return err
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// quote returns s as a SQL string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
