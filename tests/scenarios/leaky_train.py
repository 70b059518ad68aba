"""The built-in demo: a small CPU training loop with the classic leak. Every step appends the loss
tensor, still attached to its autograd graph, to a global list, so each step's activations stay
alive. Prints its ground truth as one JSON line and READY after the warm-up steps, then keeps
training slowly so the leak goes on growing while it is inspected.

argv: [STEPS_BEFORE_READY] [--pause]   (--pause: SIGSTOP itself after every step, as training.py)"""
import json
import os
import signal
import sys
import time

import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
history = []   # the leak: losses kept with their graphs


def step():
    x = torch.randn(64, 256)
    y = torch.randint(0, 10, (64,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward(retain_graph=True)
    opt.step()
    history.append(loss)


warmup = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 20
for _ in range(warmup):
    step()
print(json.dumps({"pid": os.getpid(), "steps": len(history), "torch": torch.__version__}), flush=True)
print("READY", flush=True)
for _ in range(3600):
    if "--pause" in sys.argv:
        os.kill(os.getpid(), signal.SIGSTOP)
    else:
        time.sleep(0.5)
    step()
