"""Scenario: a one-rank DistributedDataParallel job on the CPU (gloo) after two steps, whose
Reducer keeps its gradient buckets in C++ (bucket_cap_mb=1: two buckets of the model's 1M
parameters).

argv: copy | view  (gradient_as_bucket_view False: the buckets are buffers of their own, the
                    .grad tensors others; True: each .grad is a view into a bucket)
      PORT         (the rendezvous port)
Prints one JSON line, then READY:
  {"pid", "torch", "view": bool,
   "params_bytes": the parameters' bytes, which the buckets hold the gradients of, each once,
   "grad_storages": each parameter's .grad's storage (its data pointer, hex): with view, the
                    buckets themselves,
   "freed_by_ddp": the malloc'ed bytes (mallinfo2: uordblks + hblkhd) `del ddp; gc.collect()`
                   frees, in a fork of the process}
Nothing here makes a Python object of a bucket (a comm hook would: its future then keeps one
from C++, which no reader knows)."""
import ctypes
import gc
import json
import os
import sys
import time

import torch
import torch.distributed as dist

view = sys.argv[1] == "view"
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=sys.argv[2])
dist.init_process_group("gloo", rank=0, world_size=1)
model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.Linear(1024, 512))
ddp = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=1,
                                                gradient_as_bucket_view=view)
for _ in range(2):
    ddp(torch.randn(8, 512)).sum().backward()


class Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                 "uordblks", "fordblks", "keepcost")]


def malloced():
    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = Mallinfo2
    m = libc.mallinfo2()
    return m.uordblks + m.hblkhd


def freed_by_deleting_ddp():
    """The malloc'ed bytes `del ddp` frees, measured in a fork (the job itself keeps it)."""
    r, w = os.pipe()
    child = os.fork()
    if child == 0:
        global ddp
        gc.collect()
        before = malloced()
        del ddp
        gc.collect()
        os.write(w, str(before - malloced()).encode())
        os._exit(0)
    os.close(w)
    freed = int(os.read(r, 64))
    os.waitpid(child, 0)
    return freed


truth = {"pid": os.getpid(), "torch": torch.__version__, "view": view,
         "params_bytes": sum(p.numel() * p.element_size() for p in model.parameters()),
         "grad_storages": [hex(p.grad.untyped_storage().data_ptr()) for p in model.parameters()],
         "freed_by_ddp": freed_by_deleting_ddp()}
print(json.dumps(truth), flush=True)
print("READY", flush=True)
time.sleep(3600)
