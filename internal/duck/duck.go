//go:build cgo

package duck

import (
	"bufio"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/tracebook/tracebook/analysis/table"
	tbsql "github.com/tracebook/tracebook/sql"
)

// DB is an open tracebook database. Its methods are safe for concurrent use;
// loads and drops are serialised.
type DB struct {
	path      string
	opts      Options
	connector *duckdb.Connector
	db        *sql.DB
	cacheDir  string // "" = off
	tempDir   string
	ownTemp   bool   // tempDir was created by Open and is removed by Close
	scratch   string // the directory of a scratch database (Options.Scratch), removed by Close
	closed    bool   // Close has run

	mu sync.Mutex // serialises Load and Drop

	scanOnce sync.Once // registers tracebook_scan
	scanErr  error
	threads  int // DuckDB's configured thread count
	// memoryLimit is the memory_limit Open set ("" = DuckDB's default),
	// what a load into a file restores (current_setting rounds it).
	memoryLimit string

	cacheWrites sync.WaitGroup // parse-cache entries being written
}

// planSettings are the DuckDB planner settings Open gives every database.
// asof_loop_join_threshold 0: an ASOF join always merges its sorted sides.
// DuckDB plans an ASOF join whose left side it estimates at under 64 rows
// as a nested loop and an arg_max per left row, and its estimate of a
// filtered CTE can be that low when the CTE holds thousands: the workload
// preset's DataLoader calls (estimated 18) against the busy segments of
// resnet_2080ti ×100 (9,000 calls by 943,500 segments) took 62 s that way
// and 0.3 s merged.
var planSettings = map[string]string{"asof_loop_join_threshold": "0"}

