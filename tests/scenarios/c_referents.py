"""Scenario: objects that only a C type's tp_traverse knows about. Each case keeps one C object
in a global of __main__ and plants markers that nothing else holds: a mappingproxy's dict (and
inspect.Signature's parameters); a pending asyncio Task's coroutine locals; a Future's result;
threading.local attributes of two live threads; ContextVar values in a copied Context, a
Token's old value, a ContextVar's default; an Element's 202 children, text and tail (and text a
TreeBuilder left as a list still to be joined); a sqlite3 connection's statement cache. Markers
are Marker instances, or strings made at run time where the C type holds only strings.

Prints one JSON line, then READY, and waits (gc is disabled, so nothing moves):
  {"pid", "version",
   "cases": {case: {"holder": "__main__.NAME",     the C object's own path
                    "address": hex,                 the C object
                    "type": "module.qualname",
                    "markers": {tag: {"address": hex,
                                      "path": str or null,        the exact path, where known
                                      "path_prefix": str}},       what the path starts with
                    "referents": [{"address": hex, "type": name, "checkable": bool,
                                   "size": int or null}]}},
                                                    gc.get_referents(C object), less types,
                                                    None and ints; checkable: few enough
                                                    referrers that --max-paths lists them all;
                                                    size: own_size
   "problems": [str]}                               the scenario's own check: no marker is
                                                    reachable once the C objects are left out

argv: [--abort]   dump core through the kernel instead of waiting"""
import asyncio
import contextvars
import gc
import inspect
import itertools
import operator
import json
import os
import queue
import sqlite3
import sys
import threading
import time
import types
import xml.etree.ElementTree as ET

gc.disable()

HOLDERS = {}   # case -> name of the __main__ global holding its C object
MARKERS = {}   # case -> tag -> ground truth (strings only, never the marker itself)


class Marker:
    """A leak to find."""

    def __init__(self, tag):
        self.tag = tag


def plant(case, tag, path=None, prefix=None, obj=None):
    """A new Marker (or obj) planted for case; the caller stores it in exactly one place."""
    m = Marker(tag) if obj is None else obj
    MARKERS.setdefault(case, {})[tag] = {"address": hex(id(m)), "path": path,
                                        "path_prefix": prefix or path}
    return m


# --- 1. mappingproxy; inspect.Signature keeps its parameters in one --------------------------
HOLDERS["mappingproxy"] = "PROXY"
PROXY = types.MappingProxyType({"k": plant("mappingproxy", "proxy-value", "__main__.PROXY['k']")})


def _signature_parameters():
    p = inspect.Parameter("p", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=plant(
        "signature", "signature-default", "__main__.SIGNATURE_PARAMS['p']._default"))
    return inspect.Signature([p]).parameters   # the mappingproxy; the Signature goes


HOLDERS["signature"] = "SIGNATURE_PARAMS"
SIGNATURE_PARAMS = _signature_parameters()

# --- 2. asyncio: a pending Task (its coroutine's locals), a Future with a result --------------
LOOP = asyncio.new_event_loop()


async def _pending():
    waiter = LOOP.create_future()   # never resolved: the task stays suspended on it
    local_marker = plant("task", "task-coro-local",
                         "__main__.TASK._coro.gi_frame.f_locals['local_marker']")
    await waiter
    return local_marker


HOLDERS["task"] = "TASK"
TASK = LOOP.create_task(_pending())
for _ in range(3):
    LOOP.run_until_complete(asyncio.sleep(0))
if TASK.done() or TASK.get_coro().cr_frame is None or TASK.get_coro().cr_await is None:
    raise SystemExit("the task did not suspend")
HOLDERS["future"] = "FUTURE"
FUTURE = LOOP.create_future()
FUTURE.set_result(plant("future", "future-result", "__main__.FUTURE._result"))

