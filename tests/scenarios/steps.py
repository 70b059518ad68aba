"""Scenario for step-boundary tracking: N training steps on the CPU (argv[1]), leaking each
step's loss with its graph into a global list when argv[2] is "leak", then exits."""
import sys

import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
history = []
leak = len(sys.argv) > 2 and sys.argv[2] == "leak"
for _ in range(int(sys.argv[1])):
    x, y = torch.randn(16, 32), torch.randint(0, 4, (16,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if leak:
        history.append(loss)
    del x, y, loss
