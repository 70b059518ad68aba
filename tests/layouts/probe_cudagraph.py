#!/usr/bin/env python3
"""Discover where torch's C++ CUDAGraph (at::cuda::CUDAGraph, behind torch.cuda.CUDAGraph's
pybind11 base torch._C._CUDAGraph) keeps its private pool's id: culeak's `graph_shapes` in
inspector/cudacache/graphs.c.

Run it on the simulated device with the Python of the torch wheel to inspect, e.g.

    scripts/simgpu-run build/venv/torch-2.14-cuda/bin/python tests/layouts/probe_cudagraph.py

It captures several graphs (each in a pool of its own, then one sharing the first's), reads each
graph's C++ object with ctypes through the pybind11 instance's value pointer, and looks for the
pool id each graph's own pool() returns. No offset is assumed: an offset is printed only when it
holds for every graph and is the only one that does. Also printed: the bytes of malloc's chunk of
each object (the size culeak checks), and the offsets of the one-byte flags that are 0 or 1 in
every graph (has_graph_, has_graph_exec_ and the like). Exits 1 with a message when a find fails.
"""
import ctypes
import json
import struct
import sys

import torch

SEARCH = 256   # bytes of the C++ object searched (the pool id sits in its first 64 today)


def words(addr, n):
    return struct.unpack("<%dQ" % (n // 8), ctypes.string_at(addr, n))


def main():
    x = torch.ones(256, device="cuda")
    graphs, outs = [], []
    for k in range(3):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, pool=graphs[0].pool() if k == 2 else None):
            outs.append(x * (k + 2))
        graphs.append(g)
    found = None
    for g in graphs:
        value = words(id(g) + 16, 8)[0]   # pybind11 instance: the head, then the value pointer
        pool = tuple(g.pool())
        w = words(value, SEARCH)
        here = {8 * i for i in range(len(w) - 1) if (w[i], w[i + 1]) == pool}
        found = here if found is None else found & here
    if not found or len(found) != 1:
        sys.exit("probe_cudagraph: the pool id at %r, not at one offset" % sorted(found or ()))
    chunk = [words(words(id(g) + 16, 8)[0] - 8, 8)[0] & ~7 for g in graphs]
    flags = [o for o in range(next(iter(found))) if all(
        ctypes.string_at(words(id(g) + 16, 8)[0] + o, 1)[0] <= 1 for g in graphs)]
    print(json.dumps({"torch": torch.__version__, "pool_id": next(iter(found)),
                      "malloc_chunk": sorted(set(chunk)), "flag_bytes": flags,
                      "pools": [tuple(g.pool()) for g in graphs]}))


main()
