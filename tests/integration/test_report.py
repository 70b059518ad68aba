"""The leak report people read (`culeak summary`): for each classic cause of a training-memory leak
(tests/scenarios/leak_causes.py), the report's first holder is the leaking variable, in text and
JSON; no text line of summary or tensors is wider than 160 columns without --full; a user's
global names a tensor before a library frame's local; two inspections of a stopped job give
identical reports; --type takes qualified names; and snapshot, diff and watch (CLI and gdb, one
file format) name only what grew; a walk past a second shows progress on a terminal, CLI and gdb,
and --quiet or a pipe silences it."""
import difflib
import os

import harness
from harness import check, check_eq

CAUSES = ["loss-with-graph", "accumulated-loss", "output-list", "cache", "traceback", "hook-closure",
          "optimizer-of-deleted-module", "out-history"]
WIDTH = 160


def first_holder(cause, cuda=False):
    def test():
        python, args, env = harness.TORCH_VENV, [cause], None
        if cuda:
            python, args, env = harness.CUDA_TORCH_VENV, [cause, "--cuda"], harness.simgpu_env()
        with harness.Process(python, "leak_causes.py", *args, env=env) as p:
            doc = harness.culeak_json("summary", "--pid", p.pid)
            text = harness.culeak("summary", "--pid", p.pid).stdout
        want = p.truth["leak"]
        check(doc["holders"] and doc["holders"][0]["holder"] == want,
              "%s: first holder %r, want %s" % (cause, doc["holders"][:1], want))
        check(doc["holders"][0]["retained_bytes"] > 1 << 20,
              "%s: the leak retains only %d bytes" % (cause, doc["holders"][0]["retained_bytes"]))
        if cuda:
            check(doc["holders"][0]["retained_by_device"].get("cuda:0", 0) > 1 << 20,
                  "%s: retained on CUDA: %r" % (cause, doc["holders"][0]["retained_by_device"]))
        lines = text.splitlines()
        if cause == "accumulated-loss":   # a graph 9,000 nodes deep: its paths keep their ends
            with harness.Process(python, "leak_causes.py", *args, env=env) as p2:
                tensors = harness.culeak("tensors", "--pid", p2.pid).stdout
            check(any(line.strip().startswith("__main__.total_loss.grad_fn → AddBackward0 ×") and
                      "steps… →" in line for line in tensors.splitlines()),
                  "no shortened path for the deep graph: %r" % tensors[:1500])
        head = next(i for i, line in enumerate(lines) if line.startswith("leak report"))
        check(lines[head + 2].split()[-1] == want or want in lines[head + 2].split(),
              "%s: first report line %r" % (cause, lines[head + 2]))
    return test


def width():
    with harness.Process(harness.TORCH_VENV, "holders.py") as p:
        texts = {c: harness.culeak(c, "--pid", p.pid).stdout for c in ("summary", "tensors")}
        full = harness.culeak("tensors", "--pid", p.pid, "--full").stdout
    for command, text in texts.items():
        wide = [line for line in text.splitlines() if len(line) > WIDTH]
        check(not wide, "%s: %d lines over %d columns, e.g. %r" % (command, len(wide), WIDTH,
                                                                    wide[:1]))
    check(any(len(line) > WIDTH for line in full.splitlines()),
          "--full printed no line over %d columns (the scenario has longer chains)" % WIDTH)


def prefers_user_globals():
    """A user's module global names a tensor even where a library frame's local is shorter."""
    with harness.Process(harness.TORCH_VENV, "stable_names.py") as p:
        doc = harness.culeak_json("tensors", "--pid", p.pid)
    t = next(t for t in doc["tensors"] if int(t["address"], 16) == int(p.truth["address"], 16))
    check(t["paths"] == [p.truth["name"]], "shown %r, want %s" % (t["paths"], p.truth["name"]))
    names = [h["holder"] for h in t["holders"]]
    check(len(names) == 2 and names[0] == "__main__.weights" and names[1].startswith("<thread worker: hold()"),
          "holders in this order: %r" % names)


