"""`culeak dump`: every command on the dump gives the --json it gives on the target the dump was
made from (the same process, still stopped and unchanged between the runs), apart from the
fields naming the target's kind, and agrees with the scenario's own ground truth:
- holders.py on torch 2.13 (CPU): info, objects, refs, tensors, summary, snapshot, check-layout
  and blocks' refusal, live and on the dump, then the graphs and holders against the process's
  own walk; the same on a dump of a gcore of it;
- cuda_blocks.py on torch 2.14 on the simulated device: blocks, summary and tensors, then the
  blocks against torch.cuda.memory._snapshot(); and its --allocator-only dump;
- no libraries present: a process inside a Debian root and one in a container with torch, each
  dumped live from the host, read after the process exited with no --sysroot, where the host has
  other files (or none) at the paths the process mapped;
- hostile files: a truncated dump, a foreign file, a crafted section table and a dump given to
  --core each give one clean error with its exit code."""
import contextlib
import filecmp
import json
import os
import subprocess
import time

import harness
import test_blocks
import test_containers
import test_holders
import test_refs
import test_tensors
from harness import check, check_eq

# the only fields allowed to differ, in info's target: its kind, and how long a live one was
# stopped while copied (that run's, not the target's)
SOURCE_FIELDS = ("kind", "dumped_from", "copied_bytes", "stopped_microseconds", "unread_bytes",
                 "redone")


def normalized(command, doc):
    """doc without what names the target's kind (info), the moment it was taken (snapshot) or
    what the driver said of a live process (summary: NVML's figure, which no dump keeps)."""
    if command == "summary":
        doc.pop("driver_memory", None)
    if command == "info":
        for k in SOURCE_FIELDS:
            doc["target"].pop(k, None)
    if command in ("snapshot", "diff"):
        for k in ("time", "host"):
            doc.pop(k, None)
    return doc


def both(command, target, dump, *args, expect_rc=0):
    """The command's --json on the target and on the dump, checked equal; the dump's doc. (Its
    output and exit status for check-layout, which prints text only.)"""
    docs = []
    json_form = [] if command == "check-layout" else ["--json"]
    for where in (target, ["--dump", dump]):
        r = harness.culeak(command, *where, *args, *json_form, expect_rc=expect_rc)
        docs.append((r.returncode, r.stdout) if command == "check-layout" else
                    normalized(command, json.loads(r.stdout)))
    if docs[0] != docs[1]:
        a, b = docs
        keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k)) if all(
            isinstance(d, dict) for d in docs) else "?"
        raise harness.Failure("%s %s: the dump's --json differs from the target's in %s" % (
            command, " ".join(map(str, args)), keys))
    return docs[1]


def make_dump(target, d, name="t.dump"):
    path = os.path.join(d, name)
    r = harness.culeak("dump", *target, "-o", path)
    check("bytes" in r.stderr and os.path.getsize(path) > 0, "dump said: %r" % r.stderr)
    return path


def holders_every_command(kind):
    """holders.py: every command live (or on a gcore) and on its dump; then the ground truth."""
    def test():
        with harness.tempdir() as d, harness.Process(harness.TORCH_VENV, test_holders.SCENARIO) as p, \
                (harness.stopped(p) if kind == "live" else contextlib.nullcontext()):   # a core: unchanged
            target = ["--pid", p.pid] if kind == "live" else ["--core", harness.gcore(p.pid, d)]
            dump = make_dump(target, d)
            info = both("info", target, dump)
            check_eq(info["target"]["pid"], p.pid, "info.target.pid")
            check_eq(info["torch"]["version"].split("+")[0][:4], "2.13", "torch version")
            both("objects", target, dump)
            both("refs", target, dump, "--type", "torch.nn.parameter.Parameter", "--max-paths",
                 "64")
            both("refs", target, dump, "--type", "dict")
            both("snapshot", target, dump)
            rc, text = both("check-layout", target, dump, expect_rc=None)
            check("fields checked" in text, "check-layout checked nothing: %r" % text)
            both("blocks", target, dump, expect_rc=9)   # a CPU build: the same refusal
            summary = both("summary", target, dump)
            check(summary["holders"], "summary lists no holders")
            tensors = both("tensors", target, dump)
            truth = p.truth
        test_holders.judge(tensors, truth)
    return test


