"""Scenario: one of several processes culeak reads at once, with a heap of its own size: about
MB megabytes of small Python objects no file backs.

argv: MB
Prints one JSON line ({"pid", "anon_bytes": RssAnon + RssShmem, "objects": len(gc.get_objects())}),
then READY."""
import gc
import json
import os
import sys
import time

# a list of small lists, each 56 + 8 bytes with its item, of ints and floats: about 120 bytes each
heap = [[i, float(i)] for i in range(int(sys.argv[1]) * (1 << 20) // 120)]


def anon_bytes():
    kib = 0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("RssAnon:", "RssShmem:")):
                kib += int(line.split()[1])
    return kib * 1024


print(json.dumps({"pid": os.getpid(), "anon_bytes": anon_bytes(), "objects": len(gc.get_objects())}),
      flush=True)
print("READY", flush=True)
time.sleep(3600)