def python_before_autograd():
    """A parameter that a kept graph also reaches (AccumulateGrad.variable) is named by the
    module that holds it, and that holder comes first."""
    with harness.Process(harness.TORCH_VENV, "leak_causes.py", "loss-with-graph") as p:
        doc = harness.culeak_json("tensors", "--pid", p.pid)
    params = [t for t in doc["tensors"] if t["type"] == "Parameter"]
    check(params and all(t["paths"][0].startswith("__main__.model[") and
                         t["holders"][0]["holder"] == "__main__.model" for t in params),
          "parameters named %r" % [(t["paths"], [h["holder"] for h in t["holders"]]) for t in params])


def qualified_type():
    """--type takes qualified names; a bare name that names several types is a usage error that
    says which (issue 42: it listed every object of all of them, exit 0)."""
    with harness.Process(harness.TORCH_VENV, "holders.py") as p:
        torch_params = harness.culeak_json("refs", "--pid", p.pid, "--type",
                                           "torch.nn.parameter.Parameter")["objects"]
        inspect_params = harness.culeak_json("refs", "--pid", p.pid, "--type",
                                             "inspect.Parameter")["objects"]
        bare = harness.culeak("refs", "--pid", p.pid, "--type", "Parameter", expect_rc=2)
    check(torch_params and inspect_params, "qualified names found %d and %d objects" % (
        len(torch_params), len(inspect_params)))
    check_eq(bare.stdout, "", "a bare --type's objects")
    first = bare.stderr.splitlines()[0]
    check("torch.nn.parameter.Parameter (%d)" % len(torch_params) in first and
          "inspect.Parameter (%d)" % len(inspect_params) in first, "bare --type: %r" % first)


def identical_twice():
    with harness.Process(harness.TORCH_VENV, "holders.py") as p, harness.stopped(p):
        runs = [(harness.culeak("summary", "--pid", p.pid).stdout,
                 harness.culeak("tensors", "--pid", p.pid, "--json").stdout) for _ in range(2)]
    for what, first, second in zip(("summary", "tensors --json"), runs[0], runs[1]):
        diff = difflib.unified_diff(first.splitlines(), second.splitlines(), lineterm="", n=1)
        check(first == second, "two inspections of one stopped state differ in %s:\n%s"
              % (what, "\n".join(list(diff)[:20])))


def tests():
    for cause in CAUSES:
        yield "first-holder:%s" % cause, first_holder(cause)
        yield "simulated-device:first-holder:%s" % cause, first_holder(cause, cuda=True)
    yield "width", width
    yield "prefers-user-globals", prefers_user_globals
    yield "qualified-type", qualified_type
    yield "python-before-autograd", python_before_autograd
    yield "snapshots-and-diff", snapshots_and_diff
    yield "watch-dump-on-growth", watch_dump_on_growth
    yield "stable-patterns", stable_patterns
    yield "identical-twice", identical_twice
    yield "progress", progress


