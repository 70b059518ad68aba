#!/usr/bin/env python3
"""The benchmark of issue 15: for each heap size, culeak against the read floor and the tools
users would otherwise reach for, measured side by side in one run.

usage: bench/heap.py [--tensors K [--graphs]] [--anchors-up-to N] [--runs R] [--python PY]
                     [--build DIR] [--gdb GDB] [--step-timeout S] [--json FILE] [N_OBJECTS ...]
  (default sizes 500000 2000000 10000000; needs `make`, gdb, and the torch-2.13 test venv; on a
  machine with neither gdb nor a compiler, such as the GPU machine: --build build/static (from
  `make static`) --gdb cuda-gdb --python python3)

The target is bench/big_heap.py under the torch-2.13 venv's Python (or --python's): N objects in
dicts of lists of small instances, and K CPU tensors (default 2000) held from a global list (with
--graphs, losses that keep their autograd graphs: the leak culeak is for, and the heap densest in
tensors). For each size:
  floor     the touched pages of every private mapping that can change (what culeak copies, but
            for the data of libraries foreign to it, target/libdata.h) read once with
            process_vm_readv, 1 MiB a call, from this script: bytes, CPU seconds, into one buffer
            (read) and into fresh memory that holds it all (fresh), as a copy must
  live      `culeak objects --pid` and `culeak tensors --pid`: CPU (user + system, the best of R
            runs), its ratio to the floor, nanoseconds per object; of it the user CPU (the least
            of R runs), the walk's own (the system CPU is mostly the copy)
  pause     the longest gap the target's own 1 ms watchdog thread saw during `objects --pid`
  core      `culeak objects --core` on a gcore of the same process: its ratio to live, and that
            of its user CPU to live's (the walk both share, without the copy)
  stopped   `objects --pid` with a --copy-limit of half the floor's bytes: the process stays
            stopped, and is copied as the walk reads it (a job whose memory is over the limit,
            or one a debugger holds); its ratio to live
  RSS/obj   culeak's own structures: peak RSS of `objects`, and of `tensors` (the holders'
            graph, dominators and paths besides), less that of `info --copy-limit 4G` (which
            copies the same memory but walks nothing), per object
  gdb       the plugin's share in gdb: the CPU gdb -p spends in `culeak-objects` (gdb's process
            time around the command), against the CLI's `objects`
  anchors   (sizes up to --anchors-up-to, default the smallest) objgraph.find_backref_chain on a
            sample of 50 tensors and a gc.get_referrers search on 5, run inside the target,
            extrapolated to all K tensors, against `culeak tensors` (which names every holder of
            every tensor)
Each step is named on stderr as it starts; one that fails, or whose command outlasts
--step-timeout, is left out (dashes in its columns, the reason under the row) and the others run.
Then the goals of the issue, each with what was measured. CPU time, not wall time: the machine may
be loaded. Nothing else should run while it does."""
import argparse
import ctypes
import glob
import json
import mmap
import os
import select
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CULEAK = os.path.join(ROOT, "build", "culeak")   # --build's culeak
PLUGIN = None                                    # culeak.gdb, written for --build's plugin
GDB = "gdb"
PYTHON = os.path.join(ROOT, "build", "venv", "torch-2.13", "bin", "python")
PYLIB = os.path.join(ROOT, "build", "bench-pylib")   # objgraph, for the anchor


class Skipped(Exception):
    """A step that failed or did not finish in time: its columns are left out, and the reason
    printed under the row."""


STEP_TIMEOUT = 300   # --step-timeout


