"""Scenario: a whole real heap of a compiled training loop: a small module compiled with
torch.compile (the eager backend: no compiler needed) and trained for three steps with SGD, then
kept with its optimizer while the job waits. Dynamo's caches and C++ guard trees hold much of
what compiling made; tests/integration/test_books.py balances the heap.
Prints {"pid", "torch", "steps"}, then READY, and waits."""
import json
import os
import time

import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
compiled = torch.compile(model, backend="eager")
steps = 0
for _ in range(3):
    optimizer.zero_grad()
    compiled(torch.randn(4, 8)).sum().backward()
    optimizer.step()
    steps += 1
print(json.dumps({"pid": os.getpid(), "torch": torch.__version__, "steps": steps}), flush=True)
print("READY", flush=True)
while True:
    time.sleep(1)
