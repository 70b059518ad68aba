"""`culeak blocks` on PyTorch's real caching allocator, running on the simulated CUDA device:
segments, blocks and their states must equal what torch.cuda.memory._snapshot() said in the same
process just before it paused, live and from both kinds of core. (The simulated device stands in
for cudaMalloc only; the allocator's structures are the wheel's own.)"""
import harness
from harness import check

PYTHON = harness.CUDA_TORCH_VENV


def compare(doc, truth):
    problems = []
    devices = doc["devices"]
    if len(devices) != 1:
        raise harness.Failure("want one device, got %r" % devices)
    d = devices[0]
    if (d["reserved"], d["allocated"]) != (truth["reserved"], truth["allocated"]):
        problems.append("totals %r, snapshot %r" % ((d["reserved"], d["allocated"]),
                                                    (truth["reserved"], truth["allocated"])))
    got = [{"address": int(s["address"], 16), "size": s["size"], "pool": s["pool"],
            "stream": int(s["stream"], 16),
            "blocks": [[int(b["address"], 16), b["size"], b["state"]] for b in s["blocks"]]}
           for s in d["segments"]]
    want = sorted(truth["segments"], key=lambda s: s["address"])
    if got != want:
        problems.append("segments differ from the snapshot:\n  culeak   %r\n  snapshot %r" % (got, want))
    for s in d["segments"]:   # fragmentation figures, recomputed from the snapshot's own blocks
        snap = next((w for w in want if w["address"] == int(s["address"], 16)), None)
        if not snap:
            continue
        alloc = sum(b[1] for b in snap["blocks"] if b[2] == "active_allocated")
        free = [b[1] for b in snap["blocks"] if b[2] == "inactive"]
        expect = {"allocated_size": alloc, "largest_free": max(free, default=0),
                  "inactive_split": sum(free) if alloc else 0,
                  "pinned": bool(alloc) and alloc * 8 < snap["size"]}
        have = {k: s[k] for k in expect}
        if have != expect:
            problems.append("segment %s usage %r, want %r" % (s["address"], have, expect))
    paths = {}
    for s in d["segments"]:
        for b in s["blocks"]:
            for t in b["tensors"]:
                paths[int(b["address"], 16)] = t["paths"]
    loose = [b for s in d["segments"] for b in s["blocks"] if b["unattributed"]]
    if "unattributed" in truth and [int(b["address"], 16) for b in loose] != [
            int(truth["unattributed"], 16)]:
        problems.append("unattributed blocks %r, want only %s" % (
            [b["address"] for b in loose], truth["unattributed"]))
    for ptr, path in truth.get("held", {}).items():
        if paths.get(int(ptr, 16)) != [path]:
            problems.append("block %s: holders %r, want [%r]" % (ptr, paths.get(int(ptr, 16)), path))
    if problems:
        raise harness.Failure("\n".join(problems))


def blocks(kind):
    def test():
        env = harness.simgpu_env()
        with harness.tempdir() as d:
            if kind == "kernel-core":
                truth, core = harness.kernel_core(PYTHON, "cuda_blocks.py", [], d, env=env)
                compare(harness.culeak_json("blocks", "--core", core), truth)
                return
            with harness.Process(PYTHON, "cuda_blocks.py", env=env) as p:
                target = ["--pid", p.pid] if kind == "live" else ["--core", harness.gcore(p.pid, d)]
                compare(harness.culeak_json("blocks", *target), p.truth)
    return test


def summary():
    with harness.Process(PYTHON, "cuda_blocks.py", env=harness.simgpu_env()) as p:
        doc = harness.culeak_json("summary", "--pid", p.pid)
        cuda = doc["cuda"]
        check(len(cuda) == 1 and cuda[0]["reserved"] == p.truth["reserved"] and
              cuda[0]["allocated"] == p.truth["allocated"] and
              cuda[0]["cached"] == p.truth["reserved"] - p.truth["allocated"] and
              cuda[0]["unattributed"] == 4096, "summary: %r" % cuda)


def filters():
    with harness.Process(PYTHON, "cuda_blocks.py", env=harness.simgpu_env()) as p:
        allocated = harness.culeak_json("blocks", "--pid", p.pid, "--state", "allocated")
        states = {b["state"] for s in allocated["devices"][0]["segments"] for b in s["blocks"]}
        check(states == {"active_allocated", "active_pending_free"}, "allocated: %r" % states)
        free = harness.culeak_json("blocks", "--pid", p.pid, "--state", "free")
        states = {b["state"] for s in free["devices"][0]["segments"] for b in s["blocks"]}
        check(states == {"inactive"}, "free: %r" % states)
        none = harness.culeak_json("blocks", "--pid", p.pid, "--device", "1")
        check(none["devices"] == [], "--device 1 on a one-device process: %r" % none["devices"])


def no_allocator():
    """A CPU-only PyTorch has no CUDA allocator: a plain error, exit 9."""
    with harness.Process(harness.TORCH_VENV, "idle.py", "--torch") as p:
        r = harness.culeak("blocks", "--pid", p.pid, expect_rc=9)
        check("no CUDA caching allocator" in r.stderr, r.stderr)


def tests():
    for kind in ("live", "gcore", "kernel-core"):
        yield "simulated-device:%s" % kind, blocks(kind)
    yield "simulated-device:filters", filters
    yield "simulated-device:summary", summary
    yield "cpu-torch:no-allocator", no_allocator