# --- 3. threading.local: an attribute set in the main thread and in a live worker -------------
HOLDERS["thread-local"] = "LOCAL"
LOCAL = threading.local()
LOCAL.value = plant("thread-local", "local-main", "__main__.LOCAL.value")
_worker_ready = threading.Event()
_worker_release = threading.Event()


def _local_worker():
    LOCAL.value = plant("thread-local", "local-worker", "__main__.LOCAL.value")
    _worker_ready.set()
    _worker_release.wait()


threading.Thread(target=_local_worker, name="local-worker", daemon=True).start()
_worker_ready.wait()

# --- 4. contextvars: values in a copied Context (40: enough for HAMT array nodes), a Token's
# old value, a ContextVar's default ------------------------------------------------------------
HOLDERS["context"] = "CONTEXT"
CONTEXT = contextvars.copy_context()
VARS = [contextvars.ContextVar("v%d" % i) for i in range(40)]


def _set_vars():
    for i, v in enumerate(VARS):
        # the key, a ContextVar, by its own path (no address)
        v.set(plant("context", "context-var-%d" % i, "__main__.CONTEXT[__main__.VARS[%d]]" % i))


CONTEXT.run(_set_vars)


def _colliding_vars():
    """Two ContextVars whose hashes fold to the same 32 bits (the HAMT's hash): in one Context
    they share a collision node. A birthday search: about 80 000 variables on average."""
    seen = {}
    for i in range(1 << 21):
        v = contextvars.ContextVar("c%d" % i)
        h = hash(v)
        folded = (h ^ (h >> 32)) & 0xffffffff
        if folded in seen:
            return [seen[folded], v]
        seen[folded] = v
    raise SystemExit("no two ContextVars with the same 32-bit hash")


def _set_colliding():
    for i, v in enumerate(COLLIDING_VARS):
        v.set(plant("colliding", "colliding-var-%d" % i,
                    "__main__.COLLIDING[__main__.COLLIDING_VARS[%d]]" % i))


HOLDERS["colliding"] = "COLLIDING"
COLLIDING = contextvars.copy_context()
COLLIDING_VARS = _colliding_vars()
COLLIDING.run(_set_colliding)


def _has_collision_node(obj, depth=0):
    if type(obj).__name__ == "hamt_collision_node":
        return True
    return depth < 10 and any(_has_collision_node(r, depth + 1) for r in gc.get_referents(obj)
                              if type(r).__name__.startswith("hamt"))


TOKEN_VAR = contextvars.ContextVar("token_var")


def _token():
    TOKEN_VAR.set(plant("token", "token-old-value", "__main__.TOKEN.old_value"))
    return TOKEN_VAR.set(None)   # its old value is the marker, which no Context keeps


HOLDERS["token"] = "TOKEN"
TOKEN = contextvars.copy_context().run(_token)
HOLDERS["var-default"] = "DEFAULT_VAR"
DEFAULT_VAR = contextvars.ContextVar("with_default", default=plant(
    "var-default", "var-default", "__main__.DEFAULT_VAR.<default>"))

# --- 5. xml.etree: 202 children (an array of their own) each with a marked attribute; up to 4
# children sit in the element itself; text a TreeBuilder keeps as a list to join later --------
HOLDERS["element"] = "ELEMENT"
ELEMENT = ET.Element("root")
for _i in range(202):
    ET.SubElement(ELEMENT, "child", mark=plant(
        "element", "element-child-%d" % _i, "__main__.ELEMENT[%d].attrib['mark']" % _i))
del _i
ELEMENT.text = plant("element", "element-text", "__main__.ELEMENT.text")
ELEMENT[0].tail = plant("element", "element-tail", "__main__.ELEMENT[0].tail")
HOLDERS["small-element"] = "SMALL_ELEMENT"
SMALL_ELEMENT = ET.Element("small")
ET.SubElement(SMALL_ELEMENT, "c").append(ET.Element("leaf", mark=plant(
    "small-element", "small-element-grandchild", "__main__.SMALL_ELEMENT[0][0].attrib['mark']")))


