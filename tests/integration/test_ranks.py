"""Every rank of a job (tests/scenarios/ranks.py: a 4-rank torchrun job on the CPU, gloo, whose
last rank keeps four times the outputs of the others): --children of torchrun's agent, several
--pid, several --core and the snapshot files of `merge` each give every rank's report under the
rank its environment names, and the ranks side by side name the leaking rank and pattern with
the excess the ranks printed themselves, from the CLI and from the Python API. The agent alone
says where its workers are; the ranks read at once share the copy budget and the CPUs, and under
--memory-limit culeak's memory, measured from outside, stays under it (heap_rank.py)."""
import contextlib
import json
import os
import re
import signal
import statistics
import subprocess
import sys

import harness
from harness import check, check_eq


def truth_of(p):
    return {r["pid"]: r for r in p.truth["ranks"]}


def check_across(doc, ranks, what):
    """The one rank above the median: the last, in __main__.outputs[*], by what it printed."""
    sizes = [r["outputs_bytes"] for r in sorted(ranks.values(), key=lambda r: r["rank"])]
    # of two ranks, the other one (their "median" would be half of what one holds more)
    median = min(sizes) if len(sizes) == 2 else statistics.median(sizes)
    above = doc["above_median"]
    check_eq(len(above), 1, "%s: ranks above the median (%r)" % (what, above))
    leak = doc["ranks"][above[0]["index"]]
    check_eq((leak["rank"], above[0]["pattern"], above[0]["bytes"] - above[0]["median"]),
             (len(sizes) - 1, "__main__.outputs[*]", sizes[-1] - median), what)
    check_eq([r["rank"] for r in doc["ranks"]], list(range(len(sizes))), "%s: rank order" % what)


def check_targets(doc, ranks, what):
    check_eq(len(doc["targets"]), len(ranks), "%s: targets" % what)
    for t in doc["targets"]:
        check_eq(t["exit_status"], 0, "%s: exit status of %r" % (what, t))
        want = ranks[t["pid"]] if t["pid"] else next(
            r for r in ranks.values() if t["core"].endswith(".%d" % r["pid"]))
        check_eq((t["rank"], t["local_rank"], t["world_size"]),
                 (want["rank"], want["local_rank"], want["world_size"]), "%s: rank" % what)
        outputs = [h for h in t["report"]["holders"] if h["holder"] == "__main__.outputs"]
        check(outputs and outputs[0]["retained_bytes"] == want["outputs_bytes"],
              "%s: rank %d's outputs %r, want %d" % (what, want["rank"], outputs,
                                                     want["outputs_bytes"]))
    check_across(doc["across_ranks"], ranks, what)


def live():
    with harness.tempdir() as d, harness.Process(harness.TORCH_VENV, "ranks.py", d) as p:
        ranks = truth_of(p)
        check_targets(harness.culeak_json("summary", "--children", p.pid), ranks, "--children")
        pids = [a for pid in ranks for a in ("--pid", pid)]
        text = harness.culeak("summary", *pids).stdout
        headings = re.findall(r"^== rank (\d+) of 4, local rank \d+: pid (\d+) ==$", text, re.M)
        check_eq([(int(r), int(pid)) for r, pid in headings],
                 sorted((r["rank"], r["pid"]) for r in ranks.values()), "text headings")
        check(re.search(r"^rank 3: \+12\.0 MiB in __main__\.outputs\[\*\] more than the median "
                        r"\(4\.0 MiB\)$", text, re.M), "across ranks: %s" % text[-1500:])
        agent = harness.culeak_json("summary", "--pid", p.pid)
        check(any("--children %d" % p.pid in w for w in agent["warnings"]),
              "the agent: %r" % agent["warnings"])
        info = harness.culeak_json("info", "--pid", pids[1])
        check_eq(info["rank"], {k: ranks[pids[1]][k] for k in ("rank", "local_rank", "world_size")},
                 "info's rank")
        # the processes copied at once share the copy budget: 64 MiB, less than what the walk
        # of any rank reads (so a scout does not make it fit), split between as many as run at
        # once
        doc = harness.culeak_json("objects", "--children", p.pid, "--copy-limit", "64M")
        cpus = len(os.sched_getaffinity(0))
        share = 64 // min(len(ranks), cpus)
        for t in doc["targets"]:
            check(any("than the copy limit (%d MiB" % share in w for w in t["report"]["warnings"]),
                  "rank %s's share of --copy-limit: %r" % (t["rank"], t["report"]["warnings"]))
        # and the CPUs: each worker copies in at most its share of them (threads it starts, seen
        # by strace, in each of the copy's three steps: reserve, read-only files, the rest)
        with harness.tempdir() as trace_dir:
            trace = os.path.join(trace_dir, "clones")
            subprocess.run(["strace", "-f", "-qq", "-e", "trace=clone,clone3", "-o", trace,
                            harness.CULEAK, "info", "--children", str(p.pid), "--copy-limit", "4G"],
                           check=True, stdout=subprocess.DEVNULL, timeout=300)
            per_worker, forks = {}, 0
            for line in open(trace):   # a call's first line has its flags ("resumed" lines not)
                if "clone(" not in line and "clone3(" not in line:
                    continue
                if "CLONE_THREAD" in line:
                    per_worker[line.split()[0]] = per_worker.get(line.split()[0], 0) + 1
                else:
                    forks += 1
            check_eq(forks, len(ranks), "workers seen by strace")
            each = cpus // min(len(ranks), cpus)
            check(all(n <= 3 * (each - 1) for n in per_worker.values()),
                  "threads started by each worker (%d CPUs each): %r" % (each, per_worker))


