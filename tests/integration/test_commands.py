"""The command table against the files outside the library (scripts/check-commands): a command
with --json has its schema, each has its Python form or a reason for none, gdb registers each
command the table gives it, and the man page lists each command of the CLI."""
import os
import subprocess

import harness


def table_matches():
    r = subprocess.run([os.path.join(harness.ROOT, "scripts", "check-commands"),
                        os.path.join(harness.ROOT, "build")],
                       capture_output=True, text=True, timeout=300)
    harness.check(r.returncode == 0 and r.stdout.endswith(" 0 problems\n"),
                  "check-commands: %s%s" % (r.stdout, r.stderr))


def tests():
    yield "table matches schemas, package, gdb and man page", table_matches
