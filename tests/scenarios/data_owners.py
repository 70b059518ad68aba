"""Scenario: storages whose memory another Python object owns, which the storage keeps alive:
torch.from_numpy's array, torch.frombuffer's bytearray, torch.from_dlpack's producer (a numpy
array, kept through DLPack's managed tensor), each also held by a global; and an array only its
storage holds (the global dropped). Without numpy (torch's CUDA wheels do without it), the
bytearray alone, and a bytearray only its storage holds.

Prints one JSON line, then READY:
  {"pid", "torch",
   "owners": [{"name": the global holding the tensor, "storage": its StorageImpl (hex),
               "owner": the owning object's id (hex), "type": its type's name,
               "through": "deleter" or "dlpack",
               "unseen": references to the owner gc.get_referrers does not find (the storage's),
               "global": whether a global holds the owner too}]}"""
import gc
import json
import os
import sys
import time

import torch

try:
    import numpy as np
except ImportError:
    np = None

buffer = bytearray(80000)
from_buffer = torch.frombuffer(buffer, dtype=torch.float32)
if np:
    array = np.arange(100000, dtype=np.float64)
    dlpack_array = np.ones(1000)
    from_numpy = torch.from_numpy(array)
    from_dlpack = torch.from_dlpack(dlpack_array)


def orphan():
    """A tensor whose memory's owner nothing in Python holds, and that owner's id."""
    if np:
        a = np.zeros(5000)
        return torch.from_numpy(a), a
    b = bytearray(4000)
    return torch.frombuffer(b, dtype=torch.uint8), b


only_storage, kept = orphan()
only_storage_owner, only_storage_type = id(kept), type(kept).__name__
del kept


def storage_impl(t):
    """The StorageImpl's address (1.13 has no untyped_storage: its TypedStorage wraps one)."""
    s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()._storage
    return s._cdata


def row(name, owner, through):
    """owner: the object, or the id of one no global holds any more."""
    held = not isinstance(owner, int)
    return {"name": name, "storage": hex(storage_impl(globals()[name])),
            "owner": hex(id(owner) if held else owner),
            "type": type(owner).__name__ if held else only_storage_type, "through": through,
            "global": held,
            # getrefcount's own argument aside, what the collector does not see holding it
            "unseen": sys.getrefcount(owner) - 2 - len(gc.get_referrers(owner)) if held else None}


owners = [row("from_buffer", buffer, "deleter"), row("only_storage", only_storage_owner, "deleter")]
if np:
    owners += [row("from_numpy", array, "deleter"), row("from_dlpack", dlpack_array, "dlpack")]
print(json.dumps({"pid": os.getpid(), "torch": torch.__version__, "owners": owners}), flush=True)
print("READY", flush=True)
time.sleep(3600)
