"""Scenario: Marker objects planted in every kind of place a referrer path can go through, each
with the one path `culeak refs` must print for it (the only route from a root, so the shortest),
then waits to be inspected (or, with --abort, dumps core through the kernel).

argv: [--abort] [--selfcheck]
Prints one JSON line, then READY:
  {"pid", "version", "counts": {"Marker": n, "Holder": n, "Slotted": n},   (from gc.get_objects())
   "markers": {tag: {"address": hex, "path": str or null, "reachable": bool,
                     ["root_prefix": str]    a thread-frame local: the path is
                                             ROOT_PREFIX...>PATH, e.g. ">.local_marker"
                     ["path_prefix": str]}}} the path goes on through internals; it starts so

--selfcheck: instead of waiting, checks every path in Python itself (each evaluates to its marker,
and every object on it has no referrer off the path, so no other route exists), then exits 0 or 1.

Each marker is referenced from exactly one place: no loop variable or leftover name may keep one,
and the ground truth holds addresses, not the markers."""
import ast
import collections
import functools
import gc
import json
import os
import re
import sys
import threading
import time
import types

gc.disable()   # keeps the unreachable cycle below alive

MARKERS = {}   # tag -> ground-truth entry (strings only, never the Marker itself)


class Marker:
    """A leak to find."""

    def __init__(self, tag):
        self.tag = tag


class Holder:
    def __init__(self, item):
        self.item = item


class Slotted:
    __slots__ = ("item", "spare")

    def __init__(self, item):
        self.item = item
        self.spare = None


def plant(tag, path, **extra):
    """A new Marker with its expected path; the caller stores it in exactly one place."""
    assert tag not in MARKERS, tag
    m = Marker(tag)
    MARKERS[tag] = dict({"address": hex(id(m)), "path": path, "reachable": path is not None},
                        **extra)
    return m


def describe(obj):
    return "<%s>" % obj.tag


def pair(a, k=None):
    return (a, k)


# --- module globals, containers ------------------------------------------------------------
global_marker = plant("global", "__main__.global_marker")
registry = {"alpha": plant("dict-value", "__main__.registry['alpha']"), "beta": 2}
by_number = {3: plant("dict-int-key", "__main__.by_number[3]"), 7: "seven"}
config = {"layers": [{"w": ("bias", plant("nested", "__main__.config['layers'][0]['w'][1]"))}]}
work_queue = collections.deque(["a", "b", plant("deque-item", "__main__.work_queue[2]")])
history = [plant("history-%d" % i, "__main__.history[%d]" % i) for i in range(50)]

# --- instances -------------------------------------------------------------------------------
holder = Holder(plant("holder-attr", "__main__.holder.item"))
holders = [Holder(None), Holder(plant("holders-attr", "__main__.holders[1].item"))]
slotted = Slotted(plant("slot", "__main__.slotted.item"))


# --- classes: own __dict__, and the callables wrapped by staticmethod, classmethod, property --
class Registry:
    cache = plant("class-attr", "__main__.Registry.cache")


class Tools:
    helper = staticmethod(plant("staticmethod", "__main__.Tools.helper.__func__"))
    maker = classmethod(plant("classmethod", "__main__.Tools.maker.__func__"))
    prop = property(plant("property", "__main__.Tools.prop.fget"))


class Cached:
    @functools.lru_cache
    def compute(self, item):
        return len(item.tag)


def _fill_lru_cache():
    # the cache's key tuple (Cached instance, marker) keeps both alive
    Cached().compute(plant("lru-cache", None, path_prefix="__main__.Cached.compute",
                           reachable=True))


_fill_lru_cache()

# dict keys Python writes as literals or by name: a float, an enum member
import enum  # noqa: E402


class Color(enum.Enum):
    RED = 1


by_float = {0.1: plant("float-key", "__main__.by_float[0.1]")}
by_enum = {Color.RED: plant("enum-key", "__main__.by_enum[__main__.Color.RED]")}

