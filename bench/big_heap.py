"""A heap of about N objects (argv[1], default 2 million) in the shapes training jobs have: dicts
of lists of small instances with attributes. Prints READY and waits."""
import os
import sys
import time

n = int(sys.argv[1]) if len(sys.argv) > 1 else 2_000_000


class Record:
    def __init__(self, i):
        self.step = i
        self.name = "r%d" % i


per = 1000
shards = {("shard%d" % s): [Record(i) for i in range(per // 3)] for s in range(n // per)}
print("READY", os.getpid(), flush=True)
time.sleep(3600)
