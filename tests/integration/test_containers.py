"""Jobs in containers: a scenario in a Debian root with its own mount and PID namespace
(unshare + pivot_root, as a container runtime starts it), inspected from the host by its host pid
(its files reachable only through /proc/PID/root), from its kernel core and gcores with --sysroot,
and by culeak run inside the same container against the pid it has there. Each is checked
against the scenario's own ground truth (test_tensors.judge, test_refs.check_target) and, for
pids and threads, against the kernel's NSpid.

The containers: sid with the pyenv 3.11 + torch 2.13 venv bind-mounted in (at paths the host
does not have), and sid's own 3.14 with Debian's python3-torch; the cells that walk the heap run
on the latter once sid-3.14 leaves harness.NOT_YET_SUPPORTED, `info` already does."""
import json
import os
import shutil
import subprocess

import harness
import test_refs
import test_tensors
from harness import check, check_eq

SID = os.path.join(harness.ROOTS, "sid")
VENV_INSIDE = "/opt/venv"   # where the container has the torch venv; the host has nothing there


def containers():
    """(name, Root factory, python inside, whether culeak walks its heap yet)."""
    venv = os.path.dirname(os.path.dirname(harness.TORCH_VENV))
    binds = [(harness.PYENV, harness.PYENV), (venv, VENV_INSIDE)]
    return [("sid+pyenv-3.11+torch-2.13",
             lambda **kw: harness.Root(SID, pid_ns=True, binds=binds, **kw),
             VENV_INSIDE + "/bin/python", True),
            ("sid-3.14+debian-torch",   # Debian's torch 2.14.1, built for 3.14
             lambda **kw: harness.Root(SID, pid_ns=True, **kw),
             "/usr/bin/python3.14", "sid-3.14" not in harness.NOT_YET_SUPPORTED)]


def ns_threads(pid):
    """The process's threads, each by the tid its own PID namespace gives it (NSpid)."""
    return sorted(harness.namespace_pid(int(t)) for t in os.listdir("/proc/%d/task" % pid))


def host_info(make_root, python):
    """info from the host: the host pid, the pid it knows itself by, its executable as it names
    it, its threads, and torch's version read from a version.py only /proc/PID/root reaches."""
    def test():
        check(not os.path.exists(VENV_INSIDE),
              "the host has %s: the test proves nothing" % VENV_INSIDE)
        with harness.Process(python, "idle.py", "--torch", root=make_root()) as p:
            check(p.pid != p.ns_pid, "pid %d is the same in the container" % p.pid)
            info = harness.culeak_json("info", "--pid", p.pid)
            target = info["target"]
            check_eq(target["pid"], p.pid, "target.pid (the host's)")
            check_eq(target["ns_pid"], p.truth["pid"], "target.ns_pid (the scenario's own)")
            check_eq(target["executable"], p.truth["executable"], "target.executable")
            check_eq(ns_threads(p.pid), p.truth["threads"], "the kernel's threads (NSpid)")
            check_eq(sorted(target["threads"]), sorted(int(t) for t in os.listdir(
                "/proc/%d/task" % p.pid)), "target.threads (host tids)")
            check_eq(info["python"]["version"], p.truth["version"], "python.version")
            check_eq(info["python"]["debug_info"], True, "python.debug_info")
            check_eq(info["torch"]["version"], p.truth["torch"], "torch.version")
            text = harness.culeak("info", "--pid", p.pid).stdout
            check("ns pid    %d" % p.truth["pid"] in text, "no ns pid line in: %s" % text)
    return test


def core_info(make_root, python):
    """info from a gcore (the container's gdb) and a kernel core, read with --sysroot: the pid the
    job has in its namespace, its DWARF (from the sysroot's /usr/lib/debug for Debian's Python),
    torch's version.py from the sysroot."""
    def test():
        root = make_root()
        with harness.tempdir() as d:
            sysroot = root.sysroot(d)
            with harness.Process(python, "idle.py", "--torch", root=root) as p:
                gcore = harness.gcore(p.pid, d)
            truth, kernel = harness.kernel_core(python, "idle.py", ["--torch"], d, root=make_root())
            for core, want in ((gcore, p.truth), (kernel, truth)):
                info = harness.culeak_json("info", "--core", core, "--sysroot", sysroot)
                check_eq(info["target"]["pid"], want["pid"], "target.pid of %s" % core)
                check_eq(sorted(info["target"]["threads"]), want["threads"], "target.threads")
                check_eq(info["target"]["executable"], want["executable"], "target.executable")
                check_eq(info["python"]["version"], want["version"], "python.version")
                check_eq(info["python"]["debug_info"], True, "python.debug_info")
                check_eq(info["torch"]["version"], want["torch"], "torch.version")
    return test


