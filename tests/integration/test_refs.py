"""`culeak refs` and `culeak objects` on real interpreters, live and from both kinds of core, checked
against the markers.py scenario: every Marker it planted is found at its address with the one
referrer path it has (the unreachable cycle with none), and the per-type tracked counts equal the
scenario's own gc.get_objects() counts.

Each test reports every mismatch it finds at once, not just the first."""
import os
import subprocess
import time

import harness
from harness import Failure, check

SCENARIO = "markers.py"
COUNTED = ("Marker", "Holder", "Slotted")


def address(text):
    return int(text, 16)


def path_problem(want, paths):
    """Why PATHS (shortest first) does not match the ground-truth entry WANT, or None."""
    if not want["reachable"]:
        return None if paths == [] else "unreachable, but paths %r" % paths
    if not paths:
        return "reachable, but no paths"
    got = paths[0]
    if "root_prefix" in want:   # a thread-frame local: <thread NAME: func() at file.py...>.local
        ok = got.startswith(want["root_prefix"]) and got.endswith(">" + want["path"])
        return None if ok else "paths[0] %r, want %r...>%s" % (
            got, want["root_prefix"], want["path"])
    if "path_prefix" in want:   # on through internals (the lru_cache's dict and key tuple)
        ok = got.startswith(want["path_prefix"]) or got.startswith("[*" + want["path_prefix"])
        return None if ok else "paths[0] %r, want %r..." % (got, want["path_prefix"])
    return None if got == want["path"] else "paths[0] %r, want %r" % (got, want["path"])


def refs_problems(doc, truth):
    """Every planted Marker is reported once, typed Marker, with its path; and no other Marker."""
    problems = []
    objects = doc.get("objects")
    if not isinstance(objects, list):
        return ["refs: no `objects` list in %r" % str(doc)[:300]]
    found = {}
    for o in objects:
        a = address(o["address"])
        if a in found:
            problems.append("object %s reported twice" % o["address"])
        found[a] = o
    planted = {address(w["address"]): tag for tag, w in truth["markers"].items()}
    for tag, want in sorted(truth["markers"].items()):
        o = found.get(address(want["address"]))
        if o is None:
            problems.append("%s: marker at %s not reported" % (tag, want["address"]))
            continue
        if o.get("type") != "Marker":
            problems.append("%s: type %r, want 'Marker'" % (tag, o.get("type")))
        if o.get("reachable") is not want["reachable"]:
            problems.append("%s: reachable %r, want %r" % (tag, o.get("reachable"),
                                                          want["reachable"]))
        why = path_problem(want, o.get("paths"))
        if why:
            problems.append("%s: %s" % (tag, why))
    extra = sorted(o["address"] for a, o in found.items() if a not in planted)
    if extra:
        problems.append("%d objects reported that the scenario did not plant: %s" % (
            len(extra), ", ".join(extra[:5])))
    return problems


def objects_problems(doc, truth):
    """`tracked` per type equals the scenario's gc.get_objects() count."""
    types = doc.get("types")
    if not isinstance(types, list):
        return ["objects: no `types` list in %r" % str(doc)[:300]]
    by_name = {}
    for t in types:
        by_name.setdefault(t["type"], []).append(t)
    problems = []
    for name in COUNTED:
        rows = by_name.get(name, [])
        want = truth["counts"][name]
        if len(rows) != 1:
            problems.append("objects: %d rows for type %s, want 1" % (len(rows), name))
            continue
        if rows[0]["tracked"] != want:
            problems.append("objects: %s tracked %r, want %d" % (name, rows[0]["tracked"], want))
        if rows[0]["count"] < rows[0]["tracked"]:
            problems.append("objects: %s count %r below tracked %r" % (
                name, rows[0]["count"], rows[0]["tracked"]))
    return problems