def run(argv, stdout=subprocess.DEVNULL):
    """Runs argv to completion: (CPU seconds of it and its children, peak RSS in bytes, the user
    part of the CPU). Its stderr goes to a file, not a pipe, which a chatty gdb could fill while
    this waits for it; past STEP_TIMEOUT seconds it is killed."""
    with tempfile.TemporaryFile() as err:
        # preexec_fn makes it fork, not vfork: a child made by vfork reports as its peak RSS the
        # peak of this script's memory (the fresh floor's hundreds of MiB), one made by fork only
        # what this script holds when it starts (about 20 MB, the same for every run)
        proc = subprocess.Popen(argv, stdout=stdout, stderr=err, stdin=subprocess.DEVNULL,
                                preexec_fn=lambda: None)
        deadline = time.monotonic() + STEP_TIMEOUT
        while True:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                os.wait4(proc.pid, 0)
                raise Skipped("%s: no end after %d s" % (" ".join(argv), STEP_TIMEOUT))
            time.sleep(0.02)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise Skipped("%s failed (%d): %s" % (" ".join(argv), proc.returncode,
                                                 err.read().decode(errors="replace")[-500:]))
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
        # one line answers each command, so nothing waits in the pipe's buffer before it
        if not select.select([self.proc.stdout], [], [], STEP_TIMEOUT)[0]:
            raise Skipped("the target did not answer %r within %d s" % (line, STEP_TIMEOUT))
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
    """Reads once the memory that can change (the touched pages of private, readable mappings,
    writable or not backed by a file; no device and no shared memory), which culeak copies but for
    foreign libraries' data: (bytes, CPU seconds). Into one 1 MiB buffer, or with fresh, into new
    memory as big as all of it, as a copy needs (the kernel's cost of providing the memory
    counted)."""
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
                         text=True, check=True, timeout=STEP_TIMEOUT).stdout
    return json.loads(out)["objects"]


def gcore(pid, path):
    run([GDB, "-nx", "-batch", "-p", str(pid), "-ex", "generate-core-file %s" % path])
    if not os.path.exists(path):
        raise Skipped("%s wrote no core" % GDB)


def gdb_share(pid, runs):
    """The CPU gdb -p spends in culeak-objects, measured by gdb's Python around the command,
    the least of runs; and that of the whole gdb run (attach, symbols, detach). Subtracting a run
    of gdb alone instead left a difference of two 6-9 s numbers that vary by a second."""
    argv = [GDB, "-nx", "-batch", "-iex", "set pagination off", "-p", str(pid), "-x", PLUGIN,
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
        raise Skipped("gdb did not run culeak-objects: %s" % " ".join(argv))
    return min(shares), min(whole)


def write_plugin_loader(build, tmp):
    """culeak.gdb (gdbplugin/culeak.gdb.in) for the plugin in build, wherever this checkout lies."""
    with open(os.path.join(ROOT, "gdbplugin", "culeak.gdb.in")) as f:
        text = f.read().replace("@PLUGIN_DIR@", build)
    path = os.path.join(tmp, "culeak.gdb")
    with open(path, "w") as f:
        f.write(text)
    return path


def ensure_objgraph():
    if glob.glob(os.path.join(PYLIB, "objgraph*")):
        return
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--target", PYLIB,
                    "objgraph"], check=True)


