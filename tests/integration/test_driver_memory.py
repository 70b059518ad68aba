"""GPU memory outside the caching allocator (runtime/driver_memory.h), against
outside_allocator.py on the simulated device: a tensor through the allocator, and 48 MiB another
library cudaMalloc'ed.

`summary` gives NVML's per-process figure, exactly what the process reads of NVML itself, less
the allocator's reserved bytes, exactly torch.cuda.memory_reserved(): the 48 MiB. A core has no
such figure (driver_memory null). A job in a PID namespace of its own, as in a container, is
listed by NVML under the id it knows itself by, so culeak, which names it by the host's, says
that NVML does not list it rather than giving a figure. The HTML page says what the text says,
and culeak-summary in gdb what the CLI says. culeak finds the simulated device's NVML
by LD_LIBRARY_PATH, as it finds the real one on a GPU machine (tests/gpu/run-on-device)."""
import os
import re

import harness
import test_blocks
import test_gdb
from harness import Failure


def culeak_env():
    return {"LD_LIBRARY_PATH": os.path.join(harness.ROOT, "build", "simgpu")}


def check_job(via):
    python = harness.cuda_python("2.14")
    args = ("--own-pid-namespace",) if via == "own-pid-namespace" else ()
    with harness.Process(python, "outside_allocator.py", *args, env=harness.simgpu_env()) as p, \
            harness.tempdir() as d:
        truth = p.truth
        pid = p.pid if "pid" in truth else harness.children(p.proc.pid)[0]
        target = ["--core", harness.gcore(pid, d)] if via == "gcore" else ["--pid", pid]
        summary = harness.culeak_json("summary", *target, env=culeak_env())
        page = os.path.join(d, "summary.html")
        text = harness.culeak("summary", *target, "--html", page, env=culeak_env()).stdout
        if via == "live":   # the page says it too, as headless Chromium renders it, and gdb
            with test_blocks.browser() as b:
                shown = re.findall(r'<div id="driver">([^<]*)<', test_blocks.open_page(b, page))
            _, out = test_gdb.gdb("-p", str(pid), "-ex", "culeak-summary --json", env=culeak_env())
            in_gdb = test_gdb.json_from(out)["driver_memory"]
    got = summary["driver_memory"]
    problems = []
    if via == "gcore" and got is not None:
        problems.append("a core's driver_memory is %r, want null" % got)
    if via == "own-pid-namespace" and (not got or got["state"] != "not_listed" or
                                       "id %d" % pid not in got["why"]):
        problems.append("in its own PID namespace: %r, want not_listed naming pid %d" % (got, pid))
    if via == "live":
        want = {"state": "read", "used": truth["nvml_used"], "gpus": 1,
                "reserved": truth["reserved"],
                "outside_allocator": truth["nvml_used"] - truth["reserved"], "why": None}
        if got != want or want["outside_allocator"] != truth["direct"]:
            problems.append("driver_memory %r, want %r (the process's own NVML and "
                            "memory_reserved(); %d bytes cudaMalloc'ed outside)" % (
                                got, want, truth["direct"]))
        if in_gdb != got:
            problems.append("culeak-summary in gdb: %r, the CLI %r" % (in_gdb, got))
        for where, said in (("text", text), ("page", "".join(shown))):
            if "outside the caching allocator: 48.0 MiB on cuda" not in said:
                problems.append("the %s says: %r" % (where, [line for line in said.splitlines()
                                                             if "outside" in line]))
    if problems:
        raise Failure("torch %s, %s:\n%s" % (truth["torch"], via, "\n".join(problems)))


def tests():
    for via in ("live", "gcore", "own-pid-namespace"):
        yield "simulated-device:%s" % via, lambda via=via: check_job(via)
