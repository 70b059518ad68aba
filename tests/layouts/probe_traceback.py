#!/usr/bin/env python3
"""Discover where torch keeps the Python frames of a CapturedTraceback (torch 2.1+), in a real
build: torch._C._profiler.CapturedTraceback is {PyObject_HEAD; std::shared_ptr<CapturedTraceback>
data}, and the C++ object keeps the frames it gathered, each {PyCodeObject *code; int lasti}, in a
std::vector, with a reference to each code object.

Run it with the Python of the torch build to inspect:

    build/venv/torch-2.13/bin/python tests/layouts/probe_traceback.py

It gathers a traceback three calls deep, then looks in the C++ object for a vector whose
elements start with the code objects of those frames, innermost first, and checks that each
code object's count grew by one while the traceback lives. Prints one JSON line:
  {"torch", "basicsize", "data": offset of the shared_ptr, "frames": offset of the vector in the
   C++ object, "frame_size", "code": offset of the code pointer in a frame, "counted": bool}"""
import json
import sys

import torch

from selfmem import maybe_words, words

MAX_OBJECT = 256   # bytes of the C++ object searched


def gather():
    return torch._C._profiler.gather_traceback(python=True, script=False, cpp=False)


def one():
    return two()


def two():
    f = sys._getframe()   # not in a comprehension: 3.11 gives that a frame of its own
    return gather(), [f.f_code, f.f_back.f_code, f.f_back.f_back.f_code]


def main():
    (tb, codes), before = one(), None
    before = [sys.getrefcount(c) for c in codes]
    kind = type(tb)
    data = words(id(tb) + 16, 1)[0]
    obj = words(data, MAX_OBJECT // 8)
    found = None
    for off in range(0, MAX_OBJECT - 24, 8):
        begin, end, cap = obj[off // 8:off // 8 + 3]
        if not begin or begin > end or end > cap or end - begin > 4096:
            continue
        for size in (16, 24, 32):
            n = (end - begin) // size
            if n < 3 or (end - begin) % size:
                continue
            items = maybe_words(begin, n * size // 8)
            if items is None:
                continue
            first = [items[i * size // 8] for i in range(n)]
            # gather()'s own frame first, then two's, one's (the innermost first)
            if [id(c) for c in codes] == first[1:4] or [id(c) for c in codes] == first[:3]:
                found = {"frames": off, "frame_size": size, "code": 0}
                break
        if found:
            break
    del tb
    after = [sys.getrefcount(c) for c in codes]
    print(json.dumps({"torch": torch.__version__, "basicsize": kind.__basicsize__, "data": 16,
                      **(found or {"frames": None}),
                      "counted": all(b - a == 1 for a, b in zip(after, before))}))


main()
