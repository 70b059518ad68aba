"""`culeak blocks` on PyTorch's real caching allocator, running on the simulated CUDA device:
segments, blocks and their states must equal what torch.cuda.memory._snapshot() said in the same
process just before it paused, live and from both kinds of core, with cudaMalloc'ed and with
expandable segments, for each allocator layout line's own torch release. (The simulated device
stands in for cudaMalloc and the driver's virtual-memory calls only; the allocator's structures
are the wheel's own.)"""
import contextlib
import json
import os
import subprocess

import harness
from harness import check, check_eq

PYTHON = harness.CUDA_TORCH_VENV
# torch release -> (its venv, the layout table culeak must choose for it, its CUDA major)
RELEASES = {"2.14": (PYTHON, "2.13-2.14", 13)}
for _v, _layout, _cuda in (("2.1", "2.1", 12), ("2.4", "2.4", 12), ("2.6", "2.6-2.7", 12),
                           ("2.7", "2.6-2.7", 12), ("2.8", "2.8", 12), ("2.9", "2.9", 12),
                           ("2.10", "2.10", 12), ("2.11", "2.11", 13),
                           ("2.12", "2.12", 13), ("2.13", "2.13-2.14", 13),
                           ("2.15", "2.15", 13)):
    RELEASES[_v] = (harness.cuda_python(_v), _layout, _cuda)
EXPANDABLE = {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}


def mapped_ranges(segment):
    """A segment as the snapshot shows it: an expandable one is one segment per mapped range."""
    runs, run = [], []
    for b in segment["blocks"] + [None]:
        if b is None or b["state"] == "unmapped":
            if run:
                runs.append(run)
            run = []
        else:
            run.append([int(b["address"], 16), b["size"], b["state"]])
    return [{"address": r[0][0], "size": sum(b[1] for b in r), "pool": segment["pool"],
             "pool_id": segment["pool_id"], "stream": int(segment["stream"], 16), "blocks": r}
            for r in runs]


def compare(doc, truth):
    problems = []
    devices = doc["devices"]
    if len(devices) != 1:
        raise harness.Failure("want one device, got %r" % devices)
    d = devices[0]
    if (d["reserved"], d["allocated"]) != (truth["reserved"], truth["allocated"]):
        problems.append("totals %r, snapshot %r" % ((d["reserved"], d["allocated"]),
                                                    (truth["reserved"], truth["allocated"])))
    got = [r for s in d["segments"] for r in mapped_ranges(s)]
    want = sorted(truth["segments"], key=lambda s: s["address"])
    if got != want:
        problems.append("segments differ from the snapshot:\n  culeak   %r\n  snapshot %r" % (got, want))
    for s in d["segments"]:   # fragmentation figures, recomputed from the snapshot's own blocks
        snap = next((w for w in want if w["address"] == int(s["address"], 16)), None)
        if not snap:
            continue
        alloc = sum(b[1] for b in snap["blocks"] if b[2] == "active_allocated")
        free = [b[1] for b in snap["blocks"] if b[2] == "inactive"]
        expect = {"allocated_size": alloc, "largest_free": max(free, default=0),
                  "inactive_split": sum(free) if alloc else 0,
                  "pinned": bool(alloc) and alloc * 8 < snap["size"] and not s["expandable"],
                  "mapped": snap["size"]}
        have = {k: s[k] for k in expect}
        if have != expect:
            problems.append("segment %s usage %r, want %r" % (s["address"], have, expect))
    paths = {}
    for s in d["segments"]:
        for b in s["blocks"]:
            for t in b["tensors"]:
                paths[int(b["address"], 16)] = t["paths"]
    loose = [b for s in d["segments"] for b in s["blocks"] if b["unattributed"]]
    if "unattributed" in truth and [int(b["address"], 16) for b in loose] != [
            int(truth["unattributed"], 16)]:
        problems.append("unattributed blocks %r, want only %s" % (
            [b["address"] for b in loose], truth["unattributed"]))
    for ptr, path in truth.get("held", {}).items():
        if paths.get(int(ptr, 16)) != [path]:
            problems.append("block %s: holders %r, want [%r]" % (ptr, paths.get(int(ptr, 16)), path))
    # each MemPool's segments name it, where the holders were read (not from an allocator-only
    # dump)
    owners = {"%d,%d" % tuple(s["pool_id"]): s["pool_owner"] for s in d["segments"]
              if any(s["pool_id"])}
    if truth.get("pools") and any(b["tensors"] for s in d["segments"] for b in s["blocks"]):
        want = {k: v for k, v in truth["pools"].items() if k in owners}
        if {k: owners[k] for k in want} != want or not want:
            problems.append("private pools' owners %r, want %r" % (owners, truth["pools"]))
    if problems:
        raise harness.Failure("\n".join(problems))


