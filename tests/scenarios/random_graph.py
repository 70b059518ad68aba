"""Scenario: a randomized object graph for the books (issue 41), from a fixed seed (argv[1]):
lists, dicts, sets, tuples, instances, closures, C iterators, suspended generators and
functools.partial objects refer to one another at random; some are kept in globals g0..g19, some
leaked with Py_IncRef (held from C), the rest dropped, leaving garbage cycles (gc is disabled).
With argv[2] "tensors" (a torch interpreter), CPU tensors and views of them (shared storages) are
among the objects.

Prints one JSON line of ground truth from inside, then READY, and serves requests on stdin:
  {"pid", "seed", "objects": n, "leaked": [ids], "roots": ["g0", ...]}
  {"delete": "gK"} -> {"freed": bytes}: in a fork of the process, once gc.collect() has freed
  the garbage, gK deleted and gc.collect() run again: the nbytes of the storages whose
  StorageWeakRef expired then (tensors mode)
  {"collect": true} -> {"garbage": [ids], "freed": [ids]}: gc.set_debug(gc.DEBUG_SAVEALL);
  gc.collect(), the ids of gc.garbage and of the tracked objects the collection freed (a
  suspended generator's finalizer frees what only its frame held)
  {"describe": id} -> {"describe": repr, "referrers": [type names]} of a tracked object"""
import ctypes
import functools
import gc
import json
import os
import random
import sys

gc.disable()
seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
tensors = len(sys.argv) > 2 and sys.argv[2] == "tensors"
if tensors:
    import torch
    from torch.multiprocessing.reductions import StorageWeakRef
    storages = {}   # data_ptr -> (StorageWeakRef, nbytes): every storage the graph made
rng = random.Random(seed)
incref = ctypes.pythonapi.Py_IncRef
incref.argtypes = [ctypes.py_object]


class Node:
    pass


class Slotted:
    __slots__ = ("a", "b")


def suspended(items):
    for item in items:
        yield item


def closure_over(target):
    def inner():
        return target
    return inner


def make(i, pool):
    """A new object of a random kind, referring to up to three of pool."""
    refs = [rng.choice(pool) for _ in range(rng.randint(0, 3))] if pool else []
    kind = rng.randrange(12 if tensors else 10)
    if kind >= 10:
        return tensor(kind == 11 and pool)
    if kind == 0:
        return list(refs)
    if kind == 1:
        return {"k%d" % j: r for j, r in enumerate(refs)}
    if kind == 2:
        return tuple(refs) + (Node(),)   # a tuple with a tracked item stays tracked
    if kind == 3:
        n = Node()
        n.__dict__.update(("a%d" % j, r) for j, r in enumerate(refs))
        return n
    if kind == 4:
        s = Slotted()
        s.a = refs[0] if refs else None
        return s
    if kind == 5:
        return closure_over(refs)
    if kind == 6:
        it = iter(list(refs) + [Node()])
        return it
    if kind == 7:
        g = suspended(list(refs) + [Node()])
        next(g)
        return g
    if kind == 8:
        return functools.partial(print, *refs)
    return enumerate(list(refs))


def tensor(view_of):
    """A new CPU tensor, or a view of one the pool has (its storage shared)."""
    bases = [t for t in view_of or () if isinstance(t, torch.Tensor)]
    t = rng.choice(bases)[::2] if bases else torch.empty(rng.randint(1, 64) * 1024,
                                                         dtype=torch.uint8)
    s = t.untyped_storage()
    storages.setdefault(s.data_ptr(), (StorageWeakRef(s), s.nbytes()))
    return t


def freed_if_deleted(name):
    """The bytes deleting global name frees, measured in a fork (the process stays as it is):
    the garbage is collected first, which no holder keeps."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        gc.collect()
        alive = [(ref, n) for ref, n in storages.values() if not ref.expired()]
        del globals()[name]
        gc.collect()
        os.write(w, str(sum(n for ref, n in alive if ref.expired())).encode())
        os._exit(0)
    os.close(w)
    out = b""
    while chunk := os.read(r, 64):
        out += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return int(out)


pool = []
for i in range(300):
    pool.append(make(i, pool))
# back edges: cycles
for _ in range(120):
    a, b = rng.choice(pool), rng.choice(pool)
    if isinstance(a, list):
        a.append(b)
    elif isinstance(a, dict):
        a["back%d" % id(b)] = b
    elif isinstance(a, Node):
        a.back = b
roots = ["g%d" % k for k in range(20)]
globals().update(zip(roots, rng.sample(pool, 20)))
leaked = rng.sample(pool, 5)
for o in leaked:
    incref(o)
truth = {"pid": os.getpid(), "seed": seed, "objects": len(pool),
         "leaked": [id(o) for o in leaked], "roots": roots}
del pool, a, b, o, leaked   # the leaked ones are held from C, or through what is kept
print(json.dumps(truth), flush=True)
print("READY", flush=True)
for line in sys.stdin:
    request = json.loads(line)
    if request.get("collect"):
        before = {id(x) for x in gc.get_objects()}
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        after = {id(x) for x in gc.get_objects()}
        # a suspended generator's finalizer runs even under DEBUG_SAVEALL: what only its frame
        # held is freed during the collection, never saved
        print(json.dumps({"garbage": [id(x) for x in gc.garbage],
                          "freed": sorted(before - after)}), flush=True)
    elif "delete" in request:
        print(json.dumps({"freed": freed_if_deleted(request["delete"])}), flush=True)
    elif "describe" in request:   # an object culeak named, for a failing test to say
        found = [o for o in gc.get_objects() if id(o) == request["describe"]]
        print(json.dumps({"describe": repr(found[0])[:200] if found else None,
                          "referrers": [type(r).__name__ for r in gc.get_referrers(*found)]}),
              flush=True)
