"""Scenario: a training job that keeps each step's output in a list (`history`) and dies of a CUDA
out-of-memory error at a step it does not know in advance (torch.cuda.set_per_process_memory_fraction
on the simulated device). Its own out-of-memory observer, registered first, records the truth at
the instant the allocator fails, as a debugger stopped at the throw sees it: the bytes the list
holds, and the id of `act`, a tensor that only a local of the allocating frame, forward(), holds.

argv: GO [--history] [--dump-on-oom PATH [REPORT]]...  -- waits until the file GO exists (a
debugger attaches first), then trains; --history records the allocator's history first; each
--dump-on-oom registers culeak.dump_on_oom(PATH, REPORT, json=True) after that observer.
Prints {"pid"} then READY at the start; at the error, from the job's own except (which the
debugger must let run):
  {"oom": {"history": [id, bytes], "act": [id, bytes], "steps": n, "line": forward()'s line,
           "device": the observer's device, "alloc": the bytes it failed to reserve,
           "stream": the current stream}}
then EXCEPT, and waits."""
import json
import os
import sys
import threading
import time

import torch

print(json.dumps({"pid": os.getpid()}), flush=True)
print("READY", flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.05)

torch.cuda.set_per_process_memory_fraction(0.002)   # of the simulated device's 80 GiB
if "--history" in sys.argv:
    torch.cuda.memory._record_memory_history(max_entries=10000)
history = []
truth = {}


def storage_bytes(tensors):
    seen = {}
    for t in tensors:
        s = t.untyped_storage()
        seen[s.data_ptr()] = s.nbytes()
    return sum(seen.values())


def observer(device, alloc, device_allocated, device_free):
    frame = sys._getframe()
    while frame and frame.f_code.co_name != "forward":
        frame = frame.f_back
    act = frame.f_locals["act"]
    truth["oom"] = {"history": [id(history), storage_bytes(history)],
                    "act": [id(act), storage_bytes([act])], "steps": len(history),
                    "line": frame.f_lineno, "device": device, "alloc": alloc,
                    "stream": torch.cuda.current_stream().cuda_stream}


torch._C._cuda_attach_out_of_memory_observer(observer)
for i, arg in enumerate(sys.argv):
    if arg == "--dump-on-oom":
        import culeak
        paths = sys.argv[i + 1:i + 3]
        culeak.dump_on_oom(paths[0], paths[1] if paths[1:] and paths[1][0] != "-" else None,
                           json=True)


def forward(x):
    act = x * 2                                      # 4 MiB only this frame holds
    out = torch.empty(8 << 20, device="cuda")       # the step's output: 8 MiB more
    out[0] = act.sum()
    return out


x = torch.ones(1 << 20, device="cuda")
try:
    while True:
        history.append(forward(x))
except torch.OutOfMemoryError:
    print(json.dumps(truth), flush=True)
    print("EXCEPT", flush=True)
threading.Event().wait()
