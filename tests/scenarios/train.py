"""Scenario for docs/gdb.md's recipes, as `python train.py` there: a small CPU training loop that
keeps each step's loss with its graph in a global list (the leak the recipes look for). STEPS
(environment, default 4) steps; with HOLD=1 it then prints READY and waits to be inspected, else
it exits; with HOLD=loop it prints READY first and then trains until killed, a step every 50 ms."""
import os
import time

import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
history = []
forever = os.environ.get("HOLD") == "loop"
if forever:
    print('{"history": 0}', flush=True)
    print("READY", flush=True)
step = 0
while forever or step < int(os.environ.get("STEPS", "4")):
    step += 1
    x, y = torch.randn(16, 32), torch.randint(0, 4, (16,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    history.append(loss)
    del x, y, loss
    if forever:
        time.sleep(0.05)
if os.environ.get("HOLD") == "1":
    print('{"history": %d}' % len(history), flush=True)
    print("READY", flush=True)
    time.sleep(600)
