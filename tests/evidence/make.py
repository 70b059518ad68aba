"""Makes the frozen evidence, so tests/integration/test_evidence.py keeps each layout tested when
its interpreter or wheel is gone from the machines that run the tests:
- for one interpreter per CPython layout table and variant, a `culeak dump` of
  tests/scenarios/markers.py and the ground truth the scenario printed from inside;
- for one torch release per CUDA allocator table, with cudaMalloc'ed and with expandable
  segments, a `culeak dump --allocator-only` of tests/scenarios/cuda_blocks.py on the simulated
  device and what torch.cuda.memory._snapshot() said of it (a whole dump of a torch process is
  tens of MB: the heap torch's import builds; the allocator's structures are a few hundred KB);
- for one torch release per tensor and autograd table (and C++ ABI), a dump of
  tests/scenarios/holders.py --small-heap limited by --max-objects: the scenario takes every
  module but __main__, sys and builtins out of sys.modules once its truth is printed, so that a
  walk of TENSOR_MAX_OBJECTS objects from __main__ holds every tensor the truth names and the
  graphs they carry (the rest of the heap, torch's own, is left out of the dump).
Dumps are xz-compressed. Run it by hand when a layout table or the dump format changes (it needs
build/culeak, every interpreter harness.interpreters() finds and the CUDA torch venvs of
`CULEAK_FULL=1 scripts/install-deps`):

    /usr/bin/python3 tests/evidence/make.py [NAME ...]"""
import json
import lzma
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import harness  # noqa: E402
import test_blocks  # noqa: E402
import test_evidence  # noqa: E402
import test_holders  # noqa: E402

# One interpreter per table and variant: 3.9-3.12, 3.13.0 and later 3.13 (PyGC_Head moved), 3.14,
# 3.15.
EVIDENCE = ("pyenv-3.9", "pyenv-3.10", "pyenv-3.11", "pyenv-3.12", "pyenv-3.13", "trixie-3.13",
            "sid-3.14", "sid-3.15")
# One release per allocator table (test_blocks.RELEASES says which table each has).
ALLOCATOR_EVIDENCE = ("2.1", "2.4", "2.6", "2.8", "2.9", "2.10", "2.11", "2.12", "2.14")
# One release per tensor and autograd table (test_holders.RELEASES names each one's interpreter):
# 1.13 (Debian's), 2.0, 2.1, 2.4 and 2.6 (old C++ ABI), 2.8 (new), 2.10, 2.13, 2.14. 2.0.1 is a
# CUDA 11.7 wheel of 4 GB that install-deps leaves out; its venv is made by hand:
#     python3.11 -m venv build/venv/torch-2.0-cuda
#     build/venv/torch-2.0-cuda/bin/python -m pip install torch==2.0.1   (PyPI's)
TENSOR_EVIDENCE = ("1.13", "2.0-cuda", "2.1-cuda", "2.4-cuda", "2.6-cuda", "2.8-cuda", "2.10-cuda",
                   "2.13", "2.14-cuda")
# Objects the walk of a --small-heap holders.py takes: __main__'s globals and what they hold,
# three steps deep (losses[0]); 800 were enough on 2.13. make_tensors checks the dump it made.
TENSOR_MAX_OBJECTS = 1000


def save(name, dump, truth, version):
    with open(dump, "rb") as f, lzma.open(dump + ".xz", "wb", preset=9) as out:
        out.write(f.read())
    os.unlink(dump)
    with open(os.path.join(HERE, name + ".truth.json"), "w") as f:
        json.dump(truth, f, indent=1, sort_keys=True)
        f.write("\n")
    print("%s: %s, %d bytes" % (name, version, os.path.getsize(dump + ".xz")))


def culeak_dump(name, pid, dump, *options):
    r = subprocess.run([harness.CULEAK, "dump", "--pid", str(pid), "-o", dump, *options],
                       capture_output=True, text=True, timeout=600)
    if r.returncode:
        raise SystemExit("%s: culeak dump failed: %s" % (name, r.stderr))


def make(name, python):
    dump = os.path.join(HERE, name + ".cldump")
    with harness.Process(python, "markers.py") as p, harness.stopped(p):
        culeak_dump(name, p.pid, dump)
        truth = p.truth
    save(name, dump, truth, truth["version"])


def make_allocator(name, release, expandable):
    python, layout, cuda = test_blocks.RELEASES[release]
    env = dict(harness.simgpu_env(cuda), **(test_blocks.EXPANDABLE if expandable else {}))
    dump = os.path.join(HERE, name + ".cldump")
    with harness.Process(python, "cuda_blocks.py", env=env) as p, harness.stopped(p):
        culeak_dump(name, p.pid, dump, "--allocator-only")
        truth = {k: p.truth[k] for k in ("torch", "reserved", "allocated", "segments")}
    truth["allocator_layout"] = layout
    save(name, dump, truth, truth["torch"])


def make_tensors(name, release):
    dump = os.path.join(HERE, name + ".cldump")
    python = test_holders.RELEASES.get(release) or os.path.join(
        harness.ROOT, "build", "venv", "torch-%s" % release, "bin", "python")
    with harness.Process(python, "holders.py", "--small-heap") as p, harness.stopped(p):
        culeak_dump(name, p.pid, dump, "--max-objects", str(TENSOR_MAX_OBJECTS))
        truth = {k: p.truth[k] for k in ("torch", "tensors", "edges")}
    truth["max_objects"] = TENSOR_MAX_OBJECTS
    test_evidence.check_tensors(dump, truth)   # the walk reached all truth names, or no evidence
    save(name, dump, truth, truth["torch"])


def tensor_names():
    for release in TENSOR_EVIDENCE:
        yield "torch-%s-tensors" % release.replace("-cuda", ""), release


def allocator_names():
    for release in ALLOCATOR_EVIDENCE:
        for expandable in (False, True):
            yield "torch-%s-allocator%s" % (release, "-expandable" if expandable else ""), \
                release, expandable


def main():
    pythons = dict(harness.interpreters())
    allocators = {name: (release, expandable) for name, release, expandable in allocator_names()}
    tensors = dict(tensor_names())
    for name in sys.argv[1:] or EVIDENCE + tuple(allocators) + tuple(tensors):
        if name in allocators:
            make_allocator(name, *allocators[name])
        elif name in tensors:
            make_tensors(name, tensors[name])
        else:
            make(name, pythons[name])


if __name__ == "__main__":
    main()
