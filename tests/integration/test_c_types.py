"""Every GC-tracked C type of the standard library (issue 41's sweep), on real interpreters,
against the c_types.py scenario, which imports every module it can and gives up to three live
(or made) instances of each such type with their gc.get_referents: culeak's referents of each
instance (refs --referents) include every one gc.get_referents gives, or the type has a line in
NOT_READ below saying why culeak does not read it, and culeak then says so (fields_read false:
what only such an object holds is found where the reference counts confirm it). A type with
neither an instance nor a SKIP line in the scenario fails, and so does a NOT_READ line for a
type culeak now reads.

Each test reports every mismatch it finds at once."""
import harness
from harness import Failure

SCENARIO = "c_types.py"
MAX_ADDRS = 256  # culeak takes this many --addr at once

# C types culeak has no reader for: why, and what that leaves unnamed.
NOT_READ = {
    "PyCapsule": "its traverse function is its module's (3.13+: the type of a C API it exports)",
    # ctypes' metaclasses: their classes' traverse visits what the class's StgDict (3.9-3.12)
    # or StgInfo (3.13+) holds: prototypes, argument types, the _ctypes module; no data
    "_ctypes.PyCFuncPtrType": "a ctypes class's StgDict or StgInfo",
    "_ctypes.PyCPointerType": "a ctypes class's StgDict or StgInfo",
    "_ctypes.PyCSimpleType": "a ctypes class's StgDict or StgInfo",
    "_ctypes.PyCStructType": "a ctypes class's StgDict or StgInfo",
    "_ctypes.PyCArrayType": "a ctypes class's StgDict or StgInfo",
    "_ctypes.UnionType": "a ctypes class's StgDict or StgInfo",
    "_elementtree._element_iterator": "its stack of parents is a C array; the tree it walks is "
                                      "held by the tree's own holder",
    "_multibytecodec.MultibyteCodec": "holds its codec module",
    "_pickle.Pickler": "its memo is a C hash table (PyMemoTable) of the objects pickled: not "
                       "read; what only the memo holds is held from C",
    "_pickle.Unpickler": "its memo and stack are C arrays: not read; what only they hold is "
                         "held from C",
    "_sre.SRE_Template": "a replacement template's literal strings, in a variable-size array",
    "decimal.Context": "its traps and flags: two SignalDicts of booleans",
    "decimal.ContextManager": "the decimal contexts it switches between",
    "pyexpat.xmlparser": "its handler callables, one per event, in a C array",
    "xml.etree.ElementTree.TreeBuilder": "its factories and the element stack of a parse",
    "xml.etree.ElementTree.XMLParser": "its target's bound handlers, one per event",
}

# A C object that holds its referents through objects of its own that the collector does not
# track: culeak names the way (an lru cache's dict of links), gc.get_referents the ends. Steps
# and types followed through, two deep.
THROUGH_STEPS = {".<lru_cache>"}
THROUGH_TYPES = {"functools._lru_list_elem"}


def address(text):
    return int(text, 16)


def refs(target, addrs):
    found = {}
    addrs = sorted(set(addrs))
    for at in range(0, len(addrs), MAX_ADDRS):
        args = ["refs"] + target + ["--referents"]
        for a in addrs[at:at + MAX_ADDRS]:
            args += ["--addr", hex(a)]
        doc = harness.culeak_json(*args)
        found.update((address(o["address"]), o) for o in doc.get("objects", []))
    return found


def through(obj):
    return [address(r["address"]) for r in obj.get("referents") or []
            if r["step"] in THROUGH_STEPS or r["type"] in THROUGH_TYPES]


def referents(obj, inner, depth=2):
    """obj's referents as culeak read them, and those of what it holds through (inner: their
    rows)."""
    out = {address(r["address"]) for r in obj.get("referents") or []}
    for a in through(obj) if depth else []:
        if a in inner:
            out |= referents(inner[a], inner, depth - 1)
    return out


def check_target(target, truth):
    problems = ["scenario: %s" % p for p in truth["problems"]]
    problems += ["%s: no instance made, and no SKIP line says why" % t for t in truth["unmade"]]
    types = truth["types"]
    found = refs(target, [address(i["address"]) for t in types.values() for i in t["instances"]])
    inner = {}
    for _ in range(2):
        more = {a for o in list(found.values()) + list(inner.values()) for a in through(o)}
        more -= set(inner)
        inner.update(refs(target, more) if more else {})
    read, not_read = 0, 0
    for name, t in sorted(types.items()):
        for inst in t["instances"]:
            o = found.get(address(inst["address"]))
            if not o or o.get("type") is None:
                problems.append("%s %s: not found" % (name, inst["address"]))
                continue
            mine = referents(o, inner)
            missing = sorted({r[1] for r in inst["referents"] if address(r[0]) not in mine})
            if not missing:
                read += 1
            elif name in NOT_READ and o.get("fields_read") is False:
                not_read += 1
            elif name in NOT_READ:
                problems.append("%s %s: misses %s, yet says it read its fields" % (
                    name, inst["address"], missing))
            else:
                problems.append("%s %s: misses %s (fields_read %s)" % (
                    name, inst["address"], missing, o.get("fields_read")))
        if name in NOT_READ and t["instances"] and all(
                found.get(address(i["address"]), {}).get("fields_read") for i in t["instances"]):
            problems.append("%s: culeak reads it now; remove its NOT_READ line" % name)
    if problems:
        raise Failure("%d problems (%d types, %d instances complete, %d not read):\n%s" % (
            len(problems), len(types), read, not_read, "\n".join(problems)))


def live(python):
    def test():
        with harness.Process(python, SCENARIO) as p:
            check_target(["--pid", p.pid], p.truth)
    return test


def tests():
    for name, python in harness.interpreters():
        representative = name in ("pyenv-3.9", "pyenv-3.13", "sid-3.14", "sid-3.15")
        yield "%s:live" % name, live(python), *(() if representative else ("full",))
