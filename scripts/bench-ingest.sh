#!/bin/sh
# bench-ingest.sh: time `tracebook load` on the two reference traces and
# report wall time, MB/s of uncompressed JSON and peak RSS (GNU time -v).
# For scale: HTA loads the 87 MB trace in 7.4 s at 621 MB peak and the 48 MB
# vLLM trace in 2.9 s at 304 MB.
#
# Usage: scripts/bench-ingest.sh [TRACES_DIR]   (default ../shared/traces)
# Each trace is loaded three ways: into a fresh database file with the parse
# cache off (parse), into a fresh database file from a warm parse cache
# (cached-db), and into memory by `tracebook query` with the cache off
# (memory: what HTA's figures compare with, as HTA loads into memory).
set -eu
cd "$(dirname "$0")/.."
traces=${1:-../shared/traces}
bin=$(mktemp -d)/tracebook
go build -o "$bin" .
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$(dirname "$bin")"' EXIT
for spec in \
	"hta/mtia_single_rank/mtia_rank_0.json.gz 86940133" \
	"tracemap/vllm_h100_tp4_rank0/1_h100_1000isl_10osl_32con.pt.trace.json.gz 47947181"; do
	set -- $spec
	f=$traces/$1
	bytes=$2
	[ -f "$f" ] || { echo "skip: $f not found"; continue; }
	for mode in parse cached-db memory; do
		case $mode in
		parse) args="--db $tmp/a.duckdb --cache -" ;;
		cached-db) "$bin" load "$f" --db "$tmp/warm.duckdb" --cache "$tmp/cache" -q >/dev/null
			rm -f "$tmp"/warm.duckdb*
			args="--db $tmp/b.duckdb --cache $tmp/cache" ;;
		memory) args="" ;;
		esac
		rm -f "$tmp"/a.duckdb* "$tmp"/b.duckdb*
		if [ "$mode" = memory ]; then
			/usr/bin/time -v "$bin" query "$f" --cache - -q -e 'SELECT count(*) FROM events' >"$tmp/out" 2>"$tmp/time" || { cat "$tmp/time"; exit 1; }
		else
			/usr/bin/time -v "$bin" load "$f" $args -q >"$tmp/out" 2>"$tmp/time" || { cat "$tmp/time"; exit 1; }
		fi
		wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$tmp/time")
		rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tmp/time")
		cpu=$(awk -F': ' '/User time/ {u=$2} /System time/ {s=$2} END {print u+s}' "$tmp/time")
		secs=$(echo "$wall" | awk -F: '{ if (NF == 3) print $1*3600+$2*60+$3; else print $1*60+$2 }')
		printf '%-60s %-9s wall %6.2fs  cpu %6.2fs  %6.1f MB/s  peak RSS %5d MB\n' "$1" "$mode" "$secs" "$cpu" \
			"$(echo "$bytes $secs" | awk '{print $1/1e6/$2}')" "$((rss / 1024))"
	done
done

# Synthetic traces made by `tracebook synth` from the python-heavy vLLM H100
# trace: 21 copies are about 1 GB of JSON; SYNTH_10G=1 adds 210 copies
# (about 10 GB; needs ~1 GB of disk for the .gz and time).
src=$traces/tracemap/vllm_h100_tp4_rank0/1_h100_1000isl_10osl_32con.pt.trace.json.gz
copies="21"
[ "${SYNTH_10G:-0}" = 1 ] && copies="21 210"
if [ -f "$src" ]; then
	for n in $copies; do
		"$bin" synth "$src" -n "$n" -o "$tmp/synth$n.json.gz" 2>/dev/null
		bytes=$(gzip -dc "$tmp/synth$n.json.gz" | wc -c)
		rm -f "$tmp"/a.duckdb*
		/usr/bin/time -v "$bin" load "$tmp/synth$n.json.gz" --db "$tmp/a.duckdb" --cache - -q >"$tmp/out" 2>"$tmp/time" || { cat "$tmp/time"; exit 1; }
		wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$tmp/time")
		rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tmp/time")
		cpu=$(awk -F': ' '/User time/ {u=$2} /System time/ {s=$2} END {print u+s}' "$tmp/time")
		secs=$(echo "$wall" | awk -F: '{ if (NF == 3) print $1*3600+$2*60+$3; else print $1*60+$2 }')
		printf '%-60s %-9s wall %6.2fs  cpu %6.2fs  %6.1f MB/s  peak RSS %5d MB (JSON %d MB)\n' "synth x$n of vllm_h100 (.json.gz)" parse "$secs" "$cpu" \
			"$(echo "$bytes $secs" | awk '{print $1/1e6/$2}')" "$((rss / 1024))" "$((bytes / 1000000))"
		rm -f "$tmp/synth$n.json.gz" "$tmp"/a.duckdb*
	done
fi
