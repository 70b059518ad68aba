"""What the integration tests share: the interpreters under test, starting scenario processes,
making cores (gdb's gcore and the kernel's), and running culeak."""
import contextlib
import glob
import json
import os
import pty
import shutil
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CULEAK = os.path.join(ROOT, "build", "culeak")
# The CLI under ASan + UBSan (make build/culeak-san): any report aborts it (rc 1, "runtime error"
# or "AddressSanitizer" on stderr).
CULEAK_SAN = os.path.join(ROOT, "build", "culeak-san")
SCENARIOS = os.path.join(ROOT, "tests", "scenarios")
TORCH_VENV = os.path.join(ROOT, "build", "venv", "torch-2.13", "bin", "python")
CUDA_TORCH_VENV = os.path.join(ROOT, "build", "venv", "torch-2.14-cuda", "bin", "python")
# The CUDA wheels make check runs live, one per CUDA major; scripts/install-deps installs only
# these (with the CPU wheel), make check-full the other releases too (CULEAK_FULL=1), and
# tests/evidence keeps every release's layout tables tested in make check.
CHECK_CUDA_RELEASES = ("2.10", "2.14")


def cuda_python(release):
    """The interpreter of the venv with PyPI's CUDA build of torch RELEASE ("2.10")."""
    return os.path.join(ROOT, "build", "venv", "torch-%s-cuda" % release, "bin", "python")


def full_unless_checked(release):
    """A cell's tag for a CUDA wheel's release: () in make check's, ("full",) for the others."""
    return () if release.replace("-cuda", "") in CHECK_CUDA_RELEASES else ("full",)
PYENV = os.path.expanduser("~/.pyenv/versions")


class Failure(Exception):
    pass


def size_text(n):
    """n bytes as culeak's text reports write sizes: "640 B", "10.4 MiB" (report/text.c)."""
    units = ["B", "KiB", "MiB", "GiB", "TiB"]
    v, u = float(n), 0
    while v >= 1024 and u < 4:
        v /= 1024
        u += 1
    return "%.1f %s" % (v, units[u]) if u else "%.0f %s" % (v, units[u])


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def check_eq(got, want, what):
    if got != want:
        raise Failure("%s: got %r, want %r" % (what, got, want))


ROOTS = os.path.join(ROOT, "build", "roots")   # the Debian roots scripts/install-roots makes
# Interpreters in those roots: (name, root, the interpreter's path inside it).
ROOT_PYTHONS = [("trixie-3.13", "trixie", "/usr/bin/python3.13"),
                ("sid-3.13", "sid", "/usr/bin/python3.13"),
                ("sid-3.14", "sid", "/usr/bin/python3.14"),
                ("sid-3.15", "sid", "/usr/bin/python3.15")]
# Root interpreters that culeak cannot walk yet (3.13 after 3.13.0, and 3.14: issue 13).
# interpreters() leaves exactly these out, by name; empty it as support lands.
NOT_YET_SUPPORTED = set()


def root_interpreters():
    """(name, python) for each interpreter in a Debian root, python being its file as the host
    names it (build/roots/sid/usr/bin/python3.14). Process runs it inside its root; its cores are
    read with sysroot_args(python)."""
    return [(name, os.path.join(ROOTS, root, inner.lstrip("/")))
            for name, root, inner in ROOT_PYTHONS]


def interpreters(unsupported=False):
    """(name, python) for every interpreter culeak supports: pyenv 3.9-3.13 (debug info), the
    stripped system Python and the Debian roots' interpreters (but those in NOT_YET_SUPPORTED,
    unless unsupported). A missing one is a failure, not a skip: CI machines have them all."""
    found = []
    for minor in range(9, 14):
        paths = sorted(glob.glob(os.path.join(PYENV, "3.%d.*" % minor, "bin", "python3.%d" % minor)))
        found.append(("pyenv-3.%d" % minor, paths[-1] if paths else None))
    found.append(("system-python3", "/usr/bin/python3"))
    found += [(name, python) for name, python in root_interpreters()
              if unsupported or name not in NOT_YET_SUPPORTED]
    return found


