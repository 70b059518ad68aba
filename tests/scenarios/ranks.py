"""Scenario: a 4-rank torchrun job (gloo, on the CPU) whose ranks each keep their step outputs in
a global list, and whose last rank keeps four times as many: a leak in one rank. Started as a
plain script it execs torchrun on itself, so its pid is torchrun's agent and the ranks are the
agent's children. Each rank writes its own truth (pid, RANK, LOCAL_RANK, WORLD_SIZE, the bytes
in its outputs) into DIR; once all have, rank 0 prints them as one JSON line, then READY, on the
agent's stdout, and every rank waits.

argv: DIR"""
import json
import os
import sys
import time

if "LOCAL_RANK" not in os.environ:   # the agent
    os.execv(sys.executable, [sys.executable, "-m", "torch.distributed.run", "--standalone",
                              "--nproc_per_node=4", os.path.abspath(__file__)] + sys.argv[1:])

import ctypes

ctypes.CDLL(None).prctl(1, 9)   # PR_SET_PDEATHSIG, SIGKILL: the ranks go when the agent is killed

import torch
import torch.distributed as dist

os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
steps = 16 if rank == world - 1 else 4
outputs = [torch.full((256 * 1024,), float(i)) for i in range(steps)]   # 1 MiB a step
weights = torch.zeros(512 * 1024)                                      # the same on every rank
total = torch.ones(4)
dist.all_reduce(total)

truth = {"pid": os.getpid(), "rank": rank, "local_rank": int(os.environ["LOCAL_RANK"]),
         "world_size": world, "outputs_bytes": sum(t.nbytes for t in outputs)}
directory = sys.argv[1]
with open(os.path.join(directory, "rank-%d.tmp" % rank), "w") as f:
    json.dump(truth, f)
os.rename(os.path.join(directory, "rank-%d.tmp" % rank), os.path.join(directory, "rank-%d" % rank))
if rank == 0:
    names = [os.path.join(directory, "rank-%d" % r) for r in range(world)]
    while not all(os.path.exists(n) for n in names):
        time.sleep(0.05)
    print(json.dumps({"ranks": [json.load(open(n)) for n in names]}), flush=True)
    print("READY", flush=True)
time.sleep(3600)
