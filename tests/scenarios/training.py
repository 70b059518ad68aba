"""Scenario: a training loop that does not leak (the control). Prints its ground truth, then READY
after the warm-up, and keeps training on the CPU. With --pause it stops itself (SIGSTOP) after
every step, so each inspection sees the same point of the loop; SIGCONT runs one more step.

argv: [--pause]"""
import json
import os
import signal
import sys
import time

import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
losses = []   # floats, not tensors: nothing of the graph is kept


def step():
    x, y = torch.randn(16, 32), torch.randint(0, 4, (16,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())


for _ in range(5):
    step()
print(json.dumps({"pid": os.getpid(), "torch": torch.__version__}), flush=True)
print("READY", flush=True)
while True:
    if "--pause" in sys.argv:
        os.kill(os.getpid(), signal.SIGSTOP)
    else:
        time.sleep(0.2)
    step()