def root_of(python):
    """(root directory, path inside it) when python lies in one of the Debian roots, else None."""
    base = os.path.abspath(ROOTS) + os.sep
    path = os.path.abspath(python)
    if not path.startswith(base):
        return None
    name, _, inner = path[len(base):].partition(os.sep)
    return os.path.join(ROOTS, name), "/" + inner


def sysroot_args(python):
    """What culeak needs to read a core of python's process: --sysroot ROOT for an interpreter in
    a root (its cores name the files as the root sees them), nothing for the host's."""
    found = root_of(python)
    return ["--sysroot", found[0]] if found else []


class Root:
    """How a process runs inside a root directory, as a container runtime starts it: its own
    mount namespace, pivot_root'ed into the directory (so /proc/PID/maps names the files as the
    root sees them, and only /proc/PID/root reaches them), with its own /proc, the host's /tmp
    (test directories have one path inside and out) and tests/scenarios at /srv.

    pid_ns: its own PID namespace too; a shell is its init and the scenario that shell's child
    (a scenario as init would ignore its own SIGABRT). chroot: chroot instead of pivot_root, so
    the host names its files by their host paths. binds: (host path, path inside) pairs, each
    mounted over a tmpfs on the inner path's top directory (the root itself is never written)."""

    SCENARIOS = "/srv"

    def __init__(self, directory, pid_ns=False, chroot=False, binds=()):
        self.directory = os.path.realpath(directory)
        self.pid_ns, self.chroot, self.binds = pid_ns, chroot, list(binds)

    def host_path(self, inner):
        """Where the file at inner (a path inside) is on the host."""
        for host, inside_at in self.binds:
            if inner == inside_at or inner.startswith(inside_at + "/"):
                return host + inner[len(inside_at):]
        return os.path.join(self.directory, inner.lstrip("/"))

    def sysroot(self, directory):
        """A directory on the host that holds the files as the process inside sees them, for
        --sysroot: the root itself, or with binds a tree of links made in directory (the root's
        entries, each bind at its inner path), as a container's merged file system would be."""
        if not self.binds:
            return self.directory
        farm = os.path.join(directory, "sysroot")
        tops = {inner.strip("/").split("/")[0] for _, inner in self.binds}
        os.makedirs(farm)
        for entry in os.listdir(self.directory):
            if entry not in tops:
                os.symlink(os.path.join(self.directory, entry), os.path.join(farm, entry))
        for host, inner in self.binds:
            os.makedirs(os.path.dirname(farm + inner), exist_ok=True)
            os.symlink(os.path.realpath(host), farm + inner)
        return farm

    def command(self, argv, cwd):
        """The host command that runs argv (paths inside the root) in cwd inside it."""
        q = shlex.quote
        r = self.directory
        lines = ["set -e", "mount --bind %s %s" % (q(r), q(r)),   # pivot_root wants a mount point
                 "mount -t proc proc %s/proc" % q(r), "mount --bind /tmp %s/tmp" % q(r),
                 "mount --bind %s %s%s" % (q(SCENARIOS), q(r), self.SCENARIOS)]
        tops = set()
        for host, inner in self.binds:
            top = inner.strip("/").split("/")[0]
            if top not in tops:
                tops.add(top)
                lines.append("mount -t tmpfs tmpfs %s/%s" % (q(r), q(top)))
            lines += ["mkdir -p %s%s" % (q(r), q(inner)),
                      "mount --bind %s %s%s" % (q(host), q(r), q(inner))]
        run = "/bin/sh -c %s" % q("cd %s && exec %s" % (q(cwd), " ".join(map(q, argv))))
        if self.chroot:
            run = "chroot %s %s" % (q(r), run)
        else:
            lines += ["cd %s" % q(r), "pivot_root . mnt", "umount -l /mnt"]
        # as init, the shell waits for the scenario; else the scenario replaces it
        lines += ["%s; exit $?" % run] if self.pid_ns else ["exec %s" % run]
        unshare = ["unshare", "--mount"]
        if self.pid_ns:
            unshare += ["--pid", "--fork", "--kill-child"]
        return unshare + ["sh", "-c", "\n".join(lines)]


