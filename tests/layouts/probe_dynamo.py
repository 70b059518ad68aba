#!/usr/bin/env python3
"""Discover where torch.compile's cache hangs off a code object: culeak's table in
inspector/torch/dynamo_cache.c.

Run it with the Python of the torch wheel to inspect (the CPU suffices):

    build/venv/torch-2.8-cuda/bin/python tests/layouts/probe_dynamo.py

Dynamo keeps, in the code object's co_extra slot it asked for (libtorch_python's `extra_index`),
an ExtraState: from 2.4 a C++ object with a std::list of CacheEntry, from 2.1 a C struct with a
linked list. The probe compiles one function twice (two dtypes: two cache entries), takes each
entry's address from torch's own _debug_get_cache_entry_list (the pybind11 instance's value
pointer; in 2.1 a tuple, found among the ExtraState's words), and finds, with no offset assumed:
the list in the ExtraState (its sentinel's next is the first entry's node and the size follows),
the frame state (the one word that points at a dict), the word that points back at the code, and in each entry every word equal to one
of the entry's Python attributes (check_fn or guard_manager, code, backend, ...) and the word
pointing back at the ExtraState. Any other word of an entry that points at a live Python object
is printed too, for the table's reader to name from torch's source. Every address is read
through /proc/self/mem. Prints one JSON object, or exits 1 when a find fails or is ambiguous.
"""
import ctypes
import gc
import json
import sys

import torch
from torch._C._dynamo import eval_frame

from selfmem import maybe_words, word, words   # tests/layouts/

ENTRY_BYTES = 512     # bytes of a cache entry searched (about 200 today)
STATE_BYTES = 256     # of the ExtraState


# PyCodeObject.co_extra, from the interpreters' DWARF (culeak's cpython/layouts.c has them all)
CO_EXTRA = {(3, 9): 144, (3, 10): 144, (3, 11): 176, (3, 12): 184, (3, 13): 192}


def co_extra(code):
    """The ExtraState: the one slot set in the code's _PyCodeObjectExtra (ce_size, then the
    slots), where only dynamo asked for one."""
    extra = word(id(code) + CO_EXTRA[sys.version_info[:2]])
    slots = [s for s in words(extra + 8, word(extra))] if extra else []
    if len([s for s in slots if s]) != 1:
        sys.exit("probe_dynamo: co_extra holds %r, not one slot" % slots)
    return [s for s in slots if s][0]


def is_object(addr):
    """addr starts a live Python object: its type word is a type gc or the runtime knows."""
    t = word(addr + 8) if addr and addr % 8 == 0 else None
    return t is not None and word(t + 8) in TYPE_TYPES


def main():
    def f(x):
        return x * 2 + 1
    g = torch.compile(f, backend="eager", dynamic=False)
    g(torch.randn(4))
    g(torch.randn(4, dtype=torch.float64))
    entries = eval_frame._debug_get_cache_entry_list(f.__code__)
    if len(entries) != 2:
        sys.exit("probe_dynamo: %d cache entries, not 2" % len(entries))
    state = co_extra(f.__code__)
    sw = words(state, STATE_BYTES // 8)
    dicts = [8 * i for i, w in enumerate(sw) if is_object(w) and word(w + 8) == id(dict)]
    out = {"torch": torch.__version__, "python": sys.version.split()[0], "frame_state": dicts,
           "orig_code": [8 * i for i, w in enumerate(sw) if w == id(f.__code__)]}
    if isinstance(entries[0], tuple):   # 2.1: each entry a Python object, chained
        attrs = [dict(check_fn=e[0], code=e[1]) for e in entries]
        pair = [(id(a["check_fn"]), id(a["code"])) for a in attrs]
        firsts = [(8 * i, 8 * k) for i, w in enumerate(sw) if is_object(w)
                  for k in range(2, 8) if maybe_words(w + 8 * k, 2) == pair[0]]
        if len(firsts) != 1:
            sys.exit("probe_dynamo: first entry at %r" % firsts)
        (first, members), first_addr = firsts[0], sw[firsts[0][0] // 8]
        nexts = [8 * i for i, w in enumerate(words(first_addr, 8))
                 if maybe_words(w + members, 2) == pair[1]]
        if len(nexts) != 1:
            sys.exit("probe_dynamo: next at %r" % nexts)
        addrs = [first_addr, word(first_addr + nexts[0])]
        out.update(kind="objects", first=first, next=nexts[0])
    else:
        addrs = [words(id(e) + 16, 1)[0] for e in entries]
        attrs = [{a: getattr(e, a) for a in dir(e) if not a.startswith("_")
                  and not callable(getattr(type(e), a, None))} for e in entries]
        nodes = [a - 16 for a in addrs]   # a std::list node: next, prev, then the entry
        lists = [8 * i for i in range(len(sw) - 1) if sw[i:i + 2] == tuple(nodes)]
        # 2.14: an unordered_map from region id to list: the map's first node (next, key,
        # then the list) is what its before-begin word points at
        maps = [8 * i for i, w in enumerate(sw) if maybe_words(w + 16, 2) == tuple(nodes)]
        if len(lists) + len(maps) != 1:
            sys.exit("probe_dynamo: the list at %r, the map at %r" % (lists, maps))
        owners = [8 * i for i, w in enumerate(words(addrs[0], ENTRY_BYTES // 8)) if w == state]
        out.update(kind="list" if lists else "map", at=(lists or maps)[0], owner=owners)
    members, others = {}, set()
    for addr, a in zip(addrs, attrs):
        # malloc's chunk size, before the node (operator new) or the object: what is past it
        # is another allocation
        if out["kind"] == "objects":
            entry = ctypes.cast(addr, ctypes.py_object).value
            size = type(entry).__basicsize__
            out["entry_type"] = "%s, gc %s" % (type(entry).__name__, gc.is_tracked(entry))
        else:
            size = (word(addr - 24) & ~7) - 24
        out["entry_bytes"] = size
        ew = words(addr, size // 8)
        for name, value in a.items():
            at = [8 * i for i, w in enumerate(ew) if w == id(value)]
            if value is not None and len(at) == 1:
                members.setdefault(name, set()).add(at[0])
        known = {off for s in members.values() for off in s}
        others |= {(8 * i, type(ctypes.cast(w, ctypes.py_object).value).__name__)
                   for i, w in enumerate(ew) if 8 * i not in known and is_object(w)}
    if any(len(s) != 1 for s in members.values()):
        sys.exit("probe_dynamo: members at several offsets: %r" % members)
    out["members"] = {k: s.pop() for k, s in sorted(members.items())}
    out["other_objects"] = sorted(others)
    print(json.dumps(out))


TYPE_TYPES = {id(type)} | {id(type(t)) for t in gc.get_objects() if isinstance(t, type)}
main()