def snapshots_and_diff():
    """snapshot, diff and watch from the CLI, and gdb's snapshots in the same files: across
    training steps of the leaking demo job only history[*] patterns grow."""
    import json
    from test_gdb import gdb

    with harness.tempdir() as d, harness.Process(harness.TORCH_VENV, "leaky_train.py", "3", "--pause") as p:
        a, b, g = d + "/a.json", d + "/b.json", d + "/g.json"
        p.wait_stopped("(the training loop) did not stop itself")
        harness.culeak("snapshot", "--pid", p.pid, "-o", a)
        rc, out = gdb("-p", str(p.pid), "-ex", "culeak-snapshot first --save %s" % g)
        check(json.load(open(g))["entries"] == json.load(open(a))["entries"],
              "gdb's snapshot file differs from the CLI's: %s" % out[-500:])
        for _ in range(3):
            p.next_stop()
        harness.culeak("snapshot", "--pid", p.pid, "-o", b)
        snap = json.load(open(b))
        for key in ("schema_version", "pid", "time", "hostname", "culeak", "python", "torch"):
            check(key in snap, "snapshot without %s" % key)
        diff = harness.culeak_json("diff", a, b)
        # the categories part every storage: their changes sum to the whole change
        check(diff["categories"] and sum(c["bytes"] for c in diff["categories"]) == diff["bytes"],
              "diff A B by category: %r of %d" % (diff["categories"], diff["bytes"]))
        check(sum(c["bytes"] for c in snap["categories"]) == snap["bytes"],
              "snapshot by category: %r of %d" % (snap["categories"], snap["bytes"]))
        grown = {c["path"] for c in diff["changes"]}
        check(grown and all(c.startswith("__main__.history[*]") for c in grown) and
              all(c["bytes"] > 0 for c in diff["changes"]), "diff A B: %r" % diff["changes"])
        now = harness.culeak_json("diff", a, "--pid", p.pid)
        check(now["changes"] == diff["changes"], "diff A --pid differs from diff A B")
        rc, out = gdb("-ex", "culeak-snapshot --load %s x" % a, "-ex",
                      "culeak-snapshot --load %s y" % b, "-ex", "culeak-diff x y --json")
        check(json.loads([l for l in out.splitlines() if l.startswith("{")][-1])["changes"] ==
              diff["changes"], "gdb's diff of the CLI's files: %s" % out[-800:])
        watch = harness.culeak("watch", "--pid", p.pid, "--interval", "0.5", "--count", "3").stdout
        bad = harness.culeak("diff", a, d + "/missing.json", expect_rc=11)
    lines = watch.splitlines()
    check(len(lines) == 3 and all(" pid %d: " % p.pid in line for line in lines),
          "watch printed %r" % lines)
    check("cannot open" in bad.stderr and "missing.json" in bad.stderr,
          "diff of a missing file: %r" % bad.stderr)


def watch_dump_on_growth():
    """watch --dump-on-growth on the demo's slow leak (a step each 0.5 s): once the job holds the
    threshold more than at the start, one dump and the diff that triggered it, naming the list
    that grew, whose storages the dump then shows held by it; on the same job stopped (nothing
    changes), no dump however long the watch."""
    import json

    step = 4 * 128 * 1024   # about what a step of leaky_train.py keeps: a dump within a few
    with harness.tempdir() as d, harness.Process(harness.TORCH_VENV, "leaky_train.py", "3") as p:
        out = harness.culeak("watch", "--pid", p.pid, "--interval", "0.5", "--count", "8",
                             "--dump-on-growth", str(step), "-o", d).stdout
        dump, diff = (os.path.join(d, "growth-%d.%s" % (p.pid, x)) for x in ("cldump", "diff"))
        wrote = [line for line in out.splitlines() if "since the watch began" in line]
        check(len(wrote) == 1 and dump in wrote[0] and diff in wrote[0], "watch printed %s" % out)
        check_eq(sorted(os.listdir(d)), sorted(os.path.basename(f) for f in (dump, diff)),
                 "the folder")
        grew = open(diff).read()
        check("__main__.history[*]" in grew, "the diff: %s" % grew)
        tensors = harness.culeak_json("tensors", "--dump", dump)["tensors"]
        held = [t for t in tensors if any(h["path"].startswith("__main__.history[")
                                          for h in t["holders"])]
        check(held, "the dump holds no storage of history: %s" % json.dumps(tensors)[:2000])
    with harness.tempdir() as d, harness.Process(harness.TORCH_VENV, "leaky_train.py", "3",
                                                 "--pause") as p:
        p.wait_stopped("(the training loop) did not stop itself")
        out = harness.culeak("watch", "--pid", p.pid, "--interval", "0.2", "--count", "4",
                             "--dump-on-growth", "1", "-o", d).stdout
        check_eq(os.listdir(d), [], "the folder of a watch of a job that did not change (%s)" % out)


