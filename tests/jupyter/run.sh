#!/usr/bin/env bash
# Real Jupyter clients against the real kernel: builds tracebook, registers
# it in a temporary Jupyter data dir, then runs the jupyter_client
# conformance suite, `jupyter kernelspec list` and `jupyter console`,
# executes every notebook with nbconvert, and opens the quickstart notebook
# in the classic Notebook with headless Chromium.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
export PATH="$PATH:/usr/local/go/bin"
py=/usr/bin/python3

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
go build -o "$work/bin/tracebook" .
"$work/bin/tracebook" install --prefix "$work/jupyter" >/dev/null
export JUPYTER_PATH="$work/jupyter/share/jupyter"
export JUPYTER_RUNTIME_DIR="$work/runtime"
export JUPYTER_CONFIG_DIR="$work/config"
export JUPYTER_DATA_DIR="$work/data"
export TRACEBOOK_TESTDATA="$root/testdata"
export XDG_CACHE_HOME="$work/cache"
mkdir -p "$JUPYTER_RUNTIME_DIR" "$JUPYTER_CONFIG_DIR" "$JUPYTER_DATA_DIR"

passed=0
failed=0
step() {
	local name="$1"; shift
	echo "-- $name"
	if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $name"; fi
}

step "jupyter_client conformance" "$py" tests/jupyter/conformance_test.py
step "jupyter kernelspec list and jupyter console" "$py" tests/jupyter/console_check.py

mkdir -p "$root/test-artifacts"
for nb in notebooks/*.ipynb; do
	[ -e "$nb" ] || continue
	step "nbconvert --execute $nb" "$py" -m nbconvert --to notebook --execute \
		--ExecutePreprocessor.kernel_name=tracebook --ExecutePreprocessor.timeout=300 \
		--output-dir "$work/executed" "$nb"
done
step "nbconvert outputs match tracebook run's" "$py" tests/jupyter/parity.py "$work/executed" notebooks

if command -v chromium >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 && [ -f tests/browser/notebook.test.mjs ]; then
	(cd tests/browser && npm ci --no-audit --no-fund --silent >/dev/null)
	step "classic Notebook in headless Chromium" node --test tests/browser/notebook.test.mjs
else
	echo "-- skipping the browser test: chromium or npm missing"
fi

echo "jupyter: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
