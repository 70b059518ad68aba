"""Golden reports (tests/golden/, made by its make.py): every report of every frozen-evidence dump,
text, JSON and HTML, with its stderr and exit status, is what the binary that froze it wrote, byte
for byte. A refactoring of the commands or the reports passes unchanged; a change meant to alter a
report remakes the files in its own commit, so that the diff shows what changed."""
import glob
import importlib.util
import json
import lzma
import os
import re

import harness

GOLDEN = os.path.join(harness.ROOT, "tests", "golden")
_spec = importlib.util.spec_from_file_location("golden_make", os.path.join(GOLDEN, "make.py"))
make = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make)


def golden(dump_xz):
    def test():
        with lzma.open(make.golden_file(dump_xz), "rt") as f:
            want = json.load(f)
        got = make.reports(harness.CULEAK, dump_xz)
        harness.check_eq(sorted(got), sorted(want), "the command lines frozen")
        problems = []
        for line in sorted(want):
            for part in ("rc", "stdout", "stderr", "html"):
                if got[line].get(part) != want[line].get(part):
                    problems.append("%s: %s differs:\n%s" % (line, part, first_difference(
                        str(want[line].get(part)), str(got[line].get(part)))))
        if problems:
            raise harness.Failure("\n".join(problems[:8]))
    return test


NUMBER = re.compile(r"0x[0-9a-fA-F]+|\d+(?:\.\d+)?(?: (?:B|KiB|MiB|GiB|TiB)\b)?")


def tokens(text):
    """The numbers of a text, as culeak writes them: hex, decimal, or a size in human units."""
    for m in NUMBER.finditer(text):
        t = m.group(0)
        if t.startswith("0x"):
            yield int(t, 16)
        elif " " in t:
            yield t   # a size: matched against the JSON's exact bytes
        elif "." in t:
            yield from (int(x) for x in t.split("."))   # a version, as the JSON's strings have it
        else:
            yield int(t)


def json_numbers(v, out):
    """Every number a JSON document holds: its numbers, the numbers in its strings (paths,
    versions, addresses) and the length of each array (a count the text gives)."""
    if isinstance(v, bool) or v is None:
        return out
    if isinstance(v, (int, float)):
        out.add(v)
    elif isinstance(v, str):
        out.update(x for x in tokens(v) if not isinstance(x, str))
    elif isinstance(v, list):
        out.add(len(v))
        for x in v:
            json_numbers(x, out)
    elif isinstance(v, dict):
        for k, x in v.items():
            json_numbers(k, out)
            json_numbers(x, out)
    return out


def in_json(token, numbers):
    """A number of the text in the JSON; a size in human units against the exact bytes (of
    either sign: a diff's text gives "-4.0 MiB" for -4194304)."""
    if not isinstance(token, str):
        return token in numbers
    sizes = {abs(n) for n in numbers if isinstance(n, int)}
    return any(harness.size_text(n) == token for n in sizes)


def text_in_json(dump_xz):
    """Every number of each report's text is in its JSON (make.PAIRS): one model, two forms."""
    def test():
        with lzma.open(make.golden_file(dump_xz), "rt") as f:
            frozen = json.load(f)
        problems = []
        for text_args, json_args in make.PAIRS:
            text = frozen.get(make.line_of(dump_xz, text_args))
            doc = frozen.get(make.line_of(dump_xz, json_args))
            if not text or not doc or text["rc"] or doc["rc"]:
                continue
            numbers = json_numbers(json.loads(doc["stdout"]), set())
            missing = [t for t in tokens(text["stdout"]) if not in_json(t, numbers)]
            if missing:
                problems.append("%s: %d numbers of the text not in the JSON: %s" % (
                    " ".join(text_args), len(missing), missing[:10]))
        problems += page_problems(dump_xz, frozen)
        if problems:
            raise harness.Failure("\n".join(problems))
    return test


PAGE_DATA = re.compile(r"<script id='culeak-data' type='application/json'>\n(.*?)\n</script>",
                       re.S)


def page_problems(dump_xz, frozen):
    """The HTML page is the third form: the documents it draws from are the --json ones."""
    problems = []
    for command in ("summary", "blocks"):
        page = frozen.get(make.line_of(dump_xz, [command, "--html", make.HTML]))
        doc = frozen.get(make.line_of(dump_xz, [command, "--json"]))
        if not page or page["rc"] or not doc or doc["rc"]:
            continue
        data = PAGE_DATA.search(page.get("html", ""))
        if not data:
            problems.append("%s --html: no culeak-data in the page" % command)
            continue
        carried = json.loads(data.group(1).replace("\\u003c", "<"))
        if carried.get(command) != json.loads(doc["stdout"]):
            problems.append("%s --html: the page's %s document is not %s --json" % (
                command, command, command))
    return problems


def cross():
    """diff and merge over the dumps' snapshot files, as frozen."""
    with lzma.open(os.path.join(GOLDEN, make.CROSS + ".json.xz"), "rt") as f:
        want = json.load(f)
    got = make.cross_reports(harness.CULEAK)
    harness.check_eq(sorted(got), sorted(want), "the command lines frozen")
    problems = ["%s: %s differs:\n%s" % (line, part, first_difference(
        str(want[line][part]), str(got[line][part])))
        for line in sorted(want) for part in ("rc", "stdout", "stderr")
        if got[line][part] != want[line][part]]
    if problems:
        raise harness.Failure("\n".join(problems[:8]))


def first_difference(want, got):
    at = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))
    return "  want ...%r...\n  got  ...%r..." % (want[max(0, at - 60):at + 60],
                                                  got[max(0, at - 60):at + 60])


def tests():
    dumps = make.dumps()
    if not dumps or not glob.glob(os.path.join(GOLDEN, "*.json.xz")):
        yield "present", lambda: harness.check(False, "no golden reports in %s" % GOLDEN)
    yield "diff and merge", cross
    for dump_xz in dumps:
        name = os.path.basename(dump_xz)[:-len(".cldump.xz")]
        yield name, golden(dump_xz)
        yield name + ":text-in-json", text_in_json(dump_xz)
