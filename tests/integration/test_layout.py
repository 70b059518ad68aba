"""culeak's CPython layout tables agree with the DWARF of every build that has it (the pyenv
builds, and the Debian roots' interpreters through their -dbg packages), field by field, and the
variant culeak picks by structure is the one read off that release."""
import re

import harness
from harness import check, check_eq

# The variant each interpreter's structure must select (3.13 after 3.13.0 moved the GC lists).
VARIANT = {"pyenv-3.13": "3.13.0", "trixie-3.13": "3.13.5", "sid-3.13": "3.13.5",
           "sid-3.14": "3.14", "sid-3.15": "3.15"}
# The cells make check keeps: the roots' newest 3.13 and 3.14 (pyenv's run in make check too).
FULL_ONLY = {"trixie-3.13"}


def dwarf_check(name, python):
    def test():
        with harness.Process(python, "idle.py") as p:
            out = harness.culeak("check-layout", "--pid", p.pid).stdout
            m = re.search(r"layout (\S+) vs DWARF of \S+: (\d+) fields checked, (\d+) mismatched, "
                          r"(\d+) missing", out)
            check(m is not None, "no summary in %r" % out[-500:])
            variant, checked, bad, missing = m.group(1), *map(int, m.groups()[1:])
            check(checked >= 75 and bad == 0 and missing == 0, out[-2000:])
            if name in VARIANT:
                check_eq(variant, VARIANT[name], "the layout variant chosen")
            debug = re.search(r"vs _Py_DebugOffsets: (\d+) fields checked, (\d+) mismatched", out)
            if name in VARIANT:   # 3.13+: the runtime's own offsets agree with the table too
                check(debug is not None and int(debug.group(1)) >= 40 and debug.group(2) == "0",
                      out[-2000:])
    return test


def no_dwarf():
    with harness.Process("/usr/bin/python3", "idle.py") as p:
        harness.culeak("check-layout", "--pid", p.pid, expect_rc=9)


def tests():
    for name, python in harness.interpreters():
        if name.startswith("pyenv-") or harness.root_of(python):
            if name in FULL_ONLY:
                yield "%s:dwarf" % name, dwarf_check(name, python), "full"
            else:
                yield "%s:dwarf" % name, dwarf_check(name, python)
    yield "system-python3:no-dwarf", no_dwarf
