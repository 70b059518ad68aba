"""torch.compile's cache, which Dynamo keeps in C++ off the code objects it compiled
(torch/dynamo_cache.h), against compile_cache.py: a global function compiled for two dtypes, its
compiled wrapper dropped.

Every object of both cache entries that torch's own _debug_get_cache_entry_list shows (guards,
the code Dynamo made, the compile id), which no object gc knows holds (the scenario counts the
references gc cannot see), is named through the function, `__main__.scale.__code__.<torch.compile
cache>.guard_manager`, and has no reference culeak leaves unexplained. The backend, which torch's
cached_backends also holds, need only balance. No warning says the cache was not read. On the
CPU wheel live and from a core, and on each CUDA wheel (its CPU side) make check runs."""
import harness
from harness import Failure

PREFIX = "__main__.scale.__code__.<torch.compile cache>."


def check_job(python, via):
    with harness.Process(python, "compile_cache.py") as p, harness.tempdir() as d:
        truth = p.truth
        target = harness.target_of(via, p, d)
        addrs = [a for i in truth["hidden"] for a in ("--addr", "%x" % int(i))]
        refs = harness.culeak_json("refs", *target, *addrs)
    problems = []
    if len(truth["entries"]) != 2:
        problems.append("the scenario made %d cache entries, not 2" % len(truth["entries"]))
    got = {int(o["address"], 16): o for o in refs["objects"]}
    for entry in truth["entries"]:
        for attr, addr in entry.items():
            o = got.get(addr)
            hidden = truth["hidden"][str(addr)]
            if o is None:
                problems.append("%s 0x%x: not read" % (attr, addr))
                continue
            if o["unexplained"] != 0:
                problems.append("%s 0x%x: %r references not explained (gc sees all but %d)"
                                % (attr, addr, o["unexplained"], hidden))
            paths = o["paths"]
            if attr != "backend" and (not paths or paths[0] != PREFIX + attr):
                problems.append("%s 0x%x: named %r, want %r first" % (attr, addr, paths,
                                                                     PREFIX + attr))
    if all(v == 0 for v in truth["hidden"].values()):
        problems.append("gc sees every reference to the cache's objects: nothing is proven")
    warned = [w for w in refs["warnings"] if "torch.compile" in w]
    if warned:
        problems.append("warnings: %r" % warned)
    if problems:
        raise Failure("torch %s, %s:\n%s" % (truth["torch"], via, "\n".join(problems)))


def job(python, via="live"):
    return lambda: check_job(python, via)


def tests():
    for release, python, cells in (("2.13", harness.TORCH_VENV, ("live", "gcore")),
                                   ("2.14", harness.cuda_python("2.14"), ("live",)),
                                   ("2.10", harness.cuda_python("2.10"), ("live",))):
        for via in cells:
            yield "torch-%s:%s" % (release, via), job(python, via)
    for release in ("2.1", "2.4", "2.6", "2.7", "2.8", "2.9", "2.11", "2.12", "2.15"):
        yield "torch-%s:live" % release, job(harness.cuda_python(release)), "full"