def holders_after_exit():
    """A dump read after the process exited: the same tensors, and the process's ground truth."""
    with harness.tempdir() as d:
        with harness.Process(harness.TORCH_VENV, test_holders.SCENARIO) as p, harness.stopped(p):
            dump = make_dump(["--pid", p.pid], d)
            live = harness.culeak_json("tensors", "--pid", p.pid)
            truth = p.truth
        doc = harness.culeak_json("tensors", "--dump", dump)
        check(doc == live, "tensors on the dump after exit differ from the live process's")
        test_holders.judge(doc, truth)
        info = harness.culeak_json("info", "--dump", dump)
        check_eq((info["target"]["kind"], info["target"]["dumped_from"]), ("dump", "live"),
                 "info.target kind")


def stream_core(how):
    """--core -: a kernel core read from a pipe. "pipe": `cat core |` (as `coredumpctl dump PID |`
    gives it), whose dump answers as the core does; "core-pattern": the kernel's own pipe to
    `culeak dump --core - --pid %P` (core_pattern), which finds the files through /proc/%P/root
    while the process is dumping. Either way the spool leaves nothing behind, and the tensors
    and holders are those the process printed before it aborted."""
    def test():
        with harness.tempdir() as d:
            if how == "pipe":
                with harness.kernel_core_pattern():
                    truth, core = harness.kernel_core(harness.TORCH_VENV, test_holders.SCENARIO,
                                                      [], d)
                dump = os.path.join(d, "stream.cldump")
                cat = subprocess.Popen(["cat", core], stdout=subprocess.PIPE)
                r = subprocess.run([harness.CULEAK, "dump", "--core", "-", "-o", dump],
                                   stdin=cat.stdout, capture_output=True, text=True, timeout=600)
                cat.stdout.close()
                cat.wait()
                check_eq(r.returncode, 0, "dump --core -: %s" % r.stderr)
                both("summary", ["--core", core], dump)
                tensors = both("tensors", ["--core", core], dump)
                check_eq(sorted(os.listdir(d)), sorted([os.path.basename(core), "stream.cldump"]),
                         "the folder after the stream")
            else:
                pattern = "|%s dump --core - --pid %%P -o %s/%%P.cldump" % (harness.CULEAK, d)
                check(len(pattern) < 128, "core_pattern takes 127 characters: %s" % pattern)
                with harness.core_pattern_alone(pattern):
                    p = harness.Process(harness.TORCH_VENV, test_holders.SCENARIO, "--abort",
                                        cwd=d, preexec=harness.unlimited_core)
                    p.proc.wait(timeout=120)
                    p.kill()
                    dump = os.path.join(d, "%d.cldump" % p.pid)
                    deadline = time.time() + 300
                    while not os.path.exists(dump) and time.time() < deadline:
                        time.sleep(0.2)
                check(os.path.exists(dump), "core_pattern's culeak wrote no %s: %s" % (
                    dump, os.listdir(d)))
                truth = p.truth
                tensors = harness.culeak_json("tensors", "--dump", dump)
                check_eq(os.listdir(d), [os.path.basename(dump)], "the folder after the stream")
            info = harness.culeak_json("info", "--dump", dump)
            check_eq(info["target"]["dumped_from"], "core", "info.target.dumped_from")
            test_holders.judge(tensors, truth)
    return test


def redacted():
    """dump --redact, for a dump that leaves the machine: the secrets the job holds (a token, an
    e-mail address used as a dict key, a bytes payload, none of them in its source) are in a
    plain dump of it and nowhere in the redacted one, which still names the holders as the plain
    one does, a secret key as `<redacted: N characters>`, and says it is redacted."""
    with harness.tempdir() as d:
        with harness.Process(harness.TORCH_VENV, "private_text.py") as p, harness.stopped(p):
            plain = make_dump(["--pid", p.pid], d, "plain.cldump")
            red = os.path.join(d, "red.cldump")
            r = harness.culeak("dump", "--pid", p.pid, "-o", red, "--redact")
            check("--redact: the contents of" in r.stderr, "dump --redact said: %r" % r.stderr)
        secrets = [bytes.fromhex(h) for h in p.truth["secrets"]]
        for path, want in ((plain, True), (red, False)):
            data = open(path, "rb").read()
            check_eq([s in data for s in secrets], [want] * len(secrets),
                     "secrets in %s" % os.path.basename(path))
        holders = [{h["holder"]: h["retained_bytes"] for h in
                    harness.culeak_json("summary", "--dump", f)["holders"]} for f in (plain, red)]
        email = secrets[1].decode()
        check_eq(holders[1], {k.replace(email, "<redacted: %d characters>" % len(email)): v
                              for k, v in holders[0].items()}, "the redacted dump's holders")
        check("__main__.history" in holders[1], "holders: %r" % sorted(holders[1]))
        paths = [{p for t in harness.culeak_json("tensors", "--dump", f)["tensors"]
                  for p in t["paths"]} for f in (plain, red)]
        key = "__main__.accounts[%r][0]"
        check(key % email in paths[0] and
              key % ("<redacted: %d characters>" % len(email)) in paths[1] and
              not any(email in p for p in paths[1]), "the paths: %r" % sorted(paths[1]))
        check_eq(harness.culeak_json("info", "--dump", red)["target"].get("redacted"), True,
                 "info.target.redacted")


