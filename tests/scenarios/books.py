"""Scenario: the books balance (issue 41). Objects whose holders only reference counts tell:

  garbage   reference cycles no one holds (gc is disabled): gc.collect() would free them
  leaked    a list whose only reference is one Py_IncRef left over (held from C), with a Marker
            and a bytearray in it
  marked    a Marker held by a global and by one leaked reference
  named     Markers each held only by a callable the interpreter keeps in C: a signal handler,
            an atexit callback, a codec search function, a fork hook, an audit hook, a profile
            function, the thread's contextvars Context
  kept      objects the interpreter keeps in C structures of its own: an Argument Clinic
            parser's keyword name, an extension module's file name, __import__, the weak
            reference to the main thread's lock (3.9-3.12),
            Token.MISSING, typing.Generic, datetime.date's dict, ctypes' array type cache
            (outside: the references no
            tracked object holds)
  pickler   a Marker held only through a C struct's field no reader knows (_pickle.Pickler's
            write method); stale, a ctypes array holding a freed object's address
  the batch loops: `for step, batch in enumerate(gen()):` in loop(), paused in serve(), and the
            same in thread worker, blocked in a C call (lock.acquire()): each enumerate object
            is on its frame's evaluation stack only

Prints one JSON line of ground truth from inside, then READY, and serves requests on stdin:
  {"pid", "version": [3, minor], "leaked": id, "leaked_unexplained", "in_leaked": id, "marked": id,
   "marked_unexplained", "enumerate": {"gen": id, "gen_worker": id}, "batch": id,
   "named": {root: id}, "kept": {root: [id, outside]}, "in_pickler": id, "freed": address,
   "garbage_cycles": [ids], "signal": [id of _decimal.InvalidOperation, its X_unexplained]}
  where X_unexplained is sys.getrefcount(X) - 1 less the referrers gc.get_referrers finds.
  {"collect": true} -> {"garbage": [ids]}: gc.set_debug(gc.DEBUG_SAVEALL); gc.collect(); the ids
  of gc.garbage, what CPython's own collector finds unreachable.
  {"describe": id} -> {"describe": repr of that object of gc.garbage, or null}"""
import atexit
import codecs
import contextvars
import datetime
import _pickle
import ctypes
import gc
import json
import os
import signal
import sys
import threading
import weakref
import typing

gc.disable()
incref = ctypes.pythonapi.Py_IncRef
incref.argtypes = [ctypes.py_object]

# what the interpreter keeps in C structures of its own, each an object with references no
# tracked object holds (its count less gc.get_referrers'), all of which culeak must explain: the
# keyword names an Argument Clinic parser keeps (made on its function's first call with
# keywords; the name built here, so that no constant of this file holds it), the strs of the
# (filename, name) keys of the cache of extension modules imported (3.9-3.11), the import
# function builtins.__import__, contextvars' Token.MISSING (3.9-3.11), typing's C types
# (3.12+) and a static type's dict (3.13+)
int.from_bytes(b"\x01", **{"".join(["byte", "order"]): "big"})
kept = {"<argument parser: from_bytes()>": sys.intern("".join(["byte", "order"])),
        "<import function>": __import__, "<contextvars.Token.MISSING>": contextvars.Token.MISSING,
        "<typing's C types>": typing.Generic,
        # the dict 3.13+ keep in the interpreter for a stdlib extension's static type
        "<static type datetime.date>": gc.get_referents(vars(datetime.date))[0]}
# ctypes' cache of array types: each entry's weak proxy has a callback (a DictRemover, which
# 3.9-3.11 do not track) holding the cache; the cache itself is a static of _ctypes
ctypes.c_int * 7
kept["<ctypes' array type cache>"] = next(d for d in gc.get_objects()
                                          if type(d) is dict and (ctypes.c_int, 7) in d)
if hasattr(_pickle, "__file__"):   # not built into the interpreter
    kept["<extension modules imported>"] = _pickle.__file__
# 3.9-3.12: the weak reference to the main thread's lock its thread state owns
lock = getattr(threading.main_thread(), "_tstate_lock", None)
for w in gc.get_objects():
    if lock is not None and type(w) is weakref.ref and w() is lock:
        kept["<thread main: its lock's weak reference>"] = w
del lock, w
gc.collect()   # untracks the tuples of strs, as a collection would have by now (and no
               # garbage is made yet)
for name in list(kept):   # inline, as below: a frame or an iterator would hold more
    kept[name] = [id(kept[name]), sys.getrefcount(kept[name]) - 1 - len(gc.get_referrers(kept[name]))]
del name


class Marker:
    pass


class Node:
    def __init__(self, n):
        self.payload = [Marker() for _ in range(n)]
        self.other = None


