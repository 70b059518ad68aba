"""Scenario: real third-party model code, a small GPT-2 from transformers (built from a config,
no weights downloaded) trained with AdamW, keeping a list of training losses (graphs after
backward) and a list of validation losses (graphs with their activations). Prints the same
ground truth as holders.py for model, opt, losses and val_losses, and every loss's graph, then
READY, and waits (or aborts with --abort).

argv: [--abort] [--eval]"""
import gc
import json
import os
import sys
import time
import warnings

import torch
from transformers import GPT2Config, GPT2LMHeadModel

warnings.filterwarnings("ignore")
torch.manual_seed(0)
config = GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=64, n_positions=32, loss_type="ForCausalLM")
model = GPT2LMHeadModel(config)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x, xv = torch.randint(0, 64, (2, 16)), torch.randint(0, 64, (3, 16))
losses, val_losses = [], []
for _ in range(3):
    loss = model(x, labels=x).loss
    loss.backward()
    opt.step()
    opt.zero_grad()
    losses.append(loss)
    val_losses.append(model(xv, labels=xv).loss)
del loss
gc.collect()

from autograd_truth import graph_edges, reachable  # noqa: E402  (tests/scenarios/)

NAMES = ["model", "opt", "losses", "val_losses", "x", "xv"]
truth = {"pid": os.getpid(), "torch": torch.__version__,
         "holders": {n: reachable(globals()[n]) for n in NAMES},
         "edges": {}}
for name in ("losses", "val_losses"):
    for i, t in enumerate(globals()[name]):
        truth["edges"]["%s[%d]" % (name, i)] = graph_edges(t.grad_fn)
del name, i, t
print(json.dumps(truth), flush=True)
print("READY", flush=True)
if "--abort" in sys.argv:
    os.abort()
if "--eval" in sys.argv:   # tests/scenarios/evalpaths.py
    import evalpaths
    evalpaths.serve()
while True:
    time.sleep(1)
