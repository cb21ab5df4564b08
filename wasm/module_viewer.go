//go:build viewer

package wasm

import _ "embed"

// module is the viewer module built by wasm/build.sh (gzip-compressed wasm).
//
//go:embed viewer.wasm.gz
var module []byte