// Open opens the database at path, creating it when absent; "" opens an
// in-memory database. It creates the tables of sql.Schema() when missing and
// (re)creates the views of sql.Views(). DuckDB is opened so that it never
// installs or loads extensions on its own: nothing touches the network.
//
//	db, err := duck.Open("", duck.Options{})
func Open(path string, opts Options) (*DB, error) {
	d := &DB{path: path, opts: opts}
	if path == "" && opts.Scratch {
		removeOrphanScratch()
		dir, err := os.MkdirTemp("", scratchPrefix)
		if err != nil {
			return nil, fmt.Errorf("creating the scratch database's directory: %w", err)
		}
		// The owner's pid, so that a later Open removes the directory if
		// this process dies without Close (a killed kernel).
		if err := os.WriteFile(filepath.Join(dir, "pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("creating the scratch database's directory: %w", err)
		}
		d.scratch, path = dir, filepath.Join(dir, "traces.duckdb")
		d.path = path
	}
	d.tempDir = opts.TempDirectory
	if d.tempDir == "" {
		if path != "" {
			d.tempDir = path + ".tmp"
		} else {
			dir, err := os.MkdirTemp("", "tracebook-duckdb-")
			if err != nil {
				return nil, fmt.Errorf("creating the spill directory: %w", err)
			}
			d.tempDir, d.ownTemp = dir, true
		}
	}
	switch opts.CacheDir {
	case "-":
	case "":
		if dir, err := os.UserCacheDir(); err == nil {
			d.cacheDir = filepath.Join(dir, "tracebook")
		}
	default:
		d.cacheDir = opts.CacheDir
	}

	q := url.Values{}
	q.Set("autoinstall_known_extensions", "false")
	q.Set("autoload_known_extensions", "false")
	q.Set("temp_directory", d.tempDir)
	mem := opts.MemoryLimit
	if mem == "" {
		if total := physicalMemory(); total > 0 {
			mem = strconv.FormatUint(total/2/(1<<20), 10) + "MB"
		}
	}
	if mem != "" {
		d.memoryLimit = mem
		q.Set("memory_limit", mem)
	}
	if opts.Threads > 0 {
		q.Set("threads", strconv.Itoa(opts.Threads))
	}
	for k, v := range allocatorSettings {
		q.Set(k, v)
	}
	for k, v := range planSettings {
		q.Set(k, v)
	}
	tuneAllocator(path != "")
	dsn := path + "?" + q.Encode()
	var initConn func(driver.ExecerContext) error
	if path == "" {
		initConn = useCompressedMemory
	}
	c, err := duckdb.NewConnector(dsn, initConn)
	if err != nil {
		d.removeTemp()
		return nil, fmt.Errorf("opening %s: %w", displayPath(path), err)
	}
	d.connector = c
	d.db = sql.OpenDB(c)
	ctx := context.Background()
	if err := d.migrateWideEvents(ctx); err != nil {
		d.Close()
		return nil, fmt.Errorf("converting the events of %s to the lean store: %w", displayPath(path), err)
	}
	for _, stmt := range []struct{ what, sql string }{{"schema", tbsql.Schema()}, {"views", tbsql.Views()}} {
		if _, err := d.db.ExecContext(ctx, stmt.sql); err != nil {
			d.Close()
			return nil, fmt.Errorf("creating the %s in %s: %w", stmt.what, displayPath(path), err)
		}
	}
	if err := d.db.QueryRowContext(ctx, `SELECT current_setting('threads')`).Scan(&d.threads); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// memoryCatalog is the in-memory database an in-memory DB keeps its
// tables in: attached with DuckDB's COMPRESS option, so that a CHECKPOINT
// (Load ends with one) stores the events compressed as a database file
// does. The default in-memory catalog keeps every event uncompressed: the
// 62 MB xdit trace's events took 73 MB there, and the report's peak RSS
// was 1.25x what it is with them compressed, for the same time.
const memoryCatalog = "tracebook"

// useCompressedMemory makes memoryCatalog the database of a new
// connection to an in-memory DB (the first one attaches it).
func useCompressedMemory(conn driver.ExecerContext) error {
	_, err := conn.ExecContext(context.Background(),
		`ATTACH IF NOT EXISTS ':memory:' AS `+memoryCatalog+` (COMPRESS); USE `+memoryCatalog, nil)
	return err
}

func displayPath(path string) string {
	if path == "" {
		return "the in-memory database"
	}
	return path
}

// physicalMemory returns the memory this process may use: the smaller of
// the machine's RAM and the cgroup limit; 0 when unknown.
func physicalMemory() uint64 {
	var total uint64
	if f, err := os.Open("/proc/meminfo"); err == nil {
		s := bufio.NewScanner(f)
		for s.Scan() {
			if f := strings.Fields(s.Text()); len(f) >= 2 && f[0] == "MemTotal:" {
				if kb, err := strconv.ParseUint(f[1], 10, 64); err == nil {
					total = kb << 10
				}
			}
		}
		f.Close()
	}
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if b, err := os.ReadFile(p); err == nil {
			if v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && v > 0 && (total == 0 || v < total) {
				total = v
			}
		}
	}
	return total
}

// Path returns the database file, "" for an in-memory database (a
// scratch database's file is its own: Path is "" for it too).
func (d *DB) Path() string {
	if d.scratch != "" {
		return ""
	}
	return d.path
}

// Close closes the database; an in-memory one is gone. Closing it again
// does nothing.
func (d *DB) Close() error {
	d.cacheWrites.Wait()
	if d.closed {
		return nil
	}
	d.closed = true
	var err error
	if d.db != nil {
		if d.scratch != "" {
			// A scratch database is removed below: writing its last
			// changes into its file first (DuckDB checkpoints on
			// shutdown) is wasted work, 0.3 s of the ×21 vLLM report.
			_, _ = d.db.Exec(`PRAGMA disable_checkpoint_on_shutdown`)
		}
		err = d.db.Close()
	}
	if d.connector != nil {
		if cerr := d.connector.Close(); err == nil {
			err = cerr
		}
	}
	d.removeTemp()
	return err
}

// scratchPrefix starts the name of a scratch database's directory.
const scratchPrefix = "tracebook-db-"

// removeOrphanScratch removes the scratch databases of processes that are
// gone: directories under os.TempDir() named scratchPrefix* whose pid file
// names a process that no longer exists (on systems with /proc; elsewhere
// it removes nothing).
func removeOrphanScratch() {
	if _, err := os.Stat("/proc/self"); err != nil {
		return
	}
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), scratchPrefix+"*"))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, "pid"))
		if err != nil {
			continue // not ours, or still being created
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			continue
		}
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); os.IsNotExist(err) {
			os.RemoveAll(dir)
		}
	}
}

func (d *DB) removeTemp() {
	if d.ownTemp {
		os.RemoveAll(d.tempDir)
	}
	if d.scratch != "" {
		os.RemoveAll(d.scratch)
	}
}

// SQL returns the database/sql handle, for callers that need rows
// streamed (an export) rather than a table.
func (d *DB) SQL() *sql.DB { return d.db }

// Exec runs statements that return no rows (several may be separated by
// semicolons). DuckDB's error is returned with its message intact.
func (d *DB) Exec(ctx context.Context, query string, args ...any) error {
	defer timeStatement(query)()
	_, err := d.db.ExecContext(ctx, query, args...)
	return d.diskFull(err)
}

