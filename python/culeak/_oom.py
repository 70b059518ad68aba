"""culeak.dump_on_oom: the job's own state at the instant of a CUDA out-of-memory error, written
by culeak from outside the job, before the error unwinds a frame.

torch's caching allocator calls its out-of-memory observers after it gives up and before it
throws, with its lock released. The observer here starts culeak's CLI on this process (a process
cannot trace itself), waits while culeak stops every thread, copies what it needs and lets go,
then returns, and torch raises the error as it would have. The observer never raises: a failure
is printed, and the error propagates unchanged."""
import os
import subprocess
import sys

from culeak import _native

HERE = os.path.dirname(os.path.abspath(__file__))
CLI = os.path.join(HERE, "bin", "culeak")   # the wheel's; `make python`'s links build/culeak


def _expand(path, n):
    return path.replace("{pid}", str(os.getpid())).replace("{n}", str(n))


def _size(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return ("%d %s" if unit == "B" else "%.1f %s") % (n, unit)
        n /= 1024


def _dump_self(dump, note):
    """Runs `culeak dump --pid <this process> -o dump --note note` and waits for it. culeak may
    attach only once this process names it as its tracer (kernel.yama.ptrace_scope 1 lets a
    process trace only its descendants otherwise), so the child shell waits for a line before it
    becomes culeak, keeping its pid."""
    child = subprocess.Popen(["/bin/sh", "-c", 'read go && exec "$0" "$@"', CLI, "dump",
                              "--pid", str(os.getpid()), "-o", dump, "--note", note],
                             stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
    try:
        _native.allow_tracer(child.pid)
        _, err = child.communicate(b"go\n")
    finally:
        _native.allow_tracer(0)
    if child.returncode != 0:
        raise RuntimeError(err.decode(errors="replace").strip() or
                           "culeak dump exited with status %d" % child.returncode)


def _report(dump, report, as_json):
    """The leak report of the dump, into the file report (-o: written whole, mode 0600)."""
    session = _native.Session(["--dump", dump])
    try:
        session.run(["summary", "-o", report] + (["--json"] if as_json else []))
    finally:
        session.close()


def dump_on_oom(path, report=None, json=False):
    """At every CUDA out-of-memory error of this process, before the error unwinds a frame,
    writes a culeak dump of the process to path (and, with report, the leak report of that
    instant to report; json: as JSON). In both names {pid} is this process's pid and {n} the
    error's number, from 1. Registering initialises CUDA (torch.cuda.init()). The files are
    readable by their owner alone."""
    if not os.path.exists(CLI):
        raise RuntimeError("culeak.dump_on_oom: culeak's CLI is not installed at %s" % CLI)
    import torch
    attach = getattr(torch._C, "_cuda_attach_out_of_memory_observer", None)
    if attach is None:
        raise RuntimeError("culeak.dump_on_oom: torch %s has no out-of-memory observers "
                           "(a CUDA build is needed)" % torch.__version__)
    torch.cuda.init()
    count = [0]

    def observer(device, alloc, device_limit, device_free):
        # torch passes the size it failed to reserve, the device's memory (or the process's
        # share, set_per_process_memory_fraction) and the device's free memory
        count[0] += 1
        dump = _expand(path, count[0])
        what = "CUDA out of memory on cuda:%d (%s not reserved, of %s; %s free on the device)" % (
            device, _size(alloc), _size(device_limit), _size(device_free))
        try:
            _dump_self(dump, what + ", said torch's out-of-memory observer")
            written = [dump]
            if report:
                written.append(_expand(report, count[0]))
                _report(dump, written[-1], json)
            print("culeak: %s: wrote %s" % (what, " and ".join(written)), file=sys.stderr,
                  flush=True)
        except BaseException as e:   # raising here would replace torch's error with this one
            print("culeak: %s: no dump: %s" % (what, e), file=sys.stderr, flush=True)

    attach(observer)
