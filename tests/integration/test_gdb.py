"""The gdb plugin in gdb's batch mode: the same reports as the CLI on live processes and cores,
step-boundary tracking, and clear messages where it cannot work; in every gdb it supports:
cuda-gdb 11.8 (gdb 10.2), the host's gdb 13, and the gdbs of the Debian roots (16, 18)."""
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import time

import harness
from harness import check, check_eq
from test_tensors import judge
import test_holders
import test_oom

PLUGIN = os.path.join(harness.ROOT, "build", "culeak.gdb")
# Debian's gdb-minimal (no Python), unpacked by scripts/install-cuda-gdb
GDB_MINIMAL = os.path.join(harness.ROOT, "build", "gdb-minimal", "usr", "bin", "gdb")


class Debugger:
    """One gdb build: its command line, and where the processes it inspects run. A root's gdb
    sees only the root's files, so it runs inside that root (harness.Root), the test venvs at
    /opt/culeak/venv, this checkout's build/ (the plugin, the simulated device) at
    /opt/culeak/build and pyenv's interpreters at their own path, bound over the root's own
    folders (the root is never written); it attaches from inside the job's namespaces, as
    `docker exec` does."""

    def __init__(self, name, argv, root=None, ex_runs_breakpoint_commands=True, writes_cores=True):
        self.name, self.argv = name, list(argv)
        build = os.path.join(harness.ROOT, "build")
        # host path -> its name inside, most specific first
        self.names = [(os.path.join(build, "venv"), "/opt/culeak/venv"),
                      (build, "/opt/culeak/build"), (harness.SCENARIOS, harness.Root.SCENARIOS)]
        binds = [(os.path.realpath(os.path.join(build, "venv")), "/opt/culeak/venv"),
                 (build, "/opt/culeak/build"), (harness.PYENV, harness.PYENV)]
        self.root = harness.Root(root, binds=binds) if root else None
        # gdb before 11 runs a breakpoint's commands after a `run` from a script file, not from
        # -ex (fixed in gdb 11's batch mode)
        self.ex_runs_breakpoint_commands = ex_runs_breakpoint_commands
        # Debian's cuda-gdb 11.8 aborts (SIGABRT) in generate-core-file on a process with torch
        # loaded: its cores come from the host's gdb
        self.writes_cores = writes_cores

    def path(self, host):
        """A host path as this gdb and its processes name it."""
        for outside, inside in self.names if self.root else ():
            if host == outside or host.startswith(outside + "/"):
                return inside + host[len(outside):]
        return host

    def env(self, env):
        """An environment with its library paths (the simulated device's) as named inside."""
        if not env or not self.root:
            return env
        return dict(env, **{k: ":".join(self.path(p) for p in env[k].split(":"))
                            for k in ("LD_PRELOAD", "LD_LIBRARY_PATH") if k in env})

    def loader(self):
        """The plugin's loader script, naming the plugin where this gdb sees it (in /tmp, which
        a root shares with the host)."""
        if not self.root:
            return PLUGIN
        path = "/tmp/culeak-%s.gdb" % self.name
        with open(PLUGIN) as f:
            text = f.read().replace(os.path.join(harness.ROOT, "build"), "/opt/culeak/build")
        with open(path, "w") as f:
            f.write(text)
        return path

    def available(self):
        if self.root:
            return os.path.exists(os.path.join(self.root.directory, "usr", "bin", self.argv[0]))
        return shutil.which(self.argv[0]) is not None

    def __call__(self, *args, timeout=300, env=None):
        """gdb -batch with the plugin loaded, env added to the host gdb's environment; returns
        (exit status, output)."""
        if not self.available():
            raise harness.Failure("%s is not installed (scripts/install-deps)" % self.name)
        cmd = self.argv + ["-nx", "-batch", "-iex", "set pagination off", "-x", self.loader()]
        cmd += [self.path(a) for a in args]
        if self.root and "-p" in cmd:   # in the job's namespaces, as its pid there
            at = cmd.index("-p") + 1
            pid = int(cmd[at])
            cmd[at] = str(harness.namespace_pid(pid))
            # cd inside: nsenter's --wd is the host's directory, which gdb cannot name there
            r = harness.inside(pid, ["sh", "-c", 'cd /tmp && exec "$@"', "sh"] + cmd,
                               timeout=timeout)
        else:
            r = subprocess.run(self.root.command(cmd, "/tmp") if self.root else cmd,
                               capture_output=True, text=True, timeout=timeout,
                               env=dict(os.environ, **env) if env and not self.root else None)
        return r.returncode, r.stdout + r.stderr

    def process(self, python, script, *args, env=None):
        """A scenario, run where this gdb's processes run."""
        return harness.Process(self.path(python), script, *args, env=self.env(env), root=self.root)

    def core(self, pid, directory):
        """A core of pid written by this gdb itself (generate-core-file)."""
        if not self.writes_cores:
            return HOST_GDB.core(pid, directory)
        path = os.path.join(directory, "core.gdb.%d" % pid)
        rc, out = self("-p", str(pid), "-ex", "generate-core-file %s" % path)
        check(os.path.exists(path), "%s wrote no core: %s" % (self.name, out[-1500:]))
        return path

    def run_args(self, directory):
        if self.ex_runs_breakpoint_commands:
            return ["-ex", "run"]
        script = os.path.join(directory, "run.gdb")
        with open(script, "w") as f:
            f.write("run\n")
        return ["-x", script]


