"""The guards torch.compile builds in C++ (torch/guards.c), against guards.py: a function compiled
once, reading a module, globals and one list passed twice, and one compiled with dynamic shapes,
their compiled wrappers dropped.

Every leaf guard that torch's own API shows keeps a list of its code parts with a reference that
no object gc knows holds (the scenario counts them): each list is named through its function,
`__main__.step.__code__.<torch.compile cache>.guard_manager.root.<KIND guard>.verbose_code_parts`
(or through the copy of the tree Dynamo keeps as `diff_guard_root`, which shares the leaves), and
has no reference culeak leaves unexplained. What else the guards hold (the StackSummary of the
code that made each, a lambda guard's function, the GlobalStateGuard, the weak references to the
types guarded) leaves no reference of its type unexplained in the whole heap, and no object has
more references found than counted (a borrowed pointer taken for a reference). No warning says a
tree was not read. On the CPU wheel live, from a core and from culeak's dump, on each CUDA wheel make check runs, and
on every release from 2.6 in full."""
import harness
from harness import Failure

PREFIX = "__main__.%s.__code__.<torch.compile cache>.guard_manager."
TREES = ("root", "diff_guard_root")
# types only the guard trees hold in this job: none of their references may stay unexplained
HELD_BY_GUARDS = ("StackSummary", "weakref.ReferenceType", "function",
                  "torch._C._dynamo.guards.GlobalStateGuard")
KNOWN_KINDS = ("LAMBDA_GUARD", "EQUALS_MATCH", "GLOBAL_STATE", "DEFAULT_DEVICE",
               "NO_TENSOR_ALIASING", "TYPE_MATCH", "ID_MATCH", "TENSOR_MATCH",
               "DIMENSION_DYNAMIC_MARKING_GUARD", "TORCH_FUNCTION_MODE_STACK", "NO_HASATTR",
               "DICT_CONTAINS", "DICT_VERSION", "LENGTH_CHECK", "FALSE_MATCH")


def expected_names(function, kind):
    label = kind if kind in KNOWN_KINDS else "a"
    return {PREFIX % function + tree + ".<%s guard>.verbose_code_parts" % label for tree in TREES}


def check_job(python, via):
    with harness.Process(python, "guards.py") as p, harness.tempdir() as d:
        truth = p.truth
        target = harness.target_of(via, p, d)
        addrs = [a for g in truth["guards"] for a in ("--addr", "%x" % g["code_parts"])]
        refs = harness.culeak_json("refs", *target, *addrs)
        balance = harness.culeak_json("balance", *target)
    problems = []
    if not any(g["hidden"] for g in truth["guards"]):
        problems.append("gc sees every reference to the guards' code parts: nothing is proven")
    got = {int(o["address"], 16): o for o in refs["objects"]}
    for g in truth["guards"]:
        o = got.get(g["code_parts"])
        if o is None:
            problems.append("%s's code parts 0x%x: not read" % (g["kind"], g["code_parts"]))
            continue
        if o["unexplained"] != 0:
            problems.append("%s's code parts: %r references not explained (gc sees all but %d)"
                            % (g["kind"], o["unexplained"], g["hidden"]))
        if not o["paths"] or o["paths"][0] not in expected_names(g["function"], g["kind"]):
            problems.append("%s's code parts: named %r" % (g["kind"], o["paths"][:1]))
    if balance["overcounted_objects"]:
        problems.append("%d objects with more references found than counted: %r" % (
            balance["overcounted_objects"], balance["overcounted"][:5]))
    for row in balance["unexplained_by_type"]:
        if row["type"] in HELD_BY_GUARDS:
            problems.append("%s: %d references not explained" % (row["type"], row["references"]))
    warned = [w for w in balance["warnings"] if "library C type" in w]
    if warned:
        problems.append("warnings: %r" % warned)
    if problems:
        raise Failure("torch %s, %s:\n%s" % (truth["torch"], via, "\n".join(problems)))


def job(python, via="live"):
    return lambda: check_job(python, via)


def tests():
    for release, python, cells in (("2.13", harness.TORCH_VENV, ("live", "gcore", "dump")),
                                   ("2.14", harness.cuda_python("2.14"), ("live",)),
                                   ("2.10", harness.cuda_python("2.10"), ("live",))):
        for via in cells:
            yield "torch-%s:%s" % (release, via), job(python, via)
    for release in ("2.6", "2.7", "2.8", "2.9", "2.11", "2.12", "2.15"):
        yield "torch-%s:live" % release, job(harness.cuda_python(release)), "full"
