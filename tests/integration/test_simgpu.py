"""The simulated CUDA device: the real CUDA wheel's caching allocator on host memory, and culeak
reading CUDA tensors from it, live and from both kinds of core. Results here are the simulated
device's, never a GPU's."""
import os
import subprocess

import harness
from harness import check
from test_blocks import compare
from test_tensors import accounting, judge

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
    """The tensors issue's leak scenarios on CUDA: every chain as on the CPU, and the allocator's
    segments and blocks equal to the snapshot the process took of itself."""
    def check_target(target, truth):
        judge(harness.culeak_json("tensors", *target, "--device", "cuda"), truth)
        compare(harness.culeak_json("blocks", *target), truth)
        accounting(harness.culeak_json("summary", *target), truth)

    def test():
        env = harness.simgpu_env()
        with harness.tempdir() as d:
            if kind == "kernel-core":
                truth, core = harness.kernel_core(PYTHON, "leaks.py", ["--cuda"], d, env=env)
                check_target(["--core", core], truth)
                return
            with harness.Process(PYTHON, "leaks.py", "--cuda", env=env) as p:
                info = harness.culeak_json("info", "--pid", p.pid)
                check(info["torch"]["c10_cuda_mapped"], "libc10_cuda.so not mapped")
                target = ["--pid", p.pid] if kind == "live" else ["--core", harness.gcore(p.pid, d)]
                check_target(target, p.truth)
    return test


def tests():
    yield "allocator-behaviour", allocator_behaviour
    yield "simgpu-run", simgpu_run
    for kind in ("live", "gcore", "kernel-core"):
        yield "cuda-leaks-%s" % kind, cuda_leaks(kind)
