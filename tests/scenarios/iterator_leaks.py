"""Scenario: training-loop leaks held only through C iterators and dict views (issue 41: culeak
called this memory "reachable from no root"). Each global below is the only holder of its
tensors:

  batches  itertools.cycle(loader) after a pass over it: the cycle saves every batch
  epoch    enumerate(iter(loader)) part-way: the list iterator holds the whole list
  pairs    zip(inputs, targets)
  scaled   map(scale, inputs): the map holds its iterator's list
  kept     filter(None, inputs)
  values   {"w": tensor}.values(): the view holds the dict

Prints one JSON line of ground truth from inside, then READY, and waits:
  {"pid", "holders": {name: [data_ptr of each storage it reaches, by gc.get_referents]},
   "freed": {name: bytes}}   what deleting the global alone frees: in a fork(), the nbytes of the
                             storages whose StorageWeakRef expired after `del` and gc.collect()"""
import gc
import itertools
import json
import os
import time

import torch

from autograd_truth import freed_in_fork, reachable, storage   # tests/scenarios/

torch.manual_seed(0)


def batch(n):
    return torch.randn(n, 64)


loader = [batch(16 + i) for i in range(6)]
batches = itertools.cycle(loader)
for _ in loader:
    next(batches)
del loader, _   # the cycle's saved list and its iterator's list hold the batches now

epoch = enumerate(iter([batch(8 + i) for i in range(4)]))
next(epoch)
pairs = zip([batch(3) for _ in range(3)], [torch.zeros(3, dtype=torch.long) for _ in range(3)])
scaled = map(lambda t: t * 2, [batch(5) for _ in range(2)])
kept = filter(None, [batch(7)])
values = {"w": batch(32)}.values()
NAMES = ["batches", "epoch", "pairs", "scaled", "kept", "values"]


def tensors_storages():
    """{data_ptr: storage} of the storage of every tensor gc tracks."""
    return {storage(o).data_ptr(): storage(o) for o in gc.get_objects()
            if issubclass(type(o), torch.Tensor)}   # type(): no module's __getattr__ runs


gc.collect()
truth = {"pid": os.getpid(), "holders": {n: reachable(globals()[n]) for n in NAMES},
         "freed": {n: freed_in_fork(globals(), n, tensors_storages) for n in NAMES}}
print(json.dumps(truth), flush=True)
print("READY", flush=True)
while True:
    time.sleep(1)
