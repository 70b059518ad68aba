"""Scenario: a training job with several leaks at once, for the holder model. Every holder is a
global of __main__. Prints one JSON line of ground truth seen from inside, then READY, and waits
(or aborts with --abort):

  holders: per global name, the data_ptr of every storage reachable from it, found by walking
           gc.get_referents and, for tensors, grad_fn.next_functions, the nodes' _saved_*
           tensors, AccumulateGrad.variable, .grad and ._base (module dicts are roots of their
           own, so the walk stops there, as culeak's does)
  edges:   per global holding a graph, every node as {class, next: [indices], saved: [data_ptrs]}
           in breadth-first order from its grad_fn
  grad_object: the address of a parameter's .grad object that nothing in Python refers to any
           more (it lives on because its C++ tensor does)

With --delete NAME the job instead deletes that one global after building the same state, runs
the collector, and prints {"freed": bytes} by torch.cuda.memory_allocated(): what dropping that
holder alone frees (the retained bytes culeak must report). The state is deterministic, so a fresh
run per holder gives the numbers for the inspected one.

With --eval, it answers one request of tests/scenarios/evalpaths.py on stdin: the paths culeak
printed, evaluated in the process.

With --small-heap (tests/evidence/make.py), the truth also holds, for a few top-level tensors, what
torch says of each (tensors: shape, strides, ...), and once it is printed every module but
__main__, sys and builtins leaves sys.modules, so that a short walk from __main__ holds them all.

argv: [--cuda] [--order train-first|val-first] [--delete NAME] [--abort] [--eval] [--small-heap]"""
import gc
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

DEV = "cuda" if "--cuda" in sys.argv else "cpu"
ORDER = sys.argv[sys.argv.index("--order") + 1] if "--order" in sys.argv else "train-first"
torch.manual_seed(0)


def mlp():
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10)).to(DEV)


model = mlp()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
x, y = torch.randn(16, 32, device=DEV), torch.randint(0, 10, (16,), device=DEV)
xv, yv = torch.randn(48, 32, device=DEV), torch.randint(0, 10, (48,), device=DEV)


def train_leak():
    """total_loss += loss after backward(): the graph's saved tensors are freed, its nodes not."""
    global total_loss
    total_loss = 0
    for _ in range(3):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        total_loss = total_loss + loss


def val_leak():
    """A validation loss accumulated without no_grad: every graph and its activations stay."""
    global val_total
    val_total = 0
    for _ in range(3):
        val_total = val_total + F.cross_entropy(model(xv), yv)


for step in ((train_leak, val_leak) if ORDER == "train-first" else (val_leak, train_leak)):
    step()

# a list of losses that still carry their graphs
losses = [F.cross_entropy(model(x[i:i + 4]), y[i:i + 4]) for i in range(0, 16, 4)]

# a cache of model outputs
cache = {"k%d" % i: model(xv[i:i + 8]).detach() for i in range(0, 48, 8)}


# a traceback kept in a variable: the failing frame's activations stay alive
def failing_step():
    activations = torch.ones(1000, device=DEV)
    raise RuntimeError("out of memory (simulated)", activations.shape)


try:
    failing_step()
except RuntimeError as e:
    last_error = e

# an optimizer whose module was deleted: its parameters and momentum live on only through it
orphan = mlp()
orphan_opt = torch.optim.SGD(orphan.parameters(), lr=0.1, momentum=0.9)
F.cross_entropy(orphan(x), y).backward()
orphan_opt.step()
del orphan

# DDP-style gradient buckets: one flat buffer, each parameter's .grad a view into it
ddp_model = mlp()
params = list(ddp_model.parameters())
bucket = torch.zeros(sum(p.numel() for p in params), device=DEV)
offset = 0
for p in params:
    p.grad = bucket[offset:offset + p.numel()].view_as(p)
    offset += p.numel()
del p, params, offset

# a custom autograd.Function: its ctx keeps the saved tensor
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        ctx.save_for_backward(t)
        return t * t

    @staticmethod
    def backward(ctx, g):
        (t,) = ctx.saved_tensors
        return 2 * t * g


w_custom = torch.ones(256, device=DEV, requires_grad=True)
custom = Square.apply(w_custom * 3).sum()