def cores_and_merge():
    with harness.tempdir() as d, harness.Process(harness.TORCH_VENV, "ranks.py", d) as p:
        ranks = truth_of(p)
        cores = [harness.gcore(pid, d) for pid in ranks]
        files = []
        for pid in ranks:
            files.append(os.path.join(d, "snap-%d.json" % pid))
            harness.culeak("snapshot", "--pid", pid, "-o", files[-1])
        p.kill()
        doc = harness.culeak_json("summary", *[a for c in cores for a in ("--core", c)])
        check_targets(doc, ranks, "--core")
        merged = harness.culeak_json("merge", *reversed(files))
        check_across(merged["across_ranks"], ranks, "merge")
        check_eq(sorted(r["source"] for r in merged["across_ranks"]["ranks"]), sorted(files),
                 "merge's sources")


# docs/python.md's example of every rank of a job, with the test's ground truth printed as JSON
API_SCRIPT = r"""
import concurrent.futures, json, sys
sys.path.insert(0, sys.argv[1])
import culeak

def snapshot(pid):
    with culeak.open(pid=pid) as t:
        return t.snapshot()

workers = culeak.children(int(sys.argv[2]))
with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
    snapshots = list(pool.map(snapshot, workers))
merged = culeak.merge(snapshots)
with culeak.open(pid=workers[0]) as t:
    since = t.diff(snapshots[0])
print(json.dumps({"workers": workers, "merged": merged, "since": since,
                  "same": culeak.diff(snapshots[1], snapshots[1])}))
"""


def python_api():
    """The Python API over every rank: children() of the agent, a snapshot of each opened in
    threads, merge() of the dicts; diff() of a snapshot with itself and Target.diff() of a
    stopped rank with its own snapshot find no growth."""
    with harness.tempdir() as d, harness.Process(harness.TORCH_VENV, "ranks.py", d) as p:
        ranks = truth_of(p)
        r = subprocess.run([sys.executable, "-c", API_SCRIPT, os.path.join(harness.ROOT, "build",
                                                                           "python"), str(p.pid)],
                           capture_output=True, text=True, timeout=300)
        check_eq(r.returncode, 0, "the API: %s" % r.stderr[-2000:])
        doc = json.loads(r.stdout)
        for key, command in (("merged", "merge"), ("since", "diff"), ("same", "diff")):
            harness.check_schema(doc[key], [command])
        check_eq(sorted(doc["workers"]), sorted(ranks), "children()")
        check_across(doc["merged"]["across_ranks"], ranks, "merge() of the API's snapshots")
        check_eq((doc["since"]["changes"], doc["same"]["changes"]), ([], []),
                 "diff of a snapshot with itself")


