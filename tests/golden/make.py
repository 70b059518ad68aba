#!/usr/bin/env python3
"""Freezes every report of every frozen-evidence dump (tests/evidence/) as one culeak binary
writes it: text, JSON and HTML, stdout, stderr and exit status, byte for byte. A refactoring of
the commands or the reports must leave them as they are (tests/integration/test_golden.py); a
change meant to alter a report remakes them here, in the same commit, so the diff shows it.

    tests/golden/make.py [CULEAK]     # default: build/culeak

One file a dump, tests/golden/NAME.json.xz: {"command line": {"rc", "stdout", "stderr",
"html"?}}. The only fields that change from run to run (a snapshot's time and host) are
replaced by placeholders, here and in the test alike."""
import glob
import json
import lzma
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EVIDENCE = os.path.join(ROOT, "tests", "evidence")
GOLDEN = os.path.join(ROOT, "tests", "golden")
DUMP = "evidence.cldump"   # the dump's name in every command line (run in its folder)
HTML = "report.html"

# Every report of a target in both forms, the page, and the refs of a type every dump has.
COMMANDS = [
    ["info"], ["info", "--json"],
    ["objects"], ["objects", "--json"], ["objects", "--top", "5"],
    ["balance"], ["balance", "--json"],
    ["refs", "--type", "Tensor"], ["refs", "--type", "Tensor", "--json"],
    ["refs", "--type", "Marker"], ["refs", "--type", "Marker", "--json", "--max-paths", "3"],
    ["tensors"], ["tensors", "--json"], ["tensors", "--full", "--min-bytes", "1K"],
    ["summary"], ["summary", "--json"], ["summary", "--top", "3", "--full"],
    ["summary", "--html", HTML],
    ["blocks"], ["blocks", "--json"], ["blocks", "--state", "free"], ["blocks", "--html", HTML],
    ["snapshot", "--json"], ["check-layout"],
]

# Each report in text and in JSON: every number the text gives must be in the JSON
# (tests/integration/test_golden.py), so that the two forms cannot disagree.
PAIRS = [(["info"], ["info", "--json"]), (["objects"], ["objects", "--json"]),
         (["refs", "--type", "Tensor"], ["refs", "--type", "Tensor", "--json"]),
         (["tensors"], ["tensors", "--json"]), (["summary"], ["summary", "--json"]),
         (["blocks"], ["blocks", "--json"])]

VOLATILE = [(re.compile(r'"time": ?"[^"]*"'), '"time":"T"'),
            (re.compile(r'"hostname": ?"[^"]*"'), '"hostname":"H"'),
            (re.compile(r'^(  (?:rank \d+|pid \d+) +\S+ )\S+', re.M), r'\1H')]   # merge's host


def settle(text):
    for pattern, fixed in VOLATILE:
        text = pattern.sub(fixed, text)
    return text


def walk_options(dump_xz, args):
    """The --max-objects a command on this dump needs: its maker walked that far."""
    with open(dump_xz.replace(".cldump.xz", ".truth.json")) as f:
        limit = json.load(f).get("max_objects")
    return ["--max-objects", str(limit)] if limit and args[0] not in ("info", "check-layout") \
        else []


def line_of(dump_xz, args):
    """The command line as the golden file names it."""
    return " ".join(args + walk_options(dump_xz, args) + ["--dump", DUMP])


def reports(culeak, dump_xz):
    """{command line: what culeak made of it} for one evidence dump, read as far as its maker
    walked it (a tensor dump holds the first --max-objects objects only)."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="culeak-golden-") as d:
        with lzma.open(dump_xz) as f, open(os.path.join(d, DUMP), "wb") as w:
            w.write(f.read())
        for args in COMMANDS:
            given = args + walk_options(dump_xz, args) + ["--dump", DUMP]
            line = " ".join(given)
            r = subprocess.run([culeak] + given, cwd=d, capture_output=True, timeout=600)
            got = {"rc": r.returncode, "stdout": settle(r.stdout.decode("utf-8", "replace")),
                   "stderr": r.stderr.decode("utf-8", "replace")}
            page = os.path.join(d, HTML)
            if os.path.exists(page):
                with open(page, encoding="utf-8", errors="replace") as f:
                    got["html"] = settle(f.read())
                os.unlink(page)
            out[line] = got
    return out


# Reports across dumps: diff and merge of the snapshots of the tensor dumps (one file for all).
CROSS = "cross"


def cross_reports(culeak):
    """{command line: what culeak made of it} for diff and merge over the tensor dumps' snapshot
    files, each named by its dump (snap-NAME.json), and a diff from a heap without tensors."""
    out = {}
    tensor_dumps = [d for d in dumps() if d.endswith("-tensors.cldump.xz")]
    tensor_dumps.insert(0, os.path.join(EVIDENCE, "pyenv-3.11.cldump.xz"))
    with tempfile.TemporaryDirectory(prefix="culeak-golden-") as d:
        names = []
        for dump_xz in tensor_dumps:
            name = os.path.basename(dump_xz)[:-len(".cldump.xz")]
            with lzma.open(dump_xz) as f, open(os.path.join(d, DUMP), "wb") as w:
                w.write(f.read())
            snap = "snap-%s.json" % name
            subprocess.run([culeak, "snapshot", "-o", snap] + walk_options(dump_xz, ["snapshot"]) +
                           ["--dump", DUMP], cwd=d, capture_output=True, timeout=600, check=True)
            names.append(snap)
        lines = [["diff", names[0], names[-1]], ["diff", names[0], names[-1], "--json"],
                 ["diff", names[-1], names[0]], ["merge"] + names[1:], ["merge", "--json"] + names]
        for args in lines:
            r = subprocess.run([culeak] + args, cwd=d, capture_output=True, timeout=600)
            out[" ".join(args)] = {"rc": r.returncode,
                                   "stdout": settle(r.stdout.decode("utf-8", "replace")),
                                   "stderr": r.stderr.decode("utf-8", "replace")}
    return out


def dumps():
    return sorted(glob.glob(os.path.join(EVIDENCE, "*.cldump.xz")))


def golden_file(dump_xz):
    return os.path.join(GOLDEN, os.path.basename(dump_xz).replace(".cldump.xz", ".json.xz"))


def main():
    culeak = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                             os.path.join(ROOT, "build", "culeak"))
    for dump_xz in dumps():
        with lzma.open(golden_file(dump_xz), "wt", preset=9) as f:
            json.dump(reports(culeak, dump_xz), f, indent=0, sort_keys=True)
        print(os.path.basename(golden_file(dump_xz)))
    with lzma.open(os.path.join(GOLDEN, CROSS + ".json.xz"), "wt", preset=9) as f:
        json.dump(cross_reports(culeak), f, indent=0, sort_keys=True)


if __name__ == "__main__":
    main()
