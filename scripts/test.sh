#!/usr/bin/env bash
# The whole test suite: formatting, vet, the wasm build of the analysis
# core, every Go test (real DuckDB, real zmq sockets, the viewer module under
# wazero, headless Chromium), then the real Jupyter clients against the
# installed kernel. Installs what it needs from Debian's packages first.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

scripts/deps.sh

echo "== gofmt"
bad=$(gofmt -s -l $(git ls-files '*.go' | grep -v '^testdata/') 2>&1 || true)
if [ -n "$bad" ]; then
	echo "gofmt -s would change:"; echo "$bad"; exit 1
fi

echo "== go vet"
go vet ./...

echo "== GOOS=wasip1 GOARCH=wasm go build ./analysis/..."
GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 go build ./analysis/...

echo "== go test"
go test -timeout 25m ./...

if [ -x tests/jupyter/run.sh ]; then
	echo "== real Jupyter clients"
	tests/jupyter/run.sh
fi
