#!/usr/bin/env python3
"""Two builds of culeak side by side on one target: the same commands on the same process (or
core), the two binaries interleaved run by run, so that the machine's drift between rounds
(bench/results.md) falls on both alike, each build first in turn. Prints each command's median
and best CPU seconds (user + system) for each build, with the ratios, and the peak memory; fails
when the outputs differ.

    bench/compare.py OLD_CULEAK NEW_CULEAK [--objects N] [--tensors K] [--runs R]
                     [--command 'tensors --json' ...] [--core FILE | --dump FILE]

The target is bench/big_heap.py under the torch-2.13 test venv (heap.py's), unless --core or
--dump: a dump is read without a copy, so its times are the walk's and the reports'."""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import heap  # noqa: E402


def measure(culeak, args, target):
    argv = [culeak] + args + target
    cpu, rss, _ = heap.run(argv)
    return cpu, rss


def output(culeak, args, target):
    import subprocess
    r = subprocess.run([culeak] + args + target, capture_output=True, timeout=heap.STEP_TIMEOUT)
    return r.returncode, r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--objects", type=int, default=2000000)
    ap.add_argument("--tensors", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--command", action="append",
                    help="a command line to time (default: objects, tensors, summary --json)")
    ap.add_argument("--core", help="time on this core instead of a live process")
    ap.add_argument("--dump", help="time on this culeak dump instead of a live process")
    a = ap.parse_args()
    commands = [c.split() for c in (a.command or ["objects", "tensors", "summary --json"])]
    target_proc = None
    if a.core or a.dump:
        target = ["--core", a.core] if a.core else ["--dump", a.dump]
    else:
        target_proc = heap.Target(a.objects, a.tensors, False)
        target = ["--pid", str(target_proc.pid)]
    failed = False
    try:
        for args in commands:
            if output(a.old, args, target) != output(a.new, args, target):
                print("%s: the two builds' outputs differ" % " ".join(args))
                failed = True
            times = {a.old: [], a.new: []}
            peaks = {a.old: [], a.new: []}
            for run in range(a.runs):   # each first in turn: neither gains from going second
                for culeak in ((a.old, a.new) if run % 2 == 0 else (a.new, a.old)):
                    cpu, rss = measure(culeak, args, target)
                    times[culeak].append(cpu)
                    peaks[culeak].append(rss)
            old, new = statistics.median(times[a.old]), statistics.median(times[a.new])
            best_old, best_new = min(times[a.old]), min(times[a.new])
            print("%-24s median old %.3f new %.3f (%.3f)   best old %.3f new %.3f (%.3f)   "
                  "peak old %.0f new %.0f MB" % (
                      " ".join(args), old, new, new / old, best_old, best_new,
                      best_new / best_old, max(peaks[a.old]) / 1e6, max(peaks[a.new]) / 1e6))
    finally:
        if target_proc:
            target_proc.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
