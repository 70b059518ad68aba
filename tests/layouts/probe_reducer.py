#!/usr/bin/env python3
"""Discover where DDP's C++ Reducer (c10d::Reducer) keeps its params_ and buckets_ and how big a
Bucket is: culeak's `layouts` in inspector/torch/reducer.c.

Run it with the Python of the torch wheel to inspect (the CPU suffices: a one-rank gloo job):

    build/venv/torch-2.8-cuda/bin/python tests/layouts/probe_reducer.py

It wraps a two-layer model in DistributedDataParallel with 1 MiB buckets, runs two steps, and
reads the Reducer through the pybind11 instance's value pointer. No offset is assumed: params_ is
the one std::vector whose elements are exactly the parameters' TensorImpls (`_cdata`), in order;
buckets_ the one vector past it with as many elements as the Reducer has buckets (its
_get_zeros_like_grad_buckets()), each opening with a pointer to an object of the parameters'
TensorImpl class (their vtable). Every address is read through /proc/self/mem, which refuses
what is not mapped. Prints one JSON object, or exits 1 when a find fails or is ambiguous.
"""
import json
import os
import sys

import torch
import torch.distributed as dist

from selfmem import word, words   # tests/layouts/

MAX_REDUCER = 4096   # bytes of the Reducer searched (about 1 KiB today)


def main():
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=os.environ.get("PORT", "29655"))
    dist.init_process_group("gloo", rank=0, world_size=1)
    model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.Linear(1024, 512))
    ddp = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=1)
    for _ in range(2):
        ddp(torch.randn(8, 512)).sum().backward()
    nbuckets = len(ddp.reducer._get_zeros_like_grad_buckets())
    impls = [p._cdata for p in model.parameters()]
    vtable = word(impls[0])
    reducer = words(id(ddp.reducer) + 16, 1)[0]   # pybind11 instance: head, then the value
    w = words(reducer, MAX_REDUCER // 8)
    params = [8 * i for i in range(len(w) - 2)
              if w[i + 1] - w[i] == 8 * len(impls) and w[i + 2] >= w[i + 1] and
              [word(w[i] + 8 * k) for k in range(len(impls))] == impls]
    if len(params) != 1:
        sys.exit("probe_reducer: params_ at %r, not at one offset" % params)
    buckets = []
    for i in range(params[0] // 8 + 3, len(w) - 2):
        begin, end, cap = w[i:i + 3]
        if not begin or end <= begin or cap < end or (end - begin) % nbuckets:
            continue
        size = (end - begin) // nbuckets
        if size % 8 == 0 and 64 <= size <= 2048 and all(
                word(word(begin + k * size) or 0) == vtable for k in range(nbuckets)):
            buckets.append((8 * i, size))
    if len(buckets) != 1:
        sys.exit("probe_reducer: buckets_ at %r, not at one offset" % buckets)
    print(json.dumps({"torch": torch.__version__, "params": params[0],
                      "buckets": buckets[0][0], "bucket_size": buckets[0][1],
                      "nbuckets": nbuckets}))


main()
