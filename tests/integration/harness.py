"""What the integration tests share: the interpreters under test, starting scenario processes,
making cores (gdb's gcore and the kernel's), and running culeak."""
import contextlib
import glob
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CULEAK = os.path.join(ROOT, "build", "culeak")
# The CLI under ASan + UBSan (make build/culeak-san): any report aborts it (rc 1, "runtime error"
# or "AddressSanitizer" on stderr).
CULEAK_SAN = os.path.join(ROOT, "build", "culeak-san")
SCENARIOS = os.path.join(ROOT, "tests", "scenarios")
TORCH_VENV = os.path.join(ROOT, "build", "venv", "torch-2.13", "bin", "python")
CUDA_TORCH_VENV = os.path.join(ROOT, "build", "venv", "torch-2.14-cuda", "bin", "python")
PYENV = os.path.expanduser("~/.pyenv/versions")


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def check_eq(got, want, what):
    if got != want:
        raise Failure("%s: got %r, want %r" % (what, got, want))


def interpreters():
    """(name, python) for every interpreter culeak supports: pyenv 3.9-3.13 (debug info) and the
    stripped system Python. A missing one is a failure, not a skip: CI machines have them all."""
    found = []
    for minor in range(9, 14):
        paths = sorted(glob.glob(os.path.join(PYENV, "3.%d.*" % minor, "bin", "python3.%d" % minor)))
        found.append(("pyenv-3.%d" % minor, paths[-1] if paths else None))
    found.append(("system-python3", "/usr/bin/python3"))
    return found


class Process:
    """A scenario interpreter: started, its ground truth read, killed on exit."""

    def __init__(self, python, script, *args, cwd=None, env=None, preexec=None, stdin=False):
        if not python or not os.path.exists(python):
            raise Failure("interpreter not installed: %s" % python)
        self.proc = subprocess.Popen(
            [python, os.path.join(SCENARIOS, script)] + list(args), cwd=cwd, env=env,
            stdin=subprocess.PIPE if stdin else None, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, preexec_fn=preexec)
        self.truth = None
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

    def status(self):
        fields = {}
        with open("/proc/%d/status" % self.pid) as f:
            for line in f:
                key, _, value = line.partition(":")
                fields[key] = value.strip()
        return fields

    def ask(self, request):
        """One JSON request on the scenario's stdin (started with stdin=True), its JSON answer."""
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line.startswith("{"):
            raise Failure("scenario gave no answer: %r %s" % (line, self.proc.stderr.read()[-2000:]))
        return json.loads(line)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
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
    if expect_rc is not None and r.returncode != expect_rc:
        raise Failure("culeak %s exited %d (want %d): %s" % (
            " ".join(map(str, args)), r.returncode, expect_rc, (r.stderr or r.stdout)[-2000:]))
    return r


def culeak_json(*args, **kw):
    r = culeak(*(list(args) + ["--json"]), **kw)
    try:
        return json.loads(r.stdout)
    except ValueError:
        raise Failure("culeak printed invalid JSON: %r" % r.stdout[:500])


@contextlib.contextmanager
def tempdir():
    d = tempfile.mkdtemp(prefix="culeak-test-")
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def gcore(pid, directory):
    prefix = os.path.join(directory, "gcore")
    r = subprocess.run(["gcore", "-o", prefix, str(pid)], capture_output=True, text=True,
                       timeout=300)
    path = "%s.%d" % (prefix, pid)
    if r.returncode != 0 or not os.path.exists(path):
        raise Failure("gcore failed: %s" % r.stderr[-1000:])
    return path


CORE_PATTERN = "/proc/sys/kernel/core_pattern"


@contextlib.contextmanager
def kernel_core_pattern():
    """Kernel cores land as core.PID in the crashing process's directory for the duration."""
    with open(CORE_PATTERN) as f:
        old = f.read().strip()
    if old != "core.%p":
        try:
            with open(CORE_PATTERN, "w") as f:
                f.write("core.%p")
        except OSError as e:
            raise Failure("cannot set %s (need root): %s" % (CORE_PATTERN, e))
    try:
        yield
    finally:
        if old != "core.%p":
            with open(CORE_PATTERN, "w") as f:
                f.write(old)


def kernel_core(python, script, args, directory, env=None):
    """Runs a scenario that aborts, with unlimited core size; returns (truth, core path)."""
    def unlimited():
        import resource
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    p = Process(python, script, *(list(args) + ["--abort"]), cwd=directory, env=env,
                preexec=unlimited)
    p.proc.wait(timeout=120)
    p.kill()
    check(p.proc.returncode == -signal.SIGABRT, "scenario did not abort: rc %s" % p.proc.returncode)
    path = os.path.join(directory, "core.%d" % p.pid)
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
    make simgpu12 the runtime for CUDA 12 wheels, which keep their real cuBLAS)."""
    lib = os.path.join(ROOT, "build", "simgpu")
    names = [os.path.join(lib, n) for n in ("libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13")]
    if cuda == 12:
        names = [os.path.join(ROOT, "build", "simgpu12", "libcudart.so.12")]
    if not all(os.path.exists(n) for n in names):
        raise Failure("the simulated device is not built (make simgpu simgpu12)")
    return dict(os.environ, LD_PRELOAD=":".join(names), LD_LIBRARY_PATH=lib)
