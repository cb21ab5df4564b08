//go:build linux && cgo

package duck

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// TestAllocatorConfigured checks that the jemalloc DuckDB runs on took
// the compiled-in configuration: the weak symbol was replaced at link
// time and read before the first allocation.
func TestAllocatorConfigured(t *testing.T) {
	if os.Getenv(AllocatorEnv) != "" {
		t.Skipf("$%s is set: jemalloc runs with the user's options over these", AllocatorEnv)
	}
	if got := compiledAllocatorConf(); got != AllocatorConf {
		t.Fatalf("compiled-in configuration %q, want AllocatorConf %q", got, AllocatorConf)
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

// TestAllocatorEnvOverrides checks that $DUCKDB_JE_MALLOC_CONF overrides
// the option it names and leaves the others compiled in: jemalloc reads it
// in a process that starts with it set, this test binary run again.
func TestAllocatorEnvOverrides(t *testing.T) {
	if v := os.Getenv("TB_ALLOCATOR_CHILD"); v != "" {
		want, _ := strconv.ParseInt(v, 10, 64)
		if got := allocatorOpt("opt.narenas"); got != want {
			t.Errorf("opt.narenas = %d under $%s=%q, want %d", got, AllocatorEnv, os.Getenv(AllocatorEnv), want)
		}
		if got := allocatorOpt("opt.dirty_decay_ms"); got != 100 {
			t.Errorf("opt.dirty_decay_ms = %d, want the compiled-in 100 (the variable does not name it)", got)
		}
		if got := compiledAllocatorConf(); got != AllocatorConf+",narenas:"+v {
			t.Errorf("compiled-in configuration %q, want AllocatorConf with the variable appended", got)
		}
		if os.Getenv(AllocatorEnv) == "" {
			t.Errorf("$%s is gone from Go's environment: the program's children would lose it", AllocatorEnv)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestAllocatorEnvOverrides$", "-test.count=1")
	cmd.Env = append(os.Environ(), AllocatorEnv+"=narenas:3", "TB_ALLOCATOR_CHILD=3")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the test binary under $%s=narenas:3: %v\n%s", AllocatorEnv, err, out)
	}
}