def check_target(target, truth):
    """refs and objects on one target (["--pid", PID] or ["--core", PATH]); all problems at once."""
    problems = []
    for what, args, judge in (
            ("refs", ["refs"] + target + ["--type", "Marker"], refs_problems),
            ("objects", ["objects"] + target, objects_problems)):
        try:
            problems += judge(harness.culeak_json(*args), truth)
        except Failure as e:
            problems.append("%s: %s" % (what, e))
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            problems.append("%s: malformed output (%s: %s)" % (what, type(e).__name__, e))
    if problems:
        raise Failure("%d problems:\n%s" % (len(problems), "\n".join(problems)))


def live(python):
    def test():
        with harness.Process(python, SCENARIO) as p:
            check_target(["--pid", p.pid], p.truth)
            check(p.proc.poll() is None, "scenario died under culeak")
            check(p.status()["TracerPid"] == "0", "still traced after culeak")
    return test


def gcore(python):
    def test():
        with harness.tempdir() as d, harness.Process(python, SCENARIO) as p:
            check_target(["--core", harness.gcore(p.pid, d)] + harness.sysroot_args(python),
                         p.truth)
    return test


def kernel(python):
    def test():
        with harness.tempdir() as d:
            truth, core = harness.kernel_core(python, SCENARIO, [], d)
            check_target(["--core", core] + harness.sysroot_args(python), truth)
    return test


def stripped(python):
    """The no-DWARF path on every version: the same interpreter with a stripped libpython."""
    def test():
        with harness.tempdir() as d:
            env, _ = harness.stripped_libpython(python, d)
            with harness.Process(python, SCENARIO, env=env) as p:
                info = harness.culeak_json("info", "--pid", p.pid)
                check(info["python"]["debug_info"] is False, "libpython copy still has DWARF")
                check_target(["--pid", p.pid], p.truth)
                check_target(["--core", harness.gcore(p.pid, d)], p.truth)
    return test


def by_address(python, tag="history-17"):
    """`refs --addr ADDR`: just that object, with its path."""
    def test():
        with harness.Process(python, SCENARIO) as p:
            want = p.truth["markers"][tag]
            doc = harness.culeak_json("refs", "--pid", p.pid, "--addr", want["address"])
            objects = doc.get("objects")
            check(isinstance(objects, list) and len(objects) == 1,
                  "refs --addr: want exactly one object, got %r" % str(doc)[:300])
            o = objects[0]
            check(address(o["address"]) == address(want["address"]),
                  "refs --addr: address %r, want %r" % (o["address"], want["address"]))
            check(o.get("type") == "Marker", "refs --addr: type %r" % o.get("type"))
            check(o.get("reachable") is True, "refs --addr: reachable %r" % o.get("reachable"))
            why = path_problem(want, o.get("paths"))
            check(why is None, "refs --addr %s: %s" % (tag, why))
    return test


def max_paths(python):
    """--max-paths N: the shortest path first, then one per other referrer, no duplicates."""
    def test():
        with harness.Process(python, "multipath.py") as p:
            addr = p.truth["address"]
            def paths(*extra):
                doc = harness.culeak_json("refs", "--pid", p.pid, "--addr", addr, *extra)
                check(len(doc["objects"]) == 1, "objects: %r" % doc["objects"])
                return doc["objects"][0]["paths"]
            want = p.truth["paths"]
            check(paths() == want[:1], "default: %r" % paths())
            check(paths("--max-paths", "2")[0] == want[0], "first of two")
            got = paths("--max-paths", "10")
            check(got[0] == want[0] and sorted(got) == sorted(want),
                  "--max-paths 10: got %r, want %r" % (got, want))
            doc = harness.culeak_json("refs", "--pid", p.pid, "--addr", p.truth["set_member"],
                                      "--max-paths", "5")
            got = doc["objects"][0]["paths"]
            check(sorted(got) == sorted(p.truth["set_paths"]), "set member: got %r" % got)
    return test


