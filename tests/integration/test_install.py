"""`make install` puts in place what a user runs: the CLI, the gdb plugin and its loader, and the
man page, which renders cleanly and covers every command and option the help lists."""
import json
import os
import re
import subprocess

import harness
from harness import check, check_eq


def installed():
    with harness.tempdir() as d:
        r = subprocess.run(["make", "-C", harness.ROOT, "install", "DESTDIR=" + d, "PREFIX=/usr"],
                           capture_output=True, text=True, timeout=600)
        check(r.returncode == 0, "make install: %s" % (r.stdout + r.stderr)[-2000:])
        for path in ("bin/culeak", "lib/culeak/culeak_gdb.abi3.so", "share/culeak/culeak.gdb",
                     "share/man/man1/culeak.1"):
            check(os.path.exists(os.path.join(d, "usr", path)), "not installed: /usr/%s" % path)
        version = subprocess.run([os.path.join(d, "usr/bin/culeak"), "--version"],
                                 capture_output=True, text=True).stdout
        page = os.path.join(d, "usr/share/man/man1/culeak.1")
        r = subprocess.run(["groff", "-ww", "-man", "-Tutf8", page], capture_output=True,
                           text=True)
        check_eq(r.stderr, "", "groff's warnings on culeak.1")
        text = subprocess.run(["man", "-l", page], capture_output=True, text=True,
                              env=dict(os.environ, MANWIDTH="100", MAN_KEEP_FORMATTING="0"))
        shown = re.sub(".\b", "", text.stdout).replace("\u2010", "-")   # no overstrike, hyphens
        check(version.split()[-1] in shown, "version %r not in the page" % version)
        usage = harness.culeak("--help").stdout
        words = set(re.findall(r"^  ([a-z][a-z-]+)  ", usage, re.M))    # the commands
        words |= set(re.findall(r"(--[a-z][a-z-]+)", usage))            # every option
        check(len(words) > 30, "read only %d commands and options from --help" % len(words))
        missing = sorted(w for w in words if w not in shown)
        check(not missing, "the man page lacks %s" % missing)
        for section in ("NAME", "SYNOPSIS", "COMMANDS", "TARGET", "EXIT STATUS", "GDB AND CUDA-GDB"):
            check(re.search("^%s$" % section, shown, re.M), "no %s section" % section)


def found_by_gdb():
    """make install puts a line in gdb's system gdbinit directory (a scratch one bound over it,
    in a mount namespace of the test's own): a bare `gdb -p PID` then has the commands, says it
    loaded them in one line, and writes a report; make uninstall takes it all away."""
    with harness.tempdir() as d, harness.Process("/usr/bin/python3", "idle.py") as p:
        inits = os.path.join(d, "gdbinit.d")
        os.mkdir(inits)
        prefix = os.path.join(d, "usr")
        make = "make -s -C %s PREFIX=%s GDBINIT_DIRS=/etc/gdb/gdbinit.d" % (harness.ROOT, prefix)
        script = ("mount --bind %s /etc/gdb/gdbinit.d && %s install >/dev/null && "
                  "gdb -p %d -batch -ex 'help culeak' -ex 'culeak-info --json --output %s/i.json' "
                  "&& %s uninstall >/dev/null && echo left: $(ls -A /etc/gdb/gdbinit.d)" % (
                      inits, make, p.pid, d, make))
        r = subprocess.run(["unshare", "--mount", "sh", "-c", script], capture_output=True,
                           text=True, timeout=600)
        check(r.returncode == 0, "install, gdb, uninstall: %s %s" % (r.stdout, r.stderr))
        check_eq(len(re.findall("^culeak: loaded", r.stdout, re.M)), 1, "the line that says so")
        check("culeak-summary" in r.stdout, "help culeak: %s" % r.stdout[-1500:])
        check_eq(json.load(open(os.path.join(d, "i.json")))["target"]["pid"], p.pid, "the report")
        check_eq(r.stdout.splitlines()[-1], "left:", "gdbinit.d after uninstall")
        check(not os.path.exists(os.path.join(prefix, "share", "culeak", "culeak.gdb")),
              "uninstall left the loader")


def tests():
    yield "installed", installed
    yield "found by gdb", found_by_gdb
