#!/usr/bin/env bash
# Benchmark: how fast and how big culeak's object walk is on a large live heap, and from a core.
#   bench/walk.sh [N_OBJECTS]        (default 2000000; needs build/culeak and gdb's gcore)
# Prints wall time, objects walked per second and culeak's peak RSS for `objects` live and core.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2000000}
py=${CULEAK_BENCH_PYTHON:-$(ls -d ~/.pyenv/versions/3.12.*/bin/python3.12 | tail -n 1)}
tmp=$(mktemp -d)
trap 'kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
mkfifo "$tmp/out"
"$py" bench/big_heap.py "$n" >"$tmp/out" &
pid=$!
read -r _ < "$tmp/out"

measure() {   # LABEL ARGS...
    local label=$1; shift
    /usr/bin/time -f "%e %M" -o "$tmp/time" build/culeak objects --json "$@" >"$tmp/json"
    read -r secs rss_kb < "$tmp/time"
    objs=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["objects"])' "$tmp/json")
    printf '%-6s %10d objects  %6.2f s  %9.0f objects/s  peak RSS %6d MiB\n' \
        "$label" "$objs" "$secs" "$(echo "$objs / $secs" | bc -l)" $((rss_kb / 1024))
}
measure live --pid "$pid"
gcore -o "$tmp/core" "$pid" >/dev/null 2>&1
measure core --core "$tmp/core.$pid"
