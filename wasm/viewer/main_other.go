//go:build !wasip1

// Command viewer is the offline report's WebAssembly module. It only means
// something when built for WebAssembly; see main.go.
package main

import (
	"fmt"
	"os"
	"runtime"
)

func main() {
	fmt.Fprintf(os.Stderr, "viewer: this is the report's WebAssembly module; GOOS=%s is not its target. Build it with wasm/build.sh (GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared).\n", runtime.GOOS)
	os.Exit(2)
}
