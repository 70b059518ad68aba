#!/usr/bin/env python3
"""Writes the fuzzers' seed corpus (tests/fuzz/corpus/HARNESS/*.gz) from real cores of a tiny
Python process made on this machine: a gcore and a kernel core (SIGABRT).

A whole core is megabytes, and the bytes a mutation can turn into a bug are its headers, so a
seed is the core's skeleton: the ELF header, program headers and notes as written, and of the
PT_LOADs only the first page of those that start with an ELF header (the pages the build-id
checks read); every other PT_LOAD keeps its p_memsz with p_filesz 0, as the kernel writes a range
coredump_filter leaves out. The corenotes seeds are the same cores' note segments and the first
page of a real ELF file; the mappings seed is the process's own /proc/PID/maps. The walk
harness's seeds patch nothing: one per layout table it can pick (byte 0); so do the pyheap
harness's, one per table the CPython fixture image is laid out for, and the libdata harness's,
one per library the fixture makes.

The dump seed is a dump of the same process (build/culeak dump), cut down by dump_seed().

usage: tests/fuzz/make_seeds.py [PYTHON]   (default: pyenv's 3.11)
       tests/fuzz/make_seeds.py --dump FILE   only the dump seed, from a dump of a tiny process"""
import glob
import gzip
import os
import resource
import signal
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
PAGE = 4096
PT_LOAD, PT_NOTE = 1, 4
PHDR = struct.Struct("<IIQQQQQQ")   # type, flags, offset, vaddr, paddr, filesz, memsz, align
SCRIPT = "import os, sys, time\nprint('READY', flush=True)\nsys.stdin.readline()\nos.abort()\n"


def skeleton(core):
    """(skeleton bytes, [note segment bytes]) of a core, as the module docstring says."""
    phoff, = struct.unpack_from("<Q", core, 32)
    phnum, = struct.unpack_from("<H", core, 56)
    phdrs = [list(PHDR.unpack_from(core, phoff + i * PHDR.size)) for i in range(phnum)]
    out = bytearray(core[:64])
    out += bytes(phnum * PHDR.size)   # filled in below
    notes = []
    for ph in phdrs:
        kind, offset, filesz = ph[0], ph[2], ph[5]
        data = core[offset:offset + filesz]
        if kind == PT_NOTE:
            notes.append(data)
        elif kind == PT_LOAD:
            data = data[:PAGE] if data[:4] == b"\x7fELF" else b""
        else:
            continue
        while len(out) % (PAGE if kind == PT_LOAD and data else 4):
            out.append(0)
        ph[2], ph[5] = (len(out) if data else 0), len(data)
        out += data
    for i, ph in enumerate(phdrs):
        PHDR.pack_into(out, phoff + i * PHDR.size, *ph)
    return bytes(out), notes


def regressions(skel):
    """The inputs of the crashes and hangs fixed (issue 14), as mutants of a skeleton: the smoke
    pass runs every seed, so each fails `make check` again if its bug comes back."""
    phoff, = struct.unpack_from("<Q", skel, 32)
    phnum, = struct.unpack_from("<H", skel, 56)
    crash = bytearray(skel)   # e_phoff 2^64-1: the table's end wrapped, the copy read outside
    struct.pack_into("<Q", crash, 32, (1 << 64) - 1)
    hang = bytearray(skel)    # the first PT_LOAD's end wraps to a page below its NT_FILE entry
    first = next(phoff + i * PHDR.size for i in range(phnum)
                 if struct.unpack_from("<I", skel, phoff + i * PHDR.size)[0] == PT_LOAD)
    struct.pack_into("<Q", hang, first + 40, (1 << 64) - PAGE)
    return {"regress-phoff-wraps": bytes(crash), "regress-memsz-wraps": bytes(hang)}


def long_buildid_elf():
    """An ELF header page whose build-id note is 100 bytes: cl_buildid_parse returned 100 for a
    20-byte buffer, and its callers compared 100 bytes."""
    page = bytearray(PAGE)
    page[:16] = b"\x7fELF\x02\x01\x01" + bytes(9)
    struct.pack_into("<HHIQQQIHHHHHH", page, 16, 3, 62, 1, 0, 64, 0, 0, 64, PHDR.size, 1, 0, 0, 0)
    PHDR.pack_into(page, 64, PT_NOTE, 4, 200, 0, 0, 12 + 4 + 100, 0, 4)
    struct.pack_into("<III4s", page, 200, 4, 100, 3, b"GNU\0")   # NT_GNU_BUILD_ID
    page[216:316] = bytes(range(100))
    return bytes(page)


def write(harness, name, data):
    d = os.path.join(CORPUS, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name + ".gz"), "wb") as raw:   # no name or time in the header
        with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0, filename="") as f:
            f.write(data)
    print("make_seeds: %s/%s: %d bytes" % (harness, name, len(data)))


WALK_LAYOUT_SEEDS = 16   # byte 0 is taken modulo the number of tables (under 16)
# Inputs the walk harness found (fixed in cudacache/walk.c): the prev pointers of the fixture's
# blocks made a cycle (walk_test.c "a cycle of prev pointers is bounded"); a looped tree whose
# node_count was huge (walk_test.c "a looped tree with a huge count is bounded").
WALK_REGRESSIONS = {
    "regress-prev-cycle": bytes.fromhex("4c6181811000000000000000"[:22]),
    "regress-tree-loop": bytes.fromhex("023a7406067d00ae0010754c74da0160ff0d0aae00"),
}


DUMP_SEED_RUNS = 8   # page runs a dump seed keeps: its other sections whole, a few pages