def measure(n, args, anchors):
    """One heap's row: each step in turn (named on stderr as it starts); a step that fails or
    hangs leaves its columns out and the others still run."""
    started = time.monotonic()

    def say(what):
        print("bench: %d objects, %.0f s in: %s" % (n, time.monotonic() - started, what),
              file=sys.stderr, flush=True)

    say("the target builds its heap")
    t = Target(n, args.tensors, args.graphs, args.python)
    r = {"requested": n, "skipped": []}
    pid = str(t.pid)

    def step(name, fn):
        say(name)
        try:
            r.update(fn())
        except Skipped as e:
            r["skipped"].append("%s: %s" % (name, e))

    def floor():
        f = min((floor_read(t.pid) for _ in range(args.runs)), key=lambda x: x[1])
        fresh = min(floor_read(t.pid, fresh=True)[1] for _ in range(args.runs))
        return {"floor_bytes": f[0], "floor_cpu": f[1], "floor_fresh_cpu": fresh}

    def live():
        cpu, rss, user = best([CULEAK, "objects", "--json", "--pid", pid], args.runs)
        return {"live_cpu": cpu, "live_rss": rss, "live_user": user}

    def tensors():
        cpu, rss, _ = best([CULEAK, "tensors", "--json", "--pid", pid], args.runs)
        return {"tensors_cpu": cpu, "tensors_rss": rss}

    def stopped():
        limit = "%dK" % (r["floor_bytes"] >> 11)
        return {"stopped_cpu": best([CULEAK, "objects", "--json", "--pid", pid, "--copy-limit",
                                     limit], args.runs)[0]}

    def pause():
        t.ask("gap")
        run([CULEAK, "objects", "--json", "--pid", pid])
        return {"pause": t.ask("gap")}

    def core():
        with tempfile.TemporaryDirectory(dir=args.tmp) as d:
            path = os.path.join(d, "core")
            gcore(t.pid, path)
            cpu, _, user = best([CULEAK, "objects", "--json", "--core", path], args.runs)
            return {"core_bytes": os.path.getsize(path), "core_cpu": cpu, "core_user": user}

    try:
        say("culeak counts its objects")
        r["objects"] = objects_of(t.pid)
        step("the floor", floor)
        step("live objects", live)
        step("live tensors", tensors)
        step("info", lambda: {"info_rss": best([CULEAK, "info", "--json", "--pid", pid,
                                                "--copy-limit", "4G"], 1)[1]})
        step("stopped", stopped)
        step("the pause", pause)
        step("the plugin in " + GDB, lambda: dict(zip(("gdb_cpu", "gdb_whole_cpu"),
                                                     gdb_share(t.pid, args.runs))))
        step("core", core)
        if anchors:
            step("the anchors", lambda: {"objgraph_per_tensor": t.ask("objgraph 50"),
                                         "referrers_per_tensor": t.ask("referrers 5"),
                                         "tensors": args.tensors})
    finally:
        t.close()
    derive(r)
    return r


# the derived figures, each from the measured ones it needs: (name, fn, the keys it needs)
DERIVED = (
    ("floor_mib", lambda r: r["floor_bytes"] >> 20, ("floor_bytes",)),
    ("live_ratio", lambda r: r["live_cpu"] / r["floor_cpu"], ("live_cpu", "floor_cpu")),
    ("live_fresh_ratio", lambda r: r["live_cpu"] / r["floor_fresh_cpu"],
     ("live_cpu", "floor_fresh_cpu")),
    # the two parts of a live run, each against the read: the copy's own floor (the read into
    # fresh memory) and the walk (its user CPU)
    ("fresh_read_ratio", lambda r: r["floor_fresh_cpu"] / r["floor_cpu"],
     ("floor_fresh_cpu", "floor_cpu")),
    ("walk_ratio", lambda r: r["live_user"] / r["floor_cpu"], ("live_user", "floor_cpu")),
    ("ns_per_object", lambda r: r["live_cpu"] / r["objects"] * 1e9, ("live_cpu",)),
    ("user_ns_per_object", lambda r: r["live_user"] / r["objects"] * 1e9, ("live_user",)),
    ("core_ratio", lambda r: r["core_cpu"] / r["live_cpu"], ("core_cpu", "live_cpu")),
    ("core_user_ratio", lambda r: r["core_user"] / r["live_user"], ("core_user", "live_user")),
    ("stopped_ratio", lambda r: r["stopped_cpu"] / r["live_cpu"], ("stopped_cpu", "live_cpu")),
    ("rss_per_object", lambda r: (r["live_rss"] - r["info_rss"]) / r["objects"],
     ("live_rss", "info_rss")),
    ("tensors_rss_per_object", lambda r: (r["tensors_rss"] - r["info_rss"]) / r["objects"],
     ("tensors_rss", "info_rss")),
    ("gdb_ratio", lambda r: r["gdb_cpu"] / r["live_cpu"], ("gdb_cpu", "live_cpu")),
)


