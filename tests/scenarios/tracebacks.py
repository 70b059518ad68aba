"""Scenario: torch's CapturedTraceback (torch.utils._traceback.CapturedTraceback.extract(), which
torch.compile records as it compiles): its C++ object holds a reference to the code object of
each frame it gathered (torch 2.1+).

  kept  a global, the CapturedTraceback of a call of a function made by exec and then deleted,
        so that only the traceback holds that function's code object

Prints one JSON line of ground truth from inside, then READY, and waits:
  {"pid", "torch", "code": id of that code object, "outside": its references from outside
   tracked objects (sys.getrefcount less its argument, less gc.get_referrers'), "stack": the
   ids of the code objects of the frames the traceback gathered, innermost first}"""
import gc
import json
import os
import sys
import time

import torch
from torch.utils._traceback import CapturedTraceback

namespace = {"CapturedTraceback": CapturedTraceback, "sys": sys}
exec("def made():\n"
     "    f = sys._getframe()\n"
     "    return CapturedTraceback.extract(), [f.f_code, f.f_back.f_code]\n", namespace)
kept, stack = namespace["made"]()
# innermost first: extract() gathers from its own frame
stack = [id(c) for c in [CapturedTraceback.extract.__code__] + stack]
code = namespace.pop("made").__code__
gc.collect()
# inline at module level: the global `code` is the one referrer gc finds
outside = sys.getrefcount(code) - 1 - len(gc.get_referrers(code))
code_id = id(code)
del code, namespace
print(json.dumps({"pid": os.getpid(), "torch": torch.__version__, "code": code_id,
                  "outside": outside, "stack": stack}), flush=True)
print("READY", flush=True)
while True:
    time.sleep(1)
