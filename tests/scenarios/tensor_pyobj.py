"""Scenario: references C++ holds to the Python objects of tensors, storages and autograd nodes
(issue 41's torch rule). `held` is a .grad that Python and C++ (its AutogradMeta) both hold;
`resurrected` is a .grad whose only Python reference was dropped, so that its Python object lives
on, held by C++ alone (up to torch 2.9 the TensorImpl takes ownership of it; from 2.10 it holds a
reference whenever C++ holds the tensor besides the Python object). `storage_held` and
`storage_resurrected` are the same for a tensor's torch.UntypedStorage object (kept by its
StorageImpl from 2.4), `grad_fn_held` and `grad_fn_resurrected` for a grad_fn object (kept by its
node from 2.13). A resurrected object is listed only where the process shows it was kept: asked
again, torch returns the same object.

Prints one JSON line, then READY, and waits:
  {"pid", "torch", "tensors": {name: {"address": hex, "outside": n}}}
  where outside is the process's own count of the references no Python object holds: the
  object's reference count (sys.getrefcount less its argument, or for a resurrected one, read off
  its header: taking it would change it) less the referrers gc.get_referrers finds."""
import ctypes
import gc
import json
import os
import sys
import threading
import weakref

import torch

from autograd_truth import untyped_storage   # tests/scenarios/


def outside(o):
    return sys.getrefcount(o) - 2 - len(gc.get_referrers(o))   # less its argument and o's


def resurrected(o_id):
    """Nothing in Python refers to it: its whole count is held from outside."""
    return {"address": hex(o_id), "outside": ctypes.c_ssize_t.from_address(o_id).value}


x = torch.randn(3, requires_grad=True)
(x * 2).sum().backward()
held = x.grad
y = torch.randn(3, requires_grad=True)
(y * 3).sum().backward()
grad = y.grad
grad_id = id(grad)
del grad

kept = torch.randn(4)
storage_held = untyped_storage(kept)
other = torch.randn(5)
first = weakref.ref(untyped_storage(other))   # the object outlives its last Python reference?
storage_kept = first() is not None
storage_id = id(first())

leaf = torch.randn(6, requires_grad=True)
out = leaf * 2
grad_fn_held = out.grad_fn
out2, out3 = leaf * 3, leaf * 4
grad_fn_id = id(out2.grad_fn)   # grad_fn objects take no weak reference: a freed one's memory
placeholder = out3.grad_fn      # goes to the next one made, so asking again gives its id back
grad_fn_kept = id(out2.grad_fn) == grad_fn_id   # only if it was kept
gc.collect()
gc.disable()

truth = {"held": {"address": hex(id(held)), "outside": outside(held)},
         "resurrected": resurrected(grad_id),
         "storage_held": {"address": hex(id(storage_held)), "outside": outside(storage_held)},
         "grad_fn_held": {"address": hex(id(grad_fn_held)), "outside": outside(grad_fn_held)}}
if storage_kept:
    truth["storage_resurrected"] = resurrected(storage_id)
if grad_fn_kept:
    truth["grad_fn_resurrected"] = resurrected(grad_fn_id)
print(json.dumps({"pid": os.getpid(), "torch": torch.__version__, "tensors": truth}), flush=True)
print("READY", flush=True)
threading.Event().wait()
