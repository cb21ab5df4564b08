//go:build cgo

package duck

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/trace"
	tbsql "github.com/tracebook/tracebook/sql"
)

// The parse cache: one entry per parsed file, keyed by the SHA-256 of the
// file's bytes, in Options.CacheDir:
//
//	<sha256>.parquet   the file's events: the columns of tb_events after rank
//	<sha256>.json      its trace.FileInfo and the strings the ids stand for
//
// The entry keeps the lean rows with the ids of the database that wrote it
// and, beside them, the string of each id; a load maps those ids to its own
// (dict) and stores the rows through a list index, in the file's order,
// without reading a string column or joining.
//
// A load with --no-python that parsed the file writes <sha256>-nopython.*
// instead (and reads a full entry when there is one). Both files are written
// to a temporary name and renamed, the JSON last, so a reader sees a whole
// entry or none; a concurrent writer of the same entry writes the same bytes.

type cacheEntry struct {
	parquet  string
	info     *trace.FileInfo
	pids     map[string]*pidStat
	strings  cacheStrings
	noPython bool // the entry lacks python_function events
}

// cacheStrings are the strings an entry's ids stand for: Strings[i] is id IDs[i].
type cacheStrings struct {
	IDs     []int32  `json:"ids"`
	Strings []string `json:"strings"`
}

// maxCacheID bounds the ids an entry may hold: a load allocates a list of
// the largest one (remap), and a damaged entry must be a miss, not an
// allocation of gigabytes.
const maxCacheID = 1 << 26

// valid reports whether the entry's ids can be mapped: one string each,
// none negative or past maxCacheID.
func (c cacheStrings) valid() bool {
	if len(c.IDs) != len(c.Strings) {
		return false
	}
	for _, id := range c.IDs {
		if id < 0 || id > maxCacheID {
			return false
		}
	}
	return true
}

// cacheJSON is the content of <sha256>.json.
type cacheJSON struct {
	// Format names what wrote the entry; an entry of another format is a miss.
	Format  string              `json:"format"`
	Info    *trace.FileInfo     `json:"info"`
	Pids    map[string]*pidStat `json:"pids"`
	Strings cacheStrings        `json:"strings"`
}

// cacheFormat changes whenever the importer's output or the events schema
// changes, so that an entry written by another build is never served: it is
// the importer's version and a hash of the schema.
var cacheFormat = func() string {
	h := sha256.Sum256([]byte(tbsql.Schema()))
	return "importer-" + strconv.Itoa(trace.ImporterVersion) + "-schema-" + hex.EncodeToString(h[:6])
}()

// cacheLookup hashes the file at path and returns its key and, when the
// cache holds it, the entry. The key is "" when the cache is off or the file
// cannot be read (the parser then reports the error).
func (d *DB) cacheLookup(path string, noPython bool) (string, *cacheEntry) {
	if d.cacheDir == "" {
		return "", nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", nil
	}
	h := sha256.New()
	_, err = io.Copy(h, f)
	f.Close()
	if err != nil {
		return "", nil
	}
	key := hex.EncodeToString(h.Sum(nil))
	variants := []string{""}
	if noPython {
		variants = append(variants, "-nopython")
	}
	for _, v := range variants {
		base := filepath.Join(d.cacheDir, key+v)
		b, err := os.ReadFile(base + ".json")
		if err != nil {
			continue
		}
		var c cacheJSON
		if json.Unmarshal(b, &c) != nil || c.Format != cacheFormat || c.Info == nil || c.Info.SHA256 != key || c.Pids == nil ||
			!c.Strings.valid() {
			continue
		}
		if _, err := os.Stat(base + ".parquet"); err != nil {
			continue
		}
		c.Info.Path = path
		return key, &cacheEntry{parquet: base + ".parquet", info: c.Info, pids: c.Pids, strings: c.Strings, noPython: v != ""}
	}
	return key, nil
}

// cacheWrite is one entry to write.
type cacheWrite struct {
	key      string
	noPython bool
	fileID   int
	info     *trace.FileInfo
	pids     map[string]*pidStat
}

