"""Scenario: a process stopped in the middle of a garbage collection. A cyclic object's __del__
runs inside gc.collect() and blocks there, so the interpreter's `collecting` flag is set while
culeak reads it. Prints its ground truth, then READY."""
import gc
import json
import os
import sys
import time


class Blocker:
    def __del__(self):
        print(json.dumps({"pid": os.getpid(), "version": "%d.%d.%d" % sys.version_info[:3]}),
              flush=True)
        print("READY", flush=True)
        time.sleep(3600)


b = Blocker()
b.me = b
del b
gc.collect()
