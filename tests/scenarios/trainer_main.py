"""Scenario: a Trainer object in main() holds a model, its AdamW optimizer (with state after a few
steps) and a metrics dict whose loss list leaks. A parameter is reachable through the model's
modules and, by fewer steps, through the optimizer's state keys and param_groups; a user names it
through the model.

Truth: pid; line: where main() waits; params: {hex id: its name under model (named_parameters)}.

argv: none"""
import json
import os
import time

import torch


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
        self.metrics["loss"].append(loss)


def main():
    trainer = Trainer()
    for _ in range(3):
        trainer.step()
    line = [n + 1 for n, text in enumerate(open(__file__).read().splitlines())
            if text.strip() == "time.sleep(1)"][0]
    print(json.dumps({"pid": os.getpid(), "line": line,
                      "params": {hex(id(p)): name for name, p in trainer.model.named_parameters()}}),
          flush=True)
    print("READY", flush=True)
    while True:
        time.sleep(1)


main()
