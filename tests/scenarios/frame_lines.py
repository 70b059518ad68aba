"""Scenario: main() holds a tensor in a local while the job moves from one line to another with
nothing else changed, then a recursive function holds a tensor in each of its calls. Prints its
truth, then READY, then stops itself (SIGSTOP) three times: on one line of main() (A), on another
(B), and in the innermost call of nest() (C).

Truth: pid; big: the local's nbytes; lines: where A and B stop; calls: the nbytes nest()'s local
holds in each call, from the bottom of the stack (the first call first).

argv: none"""
import json
import os
import signal

import torch

DEPTH = 3


def stop():
    os.kill(os.getpid(), signal.SIGSTOP)


def nest(depth):
    mine = torch.ones(1024 * depth)  # noqa: F841  (held by this call's frame)
    if depth > 1:
        nest(depth - 1)
    else:
        stop()  # C


def main():
    big = torch.ones(1 << 18)
    source = open(__file__).read().splitlines()
    lines = [n + 1 for n, text in enumerate(source) if text.strip() in ("stop()  # A", "stop()  # B")]
    print(json.dumps({"pid": os.getpid(), "big": big.nbytes, "lines": lines,
                      "calls": [4 * 1024 * d for d in range(DEPTH, 0, -1)]}), flush=True)
    print("READY", flush=True)
    stop()  # A
    stop()  # B
    nest(DEPTH)


main()
