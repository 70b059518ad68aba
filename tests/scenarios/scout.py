"""Scenario: a rank whose memory is mostly what no walk reads: CPU tensors of mixed sizes (some
small enough for malloc's main heap, most mmap'ed by it) and two anonymous buffers of
BUFFER_MIB each (a bytearray, a private mmap), beside some
Python objects; and a tensor of its own (the victim), mmap'ed last, so that malloc's next mmap
of its size lands where it was.

argv: TENSOR_MIB BUFFER_MIB VICTIM_MIB
Prints one JSON line ({"pid", "tensor_bytes", "buffer_bytes", "victim": [start, end)}), then
READY. On SIGUSR1 it frees the victim and puts a list of Python objects where its data was: a
list whose item array (mmap'ed by malloc, of the victim's size) holds a Marker every page, then
writes {"markers", "items": [start, end), "reused": whether they overlap the victim's range} to
the file argv[4] names, once done."""
import ctypes
import json
import mmap
import os
import signal
import sys
import time

import torch

tensor_mib, buffer_mib, victim_mib = (int(a) for a in sys.argv[1:4])
flag = sys.argv[4]


class Marker:
    pass


class Record:
    def __init__(self, i):
        self.step = i
        self.name = "r%d" % i


records = [Record(i) for i in range(100_000)]
# mixed sizes: 4 KiB tensors in malloc's heap, 1 MiB and 16 MiB ones mmap'ed by it
tensors, total = [], 0
for size in [4 << 10] * 1024 + [1 << 20] * 64 + [16 << 20] * 64:
    if total + size > tensor_mib << 20:
        break
    tensors.append(torch.ones(size // 4))
    total += size
# two anonymous buffers, each page written (present, not zeros): a bytearray's, and an mmap's
buffer = bytearray(buffer_mib << 20)
buffer[::4096] = b"\1" * len(range(0, len(buffer), 4096))
mapped = mmap.mmap(-1, buffer_mib << 20, flags=mmap.MAP_PRIVATE)
for at in range(0, len(mapped), 4096):
    mapped[at] = 1
victim = torch.ones((victim_mib << 20) // 4)
victim_range = [victim.data_ptr(), victim.data_ptr() + victim.numel() * 4]
flipped = None


def flip(signum, frame):
    global victim, flipped
    del victim
    # the same request size as the victim's, so malloc mmaps as much and the kernel (top down)
    # gives it the gap the victim left
    items = (victim_mib << 20) // 8
    flipped = [None] * items
    per_page = 4096 // 8
    for i in range(0, items, per_page):
        flipped[i] = Marker()
    ob_item = ctypes.c_void_p.from_address(id(flipped) + 24).value   # PyListObject.ob_item
    reused = ob_item < victim_range[1] and victim_range[0] < ob_item + items * 8
    with open(flag + ".tmp", "w") as f:
        json.dump({"markers": len(range(0, items, per_page)),
                   "items": [ob_item, ob_item + items * 8], "reused": reused}, f)
    os.rename(flag + ".tmp", flag)


signal.signal(signal.SIGUSR1, flip)
print(json.dumps({"pid": os.getpid(), "tensor_bytes": total,
                  "buffer_bytes": len(buffer) + len(mapped),
                  "victim": victim_range}), flush=True)
print("READY", flush=True)
while True:
    time.sleep(0.01)
