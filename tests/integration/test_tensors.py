"""`culeak tensors` and `summary` on real PyTorch processes: each leak scenario's tensor with the
exact chain that holds it, live and from both kinds of core, on the CPU wheel (2.13) and the CUDA
wheel (2.14.1, imported without a GPU), live on the 2.1, 2.4, 2.6, 2.7, 2.8, 2.9, 2.10, 2.11,
2.12 and 2.15 CUDA wheels (every other tensor layout line, and both C++ ABIs of PyPI's 2.4-2.9);
and a non-leaking loop that shows no growth."""
import os
import re

import harness
from harness import check

VENVS = [("torch-2.13", harness.TORCH_VENV), ("torch-2.14-cuda", harness.CUDA_TORCH_VENV),
         ("system-torch-1.13", "/usr/bin/python3")]   # Debian's python3-torch


def path_ok(want, got):
    if want.startswith("re:"):
        return re.search(want[3:], got) is not None
    return want == got


def judge(doc, truth):
    problems = []
    by_address = {int(t["address"], 16): t for t in doc["tensors"]}
    for name, want in truth["tensors"].items():
        t = by_address.get(int(want["address"], 16))
        if t is None:
            problems.append("%s: tensor %s not reported" % (name, want["address"]))
            continue
        if t["held_by"] != want["held_by"]:
            problems.append("%s: held_by %r, want %r" % (name, t["held_by"], want["held_by"]))
        if int(t["data_ptr"], 16) != int(want["data_ptr"], 16):
            problems.append("%s: data_ptr %s, want %s" % (name, t["data_ptr"], want["data_ptr"]))
        for field in ("shape", "strides", "storage_offset", "dtype", "nbytes", "requires_grad",
                      "type"):
            if t[field] != want[field]:
                problems.append("%s: %s %r, want %r" % (name, field, t[field], want[field]))
        if t["device"] != want.get("device", "cpu"):
            problems.append("%s: device %r, want %r" % (name, t["device"], want.get("device", "cpu")))
        if want["path"] is None:
            if t["paths"]:
                problems.append("%s: paths %r, want none" % (name, t["paths"]))
        elif not t["paths"] or not path_ok(want["path"], t["paths"][0]):
            problems.append("%s: paths %r, want %r" % (name, t["paths"], want["path"]))
    saved = [t for t in doc["tensors"] if t["held_by"] == "autograd"]
    root = truth["autograd_root"]
    size = truth.get("saved_nbytes", 256)
    good = [t for t in saved if t["paths"] and t["paths"][0].startswith(root + " → ")
            and t["paths"][0].endswith(" (saved)") and t["nbytes"] == size]
    if len(good) < 2:
        problems.append("autograd: want the two %d-byte activations saved under %s, got %r" % (
            size, root, [t["paths"] for t in saved]))
    if problems:
        raise harness.Failure("\n".join(problems))


def accounting(doc, truth):
    """Every byte of the summary appears once: on each device, retained, shared, held from C,
    garbage and C++ lines sum to the bytes of the storages the process enumerates (the CPU), or
    with the blocks no tensor lies in (a C++ owner's, such as cuBLAS workspaces, and the rest)
    to the allocator's allocated bytes, and with its cache to its reserved bytes (CUDA); the planted cycle's bytes are garbage, and those of the tensor a
    leaked list holds besides a global are held from C."""
    problems = []
    lines = ("retained", "shared", "held_from_c", "garbage", "cxx")
    for a in doc["accounting"]:
        total = sum(a[k] for k in lines)
        if a["device"] == "cpu" and total != truth["storage_bytes"].get("cpu", 0):
            problems.append("cpu: the accounting sums to %d, the process's storages to %d"
                            % (total, truth["storage_bytes"].get("cpu", 0)))
        cuda = [c for c in doc["cuda"] if a["device"] == "cuda:%d" % c["device"]]
        blocks = cuda and cuda[0]["owned_by_cxx"] + cuda[0]["unattributed"]
        if cuda and (total + blocks != truth["allocated"] or
                     total + blocks + cuda[0]["cached"] != truth["reserved"]):
            problems.append("%s: %d accounted + %d owned by C++ + %d unattributed + %d cached, "
                            "the process's memory_allocated %d, memory_reserved %d" % (
                                a["device"], total, cuda[0]["owned_by_cxx"],
                                cuda[0]["unattributed"], cuda[0]["cached"], truth["allocated"],
                                truth["reserved"]))
        cycle, from_c = truth["tensors"]["cycle"], truth["tensors"]["from_c"]
        if a["device"] == cycle["device"] and a["garbage"] < cycle["nbytes"]:
            problems.append("%s: %d bytes garbage, less than the cycle's %d" % (
                a["device"], a["garbage"], cycle["nbytes"]))
        if a["device"] == from_c["device"] and a["held_from_c"] < from_c["nbytes"]:
            problems.append("%s: %d bytes held from C, less than the leaked list's tensor's %d" % (
                a["device"], a["held_from_c"], from_c["nbytes"]))
    if problems:
        raise harness.Failure("\n".join(problems))