# a module shadowed by its package's attribute of the same name (unittest.main is a function):
# Python reaches it as sys.modules['unittest.main']
import unittest.main  # noqa: E402
vars(sys.modules["unittest.main"])["shadowed_marker"] = plant(
    "shadowed-module", "sys.modules['unittest.main'].shadowed_marker")


# --- functions -----------------------------------------------------------------------------
def _make_closure(captured):
    def closure_fn():
        return captured
    return closure_fn


closure_fn = _make_closure(plant("closure", "__main__.closure_fn.__closure__[0].cell_contents"))


def with_default(x=plant("default", "__main__.with_default.__defaults__[0]")):
    return x


def with_kwdefault(*, k=plant("kwdefault", "__main__.with_kwdefault.__kwdefaults__['k']")):
    return k


def tagged_fn():
    pass


tagged_fn.attached = plant("func-attr", "__main__.tagged_fn.attached")
bound = types.MethodType(describe, plant("bound-self", "__main__.bound.__self__"))
partial_obj = functools.partial(pair, plant("partial-arg", "__main__.partial_obj.args[0]"),
                                k=plant("partial-kw", "__main__.partial_obj.keywords['k']"))

# --- exceptions, tracebacks, frames --------------------------------------------------------
chained_exc = RuntimeError(plant("exc-arg", "__main__.chained_exc.args[0]"))
chained_exc.__cause__ = KeyError(plant("exc-cause", "__main__.chained_exc.__cause__.args[0]"))
chained_exc.__context__ = LookupError(
    plant("exc-context", "__main__.chained_exc.__context__.args[0]"))


def _fail_with_local():
    # raised and caught in this one frame: the traceback has this frame only
    x = plant("tb-local", "__main__.saved_exc.__traceback__.tb_frame.f_locals['x']")
    try:
        raise ValueError("boom")
    except ValueError as e:
        return e


saved_exc = _fail_with_local()


def _fail_for_sys():
    x = plant("sys-last-tb", "sys.last_traceback.tb_frame.f_locals['x']")
    try:
        raise KeyError("last")
    except KeyError:
        sys.last_type, sys.last_value, sys.last_traceback = sys.exc_info()


_fail_for_sys()


def _generator():
    x = plant("generator", "__main__.suspended_gen.gi_frame.f_locals['x']")
    yield 1
    yield x


suspended_gen = _generator()
next(suspended_gen)


# --- a second module, only in sys.modules --------------------------------------------------
def _make_leakmod():
    mod = types.ModuleType("leakmod")
    mod.thing = plant("module-attr", "leakmod.thing")
    sys.modules["leakmod"] = mod


_make_leakmod()


# --- unreachable: a cycle nothing else holds (gc is disabled, so it stays) -----------------
def _make_cycle():
    a = plant("cycle-a", None)
    b = plant("cycle-b", None)
    a.other = b
    b.other = a


_make_cycle()


# --- a blocked thread holding a local ------------------------------------------------------
def worker_body(ready):
    worker_marker = plant("worker-local", ".worker_marker",
                          root_prefix="<thread worker: worker_body() at markers.py")
    ready.set()
    while worker_marker is not None:
        time.sleep(3600)


def _start_worker():
    ready = threading.Event()
    t = threading.Thread(target=worker_body, args=(ready,), name="worker", daemon=True)
    t.start()
    ready.wait()
    deadline = time.time() + 30   # until its innermost Python frame is worker_body (sleeping)
    while sys._current_frames()[t.ident].f_code.co_name != "worker_body":
        if time.time() > deadline:
            raise SystemExit("worker thread did not block in worker_body")
        time.sleep(0.01)


_start_worker()


# --- ground truth, then the main thread blocks holding a local -----------------------------
def counts():
    found = {"Marker": 0, "Holder": 0, "Slotted": 0}
    objects = gc.get_objects()
    for o in objects:
        name = type(o).__name__
        if name in found:
            found[name] += 1
    del objects, o
    return found


