"""Scenario: closures that capture tensors, registered as autograd hooks on graphs that globals
keep, with nothing else holding what they capture: the graph's nodes hold the hooks from C++
(issue 44).

  post     kept losses, each grad_fn with a hook (grad_fn.register_hook) whose closure
           captures a buffer of its own
  pre      a kept loss whose grad_fn has a pre-hook (register_prehook) capturing a buffer
  tensor   a kept loss whose intermediate tensor, since dropped, had a hook
           (Tensor.register_hook) capturing a buffer

Prints one JSON line of ground truth from inside, then READY, and waits:
  {"pid", "holders": {name: [data_ptr of each storage it reaches: by gc.get_referents and the
   graph, and the buffers its hooks captured]}, "freed": {name: bytes}}   what deleting the
   global alone frees: in a fork(), the nbytes of the storages whose StorageWeakRef expired
   after `del` and gc.collect()"""
import gc
import json
import os
import time

import torch

from autograd_truth import freed_in_fork, reachable, storage, storage_objects   # tests/scenarios/

torch.manual_seed(0)
w = torch.ones(64, 64, requires_grad=True)
captured = {"post": [], "pre": [], "tensor": []}   # data_ptrs only: the hooks alone hold them


def buffer(kind):
    t = torch.ones(1 << 16)
    captured[kind].append(t.data_ptr())
    return t


def post_hook(kept):
    return lambda grad_inputs, grad_outputs: kept.sum() and None


def pre_hook(kept):
    return lambda grad_outputs: kept.sum() and None


def tensor_hook(kept):
    return lambda grad: grad + kept.sum() * 0


post = []
for _ in range(3):
    loss = (w * 2).sum()
    loss.grad_fn.register_hook(post_hook(buffer("post")))
    post.append(loss)
pre = (w * 3).sum()
pre.grad_fn.register_prehook(pre_hook(buffer("pre")))
hidden = w * 4
hidden.register_hook(tensor_hook(buffer("tensor")))
tensor = hidden.sum()
del hidden, loss

names = ("post", "pre", "tensor")
truth = {"pid": os.getpid(),
         "holders": {n: sorted(set(reachable(globals()[n])) | set(captured[n])) for n in names}}
# in a fork, what deleting each frees: the storages the global reaches and its hooks' buffers
# (found among every object by their data_ptrs, in the fork: nothing here may hold them)


def buffers(ptrs):
    return {t.data_ptr(): storage(t) for t in gc.get_objects()
            if type(t) is torch.Tensor and t.data_ptr() in ptrs}


truth["freed"] = {n: freed_in_fork(globals(), n, lambda n=n: {
    **storage_objects(globals()[n]), **buffers(set(captured[n]))}) for n in names}
print(json.dumps(truth), flush=True)
print("READY", flush=True)
time.sleep(3600)
