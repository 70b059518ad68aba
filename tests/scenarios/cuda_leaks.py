"""Scenario on the simulated CUDA device (run it through scripts/simgpu-run, or with the
environment harness.simgpu_env() gives): leaks of CUDA tensors, allocated by PyTorch's real
caching allocator. Only elementwise work, which needs no cuBLAS. Prints the ground truth like
leaks.py (same fields), then READY, and waits (or aborts with --abort)."""
import gc
import json
import os
import sys
import time

import torch

assert torch.cuda.is_available(), "not on the simulated device"
gc.disable()
truth = {"pid": os.getpid(), "torch": torch.__version__, "tensors": {},
         "device": torch.cuda.get_device_name(0)}


def plant(name, tensor, path, by="python"):
    truth["tensors"][name] = {
        "address": hex(id(tensor)), "data_ptr": hex(tensor.data_ptr()), "path": path, "held_by": by,
        "shape": list(tensor.shape), "strides": list(tensor.stride()),
        "storage_offset": tensor.storage_offset(), "dtype": str(tensor.dtype).split(".")[-1],
        "nbytes": tensor.untyped_storage().nbytes(), "requires_grad": tensor.requires_grad,
        "type": type(tensor).__name__, "device": str(tensor.device)}


history = [torch.full((256,), float(i), device="cuda") for i in range(8)]
plant("history", history[5], "__main__.history[5]")

w = torch.ones(64, device="cuda", requires_grad=True)
total_loss = 0
for _ in range(2):
    act = torch.full((4096,), 2.0, device="cuda") * w.sum()
    total_loss = total_loss + (act * act).sum()
del act
truth["autograd_root"] = "__main__.total_loss.grad_fn"
truth["saved_nbytes"] = 4096 * 4


def failing_step():
    activations = torch.zeros(1000, device="cuda")
    raise RuntimeError("CUDA out of memory (simulated)")


try:
    failing_step()
except RuntimeError as e:
    saved_exc = e
plant("traceback", saved_exc.__traceback__.tb_next.tb_frame.f_locals["activations"],
      "__main__.saved_exc.__traceback__.tb_next.tb_frame.f_locals['activations']")


def batches():
    x = torch.ones(333, device="cuda")
    yield x.shape


gen = batches()
next(gen)
plant("generator", gen.gi_frame.f_locals["x"], "__main__.gen.gi_frame.f_locals['x']")

Out = {1: torch.ones(100, device="cuda"), 2: torch.ones(200, device="cuda")}
plant("out_history", Out[2], "__main__.Out[2]")

view = torch.arange(24, dtype=torch.float64, device="cuda").reshape(2, 3, 4)[:, 1:, :]
plant("view", view, "__main__.view")

print(json.dumps(truth), flush=True)
print("READY", flush=True)
if "--abort" in sys.argv:
    os.abort()
time.sleep(3600)