def leaks(python, kind):
    def test():
        with harness.tempdir() as d:
            if kind == "kernel-core":
                truth, core = harness.kernel_core(python, "leaks.py", [], d)
                judge(harness.culeak_json("tensors", "--core", core), truth)
                accounting(harness.culeak_json("summary", "--core", core), truth)
                return
            with harness.Process(python, "leaks.py") as p:
                target = ["--pid", p.pid] if kind == "live" else ["--core", harness.gcore(p.pid, d)]
                judge(harness.culeak_json("tensors", *target), p.truth)
                accounting(harness.culeak_json("summary", *target), p.truth)
    return test


def no_growth(python):
    """Inspections at the same point of successive steps of a loop that does not leak agree on
    everything modules hold."""
    def held(p):
        p.wait_stopped("(the training loop) did not stop itself")
        doc = harness.culeak_json("summary", "--pid", p.pid)
        return {o["name"]: o["bytes"] for o in doc["owner"] if not o["name"].startswith("<")}

    def test():
        with harness.Process(python, "training.py", "--pause") as p:
            first = held(p)
            for _ in range(3):
                p.next_stop()
            second = held(p)
            check(first == second, "module-held bytes changed: %r -> %r" % (first, second))
            check(first.get("__main__", 0) > 0, "nothing held by __main__: %r" % first)
        # The same measurement on the leaking demo job does see growth.
        with harness.Process(python, "leaky_train.py", "5", "--pause") as p:
            first = held(p)
            for _ in range(3):
                p.next_stop()
            second = held(p)
            check(second.get("__main__", 0) > first.get("__main__", 0),
                  "no growth seen in a leaking loop: %r -> %r" % (first, second))
    return test


def filters():
    with harness.Process(harness.TORCH_VENV, "leaks.py") as p:
        every = harness.culeak_json("tensors", "--pid", p.pid)["tensors"]
        cpu = harness.culeak_json("tensors", "--pid", p.pid, "--device", "cpu")["tensors"]
        cuda = harness.culeak_json("tensors", "--pid", p.pid, "--device", "cuda")["tensors"]
        big = harness.culeak_json("tensors", "--pid", p.pid, "--min-bytes", "100")["tensors"]
        check(len(cpu) == len(every) > 0 and cuda == [], "device filter: %d/%d/%d" % (
            len(every), len(cpu), len(cuda)))
        check(big and all(t["nbytes"] >= 100 for t in big) and len(big) < len(every),
              "--min-bytes 100 kept %r" % [t["nbytes"] for t in big])


def version_from_heap():
    """A core whose torch/version.py is not on this machine: the version comes from the heap."""
    import os
    with harness.tempdir() as d, harness.Process(harness.TORCH_VENV, "leaks.py") as p:
        root = os.path.join(d, "sysroot")
        files = {line.split(None, 5)[5].strip() for line in open("/proc/%d/maps" % p.pid)
                 if len(line.split(None, 5)) == 6 and line.split(None, 5)[5].startswith("/")}
        for f in files:   # every mapped file, through links; version.py is not mapped
            os.makedirs(os.path.dirname(root + f), exist_ok=True)
            os.symlink(f, root + f)
        core = harness.gcore(p.pid, d)
        info = harness.culeak_json("info", "--core", core, "--sysroot", root)
        check(info["torch"]["loaded"] and info["torch"]["version"] is None,
              "info without version.py: %r" % info["torch"])
        judge(harness.culeak_json("tensors", "--core", core, "--sysroot", root), p.truth)


def tests():
    for name, python in VENVS:
        for kind in ("live", "gcore", "kernel-core"):
            yield "%s:leaks-%s" % (name, kind), leaks(python, kind)
        yield "%s:no-growth" % name, no_growth(python)
    for release in ("2.1", "2.4", "2.6", "2.7", "2.8", "2.9", "2.10", "2.11", "2.12", "2.15"):
        yield ("torch-%s-cuda:leaks-live" % release,
               leaks(harness.cuda_python(release), "live")) + harness.full_unless_checked(release)
    yield "torch-2.13:filters", filters
    yield "torch-2.13:version-from-heap", version_from_heap
