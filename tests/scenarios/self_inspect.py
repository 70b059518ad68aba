"""Scenario: a job that runs culeak on itself, as a training loop's own leak check would, reading
its report through a pipe: the report is longer than a pipe holds (3000 tensors, a line each), so
while culeak kept the job stopped until the report was written, both waited on each other for
ever. Prints its ground truth (culeak's exit status, the report's length, the tensors culeak
listed and the job's own count), then READY.

argv: CULEAK"""
import json
import os
import subprocess
import sys

import torch

held = [torch.full((4 + i % 7,), float(i)) for i in range(3000)]
r = subprocess.run([sys.argv[1], "tensors", "--pid", str(os.getpid()), "--json"],
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=240)
doc = json.loads(r.stdout) if r.returncode == 0 else {}
print(json.dumps({"rc": r.returncode, "stderr": r.stderr[-500:], "report_bytes": len(r.stdout),
                  "listed": len(doc.get("tensors", [])), "held": len(held)}), flush=True)
print("READY", flush=True)
