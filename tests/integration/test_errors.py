"""Bad input gets one clear line on stderr and its own exit status, never a crash."""
import glob
import os
import shutil
import subprocess

import harness
from harness import check, check_eq

SYSTEM_PY = "/usr/bin/python3"
PYENV_311 = dict(harness.interpreters())["pyenv-3.11"]
NOBODY = 65534


def as_nobody():
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def expect(args, rc, words, user=None):
    r = harness.culeak(*args, expect_rc=rc, user=user)
    lines = r.stderr.strip().splitlines()
    check_eq(len(lines), 1, "stderr lines (%r)" % r.stderr)
    check(lines[0].startswith("culeak: error: "), "error line: %r" % lines[0])
    for w in words:
        check(w in lines[0], "%r not in %r" % (w, lines[0]))
    return lines[0]


def no_such_pid():
    pid_max = int(open("/proc/sys/kernel/pid_max").read())
    free = next(p for p in range(pid_max - 1, 1, -1) if not os.path.exists("/proc/%d" % p))
    expect(["info", "--pid", free], 3, ["no process with pid %d" % free])


def permission_denied():
    with harness.Process(SYSTEM_PY, "idle.py") as p:
        expect(["info", "--pid", p.pid], 4, ["permission denied", "CAP_SYS_PTRACE",
                                             "belongs to user root (uid 0)"], user="65534")
        check_eq(p.status()["TracerPid"], "0", "TracerPid")


PF_KTHREAD = 0x00200000
# A tracer that seizes a process and leaves it running (PTRACE_SEIZE = 0x4206), as strace does.
SEIZER = """import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
assert libc.ptrace(0x4206, int(sys.argv[1]), None, None) == 0, ctypes.get_errno()
print("SEIZED", flush=True)
time.sleep(600)
"""


def refusals():
    """Root is told what stopped it, never to "run culeak as root": a kernel thread, a process
    another tracer holds, and pid 1 (a sandbox may forbid tracing it; then it says so)."""
    def flags(pid):
        try:
            return int(open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[6])
        except (OSError, IndexError, ValueError):
            return 0
    pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    kthread = next((p for p in pids if flags(p) & PF_KTHREAD), None)
    check(kthread is not None, "no kernel thread in /proc (a pid namespace?)")
    expect(["info", "--pid", kthread], 8, ["is a kernel thread"])
    r = harness.culeak("info", "--pid", 1, expect_rc=None)
    if r.returncode == 4:
        check("as root" not in r.stderr and "process 1" in r.stderr, "pid 1: %r" % r.stderr)
    else:
        check(r.returncode in (0, 8), "pid 1: exit %d: %r" % (r.returncode, r.stderr))
    with harness.Process(SYSTEM_PY, "idle.py") as p:
        seizer = subprocess.Popen([SYSTEM_PY, "-c", SEIZER, str(p.pid)], stdout=subprocess.PIPE,
                                  text=True)
        try:
            check_eq(seizer.stdout.readline().strip(), "SEIZED", "the other tracer")
            line = expect(["info", "--pid", p.pid], 4, ["held by process %d" % seizer.pid])
            check("as root" not in line, "traced: %r" % line)
        finally:
            seizer.kill()
            seizer.wait()


def usage():
    expect(["info"], 2, ["--pid PID, --core FILE or --dump FILE"])
    expect(["info", "--core", "x", "--dump", "y"], 2, ["exactly one"])
    expect(["info", "--pid", "12", "--dump", "y"], 2, ["exactly one"])
    expect(["info", "--pid", "abc"], 2, ["'abc'"])
    expect(["frobnicate", "--pid", "12"], 2, ["unknown command"])
    expect(["info", "--pid", "12", "--exe", "/bin/true"], 2, ["cores only"])


