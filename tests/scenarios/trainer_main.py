"""Scenario: a Trainer object in main() holds a model, its AdamW optimizer (with state after a few
steps) and a metrics dict whose loss list leaks: each step appends a validation loss with its
autograd graph. A parameter is reachable through the model's modules and, by fewer steps, through
the optimizer's state keys and param_groups; a user names it through the model. A module global
holds two big tensors: a holder with no accumulation point.

Truth: pid; line: where main() waits; params: {hex id: its name under model (named_parameters)};
exp_avg: {hex id of opt.state[p]['exp_avg']: p's name};
steps: entries of metrics['loss']; loss_freed: bytes deleting metrics['loss'] frees; few_freed:
bytes deleting the global `few` frees; categories: the bytes of the storages of the parameters,
their gradients, the optimizer's state and the losses' saved tensors, each storage counted in
the first of these it is in (on CUDA, the bytes of its allocator block, as the allocator's own
snapshot says); device: where they are.

argv: [--cuda]: all of it on the CUDA device (the simulated one in the tests), and no
loss_freed and few_freed (measured in a fork, which CUDA does not survive); [--steps N]: the
steps run, each leaking one loss (30)."""
import json
import os
import sys
import time

import torch

from autograd_truth import freed_in_fork, graph_saved, storage_objects, untyped_storage

STEPS = int(sys.argv[sys.argv.index("--steps") + 1]) if "--steps" in sys.argv else 30
DEVICE = "cuda" if "--cuda" in sys.argv else "cpu"
torch.set_default_device(DEVICE)
few = [torch.ones(1 << 16), torch.ones(1 << 16)]


class Trainer:
    def __init__(self):
        self.model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(),
                                         torch.nn.Linear(64, 8))
        self.opt = torch.optim.AdamW(self.model.parameters())
        self.metrics = {"loss": []}

    def step(self):
        loss = self.model(torch.randn(32, 64)).pow(2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        val = self.model(torch.randn(128, 64)).pow(2).mean()   # kept with its graph: the leak
        self.metrics["loss"].append(val)


def categories(trainer):
    """As the process sees them: model.parameters(), their .grad, opt.state's values, and the
    tensors the losses' graphs saved (through next_functions)."""
    first = {}   # data_ptr -> (category, nbytes)
    # on CUDA a storage holds its allocator block, as the allocator's own snapshot sizes it
    blocks = {b["address"]: b["size"] for s in torch.cuda.memory._snapshot()["segments"]
              for b in s["blocks"]} if DEVICE == "cuda" else {}

    def put(t, category):
        if t.device.type != DEVICE:   # AdamW's steps stay on the CPU
            return
        s = untyped_storage(t)
        if s.data_ptr() not in first or category < first[s.data_ptr()][0]:
            first[s.data_ptr()] = (category, blocks.get(s.data_ptr(), s.nbytes()))

    params = list(trainer.model.parameters())
    for p in params:
        put(p, 0)
        if p.grad is not None:
            put(p.grad, 1)
    for state in trainer.opt.state.values():
        for v in state.values():
            if isinstance(v, torch.Tensor):
                put(v, 2)
    for t in graph_saved(trainer.metrics["loss"]):
        put(t, 3)
    names = ["parameters", "gradients", "optimizer state", "saved for backward"]
    return {name: sum(n for c, n in first.values() if c == k) for k, name in enumerate(names)}


def main():
    trainer = Trainer()
    for _ in range(STEPS):
        trainer.step()
    line = [n + 1 for n, text in enumerate(open(__file__).read().splitlines())
            if text.strip() == "time.sleep(1)"][0]
    print(json.dumps({
        "pid": os.getpid(), "line": line,
        "params": {hex(id(p)): name for name, p in trainer.model.named_parameters()},
        "exp_avg": {hex(id(trainer.opt.state[p]["exp_avg"])): name
                    for name, p in trainer.model.named_parameters()},
        "steps": len(trainer.metrics["loss"]), "categories": categories(trainer),
        "device": "cuda:0" if DEVICE == "cuda" else "cpu",
        "loss_freed": DEVICE == "cpu" and freed_in_fork(trainer.metrics, "loss",
                                                        lambda: storage_objects(trainer)),
        "few_freed": DEVICE == "cpu" and freed_in_fork(globals(), "few",
                                                       lambda: storage_objects(few))}),
          flush=True)
    print("READY", flush=True)
    while True:
        time.sleep(1)


main()
