//go:build linux && cgo

package duck

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestHugePagesAdvice maps memory through the C code's mmap, as DuckDB's
// allocator does, with the advice on and off, and reads the mapping's
// flags from /proc/self/smaps: "hg" is MADV_HUGEPAGE's.
func TestHugePagesAdvice(t *testing.T) {
	t.Cleanup(func() { tuneAllocator(false) })
	for _, tc := range []struct {
		env    string
		inFile bool
		want   bool
	}{
		{"", true, true}, {"", false, false}, {"0", true, false}, {"1", false, true},
	} {
		t.Run(fmt.Sprintf("env=%q,file=%v", tc.env, tc.inFile), func(t *testing.T) {
			t.Setenv(HugePagesEnv, tc.env)
			tuneAllocator(tc.inFile)
			addr, unmap := testMapping(4 << 20)
			if addr == 0 {
				t.Fatal("mmap failed")
			}
			defer unmap()
			flags, ok := vmFlags(t, addr)
			if !ok {
				t.Fatalf("no mapping at %#x in /proc/self/smaps", addr)
			}
			if got := strings.Contains(" "+flags+" ", " hg "); got != tc.want {
				t.Errorf("VmFlags %q: huge-page advice %v, want %v", flags, got, tc.want)
			}
		})
	}
}

// TestFileDecay: a database in a file keeps freed pages fileDecayMs, one
// in memory as AllocatorConf says.
func TestFileDecay(t *testing.T) {
	t.Setenv(AllocatorEnv, "")
	t.Cleanup(func() { tuneAllocator(false) })
	for _, inFile := range []bool{true, false, true} {
		tuneAllocator(inFile)
		want := allocatorOpt("opt.dirty_decay_ms")
		if inFile {
			want = fileDecayMs
		}
		if got := arenaDecay(); got != want {
			t.Errorf("in a file %v: arena decay %d ms, want %d", inFile, got, want)
		}
	}
}

// vmFlags returns the VmFlags of the mapping that starts at addr: the
// last line of its block in smaps.
func vmFlags(t *testing.T, addr uintptr) (string, bool) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	start := fmt.Sprintf("%x-", addr)
	in := false
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		in = in || strings.HasPrefix(line, start)
		if in {
			if v, ok := strings.CutPrefix(line, "VmFlags:"); ok {
				return strings.TrimSpace(v), true
			}
		}
	}
	return "", false
}