def options():
    """Numbers are range-checked, options that do not apply and repeats are refused (exit 2),
    before any target is touched (pid 1 is never stopped by these)."""
    for args, words in [
        (["tensors", "--pid", "1", "--max-objects", "-1"], ["--max-objects", "'-1'"]),
        (["tensors", "--pid", "1", "--max-objects", "1" + "0" * 20], ["--max-objects"]),
        (["objects", "--pid", "1", "--top", "-5"], ["--top", "'-5'"]),
        (["refs", "--pid", "1", "--addr", "0x" + "f" * 18], ["--addr", "64 bits"]),
        (["refs", "--pid", "1", "--addr", "-0x10"], ["--addr", "'-0x10'"]),
        (["tensors", "--pid", "1", "--top", "5"], ["--top does not apply to tensors"]),
        (["watch", "--pid", "1", "--pid", "2"], ["watch reads one target"]),
        (["info", "--sysroot", "/", "--sysroot", "/"], ["--sysroot given twice"]),
        (["tensors", "--pid", "1", "--min-bytes", "1Q"], ["--min-bytes", "'1Q'"]),
        (["tensors", "--pid", "1", "--device", "gpu"], ["--device", "cuda:N"]),
        (["blocks", "--pid", "1", "--device", "cpu"], ["--device cpu does not apply"]),
        (["info", "--pid", "1", "--interval", "5"], ["--interval does not apply to info"]),
        (["summary", "--core", "-"], ["--core -", "dump only"]),
        (["dump", "--pid", "1", "-o", "x", "--note", "two\nlines"], ["--note", "one line"]),
        (["dump", "--core", "-", "--pid", "1", "--pid", "2", "-o", "x"], ["several"]),
        (["watch", "--pid", "1", "--dump-on-growth", "0", "-o", "/"], ["above 0"]),
        (["watch", "--pid", "1", "--dump-on-growth", "1M"], ["go together"]),
        (["watch", "--pid", "1", "--dump-on-growth", "1M", "-o", "/dev/null"], ["not a folder"]),
    ]:
        expect(args, 2, words)


def units_and_devices():
    """--min-bytes 1K is 1024 bytes and --device takes torch's spelling: the process's own
    tensors, filtered by culeak, against its own sizes."""
    with harness.Process(harness.TORCH_VENV, "dying.py", "2000") as p:
        sizes = sorted(s["bytes"] for s in p.truth["storages"])
        for spec, limit in (("4K", 4096), ("5000", 5000)):
            doc = harness.culeak_json("tensors", "--pid", p.pid, "--min-bytes", spec)
            got = sorted(t["nbytes"] for t in doc["tensors"])
            check_eq(got, [s for s in sizes if s >= limit], "storages of --min-bytes %s" % spec)
        for device, want in (("cpu", sizes), ("cuda:0", [])):
            doc = harness.culeak_json("tensors", "--pid", p.pid, "--device", device)
            check_eq(sorted(t["nbytes"] for t in doc["tensors"]), want, "--device %s" % device)


def json_error():
    r = harness.culeak("info", "--core", "/nonexistent/core", "--json", expect_rc=11)
    import json
    doc = json.loads(r.stdout)
    check_eq(doc["error"]["code"], "io", "error.code")


def friction():
    """What a new user met (issue 42): a command line that does not parse still answers --json
    with an error object; an empty value is a usage error that names the option; a bare --type
    naming two types is a usage error naming both; a repeated --pid is one target; files culeak
    writes are its user's alone (0600), and root's dump of a job is the job's user's."""
    import json
    r = harness.culeak("summary", "--pid", "abc", "--json", expect_rc=2)
    doc = json.loads(r.stdout)
    check_eq(doc["error"]["code"], "usage", "JSON error of an unparsable command line")
    expect(["info", "--core", "c", "--sysroot", ""], 2, ["--sysroot wants DIR"])
    with harness.Process(PYENV_311, "twin_types.py") as p:
        line = expect(["refs", "--pid", p.pid, "--type", "Widget"], 2,
                      ["names 2 types", "garage.Widget (1)", "shop.Widget (1)", "qualified"])
        for qualified, address in p.truth["widgets"].items():
            doc = harness.culeak_json("refs", "--pid", p.pid, "--type", qualified)
            check_eq([int(o["address"], 16) for o in doc["objects"]], [address], qualified)
        doc = harness.culeak_json("info", "--pid", p.pid, "--pid", p.pid)
        check_eq(doc["target"]["pid"], p.pid, "--pid P --pid P: one target, no envelope")
        # two culeaks at once: the second waits while the first holds the process
        for _ in range(5):
            both = [subprocess.Popen([harness.CULEAK, "summary" if k else "objects", "--pid",
                                      str(p.pid)], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True) for k in (0, 1)]
            for c in both:
                _, err = c.communicate(timeout=120)
                check(c.returncode in (0, 9) and "refused" not in err and "held by" not in err,
                      "two at once: exit %d: %r" % (c.returncode, err))
        with harness.tempdir() as d:
            for args in (["snapshot", "-o", os.path.join(d, "s.json")],
                         ["dump", "-o", os.path.join(d, "d.cldump")]):
                harness.culeak(*args, "--pid", p.pid)
                mode = os.stat(args[-1]).st_mode & 0o777
                check_eq(oct(mode), oct(0o600), "%s's file" % args[0])
            check_eq(sorted(os.listdir(d)), ["d.cldump", "s.json"], "no file left beside them")
    # root's dump of a job is the job's user's, as the job's core would be
    with harness.tempdir() as d, harness.Process(SYSTEM_PY, "twin_types.py",
                                                 preexec=as_nobody) as p:
        harness.culeak("dump", "--pid", p.pid, "-o", os.path.join(d, "d.cldump"))
        st = os.stat(os.path.join(d, "d.cldump"))
        check_eq((st.st_uid, st.st_gid, oct(st.st_mode & 0o777)), (NOBODY, NOBODY, oct(0o600)),
                 "owner and mode of root's dump of a job of nobody's")