// diskFull adds where and what to do to an error DuckDB returned because
// the disk under its database file, or under the directory it spills to,
// is full; other errors come back as they are. A load that fails so has
// added nothing (its transaction rolls back), but the file keeps the
// space it took until DuckDB reuses it.
func (d *DB) diskFull(err error) error {
	if err == nil || !strings.Contains(err.Error(), "No space left on device") {
		return err
	}
	switch {
	case d.scratch != "":
		return fmt.Errorf("%w\nthe disk under the scratch database (%s) is full: free space there, or set TMPDIR to a folder on a larger disk before starting tracebook", err, d.scratch)
	case d.path != "":
		return fmt.Errorf("%w\nthe disk under %s (or under its spill directory %s) is full: free space there, or use a database file on a larger disk", err, displayPath(d.path), d.tempDir)
	default:
		return fmt.Errorf("%w\nthe disk under DuckDB's spill directory (%s) is full: free space there, or set TMPDIR to a folder on a larger disk before starting tracebook", err, d.tempDir)
	}
}

// Query runs query and returns its result as a table of at most maxRows
// rows (maxRows <= 0: all); Total counts every row. Values are nil, bool,
// int64, float64 or string: integers that do not fit int64 and decimals
// become float64, times are RFC 3339 strings, lists, structs and maps are
// JSON. A DuckDB error is returned with its message intact (it names the
// line and the position of a syntax error).
func (d *DB) Query(ctx context.Context, query string, maxRows int, args ...any) (*table.Table, error) {
	defer timeStatement(query)()
	t, more, err := d.queryTable(ctx, query, maxRows, args)
	if err != nil || !more {
		return t, d.diskFull(err)
	}
	// Past the cap, count instead of reading every row (a SELECT * over
	// millions of events would convert them all); a statement that cannot
	// be wrapped is read to its end.
	if n, ok := d.countRows(ctx, query, args); ok {
		t.Total = n
		return t, nil
	}
	rows, err := d.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	t.Total = 0
	for rows.Next() {
		t.Total++
	}
	return t, rows.Err()
}

// QueryEach runs query and hands its rows to each, one at a time, without
// building a table (a cross-view reads every host frame of the slice):
// start gets the column names first. The rows are read from DuckDB's
// vectors as they are (cells.go); a row is valid only during its call, but
// the texts it gives may be kept.
//
// A query whose rows come out of a sort (sortedLast: the cross-view's
// frames) is streamed (stream.go): DuckDB produces its rows a chunk at a
// time as they are read, and holds only what the sort holds, under its
// memory limit. Other queries go through the driver, which has DuckDB
// materialise the whole result before the first row reaches Go, outside
// the memory limit. There a database in a file (where large traces go)
// holding at least pagedEvents events stores the result in a temporary
// table first, which DuckDB keeps under its memory limit and spills, and
// hands it over a page of eachPage rows at a time; smaller ones read the
// result directly, as storing it costs more than it saves there (the 48
// MB vLLM trace in a file: 0.96 s of CPU and 194 MB peak for its
// cross-view read directly, 1.41 s and 258 MB through a stored result).
// Streaming the ×21 vLLM trace's 2.9 M frames instead of storing them
// and reading them in pages took their query from 3.8 s to 2.1 s (single
// runs) and the report to 0.96× its wall (3 alternating pairs).
func (d *DB) QueryEach(ctx context.Context, query string, start func(columns []string) error, each func(row table.Cells) error, args ...any) error {
	defer timeStatement(query)()
	return d.diskFull(d.queryEach(ctx, query, start, each, args))
}

// queryEach is QueryEach.
func (d *DB) queryEach(ctx context.Context, query string, start func(columns []string) error, each func(row table.Cells) error, args []any) error {
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if sortedLast(query) {
		err = conn.Raw(func(dc any) error { return streamEach(ctx, dc, query, args, start, each) })
		if !errors.Is(err, errNoStream) {
			return err
		}
	}
	var events int64
	if d.path != "" {
		if err := d.db.QueryRowContext(ctx, `SELECT count(*) FROM events`).Scan(&events); err != nil {
			return err
		}
	}
	read := func(query string, start func(columns []string) error, args ...any) error {
		return rawQuery(ctx, conn, query, args, func(rs driver.Rows) error { return eachCells(ctx, rs, start, each) })
	}
	if events < pagedEvents {
		return read(query, start, args...)
	}
	name := fmt.Sprintf("tb_each_%d", eachSeq.Add(1))
	q := strings.TrimRight(strings.TrimSpace(query), "; \t\n")
	if _, err := conn.ExecContext(ctx, "CREATE TEMP TABLE "+name+" AS\n"+q, args...); err != nil {
		return err
	}
	defer conn.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+name)
	var n int64
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM "+name).Scan(&n); err != nil {
		return err
	}
	started := false
	for off := int64(0); off < n || !started; off += eachPage {
		st := start
		if started {
			st = nil
		}
		started = true
		if err := read("SELECT * FROM "+name+" WHERE rowid >= $1 AND rowid < $2", st, off, off+eachPage); err != nil {
			return err
		}
	}
	return nil
}

