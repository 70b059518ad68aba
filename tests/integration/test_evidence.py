"""Frozen evidence (tests/evidence/): each checked-in dump of tests/scenarios/markers.py, made on
one interpreter per CPython layout table and variant, still gives what that process said of itself
(its version, every planted Marker with its path, the per-type counts of gc.get_objects()). The
dumps hold what culeak read, so these run with none of those interpreters installed."""
import glob
import json
import lzma
import os

import harness
import test_refs
from harness import check_eq

EVIDENCE = os.path.join(harness.ROOT, "tests", "evidence")


def evidence(truth_file):
    def test():
        with open(truth_file) as f:
            truth = json.load(f)
        with harness.tempdir() as d:
            dump = os.path.join(d, "evidence.cldump")
            with lzma.open(truth_file.replace(".truth.json", ".cldump.xz")) as f, \
                    open(dump, "wb") as out:
                out.write(f.read())
            info = harness.culeak_json("info", "--dump", dump)
            check_eq(info["python"]["version"], truth["version"], "python.version")
            test_refs.check_target(["--dump", dump], truth)
    return test


def tests():
    files = sorted(glob.glob(os.path.join(EVIDENCE, "*.truth.json")))
    if not files:
        yield "present", lambda: harness.check(False, "no evidence in %s" % EVIDENCE)
    for truth_file in files:
        yield os.path.basename(truth_file)[:-len(".truth.json")], evidence(truth_file)
