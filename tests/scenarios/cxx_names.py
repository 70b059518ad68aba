"""Scenario: Python objects torch's C++ keeps outside any Python object: the parameter names its
argument parsers intern (a parser is made on its function's first call, so a few functions are
called: add's `alpha`, sum's `keepdim`, and numpy's spelling of it, `keepdims`), the legacy
tensor types with the dtype and layout each keeps (torch.FloatTensor, torch.float32,
torch.strided), a pybind11 class whose instances only the default arguments of bound
functions hold (torch.distributed's AllgatherOptions, in ProcessGroup.allgather's record), the
weak references pybind11 keeps, each to a type whose type infos it caches; where
numpy is installed, the docstring numpy's add_docstring keeps for its C type ndarray, with a
reference of its own and the type's tp_doc pointing at its characters. Prints the truth from
inside, then READY, and waits:
  {"pid", "torch", "objects": {name: [id, outside]}}
where outside is sys.getrefcount less its argument, less the referrers gc.get_referrers finds:
the references no tracked Python object holds (C++'s among them)."""
import gc
import json
import os
import sys
import threading
import weakref

import torch

x = torch.ones(2, 3)
torch.add(x, x, alpha=2)
torch.sum(x, dim=0, keepdim=True)
objects = {"alpha": sys.intern("alpha"), "keepdim": sys.intern("keepdim"),
           "keepdims": sys.intern("keepdims"), "torch.FloatTensor": torch.FloatTensor,
           "torch.float32": torch.float32, "torch.strided": torch.strided,
           "AllgatherOptions": torch._C._distributed_c10d.AllgatherOptions}
try:
    import numpy
    objects["numpy.ndarray.__doc__"] = numpy.ndarray.__dict__["__doc__"]   # the str, not a copy
except ImportError:   # the CUDA venvs have no numpy
    pass
# the weak references pybind11 keeps to the types of its instances whose C++ type infos it
# caches (a bound type, or a Python subclass of one with a metaclass of its own: DTensor's
# Partial, once made), each with a bound C function that drops the cache as its callback,
# released on purpose: no Python object holds them
try:
    from torch.distributed.tensor.placement_types import Partial
    Partial()
except (ImportError, AttributeError, TypeError):   # no such subclass in this release
    pass
tracked = gc.get_objects()
for o in tracked:
    callback = getattr(o, "__callback__", None) if type(o) is weakref.ref else None
    if type(callback).__name__ == "builtin_function_or_method" and isinstance(o(), type) and \
            any(c.__name__ == "pybind11_object" for c in o().__mro__) and \
            not [r for r in gc.get_referrers(o) if r is not tracked and r is not globals()]:
        objects["a weak reference to %s" % o().__name__] = o
del tracked, o, callback
truth = {"pid": os.getpid(), "torch": torch.__version__, "objects": {}}
for name, obj in objects.items():
    # its argument aside, a reference of each referrer: `objects` and the global `obj` among them
    truth["objects"][name] = [id(obj), sys.getrefcount(obj) - 1 - len(gc.get_referrers(obj))]
del obj
print(json.dumps(truth), flush=True)
print("READY", flush=True)
threading.Event().wait()
