//go:build cgo

package crossview_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/cells"
)

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestZZTiming(t *testing.T) {
	db := load(t, "tracemap/vllm_h100_tp4_rank0")
	for range 4 {
		c0, w0 := cpuNow(), time.Now()
		if _, err := cells.CrossView(context.Background(), db, evidence.Filter{}, crossview.DefaultOptions()); err != nil {
			t.Fatal(err)
		}
		t.Logf("crossview cpu %v wall %v", cpuNow()-c0, time.Since(w0))
	}
}
