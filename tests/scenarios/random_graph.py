"""Scenario: a randomized object graph for the books (issue 41), from a fixed seed (argv[1]):
lists, dicts, sets, tuples, instances, closures, C iterators, suspended generators and
functools.partial objects refer to one another at random; some are kept in globals, some leaked
with Py_IncRef (held from C), the rest dropped, leaving garbage cycles (gc is disabled).

Prints one JSON line of ground truth from inside, then READY, and serves requests on stdin:
  {"pid", "seed", "objects": n, "leaked": [ids]}
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
    kind = rng.randrange(10)
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
kept = rng.sample(pool, 20)
leaked = rng.sample(pool, 5)
for o in leaked:
    incref(o)
truth = {"pid": os.getpid(), "seed": seed, "objects": len(pool),
         "leaked": [id(o) for o in leaked]}
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
    elif "describe" in request:   # an object culeak named, for a failing test to say
        found = [o for o in gc.get_objects() if id(o) == request["describe"]]
        print(json.dumps({"describe": repr(found[0])[:200] if found else None,
                          "referrers": [type(r).__name__ for r in gc.get_referrers(*found)]}),
              flush=True)
