"""The gdb plugin in gdb's batch mode: the same reports as the CLI on live processes and cores,
step-boundary tracking, and clear messages where it cannot work."""
import json
import os
import re
import subprocess

import harness
from harness import check
from test_tensors import judge
import test_holders

PLUGIN = os.path.join(harness.ROOT, "build", "culeak.gdb")


def gdb(*args, timeout=300):
    """gdb -batch with the plugin loaded; returns (exit status, output)."""
    cmd = ["gdb", "-nx", "-batch", "-iex", "set pagination off", "-x", PLUGIN] + list(args)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout + r.stderr


def json_from(output):
    """The last line of output that is a JSON object."""
    for line in reversed(output.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise harness.Failure("no JSON in gdb's output: %s" % output[-2000:])


def live_tensors():
    with harness.Process(harness.TORCH_VENV, "leaks.py") as p:
        rc, out = gdb("-p", str(p.pid), "-ex", "culeak-tensors --json")
        judge(json_from(out), p.truth)
        check(p.status()["TracerPid"] == "0", "still traced after gdb detached")


def core_tensors():
    with harness.tempdir() as d:
        with harness.Process(harness.TORCH_VENV, "leaks.py") as p:
            core = harness.gcore(p.pid, d)
        rc, out = gdb("-ex", "culeak-tensors --json", harness.TORCH_VENV, core)
        judge(json_from(out), p.truth)


def holders(kind):
    """The exact-holders scenario through the plugin: the same graphs and holders as the
    process's own view, and the same summary (retained bytes) as the CLI."""
    def test():
        with harness.tempdir() as d, harness.Process(harness.TORCH_VENV, "holders.py") as p:
            if kind == "live":
                want = harness.culeak("summary", "--pid", p.pid, "--json").stdout
                rc, out = gdb("-p", str(p.pid), "-ex", "culeak-tensors --json", "-ex",
                              "culeak-summary --json")
            else:
                core = harness.gcore(p.pid, d)
                want = harness.culeak("summary", "--core", core, "--json").stdout
                rc, out = gdb("-ex", "culeak-tensors --json", "-ex", "culeak-summary --json",
                              harness.TORCH_VENV, core)
            docs = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
            check(len(docs) == 2, "want two JSON reports: %s" % out[-2000:])
            test_holders.judge(docs[0], p.truth)
            check(docs[1]["holders"] == json.loads(want)["holders"],
                  "culeak-summary's holders differ from the CLI's")
    return test


def same_as_cli():
    """culeak-info, -summary and -refs print what the CLI prints for the same process."""
    with harness.Process(harness.TORCH_VENV, "leaks.py") as p:
        cli = {c: harness.culeak(c.split()[0], "--pid", p.pid, *c.split()[1:], "--json").stdout
               for c in ("summary", "refs --type Featurizer")}
        for command, want in cli.items():
            rc, out = gdb("-p", str(p.pid), "-ex", "culeak-%s --json" % command)
            check(json_from(out) == json.loads(want), "culeak-%s differs from the CLI" % command)
        rc, out = gdb("-p", str(p.pid), "-ex", "culeak-info")
        check("torch       %s" % p.truth["torch"] in out, "culeak-info: %s" % out[-1500:])


def step_tracking():
    """A leaking loop grows at every step under __main__.history[*]; a clean one does not."""
    rc, out = gdb("-ex", "culeak-break-step", "-ex", "run", "--args", harness.TORCH_VENV,
                  os.path.join(harness.SCENARIOS, "steps.py"), "6", "leak")
    steps = re.findall(r"^culeak: step (\d+): (.*)$", out, re.M)
    check(len(steps) == 6, "want 6 step lines: %s" % out[-3000:])
    for n, line in steps[2:]:
        check("grew: __main__.history[*] +" in line and line.startswith("+1 storages"),
              "leaking step %s: %s" % (n, line))
    rc, out = gdb("-ex", "culeak-break-step", "-ex", "run", "--args", harness.TORCH_VENV,
                  os.path.join(harness.SCENARIOS, "steps.py"), "6")
    steps = re.findall(r"^culeak: step (\d+): (.*)$", out, re.M)
    check(len(steps) == 6, "want 6 step lines: %s" % out[-3000:])
    for n, line in steps[2:]:
        check(line == "+0 storages, +0 bytes", "clean step %s: %s" % (n, line))


def stop_on_growth():
    rc, out = gdb("-ex", "culeak-break-step --stop-on-growth 1", "-ex", "run",
                  "-ex", "python print('stopped at step', gdb.selected_inferior().pid > 0)",
                  "--args", harness.TORCH_VENV, os.path.join(harness.SCENARIOS, "steps.py"), "6",
                  "leak")
    check("stopped here" in out and "stopped at step True" in out,
          "did not stop on growth: %s" % out[-2000:])
    check(len(re.findall(r"^culeak: step ", out, re.M)) == 2, "stopped at the first growth? %s"
          % out[-2000:])


def clear_messages():
    # without the plugin, gdb itself says the command does not exist
    r = subprocess.run(["gdb", "-nx", "-batch", "-ex", "culeak-info"], capture_output=True, text=True)
    check("Undefined command: \"culeak-info\"" in r.stderr, "no plugin: %r" % r.stderr)
    # no process at all
    rc, out = gdb("-ex", "culeak-info")
    check("gdb has no process" in out, "no process: %s" % out[-500:])
    # a process that is not Python
    sleeper = subprocess.Popen(["sleep", "600"])
    try:
        rc, out = gdb("-p", str(sleeper.pid), "-ex", "culeak-tensors")
        check("not a Python process" in out, "not Python: %s" % out[-800:])
        with harness.tempdir() as d:
            core = harness.gcore(sleeper.pid, d)
            # a core whose libpython is missing: gdb's sysroot points nowhere
            python = dict(harness.interpreters())["pyenv-3.12"]
            with harness.Process(python, "idle.py") as p:
                pycore = harness.gcore(p.pid, d)
            rc, out = gdb("-ex", "set sysroot %s/none" % d, "-ex", "culeak-info", python, pycore)
            check(re.search(r"libpython3\.12\.so\.1\.0 is not on this machine", out),
                  "missing files: %s" % out[-800:])
    finally:
        sleeper.kill()
        sleeper.wait()
    rc, out = gdb("-ex", "help culeak-blocks", "-ex", "complete culeak-tensors --mi",
                  "-ex", "culeak-blocks")
    check("Usage: culeak-blocks" in out and "culeak-tensors --min-bytes" in out,
          "help/complete: %s" % out[-800:])
    check("gdb has no process" in out, "culeak-blocks without a process: %s" % out[-800:])


STUB = r"""
import sys, types
gdb = types.ModuleType("gdb")
made = []
class Command:
    def __init__(self, name, kind):
        made.append((name, type(self).__doc__.splitlines()[0]))
class Breakpoint:
    pass
gdb.Command, gdb.Breakpoint, gdb.COMMAND_DATA = Command, Breakpoint, 1
gdb.write = lambda s: sys.stdout.write(s)
sys.modules["gdb"] = gdb
sys.path.insert(0, sys.argv[1])
import culeak_gdb
print(len(made), sorted(n for n, _ in made)[0], made[0][1])
"""


def stable_abi():
    """One binary: the module imports and registers its commands under every Python 3.9-3.14
    (with a stand-in for gdb's own module), as it must in any gdb or cuda-gdb build."""
    for name, python in harness.interpreters():
        argv = [python, "-c", STUB, os.path.join(harness.ROOT, "build")]
        found = harness.root_of(python)
        if found:   # a root's interpreter runs in its root (its libc), the module bound in at /mnt
            argv = ["unshare", "--mount", "sh", "-c", 'mount --bind "$1" "$2/mnt" && '
                    'exec chroot "$2" "$3" -c "$4" /mnt', "sh", argv[3], found[0], found[1], STUB]
        r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        check(r.returncode == 0 and r.stdout.startswith("10 culeak-blocks "),
              "%s: %s %s" % (name, r.stdout, r.stderr[-1000:]))
    undefined = subprocess.run(["nm", "-D", "--undefined-only",
                                os.path.join(harness.ROOT, "build", "culeak_gdb.abi3.so")],
                               capture_output=True, text=True).stdout
    # Stable-ABI names only: the public Py* API, plus the ABI-only helpers the macros call.
    abi_only = re.compile(r"_Py_(Dealloc|TrueStruct|FalseStruct|NoneStruct)$|_\w+_SizeT$")
    for sym in re.findall(r"\bU (_Py\w+)", undefined):
        check(abi_only.match(sym), "non-stable-ABI symbol %s" % sym)


def remote_target():
    """A remote target (gdbserver on loopback): every byte through gdb's read_memory."""
    import socket
    import time
    from test_refs import refs_problems
    python = dict(harness.interpreters())["pyenv-3.12"]
    with harness.Process(python, "markers.py") as p:
        with socket.socket() as s:   # a free loopback port
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server = subprocess.Popen(["gdbserver", "--attach", "127.0.0.1:%d" % port, str(p.pid)],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            deadline = time.time() + 30
            while "Listening on port" not in server.stdout.readline():
                check(time.time() < deadline and server.poll() is None, "gdbserver did not start")
            rc, out = gdb("-ex", "target remote 127.0.0.1:%d" % port,
                          "-ex", "culeak-refs --type Marker --json")
            problems = refs_problems(json_from(out), p.truth)
            check(not problems, "\n".join(problems))
        finally:
            server.kill()
            server.wait()


def blocks_on_simulated_device():
    """culeak-blocks in gdb, on the real allocator running on the simulated device."""
    from test_blocks import compare
    with harness.Process(harness.CUDA_TORCH_VENV, "cuda_blocks.py", env=harness.simgpu_env()) as p:
        rc, out = gdb("-p", str(p.pid), "-ex", "culeak-blocks --json")
        compare(json_from(out), p.truth)


def tests():
    for fn in (stable_abi, live_tensors, core_tensors, same_as_cli, step_tracking, stop_on_growth,
               remote_target, blocks_on_simulated_device, clear_messages):
        yield fn.__name__, fn
    for kind in ("live", "core"):
        yield "holders-%s" % kind, holders(kind)
