"""Scenario: a tensor named twice, by a library function's local (a thread blocked in code that
lies in a site-packages directory) and by a global of the user's own script, which is the longer
path. Prints the tensor's id and the name culeak must show (the user's global), then READY.

argv: none"""
import json
import os
import sys
import tempfile
import threading
import time

import torch

site = os.path.join(tempfile.mkdtemp(prefix="culeak-site-"), "site-packages")
os.makedirs(site)
with open(os.path.join(site, "libmod.py"), "w") as f:
    f.write("def hold(t, until):\n    until.wait()\n")
sys.path.insert(0, site)
import libmod  # noqa: E402  (library code by where it lies)

weights = {"w": torch.ones(1000)}
started, until = threading.Event(), threading.Event()
worker = threading.Thread(target=lambda: (started.set(), libmod.hold(weights["w"], until)),
                          name="worker", daemon=True)
worker.start()
started.wait()
time.sleep(0.2)   # the worker is inside libmod.hold
print(json.dumps({"pid": os.getpid(), "address": hex(id(weights["w"])),
                  "name": "__main__.weights['w']"}), flush=True)
print("READY", flush=True)
while True:
    time.sleep(1)
