"""The books on randomized object graphs (issue 41), against the random_graph.py scenario: for
each fixed seed, culeak's garbage is what gc.collect() under gc.DEBUG_SAVEALL puts in
gc.garbage, address for address (with what a suspended generator's finalizer frees during the
collection, which is never saved); no object has more references found than its count; and no
object leaked with Py_IncRef is called garbage. `make check` runs three seeds on the oldest and
newest interpreters; CULEAK_RANDOM_SEEDS=N runs N more (docs/design.md records longer runs).

With tensors among the objects (torch 2.13), each global root's retained bytes in culeak's
summary are what deleting that global frees, measured in a fork of the process (the nbytes of
the storages whose StorageWeakRef expired after gc.collect())."""
import os

import harness
from harness import Failure

SCENARIO = "random_graph.py"


def check_seed(python, seed):
    with harness.Process(python, SCENARIO, str(seed), stdin=True) as p:
        doc = harness.culeak_json("balance", "--pid", p.pid)
        mine = {int(a, 16) for a in doc["garbage_objects"]}
        collected = p.ask({"collect": True})
        theirs, freed = set(collected["garbage"]), set(collected["freed"])
        problems = []
        if doc["overcounted_objects"]:
            problems.append("%d objects overcounted: %r" % (doc["overcounted_objects"],
                                                            doc["overcounted"][:5]))
        # what a finalizer freed during the collection was garbage too, not saved
        if mine - theirs - freed or theirs - mine:
            problems.append("garbage: %d only culeak's, %d only gc.garbage's (of %d)" % (
                len(mine - theirs - freed), len(theirs - mine), len(theirs)))
        leaked = [hex(a) for a in p.truth["leaked"] if a in mine]
        if leaked:
            problems.append("leaked with Py_IncRef, called garbage: %r" % leaked)
        if problems:
            raise Failure("seed %d: %s" % (seed, "; ".join(problems)))


def check_retained(seed):
    with harness.Process(harness.TORCH_VENV, SCENARIO, str(seed), "tensors", stdin=True) as p:
        doc = harness.culeak_json("summary", "--pid", p.pid)
        mine = {h["holder"]: h["retained_bytes"] for h in doc["holders"]}
        problems = []
        for root in p.truth["roots"]:
            freed = p.ask({"delete": root})["freed"]
            got = mine.get("__main__." + root, 0)
            if got != freed:
                problems.append("%s: culeak says it retains %d bytes, deleting it frees %d" % (
                    root, got, freed))
        if problems:
            raise Failure("seed %d: %s" % (seed, "; ".join(problems)))


def retained(which):
    def test():
        for seed in which:
            check_retained(seed)
    return test


def seeds(name, python, which):
    def test():
        for seed in which:
            check_seed(python, seed)
    return test


def tests():
    pythons = dict(harness.interpreters())
    extra = range(100, 100 + int(os.environ.get("CULEAK_RANDOM_SEEDS", "0")))
    for name in ("pyenv-3.9", "pyenv-3.13", "sid-3.14", "sid-3.15"):
        yield "%s:seeds" % name, seeds(name, pythons[name], list(range(1, 4)) + list(extra))
    yield "torch-2.13:retained", retained(list(range(1, 4)) + list(extra))
    for name in ("pyenv-3.10", "pyenv-3.11", "pyenv-3.12", "system-python3", "sid-3.13"):
        yield "%s:seeds" % name, seeds(name, pythons[name], range(1, 4)), "full"
