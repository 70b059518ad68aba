"""Cores whose headers are corrupt, and cores read with the wrong build of a file: one clear line
and its exit status, never a crash, a hang or a report (issue 14)."""
import os
import re
import struct
import subprocess

import harness
from harness import check, check_eq

PYENV_311 = dict(harness.interpreters())["pyenv-3.11"]
SYSTEM_LIBPYTHON = "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0"   # Debian's build
EHDR_PHOFF, EHDR_PHNUM = 32, 56   # offsets in Elf64_Ehdr
PHDR_SIZE, PT_LOAD = 56, 1


def expect(args, rc, words):
    """One error line with rc, within 30 s (a hang is a failure, not a 300 s wait)."""
    try:
        r = subprocess.run([harness.CULEAK] + [str(a) for a in args], capture_output=True,
                           text=True, timeout=30)
    except subprocess.TimeoutExpired:
        raise harness.Failure("culeak %s hung (30 s)" % " ".join(map(str, args)))
    check_eq(r.returncode, rc, "exit status (%s)" % r.stderr.strip()[-500:])
    lines = r.stderr.strip().splitlines()
    check_eq(len(lines), 1, "stderr lines (%r)" % r.stderr)
    check(lines[0].startswith("culeak: error: "), "error line: %r" % lines[0])
    check_eq(r.stdout, "", "stdout (no report)")
    for w in words:
        check(w in lines[0], "%r not in %r" % (w, lines[0]))
    return lines[0]


def build_id(path):
    """The file's GNU build-id as readelf, not culeak, reads it."""
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True, check=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    check(m is not None, "readelf found no build-id in %s" % path)
    return m.group(1)


def pyenv_libpython():
    return os.path.join(os.path.dirname(os.path.dirname(PYENV_311)), "lib", "libpython3.11.so.1.0")


def wrong_lib_build():
    """--lib-path holding another build of libpython: the error names the file it refused."""
    right = pyenv_libpython()
    check(os.path.exists(SYSTEM_LIBPYTHON), "Debian's libpython3.11 is not installed")
    check(build_id(right) != build_id(SYSTEM_LIBPYTHON), "the two libpythons are one build")
    with harness.tempdir() as d, harness.Process(PYENV_311, "idle.py") as p:
        core = harness.gcore(p.pid, d)
        empty = os.path.join(d, "empty")
        os.mkdir(empty)
        base = ["info", "--core", core, "--sysroot", empty, "--exe", PYENV_311]
        line = expect(base + ["--lib-path", os.path.dirname(SYSTEM_LIBPYTHON)], 7,
                      [SYSTEM_LIBPYTHON, "another build"])
        check(line.index(SYSTEM_LIBPYTHON) < line.index(right),
              "the refused file is the subject: %r" % line)
        info = harness.culeak_json(*base, "--lib-path", os.path.dirname(right))
        check_eq(info["python"]["version"], p.truth["version"], "version via the right --lib-path")


def mutate(src, dst, fn):
    with open(src, "rb") as f:
        data = bytearray(f.read())
    fn(data)
    with open(dst, "wb") as f:
        f.write(data)
    return dst


def first_load(data):
    """The file offset of the first PT_LOAD program header."""
    phoff, = struct.unpack_from("<Q", data, EHDR_PHOFF)
    phnum, = struct.unpack_from("<H", data, EHDR_PHNUM)
    for i in range(phnum):
        at = phoff + i * PHDR_SIZE
        if struct.unpack_from("<I", data, at)[0] == PT_LOAD:
            return at
    raise harness.Failure("no PT_LOAD")


def wrap_memsz(data):
    """p_memsz 2^64 - 4096: the segment's end wraps past 2^64 to a page below its start."""
    at = first_load(data)
    struct.pack_into("<Q", data, at + 40, (1 << 64) - 0x1000)


def corrupt_headers():
    """A real core with the headers the fuzzed mutants had: each a one-line exit 5, in seconds."""
    cases = [
        ("e_phoff 2^64-1", lambda b: struct.pack_into("<Q", b, EHDR_PHOFF, (1 << 64) - 1), 5,
         "corrupt ELF header"),
        ("p_memsz wraps", wrap_memsz, 5, "corrupt program header"),
        ("p_filesz wraps", lambda b: struct.pack_into("<Q", b, first_load(b) + 32, (1 << 64) - 8),
         5, "corrupt program header"),
        ("e_phoff past the end", lambda b: struct.pack_into("<Q", b, EHDR_PHOFF, len(b)), 6,
         "truncated"),
    ]
    with harness.tempdir() as d, harness.Process(PYENV_311, "idle.py") as p:
        core = harness.gcore(p.pid, d)
        harness.culeak("info", "--core", core)   # the unmutated core reads
        for what, fn, rc, words in cases:
            bad = mutate(core, os.path.join(d, "bad"), fn)
            try:
                expect(["info", "--core", bad], rc, [words])
            except harness.Failure as e:
                raise harness.Failure("%s: %s" % (what, e))


def tests():
    for fn in (wrong_lib_build, corrupt_headers):
        yield fn.__name__, fn
