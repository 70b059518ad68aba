"""Live attach leaves the process exactly as it was, and stops it only while it must."""
import json
import os
import re
import signal
import subprocess
import time

import harness
from harness import check, check_eq

SYSTEM_PY = "/usr/bin/python3"


def stopped_stays_stopped():
    with harness.Process(SYSTEM_PY, "idle.py") as p:
        p.proc.send_signal(signal.SIGSTOP)
        deadline = time.time() + 5
        while p.status()["State"][0] != "T" and time.time() < deadline:
            time.sleep(0.05)
        info = harness.culeak_json("info", "--pid", p.pid)
        check_eq(info["python"]["version"], p.truth["version"], "python.version")
        time.sleep(0.2)
        check_eq(p.status()["State"][0], "T", "state after culeak (was stopped)")
        p.proc.send_signal(signal.SIGCONT)


def debugger_holds_it():
    """Under gdb (the tracer, process stopped) culeak reads without attaching and says so; it
    copies what it reads, in bulk (info when given a copy limit: by default it copies nothing), and
    leaves the process stopped as gdb holds it."""
    with harness.tempdir() as d, harness.Process(SYSTEM_PY, "idle.py") as p:
        out = "%s/info.json" % d
        r = subprocess.run(
            ["gdb", "-nx", "-batch", "-p", str(p.pid), "-ex",
             "shell %s info --pid %d --copy-limit 1G --json > %s" % (harness.CULEAK, p.pid, out)],
            capture_output=True, text=True, timeout=120)
        check(r.returncode == 0, "gdb: %s" % r.stderr[-1000:])
        info = json.load(open(out))
        check_eq(info["python"]["version"], p.truth["version"], "python.version")
        check(any("held stopped by debugger" in w for w in info["warnings"]),
              "warning about the debugger: %r" % info["warnings"])
        check(info["target"]["copied_bytes"] > 0, "copied: %r" % info["target"])
        check_eq(info["target"]["stopped_microseconds"], None, "not resumed by culeak")
        check_eq(p.status()["TracerPid"], "0", "TracerPid after gdb left")


def proc_mem_fallback():
    """Where process_vm_readv is refused, /proc/PID/mem serves the same reads: those made stopped,
    and the copy of a torch process, which several threads make at once where culeak has the
    CPUs (a thread each 8 MiB), gives the same objects."""
    fallback = {"CULEAK_NO_PROCESS_VM_READV": "1"}
    with harness.Process(SYSTEM_PY, "idle.py") as p:
        info = harness.culeak_json("info", "--pid", p.pid, env=fallback)
        check_eq(info["python"]["version"], p.truth["version"], "python.version")
        check_eq(info["python"]["build"].split()[0], p.truth["version"], "banner read from .bss")
    with harness.Process(harness.TORCH_VENV, "leaks.py") as p:
        info = harness.culeak_json("info", "--pid", p.pid, "--copy-limit", "4G", env=fallback)
        check(info["target"]["copied_bytes"] > 16 << 20, "copied: %r" % info["target"])
        want = harness.culeak_json("objects", "--pid", p.pid)
        got = harness.culeak_json("objects", "--pid", p.pid, env=fallback)
        check_eq(got["types"], want["types"], "objects read through /proc/PID/mem")


def paused_for(p, args):
    """culeak tensors on p (dying.py --watchdog): its report, culeak's wall time, and the longest
    gap the process's watchdog thread saw meanwhile (how long it was stopped)."""
    p.proc.stdin.write("\n")   # starts a new measurement
    p.proc.stdin.flush()
    json.loads(p.proc.stdout.readline())
    start = time.monotonic()
    doc = harness.culeak_json("tensors", "--pid", p.pid, *args)
    wall = time.monotonic() - start
    p.proc.stdin.write("\n")
    p.proc.stdin.flush()
    gap = json.loads(p.proc.stdout.readline())["gap"]
    got = {int(t["storage_data_ptr"], 16) for t in doc["tensors"]}
    want = {s["data"] for s in p.truth["storages"]}
    check(want <= got, "%s: storages %r missing" % (args, sorted(want - got)))
    return doc, wall, gap


