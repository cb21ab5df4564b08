#!/usr/bin/env bash
# Installs, from Debian's packages, what the notebook side and the browser
# tests need when it is missing: Jupyter (jupyter-client with its
# jupyter-kernelspec command, jupyter-console, nbclient, nbconvert, the
# classic notebook), zopfli and Chromium. Idempotent; needs root (or sudo) only
# when something is missing.
set -euo pipefail

need=()
py=/usr/bin/python3
if ! [ -x "$py" ] || ! "$py" -c 'import jupyter_client, nbclient, nbconvert, notebook, jsonschema' 2>/dev/null; then
	need+=(python3-jupyter-client python3-nbclient python3-nbconvert python3-notebook jupyter-notebook python3-jsonschema)
fi
# The command-line tools live in packages of their own: jupyter-client has
# jupyter-kernelspec (`jupyter kernelspec list`), jupyter-console the console.
command -v jupyter-kernelspec >/dev/null 2>&1 || need+=(jupyter-client)
command -v jupyter-console >/dev/null 2>&1 || need+=(jupyter-console)
# zopfli compresses the report's viewer module (wasm/build.sh) 5% smaller
# than gzip -9.
command -v zopfli >/dev/null 2>&1 || need+=(zopfli)
if [ "${1:-}" != "--jupyter-only" ] && ! command -v chromium >/dev/null 2>&1; then
	need+=(chromium)
fi
if [ ${#need[@]} -eq 0 ]; then
	exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then sudo=sudo; else
		echo "deps: missing ${need[*]} and not root; install them with apt-get" >&2
		exit 1
	fi
fi
echo "deps: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >&2
$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
