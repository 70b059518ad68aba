"""Makes the frozen evidence: for one interpreter per CPython layout table and variant, a
`culeak dump` of tests/scenarios/markers.py (xz-compressed) and the ground truth the scenario
printed from inside, so tests/integration/test_evidence.py keeps each layout tested when its
interpreter is gone from the machines that run the tests. Run it by hand when a layout table or
the dump format changes (it needs build/culeak and every interpreter harness.interpreters() finds):

    /usr/bin/python3 tests/evidence/make.py [NAME ...]"""
import json
import lzma
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import harness  # noqa: E402

# One interpreter per table and variant: 3.9-3.12, 3.13.0 and later 3.13 (PyGC_Head moved), 3.14.
EVIDENCE = ("pyenv-3.9", "pyenv-3.10", "pyenv-3.11", "pyenv-3.12", "pyenv-3.13", "trixie-3.13",
            "sid-3.14")


def make(name, python):
    dump = os.path.join(HERE, name + ".cldump")
    with harness.Process(python, "markers.py") as p, harness.stopped(p):
        r = subprocess.run([harness.CULEAK, "dump", "--pid", str(p.pid), "-o", dump],
                           capture_output=True, text=True, timeout=600)
        if r.returncode:
            raise SystemExit("%s: culeak dump failed: %s" % (name, r.stderr))
        truth = p.truth
    with open(dump, "rb") as f, lzma.open(dump + ".xz", "wb", preset=9) as out:
        out.write(f.read())
    os.unlink(dump)
    with open(os.path.join(HERE, name + ".truth.json"), "w") as f:
        json.dump(truth, f, indent=1, sort_keys=True)
        f.write("\n")
    print("%s: %s, %d bytes" % (name, truth["version"], os.path.getsize(dump + ".xz")))


def main():
    pythons = dict(harness.interpreters())
    for name in sys.argv[1:] or EVIDENCE:
        make(name, pythons[name])


if __name__ == "__main__":
    main()
