"""Scenario: a job whose objects hold text that must not leave the machine (a token, an e-mail
address used as a key, a bytes payload), built at run time so that the secrets' bytes appear
nowhere in the source, beside a leak (`history`, CPU tensors). (Not secrets.py: that would
shadow the standard library's module for every scenario in this folder.) Prints {"pid", "secrets": the
secrets' hex} then READY, and waits."""
import json
import os
import time

import torch

TOKEN = bytes.fromhex("746f6b2d3966386537643663356234612d3331343135393236")   # tok-9f8e...
EMAIL = bytes.fromhex("616c6963652e7a6170617461406578616d706c652e6f7267")     # alice.z...
BLOB = bytes.fromhex("5345435245542d504159 4c4f41442d3237313832".replace(" ", ""))

token = TOKEN.decode() * 3
accounts = {EMAIL.decode(): [torch.ones(64)]}
payload = BLOB * 8
history = [torch.zeros(256, 256) for _ in range(4)]

print(json.dumps({"pid": os.getpid(), "secrets": [TOKEN.hex(), EMAIL.hex(), BLOB.hex()]}),
      flush=True)
print("READY", flush=True)
while True:
    time.sleep(1)