def derive(r):
    for name, fn, needs in DERIVED:
        if all(k in r for k in needs):
            r[name] = fn(r)


def row(r):
    def f(fmt, *keys):
        """fmt of r's keys, or dashes as wide where a step left one out."""
        if all(k in r for k in keys):
            return fmt % tuple(r[k] for k in keys)
        return "-".rjust(len(fmt % ((0,) * len(keys))))

    s = " ".join([
        "%6.2fM" % (r["objects"] / 1e6), f("%5d MiB", "floor_mib"), f("%6.3fs", "floor_cpu"),
        f("%6.3fs", "floor_fresh_cpu"), "|", f("%6.2fs", "live_cpu"), f("%5.1fx", "live_ratio"),
        f("%4.1fx", "live_fresh_ratio"), f("%4.0f ns,", "ns_per_object"),
        f("user %5.2fs", "live_user"), f("%4.0f ns", "user_ns_per_object"), "|",
        f("%6.2fs", "tensors_cpu"), "|", f("%6.3fs", "pause"), "|", f("%6.2fs", "core_cpu"),
        f("%4.2fx", "core_ratio"), "|", f("%6.2fs", "stopped_cpu"), f("%4.2fx", "stopped_ratio"),
        "|", f("%3.0f", "rss_per_object"), "/", f("%3.0f B", "tensors_rss_per_object"), "|",
        f("%6.2fs", "gdb_cpu"), f("%4.2fx", "gdb_ratio")])
    if "objgraph_per_tensor" in r:
        k = r["tensors"]
        s += "\n         anchors, %d tensors: objgraph %.2f s a tensor (%.0f s for all), " \
             "gc.get_referrers %.2f s a tensor (%.0f s for all)" % (
                 k, r["objgraph_per_tensor"], r["objgraph_per_tensor"] * k,
                 r["referrers_per_tensor"], r["referrers_per_tensor"] * k)
        if "tensors_cpu" in r:
            s += "; culeak tensors %.2f s for all" % r["tensors_cpu"]
    for why in r["skipped"]:
        s += "\n         left out: " + why
    return s


