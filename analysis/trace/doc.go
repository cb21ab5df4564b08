// Package trace owns the trace model and the importer: it streams PyTorch
// profiler (Kineto) Chrome-trace JSON, plain or gzip-compressed, in the
// current object form, the 2021 form and the legacy bare-array form, and
// turns every event into a normalised Event (integer nanoseconds, a Kind and
// an API word, the hot args typed, the rest kept as compact JSON) handed to
// a sink one at a time. It also describes each file (FileInfo: identity,
// top-level metadata, producer, platform, capability flags, counts) and
// groups files into jobs and profiling sessions with their ranks (Discover,
// ResolveRank).
//
// It leaves to others what happens to the events: storing them (the DuckDB
// loader in internal/duck calls ParseFile), windows and step selection of
// LoadOptions (applied by the loader; the importer applies only NoPython),
// and every analysis. It imports only the standard library and builds for
// GOOS=wasip1.
//
// Files: event.go (Event, Kind, API), load.go (options, progress, results),
// parse.go (the streaming parser), source.go (reading, hashing, gunzip in a
// goroutine), timeconv.go (exact µs → ns), kind.go (Kind and API mapping),
// info.go (FileInfo and merged-trace coordinates), jobs.go (Discover,
// ResolveRank), errors.go (sentinel errors). Package synth beside it makes
// large synthetic traces from real ones.
//
// Throughput and memory: the parser reads each byte once (an event cut by
// the end of the buffer is parsed again after the refill), allocates only
// the strings it has not seen before, and holds one buffer of 1 MiB (more
// only for a single larger event) plus at most eight 256 KiB chunks in
// flight from the reader goroutine, whatever the file's size.
package trace