def blocks(release, kind, expandable):
    python, layout, cuda = RELEASES[release]

    def test():
        env = dict(harness.simgpu_env(cuda), **(EXPANDABLE if expandable else {}))
        with harness.tempdir() as d:
            if kind == "kernel-core":
                truth, core = harness.kernel_core(python, "cuda_blocks.py", [], d, env=env)
                doc = harness.culeak_json("blocks", "--core", core)
            else:
                with harness.Process(python, "cuda_blocks.py", env=env) as p:
                    target = ["--pid", p.pid] if kind == "live" else ["--core", harness.gcore(p.pid, d)]
                    truth, doc = p.truth, harness.culeak_json("blocks", *target)
        compare(doc, truth)
        check(doc["warnings"] == [], "warnings: %r" % doc["warnings"])
        # (torch 2.4 keeps a CUDA graph's private pool out of expandable segments)
        segments = [s for s in doc["devices"][0]["segments"] if s["pool_id"] == [0, 0]]
        check(all(s["expandable"] == expandable for s in segments), "expandable flags: %r" %
              [s["expandable"] for s in segments])
        if expandable:   # each reservation's tail has no memory behind it
            check(all(s["blocks"][-1]["state"] == "unmapped" and s["mapped"] < s["size"]
                      for s in segments), "unmapped tails: %r" % segments)
    return test


def wrong_layout(release, other):
    """Another line's table forced on an allocator is refuted by the structure: exit 9."""
    def test():
        python, right, cuda = RELEASES[release]
        with harness.Process(python, "cuda_blocks.py", env=harness.simgpu_env(cuda)) as p:
            r = harness.culeak("blocks", "--pid", p.pid, "--allocator-layout", other, expect_rc=9)
            named = "layout %s" % RELEASES[other][1]
            check(named in r.stderr and "does not fit" in r.stderr, r.stderr)
            doc = harness.culeak_json("blocks", "--pid", p.pid, "--allocator-layout", right)
            compare(doc, p.truth)
            check(any("forced by --allocator-layout" in w for w in doc["warnings"]), doc["warnings"])
    return test


def with_version_py(core, d, version, cuda):
    """Reads the core as if its torch/version.py said this (it is brought in by --lib-path)."""
    lib = os.path.join(d, "lib-%s-%s" % (version, cuda))
    os.mkdir(lib)
    with open(os.path.join(lib, "version.py"), "w") as f:
        f.write("__version__ = %r\ncuda = %r\n" % (version, cuda))
    return ["--core", core, "--lib-path", lib]


def other_builds():
    """A torch version with no table of its own: the table the structure fits is used, and the
    report says so. A CUDA 12 build: the private-pool map moves with cudaDeviceProp, so on this
    CUDA 13 build the CUDA 12 variant must be refused by the structure."""
    with harness.tempdir() as d:
        truth, core = harness.kernel_core(PYTHON, "cuda_blocks.py", [], d, env=harness.simgpu_env())
        doc = harness.culeak_json("blocks", *with_version_py(core, d, "2.99.0+cu130", "13.0"))
        compare(doc, truth)
        check(any("torch 2.99.0+cu130 has no allocator layout of its own: layout 2.15 was used"
                  in w for w in doc["warnings"]), doc["warnings"])
        r = harness.culeak("blocks", *with_version_py(core, d, "2.14.1+cu128", "12.8"), expect_rc=9)
        check("the allocator layout 2.13-2.14 does not fit device 0" in r.stderr, r.stderr)


def cuda13_build_before_2_10():
    """Before 2.10 the DeviceCachingAllocator embeds no cudaDeviceProp, so a build for the other
    CUDA major (2.9 had CUDA 13 builds) has the same layout: read as one, a 2.9.1+cu128 core
    walks with 2.9's table unchanged, and no place is said to be computed."""
    python, layout, cuda = RELEASES["2.9"]
    with harness.tempdir() as d:
        with harness.Process(python, "cuda_blocks.py", env=harness.simgpu_env(cuda)) as p:
            truth, core = p.truth, harness.gcore(p.pid, d)
        doc = harness.culeak_json("blocks", *with_version_py(core, d, "2.9.1+cu130", "13.0"))
        compare(doc, truth)
        check(doc["warnings"] == [], "warnings: %r" % doc["warnings"])


