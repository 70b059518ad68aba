"""A rank whose memory is mostly what no walk reads (tests/scenarios/scout.py: CPU tensors of
mixed sizes, anonymous buffers) is scouted where its copy would be over the limit: a walk made
as it runs learns what the walk reads, and the copy made at the stop leaves the rest out, so
the process is stopped only for the copy of its objects and resumed. The reports are those of
a process stopped throughout. A page left out is never read from the running process: where
the walk needs one (here a list's item array put, between the scout and the stop, where a
tensor's data was), the inspection is done again, stopped, and says so."""
import json
import os

import harness
from harness import check, check_eq

# the scenario's memory: 300 MiB of tensors, two buffers of 192 MiB (a bytearray's, an mmap's),
# a 64 MiB victim; the limit is under their sum, over what the walk reads, and under what it
# reads and either buffer: reports that are not stopped throughout prove both left out
ARGS = ("300", "192", "64")
LIMIT = "300M"


def left_out():
    """Scouted: the tensors' and the buffer's memory left out, the process resumed, and the
    reports the same as those made with it stopped throughout."""
    with harness.tempdir() as d, harness.Process(harness.TORCH_VENV, "scout.py", *ARGS,
                                                 os.path.join(d, "flag")) as p:
        target = harness.culeak_json("info", "--pid", p.pid, "--copy-limit", LIMIT)["target"]
        big = p.truth["tensor_bytes"] + p.truth["buffer_bytes"]
        check(target["unread_bytes"] >= 0.95 * big and not target["redone"] and
              target["stopped_microseconds"] is not None,
              "the copy left out %d bytes (the tensors and buffer: %d), redone %r, stopped %r" % (
                  target["unread_bytes"], big, target["redone"], target["stopped_microseconds"]))
        for command in ("tensors", "objects"):
            scouted = harness.culeak_json(command, "--pid", p.pid, "--copy-limit", LIMIT)
            check(not scouted["warnings"], "%s scouted: %r" % (command, scouted["warnings"]))
            stopped = harness.culeak_json(command, "--pid", p.pid, "--copy-limit", "0")
            check_eq(scouted, stopped, "%s scouted, and stopped throughout" % command)
        records = [t for t in scouted["types"] if t["type"] == "Record"]
        check_eq(records and records[0]["count"], 100_000, "Record instances")
        # on a terminal, the scout is said: the walk's progress shows twice
        rc, _, terminal = harness.on_terminal(
            [harness.CULEAK, "objects", "--pid", str(p.pid), "--copy-limit", LIMIT],
            env={"CULEAK_PROGRESS_AFTER": "0"})
        check(rc == 0 and "walking process %d as it runs first" % p.pid in terminal,
              "exit %d, terminal: %r" % (rc, terminal[-500:]))


def miss_redone():
    """Between the scout and the stop, the victim tensor is freed and a list's item array of its
    size mmap'ed where its data was: the walk needs pages the copy left out, and so inspects
    again, stopped: every Marker the list holds is counted."""
    with harness.tempdir() as d:
        flag = os.path.join(d, "flag")
        with harness.Process(harness.TORCH_VENV, "scout.py", *ARGS, flag) as p:
            flip = "kill -USR1 %d; while [ ! -e %s ]; do sleep 0.02; done" % (p.pid, flag)
            doc = harness.culeak_json("objects", "--pid", p.pid, "--copy-limit", LIMIT,
                                      env={"CULEAK_AFTER_SCOUT": flip})
            with open(flag) as f:
                truth = json.load(f)
            check(truth["reused"], "the list's items %r are not where the victim's data %r was" % (
                truth["items"], p.truth["victim"]))
            markers = [t["count"] for t in doc["types"] if t["type"] == "Marker"]
            check_eq(markers, [truth["markers"]], "Marker instances")
            check(any(w.startswith("inspected a second time") for w in doc["warnings"]),
                  "no warning that it was inspected again: %r" % doc["warnings"])


def tests():
    yield "left-out", left_out
    yield "miss-redone", miss_redone
