//go:build viewer

package wasm

import _ "embed"

// module is the viewer module built by wasm/build.sh (gzip-compressed wasm).
//
//go:embed viewer.wasm.gz
var module []byte

// moduleText is module as a page carries it (ModuleText), which
// wasm/build.sh writes beside it: a report embeds it as it is, where
// encoding the module took 27 ms of every report's process (7 reports of
// a 13-event trace, pprof).
//
//go:embed viewer.wasm.gz.b85
var moduleText string
