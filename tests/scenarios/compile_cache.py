"""Scenario: torch.compile's cache, which Dynamo keeps in C++ off the code objects it compiled
(issue 44): `scale`, a global function, compiled twice (float32 and float64: two cache entries),
whose compiled wrapper is dropped, so that only scale.__code__'s cache keeps what compiling made.

Prints one JSON line of ground truth from inside, then READY, and waits:
  {"pid", "torch",
   "entries": [{attribute: id} of each cache entry, from torch's own
               _debug_get_cache_entry_list(scale.__code__): its guards (check_fn before 2.6,
               guard_manager after), the code Dynamo made, and where torch shows them, the
               backend and compile id],
   "hidden": {id: the references to it that no object gc knows holds:
              sys.getrefcount() - 1 - len(gc.get_referrers())}}"""
import gc
import json
import os
import sys
import time

import torch
from torch._C._dynamo import eval_frame


def scale(x):
    return x * 2 + 1


compiled = torch.compile(scale, backend="eager", dynamic=False)
compiled(torch.randn(8))
compiled(torch.randn(8, dtype=torch.float64))
del compiled
gc.collect()

ATTRS = ("check_fn", "guard_manager", "code", "backend", "compile_id")
entries = []
for e in eval_frame._debug_get_cache_entry_list(scale.__code__):
    if isinstance(e, tuple):   # 2.1: (check_fn, code)
        e = dict(zip(("check_fn", "code"), e))
    else:
        e = {a: getattr(e, a) for a in ATTRS if hasattr(e, a)}
    entries.append(e)
ids = [{a: id(o) for a, o in e.items() if o is not None} for e in entries]
objects = list({id(o): o for e in entries for o in e.values() if o is not None}.values())
del e, entries
hidden = {}
for o in objects:
    # less getrefcount's argument, this loop's name and the list objects
    referrers = [r for r in gc.get_referrers(o) if r is not objects and r is not globals()]
    hidden[str(id(o))] = sys.getrefcount(o) - 3 - len(referrers)
truth = {"pid": os.getpid(), "torch": torch.__version__, "entries": ids, "hidden": hidden}
del objects, o, referrers
print(json.dumps(truth), flush=True)
print("READY", flush=True)
while True:
    time.sleep(1)
