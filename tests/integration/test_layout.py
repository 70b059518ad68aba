"""culeak's CPython layout tables agree with the DWARF of every pyenv build, field by field."""
import re

import harness
from harness import check


def dwarf_check(python):
    def test():
        with harness.Process(python, "idle.py") as p:
            out = harness.culeak("check-layout", "--pid", p.pid).stdout
            m = re.search(r"(\d+) fields checked, (\d+) mismatched, (\d+) missing", out)
            check(m is not None, "no summary in %r" % out[-500:])
            checked, bad, missing = map(int, m.groups())
            check(checked >= 75 and bad == 0 and missing == 0, out[-2000:])
    return test


def no_dwarf():
    with harness.Process("/usr/bin/python3", "idle.py") as p:
        harness.culeak("check-layout", "--pid", p.pid, expect_rc=9)


def tests():
    for name, python in harness.interpreters():
        if name.startswith("pyenv-"):
            yield "%s:dwarf" % name, dwarf_check(python)
    yield "system-python3:no-dwarf", no_dwarf
