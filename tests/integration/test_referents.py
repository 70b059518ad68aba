"""References only a C type's tp_traverse knows (mappingproxy, asyncio Task and Future,
threading.local, contextvars, xml.etree Element, sqlite3's statement cache), on real
interpreters, against the c_referents.py scenario: every marker it planted is reachable, by a
path through its case's C object (the exact path where it is the same in every version), and
every object gc.get_referents gives for a C object is reached from it (one of its --max-paths
paths goes through the C object).

Each test reports every mismatch it finds at once, not just the first."""
import harness
from harness import Failure, check

SCENARIO = "c_referents.py"
MAX_PATHS = 16   # the scenario marks a referent checkable when at most 8 objects refer to it
MAX_ADDRS = 256  # culeak takes this many --addr at once


def address(text):
    return int(text, 16)


def through(path, holder):
    """Whether path goes through the object at holder: holder itself (a step that prints
    nothing, like a mappingproxy's dict) or holder and then a step of its own."""
    if path.startswith("[*"):   # a dict key itself: [*d][i], d the path through the holder
        path = path[2:]
    return path == holder or (path.startswith(holder) and path[len(holder)] in ".[]")


def marker_problems(case, tag, want, got):
    if got is None:
        return ["%s: %s at %s not reported" % (case["holder"], tag, want["address"])]
    paths = got.get("paths") or []
    if got.get("reachable") is not True or not paths:
        return ["%s: %s reachable %r, paths %r (want a path through it)" % (
            case["holder"], tag, got.get("reachable"), paths)]
    first = paths[0]
    if want["path"] is not None and first != want["path"]:
        return ["%s: paths[0] %r, want %r" % (tag, first, want["path"])]
    # a dict key itself is named by its place, [*d][i], which wraps the path that leads to d
    prefixed = first.startswith(want["path_prefix"]) or first.startswith("[*" + want["path_prefix"])
    if not prefixed or not through(first, case["holder"]):
        return ["%s: paths[0] %r, want %s..." % (tag, first, want["path_prefix"])]
    return []


def referent_problems(case, referent, got):
    if got is None:
        return ["%s: its referent %s %s not reported" % (
            case["holder"], referent["type"], referent["address"])]
    problems = []
    if referent.get("size") is not None and got.get("size") != referent["size"]:
        problems.append("%s: its referent %s %s has size %s, __sizeof__ says %d" % (
            case["holder"], referent["type"], referent["address"], got.get("size"),
            referent["size"]))
    paths = got.get("paths") or []
    if not any(through(p, case["holder"]) for p in paths):
        problems.append("%s: its referent %s %s not reached from it: paths %r" % (
            case["holder"], referent["type"], referent["address"], paths))
    return problems


def check_target(target, truth):
    """One `refs` over every marker and every checkable referent; all problems at once."""
    problems = ["scenario: %s" % p for p in truth["problems"]]
    cases = truth["cases"]
    wanted = set()
    for c in cases.values():
        wanted.update(address(m["address"]) for m in c["markers"].values())
        wanted.update(address(r["address"]) for r in c["referents"] if r["checkable"])
    found = {}
    wanted = sorted(wanted)
    for at in range(0, len(wanted), MAX_ADDRS):
        args = ["refs"] + target + ["--max-paths", MAX_PATHS]
        for a in wanted[at:at + MAX_ADDRS]:
            args += ["--addr", hex(a)]
        doc = harness.culeak_json(*args)
        found.update((address(o["address"]), o) for o in doc.get("objects", []))
    for name, c in sorted(cases.items()):
        for tag, want in sorted(c["markers"].items()):
            problems += marker_problems(c, tag, want, found.get(address(want["address"])))
        for r in c["referents"]:
            if r["checkable"]:
                problems += referent_problems(c, r, found.get(address(r["address"])))
    if problems:
        raise Failure("%d problems (Python %s):\n%s" % (len(problems), truth["version"],
                                                         "\n".join(problems)))


def live(python):
    def test():
        with harness.Process(python, SCENARIO) as p:
            check_target(["--pid", p.pid], p.truth)
            check(p.proc.poll() is None, "scenario died under culeak")
    return test


def gcore(python):
    def test():
        with harness.tempdir() as d, harness.Process(python, SCENARIO) as p:
            check_target(["--core", harness.gcore(p.pid, d)] + harness.sysroot_args(python),
                         p.truth)
    return test


def tests():
    pythons = harness.interpreters()
    for name, python in pythons:
        if name == "trixie-3.13":   # sid's 3.13.18 has its layout: make check-full only
            yield "%s:live" % name, live(python), "full"
        else:
            yield "%s:live" % name, live(python)
    yield "pyenv-3.13:gcore", gcore(dict(pythons)["pyenv-3.13"])
    yield "sid-3.14:gcore", gcore(dict(pythons)["sid-3.14"])
    yield "sid-3.15:gcore", gcore(dict(pythons)["sid-3.15"])
