"""Scenario: memory held through the Python objects that wrap C++ ones, with no tensor of the
job's own left to hold it (issue 41: the books balance, and nothing is left out):

  fns      grad_fn objects kept after their outputs were dropped: each keeps its node, which
           keeps the tensors it saved and its leaf (through AccumulateGrad)
  chain    one grad_fn object of a longer graph (sum of exp of a product)
  ctxs     custom Functions' ctx objects kept after their outputs were dropped: from torch 2.13
           each owns its node (with the leaf's AccumulateGrad) and the tensor it saved; up to
           2.12 the node released them when it went
  stores   torch.UntypedStorage objects whose tensors were dropped: they alone hold the bytes
  keep, ks a tensor and its storage's object: each reaches the storage, neither retains it

Prints one JSON line of ground truth from inside, then READY, and waits:
  {"pid", "holders": {name: [data_ptr of each storage it reaches, by gc.get_referents]},
   "freed": {name: bytes}}   what deleting the global alone frees: in a fork(), the nbytes of the
                             storages whose StorageWeakRef expired after `del` and gc.collect()"""
import gc
import json
import os
import time

import torch

from autograd_truth import (freed_in_fork, reachable,   # tests/scenarios/
                            storage_objects, untyped_storage)

torch.manual_seed(0)


class Twice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x * 2)
        return x * 3

    @staticmethod
    def backward(ctx, grad):
        return grad * 3


fns = [(torch.randn(100 + i, requires_grad=True) * torch.randn(100 + i)).grad_fn for i in range(3)]
ctxs = [Twice.apply(torch.randn(30 + i, requires_grad=True)).grad_fn for i in range(2)]
chain = (torch.randn(50, requires_grad=True) * torch.randn(50)).exp().sum().grad_fn
stores = [untyped_storage(torch.ones(2000 + i)) for i in range(2)]
keep = torch.ones(500)
ks = untyped_storage(keep)
NAMES = ["fns", "chain", "ctxs", "stores", "keep", "ks"]


def reached_storages():
    """{data_ptr: storage} of every storage the globals reach."""
    return {p: s for name in NAMES for p, s in storage_objects(globals()[name]).items()}


gc.collect()
truth = {"pid": os.getpid(), "holders": {n: reachable(globals()[n]) for n in NAMES},
         "freed": {n: freed_in_fork(globals(), n, reached_storages) for n in NAMES}}
print(json.dumps(truth), flush=True)
print("READY", flush=True)
while True:
    time.sleep(1)