def wait_here():
    local_marker = plant("main-local", ".local_marker",
                         root_prefix="<thread main: wait_here() at markers.py")
    v = sys.version_info
    level = {"alpha": "a", "beta": "b", "candidate": "rc", "final": ""}[v.releaselevel]
    truth = {
        "pid": os.getpid(),
        "version": "%d.%d.%d%s" % (v.major, v.minor, v.micro,
                                   level + str(v.serial) if level else ""),
        "markers": MARKERS,
        "counts": counts(),
    }
    print(json.dumps(truth), flush=True)
    print("READY", flush=True)
    if "--selfcheck" in sys.argv:
        sys.exit(selfcheck(truth))
    if "--abort" in sys.argv:
        os.abort()
    while local_marker is not None:
        time.sleep(3600)


# --- --selfcheck ---------------------------------------------------------------------------
STEP = re.compile(r"\.([A-Za-z_]\w*)|\[(-?\d+)\]|\['([^'\\]*)'\]|\[([^\[\]]+)\]")


def key_value(expr):
    """A key written as a literal (0.1) or as another object's path (__main__.Color.RED)."""
    try:
        return ast.literal_eval(expr)
    except ValueError:
        return eval(expr, {expr.split(".")[0]: sys.modules[expr.split(".")[0]]})


def evaluate(path):
    """The objects along PATH (root module first), each step taken as culeak takes it: a
    module's or a class's attribute from its own __dict__ (no descriptor protocol), any other
    `.name` by getattr, `[k]` by subscript."""
    root, _, rest = path.partition(".")
    obj = sys.modules[root]
    chain = [obj]
    rest = "." + rest
    pos = 0
    while pos < len(rest):
        m = STEP.match(rest, pos)
        if not m:
            raise ValueError("bad path syntax at %r" % rest[pos:])
        pos = m.end()
        name, index, key, other = m.groups()
        if other is not None:
            obj = obj[key_value(other)]
        elif name is not None:
            if isinstance(obj, (types.ModuleType, type)):
                obj = obj.__dict__[name]
            else:
                obj = getattr(obj, name)
        elif index is not None:
            obj = obj[int(index)]
        else:
            obj = obj[key]
        chain.append(obj)
    return chain


def referrers(obj, ignore):
    """gc.get_referrers, less the self-check's own containers and frames."""
    return [r for r in gc.get_referrers(obj) if id(r) not in ignore and not (
        type(r) is types.FrameType and r.f_code in SELFCHECK_CODES)]


def stray_referrers(chain, ignore):
    """Referrers of the objects along the path that are not on it: any would be another route.
    Checked: the marker itself, and every object from depth 2 on (depth 1, an attribute of a
    root, cannot be bettered). Allowed: another object of the chain (a frame or generator holds
    its locals; 3.13's f_locals proxy holds its frame), or a dict/tuple the parent holds directly (an instance's __dict__, a class's own
    dict), but a module's globals only when the parent is that module. Each allowed referrer must
    hold the object once (two attributes holding one marker would be two routes)."""
    problems = []
    for k in range(1, len(chain)):
        if k == 1 and len(chain) > 2:
            continue
        parent = chain[k - 1]
        on_path = {id(o) for o in chain}   # a later one holding it back is a cycle, no route
        parent_parts = {id(o) for o in gc.get_referents(parent) if type(o) in (dict, tuple) and (
            isinstance(parent, types.ModuleType) or not is_module_dict(o))}
        for r in referrers(chain[k], ignore):
            if id(r) not in on_path and id(r) not in parent_parts:
                problems.append("step %d (%s) also referenced by %s %s" % (
                    k, type(chain[k]).__name__, type(r).__name__, repr(r)[:80]))
            elif type(r) is not types.FrameType:
                holds = sum(1 for o in gc.get_referents(r) if o is chain[k])
                if holds > 1:
                    problems.append("step %d held %d times by its %s" % (
                        k, holds, type(r).__name__))
    return problems


