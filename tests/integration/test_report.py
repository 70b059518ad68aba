"""The leak report people read (`culeak summary`): for each classic cause of a training-memory leak
(tests/scenarios/leak_causes.py), the report's first holder is the leaking variable, in text and
JSON; no text line of summary or tensors is wider than 160 columns without --full; a user's
global names a tensor before a library frame's local; and two inspections of a stopped job give
identical reports."""
import harness
from harness import check

CAUSES = ["loss-with-graph", "output-list", "cache", "traceback", "hook-closure",
          "optimizer-of-deleted-module", "out-history"]
WIDTH = 160


def first_holder(cause):
    def test():
        with harness.Process(harness.TORCH_VENV, "leak_causes.py", cause) as p:
            doc = harness.culeak_json("summary", "--pid", p.pid)
            text = harness.culeak("summary", "--pid", p.pid).stdout
        want = p.truth["leak"]
        check(doc["holders"] and doc["holders"][0]["holder"] == want,
              "%s: first holder %r, want %s" % (cause, doc["holders"][:1], want))
        check(doc["holders"][0]["retained_bytes"] > 1 << 20,
              "%s: the leak retains only %d bytes" % (cause, doc["holders"][0]["retained_bytes"]))
        lines = text.splitlines()
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


def qualified_type():
    """--type takes qualified names; a bare name that names several types says which."""
    with harness.Process(harness.TORCH_VENV, "holders.py") as p:
        torch_params = harness.culeak_json("refs", "--pid", p.pid, "--type",
                                           "torch.nn.parameter.Parameter")["objects"]
        inspect_params = harness.culeak_json("refs", "--pid", p.pid, "--type",
                                             "inspect.Parameter")["objects"]
        bare = harness.culeak("refs", "--pid", p.pid, "--type", "Parameter").stdout
    check(torch_params and inspect_params, "qualified names found %d and %d objects" % (
        len(torch_params), len(inspect_params)))
    first = bare.splitlines()[0]
    check("torch.nn.parameter.Parameter (%d)" % len(torch_params) in first and
          "inspect.Parameter (%d)" % len(inspect_params) in first, "bare --type: %r" % first)


def identical_twice():
    with harness.Process(harness.TORCH_VENV, "holders.py") as p:
        runs = [(harness.culeak("summary", "--pid", p.pid).stdout,
                 harness.culeak("tensors", "--pid", p.pid, "--json").stdout) for _ in range(2)]
    check(runs[0] == runs[1], "two inspections of one stopped state differ")


def tests():
    for cause in CAUSES:
        yield "first-holder:%s" % cause, first_holder(cause)
    yield "width", width
    yield "prefers-user-globals", prefers_user_globals
    yield "qualified-type", qualified_type
    yield "identical-twice", identical_twice
