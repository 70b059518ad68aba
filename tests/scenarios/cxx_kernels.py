"""Scenario: Python objects only torch's C++ holds, each in a c10::SafePyObject: a Python kernel
registered with torch.library (the dispatcher keeps it in a PythonKernelHolder), whose closure
captures a tensor nothing else holds (torch 2.13 keeps a second reference to the kernel, in a
std::shared_ptr<c10::SafePyObject> of its Python registrations). Prints the truth from inside,
then READY, and waits:
  {"pid", "torch", "kernel": id, "kernel_outside", "captured": id, "nbytes"}
where kernel_outside is sys.getrefcount less its argument, less the referrers gc.get_referrers
finds: the references no Python object holds; nbytes the captured tensor's storage's."""
import gc
import json
import os
import sys
import threading

import torch

lib = torch.library.Library("culeak_test", "DEF")
lib.define("scaled(Tensor x) -> Tensor")


def make_kernel():
    weights = torch.ones(250_000)   # 1,000,000 bytes only the kernel's closure holds

    def scaled_kernel(x):
        return x * weights[: x.numel()].view_as(x)
    return scaled_kernel, weights


kernel, captured = make_kernel()
lib.impl("scaled", kernel, "CPU")
assert torch.ops.culeak_test.scaled(torch.ones(4)).tolist() == [1.0] * 4
truth = {"pid": os.getpid(), "torch": torch.__version__, "kernel": id(kernel),
         "captured": id(captured), "nbytes": captured.untyped_storage().nbytes()}
del captured
gc.collect()
truth["kernel_outside"] = sys.getrefcount(kernel) - 1 - len(gc.get_referrers(kernel))
del kernel
gc.collect()
print(json.dumps(truth), flush=True)
print("READY", flush=True)
threading.Event().wait()