def gc_collecting(python):
    """A process stopped inside a garbage collection is walked, with a warning that says so."""
    def test():
        with harness.Process(python, "gc_collecting.py") as p:
            doc = harness.culeak_json("objects", "--pid", p.pid)
            check(any("during a garbage collection" in w for w in doc["warnings"]),
                  "warnings: %r" % doc["warnings"])
            check(doc["objects"] > 1000, "objects: %r" % doc["objects"])
        with harness.Process(python, "multipath.py") as p:
            doc = harness.culeak_json("objects", "--pid", p.pid)
            check(not any("garbage collection" in w for w in doc["warnings"]),
                  "warning without a collection: %r" % doc["warnings"])
    return test


def frame_lines(python, kind):
    """Frame roots name the thread, the function and the line it is executing."""
    def judge(target, truth):
        doc = harness.culeak_json("refs", *target, "--type", "Marker")
        got = {o["address"]: o["paths"] for o in doc["objects"]}
        for name, m in truth["markers"].items():
            paths = got.get(hex(int(m["address"], 16)))
            check(paths == [m["path"]], "%s: got %r, want %r" % (name, paths, m["path"]))

    def test():
        with harness.tempdir() as d:
            if kind == "kernel-core":
                truth, core = harness.kernel_core(python, "frames.py", [], d)
                judge(["--core", core] + harness.sysroot_args(python), truth)
                return
            with harness.Process(python, "frames.py") as p:
                judge(["--pid", p.pid] if kind == "live" else
                      ["--core", harness.gcore(p.pid, d)] + harness.sysroot_args(python), p.truth)
    return test


def looped_gc_list(python):
    """Issue 14: a GC list whose links loop short of its head (here generation 2's second node
    points back at its first, written into the scenario by gdb before its gcore) costs a few
    steps, not the 200M bound (21 s before), and is said: a warning, the rest still walked."""
    def test():
        head = "_PyRuntime.interpreters.main->gc.generations[2].head._gc_next"
        with harness.tempdir() as d, harness.Process(python, "idle.py") as p:
            core = os.path.join(d, "looped.core")
            r = subprocess.run(["gdb", "-batch", "-p", str(p.pid), "-ex",
                                "set var *(unsigned long *)(*(unsigned long *)(%s)) = %s"
                                % (head, head), "-ex", "gcore %s" % core],
                               capture_output=True, text=True, timeout=300)
            check(os.path.exists(core), "gdb could not loop the list: %s" % r.stderr[-1000:])
            start = time.time()
            doc = harness.culeak_json("objects", "--core", core)
            took = time.time() - start
        broken = [w for w in doc["warnings"] if w.startswith("GC generation 2 list is broken")]
        check(len(broken) == 1, "warnings: %r" % doc["warnings"])
        check(int(broken[0].split()[-2]) <= 10, "walked on past the loop: %r" % broken[0])
        check(took < 10, "objects took %.1f s on a looped list" % took)
        check(doc["objects"] > 1000, "objects: %r" % doc["objects"])
    return test


# Cells only make check-full runs: trixie's 3.13.5 has the layout sid's 3.13.18 already tests.
FULL_ONLY = {"trixie-3.13"}


def tests():
    pythons = harness.interpreters()
    cells = []
    for name, python in pythons:
        cells.append((name, "live", live(python)))
        cells.append((name, "gcore", gcore(python)))
        cells.append((name, "kernel-core", kernel(python)))
        if name.startswith("pyenv-"):
            cells.append((name, "stripped-libpython", stripped(python)))
    for name, python in pythons:
        cells.append((name, "max-paths", max_paths(python)))
        cells.append((name, "gc-collecting", gc_collecting(python)))
        for kind in ("live", "gcore", "kernel-core"):
            cells.append((name, "frame-lines-%s" % kind, frame_lines(python, kind)))
    for name, what, fn in cells:
        yield ("%s:%s" % (name, what), fn) + (("full",) if name in FULL_ONLY else ())
    yield "pyenv-3.12:addr", by_address(dict(pythons)["pyenv-3.12"])
    yield "pyenv-3.11:looped-gc-list", looped_gc_list(dict(pythons)["pyenv-3.11"])