def torch_files_missing():
    """A core read where the job's torch libraries are missing, or another build sits at their
    path: exit 11 or 7, naming --sysroot, never "0 tensors" (a sysroot of links to the job's
    files, but for torch's)."""
    with harness.tempdir() as d:
        with harness.Process(harness.TORCH_VENV, "train.py", cwd=d,
                             env=dict(os.environ, HOLD="1")) as p:
            paths = sorted({line.split(None, 5)[5].strip() for line in
                            open("/proc/%d/maps" % p.pid) if line.count(" /") and
                            len(line.split(None, 5)) == 6 and line.split(None, 5)[5].startswith("/")})
            subprocess.run(["gcore", "-o", os.path.join(d, "core"), str(p.pid)],
                           capture_output=True, timeout=300, check=True)
            core = os.path.join(d, "core.%d" % p.pid)
        root = os.path.join(d, "root")
        torch_libs = [x for x in paths if "/torch/lib/" in x]
        check(torch_libs, "torch's libraries in the maps: %r" % paths[:20])
        for x in paths:
            if x not in torch_libs and os.path.exists(x):
                os.makedirs(os.path.dirname(root + x), exist_ok=True)
                os.symlink(x, root + x)
        expect(["summary", "--core", core, "--sysroot", root], 11, ["not on this machine",
                                                                    "--sysroot"])
        other = glob.glob(os.path.join(harness.ROOT, "build", "venv", "torch-2.14-cuda", "lib",
                                       "python3*", "site-packages", "torch", "lib", "libc10.so"))
        for x in torch_libs:
            os.makedirs(os.path.dirname(root + x), exist_ok=True)
            os.symlink(x, root + x)
            if os.path.basename(x) == "libc10.so" and other:
                os.unlink(root + x)
                os.symlink(other[0], root + x)
        if other:
            expect(["summary", "--core", core, "--sysroot", root], 7, ["another build",
                                                                       "--sysroot"])


def not_a_core():
    with harness.tempdir() as d:
        junk = os.path.join(d, "junk")
        with open(junk, "wb") as f:
            f.write(os.urandom(4096))
        expect(["info", "--core", junk], 5, ["not an ELF file"])
        expect(["info", "--core", SYSTEM_PY], 5, ["not a core file"])
        expect(["info", "--core", d], 5, ["not a regular file"])
        empty = os.path.join(d, "empty")
        open(empty, "w").close()
        expect(["info", "--core", empty], 5, ["empty"])


