"""Scenario: a job that has run matrix products on the CUDA device, so torch's C++ keeps a
cuBLAS workspace for its handle and stream (and, where its build takes that path, a cuBLASLt
one), memory no tensor accounts for. Prints its truth, then READY, and waits.

Truth: pid; handle: torch.cuda.current_blas_handle(); stream: the current stream; workspaces:
the blocks (address: size) that the products allocated and no tensor holds, as the allocator's
own snapshot shows them before and after."""
import json
import os
import time

import torch


def allocated():
    return {b["address"]: b["size"] for s in torch.cuda.memory._snapshot()["segments"]
            for b in s["blocks"] if b["state"] == "active_allocated"}


a = torch.ones(64, 64, device="cuda")
bias = torch.ones(64, device="cuda")
before = allocated()
product = a @ a
linear = torch.nn.functional.linear(a, a, bias)
torch.cuda.synchronize()
tensors = {t.untyped_storage().data_ptr() for t in (product, linear)}
print(json.dumps({"pid": os.getpid(), "handle": torch.cuda.current_blas_handle(),
                  "stream": torch.cuda.current_stream().cuda_stream,
                  "workspaces": {hex(p): n for p, n in allocated().items()
                                 if p not in before and p not in tensors}}), flush=True)
print("READY", flush=True)
time.sleep(3600)
