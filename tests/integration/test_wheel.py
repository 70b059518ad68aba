"""pip install culeak, as a user would: the wheel `make wheel` writes (build/dist/), installed in a
fresh venv of the oldest CPython its stable-ABI tag claims (3.8) and of the newest here, with no
index and none of this checkout's build on the path. Its `culeak` command, its Python API and its
gdb loader each read a torch process, and each must name the holders the process printed."""
import glob
import json
import os
import re
import subprocess

import harness
from harness import check, check_eq

DIST = os.path.join(harness.ROOT, "build", "dist")
# the API over a live process: every storage it lists with its paths, then a dead pid's error
API_SCRIPT = """
import json, sys, culeak
with culeak.open(pid=int(sys.argv[1])) as t:
    tensors = t.tensors(min_bytes="1K")["tensors"]
    info = t.info()
try:
    culeak.open(pid=int(sys.argv[2]))
    error = None
except culeak.Error as e:
    error = e.code
print(json.dumps({"tensors": tensors, "python": info["python"]["version"], "error": error,
                  "version": culeak.version}))
"""


def version():
    with open(os.path.join(harness.ROOT, "inspector", "util", "version.h")) as f:
        return re.search(r'CL_VERSION "([^"]+)"', f.read()).group(1)


def the_wheel():
    wheels = glob.glob(os.path.join(DIST, "culeak-*.whl"))
    check_eq(len(wheels), 1, "wheels in %s (make wheel)" % DIST)
    name = os.path.basename(wheels[0])
    check(name.startswith("culeak-%s-cp38-abi3-" % version()) and "manylinux_2_36_x86_64" in name,
          "wheel name %s" % name)
    return wheels[0]


def installed(python, directory):
    """A fresh venv of python in directory with the wheel installed; returns its bin folder."""
    venv = os.path.join(directory, "venv")
    subprocess.run([python, "-m", "venv", venv], check=True, capture_output=True, timeout=300)
    r = subprocess.run([os.path.join(venv, "bin", "pip"), "install", "--no-index",
                        "--disable-pip-version-check", the_wheel()],
                       capture_output=True, text=True, timeout=300)
    check_eq(r.returncode, 0, "pip install: %s" % r.stderr[-2000:])
    return os.path.join(venv, "bin")


def held_as_printed(tensors, truth, what):
    """Each storage the process printed is listed, held by __main__.held[i]."""
    got = {(int(t["storage_data_ptr"], 16), t["nbytes"]): t for t in tensors}
    for i, s in enumerate(truth["storages"]):
        t = got.get((s["data"], s["bytes"]))
        check(t is not None, "%s: storage %d (%r) missing" % (what, i, s))
        check_eq(t["paths"], ["__main__.held[%d]" % i], "%s: paths of held[%d]" % (what, i))


def installed_on(name, python):
    def run():
        with harness.tempdir() as d, harness.Process(harness.TORCH_VENV, "dying.py", "20000") as p:
            bin_dir = installed(python, d)
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            out = subprocess.run([os.path.join(bin_dir, "culeak"), "--version"], env=env,
                                 capture_output=True, text=True, timeout=60).stdout
            check_eq(out.strip(), "culeak %s" % version(), "culeak --version")
            cli = subprocess.run([os.path.join(bin_dir, "culeak"), "tensors", "--json", "--pid",
                                  str(p.pid)], env=env, capture_output=True, text=True, timeout=300)
            check_eq(cli.returncode, 0, "culeak tensors: %s" % cli.stderr)
            held_as_printed(json.loads(cli.stdout)["tensors"], p.truth, "the CLI")

            dead = subprocess.Popen(["true"])
            dead.wait()
            api = subprocess.run([os.path.join(bin_dir, "python"), "-c", API_SCRIPT, str(p.pid),
                                  str(dead.pid)], env=env, capture_output=True, text=True,
                                 timeout=300, cwd=d)
            check_eq(api.returncode, 0, "the API: %s" % api.stderr[-2000:])
            doc = json.loads(api.stdout)
            held_as_printed(doc["tensors"], p.truth, "the API")
            check_eq(doc["error"], "no-process", "culeak.Error.code for a pid that is gone")
            check_eq(doc["version"], version(), "culeak.version")

            script = subprocess.run([os.path.join(bin_dir, "culeak-gdb-script")], env=env,
                                    capture_output=True, text=True, timeout=60).stdout.strip()
            check(script.startswith(d) and os.path.exists(script), "culeak-gdb-script: %r" % script)
            gdb = subprocess.run(["gdb", "-nx", "-batch", "-iex", "set pagination off", "-p",
                                  str(p.pid), "-x", script, "-ex", "culeak-tensors --json"],
                                 capture_output=True, text=True, timeout=300)
            start = gdb.stdout.find('{"schema_version":')
            check(start >= 0, "gdb printed no report: %s" % (gdb.stdout + gdb.stderr)[-2000:])
            held_as_printed(json.JSONDecoder().raw_decode(gdb.stdout[start:])[0]["tensors"],
                            p.truth, "the plugin")
    return run


def tests():
    oldest = sorted(glob.glob(os.path.join(harness.PYENV, "3.8.*", "bin", "python3.8")))
    newest = [python for name, python in harness.interpreters() if name == "pyenv-3.13"]
    for name, found in (("pyenv-3.8", oldest), ("pyenv-3.13", newest)):
        if found:
            yield name, installed_on(name, found[-1])
        else:
            yield name, lambda name=name: check(False, "%s is not installed" % name)
