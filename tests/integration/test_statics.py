"""References held by a C extension's static data (cpython/statics.h), against static_refs.py: a
real extension (tests/scenarios/ext/static_refs.c), built here for each interpreter, keeps an
object in a static with a reference of its own, and another's address with none. The kept object
is reached from a root named after the extension and its static, with no reference left
unexplained, where the process counts one reference from outside; the borrowed address makes no
holder; no object has more references found than its count. An untracked object only a static
holds (a tuple of strs) is walked, so what it holds is explained through it; an object only the
module's state holds is named from it, `static_refs.<state+0?>`; one only a malloc'ed cell holds is
held from C, its reference not explained, and named from nothing. With torch, the static is the leak
report's holder of a tensor and retains what releasing it frees in a fork of the job. Live, from
a core and from a dump (which holds the libraries' data it read, and no more)."""
import os
import subprocess

import harness
from harness import Failure, check, check_eq

SOURCE = os.path.join(harness.SCENARIOS, "ext", "static_refs.c")
SYSTEM_PY = "/usr/bin/python3"


def build(python, directory):
    """static_refs.c built for python, in directory."""
    r = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['include']);"
                        "print(sysconfig.get_config_var('EXT_SUFFIX'))"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, "%s cannot say where its headers are: %s" % (python, r.stderr))
    include, suffix = r.stdout.split()
    out = os.path.join(directory, "static_refs" + suffix)
    r = subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-g", "-I", include, SOURCE, "-o", out],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "building static_refs for %s failed: %s" % (python, r.stderr))
    return directory


def target_args(kind, p, d):
    if kind == "live":
        return ["--pid", p.pid]
    core = harness.gcore(p.pid, d)
    if kind == "gcore":
        return ["--core", core]
    dump = os.path.join(d, "job.cldump")
    harness.culeak("dump", "--core", core, "-o", dump)
    return ["--dump", dump]


def inspect(python, kind, with_torch=False):
    def test():
        with harness.tempdir() as d:
            args = [build(python, d)] + (["torch"] if with_torch else [])
            with harness.Process(python, "static_refs.py", *args) as p:
                target = target_args(kind, p, d)
                truth = p.truth
                refs = harness.culeak_json("refs", *target, *sum(
                    (["--addr", hex(truth[k])] for k in ("kept", "borrowed", "untracked", "far",
                                                         "in_state", "in_heap",
                                                         "after_type")), []))
                balance = harness.culeak_json("balance", *target)
                summary = harness.culeak_json("summary", *target) if with_torch else None
        check_eq(truth["kept_outside"], 1, "references the process counts from outside the kept "
                 "object (the static's)")
        check_eq(truth["borrowed_outside"], 0, "references from outside the borrowed object")
        check_eq(truth["after_type_outside"], 1, "references from outside the object kept after "
                 "the static type")
        check_eq(truth["untracked_tuple_tracked"], False, "the untracked str's tuple is tracked")
        check_eq((truth["untracked_refs"], truth["in_state_refs"]), (1, 1),
                 "references to the untracked str and to the module state's Marker")
        check_eq(truth["in_heap_refs"], 1, "references to the Marker a malloc'ed cell holds")
        got = {int(o["address"], 16): o for o in refs["objects"]}
        problems = ["%s: %d more references found than its count holds" % (o["type"], o["references"])
                    for o in balance["overcounted"]]
        kept, borrowed = got.get(truth["kept"]), got.get(truth["borrowed"])
        if not kept or not kept["paths"] or "static_refs" not in kept["paths"][0] or \
                "kept" not in kept["paths"][0]:
            problems.append("the kept object: paths %r, want one from the root of static_refs's "
                            "`kept`" % (kept and kept["paths"]))
        if kept and kept["unexplained"] != 0:
            problems.append("the kept object: %d references not explained" % kept["unexplained"])
        # a static word right after a static type is read: the type is a PyTypeObject, though its
        # metatype's size is a heap type's
        after = got.get(truth["after_type"])
        if not after or after["unexplained"] != 0 or not after["paths"] or \
                "after_type+" not in after["paths"][0]:
            problems.append("the Marker only the word after a static type holds: %r, want every "
                            "reference explained, its path from `after_type+N`" % after)
        # a static past the file's pages belongs to its library all the same: named after it
        far = got.get(truth["far"])
        if not far or far["unexplained"] != 0 or not far["paths"] or \
                not far["paths"][0].startswith("<static_refs.") or "far+0x10000>" not in far["paths"][0]:
            problems.append("the Marker only a static 64 KiB into .bss holds: %r, want every "
                            "reference explained, its path from <static_refs...: far+0x10000>" % far)
        # an untracked object only a static holds is walked: its str is explained, through it
        untracked, in_state = got.get(truth["untracked"]), got.get(truth["in_state"])
        if not untracked or untracked["unexplained"] != 0 or not untracked["paths"] or \
                not untracked["paths"][0].endswith("kept_untracked>[0]"):
            problems.append("the str only an untracked tuple in a static holds: %r, want every "
                            "reference explained, its path through `kept_untracked`" % untracked)
        if not in_state or in_state["unexplained"] != 0 or not in_state["paths"] or \
                in_state["paths"][0] != "static_refs.<state+0?>":
            problems.append("the Marker only the module's state holds: %r, want every reference "
                            "explained, its path static_refs.<state+0?>" % in_state)
        # the C heap is not read for words: freed memory keeps stale ones, which would make a
        # holder of a leaked count (test_books), so a malloc'ed cell's object is held from C
        in_heap = got.get(truth["in_heap"])
        if not in_heap or in_heap["unexplained"] != 1 or in_heap["paths"] or \
                not (in_heap["unreached"] or "").startswith("held from C: no root reaches it"):
            problems.append("the Marker only a malloc'ed cell holds: %r, want held from C with 1 "
                            "reference not explained, and no path" % in_heap)
        if not borrowed or any("static_refs" in path for path in borrowed["paths"]):
            problems.append("the borrowed address made a holder: %r" % (borrowed and borrowed["paths"]))
        if summary is not None:
            holders = {h["holder"]: h for h in summary["holders"]}
            static = [h for name, h in holders.items() if "static_refs" in name and "kept" in name]
            have = static[0]["retained_by_device"].get("cpu", 0) if static else None
            if have != truth["freed"]:
                problems.append("the static holder retains %r bytes, releasing it freed %d "
                                "(holders: %s)" % (have, truth["freed"], sorted(holders)[:8]))
        if problems:
            raise Failure("\n".join(problems))
    return test


def tests():
    pythons = dict(harness.interpreters())
    yield "torch-2.13:live", inspect(harness.TORCH_VENV, "live", with_torch=True)
    yield "torch-2.13:gcore", inspect(harness.TORCH_VENV, "gcore", with_torch=True)
    yield "torch-2.13:dump", inspect(harness.TORCH_VENV, "dump", with_torch=True)
    yield "system-3.11:live", inspect(SYSTEM_PY, "live")
    for name in ("pyenv-3.9", "pyenv-3.10", "pyenv-3.11", "pyenv-3.12", "pyenv-3.13"):
        yield "%s:live" % name, inspect(pythons[name], "live"), \
            *(() if name in ("pyenv-3.9", "pyenv-3.13") else ("full",))
