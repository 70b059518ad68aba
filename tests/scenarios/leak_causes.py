"""Scenario: one classic cause of a training-memory leak, planted big enough to dominate, for the
leak report. Prints one JSON line with the global that leaks (what the report's first holder must
be), then READY, and waits.

argv: CAUSE [--cuda], CAUSE one of loss-with-graph, accumulated-loss, output-list, cache, traceback, hook-closure,
      optimizer-of-deleted-module, out-history; --cuda: everything on CUDA (the simulated device
      in the tests)"""
import gc
import json
import os
import sys
import time

import torch

torch.manual_seed(0)
CAUSE = sys.argv[1]
DEV = "cuda" if "--cuda" in sys.argv else "cpu"
model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64)).to(DEV)
x = torch.randn(1024, 64, device=DEV)


def steps(n=20):
    return range(n)


if CAUSE == "loss-with-graph":           # losses kept with their graphs (no .item())
    losses = [model(x).pow(2).mean() for _ in steps()]
    leak = "losses"
elif CAUSE == "accumulated-loss":      # total_loss += loss: one graph thousands of nodes deep
    total_loss = 0
    for _ in steps(3000):
        total_loss = total_loss + model(x[:16]).pow(2).mean()
    leak = "total_loss"
elif CAUSE == "output-list":             # every step's outputs kept
    outputs = [model(x).detach() for _ in steps()]
    leak = "outputs"
elif CAUSE == "cache":                   # a memo that never evicts
    cache = {}
    for i in steps():
        cache[i] = model(x + i).detach()
    leak = "cache"
elif CAUSE == "traceback":               # an exception kept with its frames' activations
    def forward_that_fails():
        activations = [model(x) for _ in steps()]
        raise RuntimeError("out of memory", len(activations))
    try:
        forward_that_fails()
    except RuntimeError as e:
        last_error = e
    leak = "last_error"
elif CAUSE == "hook-closure":            # a forward hook whose closure keeps every output
    def make_hook():
        seen = []

        def hook(module, inputs, output):
            seen.append(output.detach())
        return hook
    model.register_forward_hook(make_hook())
    for _ in steps():
        model(x)
    leak = "model"
elif CAUSE == "optimizer-of-deleted-module":   # Adam's state outlives the module it optimised
    big = torch.nn.Linear(1024, 1024).to(DEV)
    opt = torch.optim.Adam(big.parameters())
    big(torch.randn(4, 1024, device=DEV)).sum().backward()
    opt.step()
    del big
    leak = "opt"
elif CAUSE == "out-history":             # IPython's Out: every cell's result
    Out = {}
    for n in range(1, 21):
        Out[n] = model(x).detach()
    leak = "Out"
else:
    raise SystemExit("unknown cause %r" % CAUSE)

gc.collect()
print(json.dumps({"pid": os.getpid(), "cause": CAUSE, "leak": "__main__." + leak}), flush=True)
print("READY", flush=True)
while True:
    time.sleep(1)
