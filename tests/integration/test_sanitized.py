"""The CLI built with ASan + UBSan (build/culeak-san) on real processes and cores: a torch process
with leaks (live and from a kernel core), the CUDA allocator on the simulated device, one with
torch imported and not one tensor, one whose own objects are damaged, and one that compiled a
function (Dynamo's cache and guard trees). Any sanitizer report aborts the command, so each run
must exit as the normal build does, with stderr free of reports, and agree with the process's
ground truth."""
import json

import harness
from harness import check, check_eq
from test_blocks import EXPANDABLE, compare
from test_tensors import judge

SAN_ENV = {"ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0",
           "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1"}


def san(*args, expect_rc=0):
    r = harness.culeak(*args, expect_rc=None, env=SAN_ENV, binary=harness.CULEAK_SAN)
    report = "runtime error" in r.stderr or "Sanitizer" in r.stderr
    check(not report, "sanitizer report for culeak-san %s:\n%s" % (
        " ".join(map(str, args)), r.stderr[-3000:]))
    check_eq(r.returncode, expect_rc, "exit status of culeak-san %s (%s)" % (
        " ".join(map(str, args)), r.stderr[-500:]))
    return r


def san_json(*args, expect_rc=0):
    return json.loads(san(*(list(args) + ["--json"]), expect_rc=expect_rc).stdout)


def leaks_live():
    with harness.Process(harness.TORCH_VENV, "leaks.py") as p:
        judge(san_json("tensors", "--pid", p.pid), p.truth)
        summary = san_json("summary", "--pid", p.pid, "--top", "5")
        check(summary["holders"], "summary lists no holders")


def leaks_kernel_core():
    with harness.tempdir() as d:
        truth, core = harness.kernel_core(harness.TORCH_VENV, "leaks.py", [], d)
        judge(san_json("tensors", "--core", core), truth)


def blocks_simulated_device():
    """The CUDA allocator walk on torch 2.14's real allocator (simulated device, expandable
    segments), against the process's own memory snapshot."""
    env = dict(harness.simgpu_env(), **EXPANDABLE)
    with harness.Process(harness.CUDA_TORCH_VENV, "cuda_blocks.py", env=env) as p:
        compare(san_json("blocks", "--pid", p.pid), p.truth)


def no_tensors():
    """torch imported, no tensor made: every report is empty and whole (qsort of nothing)."""
    with harness.tempdir() as d, harness.Process(harness.TORCH_VENV, "dying.py", "1000",
                                                 "--no-tensors") as p:
        check_eq(p.truth["storages"], [], "the scenario's storages")
        check_eq(san_json("tensors", "--pid", p.pid)["tensors"], [], "tensors")
        summary = san_json("summary", "--pid", p.pid)
        check_eq(summary["holders"], [], "summary holders")
        core = harness.gcore(p.pid, d)
        snap = san_json("snapshot", "--core", core)
        check_eq((snap["storages"], snap["bytes"], snap["entries"]), (0, 0, []), "snapshot")


def damaged_objects():
    """Unreadable containers and INT64_MIN sizes (tests/scenarios/corrupt.py): no report from
    the sanitizers, and the walk says what it could not read."""
    with harness.Process("/usr/bin/python3", "corrupt.py") as p:
        doc = san_json("objects", "--pid", p.pid)
        check(any("could not read the contents of 4 objects" in w for w in doc["warnings"]),
              "warnings: %r" % doc["warnings"])
        san("refs", "--pid", p.pid, "--type", "Row")


def compile_guards():
    """torch.compile's cache and its C++ guard trees (tests/scenarios/guards.py): the sanitized
    build's books are the normal build's."""
    with harness.Process(harness.TORCH_VENV, "guards.py") as p:
        check_eq(san_json("balance", "--pid", p.pid)["unexplained_by_type"],
                 harness.culeak_json("balance", "--pid", p.pid)["unexplained_by_type"],
                 "references not explained, by type")


def tests():
    yield "leaks-live", leaks_live
    yield "leaks-kernel-core", leaks_kernel_core
    yield "blocks-simulated-device", blocks_simulated_device
    yield "no-tensors", no_tensors
    yield "damaged-objects", damaged_objects
    yield "compile-guards", compile_guards
