"""Scenario: the guards torch.compile builds in C++ (torch 2.6+; issue 44). `step` is compiled
once, reading a module (a dict guard manager), globals of several kinds and one list passed twice
(an aliasing guard, an epilogue guard where the release makes one); its compiled wrapper is
dropped, so that only step.__code__'s cache keeps the guards.

Prints one JSON line of ground truth from inside, then READY, and waits:
  {"pid", "torch",
   "guards": [{"kind": the leaf guard's class, "code_parts": id of the list of its code parts,
               "hidden": the references to that list no object gc knows holds}] of every leaf
              guard of the cache entry's trees (`root`, and `diff_guard_root` where it is set),
              found through torch's own API (get_leaf_guards, get_accessors, get_child_managers,
              get_key_value_managers, get_epilogue_lambda_guards)}"""
import gc
import json
import os
import sys
import time

import torch
from torch._C._dynamo import eval_frame

if hasattr(torch._dynamo.config, "use_lamba_guard_for_object_aliasing"):
    torch._dynamo.config.use_lamba_guard_for_object_aliasing = True

SCALE = 3.5
CONFIG = {"a": 1}
MODEL = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
SHARED = [1.0]


def step(x, n, a, b):
    return MODEL(x * SCALE * CONFIG["a"] + n) * a[0] * b[0]


compiled = torch.compile(step, backend="eager", dynamic=False)
compiled(torch.randn(4), 3, SHARED, SHARED)
del compiled
gc.collect()


def leaf_guards(mgr, out):
    out += mgr.get_leaf_guards()
    children = list(mgr.get_child_managers())
    if hasattr(mgr, "get_key_value_managers"):
        children += [m for pair in mgr.get_key_value_managers().values() for m in pair if m]
    for child in children:
        leaf_guards(child, out)
    return out


guards = []
for entry in eval_frame._debug_get_cache_entry_list(step.__code__):
    wrapper = entry.guard_manager
    for root in (wrapper.root, getattr(wrapper, "diff_guard_root", None)):
        if root is not None:
            guards += leaf_guards(root, []) + list(root.get_epilogue_lambda_guards())
del entry, wrapper, root
parts = {}
for g in guards:
    parts.setdefault(id(g.verbose_code_parts()), (type(g).__name__, g.verbose_code_parts()))
del guards, g
truth = []
for kind, lst in parts.values():
    # less getrefcount's argument: every other reference (parts' tuple, the name lst in this
    # module's dict) is from a referrer gc knows
    truth.append({"kind": kind, "code_parts": id(lst),
                  "hidden": sys.getrefcount(lst) - 1 - len(gc.get_referrers(lst))})
del kind, lst
parts.clear()
print(json.dumps({"pid": os.getpid(), "torch": torch.__version__, "guards": truth}), flush=True)
print("READY", flush=True)
while True:
    time.sleep(1)
