"""Scenario: an interpreter with two extra threads that prints its own ground truth, then waits to
be inspected (or, with --abort, dumps core through the kernel).

argv: [--torch] [--abort]
Prints one JSON line, then READY."""
import json
import os
import sys
import threading
import time

torch = None
if "--torch" in sys.argv:
    import torch

started = threading.Barrier(3)


def worker():
    started.wait()
    time.sleep(3600)


for _ in range(2):
    threading.Thread(target=worker, daemon=True).start()
started.wait()

v = sys.version_info
level = {"alpha": "a", "beta": "b", "candidate": "rc", "final": ""}[v.releaselevel]
truth = {
    "pid": os.getpid(),
    "version": "%d.%d.%d%s" % (v.major, v.minor, v.micro, level + str(v.serial) if level else ""),
    "executable": os.path.realpath(sys.executable),
    # every thread of the process, also those native code started (OpenBLAS's, with numpy)
    "threads": sorted(int(t) for t in os.listdir("/proc/self/task")),
    "torch": torch.__version__ if torch else None,
    "torch_cuda": torch.version.cuda if torch else None,
}
print(json.dumps(truth), flush=True)
print("READY", flush=True)
if "--abort" in sys.argv:
    os.abort()
time.sleep(3600)