def children(pid):
    """The pids whose parent is pid (from every /proc/N/stat: no CONFIG_PROC_CHILDREN needed)."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open("/proc/%s/stat" % name) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[1]) == pid:
                found.append(int(name))
    return found


def namespace_pid(pid):
    """pid as its own PID namespace numbers it (the last field of NSpid)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("NSpid:"):
                return int(line.split()[-1])
    raise Failure("no NSpid in /proc/%d/status" % pid)


def other_mount_namespace(pid):
    return os.readlink("/proc/%d/ns/mnt" % pid) != os.readlink("/proc/self/ns/mnt")


def inside(pid, argv, wd="/", env=None, timeout=300):
    """Runs argv in the mount (and PID) namespaces and the root of process pid, as `docker exec`
    would; wd must be a directory inside (under /tmp for a Root's)."""
    cmd = ["nsenter", "--target", str(pid), "--mount", "--root", "--wd=%s" % wd]
    if os.readlink("/proc/%d/ns/pid" % pid) != os.readlink("/proc/self/ns/pid"):
        cmd.append("--pid")
    return subprocess.run(cmd + ["--"] + list(argv), capture_output=True, text=True,
                          timeout=timeout, env=env)


class Process:
    """A scenario interpreter: started, its ground truth read, killed on exit."""

    def __init__(self, python, script, *args, cwd=None, env=None, preexec=None, stdin=False,
                 root=None):
        """python: a host interpreter, or one in a Debian root (root_interpreters()), which runs
        inside its root; root: a Root to run python (then a path inside it) in. pid is the host's
        pid of the scenario, ns_pid the one it knows itself by."""
        # a scenario named as a standard module (secrets.py) is what every scenario of the
        # folder imports in its place (the script's folder comes first on sys.path)
        check(script[:-3] not in getattr(sys, "stdlib_module_names", ()),
              "scenario %s shadows the standard library's module" % script)
        found = root_of(python) if python and root is None else None
        if found:
            root, python = Root(found[0]), found[1]
        host_python = root.host_path(python) if root else python
        if not python or not os.path.lexists(host_python):
            raise Failure("interpreter not installed: %s" % host_python)
        argv = [python, os.path.join(Root.SCENARIOS if root else SCENARIOS, script)] + list(args)
        if root:
            argv = root.command(argv, cwd or "/tmp")
            check(cwd is None or cwd.startswith("/tmp/"), "a root's process runs in /tmp: %s" % cwd)
        self.root, self.args = root, list(args)
        self.proc = subprocess.Popen(
            argv, cwd=cwd, env=env,
            stdin=subprocess.PIPE if stdin else None, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, preexec_fn=preexec)
        self.truth = self.pid = None   # kill() may run before the scenario says who it is
        deadline = time.time() + 120
        lines = []
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if line.startswith("{"):
                self.truth = json.loads(line)
            if line.strip() == "READY":
                break
        if self.truth is None:
            if self.proc.poll() is None:
                self.proc.kill()
            err = self.proc.stderr.read()[-2000:]
            self.kill()
            raise Failure("scenario %s did not start: %s %s" % (script, "".join(lines), err))
        self.pid = self.proc.pid
        if root and root.pid_ns:
            self.pid = self._scenario_in_namespace()
        if self.pid is None:   # it aborted already (kernel_core): only its own pid is known
            self.ns_pid = self.truth["pid"]
            return
        self.ns_pid = namespace_pid(self.pid)
        if "pid" in self.truth:
            check_eq(self.ns_pid, self.truth["pid"],
                     "the scenario's own pid (NSpid of %d)" % self.pid)

    def _scenario_in_namespace(self):
        """The host pid of a scenario in its own PID namespace: unshare's child is the shell
        that is the namespace's init, and the scenario its only child. None once it has exited."""
        inits = children(self.proc.pid)
        scenario = children(inits[0]) if len(inits) == 1 else []
        if not scenario and (not inits or self.proc.poll() is not None or "--abort" in self.args):
            return None
        check(len(scenario) == 1, "no single scenario under unshare %d: %r %r" % (
            self.proc.pid, inits, scenario))
        return scenario[0]

    def status(self):
        fields = {}
        with open("/proc/%d/status" % self.pid) as f:
            for line in f:
                key, _, value = line.partition(":")
                fields[key] = value.strip()
        return fields

    def wait_stopped(self, why="did not stop"):
        """Until the process is stopped (State T), at most 30 s; else a Failure saying why."""
        deadline = time.time() + 30
        while self.status()["State"][0] != "T":
            check(time.time() < deadline, "process %d %s" % (self.pid, why))
            time.sleep(0.01)

    def next_stop(self):
        """A scenario that stops itself (SIGSTOP) at each step: on to its next stop."""
        self.proc.send_signal(signal.SIGCONT)
        time.sleep(0.05)   # out of the stop it was in, before the wait looks
        self.wait_stopped("did not stop itself again")

    def ask(self, request):
        """One JSON request on the scenario's stdin (started with stdin=True), its JSON answer."""
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line.startswith("{"):
            raise Failure("scenario gave no answer: %r %s" % (line, self.proc.stderr.read()[-2000:]))
        return json.loads(line)

    def kill(self):
        if self.pid not in (None, self.proc.pid) and self.proc.poll() is None:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
        if self.proc.poll() is None:
            self.proc.kill()   # unshare --kill-child takes its namespace's init along
        self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if f:
                f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill()