# a graph kept after backward(retain_graph=True): its saved tensors stay
retained_graph = F.cross_entropy(model(x), y)
retained_graph.backward(retain_graph=True)

# an in-place op on a non-leaf: the graph records it (CopySlices / AddBackward0 in place)
inplace = model(x) * 2
inplace.add_(1)
inplace[0].mul_(3)
inplace_loss = inplace.sum()

# activation checkpointing: the checkpointed segment saves its inputs, not its activations
import torch.utils.checkpoint  # noqa: E402
ckpt_out = torch.utils.checkpoint.checkpoint(model, x, use_reentrant=False).sum()

# one tensor, two names: neither retains it, both reach it
shared_a = torch.zeros(2048, device=DEV)
shared_b = shared_a

# a parameter's .grad read from Python once: its Python object lives on, kept by the C++ tensor
grad_object = hex(id(model[0].weight.grad))

del step
gc.collect()
if DEV == "cuda":
    torch.cuda.synchronize()

if "--delete" in sys.argv:
    name = sys.argv[sys.argv.index("--delete") + 1]
    before = torch.cuda.memory_allocated()
    del globals()[name]
    gc.collect()
    print(json.dumps({"freed": before - torch.cuda.memory_allocated()}), flush=True)
    sys.exit(0)


# ---- ground truth from inside ----

from autograd_truth import graph_edges, reachable, tensor_fields  # noqa: E402  (tests/scenarios/)

NAMES = ["model", "opt", "total_loss", "val_total", "losses", "cache", "last_error", "orphan_opt",
         "ddp_model", "bucket", "custom", "w_custom", "shared_a", "shared_b", "x", "y", "xv", "yv",
         "retained_graph", "inplace", "inplace_loss", "ckpt_out"]
GRAPHS = ["total_loss", "val_total", "custom", "retained_graph", "inplace_loss", "ckpt_out"]
# A checkpointed graph's SavedVariables hold their data through saved-tensor hooks; before 2.13
# Python can only unpack them, which recomputes new tensors: no inside view to compare with.
if not hasattr(getattr(torch._C._autograd, "SavedTensor", None), "data"):
    NAMES.remove("ckpt_out")
    GRAPHS.remove("ckpt_out")
truth = {"pid": os.getpid(), "torch": torch.__version__, "order": ORDER,
         "grad_object": grad_object,
         "holders": {n: reachable(globals()[n]) for n in NAMES},
         "edges": {n: graph_edges(globals()[n].grad_fn) for n in GRAPHS}}
truth["edges"]["losses[0]"] = graph_edges(losses[0].grad_fn)
if "ckpt_out" in NAMES:
    # Its SavedVariables' hooks (C++) hold checkpointing's unpack function, whose frame keeps the
    # recomputation's inputs and the RNG state: what the graph holds that only C++ leads to. The
    # live frames, found among every object, are what they hold.
    frames = [o for o in gc.get_objects() if type(o).__name__ == "_CheckpointFrame"]
    truth["holders"]["ckpt_out"] = sorted(set(truth["holders"]["ckpt_out"]) |
                                          set(p for f in frames for p in reachable(f)))
if "--small-heap" in sys.argv:
    # Frozen evidence of the tensor and autograd tables (tests/evidence/make.py): a view and the
    # custom Function's ctx as globals too, so that a walk of a thousand objects from __main__
    # reaches them (the ctx is otherwise found on the GC lists); top-level tensors as torch sees
    # them.
    view = xv[2:, ::3]
    custom_ctx = custom.grad_fn.next_functions[0][0]
    truth["tensors"] = {n: tensor_fields(globals()[n])
                        for n in ("x", "y", "view", "w_custom", "bucket", "custom", "val_total")}
print(json.dumps(truth), flush=True)
if "--small-heap" in sys.argv:
    # the modules left out of sys.modules are no roots: the walk begins with __main__'s globals
    for name in list(sys.modules):
        if name not in ("__main__", "sys", "builtins"):
            del sys.modules[name]
print("READY", flush=True)
if "--abort" in sys.argv:
    os.abort()
if "--eval" in sys.argv:
    import evalpaths
    evalpaths.serve()
while True:
    time.sleep(1)