// pagedEvents is the size of a database in a file, in events, from which
// QueryEach reads results in pages (a variable, as eachPage is): about a
// 250 MB trace.
var pagedEvents int64 = 1_000_000

// eachPage is how many rows of a stored result QueryEach reads at once (a
// variable so that a test can make several pages of a small result).
var eachPage int64 = 65536

// eachSeq names QueryEach's temporary tables.
var eachSeq atomic.Int64

// countRows counts the rows of a SELECT (or WITH, FROM, VALUES) query.
func (d *DB) countRows(ctx context.Context, query string, args []any) (int64, bool) {
	q := strings.TrimRight(strings.TrimSpace(query), "; \t\n")
	head := strings.ToUpper(strings.TrimSpace(stripComments(q)))
	if strings.Contains(q, ";") || !(strings.HasPrefix(head, "SELECT") || strings.HasPrefix(head, "WITH") ||
		strings.HasPrefix(head, "FROM") || strings.HasPrefix(head, "VALUES")) {
		return 0, false
	}
	var n int64
	if err := d.db.QueryRowContext(ctx, "SELECT count(*) FROM (\n"+q+"\n)", args...).Scan(&n); err != nil {
		return 0, false
	}
	return n, true
}

// stripComments drops leading -- and /* */ comments.
func stripComments(q string) string {
	for {
		q = strings.TrimSpace(q)
		switch {
		case strings.HasPrefix(q, "--"):
			i := strings.IndexByte(q, '\n')
			if i < 0 {
				return ""
			}
			q = q[i+1:]
		case strings.HasPrefix(q, "/*"):
			i := strings.Index(q, "*/")
			if i < 0 {
				return ""
			}
			q = q[i+2:]
		default:
			return q
		}
	}
}

// rowBlock is how many rows' cells readTable allocates at once.
const rowBlock = 256

