#!/usr/bin/env python3
"""The pause goal of issue 47: a rank holding gigabytes of memory that no walk reads (CPU tensors
of mixed sizes, an anonymous buffer) is stopped about as long as the same heap without them.

usage: bench/pause.py [--objects N] [--cpu-gb G] [--buffer-gb G] [--runs R] [--plain-only]
                      [--json FILE]
  (defaults: 20000000 objects, 8 GiB of tensors, a 2 GiB buffer, 3 runs; needs `make` and the
  torch-2.13 test venv, and memory for the heap, the gigabytes and culeak's copy of the heap;
  --plain-only: the heap alone, for the budgets of a big heap: `--objects 75000000 --plain-only`)

Two targets, one at a time: bench/big_heap.py's heap of N objects with torch imported, then the
same heap with --cpu-gb and --buffer-gb besides. On each, `culeak summary --pid` and `culeak
tensors --pid` with the defaults, R runs each: the longest gap the target's own 1 ms watchdog
thread saw during the run (the pause), culeak's wall time and peak RSS, and what `info` says of
the copy with the same policy (what it copied, what it left out); the objects culeak walked, and
its memory per object beyond the copy of the process (peak RSS less the whole copy, which `info
--copy-limit 1T` measures). The goals: the pause with the gigabytes within 1.2x of the pause
without them (medians); for a big heap, each command within 15 s of wall time, the pause within 1 s
and culeak's memory within 64 bytes an object beyond the copy. Nothing else should run
meanwhile."""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import heap  # noqa: E402  (its Target and run: the same target and measures as the heap bench)

COMMANDS = ("summary", "tensors")


class Target(heap.Target):
    """big_heap.py with torch imported and, with gigabytes, CPU tensors and a buffer."""

    def __init__(self, n, cpu_gb, buffer_gb):
        args = [str(n), "--tensors", "100"]
        if cpu_gb or buffer_gb:
            args += ["--cpu-gb", str(cpu_gb), "--buffer-gb", str(buffer_gb)]
        self.proc = subprocess.Popen([heap.PYTHON, os.path.join(heap.ROOT, "bench", "big_heap.py")] + args,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready, pid = self.proc.stdout.readline().split()
        assert ready == "READY"
        self.pid = int(pid)


def rss_of(pid):
    with open("/proc/%d/status" % pid) as f:
        return sum(int(l.split()[1]) * 1024 for l in f if l.startswith(("RssAnon:", "RssShmem:")))


def measure(t, runs):
    """Per command: median pause and wall, peak RSS; and the copy info's run made."""
    out = {"target_bytes": rss_of(t.pid)}

    def doc(*args):
        r = subprocess.run([heap.CULEAK] + list(args) + ["--json", "--pid", str(t.pid)],
                           capture_output=True, text=True, check=True)
        return json.loads(r.stdout)

    out["info_target"] = doc("info")["target"]
    out["whole_copy"] = doc("info", "--copy-limit", "1T")["target"]["copied_bytes"]
    out["objects"] = doc("objects")["objects"]
    for command in COMMANDS:
        pauses, walls, rss = [], [], 0
        for _ in range(runs):
            t.ask("gap")
            start = time.monotonic()
            _, peak, _ = heap.run([heap.CULEAK, command, "--pid", str(t.pid)])
            walls.append(time.monotonic() - start)
            pauses.append(t.ask("gap"))
            rss = max(rss, peak)
        per_object = (rss - out["whole_copy"]) / max(out["objects"], 1)
        out[command] = {"pause": statistics.median(pauses), "pauses": pauses,
                        "wall": statistics.median(walls), "peak_rss": rss,
                        "bytes_per_object_beyond_copy": per_object}
        print("  %-8s pause %.3f s (%s), wall %.1f s, culeak %.0f MiB: %.0f bytes an object "
              "beyond the %.0f MiB copy (%d objects)" % (
                  command, out[command]["pause"], " ".join("%.3f" % p for p in pauses),
                  out[command]["wall"], rss / 2**20, per_object, out["whole_copy"] / 2**20,
                  out["objects"]), file=sys.stderr, flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--objects", type=int, default=20_000_000)
    ap.add_argument("--cpu-gb", type=float, default=8)
    ap.add_argument("--buffer-gb", type=float, default=2)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--plain-only", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args()
    heap.STEP_TIMEOUT = 1800
    result = {"machine": "%s, %d CPUs" % (platform.node(), os.cpu_count()), "objects": a.objects,
              "cpu_gb": a.cpu_gb, "buffer_gb": a.buffer_gb}
    targets = [("plain", 0, 0)] + ([] if a.plain_only else [("gigabytes", a.cpu_gb, a.buffer_gb)])
    for name, cpu_gb, buffer_gb in targets:
        print("%s: %d objects, %.1f GiB of tensors, %.1f GiB buffer" % (
            name, a.objects, cpu_gb, buffer_gb), file=sys.stderr, flush=True)
        t = Target(a.objects, cpu_gb, buffer_gb)
        try:
            result[name] = measure(t, a.runs)
        finally:
            t.close()
    for command in COMMANDS if a.plain_only else ():
        r = result["plain"][command]
        print("%s: wall %.1f s (goal 15), pause %.3f s (goal 1), %.0f bytes an object beyond the "
              "copy (goal 64)" % (command, r["wall"], r["pause"], r["bytes_per_object_beyond_copy"]))
    for command in () if a.plain_only else COMMANDS:
        ratio = result["gigabytes"][command]["pause"] / max(result["plain"][command]["pause"], 1e-3)
        result[command + "_ratio"] = ratio
        print("%s: pause %.3f s with the gigabytes, %.3f s without: %.2fx (goal 1.2x): %s" % (
            command, result["gigabytes"][command]["pause"], result["plain"][command]["pause"],
            ratio, "met" if ratio <= 1.2 else "NOT met"))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