def culeak(*args, expect_rc=0, user=None, env=None, binary=CULEAK):
    if not os.path.exists(binary):
        raise Failure("%s is not built" % binary)
    cmd = [binary] + [str(a) for a in args]
    if user is not None:
        cmd = ["setpriv", "--reuid=%s" % user, "--regid=%s" % user, "--clear-groups"] + cmd
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, **env) if env else None)
    check("\x1f" not in r.stdout + r.stderr and "\\u001f" not in r.stdout,
          "a path's step mark (0x1f) in culeak's output: %r" % (r.stdout + r.stderr)[:500])
    if expect_rc is not None and r.returncode != expect_rc:
        raise Failure("culeak %s exited %d (want %d): %s" % (
            " ".join(map(str, args)), r.returncode, expect_rc, (r.stderr or r.stdout)[-2000:]))
    return r


def on_terminal(cmd, timeout=300, env=None):
    """Runs cmd with its stderr on a pseudo-terminal (its stdout a pipe): (exit status, stdout,
    what reached the terminal). env: variables added to this process's."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave, text=True,
                            env=dict(os.environ, **(env or {})))
    os.close(slave)
    terminal = b""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            chunk = os.read(master, 65536)
        except OSError:   # EIO: every holder of the terminal's other end has closed it
            break
        if not chunk:
            break
        terminal += chunk
    os.close(master)
    out = proc.communicate(timeout=max(1, deadline - time.time()))[0]
    return proc.returncode, out, terminal.decode(errors="replace")


def target_of(via, p, d):
    """culeak's target arguments for process p: live, its gcore, or culeak's dump of it, read
    once the process is gone (d: a folder for the files)."""
    if via == "gcore":
        return ["--core", gcore(p.pid, d)]
    if via == "dump":
        culeak("dump", "--pid", p.pid, "-o", os.path.join(d, "job.cldump"))
        p.kill()
        return ["--dump", os.path.join(d, "job.cldump")]
    return ["--pid", p.pid]


def culeak_json(*args, **kw):
    r = culeak(*(list(args) + ["--json"]), **kw)
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        raise Failure("culeak printed invalid JSON: %r" % r.stdout[:500])
    check_schema(doc, args)
    check_steps(doc)
    return doc


def check_steps(node):
    """Every path a document gives as text and as steps is one path: the steps' texts, in order,
    make the text (after the `[*` a dict key's position wraps around it), and it starts at a
    root."""
    if isinstance(node, list):
        for v in node:
            check_steps(v)
        return
    if not isinstance(node, dict):
        return
    pairs = []
    if "paths" in node and "steps" in node:
        check_eq(len(node["steps"]), len(node["paths"]), "steps beside paths")
        pairs = list(zip(node["paths"], node["steps"]))
    elif "steps" in node:
        pairs = [(node.get("path", node.get("holder")), node["steps"])]
    for text, steps in pairs:
        joined = "".join(s["text"] for s in steps)
        check(steps and steps[0]["kind"] == "root", "a path not starting at a root: %r" % steps)
        unwrapped = text
        while unwrapped.startswith("[*") and unwrapped != joined:
            unwrapped = unwrapped[2:]
        check(unwrapped == joined, "path %r is not its steps %r" % (text, joined))
    for v in node.values():
        check_steps(v)


SCHEMAS = os.path.join(ROOT, "docs", "schemas")
SCHEMA_COMMANDS = ("info", "objects", "balance", "refs", "tensors", "summary", "blocks", "snapshot",
                   "diff", "merge")
_validators = {}


def check_schema(doc, args):
    """Every --json document the tests read through culeak_json is checked against its command's
    schema in docs/schemas/ (an error object against error.json): a field the schema does not
    document, or one it requires and the document lacks, fails the test that printed it."""
    import jsonschema
    command = next((str(a) for a in args if str(a) in SCHEMA_COMMANDS), None)
    if isinstance(doc, dict) and "error" in doc:
        name = "error"
    elif isinstance(doc, dict) and "targets" in doc:   # several targets: each report its own
        name = "targets"
        for t in doc["targets"]:
            if t["report"] is not None:
                check_schema(t["report"], [command])
    else:
        name = command
    if name is None:
        return
    if name not in _validators:
        with open(os.path.join(SCHEMAS, name + ".json")) as f:
            _validators[name] = jsonschema.Draft202012Validator(json.load(f))
    errors = sorted(_validators[name].iter_errors(doc), key=lambda e: list(map(str, e.path)))
    if errors:
        e = errors[0]
        raise Failure("culeak %s --json breaks docs/schemas/%s.json at /%s: %s (%d errors)" % (
            name, name, "/".join(map(str, e.path)), e.message[:300], len(errors)))


@contextlib.contextmanager
def stopped(p):
    """Process p held in group-stop (culeak leaves it so), so that nothing changes between the
    inspections compared: an idle loop makes objects, and culeak lets a job run while it walks
    its copy."""
    os.kill(p.pid, signal.SIGSTOP)
    p.wait_stopped()
    try:
        yield
    finally:
        os.kill(p.pid, signal.SIGCONT)


@contextlib.contextmanager
def tempdir():
    d = tempfile.mkdtemp(prefix="culeak-test-")
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


VSYSCALL = "0xffffffffff600000"   # the vsyscall page: gdb never reads it, in any process


# One gcore at a time in the whole run: a CUDA torch process's gcore is 2 GB (its libraries'
# text included) and gdb holds about 1 GB while writing it, so two at once can starve a CI machine
# that is also running the other test.
GCORE_LOCK = threading.Lock()


def dump_page_runs(path):
    """The pages a `culeak dump` file holds, as [(start address, pages)], read from its layout
    (inspector/target/dumpfile.h: header, section table, the page-run section)."""
    import struct
    data = open(path, "rb").read()
    _, _, count, table, _ = struct.unpack_from("<8sIIQQ", data, 0)
    for i in range(count):
        kind, _, offset, length = struct.unpack_from("<IIQQ", data, table + 24 * i)
        if kind == 5:   # CL_DUMP_PAGE_RUNS: a u64 count, then 32 bytes a run
            n = struct.unpack_from("<Q", data, offset)[0]
            return [struct.unpack_from("<QI", data, offset + 8 + 32 * k) for k in range(n)]
    raise Failure("%s has no page runs" % path)


def gcore(pid, directory, host_gdb=False):
    """A gcore of process pid in directory. A process in another mount namespace (a root's, a
    container's) is dumped by its root's own gdb inside its namespaces, unless host_gdb, so the
    core names its files as the root sees them (read it with --sysroot). For such a process a
    range gdb could not read is a failure, not a core with zeros in it: the host's gdb 13 cannot
    read the thread stacks of glibc 2.41 and later (their guard pages are madvise'd in, inside
    the mapping), so it cannot dump sid's or trixie's processes."""
    prefix = os.path.join(directory, "gcore")
    contained = other_mount_namespace(pid)
    with GCORE_LOCK:
        if contained and not host_gdb:
            ns_pid = namespace_pid(pid)
            r = inside(pid, ["gcore", "-o", prefix, str(ns_pid)], wd=directory)
            path = "%s.%d" % (prefix, ns_pid)
        else:
            # gdb itself, as the gcore script runs it, so that its exit status (a signal, if it
            # was killed) is not lost: the script exits 0 whenever the file exists
            path = "%s.%d" % (prefix, pid)
            r = subprocess.run(["gdb", "--nx", "--batch", "--readnever",
                                "-iex", "set debuginfod enabled off", "-ex", "set pagination off",
                                "-ex", "attach %d" % pid, "-ex", "gcore " + path,
                                "-ex", "detach", "-ex", "quit"],
                               stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=300)
    if r.returncode != 0 or not os.path.exists(path):
        raise Failure("gcore failed (exit status %d): %s" % (r.returncode,
                                                              (r.stdout + r.stderr)[-1000:]))
    # A gdb that died half-way through leaves a file with no ELF header (it writes the header
    # last): that is gdb's failure, not culeak's; say what gdb printed and how much room there was.
    with open(path, "rb") as f:
        if f.read(4) != b"\x7fELF":
            raise Failure("gcore wrote %s without an ELF header (%d bytes, %d MiB free there): %s"
                          % (path, os.path.getsize(path), shutil.disk_usage(directory).free >> 20,
                             (r.stdout + r.stderr)[-1500:]))
    unread = [line for line in (r.stdout + r.stderr).splitlines()
              if "Memory read failed" in line and VSYSCALL not in line]
    check(not contained or not unread, "gcore wrote zeros for what it could not read: %s" % unread)
    return path


CORE_PATTERN = "/proc/sys/kernel/core_pattern"
# The runs that need core.%p now, and the pattern the first found: two test runs at once (make
# check beside a run of a few cells) share the machine's one pattern, and the last to finish
# restores it; a run that died is forgotten.
CORE_PATTERN_USERS = "/tmp/culeak-core-pattern.json"


def _pattern_users(update):
    """Applies update(state) to the shared state under its lock; state is {"original", "pids"}."""
    import fcntl
    with open(CORE_PATTERN_USERS + ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(CORE_PATTERN_USERS) as f:
                state = json.load(f)
        except (OSError, ValueError):
            state = {"original": None, "pids": []}
        state["pids"] = [pid for pid in state["pids"] if os.path.exists("/proc/%d" % pid)]
        update(state)
        with open(CORE_PATTERN_USERS, "w") as f:
            json.dump(state, f)


@contextlib.contextmanager
def kernel_core_pattern():
    """Kernel cores land as core.PID in the crashing process's directory for the duration."""
    def enter(state):
        if not state["pids"]:
            with open(CORE_PATTERN) as f:
                state["original"] = f.read().strip()
        state["pids"].append(os.getpid())
        try:
            with open(CORE_PATTERN, "w") as f:
                f.write("core.%p")
        except OSError as e:
            raise Failure("cannot set %s (need root): %s" % (CORE_PATTERN, e))

    def leave(state):
        # one entry of this run's: a test that nests its own use within the run's leaves the
        # run's in place
        if os.getpid() in state["pids"]:
            state["pids"].remove(os.getpid())
        if not state["pids"] and state["original"] not in (None, "core.%p"):
            with open(CORE_PATTERN, "w") as f:
                f.write(state["original"])

    _pattern_users(enter)
    try:
        yield
    finally:
        _pattern_users(leave)


# Held while a test of this run makes a kernel core: kernel_core (core.%p) and core_pattern_alone
# (another pattern) take turns.
CORE_DUMPING = threading.Lock()


@contextlib.contextmanager
def core_pattern_alone(pattern):
    """core_pattern set to pattern (a pipe to a helper) for the duration, once no other run needs
    core.%p (this run's tests wait: CORE_DUMPING); meanwhile the pattern's lock is held, so other
    runs wait too."""
    import fcntl
    deadline = time.time() + 600
    with CORE_DUMPING, open(CORE_PATTERN_USERS + ".lock", "a") as lock:
        while True:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                with open(CORE_PATTERN_USERS) as f:
                    users = [p for p in json.load(f)["pids"]
                             if p != os.getpid() and os.path.exists("/proc/%d" % p)]
            except (OSError, ValueError, KeyError):
                users = []
            if not users:
                break
            fcntl.flock(lock, fcntl.LOCK_UN)
            check(time.time() < deadline, "core_pattern stayed in use by %r" % users)
            time.sleep(0.5)
        with open(CORE_PATTERN) as f:
            original = f.read().strip()
        try:
            with open(CORE_PATTERN, "w") as f:
                f.write(pattern)
            yield
        finally:
            with open(CORE_PATTERN, "w") as f:
                f.write(original)


def unlimited_core():
    """A scenario's preexec: the kernel writes its core whole."""
    import resource
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def kernel_core(python, script, args, directory, env=None, root=None):
    """Runs a scenario that aborts, with unlimited core size; returns (truth, core path). In a
    root the core lands in the same directory (it is the host's /tmp there), named by the pid
    the scenario knows itself by (core_pattern's %p)."""
    with CORE_DUMPING:
        p = Process(python, script, *(list(args) + ["--abort"]), cwd=directory, env=env,
                    preexec=unlimited_core, root=root)
        p.proc.wait(timeout=120)
        p.kill()
    # a PID namespace's init shell passes on the scenario's death as the status 128 + signal
    aborted = 128 + signal.SIGABRT if p.root and p.root.pid_ns else -signal.SIGABRT
    check(p.proc.returncode == aborted, "scenario did not abort: rc %s" % p.proc.returncode)
    path = os.path.join(directory, "core.%d" % p.ns_pid)
    deadline = time.time() + 30
    while not os.path.exists(path) and time.time() < deadline:
        time.sleep(0.1)
    check(os.path.exists(path), "no kernel core at %s (core_pattern %s)" % (
        path, open(CORE_PATTERN).read().strip()))
    return p.truth, path


def stripped_libpython(python, directory):
    """An environment in which the pyenv interpreter `python` loads a stripped copy (no .symtab,
    no DWARF) of its libpython, made in directory; returns (env, path of the copy)."""
    lib = glob.glob(os.path.join(os.path.dirname(os.path.dirname(python)), "lib",
                                 "libpython3.*.so.1.0"))[0]
    copy = os.path.join(directory, os.path.basename(lib))
    shutil.copy(lib, copy)
    subprocess.run(["strip", "--strip-all", copy], check=True)
    return dict(os.environ, LD_LIBRARY_PATH=directory), copy


def simgpu_env(cuda=13):
    """The environment scripts/simgpu-run sets: the simulated CUDA device (make simgpu builds it;
    make simgpu12 the runtime and cuBLAS for CUDA 12 wheels)."""
    lib = os.path.join(ROOT, "build", "simgpu")
    stand_ins = os.path.join(ROOT, "build", "simgpu12") if cuda == 12 else lib
    names = [os.path.join(stand_ins, n % cuda)
             for n in ("libcudart.so.%d", "libcublas.so.%d", "libcublasLt.so.%d")]
    if not all(os.path.exists(n) for n in names):
        raise Failure("the simulated device is not built (make simgpu simgpu12)")
    return dict(os.environ, LD_PRELOAD=":".join(names), LD_LIBRARY_PATH=lib)
