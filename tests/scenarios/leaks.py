"""Scenario: the ways training jobs leak tensors, each planted once, on the CPU. Prints one JSON
line with every planted tensor's address (id of the Python object, or data_ptr for tensors only
C++ holds) and the path culeak must print for it, the bytes of the storages it can enumerate by
device (storage_bytes), then READY, and waits (or aborts with --abort).

A path may be given as a regular expression ("re:" prefix) where it contains an address.
With --cuda every tensor lives on CUDA (the simulated device in the tests), and the ground truth
also holds what torch.cuda.memory._snapshot() says of the caching allocator.

argv: [--cuda] [--abort]"""
import ctypes
import functools
import gc
import json
import os
import re
import sys
import threading
import time

import torch
from autograd_truth import storages, tensor_fields   # tests/scenarios/

gc.disable()   # keeps the planted reference cycle uncollected
DEV = "cuda" if "--cuda" in sys.argv else "cpu"
torch.manual_seed(0)
truth = {"pid": os.getpid(), "torch": torch.__version__, "tensors": {}}


def plant(name, tensor, path, by="python"):
    truth["tensors"][name] = dict(tensor_fields(tensor), path=path, held_by=by)


# 1. tensors accumulated in a global list
history = [torch.full((4,), float(i), device=DEV) for i in range(20)]
plant("history", history[17], "__main__.history[17]")

# a view: shape, strides and offset differ from its storage's
view = torch.arange(24, dtype=torch.float64, device=DEV).reshape(2, 3, 4)[:, 1:, :]
plant("view", view, "__main__.view")

# 2. loss accumulated with its graph: the activation saved by the graph stays alive
w_total = torch.nn.Parameter(torch.ones(3, device=DEV))
total_loss = 0
for step in range(2):
    act = torch.full((64,), 2.0, device=DEV) * w_total.sum()   # act lives on only inside the graph
    total_loss = total_loss + (act * act).sum()
del act, step
truth["autograd_root"] = "__main__.total_loss.grad_fn"

# 3. an exception and its traceback kept in a variable
def failing_step():
    activations = torch.zeros(8, device=DEV)
    raise RuntimeError("CUDA out of memory (simulated)")


try:
    failing_step()
except RuntimeError as e:
    saved_exc = e
plant("traceback", saved_exc.__traceback__.tb_next.tb_frame.f_locals["activations"],
      "__main__.saved_exc.__traceback__.tb_next.tb_frame.f_locals['activations']")

# 4. lru_cache on a method holds self (and self's tensors) after the model is gone
class Featurizer:
    def __init__(self):
        self.weight = torch.ones(16, device=DEV)

    @functools.lru_cache(maxsize=None)
    def features(self, n):
        return n


featurizer = Featurizer()
featurizer.features(3)
# the cache's first key, a tuple starting with self, by its position: `[*d][0]`
plant("lru_cache", featurizer.weight,
      "re:^\\[\\*__main__\\.Featurizer\\.features\\.<lru_cache>\\]\\[0\\]\\[0\\]\\.weight$")
del featurizer

# 5. optimizer state of parameters whose module was deleted
model = torch.nn.Linear(4, 2).to(DEV)
opt = torch.optim.Adam(model.parameters())
model(torch.ones(1, 4, device=DEV)).sum().backward()
opt.step()
# the key (a parameter only the optimizer still has) by its own path, not its address
plant("exp_avg", opt.state[model.weight]["exp_avg"],
      "__main__.opt.state[__main__.opt.param_groups[0]['params'][%d]]['exp_avg']"
      % next(i for i, p in enumerate(opt.param_groups[0]["params"]) if p is model.weight))
del model

# 6. a tensor captured by a lambda registered as a module hook
def shape_logger(captured):
    return lambda module, inputs, output: captured.shape


hooked = torch.nn.ReLU()
hooked.register_forward_hook(shape_logger(torch.ones(5, device=DEV)))
plant("hook", next(iter(hooked._forward_hooks.values())).__closure__[0].cell_contents,
      "re:^__main__\\.hooked\\._forward_hooks\\[\\d+\\]\\.__closure__\\[0\\]\\.cell_contents$")

# 7. a reference cycle awaiting collection
class Node:
    pass


cycle = Node()
cycle.me = cycle
cycle.payload = torch.ones(6, device=DEV)
plant("cycle", cycle.payload, None, by="garbage")   # gc.collect() would free it
del cycle

# 8. a generator suspended with a tensor local
def batches():
    x = torch.ones(7, device=DEV)
    yield x.shape


gen = batches()
next(gen)
plant("generator", gen.gi_frame.f_locals["x"], "__main__.gen.gi_frame.f_locals['x']")

# 9. an output history dict like IPython's Out
Out = {1: torch.ones(9, device=DEV), 2: torch.ones(10, device=DEV)}
plant("out_history", Out[2], "__main__.Out[2]")

# 10. a stale alias after del model
net = torch.nn.Linear(3, 3).to(DEV)
stale_weight = net.weight
del net
plant("stale_alias", stale_weight, "__main__.stale_weight")

# 11. a tensor local in a non-main thread's frame
ready = threading.Event()


def worker_body():
    buf = torch.ones(11, device=DEV)
    plant("thread_local", buf, "re:^<thread worker: worker_body\\(\\) at leaks\\.py:\\d+>\\.buf$")
    ready.set()
    time.sleep(3600)


threading.Thread(target=worker_body, name="worker", daemon=True).start()
ready.wait()

# 12. a tensor a global holds that a list C holds too (one Py_IncRef left over): no holder
# retains it, and the summary counts it held from C, not shared
leaked = [torch.ones(12, device=DEV)]
ctypes.pythonapi.Py_IncRef(ctypes.py_object(leaked))
also_held = leaked[0]
del leaked
plant("from_c", also_held, "__main__.also_held")
if DEV == "cuda":
    snap = torch.cuda.memory._snapshot()
    truth.update(reserved=torch.cuda.memory_reserved(), allocated=torch.cuda.memory_allocated(),
                 segments=[{"address": g["address"], "size": g["total_size"], "pool": g["segment_type"],
                            "pool_id": list(g["segment_pool_id"]), "stream": g["stream"],
                            "blocks": [[b["address"], b["size"], b["state"]] for b in g["blocks"]]}
                           for g in snap["segments"]])
# every storage the process can enumerate: the tensors gc tracks, and what their .grad, ._base
# and autograd graphs reach (what `summary`'s accounting must sum to on the CPU)
truth["storage_bytes"] = {}
for nbytes, device in storages([o for o in gc.get_objects()
                                if isinstance(o, torch.Tensor)]).values():
    truth["storage_bytes"][device] = truth["storage_bytes"].get(device, 0) + nbytes
print(json.dumps(truth), flush=True)
print("READY", flush=True)
if "--abort" in sys.argv:
    os.abort()
time.sleep(3600)
