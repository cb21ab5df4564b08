//go:build cgo && !linux

package duck

// allocatorSettings: DuckDB builds for other platforms use the system
// allocator, which these settings do not tune.
var allocatorSettings = map[string]string{}

// setHugePages: the huge-page advice is Linux's (hugepages.go).
func setHugePages(inFile bool) {}