def torch_snapshot(kind, expandable, stacks=None, entries=None):
    """--torch-snapshot writes what torch.cuda.memory._snapshot() returned in the process itself,
    field for field (frames apart: there culeak puts each allocated block's holders), and torch's
    own _memory_viz reads it: `stats` prints the same as for the process's snapshot, and
    `segment_plot` makes its page. From a live process and from its core. With allocation
    stacks recorded (_record_memory_history(stacks=...)), every block's and segment's frames
    are torch's own (its Python frames, when it also recorded C++ ones) after the holders', also
    from what culeak dump saved; and the allocator's trace is exported entry by entry as the
    process's snapshot listed it (see check_trace), the last `entries` of it when the process
    kept only so many, so that the ring has wrapped."""
    def test():
        env = dict(harness.simgpu_env(), **(EXPANDABLE if expandable else {}))
        record = ["--record-history", stacks] if stacks else []
        record += ["--trace-entries", str(entries)] if entries else []
        with harness.tempdir() as d:
            own, ours = os.path.join(d, "own.pickle"), os.path.join(d, "ours.pickle")
            with harness.Process(PYTHON, "cuda_blocks.py", "--snapshot-to", own, *record,
                                 env=env) as p:
                target = (["--core", harness.gcore(p.pid, d)] if kind == "gcore" else
                          ["--pid", p.pid])
                if kind == "dump":   # what culeak dump saved of the live process: the same
                    harness.culeak("dump", "--pid", p.pid, "-o", os.path.join(d, "job.cldump"))
                    target = ["--dump", os.path.join(d, "job.cldump")]
                doc = harness.culeak_json("blocks", *target, "--torch-snapshot", ours)
            got, err = read_snapshots(PYTHON, own, ours)
            check(got.get("same"), "the export differs from torch's snapshot:\n  culeak %s\n"
                  "  torch  %s %s" % (got.get("ours"), got.get("own"), err))
            for ptr, path in p.truth["held"].items():
                check_eq(got["holders"].get(ptr), [path], "holders of the block at %s" % ptr)
            if stacks:
                check_recorded(got, err)
                check(any(len(f) >= 2 and f[0]["name"] == "allocate" and
                          f[0]["filename"].endswith("cuda_blocks.py")
                          for f in got["recorded"].values()), "no allocate() frame: %r" % got)
                cpp = [w for w in doc["warnings"] if "C++ frames" in w]
                check(bool(cpp) == (stacks == "all"), "C++ frames noted: %r" % doc["warnings"])
                check_trace(got, entries, None if entries else p.truth["held"])
                core_clock = [w for w in doc["warnings"] if "this machine's clock" in w]
                check(bool(core_clock) == (kind == "gcore"), "clock noted: %r" % doc["warnings"])
            else:
                check_eq(got["trace"], [[]], "device_traces")
            viz = [PYTHON, "-W", "ignore", "-m", "torch.cuda._memory_viz"]
            stats = [subprocess.run(viz + ["stats", f], capture_output=True, text=True)
                     for f in (own, ours)]
            check(stats[0].returncode == 0 and "total_reserved" in stats[0].stdout,
                  "_memory_viz stats of torch's own snapshot: %s" % stats[0].stderr[-1000:])
            check_eq(stats[1].stdout, stats[0].stdout, "_memory_viz stats")
            for plot in ("segment_plot", "trace_plot"):
                page = os.path.join(d, plot + ".html")
                r = subprocess.run(viz + [plot, ours, "-o", page], capture_output=True,
                                   text=True)
                check(r.returncode == 0 and os.path.getsize(page) > 1000,
                      "_memory_viz %s: %s" % (plot, r.stderr[-1000:]))
            if stacks:   # torch's own account of the trace: the same, entry for entry
                texts = [subprocess.run(viz + ["trace", f], capture_output=True, text=True)
                         for f in (ours, os.path.join(d, "own.pickle.expected"))]
                check(texts[0].returncode == 0 and "entries" in texts[0].stdout,
                      "_memory_viz trace: %s" % texts[0].stderr[-1000:])
                check_eq(texts[0].stdout, texts[1].stdout, "_memory_viz trace")
    return test


# How far culeak's time_us may be from the process's own: each converts the trace's TSC ticks with
# the rate measured between the allocator's start and its own reading (torch's at its snapshot,
# culeak's when it reads), two estimates of one rate that agree to within this.
TIME_SLACK_US = 2


def check_trace(got, entries, held):
    """The exported trace is the process's own snapshot's, entry by entry (its keys, frames and
    times; a time within TIME_SLACK_US), followed by the entry that taking that snapshot
    recorded (torch appends one), the last `entries` only when the ring keeps so many. With the
    whole trace (held given), the allocation of each block still held names the holder first
    among its frames, as the block does."""
    ours, own = got["trace"][0], got["trace_own"][0]
    check(own, "the process recorded no trace")
    last = ours[-1] if ours else {}
    check_eq({k: last.get(k) for k in ("action", "addr", "stream")},
             {"action": "snapshot", "addr": 0, "stream": 0}, "the snapshot's own trace entry")
    want = own + [last]
    want = want[-entries:] if entries else want
    check_eq(len(ours), len(want), "trace entries")
    worst = 0
    for i, (a, b) in enumerate(zip(ours, want)):
        check(set(b) <= set(a), "trace entry %d lacks %s" % (i, set(b) - set(a)))
        for k in set(b) - {"held", "time_us"}:
            check_eq(a[k], b[k], "trace entry %d's %s" % (i, k))
        worst = max(worst, abs(a.get("time_us", 0) - b.get("time_us", 0)))
    check(worst <= TIME_SLACK_US, "time_us off by up to %d us" % worst)
    for ptr, path in (held or {}).items():
        allocs = [e for e in ours if e["action"] == "alloc" and e["addr"] == int(ptr, 16)]
        check(allocs and allocs[-1]["held"] == [path],
              "the allocation of %s: holders %r" % (ptr, allocs and allocs[-1]["held"]))
    if entries and "user_metadata" in own[0]:   # the scenario names its last allocation
        check(any(e["user_metadata"] for e in ours), "no user metadata in the trace: %r" % ours)