def simulated_device():
    """cuda_blocks.py on the simulated device: the allocator walk from the dump."""
    with harness.tempdir() as d:
        with harness.Process(test_blocks.PYTHON, "cuda_blocks.py", env=harness.simgpu_env()) as p, \
                harness.stopped(p):
            target = ["--pid", p.pid]
            dump = make_dump(target, d)
            blocks = both("blocks", target, dump)
            both("blocks", target, dump, "--state", "free")
            summary = both("summary", target, dump)
            both("tensors", target, dump, "--device", "cuda")
            truth = p.truth
        test_blocks.compare(blocks, truth)
        cuda = summary["cuda"]
        check(len(cuda) == 1 and cuda[0]["reserved"] == truth["reserved"] and
              cuda[0]["allocated"] == truth["allocated"], "summary: %r" % cuda)


def allocator_only():
    """cuda_blocks.py dumped with --allocator-only: a file a hundredth of the whole dump's size
    whose blocks are torch's snapshot's, listed without holders (never "unattributed": with no
    tensors culeak cannot tell), and which refuses every command that needs Python objects."""
    with harness.tempdir() as d:
        with harness.Process(test_blocks.PYTHON, "cuda_blocks.py", env=harness.simgpu_env()) as p, \
                harness.stopped(p):
            small = os.path.join(d, "allocator.dump")
            harness.culeak("dump", "--pid", p.pid, "--allocator-only", "-o", small)
            whole = make_dump(["--pid", p.pid], d)
            truth = p.truth
        check(os.path.getsize(small) * 20 < os.path.getsize(whole), "the allocator-only dump is "
              "%d bytes, the whole one %d" % (os.path.getsize(small), os.path.getsize(whole)))
        blocks = harness.culeak_json("blocks", "--dump", small)
        test_blocks.compare(blocks, {k: truth[k] for k in ("reserved", "allocated", "segments")})
        check_eq([b["unattributed"] for s in blocks["devices"][0]["segments"]
                  for b in s["blocks"] if b["tensors"] or b["unattributed"] is not None], [],
                 "blocks with tensors or an unattributed verdict")
        check(len(blocks["warnings"]) == 1 and "--allocator-only" in blocks["warnings"][0],
              "warnings: %r" % blocks["warnings"])
        text = harness.culeak("blocks", "--dump", small).stdout
        check("unattributed" not in text, "text blocks says unattributed:\n%s" % text)
        info = harness.culeak_json("info", "--dump", small)
        check_eq(info["target"].get("allocator_only"), True, "info.target.allocator_only")
        check_eq(harness.culeak_json("info", "--dump", whole)["target"].get("allocator_only"), None,
                 "a whole dump's info.target.allocator_only")
        for command in ("objects", "tensors", "summary", "snapshot"):
            r = harness.culeak(command, "--dump", small, expect_rc=9)
            check("--allocator-only" in r.stderr, "%s: %r" % (command, r.stderr))
        r = harness.culeak("blocks", "--dump", small, "--allocator-only", expect_rc=2)
        check("only to dump" in r.stderr, r.stderr)


def host_lacks(root, paths):
    """Checks that no path the process mapped reads on the host as the process's own file."""
    for path in paths:
        inner = root.host_path(path)
        check(not os.path.exists(path) or not filecmp.cmp(path, inner, shallow=False),
              "the host has the process's own %s: the test proves nothing" % path)


def mapped_files(pid):
    with open("/proc/%d/maps" % pid) as f:
        return sorted({line.split(None, 5)[5].strip() for line in f
                       if len(line.split(None, 5)) == 6 and line.split(None, 5)[5].startswith("/")
                       and line.split(None, 5)[2] == "00000000"})