def dump_seed(dump):
    """A real dump (build/culeak dump) cut down to its target, maps, files and symbol answers and
    its first DUMP_SEED_RUNS page runs, rewritten with a matching table and header: what the
    dump harness mutates is the structure, not a process's pages."""
    version, count, table, _ = struct.unpack_from("<IIQQ", dump, 8)
    sections = {}
    for i in range(count):
        sid, _, off, length = struct.unpack_from("<IIQQ", dump, table + 24 * i)
        sections[sid] = dump[off:off + length]
    runs, data = sections[5], sections[6]
    keep = min(DUMP_SEED_RUNS, struct.unpack_from("<Q", runs)[0])
    out_runs, out_data = bytearray(struct.pack("<Q", keep)), bytearray()
    for i in range(keep):
        start, npages, kind, status, _, off = struct.unpack_from("<QIIIIQ", runs, 8 + 32 * i)
        npages = min(npages, 2)
        new_off = len(out_data) if kind == 0 else 0
        if kind == 0:
            out_data += data[off:off + npages * PAGE]
        out_runs += struct.pack("<QIIIIQ", start, npages, kind, status, 0, new_off)
    sections[5], sections[6] = bytes(out_runs), bytes(out_data)
    body, entries = bytearray(), []
    for sid in sorted(sections):
        entries.append((sid, 32 + len(body), len(sections[sid])))
        body += sections[sid]
    table = 32 + len(body)
    tail = b"".join(struct.pack("<IIQQ", sid, 0, off, n) for sid, off, n in entries)
    size = table + len(tail)
    return b"CLDUMP\r\n" + struct.pack("<IIQQ", version, len(entries), table, size) + body + tail


PYHEAP_LAYOUT_SEEDS = 3   # the tables heap_fixture.h lays out: 3.11, 3.12, 3.13.0
# Inputs the pyheap harness found (fixed in cpython/heap.c): a thread list and an exception-state
# chain that both looped (heap_test.c "looping thread and exception chains are bounded").
PYHEAP_REGRESSIONS = {
    "regress-thread-loop": bytes.fromhex(
        "0200000000004e4e4e8c4e01000004394e338c2e394e334e4e00000000c94e4e"
        "4e8c7ae7332e312e07dbef7a3f6464736f642f010affffffffffffffff646973"
        "742d7061636b0c3b7e1a0b61010000642f13785146577f000064696c6c6c6c6c"
        "6c6c6c00e72e31e72e31db2e6c6c6c6c6c6c6c"),
}


LIBDATA_KINDS = 16   # byte 0's four bits: the libraries lib_fixture.h makes


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--dump":   # only the dump seed, from a dump
        with open(sys.argv[2], "rb") as f:
            write("dump", "tiny-python", dump_seed(f.read()))
        return
    for i in range(LIBDATA_KINDS):
        write("libdata", "kind-%d" % i, bytes([i]))
    for i in range(PYHEAP_LAYOUT_SEEDS):
        write("pyheap", "layout-%d" % i, bytes([i]))
    for name, data in PYHEAP_REGRESSIONS.items():
        write("pyheap", name, data)
    for i in range(WALK_LAYOUT_SEEDS):
        write("walk", "layout-%d" % i, bytes([i]))
    for name, data in WALK_REGRESSIONS.items():
        write("walk", name, data)
    python = sys.argv[1] if len(sys.argv) > 1 else sorted(
        glob.glob(os.path.expanduser("~/.pyenv/versions/3.11.*/bin/python3.11")))[-1]
    with tempfile.TemporaryDirectory(prefix="culeak-seeds-") as d:
        def unlimited():
            resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY,) * 2)
        p = subprocess.Popen([python, "-c", SCRIPT], cwd=d, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, preexec_fn=unlimited)
        assert p.stdout.readline().strip() == "READY"
        with open("/proc/%d/maps" % p.pid, "rb") as f:
            write("mappings", "tiny-python", f.read())
        culeak = os.path.join(os.path.dirname(os.path.dirname(HERE)), "build", "culeak")
        if os.path.exists(culeak):
            subprocess.run([culeak, "dump", "--pid", str(p.pid), "-o", os.path.join(d, "dump")],
                           check=True, capture_output=True)
            with open(os.path.join(d, "dump"), "rb") as f:
                write("dump", "tiny-python", dump_seed(f.read()))
        subprocess.run(["gcore", "-o", os.path.join(d, "gcore"), str(p.pid)], check=True,
                       capture_output=True)
        p.stdin.write("\n")
        p.stdin.flush()
        p.wait()
        if p.returncode != -signal.SIGABRT:
            sys.exit("make_seeds: the process did not abort (%r)" % p.returncode)
        for _ in range(50):   # the kernel writes the core as the process dies
            kernel = [c for c in glob.glob(os.path.join(d, "core*"))]
            if kernel:
                break
            time.sleep(0.1)
        if not kernel:
            sys.exit("make_seeds: no kernel core in %s (core_pattern?)" % d)
        cores = [("gcore", "%s/gcore.%d" % (d, p.pid)), ("kernel", kernel[0])]
        for name, path in cores:
            with open(path, "rb") as f:
                skel, notes = skeleton(f.read())
            write("core", "tiny-python-" + name, skel)
            if name == "kernel":
                for rname, data in regressions(skel).items():
                    write("core", rname, data)
            for i, n in enumerate(notes):
                write("corenotes", "tiny-python-%s-notes%d" % (name, i), n)
    with open(os.path.realpath(python), "rb") as f:
        write("corenotes", "python-elf-head", f.read(PAGE))
    write("corenotes", "regress-long-buildid", long_buildid_elf())


if __name__ == "__main__":
    main()