def host_live(make_root, python, chroot=False):
    """tensors and refs from the host by host pid; chroot: the host names the files by their host
    paths (a chroot in a copy of our mount namespace), found without /proc/PID/root."""
    def test():
        root = make_root(chroot=chroot)
        with harness.Process(python, "leaks.py", root=root) as p:
            test_tensors.judge(harness.culeak_json("tensors", "--pid", p.pid), p.truth)
        with harness.Process(python, test_refs.SCENARIO, root=make_root(chroot=chroot)) as p:
            test_refs.check_target(["--pid", p.pid], p.truth)
            check(p.proc.poll() is None and p.status()["TracerPid"] == "0",
                  "container process died or is still traced")
    return test


def cores(make_root, python):
    """tensors and refs from a gcore by the container's own gdb and from a kernel core, each read
    on the host with --sysroot the container's file system. (Not the host's gdb: harness.gcore.)"""
    def test():
        root = make_root()
        with harness.tempdir() as d:
            sysroot = root.sysroot(d)
            with harness.Process(python, "leaks.py", root=root) as p:
                core = harness.gcore(p.pid, d)
            test_tensors.judge(harness.culeak_json("tensors", "--core", core, "--sysroot", sysroot),
                               p.truth)
            truth, core = harness.kernel_core(python, "leaks.py", [], d, root=make_root())
            check_eq(os.path.basename(core), "core.%d" % truth["pid"], "kernel core's name")
            doc = harness.culeak_json("tensors", "--core", core, "--sysroot", sysroot)
            test_tensors.judge(doc, truth)
            with harness.Process(python, test_refs.SCENARIO, root=make_root()) as p:
                core = harness.gcore(p.pid, d)
            test_refs.check_target(["--core", core, "--sysroot", sysroot], p.truth)
            truth, core = harness.kernel_core(python, test_refs.SCENARIO, [], d, root=make_root())
            test_refs.check_target(["--core", core, "--sysroot", sysroot], truth)
    return test


def portable_culeak(directory):
    """build/culeak and the libraries it needs but the C library, copied to directory/culeak-bin,
    for a container that has none of them; (binary, environment to run it in)."""
    bindir = os.path.join(directory, "culeak-bin")
    os.makedirs(bindir)
    shutil.copy(harness.CULEAK, bindir)
    out = subprocess.run(["ldd", harness.CULEAK], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if "=>" in parts and len(parts) > 2 and parts[2].startswith("/") and \
                not parts[0].startswith(("libc.so", "libm.so")):
            shutil.copy(parts[2], bindir)
    return os.path.join(bindir, "culeak"), dict(os.environ, LD_LIBRARY_PATH=bindir)


def inside(make_root, python):
    """culeak run inside the same container (as `docker exec` would), by the job's pid there."""
    def test():
        with harness.tempdir() as d, harness.Process(python, "leaks.py", root=make_root()) as p:
            culeak, env = portable_culeak(d)
            for args in (["info"], ["tensors"]):
                r = harness.inside(p.pid, [culeak] + args + ["--pid", str(p.ns_pid), "--json"],
                                   wd=d, env=env)
                check_eq(r.returncode, 0, "culeak %s inside the container (%s)" % (
                    args[0], r.stderr[-500:]))
                doc = json.loads(r.stdout)
                if args == ["info"]:
                    check_eq(doc["target"]["pid"], p.truth["pid"], "target.pid inside")
                    check_eq(doc["target"]["ns_pid"], p.truth["pid"], "target.ns_pid inside")
                    check_eq(doc["torch"]["version"], p.truth["torch"], "torch.version inside")
                else:
                    test_tensors.judge(doc, p.truth)
    return test


def deleted_libpython():
    """A library deleted and replaced under a running process: its symbols still come from the
    copy it maps (/proc/PID/map_files), with a warning, not from the file now at that path."""
    python = dict(harness.interpreters())["pyenv-3.12"]
    with harness.tempdir() as d:
        env, copy = harness.stripped_libpython(python, d)
        with harness.Process(python, "idle.py", env=env) as p:
            os.unlink(copy)
            shutil.copy(harness.CULEAK, copy)   # another ELF file, another build-id, at the path
            info = harness.culeak_json("info", "--pid", p.pid)
            check_eq(info["python"]["version"], p.truth["version"], "python.version")
            check_eq(info["python"]["module"], copy, "python.module")
            check_eq(info["python"]["symtab"], False, "python.symtab (the stripped copy it maps)")
            warned = [w for w in info["warnings"]
                      if copy in w and "deleted or replaced" in w and "still maps" in w]
            check(warned, "no warning for %s: %r" % (copy, info["warnings"]))


def tests():
    for name, make_root, python, walks in containers():
        yield "%s:info-from-host" % name, host_info(make_root, python)
        yield "%s:info-from-cores" % name, core_info(make_root, python)
        if not walks:   # its interpreter is in harness.NOT_YET_SUPPORTED
            continue
        yield "%s:live-from-host" % name, host_live(make_root, python)
        yield "%s:live-from-host-chroot" % name, host_live(make_root, python, chroot=True)
        yield "%s:cores" % name, cores(make_root, python)
        yield "%s:inside" % name, inside(make_root, python)
    yield "pyenv-3.12:deleted-libpython", deleted_libpython
