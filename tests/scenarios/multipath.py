"""Scenario: one object held by four referrers, for `refs --max-paths`, and one held by a set
and a frozenset. Prints its ground truth
(address and the four paths, shortest first) as one JSON line, then READY, and waits."""
import json
import os
import sys
import time


class Marker:
    pass


class Holder:
    pass


m = Marker()
a = [m]
b = {"k": m}
h = Holder()
h.x = m
members = {Marker(), 1, "two"}
in_set = next(x for x in members if isinstance(x, Marker))
frozen = frozenset([in_set])
set_member = hex(id(in_set))
# a set item by its place in iteration order: [*s][i]
set_paths = ["[*__main__.members][%d]" % next(i for i, x in enumerate(members) if x is in_set),
             "[*__main__.frozen][0]"]
del in_set
v = sys.version_info
print(json.dumps({"pid": os.getpid(), "version": "%d.%d.%d" % v[:3], "address": hex(id(m)),
                  "paths": ["__main__.m", "__main__.a[0]", "__main__.b['k']", "__main__.h.x"],
                  "set_member": set_member,
                  "set_paths": set_paths}),
      flush=True)
print("READY", flush=True)
time.sleep(3600)
