#!/usr/bin/env python3
"""Discover how Dynamo's C++ guard tree (torch 2.6+) keeps its Python objects: culeak's table in
inspector/torch/guards.c.

Run it with the Python of the torch wheel to inspect (the CPU suffices):

    build/venv/torch-2.13/bin/python tests/layouts/probe_guards.py

A cache entry's `guard_manager.root` is a pybind11 RootGuardManager; each GuardManager keeps its
leaf guards (shared_ptrs) and its accessors (unique_ptrs, each owning the child GuardManager) in
std::vectors. The probe compiles a function that makes guards of many kinds, walks the tree
through torch's own Python API (get_leaf_guards, get_accessors, get_child_managers: pybind11
instances whose value pointer is the C++ object) and finds, with no offset assumed: each
vector in the manager (its elements are those objects), the child manager in the accessor, and
in every leaf guard and accessor each word that points at a live Python object, with the
references to that object gc cannot see ("hidden": getrefcount less its referrers). A member
that holds a reference shows hidden >= 1 on every object found there; one that is only an
address (ID_MATCH's id, a borrowed key) shows 0 on some. Prints one JSON object; exits 1 when
a vector is not found."""
import collections
import ctypes
import gc
import json
import sys
import types
import weakref

import torch
from torch._C._dynamo import eval_frame

from selfmem import maybe_words, word, words   # tests/layouts/

MANAGER_BYTES = 1024   # bytes of a GuardManager searched (408 in 2.13)
PYBIND11_VALUE = 16    # pybind11's instance: the head, then the value pointer

SCALE = 3.5
CONFIG = {"a": 1}


class Box:
    pass


BOX = Box()
MODEL = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())   # a DictGuardManager
SHARED = [1.0]


def f(x, y, n, a, b):
    """Guards of many kinds; a and b the same list: an aliasing guard, an epilogue guard."""
    assert isinstance(BOX, Box) and BOX is not None
    return MODEL(x * SCALE + y * CONFIG["a"] + n) * a[0] * b[0]


def shaped(x):
    """Compiled with dynamic shapes: its shape guard is an epilogue lambda guard where the
    aliasing guard is not one (2.7, 2.8)."""
    return x * 2 if x.shape[0] > 3 else x + 1


def value(o):
    return words(id(o) + PYBIND11_VALUE, 1)[0]


def chunk_size(p):
    """Usable bytes of the glibc chunk at p (its header's size less the header)."""
    h = word(p - 8)
    return (h & ~7) - 8 if h else 0


class Objects:
    """Whether a word is the address of a live Python object: its type word is a known type."""
    STATIC = (str, int, float, list, tuple, dict, type(None), bytes, bool, set, frozenset, object,
              type, types.FunctionType, types.MethodType, types.CodeType, types.ModuleType,
              types.BuiltinFunctionType, types.CellType, weakref.ref,
              torch._C._dynamo.guards.GlobalStateGuard)

    def __init__(self):
        self.types = {id(t): t for t in gc.get_objects() if type(t) is type or
                      isinstance(type(t), type) and issubclass(type(t), type)}
        self.types.update((id(t), t) for t in self.STATIC)

    def type_at(self, w):
        return self.types.get(word(w + 8)) if 4096 <= w < 1 << 47 else None