def recorded_stacks(release):
    """The allocation stacks and the trace, from the Block and TraceEntry offsets of each
    release's table: every block's and segment's frames in culeak's export equal those of
    torch's own snapshot, and so does the trace, entry by entry, a wrapped one (those release's
    snapshots have other fields than the export, which follows the newest)."""
    def test():
        python, _, cuda = RELEASES[release]
        with harness.tempdir() as d:
            own, ours = os.path.join(d, "own.pickle"), os.path.join(d, "ours.pickle")
            with harness.Process(python, "cuda_blocks.py", "--snapshot-to", own,
                                 "--record-history", "python", "--trace-entries", "9",
                                 env=harness.simgpu_env(cuda)) as p:
                harness.culeak("blocks", "--pid", p.pid, "--torch-snapshot", ours)
            got, err = read_snapshots(python, own, ours)
            check_recorded(got, err)
            check_trace(got, 9, None)
    return test


def read_snapshots(python, own, ours):
    """What READ_SNAPSHOTS finds in torch's own snapshot and culeak's export, and its errors."""
    r = subprocess.run([python, "-c", READ_SNAPSHOTS, own, ours], capture_output=True, text=True)
    return json.loads(r.stdout or "null") or {}, r.stderr[-1000:]


def check_recorded(got, err):
    """Some recorded Python frames, and every block's and segment's equal to torch's."""
    check(got.get("recorded") and got["recorded"] == got["recorded_own"],
          "recorded stacks: culeak %r\n  torch %r %s" % (got.get("recorded"),
                                                          got.get("recorded_own"), err))


# Reads torch's own snapshot and culeak's (argv 1, 2): whether they agree but for frames, the
# holders of culeak's blocks by address (their "held by (culeak)" frames), the recorded stacks of
# both (by block and segment address, torch's Python frames: a C++ frame's file is no .py file),
# and both traces, an entry's holders apart from its recorded Python frames. Writes what torch's own
# trace would be, read when culeak read (argv 1 + ".expected"): its entries, then the one its
# snapshot recorded (culeak's last), as many as culeak's.
READ_SNAPSHOTS = r"""
import json, pickle, sys
HELD = 'held by (culeak)'
def norm(s):
    return sorted((g['address'], {k: v for k, v in g.items() if k not in ('frames', 'blocks')},
                   [{k: v for k, v in b.items() if k != 'frames'} for b in g['blocks']])
                  for g in s['segments'])
def recorded(s):
    out = {}
    for g in s['segments']:
        for what, x in [('segment', g)] + [('block', b) for b in g['blocks']]:
            frames = [f for f in x.get('frames', []) if f['filename'].endswith('.py')]
            if frames:
                out['%s %x' % (what, x['address'])] = frames
    return out
def entry(e):
    out = {k: v for k, v in e.items() if k != 'frames'}
    if 'frames' in e:
        out['frames'] = [f for f in e['frames'] if f['filename'].endswith('.py')]
        out['held'] = [f['name'] for f in e['frames'] if f['filename'] == HELD]
    return out
own, ours = (pickle.load(open(f, 'rb')) for f in sys.argv[1:3])
blocks = [b for g in ours['segments'] for b in g['blocks']]
mine = ours['device_traces'][0] if ours['device_traces'] else []
expected = dict(own, device_traces=[(own['device_traces'][0] + mine[-1:])[-len(mine):]
                                    if mine else []])
pickle.dump(expected, open(sys.argv[1] + '.expected', 'wb'))
print(json.dumps({'same': norm(own) == norm(ours), 'own': repr(norm(own)),
                  'ours': repr(norm(ours)),
                  'holders': {hex(b['address']): [f['name'] for f in b['frames']
                                                  if f['filename'] == HELD]
                              for b in blocks if b['state'] == 'active_allocated'},
                  'recorded': recorded(ours), 'recorded_own': recorded(own),
                  'trace': [[entry(e) for e in d] for d in ours['device_traces']],
                  'trace_own': [[entry(e) for e in d] for d in own['device_traces']]}))
"""


# Screenshots of the pages the tests render, kept with the test logs for a person to look at.
SCREENSHOTS = os.path.join(harness.ROOT, "build", "test-logs", "screenshots")


@contextlib.contextmanager
def browser():
    """Debian's headless Chromium, driven through its chromedriver by selenium, in a window of
    1400 by 900 pixels (as root: no sandbox)."""
    from selenium import webdriver
    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,900"):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options)
    try:
        yield driver
    finally:
        driver.quit()


def open_page(driver, page):
    """Loads a report page; its rendered DOM."""
    driver.get("file://" + page)
    check(driver.execute_script("return document.body.getAttribute('data-rendered')") == "yes",
          "%s did not render" % page)
    return driver.page_source


def screenshot(driver, name):
    """Keeps a screenshot of the window as an artifact; fails if it is blank."""
    os.makedirs(SCREENSHOTS, exist_ok=True)
    path = os.path.join(SCREENSHOTS, name + ".png")
    check(driver.save_screenshot(path), "no screenshot %s" % path)
    check(png_colours(path) > 16, "the screenshot %s is blank" % path)


# Each element's [bytes, rendered width in pixels], for the elements CSS selects.
WIDTHS = """return [...document.querySelectorAll(arguments[0])].map(e =>
    [+(e.dataset.size || e.dataset.bytes), e.getBoundingClientRect().width]);"""


