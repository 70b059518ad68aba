"""Bad input gets one clear line on stderr and its own exit status, never a crash."""
import os
import shutil
import subprocess

import harness
from harness import check, check_eq

SYSTEM_PY = "/usr/bin/python3"
PYENV_311 = dict(harness.interpreters())["pyenv-3.11"]


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
        expect(["info", "--pid", p.pid], 4, ["permission denied", "CAP_SYS_PTRACE"], user="65534")
        check_eq(p.status()["TracerPid"], "0", "TracerPid")


def usage():
    expect(["info"], 2, ["--pid PID or --core FILE"])
    expect(["info", "--pid", "12", "--core", "x"], 2, ["exactly one"])
    expect(["info", "--pid", "abc"], 2, ["'abc'"])
    expect(["frobnicate", "--pid", "12"], 2, ["unknown command"])
    expect(["info", "--pid", "12", "--exe", "/bin/true"], 2, ["cores only"])


def json_error():
    r = harness.culeak("info", "--core", "/nonexistent/core", "--json", expect_rc=11)
    import json
    doc = json.loads(r.stdout)
    check_eq(doc["error"]["code"], "io", "error.code")


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


def tests():
    for fn in (no_such_pid, permission_denied, usage, json_error, not_a_core,
               foreign_and_truncated_core, exe_mismatch, not_python, missing_files):
        yield fn.__name__, fn
