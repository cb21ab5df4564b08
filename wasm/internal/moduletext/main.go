// Command moduletext writes the viewer module as a report page carries it
// (wasm.ModuleText): wasm/build.sh runs it on wasm/viewer.wasm.gz, and
// `go build -tags viewer` embeds the result (wasm/module_viewer.go), so
// that no report encodes the module again.
//
//	go run ./wasm/internal/moduletext MODULE.wasm.gz OUT
package main

import (
	"fmt"
	"os"

	"github.com/tracebook/tracebook/wasm"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: moduletext MODULE.wasm.gz OUT")
		os.Exit(2)
	}
	gz, err := os.ReadFile(os.Args[1])
	if err == nil && len(gz) == 0 {
		err = fmt.Errorf("%s is empty", os.Args[1])
	}
	if err == nil {
		err = os.WriteFile(os.Args[2], []byte(wasm.ModuleText(gz)), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "moduletext:", err)
		os.Exit(1)
	}
}
