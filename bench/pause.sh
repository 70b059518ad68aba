#!/usr/bin/env bash
# Benchmark: how long culeak stops a live process, against the read floor.
#   bench/pause.sh [N_OBJECTS ...]     (default 500000 2000000; needs build/culeak)
# For each heap size, a Python 3.12 process (bench/big_heap.py --watchdog) whose own thread wakes
# every millisecond reports the longest gap between two wake-ups while culeak runs `objects --pid`:
#   copy      the default: stopped while what can change is copied, resumed before the walk
#   stopped   --copy-limit 0: stopped for the whole run, as before the copy
# Beside each: culeak's wall and CPU seconds and peak RSS. The floor is the copy itself (every
# private writable mapping read once in bulk), as `info` reports it: its size and time.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${CULEAK_BENCH_PYTHON:-$(ls -d ~/.pyenv/versions/3.12.*/bin/python3.12 | tail -n 1)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
json() { /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }

printf '%9s %-8s %8s %8s %8s %9s %s\n' objects mode pause wall CPU "peak RSS" floor
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(500000 2000000)
for n in "${sizes[@]}"; do
    coproc HEAP { exec "$py" bench/big_heap.py "$n" --watchdog; }
    read -r _ pid <&"${HEAP[0]}"
    build/culeak info --json --pid "$pid" >"$tmp/info"
    floor=$(json "$tmp/info" '"%d MiB in %.3f s" % (d["target"]["copied_bytes"] >> 20, d["target"]["stopped_microseconds"] / 1e6)')
    for mode in copy stopped; do
        args=(); [ "$mode" = stopped ] && args=(--copy-limit 0)
        echo >&"${HEAP[1]}"; read -r _ <&"${HEAP[0]}"   # a new measurement
        /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" build/culeak objects --json --pid "$pid" \
            "${args[@]}" >"$tmp/json"
        echo >&"${HEAP[1]}"; read -r gap <&"${HEAP[0]}"
        read -r wall user sys rss_kb <"$tmp/time"
        objs=$(json "$tmp/json" 'd["objects"]')
        printf '%9d %-8s %7.3fs %7.2fs %7.2fs %6d MiB %s\n' "$objs" "$mode" "$gap" "$wall" \
            "$(echo "$user + $sys" | bc -l)" $((rss_kb / 1024)) "$floor"
    done
    kill "$pid"
    wait "$pid" 2>/dev/null || true
done