def usage():
    for args, words in ((["dump", "--pid", "1", "--pid", "2", "-o", "x"], "reads one target"),
                        (["summary", "--pid", "1", "--pid", "2", "--html", "x"], "one target's"),
                        (["merge", "a.json"], "two or more"),
                        (["objects", "--pid", "1", "--memory-limit", "1G"], "several targets"),
                        (["objects", "--pid", "1", "--pid", "2", "--memory-limit", "0"],
                         "more than 0")):
        r = harness.culeak(*args, expect_rc=2)
        check(words in r.stderr, "%r: %s" % (args, r.stderr))


def children_not_ranks():
    """--children reads the children that are ranks and notes the others (issue 42: a
    torch.multiprocessing job's resource tracker made the whole command fail with exit 9)."""
    with harness.Process("/usr/bin/python3", "launcher.py", harness.TORCH_VENV) as p:
        try:
            doc = harness.culeak_json("summary", "--children", p.pid)
            by_pid = {t["pid"]: t for t in doc["targets"]}
            check_eq(sorted(by_pid), sorted(p.truth.values()), "the children")
            rank = by_pid[p.truth["rank"]]
            check(rank["skipped"] is None and rank["exit_status"] == 0 and
                  any("__main__.history" in h["holder"] for h in rank["report"]["holders"]),
                  "the rank's report: %r" % rank)
            for role, why in (("helper", "PyTorch is not loaded"), ("shell", "not a Python")):
                t = by_pid[p.truth[role]]
                check(t["exit_status"] == 0 and t["report"] is None and why in (t["skipped"] or ""),
                      "%s: %r" % (role, t))
            text = harness.culeak("summary", "--children", p.pid).stdout
            check("not read: PyTorch is not loaded in it" in text, "text: %s" % text[-800:])
            # named by --pid, a process without torch is the user's mistake, and an error still
            harness.culeak("summary", "--pid", p.truth["rank"], "--pid", p.truth["helper"],
                           expect_rc=9)
        finally:
            for pid in p.truth.values():   # the launcher, killed, would leave them behind
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)


def tree_rss(pid):
    """The resident memory of pid and every process below it, in bytes."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open("/proc/%d/status" % p) as f:
                total += sum(int(l.split()[1]) * 1024 for l in f if l.startswith("VmRSS:"))
            todo += harness.children(p)
        except OSError:
            pass
    return total


def memory_limit():
    """Six processes of some 80 MiB of objects each (1.6 million), read under a 600 MiB memory
    limit, which two read at once could pass (culeak takes some 175 MiB for one, and its needs
    are known only as bounds before it reads): each is read whole (every object walked, no
    warning), one after another though the CPUs would allow more, and culeak's memory, the parent
    and its workers sampled together while they run, stays under the limit."""
    limit = 600 << 20
    with contextlib.ExitStack() as stack:
        procs = [stack.enter_context(harness.Process("/usr/bin/python3", "heap_rank.py", "60"))
                 for _ in range(6)]
        cmd = [harness.CULEAK, "objects", "--json", "--memory-limit", str(limit)]
        cmd += sum((["--pid", str(p.pid)] for p in procs), [])
        culeak = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        peak, done = 0, False
        while not done:
            done = culeak.poll() is not None
            peak = max(peak, tree_rss(culeak.pid))
        out, errors = culeak.communicate()
        check_eq(culeak.returncode, 0, "culeak's exit status (%s)" % errors[-500:])
        doc = json.loads(out)
        harness.check_schema(doc, ["objects"])
        check(doc["memory_limit"] == limit and doc["at_once"] == 1,
              "limit %d, at once %d, want %d and one at a time" % (
                  doc["memory_limit"], doc["at_once"], limit))
        for t in doc["targets"]:
            truth = next(p.truth for p in procs if p.pid == t["pid"])
            check(t["report"]["objects"] >= truth["objects"] and not t["report"]["warnings"],
                  "pid %d: %d objects, warnings %r; the process has %d tracked" % (
                      t["pid"], t["report"]["objects"], t["report"]["warnings"], truth["objects"]))
        check(peak <= limit, "culeak's memory peaked at %d bytes, over the limit of %d" % (
            peak, limit))


def tests():
    yield "live", live
    yield "cores-and-merge", cores_and_merge
    yield "python-api", python_api
    yield "usage", usage
    yield "children-not-ranks", children_not_ranks
    yield "memory-limit", memory_limit
