#!/usr/bin/env python3
"""The ranks goal of issue 47: the ranks of one host read at once with --children, under
--memory-limit (default: half of MemAvailable), all complete and culeak's memory under the limit.

usage: bench/ranks.py [--ranks K] [--objects N] [--memory-limit SIZE] [--command C] [--json FILE]
  (defaults: 8 ranks of 5000000 objects, culeak's default limit, `summary`; needs `make` and the
  torch-2.13 test venv)

An agent process starts K bench/big_heap.py ranks (torch imported) and waits; `culeak C --json
--children AGENT` reads them. Its memory, the parent's and its workers' together, is sampled every
10 ms while it runs (the sum of their RSS, as a host's memory sees them). Reported: culeak's wall
time, its peak, the limit it ran under, how many ranks it read at once, each rank's exit status,
objects and pause (its own watchdog's longest gap)."""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tests", "integration"))
import heap  # noqa: E402
from test_ranks import tree_rss  # noqa: E402  (the sum of RSS of a process and those below it)

AGENT = """
import subprocess, sys, time
ranks = [subprocess.Popen([sys.executable, %r, %r, "--tensors", "100"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True) for _ in range(%d)]
for r in ranks:
    r.stdout.readline()
print("READY", flush=True)
for line in sys.stdin:
    print(" ".join(str(r.pid) for r in ranks), flush=True)
    for r in ranks:
        r.stdin.write("gap\\n")
        r.stdin.flush()
        print(r.stdout.readline().strip(), flush=True)
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--objects", type=int, default=5_000_000)
    ap.add_argument("--memory-limit")
    ap.add_argument("--command", default="summary")
    ap.add_argument("--json")
    a = ap.parse_args()
    script = AGENT % (os.path.join(heap.ROOT, "bench", "big_heap.py"), str(a.objects), a.ranks)
    agent = subprocess.Popen([heap.PYTHON, "-c", script], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert agent.stdout.readline().strip() == "READY"
        cmd = [heap.CULEAK, a.command, "--json", "--children", str(agent.pid)]
        if a.memory_limit:
            cmd += ["--memory-limit", a.memory_limit]
        start = time.monotonic()
        culeak = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        peak, done = 0, False
        while not done:
            done = culeak.poll() is not None
            peak = max(peak, tree_rss(culeak.pid))
            time.sleep(0.01)
        out, errors = culeak.communicate()
        wall = time.monotonic() - start
        doc = json.loads(out)
        agent.stdin.write("gaps\n")
        agent.stdin.flush()
        pids = [int(p) for p in agent.stdout.readline().split()]
        gaps = dict(zip(pids, (float(agent.stdout.readline()) for _ in pids)))
    finally:
        agent.kill()
        subprocess.run(["pkill", "-P", str(agent.pid)])
    ranks = [{"pid": t["pid"], "exit_status": t["exit_status"],
              "objects": t["report"].get("objects"), "pause": gaps.get(t["pid"]),
              "warnings": t["report"].get("warnings")} for t in doc["targets"]]
    result = {"machine": "%s, %d CPUs" % (platform.node(), os.cpu_count()),
              "ranks": a.ranks, "objects": a.objects, "command": a.command, "wall": wall,
              "peak_rss": peak, "memory_limit": doc["memory_limit"], "at_once": doc["at_once"],
              "exit_status": culeak.returncode, "targets": ranks}
    print("%d ranks of %d objects, `%s`: exit %d, %.1f s wall, culeak's peak %.0f MiB under a "
          "limit of %.0f MiB (%s), %d at once" % (
              a.ranks, a.objects, a.command, culeak.returncode, wall, peak / 2**20,
              doc["memory_limit"] / 2**20, "within" if peak <= doc["memory_limit"] else "OVER",
              doc["at_once"]))
    for r in ranks:
        print("  pid %d: exit %d, %s objects, paused %.3f s%s" % (
            r["pid"], r["exit_status"], r["objects"], r["pause"] or 0,
            ", warnings %r" % r["warnings"] if r["warnings"] else ""))
    if errors.strip():
        print(errors.strip()[-2000:], file=sys.stderr)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
