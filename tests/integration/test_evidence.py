"""Frozen evidence (tests/evidence/, made by its make.py): each checked-in dump of
tests/scenarios/markers.py, made on one interpreter per CPython layout table and variant, still
gives what that process said of itself (its version, every planted Marker with its path, the
per-type counts of gc.get_objects()); each --allocator-only dump of tests/scenarios/cuda_blocks.py,
made on one torch release per CUDA allocator table (cudaMalloc'ed and expandable segments), still
gives the segments and blocks torch.cuda.memory._snapshot() listed, read with that table; each
dump of tests/scenarios/holders.py --small-heap, made on one torch release per tensor and autograd
table, still gives every top-level tensor's fields and every graph node for node as the process
saw them. The dumps hold what culeak read, so these run with none of those interpreters or wheels
installed."""
import glob
import json
import lzma
import os

import harness
import test_blocks
import test_holders
import test_refs
from harness import check_eq

EVIDENCE = os.path.join(harness.ROOT, "tests", "evidence")


def evidence(truth_file):
    def test():
        with open(truth_file) as f:
            truth = json.load(f)
        with harness.tempdir() as d:
            dump = os.path.join(d, "evidence.cldump")
            with lzma.open(truth_file.replace(".truth.json", ".cldump.xz")) as f, \
                    open(dump, "wb") as out:
                out.write(f.read())
            info = harness.culeak_json("info", "--dump", dump)
            if "segments" in truth:
                check_eq(info["torch"]["version"], truth["torch"], "torch.version")
                check_allocator(dump, truth)
            elif "edges" in truth:
                check_eq(info["torch"]["version"], truth["torch"], "torch.version")
                check_tensors(dump, truth)
            else:
                check_eq(info["python"]["version"], truth["version"], "python.version")
                test_refs.check_target(["--dump", dump], truth)
    return test


def check_allocator(dump, truth):
    """The blocks as the version's table reads them, and as the table truth names does (the one
    the release was verified with) when forced: both torch's snapshot."""
    for forced in ([], ["--allocator-layout", truth["allocator_layout"]]):
        doc = harness.culeak_json("blocks", "--dump", dump, *forced)
        test_blocks.compare(doc, truth)
        check_eq(len(doc["warnings"]), 1 + len(forced) // 2, "warnings %r" % doc["warnings"])


TENSOR_FIELDS = ("data_ptr", "shape", "strides", "storage_offset", "dtype", "nbytes",
                 "requires_grad", "type", "device", "grad_fn")


def check_tensors(dump, truth):
    """The walk the dump was made with: each tensor truth names, read with the release's tensor
    table, and each graph, read with its autograd table (holders are not compared: the walk
    stopped at --max-objects, short of most of what each global reaches)."""
    doc = harness.culeak_json("tensors", "--dump", dump, "--max-objects", str(truth["max_objects"]))
    by_address = {int(t["address"], 16): t for t in doc["tensors"]}
    problems = []
    for name, want in truth["tensors"].items():
        got = by_address.get(int(want["address"], 16))
        if got is None:
            problems.append("%s: tensor %s not reported" % (name, want["address"]))
            continue
        got = dict(got, data_ptr=hex(int(got["data_ptr"], 16)))
        problems += ["%s: %s %r, want %r" % (name, f, got[f], want[f]) for f in TENSOR_FIELDS
                     if got[f] != want[f]]
    test_holders.check_layout_fit(doc)
    problems += test_holders.compare_edges(doc, truth)
    if problems:
        raise harness.Failure("\n".join(problems))


def tests():
    files = sorted(glob.glob(os.path.join(EVIDENCE, "*.truth.json")))
    if not files:
        yield "present", lambda: harness.check(False, "no evidence in %s" % EVIDENCE)
    for truth_file in files:
        yield os.path.basename(truth_file)[:-len(".truth.json")], evidence(truth_file)