def goals(all_rows):
    """Each goal of the issue: (name, met, what was measured); met is None where no row has the
    figures it needs (a step left out)."""
    def having(*keys):
        return [r for r in all_rows if all(k in r for k in keys)]

    def goal(name, keys, ok, measured):
        rows = having(*keys)
        if not rows:
            return name, None, "not measured"
        gaps = len(all_rows) - len(rows)
        return name, ok(rows), measured(rows) + (" (%d size(s) not measured)" % gaps
                                                 if gaps else "")

    yield goal("live objects CPU within 5x the floor",
               ("live_ratio", "live_fresh_ratio", "fresh_read_ratio", "walk_ratio"),
               lambda rows: max(r["live_ratio"] for r in rows) <= 5,
               lambda rows: ", ".join(
                   "%.1fx (%.1fx the fresh read, itself %.1fx the read; the walk %.1fx)" % (
                       r["live_ratio"], r["live_fresh_ratio"], r["fresh_read_ratio"],
                       r["walk_ratio"]) for r in rows))
    yield goal("time per object constant within 20%", ("ns_per_object",),
               lambda rows: max(r["ns_per_object"] for r in rows)
               <= min(r["ns_per_object"] for r in rows) * 1.2,
               lambda rows: ", ".join("%.0f" % r["ns_per_object"] for r in rows) + " ns")
    # Every heap holds the same base, the objects torch's import makes (dicts, code, functions:
    # larger and costlier than the benchmark's own), so the time per object above mixes two
    # kinds. The cost of each object added between two sizes is the walk's own growth: in user
    # CPU, the walk's, since the system CPU is mostly the copy, which grows with bytes rather than
    # objects, and which a virtual machine's first touch of memory makes vary from run to run.
    for name, key in (("CPU", "live_cpu"), ("user CPU", "live_user")):
        rows = having(key)
        added = [(b[key] - a[key]) / (b["objects"] - a["objects"]) * 1e9
                 for a, b in zip(rows, rows[1:]) if b["objects"] > a["objects"]]
        if len(added) > 1:
            yield ("%s per object added within 20%%" % name, max(added) <= min(added) * 1.2,
                   ", ".join("%.0f" % x for x in added) + " ns, between consecutive sizes")
    yield goal("pause within 2x the floor + 50 ms", ("pause", "floor_cpu"),
               lambda rows: all(r["pause"] <= 2 * r["floor_cpu"] + 0.05 for r in rows),
               lambda rows: ", ".join("%.3f s (limit %.3f)" % (
                   r["pause"], 2 * r["floor_cpu"] + 0.05) for r in rows))
    # `tensors` holds what `objects` does and the holders' graph, dominators and paths besides.
    yield goal("own structures <= 96 bytes an object",
               ("rss_per_object", "tensors_rss_per_object"),
               lambda rows: all(max(r["rss_per_object"], r["tensors_rss_per_object"]) <= 96
                                for r in rows),
               lambda rows: ", ".join("%.0f B (tensors %.0f B)" % (
                   r["rss_per_object"], r["tensors_rss_per_object"]) for r in rows))
    yield goal("plugin in gdb within 1.2x the CLI", ("gdb_ratio",),
               lambda rows: all(r["gdb_ratio"] <= 1.2 for r in rows),
               lambda rows: ", ".join("%.2fx" % r["gdb_ratio"] for r in rows))
    yield goal("core and live within 1.2x", ("core_ratio",),
               lambda rows: all(1 / 1.2 <= r["core_ratio"] <= 1.2 for r in rows),
               lambda rows: ", ".join("%.2fx" % r["core_ratio"] for r in rows))
    # A live run is the copy (system CPU: the floor into fresh memory, which a core, mapped from
    # the page cache, does without) and the walk (user CPU), which both share.
    yield goal("core and live walks (user) within 1.2x", ("core_user_ratio",),
               lambda rows: all(1 / 1.2 <= r["core_user_ratio"] <= 1.2 for r in rows),
               lambda rows: ", ".join("%.2fx" % r["core_user_ratio"] for r in rows))


def main():
    global CULEAK, PLUGIN, GDB, STEP_TIMEOUT
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
    ap.add_argument("--build", default=os.path.join(ROOT, "build"),
                    help="where culeak and its plugin lie (default build/; build/static/ on a "
                         "machine without libdw)")
    ap.add_argument("--gdb", default="gdb", help="the gdb for the core and the plugin's share")
    ap.add_argument("--step-timeout", type=int, default=STEP_TIMEOUT,
                    help="seconds a step's command may take before it is left out (default %d)"
                    % STEP_TIMEOUT)
    ap.add_argument("--json", help="also write the measurements to this file")
    ap.add_argument("--tmp", default=os.path.join(ROOT, "build"), help="where the gcore goes")
    args = ap.parse_args()
    STEP_TIMEOUT = args.step_timeout
    build = os.path.abspath(args.build)
    CULEAK, GDB = os.path.join(build, "culeak"), args.gdb
    for need in (CULEAK, os.path.join(build, "culeak_gdb.abi3.so"), args.python):
        if not os.path.exists(need):
            sys.exit("bench: %s is missing (make; scripts/install-deps)" % need)
    ensure_objgraph()
    loader_dir = tempfile.TemporaryDirectory()
    PLUGIN = write_plugin_loader(build, loader_dir.name)
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
        print("%-4s %-40s %s" % ({True: "met", False: "NOT", None: "n/a"}[ok], name, measured))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"load": os.getloadavg(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
