"""The benchmark's target (bench/heap.py): a heap of about N objects (argv[1], default 2 million)
in the shapes training jobs have, dicts of lists of small instances with attributes; with
--tensors K (torch needed) also K small CPU tensors, a training loop's history of losses held from
a global list; with --graphs as well, each loss keeps its autograd graph (the leak users hunt:
three nodes, and the tensors they saved for backward, per loss). With --cpu-gb G also G GiB of
CPU tensors of mixed sizes (a tenth of 64 KiB ones, which malloc keeps in its heaps, the rest of
1, 16 and 256 MiB, which it maps), and with --buffer-gb G a bytearray of G GiB, every page
written: a host's memory that holds no object (bench/pause.py). A thread wakes every millisecond
and keeps the longest gap between two wake-ups.

Prints READY and its pid, then answers one command a line on stdin:
  gap            the longest gap (seconds) since the last `gap`: how long the process was stopped
  objgraph N     seconds per tensor that objgraph.find_backref_chain takes to find a chain from a
                 module to each of N tensors (a sample, spread over the history)
  referrers N    the same for a breadth-first search over gc.get_referrers, by hand
"""
import gc
import os
import sys
import threading
import time
import types

args = [a for a in sys.argv[1:] if not a.startswith("--")]
n = int(args[0]) if args else 2_000_000


class Record:
    def __init__(self, i):
        self.step = i
        self.name = "r%d" % i


per = 1000
shards = {("shard%d" % s): [Record(i) for i in range(per // 3)] for s in range(n // per)}
history = []
if "--tensors" in sys.argv:
    import torch

    k = int(sys.argv[sys.argv.index("--tensors") + 1])
    if "--graphs" in sys.argv:
        weight = torch.ones(4, requires_grad=True)
        history = [(weight * torch.full((4,), float(i))).relu().sum() for i in range(k)]
    else:
        history = [torch.full((4,), float(i)) for i in range(k)]
def option(name, default=0.0):
    return float(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


cpu_tensors, cpu_bytes = [], int(option("--cpu-gb") * (1 << 30))
if cpu_bytes:
    import torch

    for share, size in ((0.1, 64 << 10), (0.3, 1 << 20), (0.3, 16 << 20), (0.3, 256 << 20)):
        cpu_tensors += [torch.ones(size // 4) for _ in range(int(cpu_bytes * share) // size)]
buffer = bytearray(int(option("--buffer-gb") * (1 << 30)))
buffer[::4096] = b"\1" * len(range(0, len(buffer), 4096))
longest = [0.0]


def watchdog():
    last = time.monotonic()
    while True:
        time.sleep(0.001)
        now = time.monotonic()
        longest[0] = max(longest[0], now - last)
        last = now


def sample(count):
    step = max(1, len(history) // max(1, count))
    return history[::step][:count]


def objgraph_search(t):
    import objgraph

    chain = objgraph.find_backref_chain(t, objgraph.is_proper_module, max_depth=20)
    assert len(chain) > 1, "objgraph found no chain"


def referrers_search(t):
    """Up from t one gc.get_referrers level at a time until a module: what a user writes by hand
    with the gc module. The search's own frames and lists are not the heap's: skipped."""
    mine = set()
    seen, level = {id(t)}, [t]
    mine.update((id(seen), id(level), id(sys._getframe())))
    for _ in range(20):
        up = []
        mine.add(id(up))
        for obj in level:
            for r in gc.get_referrers(obj):
                if isinstance(r, types.ModuleType):
                    return
                if id(r) in seen or id(r) in mine or isinstance(r, types.FrameType):
                    continue
                seen.add(id(r))
                up.append(r)
        level = up
        mine.add(id(level))
    raise AssertionError("no module within 20 levels")


def per_tensor(search, count):
    tensors = sample(count)
    start = time.process_time()
    for t in tensors:
        search(t)
    return (time.process_time() - start) / len(tensors)


threading.Thread(target=watchdog, daemon=True).start()
print("READY", os.getpid(), flush=True)
for line in sys.stdin:
    cmd, *rest = line.split()
    if cmd == "gap":
        print("%.4f" % longest[0], flush=True)
        longest[0] = 0.0
    elif cmd in ("objgraph", "referrers"):
        search = objgraph_search if cmd == "objgraph" else referrers_search
        print("%.4f" % per_tensor(search, int(rest[0])), flush=True)
time.sleep(3600)