HOST_GDB = Debugger("gdb-13", ["gdb"])
DEBUGGERS = [
    (Debugger("cuda-gdb-11.8", ["cuda-gdb"], ex_runs_breakpoint_commands=False, writes_cores=False),
     None),
    (HOST_GDB, None),
    (Debugger("gdb-16", ["gdb"], root=os.path.join(harness.ROOTS, "trixie")), "full"),
    (Debugger("gdb-18", ["gdb"], root=os.path.join(harness.ROOTS, "sid")), None),
]
gdb = HOST_GDB


def json_from(output):
    """The last line of output that is a JSON object."""
    for line in reversed(output.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise harness.Failure("no JSON in gdb's output: %s" % output[-2000:])


def live(dbg):
    def test():
        with dbg.process(harness.TORCH_VENV, "leaks.py") as p:
            rc, out = dbg("-p", str(p.pid), "-ex", "culeak-tensors --json")
            judge(json_from(out), p.truth)
            check(p.status()["TracerPid"] == "0", "still traced after gdb detached")
    return test


def core(dbg):
    """A core this gdb wrote, read back in this gdb."""
    def test():
        with harness.tempdir() as d:
            with dbg.process(harness.TORCH_VENV, "leaks.py") as p:
                path = dbg.core(p.pid, d)
            rc, out = dbg("-ex", "culeak-tensors --json", harness.TORCH_VENV, path)
            judge(json_from(out), p.truth)
    return test


def blocks(dbg):
    """culeak-blocks in gdb, on the real allocator running on the simulated device; TAB then
    offers the devices that inspection met after --device."""
    from test_blocks import compare

    def test():
        with dbg.process(harness.CUDA_TORCH_VENV, "cuda_blocks.py", env=harness.simgpu_env()) as p:
            line = "culeak-tensors --device "
            rc, out = dbg("-p", str(p.pid), "-ex", "complete " + line, "-ex", "echo >>\\n",
                          "-ex", "culeak-blocks --json", "-ex", "complete " + line)
            compare(json_from(out), p.truth)
            before, _, after = out.partition(">>\n")
            offered = lambda text: {c[len(line):] for c in text.splitlines() if c.startswith(line)}
            devices = {"cuda:%d" % d["device"] for d in json_from(out)["devices"]}
            check(devices, "no devices in culeak-blocks")
            check_eq(offered(before), {"all", "cpu", "cuda"}, "--device before any inspection")
            check_eq(offered(after), {"all", "cpu", "cuda"} | devices, "--device after blocks")
    return test


def break_step(dbg, steps=4):
    """A leaking loop grows at every step under __main__.history[*], and the line says by how
    much in each category, as the process counts what a step leaks; a clean one does not grow."""
    def test():
        script = os.path.join(harness.SCENARIOS, "steps.py")
        with harness.tempdir() as d:
            # the clean loop once, in the host's gdb: each step costs a heap walk
            for mode in ("leak", "clean") if dbg is HOST_GDB else ("leak",):
                rc, out = dbg("-ex", "culeak-break-step", *dbg.run_args(d), "--args",
                              harness.TORCH_VENV, script, str(steps), mode, timeout=600)
                lines = re.findall(r"^culeak: step (\d+): (.*)$", out, re.M)
                # gdb 10 runs no breakpoint commands after -ex run in batch mode: said at start
                check(dbg.ex_runs_breakpoint_commands or "runs no breakpoint commands" in out,
                      "%s: no warning about -ex run: %s" % (dbg.name, out[:2000]))
                check(len(lines) == steps,
                      "%s: want %d step lines: %s" % (mode, steps, out[-3000:]))
                # what a step leaks by category, as the process counts it
                truth = re.findall(r"^truth: saved for backward (\d+) other tensors (\d+)$", out,
                                   re.M)
                check(bool(truth) == (mode == "leak"), "%s: truth %r" % (mode, truth))
                for n, line in lines[2:]:
                    if mode == "leak":
                        # (backward() released the graph's saved tensors: none, so far)
                        said = [("cpu %s +%s" % (name, harness.size_text(int(v))), int(v))
                                for name, v in zip(("saved for backward", "other tensors"),
                                                   truth[0])]
                        check("grew: __main__.history[*] +" in line and
                              line.startswith("+1 storages") and
                              all((text in line) == (v > 0) for text, v in said),
                              "leaking step %s: %s (truth: %r)" % (n, line, said))
                    else:
                        check(line == "+0 storages, +0 B", "clean step %s: %s" % (n, line))
    return test


def catch_oom(dbg):
    """culeak-catch-oom in batch mode, on the simulated device: the job, attached and then told to
    go, dies of a CUDA out-of-memory error at a step it does not know. At the throw, before
    anything unwinds, the dump and the report hold what test_oom.holds_at_oom checks, and the
    report what grew since the snapshot taken before training; --once then detaches, and the
    job's own except runs."""
    def test():
        with harness.tempdir() as d:
            go, dump, report = (os.path.join(d, n) for n in ("go", "oom.cldump", "oom.json"))
            script = os.path.join(d, "catch.gdb")   # gdb 10 runs breakpoint commands from a file
            with open(script, "w") as f:
                f.write("culeak-catch-oom --dump %s --report %s --json --once\n"
                        "culeak-snapshot before\nshell touch %s\ncontinue\n" % (dump, report, go))
            with dbg.process(harness.CUDA_TORCH_VENV, "oom_job.py", go,
                             env=harness.simgpu_env()) as p:
                rc, out = dbg("-p", str(p.pid), "-x", script, timeout=600)
                truth = test_oom.truth_after_error(p, 60, "gdb: " + out[-3000:])
                check(p.status()["TracerPid"] == "0", "still traced after --once")
            check("out-of-memory error 1 thrown" in out and "error 1 reached Python" in out,
                  "gdb: %s" % out[-3000:])
            doc = json.load(open(report))
            test_oom.holds_at_oom(doc, truth, "the report", test_oom.error_said)
            grew = doc.get("grew_since_snapshot") or {}
            check(grew.get("snapshot") == "before" and
                  "grew: __main__.history[*] +" in grew.get("growth", ""),
                  "what grew since the snapshot before training: %r" % grew)
            test_oom.holds_at_oom(harness.culeak_json("summary", "--dump", dump), truth,
                                  "the dump", test_oom.error_said)
    return test


def recipes():
    """docs/gdb.md's workflows, each run as it stands in a folder with culeak.gdb and train.py
    (the scenario), python the torch venv's; every JSON file they write must load, and say what
    the job holds: its history of losses."""
    doc = open(os.path.join(harness.ROOT, "docs", "gdb.md")).read()
    blocks = re.findall(r"^```sh\n(.*?)^```$", doc, re.M | re.S)
    check(len(blocks) >= 4, "docs/gdb.md's recipes: %d" % len(blocks))
    with harness.tempdir() as d:
        shutil.copy(os.path.join(harness.ROOT, "build", "culeak.gdb"), d)
        shutil.copy(os.path.join(harness.SCENARIOS, "train.py"), d)
        # other tests run scripts named *train.py at the same time: the recipes' pgrep finds only
        # the processes that run in this folder (itself, whose command line names train.py too,
        # left out)
        os.mkdir(os.path.join(d, "bin"))
        with open(os.path.join(d, "bin", "pgrep"), "w") as f:
            f.write("#!/bin/sh\nfor pid in $(%s \"$@\"); do\n"
                    "    [ \"$(readlink /proc/$pid/cwd)\" = %s ] &&\n"
                    "        ! grep -qa bin/pgrep /proc/$pid/cmdline && echo $pid\ndone\ntrue\n" %
                    (shutil.which("pgrep"), shlex.quote(os.path.realpath(d))))
        os.chmod(os.path.join(d, "bin", "pgrep"), 0o755)
        env = dict(os.environ, PATH=os.pathsep.join([os.path.join(d, "bin"),
                                                     os.path.dirname(harness.TORCH_VENV),
                                                     os.environ["PATH"]]), SYSROOT="/")
        with harness.Process(harness.TORCH_VENV, "train.py", cwd=d,
                             env=dict(env, HOLD="1")) as p:
            subprocess.run(["gcore", "-o", os.path.join(d, "core"), str(p.pid)],
                           capture_output=True, timeout=300, check=True)
            os.rename(os.path.join(d, "core.%d" % p.pid), os.path.join(d, "core.1234"))
            for block in blocks:
                with open(os.path.join(d, "recipe.sh"), "w") as f:   # a script, as a user's:
                    f.write(block)                   # its text is in no process's command line
                r = subprocess.run(["bash", "-e", "recipe.sh"], cwd=d, capture_output=True,
                                   text=True, timeout=600, env=dict(env, PID=str(p.pid)))
                check(r.returncode == 0 and "Traceback" not in r.stderr and
                      "Undefined command" not in r.stderr + r.stdout,
                      "recipe %r: exit %d: %s %s" % (block, r.returncode, r.stdout[-1500:],
                                                      r.stderr[-1500:]))
        wrote = sorted(f for f in os.listdir(d) if f.endswith(".json"))
        check_eq(wrote, sorted(["summary.json", "tensors.json", "core-tensors.json",
                                "summary.%d.json" % p.pid]), "the recipes' files")
        for f in wrote:
            with open(os.path.join(d, f)) as fh:
                report = json.load(fh)
            text = json.dumps(report)
            check("__main__.history" in text, "%s names no history: %s" % (f, text[:500]))


def no_process(dbg):
    def test():
        rc, out = dbg("-ex", "culeak-info")
        check("gdb has no process" in out, "no process: %s" % out[-500:])
    return test


def gdb_commands():
    """The commands the command table gives gdb (inspector/engine/table.h), from the package."""
    import sys
    sys.path.insert(0, os.path.join(harness.ROOT, "build", "python"))
    from culeak import _native
    return [r["name"] for r in _native.commands() if r["gdb"]]


def help_lists_commands(dbg):
    """`help culeak` (once ambiguous) and a bare `culeak` list every culeak-* command, each
    with the first line of its own help."""
    def test():
        rc, out = dbg("-ex", "help culeak", "-ex", "echo --\\n", "-ex", "culeak")
        check("Ambiguous" not in out, "help culeak: %s" % out[-500:])
        listing = out.split("--\n")
        check_eq(len(listing), 2, "two listings in %r" % out[-2000:])
        for text in listing:
            for name in gdb_commands():
                check(re.search(r"^culeak-%s +\S" % name, text, re.M),
                      "culeak-%s missing from %r" % (name, text[-1500:]))
    return test


def completes(dbg):
    """TAB offers each command its own options (those the CLI accepts for it) and, after one that
    takes a fixed set, its values."""
    want = {"culeak-tensors --": {"--allocator-layout", "--device", "--full", "--json",
                                  "--max-objects", "--min-bytes", "--output", "--quiet"},
            "culeak-tensors --device ": {"all", "cpu", "cuda"},
            "culeak-blocks --device ": {"all", "cuda"},   # the allocator's devices are CUDA's
            "culeak-blocks --state a": {"all", "allocated"},
            "culeak-refs --max-p": {"--max-paths"},
            "culeak-break-step --": {"--every", "--off", "--stop-on-growth", "--symbol",
                                     "--warmup"},
            "culeak-catch-oom --": {"--dump", "--json", "--off", "--once", "--report"}}
    def test():
        args = []
        for line in want:
            args += ["-ex", "echo >>%s\\n" % line, "-ex", "complete " + line]
        rc, out = dbg(*args)
        got = {}
        for chunk in out.split(">>")[1:]:
            line, _, rest = chunk.partition("\n")
            got[line] = {c[len(line.rsplit(" ", 1)[0]):].strip() for c in rest.splitlines() if c}
        for line, values in want.items():
            check_eq(got.get(line), values, "complete %r" % line)
    return test


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


def stop_on_growth():
    """--stop-on-growth stops at the first step that grows once the job has warmed up: the leak
    (step 3), not the optimizer's state appearing at its first step (issue 42: it stopped at
    step 2 of every job); --warmup 0 counts from the first step, and stops there."""
    args = ["--args", harness.TORCH_VENV, os.path.join(harness.SCENARIOS, "steps.py"), "6", "leak"]
    probe = ["-ex", "python print('stopped at step', gdb.selected_inferior().pid > 0)"]
    rc, out = gdb("-ex", "culeak-break-step --stop-on-growth 1", "-ex", "run", *probe, *args)
    check("stopped here" in out and "stopped at step True" in out,
          "did not stop on growth: %s" % out[-2000:])
    check("the job gdb will run ends when gdb does" in out,
          "no word that a job gdb runs ends with gdb: %s" % out[-2000:])
    steps = re.findall(r"^culeak: step \d+: (.*)$", out, re.M)
    check(len(steps) == 3 and "warming up: 1 of 1 optimizers without state" in steps[0] and
          "(baseline)" in steps[1] and "grew: __main__.history[*]" in steps[2],
          "warm-up, then the leak: %s" % out[-2000:])
    rc, out = gdb("-ex", "culeak-break-step --stop-on-growth 1 --warmup 0", "-ex", "run", *probe,
                  *args)
    steps = re.findall(r"^culeak: step \d+: (.*)$", out, re.M)
    check(len(steps) == 2 and "(baseline)" in steps[0] and "momentum_buffer" in steps[1],
          "--warmup 0: the optimizer's state at step 2: %s" % out[-2000:])


def signals_leave_job_running():
    """SIGTERM or SIGINT to a batch gdb that tracks the steps of a job it attached to: gdb
    detaches and the job trains on, untraced (issue 42: after SIGTERM the job died of SIGTRAP at
    its next step, the step breakpoint still in its code)."""
    for sig in (signal.SIGTERM, signal.SIGINT):
        env = dict(os.environ, HOLD="loop")
        with harness.Process(harness.TORCH_VENV, "train.py", env=env) as p:
            g = subprocess.Popen(["gdb", "-nx", "-batch", "-x", PLUGIN, "-p", str(p.pid),
                                  "-ex", "culeak-break-step", "-ex", "continue"],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            seen = []
            for line in g.stdout:   # tracking has begun once a step is reported
                seen.append(line)
                if line.startswith("culeak: step 2:"):
                    break
            g.send_signal(sig)
            try:
                out = "".join(seen) + g.communicate(timeout=120)[0]
            except subprocess.TimeoutExpired:
                g.kill()
                raise harness.Failure("%s: gdb did not end" % sig.name)
            check("detached" in out, "%s: gdb did not detach: %s" % (sig.name, out[-2000:]))
            time.sleep(1)   # a job left with the breakpoint in it dies at its next step
            status = open("/proc/%d/status" % p.pid).read()
            check(p.proc.poll() is None and "TracerPid:\t0\n" in status,
                  "%s: the job did not run on: exit %s\n%s" % (sig.name, p.proc.poll(),
                                                               out[-2000:]))
            check(re.search(r"^State:\s+[RS]", status, re.M),
                  "%s: the job is stopped: %s" % (sig.name, status))


def clear_messages():
    # without the plugin, gdb itself says the command does not exist
    r = subprocess.run(["gdb", "-nx", "-batch", "-ex", "culeak-info"], capture_output=True, text=True)
    check("Undefined command: \"culeak-info\"" in r.stderr, "no plugin: %r" % r.stderr)
    # a process that is not Python
    sleeper = subprocess.Popen(["sleep", "600"])
    try:
        rc, out = gdb("-p", str(sleeper.pid), "-ex", "culeak-tensors")
        check("not a Python process" in out, "not Python: %s" % out[-800:])
        with harness.tempdir() as d:
            core = harness.gcore(sleeper.pid, d)
            rc, out = gdb("-ex", "culeak-tensors", shutil.which("sleep"), core)
            check("not a Python process" in out, "not Python, from a core: %s" % out[-800:])
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
        # culeak (the overview) and a culeak-* command each of the table's gdb rows; the first
        # sorted is the overview
        want = "%d culeak culeak: who holds" % (1 + len(gdb_commands()))
        check(r.returncode == 0 and r.stdout.startswith(want),
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


def no_python():
    """In a gdb without Python the loader says so once and each command points to the CLI,
    without gdb's own errors."""
    check(os.path.exists(GDB_MINIMAL), "no gdb-minimal at %s (scripts/install-deps)" % GDB_MINIMAL)
    r = subprocess.run([GDB_MINIMAL, "-nx", "-batch", "-x", PLUGIN, "-ex", "culeak-summary --json"],
                       capture_output=True, text=True, timeout=60)
    out = r.stdout + r.stderr
    check(r.returncode == 0 and out.count("this gdb has no Python") == 2 and "culeak CLI" in out,
          "gdb-minimal: %s" % out)
    check("rror" not in out and "not supported" not in out, "gdb-minimal spews errors: %s" % out)


def tests():
    for fn in (stable_abi, same_as_cli, stop_on_growth, signals_leave_job_running, remote_target,
               clear_messages, no_python, recipes):
        yield fn.__name__, fn
    for kind in ("live", "core"):
        yield "holders-%s" % kind, holders(kind)
    for dbg, scope in DEBUGGERS:
        for name, make in (("live", live), ("core", core), ("blocks", blocks),
                           ("break-step", break_step), ("catch-oom", catch_oom),
                           ("no-process", no_process),
                           ("help", help_lists_commands), ("complete", completes)):
            yield ("%s-%s" % (dbg.name, name), make(dbg)) + ((scope,) if scope else ())
