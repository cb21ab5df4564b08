#!/bin/sh
# bench-scale.sh: how tracebook's cost grows with the trace. Prints one
# Markdown table: for each trace, the JSON size, the load into a database
# file (MB of JSON per second, parse cache off), and the report end to end
# (wall seconds, CPU seconds, peak RSS; parse cache off), timed by GNU time.
#
# Usage: scripts/bench-scale.sh [TRACES_DIR] [SCALE...]
#   TRACES_DIR  the shared traces (default ../shared/traces)
#   SCALE       copies of the vLLM H100 trace made by `tracebook synth`
#               (default: 5 21; 100 is about 4 GB of JSON, 250 about 10 GB:
#               they need that much free disk for the trace and minutes)
# $TRACEBOOK_BIN names a built tracebook to time instead of this tree's
# (to compare two builds side by side). $TRAINING_SCALES adds rows for
# copies of the resnet_2080ti training trace (30 steps a copy: 100 is
# 2.5 GB of JSON and 3,000 steps), whose shape differs from vLLM's: few
# python frames, an operator tree per step. Run on a quiet machine: the
# figures are single runs.
set -eu
cd "$(dirname "$0")/.."
traces=${1:-../shared/traces}
[ $# -gt 0 ] && shift
scales=${*:-5 21}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin=${TRACEBOOK_BIN:-$tmp/tracebook}
[ -n "${TRACEBOOK_BIN:-}" ] || go build -o "$bin" .

vllm=$traces/tracemap/vllm_h100_tp4_rank0/1_h100_1000isl_10osl_32con.pt.trace.json.gz

# json_bytes PATH: the uncompressed size of a file or of a folder's files.
json_bytes() {
	total=0
	for f in $(find "$1" -type f \( -name '*.json' -o -name '*.gz' \)); do
		case $f in
		*.gz) n=$(gzip -dc "$f" | wc -c) ;;
		*) n=$(wc -c <"$f") ;;
		esac
		total=$((total + n))
	done
	echo $total
}

# timed OUT CMD...: runs CMD under GNU time, leaving "wall cpu rss_kb" in OUT.
timed() {
	out=$1
	shift
	/usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$@" </dev/null >/dev/null 2>"$tmp/err" || { cat "$tmp/err" "$tmp/time"; exit 1; }
	awk '{printf "%s %.2f %s\n", $1, $2 + $3, $4}' "$tmp/time" >"$out"
}

echo "| trace | JSON (MB) | load (MB/s) | report wall (s) | report CPU (s) | report peak RSS (MB) |"
echo "|---|---:|---:|---:|---:|---:|"
row() {
	name=$1 path=$2
	bytes=$(json_bytes "$path")
	rm -f "$tmp"/db.duckdb*
	timed "$tmp/load" "$bin" load "$path" --db "$tmp/db.duckdb" --cache - -q
	rm -f "$tmp"/db.duckdb*
	timed "$tmp/report" "$bin" report "$path" -o "$tmp/r.html" --cache - -q
	read lwall lcpu lrss <"$tmp/load"
	read rwall rcpu rrss <"$tmp/report"
	awk -v n="$name" -v b="$bytes" -v lw="$lwall" -v rw="$rwall" -v rc="$rcpu" -v rr="$rrss" \
		'BEGIN {printf "| %s | %.0f | %.0f | %.2f | %.2f | %.0f |\n", n, b/1e6, b/1e6/lw, rw, rc, rr/1024}'
}
while read -r name dir; do
	case $name in '#'* | '') continue ;; esac
	if [ -e "$traces/$dir" ]; then row "$name" "$traces/$dir"; else echo "| $name | absent | | | | |"; fi
done <scripts/bench-traces.txt
# copies NAME SOURCE SCALE...: a row for each SCALE copies of SOURCE (its
# own variables: row sets name).
copies() {
	copy_of=$1 copy_src=$2
	shift 2
	[ -f "$copy_src" ] || return 0
	for n in "$@"; do
		"$bin" synth "$copy_src" -n "$n" -o "$tmp/x$n.json.gz" >/dev/null 2>&1
		row "$copy_of ×$n" "$tmp/x$n.json.gz"
		rm -f "$tmp/x$n.json.gz"
	done
}
# shellcheck disable=SC2086 # the scales are words
copies vllm_h100 "$vllm" $scales
# shellcheck disable=SC2086
copies resnet_2080ti "$traces/param/resnet_2080ti/resnet_kineto.json.gz" ${TRAINING_SCALES:-}