def _joined():
    tb = ET.TreeBuilder()
    tb.start("joined", {})
    for i in range(2):   # two chunks: the element keeps the list, flagged to be joined
        tb.data(plant("joined-text", "joined-text-%d" % i, "__main__.JOINED.text[%d]" % i,
                      obj="chunk %d of %d" % (i, id(tb))))
    tb.end("joined")
    return tb.close()


HOLDERS["joined-text"] = "JOINED"
JOINED = _joined()   # JOINED.text is never read: that would join the list


# --- 6. sqlite3: the connection's statement cache holds each statement's SQL ------------------
def _run_statement():
    sql = "SELECT %d AS culeak_marker" % id(CONNECTION)   # made at run time: the cache's only
    CONNECTION.execute(sql).fetchall()
    plant("sqlite", "statement-sql", prefix="__main__.CONNECTION.<statement_cache>", obj=sql)


HOLDERS["sqlite"] = "CONNECTION"
CONNECTION = sqlite3.connect(":memory:")
_run_statement()


# --- 7. iterators and views: each the only holder of what it walks (a training loop's
# `batches = itertools.cycle(loader)` holds every batch) --------------------------------------
class Seq:
    """A sequence by __len__ and __getitem__ only: iter() and reversed() of it are C types."""

    def __init__(self, item):
        self.item = item

    def __len__(self):
        return 1

    def __getitem__(self, i):
        if i != 0:
            raise IndexError(i)
        return self.item


def iterator_case(case, name, make, path_prefix=None):
    """A C iterator or view that make builds from a marker, kept in __main__.NAME."""
    HOLDERS[case] = name
    globals()[name] = make(plant(case, case + "-item", prefix=path_prefix or "__main__." + name))


iterator_case("list-iterator", "LIST_ITER", lambda m: iter([m]))
iterator_case("list-reverseiterator", "LIST_REV_ITER", lambda m: reversed([m]))
iterator_case("tuple-iterator", "TUPLE_ITER", lambda m: iter((m, "tuple-iterator")))
iterator_case("seq-iterator", "SEQ_ITER", lambda m: iter(Seq(m)))
iterator_case("reversed", "REVERSED", lambda m: reversed(Seq(m)))
iterator_case("set-iterator", "SET_ITER", lambda m: iter({m}))
iterator_case("dict-iterator", "DICT_ITER", lambda m: iter({"k": m}.values()))
iterator_case("dict-view", "DICT_VIEW", lambda m: {"k": m}.items())
iterator_case("enumerate", "ENUMERATE", lambda m: enumerate([m]))
iterator_case("zip", "ZIP", lambda m: zip([m], ["zip"]))
iterator_case("map", "MAP", lambda m: map(len, [m]))
iterator_case("filter", "FILTER", lambda m: filter(None, [m]))


iterator_case("chain", "CHAIN", lambda m: itertools.chain([m], []))
iterator_case("islice", "ISLICE", lambda m: itertools.islice([m], 1))
iterator_case("takewhile", "TAKEWHILE", lambda m: itertools.takewhile(bool, [m]))
iterator_case("dropwhile", "DROPWHILE", lambda m: itertools.dropwhile(bool, [m]))
iterator_case("starmap", "STARMAP", lambda m: itertools.starmap(max, [(m,)]))
iterator_case("filterfalse", "FILTERFALSE", lambda m: itertools.filterfalse(None, [m]))
iterator_case("compress", "COMPRESS", lambda m: itertools.compress([m], [1]))
iterator_case("accumulate", "ACCUMULATE", lambda m: itertools.accumulate([m], initial=0))
iterator_case("callable-iterator", "CALL_ITER", lambda m: iter(lambda: None, m))


def _cycle(m):
    c = itertools.cycle([m, "cycle"])
    next(c)   # m is now in the cycle's saved items too
    return c


iterator_case("cycle", "CYCLE", _cycle)


def _tee(m):
    a, b = itertools.tee(iter([m, "tee"]))
    next(a)   # m is now in the data the two share, until b reads it
    return b