def find_vector(base, size, elems):
    """(offset, stride) of the std::vector in base's size bytes whose elements start with elems."""
    ws = maybe_words(base, size // 8) or ()
    for off in range(len(ws) - 2):
        b, e, c = ws[off:off + 3]
        if not (b and b <= e <= c and e - b < 1 << 20):
            continue
        for stride in (8, 16):
            if (e - b) // stride == len(elems) and (e - b) % stride == 0:
                items = maybe_words(b, (e - b) // 8)
                if items and list(items[::stride // 8]) == elems:
                    return off * 8, stride
    return None


def main():
    # the aliasing guard as an epilogue lambda guard, where a release makes that optional
    if hasattr(torch._dynamo.config, "use_lamba_guard_for_object_aliasing"):
        torch._dynamo.config.use_lamba_guard_for_object_aliasing = True
    cf = torch.compile(f, backend="eager", dynamic=False)
    cf(torch.randn(4), torch.randn(4), 3, SHARED, SHARED)
    objects = Objects()
    root = eval_frame._debug_get_cache_entry_list(f.__code__)[0].guard_manager.root
    found = {"torch": torch.__version__, "leaves": set(), "accessors": set(), "child": set(),
             "dict_entries": set(), "epilogue": set(), "weak_values": set()}
    sites = collections.defaultdict(list)   # (part, class, offset) -> object addresses

    def scan(part, cls, p, size, skip):
        for i, w in enumerate(maybe_words(p, size // 8) or ()):
            if i >= skip and objects.type_at(w):
                sites[(part, cls, i * 8)].append(w)

    seen_leaves = set()

    def weak_values(m, size):
        """A vector whose elements open with a reference to a weak reference (2.9-2.11 keep one
        to a guarded module, whose callback drops the cache when it dies): (offset, stride)."""
        ws = maybe_words(m, size // 8) or ()
        for off in range(len(ws) - 2):
            b, e, c = ws[off:off + 3]
            for stride in (8, 16):
                if b and b < e <= c and (e - b) % stride == 0 and e - b < 4096:
                    items = maybe_words(b, (e - b) // 8)
                    if items and all(objects.type_at(w) is weakref.ref
                                     for w in items[::stride // 8]):
                        found["weak_values"].add((off * 8, stride))

    def dict_entries(mgr, m):
        """A DictGuardManager's key and value managers, in an unordered_map whose nodes are
        {next, index, key manager, value manager}: the word that points at the first node."""
        pairs = {i: (k and value(k), v and value(v))
                 for i, (k, v) in mgr.get_key_value_managers().items()}
        ws = maybe_words(m, min(chunk_size(m), MANAGER_BYTES) // 8)
        for off, first in enumerate(ws):
            node, seen = first, {}
            while node and len(seen) <= len(pairs):
                n = maybe_words(node, 4)
                if not n:
                    break
                seen[n[1]] = (n[2], n[3])
                node = n[0]
            if seen == pairs and pairs:
                found["dict_entries"].add(off * 8)
        for k, v in mgr.get_key_value_managers().values():
            for sub in (k, v):
                if sub is not None:
                    walk(sub)

    def walk(mgr):
        m = value(mgr)
        leaves, accessors, kids = (mgr.get_leaf_guards(), mgr.get_accessors(),
                                   mgr.get_child_managers())
        size = min(chunk_size(m), MANAGER_BYTES)
        scan("manager", type(mgr).__name__, m, size, 1)
        weak_values(m, size)
        if leaves:
            at = find_vector(m, size, [value(g) for g in leaves])
            if not at:
                sys.exit("no vector of leaf guards in a %s" % type(mgr).__name__)
            found["leaves"].add(at)
            begin = words(m + at[0], 1)[0]
            for i, g in enumerate(leaves):
                p = value(g)
                if p in seen_leaves:
                    continue   # a relational guard, shared by managers
                seen_leaves.add(p)
                # make_shared: the control block, then the guard, in one chunk
                ctrl = words(begin + at[1] * i + 8, 1)[0] if at[1] == 16 else p - 16
                scan("leaf", type(g).__name__, p, chunk_size(ctrl) - (p - ctrl), 1)
        if accessors:
            at = find_vector(m, size, [value(a) for a in accessors])
            if not at:
                sys.exit("no vector of accessors in a %s" % type(mgr).__name__)
            found["accessors"].add(at)
        if type(mgr).__name__ == "DictGuardManager":
            dict_entries(mgr, m)
        for a, k in zip(accessors, kids):
            p = value(a)
            ws = maybe_words(p, chunk_size(p) // 8)
            found["child"].update(i * 8 for i, w in enumerate(ws) if w == value(k))
            scan("accessor", type(a).__name__, p, chunk_size(p), 1)
            walk(k)

    walk(root)
    epilogue = root.get_epilogue_lambda_guards()
    if not epilogue:
        cs = torch.compile(shaped, backend="eager", dynamic=True)
        cs(torch.randn(8))
        root = eval_frame._debug_get_cache_entry_list(shaped.__code__)[0].guard_manager.root
        epilogue = root.get_epilogue_lambda_guards()
    if epilogue:
        r = value(root)
        at = find_vector(r, min(chunk_size(r), MANAGER_BYTES), [value(g) for g in epilogue])
        if not at:
            sys.exit("no vector of epilogue guards in the RootGuardManager")
        found["epilogue"].add(at)
        for g in epilogue:
            p = value(g)
            scan("leaf", type(g).__name__, p, chunk_size(p), 1)
    del root
    gc.collect()
    count = collections.Counter(a for v in sites.values() for a in v)
    held = {a: ctypes.cast(a, ctypes.py_object).value for a in count}

    def hidden(a):
        o = held[a]
        referrers = [r for r in gc.get_referrers(o) if r is not held]
        return sys.getrefcount(o) - 3 - len(referrers)   # the argument, o, held

    found["members"] = [
        [part, cls, off, sorted({"%s hidden %d sites %d" % (type(held[a]).__name__, hidden(a),
                                                             count[a]) for a in v})]
        for (part, cls, off), v in sorted(sites.items())]
    for k in ("leaves", "accessors", "child", "dict_entries", "epilogue", "weak_values"):
        found[k] = sorted(found[k])
    print(json.dumps(found, indent=1))


main()
