"""Scenario: GPU memory outside the caching allocator, as another library's cudaMalloc makes it
(NCCL's buffers, a handle's workspace): a tensor through the allocator, then 48 MiB straight from
the CUDA runtime. Run under scripts/simgpu-run or on a GPU.

argv: [--own-pid-namespace]   (run in a PID namespace of its own, as in a container: the pid it
                               knows itself by is not the host's, which NVML lists)
Prints one JSON line of ground truth from inside, then READY, and waits:
  {"pid" (omitted in its own namespace: the host's is its parent's child), "ns_pid", "torch",
   "reserved": torch.cuda.memory_reserved(), "direct": the bytes cudaMalloc'ed outside torch,
   "nvml_used": what NVML says this process uses, asked from inside by the pid NVML lists
                (null in its own namespace, where NVML's pid is not its own)}"""
import ctypes
import json
import os
import sys
import time

if sys.argv[1:] == ["--own-pid-namespace"]:
    os.execvp("unshare", ["unshare", "--pid", "--fork", "--kill-child", "--mount-proc",
                          sys.executable, __file__, "--in-namespace"])

import torch

x = torch.zeros(1 << 20, device="cuda")   # 4 MiB in a 20 MiB segment
# by its soname: the runtime already loaded (the simulated device's, preloaded, or torch's own)
cuda = ctypes.CDLL("libcudart.so.%s" % torch.version.cuda.split(".")[0])
direct = 48 << 20
block = ctypes.c_void_p()
assert cuda.cudaMalloc(ctypes.byref(block), ctypes.c_size_t(direct)) == 0


class ProcessInfo(ctypes.Structure):   # nvmlProcessInfo_v2_t
    _fields_ = [("pid", ctypes.c_uint), ("used", ctypes.c_ulonglong),
                ("gpu_instance", ctypes.c_uint), ("compute_instance", ctypes.c_uint)]


def nvml_used(pid):
    nvml = ctypes.CDLL("libnvidia-ml.so.1")
    assert nvml.nvmlInit_v2() == 0
    count, used = ctypes.c_uint(), 0
    assert nvml.nvmlDeviceGetCount_v2(ctypes.byref(count)) == 0
    for i in range(count.value):
        gpu, n = ctypes.c_void_p(), ctypes.c_uint(64)
        infos = (ProcessInfo * 64)()
        assert nvml.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(gpu)) == 0
        assert nvml.nvmlDeviceGetComputeRunningProcesses_v3(gpu, ctypes.byref(n), infos) == 0
        used += sum(p.used for p in infos[:n.value] if p.pid == pid)
    nvml.nvmlShutdown()
    return used


own_namespace = sys.argv[1:] == ["--in-namespace"]
truth = {"ns_pid": os.getpid(), "torch": torch.__version__,
         "reserved": torch.cuda.memory_reserved(), "direct": direct,
         "nvml_used": None if own_namespace else nvml_used(os.getpid())}
if not own_namespace:
    truth["pid"] = os.getpid()
print(json.dumps(truth), flush=True)
print("READY", flush=True)
while True:
    time.sleep(1)
