"""Scenario: one object held by four referrers, for `refs --max-paths`. Prints its ground truth
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
v = sys.version_info
print(json.dumps({"pid": os.getpid(), "version": "%d.%d.%d" % v[:3], "address": hex(id(m)),
                  "paths": ["__main__.m", "__main__.a[0]", "__main__.b['k']", "__main__.h.x"]}),
      flush=True)
print("READY", flush=True)
time.sleep(3600)
