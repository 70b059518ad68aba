"""Scenario: objects a C extension holds in its static data (tests/scenarios/ext/static_refs.c,
built for this interpreter; argv[1] is the folder of the built module):

  kept      a Marker only the extension's static `kept` holds: it took a reference of its own
  tensor    with torch (argv[2] "torch"): a tensor the static holds instead, of which the
            extension is the only holder
  borrowed  a Marker a global holds, whose address the static `borrowed` keeps with no reference:
            no holder may be made of it
  untracked a str only a tuple holds, which only the static `kept_untracked` holds: the tuple,
            of strs alone, is on no GC list once collected
  in_state  a Marker only the module's state holds
  after_type  a Marker only the word after the extension's static type Plain holds
  far       a Marker only a static 64 KiB into .bss holds, past the pages the file maps
  in_heap   a Marker only a malloc'ed cell of the extension holds (hold_new), which nothing
            culeak reads leads to: held from C, with no holder made of a word that points at it

Prints one JSON line of ground truth from inside, then READY, and waits:
  {"pid", "kept": id, "kept_outside", "borrowed": id, "borrowed_outside", "after_type": id,
   "after_type_outside", "far": id, "untracked": id,
   "untracked_tuple_tracked", "untracked_refs", "in_state": id, "in_state_refs", "in_heap": id,
   "in_heap_refs", "freed": bytes}
  where X_outside is sys.getrefcount less its argument, less the referrers gc.get_referrers finds
  (the references no Python object holds), X_refs sys.getrefcount less its argument (in_heap's its ob_refcnt), and freed what releasing the static frees: in a
  fork(), the nbytes of the storages whose StorageWeakRef expired after keep(None)."""
import ctypes
import gc
import json
import os
import sys
import threading

sys.path.insert(0, sys.argv[1])
import static_refs  # noqa: E402


class Marker:
    pass


truth = {"pid": os.getpid()}
with_torch = sys.argv[2:] == ["torch"]
if with_torch:
    import torch
    from torch.multiprocessing.reductions import StorageWeakRef
    kept = torch.ones(1000)
    ref, nbytes = StorageWeakRef(kept.untyped_storage()), kept.untyped_storage().nbytes()
else:
    kept = Marker()
static_refs.keep(kept)
# inline at module level (a function's frame would hold more): the global's and the static's
truth["kept"], truth["kept_outside"] = id(kept), sys.getrefcount(kept) - 1 - len(gc.get_referrers(kept))
del kept
if with_torch:
    pid = os.fork()
    if pid == 0:
        static_refs.keep(None)
        gc.collect()
        os._exit(0 if ref.expired() else 1)
    truth["freed"] = nbytes if os.waitpid(pid, 0)[1] == 0 else 0
borrowed = Marker()
static_refs.borrow(borrowed)
truth["borrowed"] = id(borrowed)
truth["borrowed_outside"] = sys.getrefcount(borrowed) - 1 - len(gc.get_referrers(borrowed))
untracked = "".join(["only in ", "a tuple ", str(os.getpid())])
static_refs.keep_untracked((untracked,))
in_state = Marker()
static_refs.keep_in_state(in_state)
plain = static_refs.Plain()   # an instance: the type is one culeak meets
after_type = Marker()
static_refs.keep_after_type(after_type)
truth["after_type"] = id(after_type)
truth["after_type_outside"] = sys.getrefcount(after_type) - 1 - len(gc.get_referrers(after_type))
del after_type
far = Marker()
static_refs.keep_far(far)
truth["far"] = id(far)
del far
gc.collect()   # untracks the tuple
truth["untracked"], truth["in_state"] = id(untracked), id(in_state)
truth["untracked_tuple_tracked"] = any(type(r) is tuple for r in gc.get_referrers(untracked))
# module level again: the global's reference, and the tuple's or the state's
truth["untracked_refs"] = sys.getrefcount(untracked) - 2
truth["in_state_refs"] = sys.getrefcount(in_state) - 2
del untracked, in_state
truth["in_heap"] = static_refs.hold_new(Marker)
# ob_refcnt, read with no reference of ours
truth["in_heap_refs"] = ctypes.c_ssize_t.from_address(truth["in_heap"]).value
print(json.dumps(truth), flush=True)
print("READY", flush=True)
threading.Event().wait()
