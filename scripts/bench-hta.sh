#!/bin/sh
# bench-hta.sh: tracebook's report against Meta's Holistic Trace Analysis on
# the shared traces that issue #14's targets name, in one sitting. Machines
# (and one machine from day to day) differ by up to 2x, so a ratio holds
# only when both tools run in turn on the same machine. Prints one Markdown
# table: per trace, the medians of RUNS runs of each (in turn: HTA,
# tracebook, HTA, ...) of the wall seconds and the peak RSS (GNU time), and
# the ratios.
#
# Usage: HTA_SRC=DIR scripts/bench-hta.sh [TRACES_DIR] [RUNS]
#   HTA_SRC     a checkout of facebookresearch/HolisticTraceAnalysis (its
#               hta/ package is imported from there)
#   TRACES_DIR  the shared traces (default ../shared/traces)
#   RUNS        runs of each tool per trace (default 3)
# HTA runs as ../shared/anchors/hta/TIMINGS.md's "full proc" column ran it:
# TraceAnalysis(trace_dir) and then its analyses, each allowed to fail.
# $PYTHON (default /usr/bin/python3) must import pandas, numpy, plotly,
# networkx, ijson, psutil and yaml (Debian: apt-get install python3-pandas
# python3-plotly python3-networkx python3-ijson python3-psutil python3-yaml).
# tracebook's report runs with the parse cache off (a first run), and
# $TRACEBOOK_BIN names a built tracebook to time instead of this tree's.
set -eu
cd "$(dirname "$0")/.."
[ -n "${HTA_SRC:-}" ] || { echo "bench-hta: set HTA_SRC to a HolisticTraceAnalysis checkout" >&2; exit 2; }
traces=${1:-../shared/traces}
runs=${2:-3}
python=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin=${TRACEBOOK_BIN:-$tmp/tracebook}
if [ -z "${TRACEBOOK_BIN:-}" ]; then
	[ -f wasm/viewer.wasm.gz.b85 ] || wasm/build.sh
	go build -tags viewer -o "$bin" .
fi

cat >"$tmp/hta_all.py" <<'EOF'
import sys
from hta.trace_analysis import TraceAnalysis

a = TraceAnalysis(trace_dir=sys.argv[1])
ranks = sorted(a.t.traces.keys())
out = sys.argv[2]
calls = [
    lambda: a.get_temporal_breakdown(visualize=False),
    lambda: a.get_idle_time_breakdown(ranks=ranks[:1], visualize=False),
    lambda: a.get_idle_time_breakdown(ranks=ranks, visualize=False),
    lambda: a.get_gpu_kernel_breakdown(visualize=False),
    lambda: a.get_gpu_kernel_breakdown(visualize=False, duration_ratio=1.0, num_kernels=10**9),
    lambda: a.get_comm_comp_overlap(visualize=False),
    lambda: a.get_cuda_kernel_launch_stats(ranks=ranks[:1], visualize=False),
]
for call in calls:
    try:
        call()
    except Exception:
        pass
for op in ["aten::linear", "aten::conv2d", "aten::addmm", "aten::mm", "aten::matmul"]:
    try:
        a.get_frequent_cuda_kernel_sequences(operator_name=op, output_dir=out, rank=ranks[0],
                                             min_pattern_len=3, top_k=5, visualize=False)
        break
    except Exception:
        pass
EOF
PYTHONPATH=$HTA_SRC "$python" -c 'import hta.trace_analysis' || { echo "bench-hta: $python cannot import HTA from $HTA_SRC" >&2; exit 2; }

# timed OUT CMD...: runs CMD under GNU time, appending "wall rss_kb" to OUT.
timed() {
	out=$1
	shift
	/usr/bin/time -f '%e %M' -o "$tmp/time" "$@" </dev/null >/dev/null 2>"$tmp/err" || { cat "$tmp/err" "$tmp/time" >&2; exit 1; }
	cat "$tmp/time" >>"$out"
}
# median FILE COLUMN
median() { cut -d' ' -f"$2" "$1" | sort -n | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

echo "| trace | HTA wall (s) | HTA peak (MB) | tracebook wall (s) | tracebook peak (MB) | speed-up | peak ratio |"
echo "|---|---:|---:|---:|---:|---:|---:|"
while read -r name dir; do
	case $name in '#'* | '') continue ;; esac
	dir=$traces/$dir
	if [ ! -e "$dir" ]; then
		echo "| $name | absent | | | | | |"
		continue
	fi
	rm -f "$tmp/hta" "$tmp/tb"
	i=0
	while [ $i -lt "$runs" ]; do
		timed "$tmp/hta" env -C "$tmp" PYTHONPATH="$HTA_SRC" "$python" "$tmp/hta_all.py" "$(realpath "$dir")" "$tmp"
		timed "$tmp/tb" "$bin" report "$dir" -o "$tmp/r.html" --cache - -q
		i=$((i + 1))
	done
	awk -v n="$name" -v hw="$(median "$tmp/hta" 1)" -v hm="$(median "$tmp/hta" 2)" \
		-v tw="$(median "$tmp/tb" 1)" -v tm="$(median "$tmp/tb" 2)" \
		'BEGIN {printf "| %s | %.2f | %.0f | %.2f | %.0f | %.1f× | %.2f× |\n", n, hw, hm/1024, tw, tm/1024, hw/tw, tm/hm}'
done <scripts/bench-traces.txt