def cycle(n):
    a, b = Node(n), Node(n)
    a.other, b.other = b, a
    return id(a)


garbage_cycles = [cycle(3), cycle(5)]


# References no GC-tracked referrer explains, as CPython counts them: sys.getrefcount less its
# argument, less the referrers gc.get_referrers finds (the module's dict, for a global). Inline at
# module level: a function's frame (3.9/3.10: and its caller's stack) would hold more.
leaked = [Marker(), bytearray(4096)]
incref(leaked)
leaked_unexplained = sys.getrefcount(leaked) - 1 - len(gc.get_referrers(leaked))
leaked_id, in_leaked = id(leaked), id(leaked[0])
del leaked   # a reference and its referrer, the module's dict, go together

# _decimal's InvalidOperation: 3.9-3.12 hold it from two static words, signal_map[0].ex and,
# borrowed, cond_map[0].ex (Modules/_decimal/_decimal.c, PyInit__decimal): one reference from
# outside tracked objects, which culeak leaves unexplained and names the words of
import _decimal  # noqa: E402
signal_unexplained = sys.getrefcount(_decimal.InvalidOperation) - 1 - \
    len(gc.get_referrers(_decimal.InvalidOperation))

marked = Marker()
incref(marked)
marked_unexplained = sys.getrefcount(marked) - 1 - len(gc.get_referrers(marked))


def held_only_by(register):
    """A Marker that only a callable the interpreter keeps in C holds (its default argument),
    the callable registered by register and held nowhere else."""
    m = Marker()
    register(lambda *args, held=m: None)
    return id(m)


# what the interpreter holds in C for the program: each root names a Marker held only there
named = {
    "<signal SIGUSR1>": held_only_by(lambda f: signal.signal(signal.SIGUSR1, f)),
    "<atexit callback 0>": held_only_by(atexit.register),
    "<codec search functions>": held_only_by(codecs.register),
    "<os.register_at_fork before>": held_only_by(lambda f: os.register_at_fork(before=f)),
    "<audit hooks>": held_only_by(sys.addaudithook),
    "<thread main: sys.setprofile function>": held_only_by(sys.setprofile),
    "<thread main: contextvars context>": held_only_by(contextvars.ContextVar("held").set),
}


class Sink:
    def write(self, data):
        pass


# a Marker held only through a C type's own field, which culeak has no reader for: the pickler
# keeps its file's bound write method in its struct
sink = Sink()
sink.payload = Marker()
pickler = _pickle.Pickler(sink)
in_pickler = id(sink.payload)
del sink

# a freed object's address left in an extension object's own memory (a ctypes array keeps a
# small buffer inline): no holder may be made of it. A tuple of 37 items: a size class nothing
# else here allocates from, so no object takes the address over.
freed = tuple(range(1000, 1037))
freed_id = id(freed)
del freed
stale = (ctypes.c_uint64 * 2)(freed_id, freed_id)


def gen():
    while True:
        yield [Marker()]


def gen_worker():
    while True:
        yield [Marker()]


blocker = threading.Lock()
blocker.acquire()
started = threading.Event()


def worker():
    for step, batch in enumerate(gen_worker()):
        started.set()
        blocker.acquire()   # blocks in C: the frame saves no stack pointer before 3.14


threading.Thread(target=worker, name="worker", daemon=True).start()
started.wait()


def serve(truth):
    if truth:
        truth["enumerate"] = {gc.get_referents(o)[0].__name__: id(o)
                              for o in gc.get_objects() if type(o) is enumerate}
        print(json.dumps(truth), flush=True)
        print("READY", flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("collect"):
            gc.set_debug(gc.DEBUG_SAVEALL)
            gc.collect()
            print(json.dumps({"garbage": [id(o) for o in gc.garbage]}), flush=True)
        elif "describe" in request:   # what a garbage object is, for a failing test to say
            found = [o for o in gc.garbage if id(o) == request["describe"]]
            print(json.dumps({"describe": repr(found[0])[:300] if found else None}), flush=True)
        else:
            print(json.dumps({"unknown": request}), flush=True)


def loop():
    for step, batch in enumerate(gen()):
        serve({"pid": os.getpid(), "version": list(sys.version_info[:2]), "leaked": leaked_id, "leaked_unexplained": leaked_unexplained,
               "in_leaked": in_leaked, "marked": id(marked),
               "marked_unexplained": marked_unexplained, "batch": id(batch), "named": named,
               "in_pickler": in_pickler, "freed": freed_id, "kept": kept,
               "garbage_cycles": garbage_cycles,
               "signal": [id(_decimal.InvalidOperation), signal_unexplained]})
        return


loop()