// writeCache writes the entries of trace name from the committed events
// table, after the load has returned. It holds the load lock, so the next
// load waits for it (and a drop cannot race it); Close waits for it too.
func (d *DB) writeCache(name string, writes []cacheWrite) {
	defer d.cacheWrites.Done()
	d.mu.Lock()
	defer d.mu.Unlock()
	ctx := context.Background()
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return
	}
	defer tx.Rollback()
	for _, w := range writes {
		// The trace may have been dropped, even loaded again from another
		// file, before this ran.
		var same int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM traces WHERE trace = ? AND file_id = ? AND sha256 = ?`,
			name, w.fileID, w.info.SHA256).Scan(&same); err != nil || same == 0 {
			continue
		}
		_ = d.OneThread(ctx, func() error { return d.cacheStore(ctx, tx, "tb_events", name, w) })
	}
}

// WaitCache waits until the parse-cache entries of the loads so far are
// written (Close waits too).
func (d *DB) WaitCache() { d.cacheWrites.Wait() }

// cacheStore writes the entry of one file from the lean table target
// (tb_events, or the staging table of a slice), where the file's events are
// stored as trace name.
func (d *DB) cacheStore(ctx context.Context, tx *sql.Tx, target, name string, w cacheWrite) error {
	key, info := w.key, w.info
	if info.SHA256 != "" && info.SHA256 != key {
		return fmt.Errorf("the file changed while it was read")
	}
	var want int64
	for _, p := range w.pids {
		want += p.Events
	}
	if err := os.MkdirAll(d.cacheDir, 0o755); err != nil {
		return err
	}
	base := key
	if w.noPython && info.Skipped > 0 {
		base += "-nopython"
	}
	base = filepath.Join(d.cacheDir, base)
	tmp := base + ".tmp" + strconv.Itoa(os.Getpid())
	rows := fmt.Sprintf(`%s WHERE trace_id = (SELECT id FROM tb_strings WHERE s = %s) AND file_id = %d`, target, quote(name), w.fileID)
	used := make([]string, len(cacheIDColumns))
	for i, c := range cacheIDColumns {
		used[i] = "SELECT DISTINCT " + c + " FROM " + rows
	}
	var strs cacheStrings
	var err error
	strs.IDs, strs.Strings, err = readStrings(ctx, tx, `SELECT id, s FROM tb_strings WHERE id IN (`+strings.Join(used, " UNION ")+`) ORDER BY id`)
	if err != nil {
		return err
	}
	// One thread (the callers' OneThread): the rows keep the table's order.
	q := fmt.Sprintf(`COPY (SELECT %s FROM %s) TO %s (FORMAT parquet, COMPRESSION zstd)`,
		cacheColumns, rows, quote(tmp+".parquet"))
	res, err := tx.ExecContext(ctx, q)
	if err == nil {
		if n, rerr := res.RowsAffected(); rerr == nil && n != want {
			err = fmt.Errorf("the cache entry holds %d events, want %d", n, want)
		}
	}
	if err != nil {
		os.Remove(tmp + ".parquet")
		return err
	}
	if err := os.Rename(tmp+".parquet", base+".parquet"); err != nil {
		os.Remove(tmp + ".parquet")
		return err
	}
	stored := *info
	stored.SHA256 = key
	b, err := json.Marshal(cacheJSON{Format: cacheFormat, Info: &stored, Pids: w.pids, Strings: strs})
	if err != nil {
		return err
	}
	if err := os.WriteFile(tmp+".json", b, 0o644); err != nil {
		os.Remove(tmp + ".json")
		return err
	}
	return os.Rename(tmp+".json", base+".json")
}

// cacheColumns are the columns of an entry's rows: those of tb_events after
// rank; cacheIDColumns those of them that hold string ids.
var (
	cacheColumns   = strings.TrimPrefix(leanColumns, "trace_id, file_id, rank, ")
	cacheIDColumns = []string{"pid_id", "tid_id", "cat_id", "name_id", "grid_id", "block_id"}
)

// cacheInsert is the statement that stores the rows of an entry into the
// lean table target: $1 trace_id, $2 file_id, $3 rank, $4 the list that maps
// the entry's ids (at position id + 1) to the database's (remap).
func cacheInsert(target, parquet, where string) string {
	sel := []string{"$1", "$2", "$3"}
	for _, c := range strings.Split(cacheColumns, ", ") {
		if slices.Contains(cacheIDColumns, c) {
			c = fmt.Sprintf("($4::INTEGER[])[%s + 1]", c)
		}
		sel = append(sel, c)
	}
	return fmt.Sprintf(`INSERT INTO %s (%s) SELECT %s FROM read_parquet(%s)%s`,
		target, leanColumns, strings.Join(sel, ", "), quote(parquet), where)
}

// remap interns the strings of an entry and returns the list cacheInsert
// takes.
func (e *cacheEntry) remap(strs *dict) []int32 {
	var top int32
	for _, id := range e.strings.IDs {
		top = max(top, id)
	}
	m := make([]int32, top+1)
	for i, id := range e.strings.IDs {
		m[id] = strs.id(e.strings.Strings[i])
	}
	return m
}
