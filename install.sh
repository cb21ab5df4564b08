#!/usr/bin/env bash
# Builds the viewer module and the tracebook binary, installs the binary,
# and registers the kernelspec with Jupyter, installing Jupyter from Debian's
# packages when it is missing (scripts/deps.sh: the notebook, nbconvert,
# and the `jupyter kernelspec` and `jupyter console` commands). Needs Go 1.26 (the Go module proxy serves the
# dependencies).
#
#   ./install.sh            # binary to /usr/local/bin (root) or ~/.local/bin
#   PREFIX=/opt/tb ./install.sh
set -euo pipefail
cd "$(dirname "$0")"
export PATH="$PATH:/usr/local/go/bin"

if ! command -v go >/dev/null 2>&1; then
	echo "install: Go 1.26 or newer is needed (https://go.dev/dl); /usr/local/go/bin is searched too" >&2
	exit 1
fi

scripts/deps.sh --jupyter-only

tags=""
if [ -x wasm/build.sh ]; then
	echo "install: building the viewer module" >&2
	wasm/build.sh
	tags="-tags viewer"
fi

echo "install: building tracebook" >&2
mkdir -p bin
go build $tags -trimpath -o bin/tracebook .

if [ -n "${PREFIX:-}" ]; then
	dest="$PREFIX/bin"
elif [ "$(id -u)" -eq 0 ]; then
	dest=/usr/local/bin
else
	dest="$HOME/.local/bin"
fi
mkdir -p "$dest"
install -m 0755 bin/tracebook "$dest/tracebook"
echo "install: $dest/tracebook" >&2

"$dest/tracebook" install
case ":$PATH:" in
*":$dest:"*) ;;
*) echo "install: add $dest to PATH" >&2 ;;
esac
