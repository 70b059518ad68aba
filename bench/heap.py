#!/usr/bin/env python3
"""The benchmark of issue 15: for each heap size, culeak against the read floor and the tools
users would otherwise reach for, measured side by side in one run.

usage: bench/heap.py [--tensors K [--graphs]] [--anchors-up-to N] [--runs R] [--python PY]
                     [--json FILE] [N_OBJECTS ...]
  (default sizes 500000 2000000 10000000; needs `make`, gdb, and the torch-2.13 test venv)

The target is bench/big_heap.py under the torch-2.13 venv's Python (or --python's): N objects in
dicts of lists of small instances, and K CPU tensors (default 2000) held from a global list (with
--graphs, losses that keep their autograd graphs: the leak culeak is for, and the heap densest in
tensors). For each size:
  floor     the touched pages of every private mapping that can change (what culeak copies) read
            once with process_vm_readv, 1 MiB a call, from this script: bytes, CPU seconds, into
            one buffer (read) and into fresh memory that holds it all (fresh), as a copy must
  live      `culeak objects --pid` and `culeak tensors --pid`: CPU (user + system, the best of R
            runs), its ratio to the floor, nanoseconds per object; of it the user CPU (the least
            of R runs), the walk's own (the system CPU is mostly the copy)
  pause     the longest gap the target's own 1 ms watchdog thread saw during `objects --pid`
  core      `culeak objects --core` on a gcore of the same process; its ratio to live
  stopped   `objects --pid` with a --copy-limit of half the floor's bytes: the process stays
            stopped, and is copied as the walk reads it (a job whose memory is over the limit,
            or one a debugger holds); its ratio to live
  RSS/obj   culeak's own structures: peak RSS of `objects`, and of `tensors` (the holders'
            graph, dominators and paths besides), less that of `info` (which copies the same
            memory but walks nothing), per object
  gdb       the plugin's share in gdb: the CPU gdb -p spends in `culeak-objects` (gdb's process
            time around the command), against the CLI's `objects`
  anchors   (sizes up to --anchors-up-to, default the smallest) objgraph.find_backref_chain on a
            sample of 50 tensors and a gc.get_referrers search on 5, run inside the target,
            extrapolated to all K tensors, against `culeak tensors` (which names every holder of
            every tensor)
Then the goals of the issue, each with what was measured. CPU time, not wall time: the machine may
be loaded. Nothing else should run while it does."""
import argparse
import ctypes
import glob
import json
import mmap
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CULEAK = os.path.join(ROOT, "build", "culeak")
PLUGIN = os.path.join(ROOT, "build", "culeak.gdb")
PYTHON = os.path.join(ROOT, "build", "venv", "torch-2.13", "bin", "python")
PYLIB = os.path.join(ROOT, "build", "bench-pylib")   # objgraph, for the anchor