def stable_patterns():
    """A job that moves from one line of main() to another, holding the same: the holder paths
    name the line it stands on, the snapshots' patterns do not, and they diff to nothing. A
    recursive function's calls stay apart, by their order from the bottom of the stack, each
    with the bytes its own local holds. A snapshot file of the older format (patterns with
    lines) diffs to nothing too, and the diff says why."""
    import json

    main = "<thread main: main() at frame_lines.py%s>.big"
    with harness.tempdir() as d, harness.Process(harness.TORCH_VENV, "frame_lines.py") as p:
        truth, snaps = p.truth, []
        for stop in range(3):
            if stop:
                p.next_stop()
            else:
                p.wait_stopped("did not stop itself")
            snaps.append(d + "/%d.json" % stop)
            harness.culeak("snapshot", "--pid", p.pid, "-o", snaps[-1])
            if stop < 2:   # the path a reader sees names the line
                paths = {h["path"] for t in harness.culeak_json("tensors", "--pid", p.pid)["tensors"]
                         for h in t["holders"]}
                want = main % (":%d" % truth["lines"][stop])
                check(want in paths, "no %s in %r" % (want, sorted(paths)[:20]))
        patterns = [{e["pattern"]: e["bytes"] for e in json.load(open(f))["entries"]} for f in snaps]
        check(patterns[0].get(main % "") == truth["big"], "A's patterns: %r" % patterns[0])
        diff = harness.culeak_json("diff", snaps[0], snaps[1])
        check(diff["changes"] == [] and diff["categories"] == [] and diff["notes"] == [],
              "A to B: %r" % diff)
        nest = "<thread main: nest() at frame_lines.py%s>.mine"
        calls = [patterns[2].get(nest % ("" if k == 0 else " (recursion %d)" % (k + 1)))
                 for k in range(len(truth["calls"]))]
        check(calls == truth["calls"], "nest()'s calls: %r of %r" % (calls, patterns[2]))
        # culeak 0.2's file: no "patterns" field, the line in the pattern
        old = json.load(open(snaps[0]))
        del old["patterns"]
        for e in old["entries"]:
            e["pattern"] = e["pattern"].replace(main % "", main % (":%d" % truth["lines"][0]))
        with open(d + "/old.json", "w") as f:
            json.dump(old, f)
        diff = harness.culeak_json("diff", d + "/old.json", snaps[1])
        check(diff["changes"] == [] and len(diff["notes"]) == 1 and "older culeak" in
              diff["notes"][0], "old A to B: %r" % diff)
        text = harness.culeak("diff", d + "/old.json", snaps[1]).stdout
        check(text.startswith("note: the first snapshot was written by an older culeak"), text)


def progress():
    """Progress (objects walked, MB read) is drawn in place on stderr when that is a terminal,
    ended by a newline, in the CLI and in gdb, once a walk has run CULEAK_PROGRESS_AFTER seconds
    (1 by default; 0 here, so that a fast machine's walk shows it too); --quiet silences it,
    and a pipe never sees it."""
    import test_gdb
    now = {"CULEAK_PROGRESS_AFTER": "0"}
    with harness.Process(harness.TORCH_VENV, "dying.py", "300000") as p:
        rc, out, term = harness.on_terminal([harness.CULEAK, "objects", "--pid", str(p.pid)],
                                            env=now)
        check(rc == 0 and "objects:" in out, "objects: rc %d, %s" % (rc, (out + term)[-1000:]))
        check("objects walked" in term and "MB read" in term and term.endswith("\n"),
              "no progress on the terminal: %r" % term[-500:])
        rc, out, term = harness.on_terminal([harness.CULEAK, "objects", "--pid", str(p.pid),
                                             "--quiet"], env=now)
        check(rc == 0 and term == "", "--quiet: rc %d, terminal %r" % (rc, term[-500:]))
        piped = harness.culeak("objects", "--pid", p.pid, env=now).stderr
        check("objects walked" not in piped, "progress into a pipe: %r" % piped[-500:])
        rc, out, term = harness.on_terminal(["gdb", "-nx", "-batch", "-iex", "set pagination off",
                                             "-x", test_gdb.PLUGIN, "-p", str(p.pid),
                                             "-ex", "culeak-objects --top 3"], env=now)
        check("objects walked" in term and "MB read" in term,
              "gdb: no progress on the terminal: %r" % (term[-800:] + out[-800:]))
