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

// tb_test_map maps len bytes through the wrapped mmap (the test reads the
// mapping's flags); NULL where it fails.
static void *tb_test_map(size_t len) {
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void tb_test_unmap(void *p, size_t len) { munmap(p, len); }
*/
import "C"

import "os"

// HugePagesEnv turns the huge-page advice on ("1") or off ("0") for every
// database; unset, it is on for a database in a file and off for one in
// memory (setHugePages).
const HugePagesEnv = "TRACEBOOK_HUGEPAGES"

// setHugePages decides whether DuckDB's new memory mappings are advised
// to use transparent huge pages, for a database in a file (inFile) or in
// memory. A page fault costs about 11 µs on this project's machine (a
// virtual machine), and a report touches its memory page by page: the
// 48 MB vLLM report into a database file took 74,000 faults, 29,000-35,000
// with the advice, and ran in 0.86× the wall and 0.83× the CPU at 1.12×
// the peak (alternating pairs, medians); the ×21 copy in 0.91× the wall
// at the same peak. A database in memory keeps 4 KiB pages: the advice
// took the in-memory vLLM report to 0.83× the wall but 1.14× the peak
// (dlrm_8rank 0.81× and 1.19×: a 2 MiB page is resident whole where a few
// of its 4 KiB pages were touched), and xdit's over half of HTA's peak.
// HugePagesEnv overrides the choice either way (README, Large traces).
func setHugePages(inFile bool) {
	on := inFile
	switch os.Getenv(HugePagesEnv) {
	case "1":
		on = true
	case "0":
		on = false
	}
	if on {
		C.tb_set_hugepages(1)
	} else {
		C.tb_set_hugepages(0)
	}
}

// testMapping maps n bytes through the wrapped mmap and returns its
// address and a function that unmaps it.
func testMapping(n int) (uintptr, func()) {
	p := C.tb_test_map(C.size_t(n))
	if p == nil {
		return 0, func() {}
	}
	return uintptr(p), func() { C.tb_test_unmap(p, C.size_t(n)) }
}
