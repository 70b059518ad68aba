"""Scenario on the simulated CUDA device: a job whose caching allocator holds many segments,
for the HTML page's scale. Each tensor of 1 MiB goes to the small pool, whose segments are
2 MiB, so N segments hold 2N tensors; every tenth segment's pair is held by `batches` (one
holder), the rest by `cache` (another), and the first segment keeps one free block. Prints its
truth, then READY, and waits.

Truth: pid; segments: how many the allocator's snapshot lists; held: the data pointer of one
tensor of each holder, with its path.

argv: N (the segments, default 10000)"""
import json
import os
import sys
import time

import torch

N = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
MIB = 1 << 20

chunks = [torch.empty(MIB, dtype=torch.uint8, device="cuda") for _ in range(2 * N)]
batches = [chunks[i] for i in range(0, 2 * N, 20)] + [chunks[i + 1] for i in range(0, 2 * N, 20)]
cache = {i: t for i, t in enumerate(chunks) if i % 20 > 1}
del chunks
cache.pop(3)   # the second segment's second block: free
segments = torch.cuda.memory._snapshot()["segments"]
print(json.dumps({"pid": os.getpid(), "segments": len(segments),
                  "held": {hex(batches[0].data_ptr()): "__main__.batches[0]",
                           hex(cache[2].data_ptr()): "__main__.cache[2]"}}), flush=True)
print("READY", flush=True)
time.sleep(3600)
