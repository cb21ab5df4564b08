//go:build linux && cgo

package duck

/*
#cgo LDFLAGS: -Wl,--wrap=mmap
#include <stddef.h>
#include <sys/mman.h>
#include <sys/types.h>

// Every mmap call of the C and C++ code linked into the program (DuckDB's
// jemalloc maps its memory with it) comes here: the linker's --wrap above
// renames the calls, and __real_mmap is the C library's. Go's runtime
// maps its heap with its own system calls, which this does not see.
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);

// tb_hugepages: whether an anonymous mapping of 2 MiB or more is advised
// to use transparent huge pages (MADV_HUGEPAGE: the kernel then backs each
// 2 MiB of it with one page on first touch, where the system's setting is
// "madvise" or "always"). Set by Open before DuckDB allocates for the
// database.
static volatile int tb_hugepages = 0;

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
	void *p = __real_mmap(addr, len, prot, flags, fd, off);
	if (tb_hugepages && p != MAP_FAILED && (flags & MAP_ANONYMOUS) && len >= (size_t)2 << 20) {
		madvise(p, len, MADV_HUGEPAGE);
	}
	return p;
}

static void tb_set_hugepages(int on) { tb_hugepages = on; }

int duckdb_je_mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);

// tb_set_decay sets how long jemalloc keeps freed pages before it hands
// them back (its one arena's, and those it makes later); 0 when both took.
static int tb_set_decay(long ms) {
	ssize_t v = ms;
	int a = duckdb_je_mallctl("arenas.dirty_decay_ms", NULL, NULL, &v, sizeof v);
	int b = duckdb_je_mallctl("arena.0.dirty_decay_ms", NULL, NULL, &v, sizeof v);
	return a != 0 ? a : b;
}

// tb_decay reads arena 0's decay; -1 where jemalloc does not say.
static long tb_decay(void) {
	ssize_t v = 0;
	size_t n = sizeof v;
	return duckdb_je_mallctl("arena.0.dirty_decay_ms", &v, &n, NULL, 0) == 0 ? (long)v : -1;
}

// tb_test_map maps len bytes through the wrapped mmap (the test reads the
// mapping's flags); NULL where it fails.
static void *tb_test_map(size_t len) {
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void tb_test_unmap(void *p, size_t len) { munmap(p, len); }
*/
import "C"

import (
	"os"
	"strings"
)

// HugePagesEnv turns the huge-page advice on ("1") or off ("0") for every
// database; unset, it is on for a database in a file and off for one in
// memory (tuneAllocator).
const HugePagesEnv = "TRACEBOOK_HUGEPAGES"

// fileDecayMs is how long, in ms, jemalloc keeps freed pages for a
// database in a file, where AllocatorConf's 100 ms is for one in memory.
const fileDecayMs = 1000

// tuneAllocator sets DuckDB's allocator for a database in a file (inFile)
// or in memory, before DuckDB allocates for it. A page fault costs about
// 11 µs on this project's machine (a virtual machine), and a report
// touches its memory page by page; DuckDB's memory faults most.
//
// In a file, its new mappings are advised to use transparent huge pages
// (one 2 MiB page per first touch) and freed pages are kept 1 s (a purge
// splits a huge page): the ×21 copy took 89,000-109,000 faults instead of
// 390,000 and reported in 0.87× the wall at 1.04× the peak, ×5 in 0.81×
// at 1.13×, the 48 MB vLLM report into a file in 0.82× at 1.18×
// (alternating pairs, medians; README, Large traces). Kept 5 s, ×21 took
// 0.86× the wall of 100 ms, but ×5 1.17× the peak.
//
// In memory, neither: the advice took the in-memory vLLM report to 0.83×
// the wall but 1.14× the peak (dlrm_8rank 0.81× and 1.19×: a 2 MiB page is
// resident whole where a few of its 4 KiB pages were touched), and xdit's
// over half of HTA's peak. HugePagesEnv overrides the advice either way;
// a decay that AllocatorEnv names is left as it says.
func tuneAllocator(inFile bool) {
	huge := inFile
	switch os.Getenv(HugePagesEnv) {
	case "1":
		huge = true
	case "0":
		huge = false
	}
	if huge {
		C.tb_set_hugepages(1)
	} else {
		C.tb_set_hugepages(0)
	}
	if strings.Contains(os.Getenv(AllocatorEnv), "dirty_decay_ms") {
		return
	}
	decay := allocatorOpt("opt.dirty_decay_ms")
	if inFile {
		decay = fileDecayMs
	}
	C.tb_set_decay(C.long(decay))
}

// arenaDecay is the decay jemalloc's arena 0 runs with, in ms (-1 where it
// does not say).
func arenaDecay() int64 { return int64(C.tb_decay()) }

// testMapping maps n bytes through the wrapped mmap and returns its
// address and a function that unmaps it.
func testMapping(n int) (uintptr, func()) {
	p := C.tb_test_map(C.size_t(n))
	if p == nil {
		return 0, func() {}
	}
	return uintptr(p), func() { C.tb_test_unmap(p, C.size_t(n)) }
}
