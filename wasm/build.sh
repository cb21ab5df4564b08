#!/usr/bin/env bash
# Builds the offline report's viewer module: wasm/viewer as a GOOS=wasip1
# reactor (-buildmode=c-shared), gzip-compressed (by zopfli when installed)
# to wasm/viewer.wasm.gz, and that as a page carries it (base85) to
# wasm/viewer.wasm.gz.b85: `go build -tags viewer` embeds both
# (wasm/module_viewer.go).
#
#   wasm/build.sh           # from anywhere; prints the module's sizes
set -euo pipefail
cd "$(dirname "$0")/.."
out=wasm/viewer.wasm
# The flags are internal/buildtest's ViewerFlags, which say why inlining is
# off in the packages that mostly format text.
GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 go build -buildmode=c-shared -trimpath -ldflags="-s -w" \
	-gcflags=github.com/tracebook/tracebook/analysis/findings=-l \
	-gcflags=github.com/tracebook/tracebook/analysis/report=-l \
	-gcflags=github.com/tracebook/tracebook/analysis/diff=-l \
	-o "$out" ./wasm/viewer
# zopfli writes gzip about 5% smaller than gzip -9 (scripts/deps.sh
# installs it); either is read by the page's DecompressionStream.
if command -v zopfli >/dev/null 2>&1; then
	zopfli -c --i5 "$out" >"$out.gz.tmp"
else
	gzip -9 -n -c "$out" >"$out.gz.tmp"
fi
mv "$out.gz.tmp" "$out.gz"
# The module as a report page carries it (base85), embedded beside it, so
# that no report encodes it again (wasm/module_viewer.go).
go run ./wasm/internal/moduletext "$out.gz" "$out.gz.b85.tmp"
mv "$out.gz.b85.tmp" "$out.gz.b85"
echo "wasm/build.sh: $out $(wc -c <"$out") bytes, $out.gz $(wc -c <"$out.gz") bytes" >&2
