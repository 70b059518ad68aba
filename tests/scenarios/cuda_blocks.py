"""Scenario on the simulated CUDA device: allocator states of every kind (split and merged
blocks, small and large pools, two streams, private pools of torch.cuda.MemPool, one of them
with nothing allocated, a block freed while another stream still uses it), with tensors leaked
into a list, and a raw caching_allocator_alloc() that no tensor holds. Run it with
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True for the same in expandable segments. Prints, as
ground truth, what torch.cuda.memory._snapshot() says of the allocator just before pausing, then
READY, and waits (or aborts with --abort). --snapshot-to FILE also pickles the whole snapshot
there, as torch's own tools save it. --record-history STACKS turns on
torch.cuda.memory._record_memory_history(stacks=STACKS) ("python" or "all") before the first
allocation, so every block and segment carries the stack that allocated it, and the allocator
keeps its trace; --trace-entries N keeps the last N entries only, so that the ring wraps, and
names the last allocation (torch's user metadata, from 2.10)."""
import json
import os
import sys
import time

import torch


def arg(name, default=None):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


if "--record-history" in sys.argv:
    torch.cuda.memory._record_memory_history(
        stacks=arg("--record-history"), max_entries=int(arg("--trace-entries", sys.maxsize)))


def allocate(n):
    """A frame of its own: a recorded stack two deep (three with 3.11's list comprehension)."""
    return torch.empty(n, device="cuda")


history = [allocate(n) for n in (100, 5000, 300000, 64)]   # small and large
scratch = [torch.empty(200000, device="cuda") for _ in range(3)]
del scratch[1]                      # a hole inside a large segment: a split, inactive block
side = torch.cuda.Stream()
with torch.cuda.stream(side):
    other = torch.empty(700000, device="cuda")   # a segment of the second stream
raw = torch.cuda.caching_allocator_alloc(4096)   # memory no tensor accounts for


def mem_pools():
    """Private pools of torch.cuda.MemPool (from 2.6); False where there are none, or where
    they refuse expandable segments (2.7)."""
    global pool, empty_pool, pooled
    if not hasattr(torch.cuda, "use_mem_pool"):
        return False
    pool, empty_pool = torch.cuda.MemPool(), torch.cuda.MemPool()
    try:
        with torch.cuda.use_mem_pool(pool):
            pooled = [torch.empty(n, device="cuda") for n in (10, 300000, 3000000)]
    except RuntimeError as e:
        if "expandable_segments" not in str(e):
            raise
        return False
    del pooled[2]                   # a private pool's free block
    with torch.cuda.use_mem_pool(empty_pool):
        gone = torch.empty(5000000, device="cuda")
    del gone                        # a private pool's segment with nothing allocated in it
    return True


mem_pooled = mem_pools()
if not mem_pooled:    # a CUDA graph's private pool, filled as cudagraph trees do, without a capture
    pool_stream, pool = torch.cuda.Stream(), torch.cuda.graph_pool_handle()
    with torch.cuda.stream(pool_stream):
        torch._C._cuda_beginAllocateCurrentStreamToPool(0, pool)
        pooled = [torch.empty(n, device="cuda") for n in (10, 300000, 3000000)]
        try:
            torch._C._cuda_endAllocateCurrentStreamToPool(0, pool)
        except TypeError:           # 2.1 takes the device only
            torch._C._cuda_endAllocateCurrentStreamToPool(0)
    del pooled[2]
metadata = "--trace-entries" in sys.argv and hasattr(torch.cuda.memory, "_set_memory_metadata")
if metadata:
    torch.cuda.memory._set_memory_metadata("shared with the side stream, then freed")
shared = torch.empty(50000, device="cuda")
shared.record_stream(side)          # used on the side stream too...
del shared                          # ...so freeing waits for its event (last: a malloc would
                                    # process the event)
if metadata:
    torch.cuda.memory._set_memory_metadata("")
snap = torch.cuda.memory._snapshot()
if "--snapshot-to" in sys.argv:
    import pickle
    with open(arg("--snapshot-to"), "wb") as f:
        pickle.dump(snap, f)
truth = {"pid": os.getpid(), "torch": torch.__version__,
         "reserved": torch.cuda.memory_reserved(), "allocated": torch.cuda.memory_allocated(),
         "segments": [{"address": s["address"], "size": s["total_size"], "pool": s["segment_type"],
                       "pool_id": list(s.get("segment_pool_id", (0, 0))), "stream": s["stream"],
                       "blocks": [[b["address"], b["size"], b["state"]] for b in s["blocks"]]}
                      for s in snap["segments"]],
         "held": {hex(t.data_ptr()): "__main__.history[%d]" % i for i, t in enumerate(history)},
         # the Python object that owns each MemPool's private pool, by its id
         "pools": {"%d,%d" % tuple(p.id): "torch.cuda.MemPool " + name for name, p in
                   (("__main__.pool", globals().get("pool")),
                    ("__main__.empty_pool", globals().get("empty_pool")))
                   if mem_pooled and isinstance(p, getattr(torch.cuda, "MemPool", ()))},
         "unattributed": hex(raw)}
print(json.dumps(truth), flush=True)
print("READY", flush=True)
if "--abort" in sys.argv:
    os.abort()
time.sleep(3600)
