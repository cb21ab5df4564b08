// Package duck is tracebook's engine: the only package that links DuckDB
// (through cgo). It opens a database, creates the schema and the views of
// package sql, loads traces into it (parsed by analysis/trace, streamed into
// DuckDB chunk by chunk, cached on disk as Parquet), and runs SQL, returning
// analysis/table values.
//
// It owns storage and execution only. What an event means is
// analysis/trace's; what the evidence presets compute is in sql/<area>.sql
// and analysis/evidence; how a result is shown is the notebook layer's
// (cells) and the report's. Built without cgo, the package compiles to a
// stub whose Open says how to get a working build (duck_nocgo.go).
//
// # Files
//
//   - api.go: the types both builds share (Options, Trace, errors).
//   - duck.go: Open, Close, Query, Exec, Columns, Traces, Drop.
//   - duck_nocgo.go: the stub built without cgo.
//   - load.go: Load, one transaction per load, window and step slices.
//   - scan.go: the table function that streams parsed events into DuckDB.
//   - strings.go: the lean store's strings (tb_strings), stored once and
//     referenced by id; the conversion of databases written before it.
//   - cache.go: the parse cache, one Parquet file per trace file.
//   - dataset.go: the store as a Parquet dataset, one folder per trace and rank.
//   - importer.go: the seam to analysis/trace.
//   - allocator.go: the configuration of DuckDB's jemalloc, compiled in.
//   - hugepages.go: DuckDB's memory for a database in a file: huge-page
//     advice on its mappings (mmap wrapped at link time) and a longer decay.
package duck

import (
	"errors"
	"path/filepath"
)

// Options configure Open. The zero value is a good default.
type Options struct {
	// MemoryLimit is DuckDB's memory_limit ("8GB", "75%" is not accepted:
	// give bytes with a unit). "" = half of the machine's (or cgroup's) memory.
	MemoryLimit string `json:"memory_limit,omitempty"`
	// TempDirectory is where DuckDB spills when a load or a query needs more
	// than MemoryLimit. "" = FILE.tmp beside a database file, or a fresh
	// directory under os.TempDir() for an in-memory database (removed by Close).
	TempDirectory string `json:"temp_directory,omitempty"`
	// Scratch, with path "", makes the database a file in a fresh
	// temporary directory that Close removes, instead of memory: DuckDB
	// keeps the events compressed in the file and holds only what queries
	// need (within MemoryLimit) in memory. For traces too large to hold.
	Scratch bool `json:"scratch,omitempty"`
	// Threads is DuckDB's worker thread count; 0 = one per core. Loads
	// stream each file in with one thread whatever this says (see Load).
	Threads int `json:"threads,omitempty"`
	// CacheDir holds the parse cache: "" = $XDG_CACHE_HOME/tracebook (the
	// user cache directory), "-" = no cache.
	CacheDir string `json:"cache_dir,omitempty"`
}

// Trace summarises one loaded trace.
type Trace struct {
	Name     string   `json:"name"`
	Files    int      `json:"files"`
	Ranks    []int    `json:"ranks"`
	Events   int64    `json:"events"`
	Paths    []string `json:"paths"`
	Session  string   `json:"session,omitempty"`
	Producer string   `json:"producer"`
	Platform string   `json:"platform"`
	Slice    string   `json:"slice,omitempty"` // the --window/--steps slice loaded, "" = everything
}

// ErrNoTrace is returned by Drop for a name that is not loaded.
var ErrNoTrace = errors.New("no such trace")

// ErrDuplicateTrace is returned by Load when the name is taken.
var ErrDuplicateTrace = errors.New("a trace with this name is already loaded")

// ErrNoCgo is what every entry point of a build without cgo returns.
var ErrNoCgo = errors.New("tracebook was built without cgo (CGO_ENABLED=0), and its DuckDB engine needs cgo: rebuild with CGO_ENABLED=1 and a C compiler (see install.sh)")

// IsDataset reports whether dir is a Parquet dataset: a directory with at
// least one trace=*/rank=*/events.parquet.
func IsDataset(dir string) bool {
	m, err := filepath.Glob(filepath.Join(dir, "trace=*", "rank=*", "events.parquet"))
	return err == nil && len(m) > 0
}
