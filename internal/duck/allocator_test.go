//go:build linux && cgo

package duck

import (
	"os"
	"testing"
)

// TestAllocatorConfigured checks that the jemalloc DuckDB runs on took
// the compiled-in configuration: the weak symbol was replaced at link
// time and read before the first allocation.
func TestAllocatorConfigured(t *testing.T) {
	if got := compiledAllocatorConf(); got != AllocatorConf {
		t.Fatalf("compiled-in configuration %q, want AllocatorConf %q", got, AllocatorConf)
	}
	if os.Getenv(AllocatorEnv) != "" {
		t.Skipf("$%s is set: jemalloc runs with the user's options", AllocatorEnv)
	}
	for _, c := range []struct {
		opt  string
		want int64
	}{
		{"opt.narenas", 1},
		{"opt.dirty_decay_ms", 100},
		{"opt.muzzy_decay_ms", 0},
	} {
		if got := allocatorOpt(c.opt); got != c.want {
			t.Errorf("%s = %d, want %d", c.opt, got, c.want)
		}
	}
}

// TestAllocatorBackgroundThread checks that Open turns on jemalloc's
// background purging thread (allocatorSettings).
func TestAllocatorBackgroundThread(t *testing.T) {
	db, err := Open("", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if !allocatorBackground() {
		t.Fatal("jemalloc's background_thread is off after Open, want on (allocator_background_threads)")
	}
}