// queryTable runs query on a connection of its own and reads at most
// maxRows rows of its result (all when maxRows <= 0) as readTable does;
// more says that rows remain. The arguments are converted as
// database/sql converts them.
func (d *DB) queryTable(ctx context.Context, query string, maxRows int, args []any) (t *table.Table, more bool, err error) {
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return nil, false, err
	}
	defer conn.Close()
	err = rawQuery(ctx, conn, query, args, func(rs driver.Rows) error {
		t, more, err = readTable(rs, maxRows)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return t, more, nil
}

// rawQuery runs query on conn through the DuckDB driver itself, its
// arguments converted as database/sql converts them (namedArgs), and hands
// the driver's rows to read, which closes them.
func rawQuery(ctx context.Context, conn *sql.Conn, query string, args []any, read func(rs driver.Rows) error) error {
	return conn.Raw(func(dc any) error {
		qc, ok := dc.(driver.QueryerContext)
		if !ok {
			return errNoCells
		}
		named, err := namedArgs(dc, args)
		if err != nil {
			return err
		}
		rs, err := qc.QueryContext(ctx, query, named)
		if err != nil {
			return err
		}
		return read(rs)
	})
}

// namedArgs converts args for the driver connection dc as database/sql
// does: the values the driver checks itself (lists, maps, its own types)
// as they are, the others by the default converter.
func namedArgs(dc any, args []any) ([]driver.NamedValue, error) {
	named := make([]driver.NamedValue, len(args))
	checker, _ := dc.(driver.NamedValueChecker)
	for i, a := range args {
		nv := driver.NamedValue{Ordinal: i + 1, Value: a}
		if na, ok := a.(sql.NamedArg); ok {
			nv.Name, nv.Value = na.Name, na.Value
		}
		err := driver.ErrSkip
		if checker != nil {
			err = checker.CheckNamedValue(&nv)
		}
		if errors.Is(err, driver.ErrSkip) {
			nv.Value, err = driver.DefaultParameterConverter.ConvertValue(nv.Value)
		}
		if err != nil {
			return nil, fmt.Errorf("sql: converting argument $%d type: %w", i+1, err)
		}
		named[i] = nv
	}
	return named, nil
}

// readTable reads at most maxRows rows of rs (all when maxRows <= 0) and
// closes it; more says that rows remain. A result whose columns chunkCells
// reads is read from DuckDB's vectors (tableCells), without the driver
// boxing every value and database/sql converting it once more: SELECT *
// FROM evidence_base_events of the vLLM H100 trace (47,522 rows of 23
// columns) in 46 against 73 ms, the least of 20 runs each. Any other
// result goes through the driver's rows. Both give the values cell gives
// the driver's.
func readTable(rs driver.Rows, maxRows int) (t *table.Table, more bool, err error) {
	defer rs.Close()
	cols := rs.Columns()
	t = &table.Table{Columns: make([]table.Column, len(cols)), Rows: [][]any{}}
	typed, _ := rs.(driver.RowsColumnTypeDatabaseTypeName)
	for i, name := range cols {
		t.Columns[i] = table.Column{Name: name}
		if typed != nil {
			t.Columns[i].Type = typed.ColumnTypeDatabaseTypeName(i)
		}
	}
	if res := resultOf(rs); res != nil {
		if c := newTableCells(res); c != nil {
			more, err = c.read(t, maxRows)
			t.Total = int64(len(t.Rows))
			return t, more, err
		}
	}
	vals := make([]driver.Value, len(cols))
	// Rows are cut from blocks of cells: one allocation per block instead
	// of one per row (a cross-view reads 150,000 rows).
	var block []any
	for {
		if err := rs.Next(vals); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, false, err
		}
		if maxRows > 0 && len(t.Rows) >= maxRows {
			t.Total = int64(len(t.Rows))
			return t, true, nil
		}
		if len(block) < len(vals) {
			block = make([]any, len(vals)*rowBlock)
		}
		row := block[:len(vals):len(vals)]
		block = block[len(vals):]
		for i, v := range vals {
			row[i] = cell(v)
		}
		t.Rows = append(t.Rows, row)
	}
	t.Total = int64(len(t.Rows))
	return t, false, nil
}

// cell converts a value scanned from DuckDB to nil, bool, int64, float64 or string.
func cell(v any) any {
	switch x := v.(type) {
	case nil, bool, int64, float64, string:
		return x
	case int8, int16, int32, int, uint8, uint16, uint32, uint, uint64, float32:
		return table.Normalize(x)
	case *big.Int:
		if x == nil {
			return nil
		}
		if x.IsInt64() {
			return x.Int64()
		}
		f, _ := new(big.Float).SetInt(x).Float64()
		return f
	case duckdb.Decimal:
		if x.Value == nil {
			return nil
		}
		f, _ := new(big.Float).SetInt(x.Value).Float64()
		return f / math.Pow10(int(x.Scale))
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case duckdb.Interval:
		return fmt.Sprintf("%d months %d days %d us", x.Months, x.Days, x.Micros)
	case duckdb.UUID:
		return x.String()
	case []byte:
		return hex.EncodeToString(x)
	case driver.Valuer:
		if vv, err := x.Value(); err == nil && vv != v {
			return cell(vv)
		}
		return fmt.Sprint(x)
	default:
		b, err := json.Marshal(jsonable(x))
		if err != nil {
			return fmt.Sprint(x)
		}
		return string(b)
	}
}

// jsonable makes maps with non-string keys (DuckDB MAPs) marshalable.
func jsonable(v any) any {
	switch x := v.(type) {
	case duckdb.Map:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(cell(k))] = jsonable(e)
		}
		return m
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = jsonable(e)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonable(e)
		}
		return out
	case nil, bool, string, float64, int64:
		return x
	default:
		c := cell(x)
		if s, ok := c.(string); ok && s == fmt.Sprint(x) {
			return s
		}
		return c
	}
}