def run(argv, stdout=subprocess.DEVNULL):
    """Runs argv to completion: (CPU seconds of it and its children, peak RSS in bytes, the user
    part of the CPU)."""
    proc = subprocess.Popen(argv, stdout=stdout, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(proc.pid, 0)
    err = proc.stderr.read().decode(errors="replace")
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit("%s failed (%d): %s" % (" ".join(argv), proc.returncode, err[-2000:]))
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss * 1024, ru.ru_utime


def best(argv, runs, stdout=subprocess.DEVNULL):
    """The least CPU of runs runs, the peak RSS of that run, and the least user CPU of them."""
    results = [run(argv, stdout) for _ in range(runs)]
    cpu, rss, _ = min(results)
    return cpu, rss, min(r[2] for r in results)


class Target:
    def __init__(self, n, tensors, graphs, python=PYTHON):
        env = dict(os.environ, PYTHONPATH=PYLIB)
        self.proc = subprocess.Popen(
            [python, os.path.join(ROOT, "bench", "big_heap.py"),
             str(n), "--tensors", str(tensors)] + (["--graphs"] if graphs else []),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        ready, pid = self.proc.stdout.readline().split()
        assert ready == "READY"
        self.pid = int(pid)

    def ask(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return float(self.proc.stdout.readline())

    def close(self):
        self.proc.kill()
        self.proc.wait()


class Iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


PAGE = 4096


def touched_runs(pid, lo, hi):
    """The runs of pages of [lo, hi) that the page tables show present or swapped out: those the
    process ever wrote or read, which culeak copies (it reads the others from their file or as
    zeros, and reading them here would fault them into the target)."""
    with open("/proc/%d/pagemap" % pid, "rb") as f:
        f.seek(lo // PAGE * 8)
        entries = f.read((hi - lo) // PAGE * 8)
    runs, start = [], None
    for i in range(len(entries) // 8):
        touched = entries[i * 8 + 7] & 0xc0   # bits 63 (present) and 62 (swapped)
        if touched and start is None:
            start = lo + i * PAGE
        elif not touched and start is not None:
            runs.append((start, lo + i * PAGE))
            start = None
    if start is not None:
        runs.append((start, hi))
    return runs


def floor_read(pid, fresh=False):
    """Reads once what culeak copies (the touched pages of private, readable mappings, writable or
    not backed by a file; no device and no shared memory): (bytes, CPU seconds). Into one 1 MiB
    buffer, or with fresh, into new memory as big as all of it, as a copy needs (the kernel's cost
    of providing the memory counted)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.process_vm_readv.restype = ctypes.c_ssize_t
    chunk = 1 << 20
    ranges = []
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            fields = line.split(None, 5)
            perms, path = fields[1], fields[5].strip() if len(fields) > 5 else ""
            anonymous = path in ("", "[heap]", "[stack]") or path.startswith("[anon")
            if (perms[0] != "r" or perms[3] != "p" or not (perms[1] == "w" or anonymous)
                    or (path.startswith("/dev/") and path != "/dev/zero")):
                continue
            lo, hi = (int(x, 16) for x in fields[0].split("-"))
            ranges += touched_runs(pid, lo, hi)
    size = sum(hi - lo for lo, hi in ranges)
    memory = mmap.mmap(-1, size if fresh else chunk)
    base = ctypes.addressof(ctypes.c_char.from_buffer(memory))
    total, start = 0, time.process_time()
    for lo, hi in ranges:
        for at in range(lo, hi, chunk):
            n = min(chunk, hi - at)
            local, remote = Iovec(base + (total if fresh else 0), n), Iovec(at, n)
            got = libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
            total += max(got, 0)
    took = time.process_time() - start
    del local
    memory.close()
    return total, took


def objects_of(pid):
    out = subprocess.run([CULEAK, "objects", "--json", "--pid", str(pid)], capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out)["objects"]


def gcore(pid, path):
    subprocess.run(["gdb", "-nx", "-batch", "-p", str(pid), "-ex",
                    "generate-core-file %s" % path], capture_output=True, check=True)


def gdb_share(pid, runs):
    """The CPU gdb -p spends in culeak-objects, measured by gdb's Python around the command,
    the least of runs; and that of the whole gdb run (attach, symbols, detach). Subtracting a run
    of gdb alone instead left a difference of two 6-9 s numbers that vary by a second."""
    argv = ["gdb", "-nx", "-batch", "-iex", "set pagination off", "-p", str(pid), "-x", PLUGIN,
            "-ex", "python import time; t0 = time.process_time()",
            "-ex", "culeak-objects --json",
            "-ex", "python print('culeak-objects CPU %f' % (time.process_time() - t0))"]
    shares, whole = [], []
    for _ in range(runs):
        with tempfile.TemporaryFile(mode="w+") as out:
            whole.append(run(argv, out)[0])
            out.seek(0)
            shares += [float(line.split()[-1]) for line in out
                       if line.startswith("culeak-objects CPU ")]
    if len(shares) != runs:
        raise SystemExit("gdb did not run culeak-objects: %s" % " ".join(argv))
    return min(shares), min(whole)


def ensure_objgraph():
    if glob.glob(os.path.join(PYLIB, "objgraph*")):
        return
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--target", PYLIB,
                    "objgraph"], check=True)


def measure(n, args, anchors):
    t = Target(n, args.tensors, args.graphs, args.python)
    r = {"requested": n}
    try:
        pid = str(t.pid)
        r["objects"] = objects_of(t.pid)
        r["floor_bytes"], r["floor_cpu"] = min((floor_read(t.pid) for _ in range(args.runs)),
                                                key=lambda x: x[1])
        r["floor_fresh_cpu"] = min(floor_read(t.pid, fresh=True)[1] for _ in range(args.runs))
        r["live_cpu"], r["live_rss"], r["live_user"] = best(
            [CULEAK, "objects", "--json", "--pid", pid], args.runs)
        r["tensors_cpu"], r["tensors_rss"], _ = best([CULEAK, "tensors", "--json", "--pid", pid],
                                                     args.runs)
        r["info_rss"] = best([CULEAK, "info", "--json", "--pid", pid], 1)[1]
        r["stopped_cpu"] = best([CULEAK, "objects", "--json", "--pid", pid, "--copy-limit",
                                 "%dK" % (r["floor_bytes"] >> 11)], args.runs)[0]
        t.ask("gap")
        run([CULEAK, "objects", "--json", "--pid", pid])
        r["pause"] = t.ask("gap")
        r["gdb_cpu"], r["gdb_whole_cpu"] = gdb_share(t.pid, args.runs)
        with tempfile.TemporaryDirectory(dir=args.tmp) as d:
            core = os.path.join(d, "core")
            gcore(t.pid, core)
            r["core_bytes"] = os.path.getsize(core)
            r["core_cpu"] = best([CULEAK, "objects", "--json", "--core", core], args.runs)[0]
        if anchors:
            r["objgraph_per_tensor"] = t.ask("objgraph 50")
            r["referrers_per_tensor"] = t.ask("referrers 5")
            r["tensors"] = args.tensors
    finally:
        t.close()
    obj = r["objects"]
    r["live_ratio"] = r["live_cpu"] / r["floor_cpu"]
    r["live_fresh_ratio"] = r["live_cpu"] / r["floor_fresh_cpu"]
    r["ns_per_object"] = r["live_cpu"] / obj * 1e9
    r["user_ns_per_object"] = r["live_user"] / obj * 1e9
    r["core_ratio"] = r["core_cpu"] / r["live_cpu"]
    r["stopped_ratio"] = r["stopped_cpu"] / r["live_cpu"]
    r["rss_per_object"] = (r["live_rss"] - r["info_rss"]) / obj
    r["tensors_rss_per_object"] = (r["tensors_rss"] - r["info_rss"]) / obj
    r["gdb_ratio"] = r["gdb_cpu"] / r["live_cpu"]
    return r


def row(r):
    s = ("%6.2fM %5d MiB %6.3fs %6.3fs | %6.2fs %5.1fx %4.1fx %4.0f ns, user %5.2fs %4.0f ns | "
         "%6.2fs | %6.3fs | %6.2fs %4.2fx | %6.2fs %4.2fx | %3.0f / %3.0f B | %6.2fs %4.2fx" % (
             r["objects"] / 1e6, r["floor_bytes"] >> 20, r["floor_cpu"], r["floor_fresh_cpu"],
             r["live_cpu"], r["live_ratio"], r["live_fresh_ratio"], r["ns_per_object"],
             r["live_user"], r["user_ns_per_object"],
             r["tensors_cpu"], r["pause"], r["core_cpu"], r["core_ratio"], r["stopped_cpu"],
             r["stopped_ratio"], r["rss_per_object"], r["tensors_rss_per_object"], r["gdb_cpu"],
             r["gdb_ratio"]))
    if "objgraph_per_tensor" in r:
        k = r["tensors"]
        s += "\n         anchors, %d tensors: objgraph %.2f s a tensor (%.0f s for all), " \
             "gc.get_referrers %.2f s a tensor (%.0f s for all); culeak tensors %.2f s for all" % (
                 k, r["objgraph_per_tensor"], r["objgraph_per_tensor"] * k,
                 r["referrers_per_tensor"], r["referrers_per_tensor"] * k, r["tensors_cpu"])
    return s


def goals(rows):
    ns = [r["ns_per_object"] for r in rows]
    yield ("live objects CPU within 5x the floor", max(r["live_ratio"] for r in rows) <= 5,
           ", ".join("%.1fx (%.1fx the read into fresh memory)" % (r["live_ratio"],
                                                                  r["live_fresh_ratio"])
                     for r in rows))
    yield ("time per object constant within 20%", max(ns) <= min(ns) * 1.2,
           ", ".join("%.0f" % x for x in ns) + " ns")
    # Every heap holds the same base, the objects torch's import makes (dicts, code, functions:
    # larger and costlier than the benchmark's own), so the time per object above mixes two
    # kinds. The cost of each object added between two sizes is the walk's own growth: in user
    # CPU, the walk's, since the system CPU is mostly the copy, which grows with bytes rather than
    # objects, and which a virtual machine's first touch of memory makes vary from run to run.
    for name, key in (("CPU", "live_cpu"), ("user CPU", "live_user")):
        added = [(b[key] - a[key]) / (b["objects"] - a["objects"]) * 1e9
                 for a, b in zip(rows, rows[1:]) if b["objects"] > a["objects"]]
        if len(added) > 1:
            yield ("%s per object added within 20%%" % name, max(added) <= min(added) * 1.2,
                   ", ".join("%.0f" % x for x in added) + " ns, between consecutive sizes")
    yield ("pause within 2x the floor + 50 ms",
           all(r["pause"] <= 2 * r["floor_cpu"] + 0.05 for r in rows),
           ", ".join("%.3f s (limit %.3f)" % (r["pause"], 2 * r["floor_cpu"] + 0.05) for r in rows))
    # `tensors` holds what `objects` does and the holders' graph, dominators and paths besides.
    yield ("own structures <= 96 bytes an object",
           all(max(r["rss_per_object"], r["tensors_rss_per_object"]) <= 96 for r in rows),
           ", ".join("%.0f B (tensors %.0f B)" % (r["rss_per_object"], r["tensors_rss_per_object"])
                     for r in rows))
    yield ("plugin in gdb within 1.2x the CLI", all(r["gdb_ratio"] <= 1.2 for r in rows),
           ", ".join("%.2fx" % r["gdb_ratio"] for r in rows))
    yield ("core and live within 1.2x", all(1 / 1.2 <= r["core_ratio"] <= 1.2 for r in rows),
           ", ".join("%.2fx" % r["core_ratio"] for r in rows))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sizes", nargs="*", type=int, default=[500000, 2000000, 10000000])
    ap.add_argument("--tensors", type=int, default=2000)
    ap.add_argument("--graphs", action="store_true",
                    help="the tensors are losses that keep their autograd graphs")
    ap.add_argument("--anchors-up-to", type=int, default=0,
                    help="run the anchors on sizes up to this many objects (default: smallest)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--python", default=PYTHON,
                    help="the target's interpreter (default: the torch-2.13 CPU venv's; a CUDA "
                         "build of torch maps some 400 MB of library data the walk never reads)")
    ap.add_argument("--json", help="also write the measurements to this file")
    ap.add_argument("--tmp", default=os.path.join(ROOT, "build"), help="where the gcore goes")
    args = ap.parse_args()
    for need in (CULEAK, PLUGIN, args.python):
        if not os.path.exists(need):
            sys.exit("bench: %s is missing (make; scripts/install-deps)" % need)
    ensure_objgraph()
    up_to = args.anchors_up_to or min(args.sizes)
    print("load average %.2f %.2f %.2f, %d CPUs" % (os.getloadavg() + (os.cpu_count(),)))
    print("objects  floor    read    fresh | live objects CPU, x read, x fresh, of it user | "
          "tensors | pause  | core         | stopped      | RSS/obj objects / tensors | "
          "gdb plugin")
    rows = []
    for n in args.sizes:
        rows.append(measure(n, args, n <= up_to))
        print(row(rows[-1]), flush=True)
    print()
    for name, ok, measured in goals(rows):
        print("%-4s %-40s %s" % ("met" if ok else "NOT", name, measured))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"load": os.getloadavg(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
