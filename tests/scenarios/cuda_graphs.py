"""Scenario: a job that captured CUDA graphs, whose private pools stay reserved while the graphs
live: g1 in a pool of its own that g2, g4 and g5 then share (pool=g1.pool(), as cudagraph trees
share one), and g3 alone in a pool whose output the job has since dropped, so that g3 keeps memory reserved that no tensor holds. Element-
wise kernels only (a CUDA 12 wheel's cuBLAS needs a real GPU). Prints its truth, then READY,
and serves requests on stdin.

Truth: pid; graphs: each graph's global name and its pool id (g.pool()); pools: for each private
pool id, its reserved, allocated and empty bytes and its segments, as the allocator's own
snapshot shows them.
Requests: {"delete": NAME} deletes the global, collects and empties the cache; the answer is
{"freed_reserved": what torch.cuda.memory_reserved() gave back}."""
import gc
import json
import os
import sys

import torch


def capture(graph, pool=None):
    with torch.cuda.graph(graph, pool=pool):
        return (static * 2).relu() + 1   # intermediates freed inside the capture, in the pool


def pools():
    """Each private pool's bytes, as the allocator's snapshot counts them."""
    out = {}
    for s in torch.cuda.memory._snapshot()["segments"]:
        pid = tuple(s.get("segment_pool_id", (0, 0)))
        if pid == (0, 0):
            continue
        live = sum(b["size"] for b in s["blocks"] if b["state"].startswith("active"))
        p = out.setdefault("%d,%d" % pid, {"reserved": 0, "allocated": 0, "empty": 0,
                                           "segments": 0})
        p["reserved"] += s["total_size"]
        p["allocated"] += live
        p["empty"] += 0 if live else s["total_size"]
        p["segments"] += 1
    return out


static = torch.ones(1 << 20, device="cuda")           # 4 MiB, in the default pool
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):                         # warm up, as torch's docs ask
    (static * 2).relu() + 1
torch.cuda.current_stream().wait_stream(side)
g1, g2, g3, g4, g5 = (torch.cuda.CUDAGraph() for _ in range(5))
out1 = capture(g1)
out2 = capture(g2, pool=g1.pool())
out3 = capture(g3)
out4 = capture(g4, pool=g1.pool())
out5 = capture(g5, pool=g1.pool())
del out3                                              # g3's pool now holds no tensor
g1.replay()
torch.cuda.synchronize()
print(json.dumps({"pid": os.getpid(), "torch": torch.__version__,
                  "graphs": {name: list(globals()[name].pool()) for name in ("g1", "g2", "g3", "g4", "g5")},
                  "pools": pools()}), flush=True)
print("READY", flush=True)
for line in sys.stdin:
    name = json.loads(line)["delete"]
    before = torch.cuda.memory_reserved()
    del globals()[name]
    gc.collect()
    torch.cuda.empty_cache()
    print(json.dumps({"freed_reserved": before - torch.cuda.memory_reserved()}), flush=True)
