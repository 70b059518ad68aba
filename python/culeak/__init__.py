"""culeak from Python: who holds the memory of a PyTorch process, for scripts.

    import culeak
    with culeak.open(pid=1234) as t:
        for h in t.summary(top=5)["holders"]:
            print(h["holder"], h["retained_bytes"])

A target is opened once: a live process is stopped while what can change in it is copied, then
runs again while every report of this target is read from the copy (the CLI's --pid). Each method
returns what the CLI's --json prints for that command, as plain dicts and lists (docs/python.md
lists them). Failures raise culeak.Error, whose code is the CLI's ("no-process", "permission",
"not-core", ...). The walk runs without the GIL, so threads can inspect several targets at once:
every rank of a job, with children(agent_pid) for a torchrun agent's workers and merge() to
compare their snapshots.
"""
import builtins
import contextlib
import json
import os
import tempfile

from culeak import _native
from culeak._oom import dump_on_oom

__all__ = ["Error", "Target", "children", "diff", "dump_on_oom", "merge", "open", "version"]
version = _native.version


class Error(Exception):
    """A failure, with culeak's code (code) and message (message)."""

    def __init__(self, code, message):
        super().__init__("%s: %s" % (code, message))
        self.code, self.message = code, message


def _options(**given):
    """--name value for each option given (None: left out; a list or tuple: repeated)."""
    args = []
    for name, value in given.items():
        if value is None or value is False:
            continue
        flag = "--" + name.replace("_", "-")
        for v in value if isinstance(value, (list, tuple)) else [value]:
            args += [flag] if v is True else [flag, hex(v) if name == "addr" else str(v)]
    return args


def open(pid=None, core=None, dump=None, exe=None, sysroot=None, lib_path=(), copy_limit=None):
    """Opens one target: a live process (pid), a core file (core; exe, sysroot and lib_path say
    where its files are when it comes from elsewhere) or a file `culeak dump` wrote (dump).
    copy_limit: the CLI's --copy-limit (bytes, or a string such as "2G")."""
    if sum(x is not None for x in (pid, core, dump)) != 1:
        raise ValueError("culeak.open: give one of pid, core or dump")
    if isinstance(lib_path, (str, os.PathLike)):
        lib_path = [lib_path]
    args = _options(pid=pid, core=core and os.fspath(core), dump=dump and os.fspath(dump),
                    exe=exe, sysroot=sysroot, lib_path=[os.fspath(p) for p in lib_path],
                    copy_limit=copy_limit)
    try:
        return Target(_native.Session(args))
    except _native.Error as e:
        raise Error(*e.args) from None


def children(pid):
    """The pids of a live process's children: a torchrun agent's workers, one per rank ([] when
    there are none or the process cannot be read)."""
    return _native.children(pid)


@contextlib.contextmanager
def _as_files(snapshots):
    """File names for snapshots: dicts as Target.snapshot() returns them (written to a temporary
    folder for the block's time) or file names."""
    with tempfile.TemporaryDirectory(prefix="culeak-") as d:
        files = []
        for i, snap in enumerate(snapshots):
            if isinstance(snap, dict):
                name = os.path.join(d, "%d.json" % i)
                with builtins.open(name, "w") as f:
                    json.dump(snap, f)
                snap = name
            files.append(os.fspath(snap))
        yield files


def _run_files(command, snapshots):
    """command (diff, merge) on snapshot files alone, no target."""
    with _as_files(snapshots) as files:
        try:
            return json.loads(_native.run_files([command, "--json"] + files))
        except _native.Error as e:
            raise Error(*e.args) from None


def diff(before, after):
    """Growth per holder pattern from one snapshot to another (the CLI's diff A B); each a dict
    as Target.snapshot() returns it or a snapshot file's name."""
    return _run_files("diff", [before, after])


def merge(snapshots):
    """The ranks of a job side by side (the CLI's merge): where a rank holds more than the median
    of the ranks, by holder pattern. snapshots: one per rank, each a dict as Target.snapshot()
    returns it or a snapshot file's name (from culeak snapshot -o on every node)."""
    return _run_files("merge", list(snapshots))


class Target:
    """One open target (culeak.open). Close it, or use it in a with block."""

    def __init__(self, session):
        self._session = session

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Detaches: a process culeak still holds stopped runs again."""
        self._session.close()

    def _run(self, command, *files, **options):
        try:
            text = self._session.run([command] + list(files) + ["--json"] + _options(**options))
        except _native.Error as e:
            raise Error(*e.args) from None
        return json.loads(text)

    def info(self):
        """The target, its Python runtime and its PyTorch build."""
        return self._run("info")

    def summary(self, top=None, allocator_layout=None):
        """The leak report: every holder with the bytes dropping it would free."""
        return self._run("summary", top=top, allocator_layout=allocator_layout)

    def tensors(self, device=None, min_bytes=None, allocator_layout=None):
        """Tensors grouped by storage, biggest first, each with what holds it. device: "cpu",
        "cuda", "cuda:N" or "all"; min_bytes: an int or a string such as "1M"."""
        return self._run("tensors", device=device, min_bytes=min_bytes,
                         allocator_layout=allocator_layout)

    def blocks(self, device=None, state=None, allocator_layout=None, torch_snapshot=None):
        """The CUDA caching allocator: segments, blocks and the tensors in them; torch_snapshot
        (a file name) also writes it as torch.cuda.memory._snapshot() returns it, pickled."""
        return self._run("blocks", device=device, state=state,
                         allocator_layout=allocator_layout, torch_snapshot=torch_snapshot)

    def objects(self, top=None, max_objects=None):
        """Python objects by type: count, bytes, how many the GC tracks."""
        return self._run("objects", top=top, max_objects=max_objects)

    def balance(self, top=None, max_objects=None):
        """Reference counts against the references found: what is not explained, by type; what
        no root reaches, split into garbage and what C holds."""
        return self._run("balance", top=top, max_objects=max_objects)

    def refs(self, addr=(), type=None, max_paths=None, referents=False):
        """Objects (an address or a list of them, or every object of a type) and the chains that
        hold them; referents: also every reference each object holds."""
        return self._run("refs", addr=[addr] if isinstance(addr, int) else list(addr), type=type,
                         max_paths=max_paths, referents=referents)

    def snapshot(self):
        """What holds tensor memory, by holder pattern: what diff and merge compare."""
        return self._run("snapshot")

    def diff(self, before):
        """Growth per holder pattern from before (a dict as snapshot() returns it, or a snapshot
        file's name) to this target (the CLI's diff A --pid P)."""
        with _as_files([before]) as files:
            return self._run("diff", *files)
