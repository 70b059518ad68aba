"""Scenario: a function run through cudagraph trees, the machinery torch.compile's
mode="reduce-overhead" uses (torch._inductor.cudagraph_trees, called here without compiling: the
simulated device has no Triton). Its tree manager keeps one private pool for every graph it
records, and a torch.cuda.CUDAGraph of its own captured into it to keep the pool alive. Prints
its truth, then READY, and serves requests on stdin.

Truth: pid; pool: the tree manager's pool id (cuda_graphs_thread_pool); segments: the addresses
of that pool's segments, as the allocator's own snapshot shows them.
Requests: {"eval": EXPR} evaluates a path in the job's namespace; the answer is {"pool": its
pool() where it is a torch.cuda.CUDAGraph, else null}."""
import json
import os
import sys

import torch
from torch._inductor import cudagraph_trees

weight = torch.ones(1 << 20, device="cuda")


def model(inputs):
    x, = inputs
    inputs.clear()   # cudagraph trees take their inputs' ownership
    return ((x * weight).relu() + 1,)


run = cudagraph_trees.cudagraphify_impl(
    model, [torch.ones(1 << 20, device="cuda")], (), device_index=0, is_backward=False,
    is_inference=True, stack_traces=None, constants=(), placeholders=(), mutated_input_idxs=())
for _ in range(3):
    out = run([torch.ones(1 << 20, device="cuda")])
manager = cudagraph_trees.get_container(0).get_tree_manager()
pool = list(manager.cuda_graphs_thread_pool)
print(json.dumps({"pid": os.getpid(), "torch": torch.__version__, "pool": pool,
                  "segments": [s["address"] for s in torch.cuda.memory._snapshot()["segments"]
                               if list(s.get("segment_pool_id", (0, 0))) == pool]}),
      flush=True)
print("READY", flush=True)
for line in sys.stdin:
    held = eval(json.loads(line)["eval"], {"torch": torch, "__main__": sys.modules["__main__"]})
    print(json.dumps({"pool": list(held.pool()) if isinstance(held, torch.cuda.CUDAGraph)
                      else None}), flush=True)
