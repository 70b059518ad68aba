"""Golden reports (tests/golden/, made by its make.py): every report of every frozen-evidence dump,
text, JSON and HTML, with its stderr and exit status, is what the binary that froze it wrote, byte
for byte. A refactoring of the commands or the reports passes unchanged; a change meant to alter a
report remakes the files in its own commit, so that the diff shows what changed."""
import glob
import importlib.util
import json
import lzma
import os

import harness

GOLDEN = os.path.join(harness.ROOT, "tests", "golden")
_spec = importlib.util.spec_from_file_location("golden_make", os.path.join(GOLDEN, "make.py"))
make = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make)


def golden(dump_xz):
    def test():
        with lzma.open(make.golden_file(dump_xz), "rt") as f:
            want = json.load(f)
        got = make.reports(harness.CULEAK, dump_xz)
        harness.check_eq(sorted(got), sorted(want), "the command lines frozen")
        problems = []
        for line in sorted(want):
            for part in ("rc", "stdout", "stderr", "html"):
                if got[line].get(part) != want[line].get(part):
                    problems.append("%s: %s differs:\n%s" % (line, part, first_difference(
                        str(want[line].get(part)), str(got[line].get(part)))))
        if problems:
            raise harness.Failure("\n".join(problems[:8]))
    return test


def first_difference(want, got):
    at = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))
    return "  want ...%r...\n  got  ...%r..." % (want[max(0, at - 60):at + 60],
                                                  got[max(0, at - 60):at + 60])


def tests():
    dumps = make.dumps()
    if not dumps or not glob.glob(os.path.join(GOLDEN, "*.json.xz")):
        yield "present", lambda: harness.check(False, "no golden reports in %s" % GOLDEN)
    for dump_xz in dumps:
        name = os.path.basename(dump_xz)[:-len(".cldump.xz")]
        yield name, golden(dump_xz)