def check_to_scale(driver, selector, what):
    """Every element selector selects is as wide as its bytes at one scale, to a pixel: the
    widest's."""
    widths = driver.execute_script(WIDTHS, selector)
    check(widths, "no %s drawn" % what)
    size, px = max(widths)
    off = [(b, w) for b, w in widths if abs(w - b * px / size) > 1]
    check(not off, "%s not to scale (bytes, pixels; the widest %r): %r" % (what, (size, px),
                                                                             off[:5]))


def check_pictures(driver, summary):
    """Per device the category and the holder bar, their pieces' bytes summing to what the
    allocator reserved, each piece to scale."""
    cuda = {"cuda:%d" % c["device"]: c["reserved"] for c in summary["cuda"]}
    bars = driver.execute_script("""return [...document.querySelectorAll('.picture')].map(b =>
        [b.dataset.kind, b.dataset.device, [...b.children].map(p => +p.dataset.bytes),
         b.getBoundingClientRect().width,
         [...b.children].map(p => p.getBoundingClientRect().width)]);""")
    check_eq(sorted((k, d) for k, d, *_ in bars), sorted((k, d) for d in cuda
                                                         for k in ("category", "holder")),
             "pictures")
    for kind, device, pieces, width, widths in bars:
        check_eq(sum(pieces), cuda[device], "the %s picture of %s: bytes" % (kind, device))
        off = [(b, w) for b, w in zip(pieces, widths) if abs(w - b * width / cuda[device]) > 1]
        check(not off, "the %s picture of %s not to scale: %r" % (kind, device, off))


# The box of the block at an address (arguments[0], hex), and another allocated block's box.
BOX = """const at = BigInt(arguments[0]), boxes = [...document.querySelectorAll('.block')];
    return [boxes.find(e => BigInt(e.dataset.address) === at),
            boxes.find(e => BigInt(e.dataset.address) !== at &&
                            e.dataset.state === 'active_allocated')];"""


