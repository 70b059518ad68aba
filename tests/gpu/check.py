"""The check on a real GPU (tests/gpu/): the CUDA leak scenarios on a machine with a GPU and a
CUDA PyTorch, inspected live and from a gcore'd core, each compared line by line with what the
process's own torch.cuda.memory._snapshot() and ground truth said. Under five minutes.

usage: python3 tests/gpu/check.py [PYTHON] [--simulated]
  PYTHON       an interpreter with CUDA PyTorch (default: build/venv/torch-2.14-cuda/bin/python)
  --simulated  run on culeak's simulated device instead (how this script is tested without a GPU)
Prints one line per check and `N passed, N failed`; exit status 1 on any failure."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402
from test_blocks import EXPANDABLE, compare  # noqa: E402
from test_tensors import judge  # noqa: E402


def main():
    args = [a for a in sys.argv[1:] if a != "--simulated"]
    python = args[0] if args else harness.CUDA_TORCH_VENV
    env = harness.simgpu_env() if "--simulated" in sys.argv else dict(os.environ)
    print("device: %s" % ("culeak's simulated device (not a GPU)" if "--simulated" in sys.argv
                          else "the real GPU"))
    results = []

    def run(name, fn):
        start = time.time()
        try:
            fn()
            results.append(True)
            print("ok    %-40s %5.1fs" % (name, time.time() - start), flush=True)
        except harness.Failure as e:
            results.append(False)
            print("FAIL  %-40s %5.1fs\n      %s" % (name, time.time() - start,
                                                  str(e).replace("\n", "\n      ")), flush=True)

    with harness.tempdir() as d:
        for script, args_, extra in (("leaks.py", ["--cuda"], {}), ("cuda_blocks.py", [], {}),
                                     ("cuda_blocks.py", [], EXPANDABLE)):
            with harness.Process(python, script, *args_, env=dict(env, **extra)) as p:
                for kind in ("live", "gcore"):
                    target = ["--pid", p.pid] if kind == "live" else ["--core", harness.gcore(p.pid, d)]
                    run("%s%s %s: blocks vs snapshot" % (script, " (expandable)" if extra else "", kind),
                        lambda: compare(harness.culeak_json("blocks", *target), p.truth))
                    if script == "leaks.py":
                        run("%s %s: tensors and chains" % (script, kind),
                            lambda: judge(harness.culeak_json("tensors", *target, "--device", "cuda"),
                                          p.truth))
    failed = results.count(False)
    print("%d passed, %d failed" % (len(results) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