def resumed_while_walked():
    """The process runs again once what can change in it is copied: its own watchdog thread sees
    a pause that is a small part of culeak's run (live process, 1.5M objects), and the report is
    whole. With --copy-limit 0 it is stopped for the whole walk, as before the copy existed. With
    a limit below its memory, a scout walks it first as it runs (tests/integration/test_scout.py);
    where even what the walk reads is over the limit (1 MiB), the scout gives up as soon as its
    copy is, and the process is stopped for the whole walk after it, which culeak says: culeak
    copies what the walk reads as it reads it until the limit is spent, then reads the rest from
    the process. info reads a few pages, so it copies nothing unless asked to."""
    with harness.Process(harness.TORCH_VENV, "dying.py", "1500000", "--watchdog",
                         stdin=True) as p:
        info = harness.culeak_json("info", "--pid", p.pid)
        check_eq((info["target"]["copied_bytes"], info["target"]["stopped_microseconds"]),
                 (0, None), "info: nothing copied, stopped while read")
        check(not any("stays stopped" in w for w in info["warnings"]), "%r" % info["warnings"])
        info = harness.culeak_json("info", "--pid", p.pid, "--copy-limit", "4G")
        copied = info["target"]["copied_bytes"]
        check(copied > 50 << 20, "copied %d bytes of a 1.5M-object heap" % copied)
        check(0 < info["target"]["stopped_microseconds"] < 60e6, "stopped: %r" % info["target"])
        doc, wall, gap = paused_for(p, [])
        check(gap < wall / 3, "stopped %.2fs of culeak's %.2fs (copied %d MiB)"
              % (gap, wall, copied >> 20))
        check(not any("stays stopped" in w for w in doc["warnings"]), "%r" % doc["warnings"])
        for args in (["--copy-limit", "0"], ["--copy-limit", "1M"]):
            doc, wall, gap = paused_for(p, args)
            check(gap > wall * 0.6, "%s: stopped %.2fs of culeak's %.2fs" % (args, gap, wall))
            said = [w for w in doc["warnings"] if "stays stopped" in w]
            check_eq(len(said), 0 if args[1] == "0" else 1, "%s: warnings %r" % (args, doc["warnings"]))
        check_eq(p.status()["TracerPid"], "0", "TracerPid after culeak")


def inspects_itself():
    """A job that runs culeak on itself and reads the report through a pipe gets the whole report
    (longer than a pipe holds): culeak writes it once the job runs again."""
    with harness.Process(harness.TORCH_VENV, "self_inspect.py", harness.CULEAK) as p:
        t = p.truth
        check_eq(t["rc"], 0, "culeak's exit status in the job (%s)" % t["stderr"])
        check(t["report_bytes"] > 1 << 16, "a report of %d bytes fits a pipe" % t["report_bytes"])
        check(t["listed"] >= t["held"], "%d tensors listed of %d held" % (t["listed"], t["held"]))


def private_mappings(pid):
    """The process's private readable mappings by /proc/PID/smaps: (start, end, perms, path, kB
    a copy takes: those resident of a writable mapping, those written of a read-only one)."""
    out = []
    for line in open("/proc/%d/smaps" % pid):
        f = line.split()
        if re.fullmatch(r"[0-9a-f]+-[0-9a-f]+", f[0]):
            out.append([int(x, 16) for x in f[0].split("-")] + [f[1], " ".join(f[5:]), 0, 0])
        elif f[0] in ("Rss:", "Anonymous:"):
            out[-1][4 if f[0] == "Rss:" else 5] = int(f[1])
    return [(s, e, perms, path, rss if "w" in perms else anon)
            for s, e, perms, path, rss, anon in out if perms.startswith("r") and perms[3] == "p"]


def foreign_library_data():
    """A CUDA torch process (the CUDA 13 wheel, no GPU) is copied without the writable data of
    NVIDIA's math libraries, which hold neither Python objects nor torch's state: libcublasLt's
    .data and the 84 MiB of .bss it touched, among others. Nothing culeak reads lies there (every
    page `culeak dump` read for all its commands), and the report is the one read from the process
    stopped all along."""
    with harness.tempdir() as d, harness.Process(harness.CUDA_TORCH_VENV, "idle.py", "--torch") as p:
        mappings = private_mappings(p.pid)
        total = sum(m[4] for m in mappings) << 10
        # libcublasLt's writable mappings, and the anonymous ones right after them (its .bss)
        lt = []
        for start, end, perms, path, kb in mappings:
            if "w" in perms and (os.path.basename(path).startswith("libcublasLt.so") or
                                 (not path and lt and lt[-1][1] == start)):
                lt.append((start, end, kb))
        lt_bytes = sum(kb for _, _, kb in lt) << 10
        check(lt_bytes > 32 << 20, "libcublasLt touched %d bytes of data (%r)" % (lt_bytes, lt))
        copied = harness.culeak_json("info", "--pid", p.pid, "--copy-limit", "4G")["target"][
            "copied_bytes"]
        check(copied < total - lt_bytes / 2, "copied %d MiB of %d MiB touched, libcublasLt's %d MiB"
              % (copied >> 20, total >> 20, lt_bytes >> 20))
        dump = os.path.join(d, "dump")
        harness.culeak("dump", "--pid", p.pid, "-o", dump)
        read = [(start, pages) for start, pages in harness.dump_page_runs(dump)
                if any(start < e and start + pages * 4096 > s for s, e, _ in lt)]
        check_eq(read, [], "pages read in libcublasLt's data")
        for cmd in ("objects", "tensors"):
            copy, held = (harness.culeak_json(cmd, "--pid", p.pid, *args)
                          for args in ([], ["--copy-limit", "0"]))
            for doc in (copy, held):
                doc.pop("target", None), doc.pop("warnings", None)
            check(copy == held, "%s: copied and read stopped differ" % cmd)


def tests():
    for fn in (stopped_stays_stopped, debugger_holds_it, proc_mem_fallback, resumed_while_walked,
               inspects_itself, foreign_library_data):
        yield fn.__name__, fn
