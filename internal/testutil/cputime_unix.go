//go:build unix

package testutil

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time the test process has used so far, user and
// system, every thread (DuckDB's included). Benchmarks report it beside
// the wall clock: on a shared machine it moves much less with the load.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
