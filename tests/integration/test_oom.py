"""The job's state at the instant of a CUDA out-of-memory error (tests/scenarios/oom_job.py on
the simulated device): culeak.dump_on_oom from inside the job here, culeak-catch-oom from gdb in
test_gdb. Each compares what culeak wrote with what the job's own observer counted at that
instant, before anything unwound."""
import json
import os
import select
import stat

import harness
from harness import check, check_eq

def line_within(proc, seconds):
    """The process's next line of output, or None when none comes within seconds."""
    ready, _, _ = select.select([proc.stdout], [], [], seconds)
    return proc.stdout.readline() if ready else None


def truth_after_error(p, seconds, context):
    """The truth the job prints from its own except, once torch raised the error in Python;
    context: what a failure also shows (the job's stderr when it exited)."""
    said = line_within(p.proc, seconds)
    if not said and p.proc.poll() is not None:
        context += " the job's stderr: " + p.proc.stderr.read()[-3000:]
    check(said and said.startswith("{"), "the job said nothing after the error: %r; %s" % (
        said, context))
    check_eq(p.proc.stdout.readline().strip(), "EXCEPT", "after the truth")
    return json.loads(said)["oom"]


def holds_at_oom(doc, truth, what, said):
    """A leak report of the instant (culeak summary --json) names the list that grew with the
    bytes the job counted, and the tensor only the allocating frame's local holds, at its line:
    no frame had unwound. Its note says what failed, as said(truth) words it."""
    check_eq(doc.get("note", "")[:len(said(truth))], said(truth), "%s: the note" % what)
    holders = {h["holder"]: h for h in doc["holders"]}
    check_eq(holders.get("__main__.history", {}).get("reachable_by_device"),
             {"cuda:0": truth["history"][1]}, "%s: __main__.history" % what)
    act = "<thread main: forward() at oom_job.py:%d>.act" % truth["line"]
    check_eq(holders.get(act, {}).get("retained_by_device"), {"cuda:0": truth["act"][1]},
             "%s: %s (holders: %s)" % (what, act, sorted(holders)[:8]))


def observer_said(truth):
    """dump_on_oom's note: the device and the size torch's observer passed (the job's own
    observer saw the same)."""
    return "CUDA out of memory on cuda:%d (%.1f MiB not reserved" % (truth["device"],
                                                                   truth["alloc"] / 2 ** 20)


def error_said(truth):
    """catch-oom's note: the thrown error's own message, which names the same size."""
    return "CUDA out of memory. Tried to allocate %.2f MiB. GPU %d" % (truth["alloc"] / 2 ** 20,
                                                                       truth["device"])


def last_oom(doc, truth, history):
    """With the allocator's history on, the report names the error's size, stream and pool as
    the history recorded them; with it off, it records none and the text says so."""
    cuda = doc["cuda"][truth["device"]]
    check_eq(cuda["history_recorded"], history, "history_recorded")
    if history:
        got = cuda["last_oom"] or {}
        check_eq([got.get("size"), int(got.get("stream", "-1"), 16), got.get("pool")],
                 [truth["alloc"], truth["stream"], [0, 0]], "the last out-of-memory error")
    else:
        check_eq(cuda["last_oom"], None, "last_oom without history")


def dump_on_oom(history):
    """culeak.dump_on_oom, one line in the job: at the error, the dump and the report of that
    instant, readable by their owner alone (0600); an observer whose folder does not exist,
    registered before it, prints why and lets the next one and torch's error go on unchanged (the
    job's `except torch.OutOfMemoryError` runs). The stream and pool: see last_oom."""
    with harness.tempdir() as d:
        go, dump, report = (os.path.join(d, n) for n in ("go", "oom-{pid}-{n}.cldump",
                                                          "oom-{n}.json"))
        missing = os.path.join(d, "none", "x.cldump")
        env = dict(harness.simgpu_env(), PYTHONPATH=os.path.join(harness.ROOT, "build", "python"))
        with open(go, "w"):
            pass
        with harness.Process(harness.CUDA_TORCH_VENV, "oom_job.py", go,
                             *(["--history"] if history else []), "--dump-on-oom", missing,
                             "--dump-on-oom", dump, report, env=env) as p:
            truth = truth_after_error(p, 120, "")
            p.proc.kill()
            p.proc.wait()
            err = p.proc.stderr.read()
        dump, report = dump.format(pid=p.pid, n=1), report.format(n=1)
        check("no dump: culeak: error: cannot write %s" % missing in err and
              "wrote %s and %s" % (dump, report) in err, "the job's stderr: %s" % err[-3000:])
        for f in (dump, report):
            check_eq(stat.S_IMODE(os.stat(f).st_mode), 0o600, "mode of %s" % f)
        holds_at_oom(json.load(open(report)), truth, "the report", observer_said)
        doc = harness.culeak_json("summary", "--dump", dump)
        holds_at_oom(doc, truth, "the dump", observer_said)
        last_oom(doc, truth, history)
        text = harness.culeak("summary", "--dump", dump).stdout
        check(("not recorded (the allocator's history is off" in text) != history,
              "the text on the stream and pool: %s" % text[-1500:])


def tests():
    yield "dump-on-oom", lambda: dump_on_oom(False)
    yield "dump-on-oom:history", lambda: dump_on_oom(True)
