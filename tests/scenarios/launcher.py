"""Scenario: a launcher, as torchrun's agent with torch.multiprocessing's helpers: its children are
one rank (train.py under the torch venv's Python, given as argv[1], held after its steps), a
Python helper without torch (as multiprocessing's resource tracker) and a process that is not
Python at all.

Prints one JSON line (each child's pid by role), then READY."""
import json
import os
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
rank = subprocess.Popen([sys.argv[1], os.path.join(here, "train.py")], stdout=subprocess.PIPE,
                        text=True, env=dict(os.environ, HOLD="1"))
while rank.stdout.readline().strip() != "READY":
    pass
helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
shell = subprocess.Popen(["sleep", "600"])
time.sleep(0.5)   # the helpers exec'd
print(json.dumps({"rank": rank.pid, "helper": helper.pid, "shell": shell.pid}), flush=True)
print("READY", flush=True)
try:
    time.sleep(600)
finally:
    for p in (rank, helper, shell):
        p.kill()
