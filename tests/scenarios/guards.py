"""Scenario: the guards torch.compile builds in C++ (torch 2.6+; issue 44). `step` is compiled
once, reading a module (a dict guard manager), globals of several kinds and one list passed twice
(an aliasing guard, an epilogue guard where the release makes one), and `shaped` with dynamic
shapes (its shape guard an epilogue guard where the aliasing guard is not); their compiled
wrappers are dropped, so that only the code objects' caches keep the guards.

Prints one JSON line of ground truth from inside, then READY, and waits:
  {"pid", "torch",
   "guards": [{"function", "kind": the leaf guard's class,
               "code_parts": id of the list of its code parts,
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


def shaped(x):
    return x * 2 if x.shape[0] > 3 else x + 1


compiled = torch.compile(step, backend="eager", dynamic=False)
compiled(torch.randn(4), 3, SHARED, SHARED)
compiled = torch.compile(shaped, backend="eager", dynamic=True)
compiled(torch.randn(8))
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
for function in (step, shaped):
    for entry in eval_frame._debug_get_cache_entry_list(function.__code__):
        wrapper = entry.guard_manager
        for root in (wrapper.root, getattr(wrapper, "diff_guard_root", None)):
            if root is not None:
                guards += [(function.__name__, g) for g in
                           leaf_guards(root, []) + list(root.get_epilogue_lambda_guards())]
del function, entry, wrapper, root
parts = {}
for name, g in guards:
    parts.setdefault(id(g.verbose_code_parts()), (name, type(g).__name__, g.verbose_code_parts()))
del guards, name, g
truth = []
for name, kind, lst in parts.values():
    # less getrefcount's argument: every other reference (parts' tuple, the name lst in this
    # module's dict) is from a referrer gc knows
    truth.append({"function": name, "kind": kind, "code_parts": id(lst),
                  "hidden": sys.getrefcount(lst) - 1 - len(gc.get_referrers(lst))})
del name, kind, lst
parts.clear()
print(json.dumps({"pid": os.getpid(), "torch": torch.__version__, "guards": truth}), flush=True)
print("READY", flush=True)
while True:
    time.sleep(1)
