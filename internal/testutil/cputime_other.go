//go:build !unix

package testutil

import "time"

// CPUTime is not measured here: cpu-ms metrics read 0.
func CPUTime() time.Duration { return 0 }
