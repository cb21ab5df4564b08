//go:build !unix

package wasm_test

import "time"

// cpuTime is not measured here: the cpu-ms metrics read 0.
func cpuTime() time.Duration { return 0 }
