"""DistributedDataParallel's gradient buckets, which only its C++ Reducer holds (torch/reducer.h),
against ddp_buckets.py: a one-rank gloo job on the CPU after two steps.

With gradient_as_bucket_view=False the buckets are buffers of their own: culeak lists them as C++
tensors, named `__main__.ddp.reducer.buckets[i].gradients`, holding together exactly the
parameters' bytes (each gradient is in one bucket), in the "held from C or C++" category, and
`__main__.ddp` retains exactly those bytes: what `del ddp` frees in a fork of the process, by
malloc's own count, less the Reducer's other allocations (under 64 KiB). With True, every .grad
is a view into a bucket: the buckets are the grads' storages, shared with the model, and
`__main__.ddp` retains nothing, as deleting it frees nothing of that size. The Reducer, the
Logger and the ProcessGroup each wrap the C++ class torch binds them to. Each on the CPU wheel
live and from a core, and on each CUDA wheel make check runs."""
import harness
from harness import Failure

BUCKET_TYPE = "c++ tensor (a DDP gradient bucket)"
# The C++ classes torch binds these Python types to (torch/csrc/distributed/c10d/init.cpp:
# py::class_<::c10d::Reducer, ...>(module, "Reducer"), and likewise Logger and ProcessGroup),
# which culeak reads from pybind11's own registry; DistributedDataParallel is a Python class.
BOUND = {"torch._C._distributed_c10d.Reducer": "c10d::Reducer",
         "torch._C._distributed_c10d.Logger": "c10d::Logger",
         "torch._C._distributed_c10d.ProcessGroup": "c10d::ProcessGroup",
         "DistributedDataParallel": None}
OVERHEAD = 64 << 10   # what else deleting the DDP object frees: the Reducer, its vectors, hooks


def check_job(python, view, port, via):
    with harness.Process(python, "ddp_buckets.py", "view" if view else "copy", str(port)) as p, \
            harness.tempdir() as d:
        truth = p.truth
        target = harness.target_of(via, p, d)
        tensors = harness.culeak_json("tensors", *target)
        summary = harness.culeak_json("summary", *target)
        refs = [o for t in ("torch._C._distributed_c10d.Reducer",
                            "torch._C._distributed_c10d.Logger", "ProcessGroup",
                            "torch.nn.parallel.distributed.DistributedDataParallel") if not view
                for o in harness.culeak_json("refs", *target, "--type", t)["objects"]]
    problems = []
    wrapped = {o["type"]: o["cxx_class"] for o in refs
               if (o["cxx_object"] is not None) == (o["cxx_class"] is not None)}
    if not view and wrapped != BOUND:
        problems.append("the C++ classes the objects wrap: %r, want %r" % (wrapped, BOUND))
    buckets = [t for t in tensors["tensors"] if t["type"] == BUCKET_TYPE]
    storages = {int(t["storage_data_ptr"], 16): t for t in buckets}
    names = sorted(h["path"] for t in buckets for h in t["holders"] if ".reducer." in h["path"])
    want_names = ["__main__.ddp.reducer.buckets[%d].gradients" % i for i in range(len(buckets))]
    if sum(t["nbytes"] for t in storages.values()) != truth["params_bytes"] or \
            len(storages) != len(buckets) or names != want_names:
        problems.append("buckets %r (named %r), want distinct storages of %d bytes in all, "
                        "named %r" % ([(t["storage_data_ptr"], t["nbytes"]) for t in buckets],
                                      names, truth["params_bytes"], want_names))
    grads = {int(a, 16) for a in truth["grad_storages"]}
    if view != (set(storages) == grads) or (not view and set(storages) & grads):
        problems.append("bucket storages %s, grads' %s: want %s" % (
            sorted(map(hex, storages)), sorted(map(hex, grads)),
            "the same" if view else "none in common"))
    ddp = next((h for h in summary["holders"] if h["holder"] == "__main__.ddp"), None)
    retained = ddp["retained_bytes"] if ddp else 0
    freed = truth["freed_by_ddp"]
    if view and (retained != 0 or freed > OVERHEAD):
        problems.append("__main__.ddp retains %d bytes, deleting it frees %d: want 0 and little"
                        % (retained, freed))
    if not view and (retained != truth["params_bytes"] or not 0 <= freed - retained <= OVERHEAD):
        problems.append("__main__.ddp retains %d bytes, deleting it frees %d: want the buckets' "
                        "%d, %d more at most" % (retained, freed, truth["params_bytes"], OVERHEAD))
    cxx = next((c for c in summary["categories"] if c["category"] == "held from C or C++"), None)
    if not view and (not cxx or cxx["bytes"] != truth["params_bytes"]):
        problems.append("the C++ category %r, want the buckets' %d bytes" % (
            cxx, truth["params_bytes"]))
    if problems:
        raise Failure("torch %s, %s:\n%s" % (truth["torch"], via, "\n".join(problems)))


def job(python, view, port, via="live"):
    return lambda: check_job(python, view, port, via)


def tests():
    port = 29610
    for release, python, cells in (("2.13", harness.TORCH_VENV, ("live", "gcore")),
                                   ("2.14", harness.cuda_python("2.14"), ("live",)),
                                   ("2.10", harness.cuda_python("2.10"), ("live",))):
        for view in (False, True):
            for via in cells:
                port += 1
                yield "torch-%s:%s:%s" % (release, "view" if view else "copy", via), \
                    job(python, view, port, via)
    for release in ("2.1", "2.4", "2.6", "2.7", "2.8", "2.9", "2.11", "2.12", "2.15"):
        port += 1
        yield "torch-%s:copy:live" % release, job(harness.cuda_python(release), False, port), \
            "full"
