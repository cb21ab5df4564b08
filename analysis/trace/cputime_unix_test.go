//go:build linux || darwin

package trace

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user + system, all threads) the process used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
