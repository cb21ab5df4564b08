//go:build unix

package wasm_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the test process has used (user + system). On a
// shared machine it moves less with the other load than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
