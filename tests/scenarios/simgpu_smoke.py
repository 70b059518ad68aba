"""The simulated device behaves like a GPU to PyTorch's real caching allocator, as its
documentation describes: a freed block is reused for the same size, small allocations share a
2 MiB segment, empty_cache() releases free segments, memory_stats() and _snapshot() describe it,
and autograd and an MLP's training step run (kernels and matrix products are no-ops: only
memory is real). Exits non-zero on any difference."""
import os

import torch

assert torch.cuda.is_available() and torch.cuda.device_count() == 1
assert "simulated" in torch.cuda.get_device_name(0)

a = torch.empty(1 << 20, device="cuda")
ptr = a.data_ptr()
del a
b = torch.empty(1 << 20, device="cuda")
assert b.data_ptr() == ptr, "a freed block is reused for the same size"

s1, s2 = torch.empty(128, device="cuda"), torch.empty(128, device="cuda")
snap = torch.cuda.memory._snapshot()
seg = [g for g in snap["segments"] if any(x["address"] == s1.data_ptr() for x in g["blocks"])]
assert len(seg) == 1 and seg[0]["total_size"] == 2 << 20 and seg[0]["segment_type"] == "small"
assert any(x["address"] == s2.data_ptr() for x in seg[0]["blocks"]), "small blocks share a segment"

host = torch.arange(10, dtype=torch.float32)
assert torch.equal(host.cuda().cpu(), host), "copies both ways are real"

del b, s1, s2
assert torch.cuda.memory_reserved() > 0
torch.cuda.empty_cache()
assert torch.cuda.memory_reserved() == 0, "empty_cache releases free segments"

x = torch.randn(64, 32, device="cuda", requires_grad=True)
(x * 2).relu().sum().backward()
assert x.grad is not None and x.grad.device.type == "cuda"

# a small MLP trains (through the cuBLAS stand-ins): forward, backward, an optimizer step
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4)).cuda()
opt = torch.optim.Adam(model.parameters())
loss = torch.nn.functional.cross_entropy(model(x), torch.randint(0, 4, (64,), device="cuda"))
loss.backward()
opt.step()
assert all(p.grad is not None for p in model.parameters()) and len(opt.state) == 4
stats = torch.cuda.memory_stats()
assert stats["allocation.all.current"] >= 2 and stats["allocated_bytes.all.current"] > 0
print("simulated device ok", flush=True)
# torch's own teardown is not under test: in one CI run (two loaded cores), after every check had
# passed, the exit aborted with "terminate called without an active exception", as torch's exit
# does when it races the autograd engine's device thread (pytorch#50893); 240 runs here never did.
os._exit(0)