def check_hover_and_click(driver, held):
    """Pointing at the block of each held tensor shows its holder beside the map; a click keeps
    it there while the pointer moves to another block."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    detail = driver.find_element(By.ID, "detail")
    for ptr, path in held.items():
        box, _ = driver.execute_script(BOX, ptr)
        check(box, "no box for the block at %s" % ptr)
        ActionChains(driver).move_to_element(box).perform()
        check(path in detail.text, "hover over %s shows %r" % (ptr, detail.text))
    ptr, path = next(iter(held.items()))
    box, other = driver.execute_script(BOX, ptr)
    ActionChains(driver).move_to_element(box).click().move_to_element(other).perform()
    check(path in detail.text and "kept" in detail.text, "after a click on %s and a move: %r" % (
        ptr, detail.text))


def png_colours(path):
    """How many byte values a PNG's pixel data holds: a handful for a blank page."""
    import zlib
    data = open(path, "rb").read()
    check(data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG: %s" % path)
    at, idat = 8, b""
    while at < len(data):
        n, kind = int.from_bytes(data[at:at + 4], "big"), data[at + 4:at + 8]
        if kind == b"IDAT":
            idat += data[at + 8:at + 8 + n]
        at += 12 + n
    return len(set(zlib.decompress(idat)))


def drill_rows(holder, d, level=0):
    """The rows the page draws for a holder's drill-down d (summary JSON), as its script does."""
    if d["path"] is None:
        return []
    where = d["path"][len(holder):] if d["path"].startswith(holder) else d["path"]
    rows = [d["retained_bytes"]] if where or not d["parts"] else []
    for part in d["parts"]:
        rows += drill_rows(holder, part, level + 1 if where else level)
    return rows


def html_page():
    """summary --html and blocks --html write one self-contained page that headless Chromium
    renders offline: its holder rows carry the summary JSON's retained and reachable bytes in its
    order (each holder's drill-down under it), its category rows the JSON's categories, its
    pictures each device's reserved bytes to scale by category and by holder, one bar per
    segment and one box per block of the blocks JSON (as --state selects them), each to scale;
    a header names the process and its torch; pointing at a held block shows its holder beside
    the map, and a click keeps it there."""
    import re
    with harness.tempdir() as d, harness.Process(PYTHON, "cuda_blocks.py",
                                                 env=harness.simgpu_env()) as p, browser() as b:
        pages = {c: os.path.join(d, c + ".html") for c in ("summary", "blocks")}
        for command, page in pages.items():
            harness.culeak(command, "--pid", p.pid, "--html", page)
        summary = harness.culeak_json("summary", "--pid", p.pid)
        blocks = harness.culeak_json("blocks", "--pid", p.pid)
        for command, page in pages.items():
            text = open(page).read()
            check(not re.search(r"(src|href)=['\"]?https?:", text), "%s: loads from the network"
                  % command)
            dom = open_page(b, page)
            rows = re.findall(r'<tr id="holder-\d+" data-retained="(\d+)" data-reachable="(\d+)"',
                              dom)
            want = [(str(h["retained_bytes"]), str(h["reachable_bytes"]))
                    for h in summary["holders"]]
            check_eq(rows, want, "%s: holder rows (retained, reachable)" % command)
            header = re.findall(r'<div id="header">([^<]*)<', dom)
            check(len(header) == 1 and header[0].startswith("live process, pid %d, " % p.pid) and
                  "torch %s" % p.truth["torch"] in header[0], "%s: header %r" % (command, header))
            check_eq(re.findall(r'<tr class="category" data-bytes="(\d+)"', dom),
                     [str(c["bytes"]) for c in summary["categories"]
                      if c["storages"] or c["bytes"]],
                     "%s: category rows" % command)
            want = [str(b) for h in summary["holders"] if h["drill"] and (
                h["drill"]["parts"] or h["drill"]["objects"] > 1 or
                h["drill"]["accumulation_point"]) for b in drill_rows(h["holder"], h["drill"])]
            check_eq(re.findall(r'<tr class="drill" data-bytes="(\d+)"', dom), want,
                     "%s: drill-down rows" % command)
            check_pictures(b, summary)
            segments = blocks["devices"][0]["segments"]
            check_eq(dom.count('class="segment'), len(segments), "%s: segment bars" % command)
            check_eq(len(re.findall(r'class="block ', dom)),
                     sum(len(s["blocks"]) for s in segments), "%s: block boxes" % command)
            check_to_scale(b, ".segment", "segments")
            check_hover_and_click(b, p.truth["held"])
            screenshot(b, "html-%s" % command)
        # blocks --html draws what blocks --state selects
        free = os.path.join(d, "free.html")
        harness.culeak("blocks", "--pid", p.pid, "--state", "free", "--html", free)
        want = harness.culeak_json("blocks", "--pid", p.pid, "--state", "free")
        dom = open_page(b, free)
        check_eq(len(re.findall(r'class="block ', dom)),
                 sum(len(s["blocks"]) for s in want["devices"][0]["segments"]),
                 "blocks --state free --html: block boxes")
        check(' data-state="active_allocated"' not in dom, "an allocated block drawn")


# How tall the page of 10,000 segments may be: the map takes at most some 40 rows of them.
MANY_SEGMENTS_HEIGHT = 2500


def html_many_segments():
    """summary --html of a job whose allocator holds 10,000 segments (many_segments.py): every
    segment drawn, each to scale to a pixel, the page still one screenful of map (its height
    under MANY_SEGMENTS_HEIGHT), the pictures to scale, and the holders on hover and click."""
    with harness.tempdir() as d, harness.Process(PYTHON, "many_segments.py", "10000",
                                                 env=harness.simgpu_env()) as p, browser() as b:
        page = os.path.join(d, "summary.html")
        harness.culeak("summary", "--pid", p.pid, "--html", page)
        summary = harness.culeak_json("summary", "--pid", p.pid)
        dom = open_page(b, page)
        check_eq(dom.count('class="segment'), p.truth["segments"], "segment bars")
        height = b.execute_script("return document.documentElement.scrollHeight")
        check(height <= MANY_SEGMENTS_HEIGHT, "the page is %d pixels tall" % height)
        check_to_scale(b, ".segment", "segments")
        check_pictures(b, summary)
        check_hover_and_click(b, p.truth["held"])
        screenshot(b, "html-10000-segments")


def workspaces(release, kind):
    """torch's cuBLAS workspace (workspaces.py), memory no tensor accounts for: its block is
    named for the handle and stream the process itself reports, and no other block is; summary
    counts it as torch's C++ (its bytes as the allocator's own snapshot showed the products
    allocate them), nothing left unattributed, and the lines still sum to the reserved bytes.
    On every release from 2.1 but 2.15, which makes none on the simulated device (its cuBLAS
    stand-ins serve the CUDA 12 builds too); from 2.9 some make a cuBLASLt workspace too."""
    def test():
        python, _, cuda = RELEASES[release]
        with harness.tempdir() as d:
            with harness.Process(python, "workspaces.py", env=harness.simgpu_env(cuda)) as p:
                target = ["--pid", p.pid]
                if kind == "dump":
                    harness.culeak("dump", "--pid", p.pid, "-o", os.path.join(d, "job.cldump"))
                    target = ["--dump", os.path.join(d, "job.cldump")]
                elif kind == "gcore":
                    target = ["--core", harness.gcore(p.pid, d)]
                blocks = harness.culeak_json("blocks", *target)
                summary = harness.culeak_json("summary", *target)
        check_workspaces(blocks, summary, p.truth)
    return test


def check_workspaces(blocks, summary, truth):
    """workspaces.py's blocks and summary against its truth (see workspaces())."""
    check(truth["workspaces"], "the products allocated no workspace: %r" % truth)
    names = ["torch's %s workspace (handle 0x%x, stream 0x%x)" % (
        lib, truth["handle"], truth["stream"]) for lib in ("cuBLAS", "cuBLASLt")]
    owners = {b["address"]: b["owner"] for s in blocks["devices"][0]["segments"]
              for b in s["blocks"] if b["owner"]}
    check(sorted(owners) == sorted(truth["workspaces"]) and names[0] in owners.values() and
          set(owners.values()) <= set(names),
          "blocks named for an owner: %r, want %r named %r" % (owners, truth, names))
    cuda = summary["cuda"][0]
    check_eq((cuda["owned_by_cxx"], cuda["unattributed"]),
             (sum(truth["workspaces"].values()), 0), "summary: owned by C++, unattributed")
    # by category: the workspaces are held from C++ (no storage is), the cache its own row
    categories = {c["category"]: c for c in summary["categories"] if c["device"] == "cuda:0"}
    cxx = categories["held from C or C++"]
    check_eq((cxx["storages"], cxx["blocks"], cxx["bytes"], categories["allocator cache"]["bytes"]),
             (0, len(truth["workspaces"]), sum(truth["workspaces"].values()), cuda["cached"]),
             "categories: held from C or C++ (storages, blocks, bytes), allocator cache")
    check_eq(sum(c["bytes"] for c in categories.values()) + cuda["unattributed"], cuda["reserved"],
             "categories and the unattributed blocks")


def cuda_graphs(release, kind):
    """CUDA graphs' private pools (cuda_graphs.py): each pool named for the torch.cuda.CUDAGraph
    that owns it, or for the graphs that share one; summary gives each pool the bytes it keeps
    reserved apart from those allocated in it, as the allocator's own snapshot counts them; and
    what deleting an owner gives back is what culeak says: a pool's empty segments where the
    graph owns it alone, nothing where another graph shares it."""
    def test():
        python, _, cuda = RELEASES[release]
        with harness.tempdir() as d:
            with harness.Process(python, "cuda_graphs.py", env=harness.simgpu_env(cuda),
                                 stdin=True) as p:
                target = ["--pid", p.pid] if kind == "live" else ["--core",
                                                                   harness.gcore(p.pid, d)]
                summary = harness.culeak_json("summary", *target)
                blocks = harness.culeak_json("blocks", *target)
                freed = {name: p.ask({"delete": name})["freed_reserved"] for name in ("g3", "g1")}
        check_graph_pools(summary, blocks, p.truth, freed)
    return test


def check_graph_pools(summary, blocks, truth, freed):
    """cuda_graphs.py's pools in summary and blocks against its truth (see cuda_graphs())."""
    graphs = {name: "%d,%d" % tuple(pool) for name, pool in truth["graphs"].items()}
    shared, alone = graphs["g1"], graphs["g3"]
    check(all(graphs[g] == shared for g in ("g2", "g4", "g5")) and alone != shared,
          "the pools the scenario made: %r" % graphs)
    pools = {"%d,%d" % tuple(r["pool"]): r for r in summary["cuda"][0]["private_pools"]}
    check_eq({k: {f: r[f] for f in ("reserved", "allocated", "empty", "segments")}
              for k, r in pools.items()}, truth["pools"], "summary's private pools")
    # the shared pool named for three of its four graphs, the fourth counted
    graph = "torch.cuda.CUDAGraph __main__.%s"
    owner = pools[shared]["owner"] or ""
    named = owner[len("shared by "):-len(" and 1 more")].split(" and ")
    check(owner.startswith("shared by ") and owner.endswith(" and 1 more") and len(named) == 3
          and set(named) < {graph % g for g in ("g1", "g2", "g4", "g5")},
          "the shared pool's owner: %r" % owner)
    check_eq(pools[alone]["owner"], graph % "g3", "g3's pool's owner")
    segments = {"%d,%d" % tuple(s["pool_id"]): s["pool_owner"]
                for s in blocks["devices"][0]["segments"] if any(s["pool_id"])}
    check_eq(segments, {k: r["owner"] for k, r in pools.items()},
             "blocks: the segments' pool owners")
    check_eq(freed, {"g3": pools[alone]["empty"], "g1": 0},
             "reserved bytes deleting each graph gave back")


def cudagraph_trees(release):
    """The private pool of cudagraph trees (cudagraph_trees.py), as torch.compile's
    reduce-overhead mode keeps one: its segments, and its line in summary, name the CUDAGraph
    that keeps it alive by a path the job itself evaluates to a graph of that pool."""
    def test():
        python, _, cuda = RELEASES[release]
        with harness.Process(python, "cudagraph_trees.py", env=harness.simgpu_env(cuda),
                             stdin=True) as p:
            check_trees(harness.culeak_json("summary", "--pid", p.pid),
                        harness.culeak_json("blocks", "--pid", p.pid), p)
    return test


def check_trees(summary, blocks, p):
    """cudagraph_trees.py's pool in summary and blocks, against the job p (see
    cudagraph_trees())."""
    pools = [r for r in summary["cuda"][0]["private_pools"] if r["pool"] == p.truth["pool"]]
    check(len(pools) == 1 and (pools[0]["owner"] or "").startswith("torch.cuda.CUDAGraph "),
          "the trees' pool %r in summary: %r" % (p.truth["pool"], pools))
    owner = pools[0]["owner"]
    check_eq(p.ask({"eval": owner[len("torch.cuda.CUDAGraph "):]})["pool"], p.truth["pool"],
             "the pool of what the job evaluates %r to" % owner)
    segments = {int(s["address"], 16): s["pool_owner"] for s in blocks["devices"][0]["segments"]
                if s["pool_id"] == p.truth["pool"]}
    check_eq(segments, {a: owner for a in p.truth["segments"]}, "the pool's segments")


def summary():
    with harness.Process(PYTHON, "cuda_blocks.py", env=harness.simgpu_env()) as p:
        doc = harness.culeak_json("summary", "--pid", p.pid)
        cuda = doc["cuda"]
        check(len(cuda) == 1 and cuda[0]["reserved"] == p.truth["reserved"] and
              cuda[0]["allocated"] == p.truth["allocated"] and
              cuda[0]["cached"] == p.truth["reserved"] - p.truth["allocated"] and
              cuda[0]["unattributed"] == 4096, "summary: %r" % cuda)


def filters():
    with harness.Process(PYTHON, "cuda_blocks.py", env=harness.simgpu_env()) as p:
        allocated = harness.culeak_json("blocks", "--pid", p.pid, "--state", "allocated")
        states = {b["state"] for s in allocated["devices"][0]["segments"] for b in s["blocks"]}
        check(states == {"active_allocated", "active_pending_free"}, "allocated: %r" % states)
        free = harness.culeak_json("blocks", "--pid", p.pid, "--state", "free")
        states = {b["state"] for s in free["devices"][0]["segments"] for b in s["blocks"]}
        check(states == {"inactive"}, "free: %r" % states)
        none = harness.culeak_json("blocks", "--pid", p.pid, "--device", "1")
        check(none["devices"] == [], "--device 1 on a one-device process: %r" % none["devices"])


def no_allocator():
    """A CPU-only PyTorch has no CUDA allocator: a plain error, exit 9."""
    with harness.Process(harness.TORCH_VENV, "idle.py", "--torch") as p:
        r = harness.culeak("blocks", "--pid", p.pid, expect_rc=9)
        check("no CUDA caching allocator" in r.stderr, r.stderr)


def tests():
    for kind in ("live", "gcore", "kernel-core"):
        yield "simulated-device:%s" % kind, blocks("2.14", kind, False)
        yield "simulated-device:expandable:%s" % kind, blocks("2.14", kind, True)
    for release in ("2.1", "2.4", "2.6", "2.7", "2.8", "2.9", "2.10", "2.11", "2.12", "2.13",
                    "2.15"):
        tag = harness.full_unless_checked(release)
        yield ("simulated-device:torch-%s:live" % release, blocks(release, "live", False)) + tag
        yield ("simulated-device:torch-%s:expandable:live" % release,
               blocks(release, "live", True)) + tag
    for kind in ("live", "gcore"):
        yield "torch-snapshot:%s" % kind, torch_snapshot(kind, False)
    yield "torch-snapshot:expandable:live", torch_snapshot("live", True)
    for kind in ("live", "gcore", "dump"):
        yield "torch-snapshot:recorded-python:%s" % kind, torch_snapshot(kind, False, "python")
        yield ("torch-snapshot:recorded-python:wrapped-trace:%s" % kind,
               torch_snapshot(kind, False, "python", 7))
    yield "torch-snapshot:recorded-all:live", torch_snapshot("live", False, "all")
    for release in ("2.1", "2.4", "2.6", "2.7", "2.8", "2.9", "2.10", "2.11", "2.12", "2.13",
                    "2.15"):
        yield ("torch-snapshot:recorded-and-trace:torch-%s" % release,
               recorded_stacks(release)) + harness.full_unless_checked(release)
    yield "html", html_page
    yield "html:10000-segments", html_many_segments
    # (2.9 to 2.7: the table 2.9.1 seemed to fit before it had its own; 2.8 to 2.9: the nearest)
    for release, other in (("2.12", "2.14"), ("2.10", "2.11"), ("2.6", "2.4"), ("2.4", "2.1"),
                           ("2.14", "2.11"), ("2.9", "2.7"), ("2.8", "2.9")):
        yield ("simulated-device:torch-%s:forced-%s-layout-refuted" % (release, other),
               wrong_layout(release, other)) + harness.full_unless_checked(release)
    yield "simulated-device:torch-2.9:cuda-13-build", cuda13_build_before_2_10, "full"
    yield "simulated-device:unknown-release-and-cuda-12-builds", other_builds
    yield "simulated-device:filters", filters
    yield "simulated-device:summary", summary
    for kind in ("live", "gcore", "dump"):
        yield "simulated-device:cublas-workspace:%s" % kind, workspaces("2.14", kind)
    for release in ("2.1", "2.4", "2.6", "2.7", "2.8", "2.9", "2.10", "2.11", "2.12", "2.13"):
        yield ("simulated-device:torch-%s:cublas-workspace" % release,
               workspaces(release, "live")) + harness.full_unless_checked(release)
    for kind in ("live", "gcore"):
        yield "simulated-device:cuda-graphs:%s" % kind, cuda_graphs("2.14", kind)
    for release in ("2.1", "2.4", "2.6", "2.7", "2.8", "2.9", "2.10", "2.11", "2.12", "2.13",
                    "2.15"):
        yield ("simulated-device:torch-%s:cuda-graphs" % release,
               cuda_graphs(release, "live")) + harness.full_unless_checked(release)
    yield "simulated-device:cudagraph-trees", cudagraph_trees("2.14")
    for release in ("2.12", "2.13", "2.15"):
        yield ("simulated-device:torch-%s:cudagraph-trees" % release,
               cudagraph_trees(release)) + harness.full_unless_checked(release)
    yield "cpu-torch:no-allocator", no_allocator
