//go:build cgo && !linux

package duck

// allocatorSettings: DuckDB builds for other platforms use the system
// allocator, which these settings do not tune.
var allocatorSettings = map[string]string{}

// tuneAllocator: the huge-page advice and jemalloc's decay are Linux's
// (hugepages.go).
func tuneAllocator(inFile bool) {}