def debian_root(name, python):
    """A Debian root's interpreter (no torch), dumped live: refs and objects on the dump, after
    the process exited, with no --sysroot, equal the live ones and the scenario's truth."""
    def test():
        with harness.tempdir() as d:
            with harness.Process(python, test_refs.SCENARIO) as p, harness.stopped(p):
                check(harness.other_mount_namespace(p.pid), "not in its own mount namespace")
                host_lacks(p.root, [f for f in mapped_files(p.pid) if "python3" in f or "libc." in f])
                target = ["--pid", p.pid]
                dump = make_dump(target, d)
                live = {c: normalized(c, harness.culeak_json(c, *target, *a))
                        for c, a in (("info", ()), ("objects", ()),
                                     ("refs", ("--type", "Marker", "--max-paths", "8")))}
                truth = p.truth
            for c, a in (("info", ()), ("objects", ()), ("refs", ("--type", "Marker", "--max-paths", "8"))):
                check(normalized(c, harness.culeak_json(c, "--dump", dump, *a)) == live[c],
                      "%s on the dump differs from the live %s" % (c, c))
            test_refs.check_target(["--dump", dump], truth)
    return test


def container_with_torch():
    """A container with torch in a venv only it has: tensors from the dump after it exited."""
    name, make_root, python, _ = test_containers.containers()[0]
    with harness.tempdir() as d:
        with harness.Process(python, "leaks.py", root=make_root()) as p, harness.stopped(p):
            check(not os.path.exists(test_containers.VENV_INSIDE),
                  "the host has %s: the test proves nothing" % test_containers.VENV_INSIDE)
            dump = make_dump(["--pid", p.pid], d)
            live = harness.culeak_json("tensors", "--pid", p.pid)
            live_info = normalized("info", harness.culeak_json("info", "--pid", p.pid))
            truth = p.truth
        doc = harness.culeak_json("tensors", "--dump", dump)
        check(doc == live, "%s: tensors on the dump differ from the live ones" % name)
        test_tensors.judge(doc, truth)
        info = normalized("info", harness.culeak_json("info", "--dump", dump))
        check_eq(info, live_info, "info on the dump")
        check(info["torch"]["version"], "no torch version: version.py was not kept")


def hostile():
    """Truncated, foreign and crafted dumps: one line on stderr, the README's exit codes."""
    with harness.tempdir() as d:
        with harness.Process(harness.TORCH_VENV, "idle.py", "--torch") as p:
            dump = make_dump(["--pid", p.pid], d)
        with open(dump, "rb") as f:
            data = f.read()

        def refused(name, content, rc, words):
            path = os.path.join(d, name)
            with open(path, "wb") as f:
                f.write(content)
            r = harness.culeak("objects", "--dump", path, expect_rc=rc)
            lines = r.stderr.strip().splitlines()
            check(len(lines) == 1 and words in lines[0], "%s: %r" % (name, r.stderr))

        refused("truncated", data[:len(data) // 2], 6, "truncated")
        refused("header-only", data[:20], 6, "truncated")
        refused("foreign", b"\x7fELF" + data[4:4096], 5, "not a culeak dump")
        refused("empty", b"", 5, "empty")
        table = int.from_bytes(data[16:24], "little")
        crafted = bytearray(data)
        crafted[table + 8:table + 16] = (len(data) - 4).to_bytes(8, "little")   # a section past the end
        refused("crafted", bytes(crafted), 5, "corrupt")
        future = bytearray(data)
        future[8:12] = (99).to_bytes(4, "little")
        refused("future", bytes(future), 9, "version 99")
        r = harness.culeak("objects", "--core", dump, expect_rc=5)
        check("--dump" in r.stderr, "--core on a dump: %r" % r.stderr)
        harness.culeak("dump", "--dump", dump, "-o", os.path.join(d, "x"), expect_rc=2)
        harness.culeak("dump", "--pid", "1", expect_rc=2)
        harness.culeak("objects", "--dump", dump, "--sysroot", "/", expect_rc=2)


def tests():
    yield "holders:live", holders_every_command("live")
    yield "holders:gcore", holders_every_command("gcore")
    yield "holders:after-exit", holders_after_exit
    yield "redact", redacted
    yield "stream:pipe", stream_core("pipe")
    yield "stream:core-pattern", stream_core("core-pattern")
    yield "simulated-device:blocks", simulated_device
    yield "simulated-device:allocator-only", allocator_only
    for name, python in harness.root_interpreters():
        if name not in harness.NOT_YET_SUPPORTED:
            yield "%s:no-libraries" % name, debian_root(name, python)
            break   # one root proves the point; test_containers covers the others
    yield "container-torch:no-libraries", container_with_torch
    yield "hostile", hostile