def foreign_and_truncated_core():
    with harness.tempdir() as d, harness.Process(SYSTEM_PY, "idle.py") as p:
        core = harness.gcore(p.pid, d)
        data = open(core, "rb").read()
        foreign = os.path.join(d, "aarch64.core")
        with open(foreign, "wb") as f:    # the same core relabelled as AArch64 (EM_AARCH64 = 183)
            f.write(data[:18] + (183).to_bytes(2, "little") + data[20:])
        expect(["info", "--core", foreign], 5, ["another architecture"])
        short = os.path.join(d, "short.core")
        with open(short, "wb") as f:
            f.write(data[: len(data) // 2])
        expect(["info", "--core", short], 6, ["truncated", "%d of " % (len(data) // 2)])


def unfinished_core():
    """A gcore onto a full disk, as cuda-gdb's of a process with expandable segments is on most
    disks (it writes the terabyte of CUDA address reservations): the file is there, its ELF header,
    which gdb writes last, is not."""
    with harness.tempdir() as d, harness.Process(SYSTEM_PY, "idle.py") as p:
        full = os.path.join(d, "full")
        os.mkdir(full)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", full], check=True)
        try:
            core = os.path.join(full, "core")
            r = subprocess.run(["gdb", "--nx", "--batch", "--readnever", "-ex",
                                "attach %d" % p.pid, "-ex", "gcore " + core, "-ex", "detach"],
                               stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=300)
            check("No space left on device" in r.stdout + r.stderr,
                  "gdb did not run out of room: %s" % (r.stdout + r.stderr)[-1000:])
            expect(["info", "--core", core], 6, ["unfinished core"])
        finally:
            subprocess.run(["umount", full], check=True)


def exe_mismatch():
    with harness.tempdir() as d, harness.Process(PYENV_311, "idle.py") as p:
        core = harness.gcore(p.pid, d)
        expect(["info", "--core", core, "--exe", SYSTEM_PY], 7, ["does not match the core"])
        info = harness.culeak_json("info", "--core", core, "--exe", p.truth["executable"])
        check_eq(info["python"]["version"], p.truth["version"], "version with the right --exe")


def not_python():
    sleeper = subprocess.Popen(["sleep", "600"])
    try:
        expect(["info", "--pid", sleeper.pid], 8, ["not a Python process"])
        with harness.tempdir() as d:
            core = harness.gcore(sleeper.pid, d)
            expect(["info", "--core", core], 8, ["not a Python process"])
    finally:
        sleeper.kill()
        sleeper.wait()


def missing_files():
    """A core brought to a machine without its files: a clear error, then --lib-path/--sysroot."""
    with harness.tempdir() as d, harness.Process(SYSTEM_PY, "idle.py") as p:
        core = harness.gcore(p.pid, d)
        empty = os.path.join(d, "sysroot")
        os.mkdir(empty)
        expect(["info", "--core", core, "--sysroot", empty], 11,
               ["/usr/bin/python3.11 is not on this machine"])
        # A sysroot with just the interpreter: found there, and its version read from its file.
        os.makedirs(os.path.join(empty, "usr", "bin"))
        shutil.copy("/usr/bin/python3.11", os.path.join(empty, "usr", "bin"))
        info = harness.culeak_json("info", "--core", core, "--sysroot", empty)
        check_eq(info["python"]["version"], p.truth["version"], "version via --sysroot")
        libdir = os.path.join(d, "libs")
        os.mkdir(libdir)
        shutil.copy("/usr/bin/python3.11", libdir)
        info = harness.culeak_json("info", "--core", core, "--sysroot", os.path.join(d, "none"),
                                   "--lib-path", libdir)
        check_eq(info["python"]["version"], p.truth["version"], "version via --lib-path")


def output():
    """A report is held in an unlinked file of TMPDIR until the reads are done, in memory where
    none can be made: the same report either way, nothing left behind; output that cannot be
    written (a full disk) is an error, not a report cut short."""
    with harness.tempdir() as d, harness.Process(SYSTEM_PY, "idle.py") as p:
        spill = os.path.join(d, "tmp")
        os.mkdir(spill)
        with harness.stopped(p):   # its threads may still be settling: two reads of one state
            held = harness.culeak_json("objects", "--pid", p.pid, env={"TMPDIR": spill})
            check_eq(os.listdir(spill), [], "files left in TMPDIR")
            in_memory = harness.culeak_json("objects", "--pid", p.pid,
                                            env={"TMPDIR": os.path.join(d, "none")})
        check_eq(held["objects"], in_memory["objects"], "objects, spilled and in memory")
        with open("/dev/full", "w") as full:
            r = subprocess.run([harness.CULEAK, "objects", "--pid", str(p.pid)], stdout=full,
                               stderr=subprocess.PIPE, text=True, timeout=300)
        check_eq(r.returncode, 11, "exit status, output to a full disk")
        check_eq(r.stderr, "culeak: error: cannot write the output: No space left on device\n",
                 "stderr, output to a full disk")


def tests():
    for fn in (no_such_pid, permission_denied, refusals, usage, options, units_and_devices,
               json_error, friction, torch_files_missing, not_a_core, foreign_and_truncated_core, unfinished_core, exe_mismatch,
               not_python, missing_files, output):
        yield fn.__name__, fn