// Columns returns the columns of every table and view of the main schema,
// keyed by name, with the doc and unit of schema.sql and views.sql where they
// document them: what completion and inspection show. The tables under the
// events view (tb_events, tb_strings, tb_dict) are left out.
func (d *DB) Columns(ctx context.Context) (map[string][]table.Column, error) {
	rows, err := d.db.QueryContext(ctx, `
		SELECT table_name, column_name, data_type
		FROM duckdb_columns()
		WHERE schema_name = 'main' AND NOT internal AND database_name = current_database()
		  AND NOT starts_with(table_name, 'tb_') -- the lean store under events (sql/schema.sql)
		ORDER BY table_name, column_index`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	docs := map[string]map[string]tbsql.ColumnDoc{}
	for _, o := range tbsql.Objects() {
		m := map[string]tbsql.ColumnDoc{}
		for _, c := range o.Columns {
			m[c.Name] = c
		}
		docs[o.Name] = m
	}
	// Views that select * from events inherit its docs.
	out := map[string][]table.Column{}
	for rows.Next() {
		var tname, cname, ctype string
		if err := rows.Scan(&tname, &cname, &ctype); err != nil {
			return nil, err
		}
		c := table.Column{Name: cname, Type: ctype}
		doc, ok := docs[tname][cname]
		if !ok {
			doc, ok = docs["events"][cname]
			if ok && !selectsFromEvents(tname) {
				ok = false
			}
		}
		if ok {
			c.Doc, c.Unit = doc.Doc, doc.Unit
		}
		out[tname] = append(out[tname], c)
	}
	return out, rows.Err()
}

func selectsFromEvents(view string) bool {
	switch view {
	case "kernels", "gpu_ops", "cpu_ops", "runtime", "memops", "annotations", "python_frames":
		return true
	}
	return false
}

// Traces lists the loaded traces, by name.
func (d *DB) Traces(ctx context.Context) ([]Trace, error) {
	rows, err := d.db.QueryContext(ctx, `
		SELECT trace, count(DISTINCT file_id), list(DISTINCT rank ORDER BY rank), sum(events),
		       list(DISTINCT path ORDER BY path), coalesce(any_value(session), ''),
		       any_value(producer), any_value(platform), coalesce(any_value(slice), '')
		FROM traces GROUP BY trace ORDER BY trace`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Trace
	for rows.Next() {
		var t Trace
		var ranks, paths []any
		if err := rows.Scan(&t.Name, &t.Files, &ranks, &t.Events, &paths, &t.Session, &t.Producer, &t.Platform, &t.Slice); err != nil {
			return nil, err
		}
		for _, r := range ranks {
			if v, ok := cell(r).(int64); ok {
				t.Ranks = append(t.Ranks, int(v))
			}
		}
		for _, p := range paths {
			if s, ok := p.(string); ok {
				t.Paths = append(t.Paths, s)
			}
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// Drop removes a loaded trace (its traces, events and threads rows) in one
// transaction.
func (d *DB) Drop(ctx context.Context, name string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `DELETE FROM traces WHERE trace = ?`, name)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("dropping %q: %w", name, ErrNoTrace)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM threads WHERE trace = ?`, name); err != nil {
		return err
	}
	// The trace's strings stay in tb_strings: other traces may hold them.
	if _, err := tx.ExecContext(ctx, `DELETE FROM tb_events WHERE trace_id = (SELECT id FROM tb_strings WHERE s = ?)`, name); err != nil {
		return err
	}
	return tx.Commit()
}

// sqlTimes, when $TRACEBOOK_SQL_TIMES is set, makes every statement run
// through Exec, Query and QueryEach print when it started (ms since the
// process began), its wall time, the process's resident memory when it
// ended and its first 100 characters (comments out, spaces folded) to
// stderr: how the cost of a report is found statement by statement
// (scripts/bench-scale.sh's notes name the slow ones), and which phase
// holds its peak.
var sqlTimes = os.Getenv("TRACEBOOK_SQL_TIMES") != ""

// processStart is when the process began, as near as a package variable
// can tell; the origin of sqlTimes' start times.
var processStart = time.Now()

// residentMB is the process's resident memory (VmRSS) in MB, or -1 where
// /proc cannot tell.
func residentMB() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			if kb, err := strconv.Atoi(f[1]); err == nil {
				return kb / 1024
			}
		}
	}
	return -1
}

// timeStatement starts timing query; the returned func prints the time.
func timeStatement(query string) func() {
	if !sqlTimes {
		return func() {}
	}
	start := time.Now()
	return func() {
		line := strings.TrimSpace(stripComments(query))
		line = strings.Join(strings.Fields(line), " ")
		if len(line) > 100 {
			line = line[:100]
		}
		fmt.Fprintf(os.Stderr, "sql at %6d ms %8.1f ms %5d MB  %s\n", start.Sub(processStart).Milliseconds(),
			float64(time.Since(start).Microseconds())/1000, residentMB(), line)
	}
}
