//go:build !viewer

package wasm

// module is empty in a build without the viewer tag: reports are static and
// say so. Build the module with wasm/build.sh, then go build -tags viewer
// (./install.sh does both).
var module []byte

// moduleText is empty with it (module_viewer.go).
var moduleText string
