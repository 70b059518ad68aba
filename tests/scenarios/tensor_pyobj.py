"""Scenario: references C++ holds to tensors' Python objects (issue 41's torch rule). `held` is a
.grad that Python and C++ (its AutogradMeta) both hold; `resurrected` is a .grad whose only
Python reference was dropped, so that its Python object lives on, held by C++ alone (up to torch
2.9 the TensorImpl takes ownership of it; from 2.10 it holds a reference whenever C++ holds the
tensor besides the Python object).

Prints one JSON line, then READY, and waits:
  {"pid", "torch", "tensors": {name: {"address": hex, "outside": n}}}
  where outside is the process's own count of the references no Python object holds: the
  object's reference count (sys.getrefcount less its argument, or for resurrected, read off its
  header: taking it would change it) less the referrers gc.get_referrers finds."""
import ctypes
import gc
import json
import os
import sys
import threading

import torch

x = torch.randn(3, requires_grad=True)
(x * 2).sum().backward()
held = x.grad
y = torch.randn(3, requires_grad=True)
(y * 3).sum().backward()
grad = y.grad
resurrected = id(grad)
del grad
gc.collect()
gc.disable()

truth = {
    "held": {"address": hex(id(held)),
             "outside": sys.getrefcount(held) - 1 - len(gc.get_referrers(held))},
    # nothing in Python refers to it: its whole count is held from outside
    "resurrected": {"address": hex(resurrected),
                    "outside": ctypes.c_ssize_t.from_address(resurrected).value},
}
print(json.dumps({"pid": os.getpid(), "torch": torch.__version__, "tensors": truth}), flush=True)
print("READY", flush=True)
threading.Event().wait()
