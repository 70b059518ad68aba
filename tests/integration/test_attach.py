"""Live attach leaves the process exactly as it was."""
import signal
import subprocess
import time

import harness
from harness import check, check_eq

SYSTEM_PY = "/usr/bin/python3"


def stopped_stays_stopped():
    with harness.Process(SYSTEM_PY, "idle.py") as p:
        p.proc.send_signal(signal.SIGSTOP)
        deadline = time.time() + 5
        while p.status()["State"][0] != "T" and time.time() < deadline:
            time.sleep(0.05)
        info = harness.culeak_json("info", "--pid", p.pid)
        check_eq(info["python"]["version"], p.truth["version"], "python.version")
        time.sleep(0.2)
        check_eq(p.status()["State"][0], "T", "state after culeak (was stopped)")
        p.proc.send_signal(signal.SIGCONT)


def debugger_holds_it():
    """Under gdb (the tracer, process stopped) culeak reads without attaching and says so."""
    with harness.tempdir() as d, harness.Process(SYSTEM_PY, "idle.py") as p:
        out = "%s/info.json" % d
        r = subprocess.run(
            ["gdb", "-nx", "-batch", "-p", str(p.pid), "-ex",
             "shell %s info --pid %d --json > %s" % (harness.CULEAK, p.pid, out)],
            capture_output=True, text=True, timeout=120)
        check(r.returncode == 0, "gdb: %s" % r.stderr[-1000:])
        import json
        info = json.load(open(out))
        check_eq(info["python"]["version"], p.truth["version"], "python.version")
        check(any("held stopped by debugger" in w for w in info["warnings"]),
              "warning about the debugger: %r" % info["warnings"])
        check_eq(p.status()["TracerPid"], "0", "TracerPid after gdb left")


def proc_mem_fallback():
    """Where process_vm_readv is refused, /proc/PID/mem serves the same reads."""
    with harness.Process(SYSTEM_PY, "idle.py") as p:
        info = harness.culeak_json("info", "--pid", p.pid, env={"CULEAK_NO_PROCESS_VM_READV": "1"})
        check_eq(info["python"]["version"], p.truth["version"], "python.version")
        check_eq(info["python"]["build"].split()[0], p.truth["version"], "banner read from .bss")


def tests():
    for fn in (stopped_stays_stopped, debugger_holds_it, proc_mem_fallback):
        yield fn.__name__, fn
