"""The simulated CUDA device: the real CUDA wheel's caching allocator on host memory, and culeak
reading CUDA tensors from it, live and from both kinds of core. Results here are the simulated
device's, never a GPU's."""
import os
import subprocess

import harness
from harness import check
from test_tensors import judge

PYTHON = harness.CUDA_TORCH_VENV


def allocator_behaviour():
    r = subprocess.run([PYTHON, "-W", "ignore", os.path.join(harness.SCENARIOS, "simgpu_smoke.py")],
                       env=harness.simgpu_env(), capture_output=True, text=True, timeout=300)
    check(r.returncode == 0 and "simulated device ok" in r.stdout,
          "smoke test: %s %s" % (r.stdout[-1000:], r.stderr[-2000:]))


def simgpu_run():
    """scripts/simgpu-run runs a script on the simulated device, as users would."""
    r = subprocess.run([os.path.join(harness.ROOT, "scripts", "simgpu-run"), PYTHON, "-W", "ignore",
                        os.path.join(harness.SCENARIOS, "simgpu_smoke.py")],
                       capture_output=True, text=True, timeout=600)
    check(r.returncode == 0 and "simulated device ok" in r.stdout, r.stderr[-2000:])


def cuda_leaks(kind):
    def test():
        env = harness.simgpu_env()
        with harness.tempdir() as d:
            if kind == "kernel-core":
                truth, core = harness.kernel_core(PYTHON, "cuda_leaks.py", [], d, env=env)
                judge(harness.culeak_json("tensors", "--core", core, "--device", "cuda"), truth)
                return
            with harness.Process(PYTHON, "cuda_leaks.py", env=env) as p:
                info = harness.culeak_json("info", "--pid", p.pid)
                check(info["torch"]["c10_cuda_mapped"], "libc10_cuda.so not mapped")
                target = ["--pid", p.pid] if kind == "live" else ["--core", harness.gcore(p.pid, d)]
                judge(harness.culeak_json("tensors", *target, "--device", "cuda"), p.truth)
    return test


def tests():
    yield "allocator-behaviour", allocator_behaviour
    yield "simgpu-run", simgpu_run
    for kind in ("live", "gcore", "kernel-core"):
        yield "cuda-leaks-%s" % kind, cuda_leaks(kind)
