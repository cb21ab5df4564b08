package duck

import (
	"os"
	"runtime"
	"syscall"
)

// AllocatorEnv is the environment variable DuckDB's jemalloc reads its
// configuration from (Linux builds; the other platforms use the system
// allocator and ignore it). jemalloc reads it once, when the process
// starts, so a process cannot set it for itself: TuneAllocator re-executes.
const AllocatorEnv = "DUCKDB_JE_MALLOC_CONF"

// AllocatorConf is the configuration tracebook runs DuckDB's jemalloc
// with: one arena for every thread, pages freed for more than 100 ms
// handed back to the system, and none kept as "muzzy" (lazily freed).
// With jemalloc's defaults (8 arenas on 2 cores, pages kept for 10 s), the
// memory one statement frees on one thread is not reused by the next
// statement on another, and a report peaked with several times DuckDB's
// live memory resident. Measured in alternating runs of `tracebook
// report`: the 48 MB vLLM trace peaked at 0.79× the memory at 1.02× the
// wall, dlrm_8rank 0.84×, mtia 0.88×, xdit 0.93× (1.03-1.05× the wall),
// the 842 MB ×21 copy 0.86× at the same wall. Pages freed after 10 ms or
// at once cost more time (at once: 1.4× the wall) for little more.
const AllocatorConf = "narenas:1,dirty_decay_ms:100,muzzy_decay_ms:0"

// allocatorEnviron returns the environment to re-execute with (env with
// AllocatorConf added), or nil when env already sets AllocatorEnv, even to
// nothing: the user's own configuration, or a process already
// re-executed.
func allocatorEnviron(env []string) []string {
	for _, kv := range env {
		if len(kv) > len(AllocatorEnv) && kv[:len(AllocatorEnv)+1] == AllocatorEnv+"=" {
			return nil
		}
	}
	return append(env[:len(env):len(env)], AllocatorEnv+"="+AllocatorConf)
}

// TuneAllocator re-executes the running program with AllocatorConf as
// its jemalloc configuration, on Linux, unless the environment sets one
// already. It returns only when it did not re-execute (another platform,
// the configuration already set, or exec failing: the program then runs
// with jemalloc's defaults). Call it first in main, before any goroutine
// or file is started; the process keeps its id, arguments and open
// descriptors.
func TuneAllocator() {
	if runtime.GOOS != "linux" {
		return
	}
	env := allocatorEnviron(os.Environ())
	if env == nil {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	_ = syscall.Exec(exe, os.Args, env)
}
