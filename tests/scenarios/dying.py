"""Scenario: a torch process with a heap large enough that culeak's walk takes a few seconds (dicts
of lists of small instances, as in bench/big_heap.py) and a few tensors held from a global, so a
test can kill it while culeak reads it. Prints its ground truth (each held tensor's data pointer
and size), then READY, then waits.

argv: [N objects, default 1.5 million] [--no-tensors]: torch imported, not one tensor made
[--watchdog]: a thread also wakes every millisecond and keeps the longest gap between two
wake-ups (how long the process was stopped); after READY each line on stdin prints that gap as
JSON ({"gap": seconds}) and starts measuring again."""
import json
import os
import sys
import threading
import time

import torch

args = [a for a in sys.argv[1:] if not a.startswith("--")]
n = int(args[0]) if args else 1_500_000


class Record:
    def __init__(self, i):
        self.step = i
        self.name = "r%d" % i


per = 1000
shards = {("shard%d" % s): [Record(i) for i in range(per // 3)] for s in range(n // per)}
held = [] if "--no-tensors" in sys.argv else [torch.full((256 * (i + 1),), float(i)) for i in range(8)]
longest = [0.0]


def watchdog():
    last = time.monotonic()
    while True:
        time.sleep(0.001)
        now = time.monotonic()
        longest[0] = max(longest[0], now - last)
        last = now


if "--watchdog" in sys.argv:
    threading.Thread(target=watchdog, name="watchdog", daemon=True).start()
truth = {"pid": os.getpid(),
         "storages": [{"data": t.untyped_storage().data_ptr(), "bytes": t.untyped_storage().nbytes()}
                      for t in held]}
print(json.dumps(truth), flush=True)
print("READY", flush=True)
if "--watchdog" in sys.argv:
    for _ in sys.stdin:
        print(json.dumps({"gap": longest[0]}), flush=True)
        longest[0] = 0.0
time.sleep(3600)
