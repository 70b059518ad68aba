"""Scenario for step-boundary tracking: N training steps on the CPU (argv[1]), leaking each
step's loss with its graph into a global list when argv[2] is "leak", then exits. A leaking run
prints, after its first step, what each step leaks by category, as the process sees it: the
storages its loss's graph saved (next_functions, _saved_*) that are no parameter's, gradient's or
momentum buffer's, and the loss's own:

    truth: saved for backward BYTES other tensors BYTES"""
import sys

import torch

from autograd_truth import graph_saved, untyped_storage

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
history = []
leak = len(sys.argv) > 2 and sys.argv[2] == "leak"


def leaked_by_category(loss):
    """(saved for backward, other tensors): the bytes one step's leaked loss holds."""
    known = {untyped_storage(t).data_ptr() for p in model.parameters()
             for t in [p, p.grad] + list(opt.state[p].values()) if isinstance(t, torch.Tensor)}
    saved = {}
    for t in graph_saved([loss]):
        s = untyped_storage(t)
        if s.data_ptr() not in known:
            saved[s.data_ptr()] = s.nbytes()
    own = untyped_storage(loss)
    return sum(saved.values()), 0 if own.data_ptr() in saved else own.nbytes()


for step in range(int(sys.argv[1])):
    x, y = torch.randn(16, 32), torch.randint(0, 4, (16,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if leak:
        history.append(loss)
        if step == 0:
            print("truth: saved for backward %d other tensors %d" % leaked_by_category(loss),
                  flush=True)
    del x, y, loss
