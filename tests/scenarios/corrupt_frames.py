"""Scenario: a thread whose top frame the process damages itself through ctypes, as a
memory-corrupting extension would: the frame's code pointer is moved to a PROT_NONE page while the
thread sleeps in it (and never wakes), so the frame and its locals cannot be read. The thread's
other frames, and the main thread's, stay intact. The collector is off, so nothing touches the
frame again.

Prints its ground truth (the names of the damaged function and of its caller; the ids of a list
only the damaged frame holds, `lost`, and of one its caller holds, `kept`), then READY."""
import ctypes
import gc
import json
import mmap
import os
import sys
import threading
import time

gc.disable()
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long]
PROT_NONE = 0
hole = libc.mmap(None, mmap.PAGESIZE, PROT_NONE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
assert hole and hole != ctypes.c_void_p(-1).value

# Where a frame keeps its code object (Include/internal/pycore_frame.h, frameobject.h): 3.9 and
# 3.10 frames are PyFrameObjects (f_code at +32); 3.11+ frames are _PyInterpreterFrames, which a
# frame object points at from f_frame (+24), with f_code at +32 (3.11) or +0 (3.12, 3.13).
MINOR = sys.version_info.minor
FRAME_OBJECT_CODE = 32
FRAME_OBJECT_IFRAME = 24
IFRAME_CODE = {11: 32, 12: 0, 13: 0}.get(MINOR)

started = threading.Event()


def doomed_frame(lost):
    started.set()
    time.sleep(3600)


def caller_frame():
    kept = ["a local of the damaged frame's caller"]
    ids.update(kept=id(kept), lost=id(lost))
    doomed_frame(lost)


ids = {}
lost = ["a local of the damaged frame only"]


worker = threading.Thread(target=caller_frame, name="worker", daemon=True)
worker.start()
started.wait()
del lost
time.sleep(0.2)   # into time.sleep: the worker runs no more bytecode
frame = sys._current_frames()[worker.ident]
assert frame.f_code.co_name == "doomed_frame"
if MINOR <= 10:
    at = id(frame) + FRAME_OBJECT_CODE
else:
    at = ctypes.c_void_p.from_address(id(frame) + FRAME_OBJECT_IFRAME).value + IFRAME_CODE
del frame
ctypes.c_void_p.from_address(at).value = hole
print(json.dumps(dict(ids, pid=os.getpid(), damaged="doomed_frame", caller="caller_frame")),
      flush=True)
print("READY", flush=True)
time.sleep(3600)
