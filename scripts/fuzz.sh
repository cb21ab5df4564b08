#!/usr/bin/env bash
# fuzz.sh [SECONDS]: run every Go fuzz target of the module for SECONDS
# each (default 60), one after the other, and stop at the first failure.
# A failing input is written under the package's testdata/fuzz/ by Go:
# rerun it with `go test ./PKG -run=FuzzX/NAME`, fix the code, and commit
# the input as a regression test.
#
# New coverage is minimised for at most 5 s (Go's default is 60 s): the
# trace parser checks every input twice, once split into tiny buffers, and
# with the default its first minutes go to minimising one seed-sized input
# (about 16 runs in a minute, against 30,000 with this limit).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
for dir in $(go list -f '{{.Dir}}' ./...); do
	for fn in $(cat "$dir"/*_test.go 2>/dev/null | sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p'); do
		echo "== ${dir#"$PWD"/} $fn"
		go test "$dir" -run '^$' -fuzz "^$fn\$" -fuzztime "${secs}s" -fuzzminimizetime 5s -parallel 1
	done
done
