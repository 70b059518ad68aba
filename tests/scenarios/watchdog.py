"""Scenario: a torch process with a heap large enough that culeak's walk takes seconds (as
dying.py) and a watchdog thread that wakes every millisecond and keeps the longest gap it saw
between two wake-ups: how long the process was stopped. Prints its ground truth (each held
tensor's data pointer and size), then READY; then, for each line on stdin, the longest gap since
the last line as JSON ({"gap": seconds}), and starts measuring again.

argv: [N objects, default 1.5 million]"""
import json
import os
import sys
import threading
import time

import torch

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_500_000


class Record:
    def __init__(self, i):
        self.step = i
        self.name = "r%d" % i


per = 1000
shards = {("shard%d" % s): [Record(i) for i in range(per // 3)] for s in range(n // per)}
held = [torch.full((256 * (i + 1),), float(i)) for i in range(8)]
longest = [0.0]


def watchdog():
    last = time.monotonic()
    while True:
        time.sleep(0.001)
        now = time.monotonic()
        longest[0] = max(longest[0], now - last)
        last = now


threading.Thread(target=watchdog, name="watchdog", daemon=True).start()
truth = {"pid": os.getpid(),
         "storages": [{"data": t.untyped_storage().data_ptr(), "bytes": t.untyped_storage().nbytes()}
                      for t in held]}
print(json.dumps(truth), flush=True)
print("READY", flush=True)
for _ in sys.stdin:
    print(json.dumps({"gap": longest[0]}), flush=True)
    longest[0] = 0.0