def _groupby(m):
    g = itertools.groupby([m], key=id)
    return next(g)[1]   # the group: it holds the groupby, which holds m as its current value


def _simple_queue(m):
    q = queue.SimpleQueue()
    q.put("first")
    q.get()        # 3.13+: the ring buffer's live items no longer start at 0
    q.put(m)
    return q


iterator_case("tee", "TEE", _tee)
iterator_case("groupby", "GROUPBY", _groupby)
iterator_case("product", "PRODUCT", lambda m: itertools.product([m], ["product"]))
iterator_case("methodcaller", "METHODCALLER", lambda m: operator.methodcaller("f", m, k=m))
iterator_case("itemgetter", "ITEMGETTER", lambda m: operator.itemgetter(m, "itemgetter"))
iterator_case("simple-queue", "SIMPLE_QUEUE", _simple_queue)


# --- ground truth --------------------------------------------------------------------------
def referents(obj):
    """gc.get_referents(obj), each marked checkable when few objects refer to it."""
    out = []
    for r in gc.get_referents(obj):
        if r is None or isinstance(r, (type, int)):
            continue   # shared far and wide: --max-paths cannot list every referrer
        out.append({"address": hex(id(r)), "type": type(r).__name__,
                    "checkable": len(gc.get_referrers(r)) <= 8, "size": own_size(r)})
    return out


def own_size(obj):
    """obj's size as culeak counts it (no GC header, nothing allocated apart), where CPython's
    __sizeof__ counts the same: instances sized by object.__sizeof__ (basic size and items),
    tuples, bytes, and ASCII strs (a non-ASCII str may hold a UTF-8 copy apart). Else None."""
    t = type(obj)
    if t is str and not obj.isascii():
        return None
    if t in (str, bytes, tuple) or t.__sizeof__ is object.__sizeof__:
        return t.__sizeof__(obj)
    return None


def reachable_without(blocked):
    """The ids gc.get_referents reaches from the modules and every thread's frames without
    entering an object whose id is in blocked (nor this check's own frames)."""
    own = {reachable_without.__code__, check.__code__, main.__code__}
    frames = []
    for f in sys._current_frames().values():
        while f is not None:
            if f.f_code not in own:
                frames.append(f)
            f = f.f_back
    todo = [m for m in list(sys.modules.values()) if m is not None] + frames
    seen = set(blocked)
    seen.update(id(x) for x in (todo, frames, seen))
    while todo:
        o = todo.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        todo.extend(gc.get_referents(o))
    return seen


def check(cases):
    """No marker is reachable once the C objects are left out: each one's only route goes
    through one (the test checks it is its own case's)."""
    seen = reachable_without({int(c["address"], 16) for c in cases.values()})
    problems = ["%s: %s reachable without the C objects" % (name, tag)
                for name, c in sorted(cases.items()) for tag, m in sorted(c["markers"].items())
                if int(m["address"], 16) in seen]
    if not _has_collision_node(COLLIDING):
        problems.append("colliding: the Context has no HAMT collision node")
    return problems


def main():
    cases = {}
    for name, holder in HOLDERS.items():
        obj = globals()[holder]
        cases[name] = {"holder": "__main__." + holder, "address": hex(id(obj)),
                       "type": "%s.%s" % (type(obj).__module__, type(obj).__qualname__),
                       "markers": MARKERS[name], "referents": referents(obj)}
        del obj
    v = sys.version_info
    level = {"alpha": "a", "beta": "b", "candidate": "rc", "final": ""}[v.releaselevel]
    truth = {
        "pid": os.getpid(),
        "version": "%d.%d.%d%s" % (v.major, v.minor, v.micro,
                                   level + str(v.serial) if level else ""),
        "cases": cases,
        "problems": check(cases),
    }
    print(json.dumps(truth), flush=True)
    print("READY", flush=True)
    if "--abort" in sys.argv:
        os.abort()
    while True:
        time.sleep(3600)


main()
