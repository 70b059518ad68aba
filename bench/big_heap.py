"""A heap of about N objects (argv[1], default 2 million) in the shapes training jobs have: dicts
of lists of small instances with attributes. Prints READY and its pid, and waits.

--watchdog: a thread also wakes every millisecond and keeps the longest gap between two wake-ups
(how long the process was stopped); each line on stdin then prints that gap in seconds and starts
measuring again."""
import os
import sys
import threading
import time

args = [a for a in sys.argv[1:] if not a.startswith("--")]
n = int(args[0]) if args else 2_000_000


class Record:
    def __init__(self, i):
        self.step = i
        self.name = "r%d" % i


per = 1000
shards = {("shard%d" % s): [Record(i) for i in range(per // 3)] for s in range(n // per)}
longest = [0.0]


def watchdog():
    last = time.monotonic()
    while True:
        time.sleep(0.001)
        now = time.monotonic()
        longest[0] = max(longest[0], now - last)
        last = now


if "--watchdog" in sys.argv:
    threading.Thread(target=watchdog, daemon=True).start()
print("READY", os.getpid(), flush=True)
if "--watchdog" in sys.argv:
    for _ in sys.stdin:
        print("%.4f" % longest[0], flush=True)
        longest[0] = 0.0
time.sleep(3600)
