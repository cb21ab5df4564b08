//go:build linux && cgo

package duck

/*
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

// The configuration DuckDB's jemalloc reads when it starts, the last of
// its sources: after the one DuckDB writes into duckdb_je_malloc_conf
// and after $DUCKDB_JE_MALLOC_CONF, whose options it would override. The
// bundled jemalloc declares this symbol weak, so this definition replaces
// its empty default at link time. It starts as AllocatorConf (the test
// reads both); tb_allocator_env appends $DUCKDB_JE_MALLOC_CONF to it, so
// that an option the variable names wins, as the last one named does.
static char tb_allocator_conf[4096] = "narenas:1,dirty_decay_ms:100,muzzy_decay_ms:0";
const char *duckdb_je_malloc_conf_2_conf_harder = tb_allocator_conf;

// tb_allocator_env runs before the program's C++ static initialisers
// (constructor priority 101), so before DuckDB's first allocation starts
// jemalloc. The variable stays in the environment (unsetting it here
// takes it from Go's too, which reads the same array after this runs, and
// from the program's children), so jemalloc reads its options twice: an
// invalid one is reported twice. A variable too long to fit is left out
// whole.
__attribute__((constructor(101))) static void tb_allocator_env(void) {
	const char *env = getenv("DUCKDB_JE_MALLOC_CONF");
	size_t n = strlen(tb_allocator_conf);
	if (env != NULL && env[0] != '\0' && n + 1 + strlen(env) < sizeof tb_allocator_conf) {
		tb_allocator_conf[n] = ',';
		strcpy(tb_allocator_conf + n + 1, env);
	}
}

int duckdb_je_mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);

// tb_allocator_opt reads a jemalloc option of type ssize_t or unsigned;
// -1 where jemalloc does not know it.
static long long tb_allocator_opt(const char *name) {
	ssize_t v = 0;
	size_t n = sizeof v;
	if (duckdb_je_mallctl(name, &v, &n, NULL, 0) == 0) {
		return (long long)v;
	}
	unsigned u = 0;
	n = sizeof u;
	if (duckdb_je_mallctl(name, &u, &n, NULL, 0) == 0) {
		return (long long)u;
	}
	return -1;
}

// tb_allocator_bool reads a jemalloc boolean (such as background_thread):
// 1 or 0, -1 where jemalloc does not know it.
static int tb_allocator_bool(const char *name) {
	_Bool v = 0;
	size_t n = sizeof v;
	if (duckdb_je_mallctl(name, &v, &n, NULL, 0) == 0) {
		return v ? 1 : 0;
	}
	return -1;
}
*/
import "C"

import "unsafe"

// AllocatorEnv is the environment variable DuckDB's jemalloc reads its
// configuration from (Linux builds; the other platforms use the system
// allocator). An option it names overrides AllocatorConf's: jemalloc
// reads the compiled-in configuration after the variable, so the variable
// is appended to it (tb_allocator_env above); read alone, it changed
// nothing that AllocatorConf names.
const AllocatorEnv = "DUCKDB_JE_MALLOC_CONF"

// AllocatorConf is the configuration tracebook's processes run DuckDB's
// jemalloc with, compiled in (duckdb_je_malloc_conf_2_conf_harder above):
// one arena for every thread, pages freed for more than 100 ms handed
// back to the system, and none kept as "muzzy" (lazily freed). An
// earlier build measured it against what it took for jemalloc's defaults
// (8 arenas on 2 cores, pages kept for 10 s, where the memory one
// statement freed on one thread was not reused by the next statement on
// another): 0.79× the peak of the 48 MB vLLM report at 1.02× the wall
// (dlrm_8rank 0.84×, mtia 0.88×, xdit 0.93×, the 842 MB ×21 copy 0.86×);
// pages freed after 10 ms or at once cost more time (at once: 1.4× the
// wall) for little more. DuckDB sets a configuration of its own (in this build, on 2 cores:
// "oversize_threshold:268435456,dirty_decay_ms:1000,muzzy_decay_ms:1000,
// narenas:2,max_background_threads:1"), against which this one gives the
// 48 MB vLLM report 0.83× the peak (200.7 against 241.8 MiB) at 1.04× the
// wall, dlrm_8rank 0.81× (155.3 against 191.7 MiB) at 1.03× (7
// alternating pairs each, DuckDB's set through AllocatorEnv). An earlier
// comparison found the same peaks, but had set DuckDB's through
// AllocatorEnv before the variable could override this configuration:
// both sides ran this one.
//
// It used to be set by re-executing the program with AllocatorEnv set,
// since jemalloc reads its configuration before main; the compiled-in
// symbol does the same without the second start (the 8-rank dlrm report
// in 0.99× the wall, medians of 9 alternating pairs).
const AllocatorConf = "narenas:1,dirty_decay_ms:100,muzzy_decay_ms:0"

// allocatorSettings are the DuckDB settings Open gives every database
// for this allocator. allocator_background_threads hands jemalloc's
// purging of freed pages (AllocatorConf's 100 ms decay) to a background
// thread instead of the threads that allocate, which had purged inline
// after statement after statement of a report (madvise calls and their
// TLB flushes in perf; the page faults stayed about the same).
// Measured against it off (alternating pairs, medians): the 48 MB vLLM
// report 0.90× the wall and 0.89× the CPU at 1.08× the peak (9 pairs);
// dlrm_8rank 0.90× and 0.91× at 1.10×, mtia 0.96× and 0.96× at 0.97×,
// xdit 0.92× and 0.93× at 1.05×, the ×5 copy 0.92× at 0.97× (5 pairs
// each); the ×21 copy 0.98× and 0.96× at 1.02× (3 pairs).
var allocatorSettings = map[string]string{"allocator_background_threads": "true"}

// allocatorBackground says whether jemalloc's background purging thread
// is on (the test reads it).
func allocatorBackground() bool {
	cs := C.CString("background_thread")
	defer C.free(unsafe.Pointer(cs))
	return C.tb_allocator_bool(cs) == 1
}

// compiledAllocatorConf is the configuration compiled into the program.
func compiledAllocatorConf() string { return C.GoString(C.duckdb_je_malloc_conf_2_conf_harder) }

// allocatorOpt is the value jemalloc runs with for the option name (such
// as "opt.narenas"), or -1 where it has none.
func allocatorOpt(name string) int64 {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	return int64(C.tb_allocator_opt(cs))
}