def is_module_dict(d):
    return any(m is not None and vars(m) is d for m in list(sys.modules.values()))


def thread_frame(root_prefix):
    """The frame the root prefix names: thread NAME, function FUNC."""
    m = re.match(r"<thread (\w+): (\w+)\(\)", root_prefix)
    name, func = m.groups()
    ident = (threading.main_thread().ident if name == "main" else
             next(t.ident for t in threading.enumerate() if t.name == name))
    f = sys._current_frames()[ident]
    while f is not None and f.f_code.co_name != func:
        f = f.f_back
    return f


def selfcheck(truth):
    by_id = {id(o): o for o in gc.get_objects() if type(o) is Marker}
    ignore = {id(by_id)}
    problems = []
    if counts() != truth["counts"]:
        problems.append("counts changed: %r then %r" % (truth["counts"], counts()))
    if len(by_id) != truth["counts"]["Marker"] or len(by_id) != len(truth["markers"]):
        problems.append("%d Markers alive, %d counted, %d planted" % (
            len(by_id), truth["counts"]["Marker"], len(truth["markers"])))
    checked = 0
    for tag, want in sorted(truth["markers"].items()):
        marker = by_id.get(int(want["address"], 16))
        if marker is None or marker.tag != tag:
            problems.append("%s: no Marker at %s" % (tag, want["address"]))
            continue
        try:
            if "root_prefix" in want:
                frame = thread_frame(want["root_prefix"])
                local = want["path"][1:]
                held_by = referrers(marker, ignore)
                if any(r is not frame for r in held_by):
                    problems.append("%s: referrers besides its frame: %r" % (tag, held_by))
                if frame is None or frame.f_locals.get(local) is not marker:
                    problems.append("%s: not local %r of %s" % (tag, local, want["root_prefix"]))
            elif "path_prefix" in want:
                wrapper = evaluate(want["path_prefix"])[-1]
                internals = {id(o) for o in gc.get_referents(wrapper)}
                keys = referrers(marker, ignore)
                ignore.add(id(keys))
                for key in keys:
                    outside = [r for r in referrers(key, ignore)
                               if id(r) not in internals and "lru" not in type(r).__name__]
                    if type(key) is not tuple or outside:
                        problems.append("%s: held outside %s: %r %r" % (
                            tag, want["path_prefix"], key, outside))
                ignore.discard(id(keys))
                if not keys:
                    problems.append("%s: not in the cache" % tag)
            elif want["path"] is None:
                other = [r for r in referrers(marker, ignore)
                         if not (type(r) is Marker or (type(r) is dict and "other" in r))]
                if other or want["reachable"]:
                    problems.append("%s: unreachable marker held by %r" % (tag, other))
            else:
                chain = evaluate(want["path"])
                ignore.add(id(chain))
                if chain[-1] is not marker:
                    problems.append("%s: %s gives %r" % (tag, want["path"], chain[-1]))
                for p in stray_referrers(chain, ignore):
                    problems.append("%s: %s: %s" % (tag, want["path"], p))
                ignore.discard(id(chain))
                del chain
            checked += 1
        except Exception as e:
            problems.append("%s: %s: %s: %s" % (tag, want["path"], type(e).__name__, e))
    for p in problems:
        print("SELFCHECK FAIL " + p, flush=True)
    print("SELFCHECK %s: %d markers checked, %d problems (Python %s)" % (
        "ok" if not problems else "FAILED", checked, len(problems), sys.version.split()[0]),
        flush=True)
    return 1 if problems else 0


SELFCHECK_CODES = {selfcheck.__code__, stray_referrers.__code__, evaluate.__code__,
                   thread_frame.__code__, referrers.__code__}

wait_here()
