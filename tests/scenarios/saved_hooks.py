"""Scenario: validation losses kept with their graphs while torch.autograd.graph's
saved_tensors_hooks replaced each saved activation with a copy (as offloading to host memory
does): the copies are held only by the graphs' SavedVariables' hooks, from C++ (issue 44).

  val_losses  the losses: through their graphs' hooks, every copy
  model       the model, whose weights the graphs saved as copies too

Prints one JSON line of ground truth from inside, then READY, and waits:
  {"pid", "holders": {name: [data_ptr of each storage it reaches, by gc.get_referents and the
   graphs' saved tensors, which the unpack function gives]}, "freed": {name: bytes}}   what
   deleting the global alone frees: in a fork(), the nbytes of the storages whose StorageWeakRef
   expired after `del` and gc.collect(); "categories": {"saved for backward": the bytes of the
   copies pack made, which hold the graphs' saved tensors}}"""
import json
import os
import time

import torch

from autograd_truth import freed_in_fork, reachable, storage, storage_objects   # tests/scenarios/

torch.manual_seed(0)
STEPS = 4
model = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.ReLU(),
                            torch.nn.Linear(1024, 256))


copies = {}   # data_ptr -> nbytes of each copy pack made (not the copy: nothing else holds it)


def pack(t):
    copy = t.detach().clone()   # a copy, as offloading to host memory makes
    copies[storage(copy).data_ptr()] = storage(copy).nbytes()
    return (t.device, copy)


def unpack(packed):
    return packed[1].to(packed[0])


val_losses = []
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    for _ in range(STEPS):
        val_losses.append(model(torch.randn(64, 256)).pow(2).mean())
print(json.dumps({"pid": os.getpid(),
                  "holders": {name: reachable(globals()[name]) for name in ("val_losses", "model")},
                  "freed": {"val_losses": freed_in_fork(globals(), "val_losses",
                                                        lambda: storage_objects(val_losses))},
                  "categories": {"saved for backward": sum(copies.values())}}), flush=True)
print("READY", flush=True)
time.sleep(3600)
