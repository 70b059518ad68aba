"""Exact holders, against the process's own view (tests/scenarios/holders.py, a job with several
leaks at once):
- edges: from each graph-holding global, culeak's autograd graph, walked breadth first in
  next_edges_ order, equals next_functions node for node: classes, next nodes, the storages of
  the _saved_* tensors, with nothing extra and nothing missing: chains, fan-in, a graph after
  backward(), one kept with retain_graph, in-place ops on a non-leaf, a custom
  autograd.Function, activation checkpointing (2.13+, where Python can see a hooked
  SavedVariable without recomputing it);
- holders: for every global, the storages culeak lists it as reaching equal those the process
  reaches from it through gc.get_referents and the autograd graph;
- retained bytes, on the simulated device: deleting each global alone in a fresh run of the same
  job frees exactly what culeak says it retains, by torch.cuda.memory_allocated().
On the CPU wheel live and from both kinds of core, on the CUDA wheel on the simulated device in
both orders of the two leaks, and live on every autograd table's own release; and the same checks
on a small GPT-2 from transformers (tests/scenarios/gpt2.py)."""
import concurrent.futures
import os

import harness
from harness import check
from test_blocks import with_version_py

SCENARIO = "holders.py"
# the globals whose deletion the retained bytes are checked against (the cases)
DELETED = ["total_loss", "val_total", "losses", "cache", "last_error", "orphan_opt", "ddp_model",
           "bucket", "custom", "shared_a", "shared_b", "model", "opt", "retained_graph",
           "inplace_loss", "ckpt_out"]
RELEASES = {"1.13": "/usr/bin/python3", "2.13": harness.TORCH_VENV}
for _v in ("2.0", "2.1", "2.4", "2.6", "2.7", "2.8", "2.9", "2.10", "2.11", "2.12", "2.13", "2.14",
           "2.15"):
    RELEASES[_v + "-cuda"] = harness.cuda_python(_v)


def tag(release):
    """Debian's 1.13 and the CPU wheel in make check, the CUDA wheels as harness says."""
    return () if "-cuda" not in release else harness.full_unless_checked(release)


def culeak_graph(doc, root_path):
    """culeak's nodes reachable from the grad_fn of the tensor at root_path, breadth first."""
    tensor = next((t for t in doc["tensors"] if t["type"] != "c++ tensor (saved for backward)" and
                   any(h["path"] == root_path for h in t["holders"])), None)
    if tensor is None or tensor["grad_fn_node"] is None:
        raise harness.Failure("no tensor with a grad_fn at %s" % root_path)
    nodes = doc["autograd"]["nodes"]
    order, index, todo = [], {}, [tensor["grad_fn_node"]]
    while todo:
        n = todo.pop(0)
        if n in index:
            continue
        index[n] = len(order)
        order.append(n)
        todo += nodes[n]["next"]
    return [{"class": nodes[n]["class"], "next": [index[m] for m in nodes[n]["next"]],
             "saved": sorted(int(p, 16) for p in nodes[n]["saved"])} for n in order]


def compare_edges(doc, truth):
    problems = []
    for name, want in truth["edges"].items():
        want = [{"class": n["class"], "next": [m for m in n["next"] if m is not None],
                 "saved": sorted(n["saved"])} for n in want]
        got = culeak_graph(doc, "__main__." + name)
        if got != want:
            diff = next((i for i, (g, w) in enumerate(zip(got, want)) if g != w), min(len(got), len(want)))
            problems.append("%s: graph differs at node %d of %d/%d:\n  culeak  %r\n  process %r" % (
                name, diff, len(got), len(want), got[diff:diff + 2], want[diff:diff + 2]))
    return problems


def reached(doc):
    """holder name -> data pointers of the storages culeak lists it as reaching."""
    by_holder = {}
    for t in doc["tensors"] + doc["storage_objects"]:
        for h in t["holders"]:
            by_holder.setdefault(h["holder"], set()).add(int(t["storage_data_ptr"], 16))
    return by_holder


def compare_holders(doc, truth):
    problems = []
    got = reached(doc)
    for name, ptrs in truth["holders"].items():
        want = set(ptrs) - {0}   # an empty storage has no data to tell it by
        have = got.get("__main__." + name, set()) - {0}
        if have != want:
            problems.append("%s: culeak reaches %d storages, the process %d; only culeak: %s; "
                            "only the process: %s" % (name, len(have), len(want),
                                                      sorted(map(hex, have - want))[:5],
                                                      sorted(map(hex, want - have))[:5]))
    return problems


def check_layout_fit(doc):
    check(doc["autograd"]["layout"] is not None, "no autograd layout fit: %r" % doc["warnings"])


def judge(doc, truth):
    check_layout_fit(doc)
    problems = compare_edges(doc, truth) + compare_holders(doc, truth)
    if problems:
        raise harness.Failure("\n".join(problems))


def inspect(python, kind, args=(), env=None, scenario=SCENARIO):
    def test():
        with harness.tempdir() as d:
            if kind == "kernel-core":
                truth, core = harness.kernel_core(python, scenario, list(args), d, env=env)
                judge(harness.culeak_json("tensors", "--core", core), truth)
                return
            with harness.Process(python, scenario, *args, env=env) as p:
                target = ["--pid", p.pid] if kind == "live" else ["--core", harness.gcore(p.pid, d)]
                judge(harness.culeak_json("tensors", *target), p.truth)
    return test


def unlisted_release(release, version, cuda, want):
    """A release without an autograd table of its own, made by reading a core as another
    version's: the fallback must check a table's SavedVariables as well as its next edges, so
    that it passes over one that reads the edges but not the saved tensors and takes the table
    named want (2.4.1 read as 2.5: 2.6-2.12's SavedVariables have no version counter; 2.13.0 read
    as 2.99: 2.14 and 2.15 keep a custom Function's saved_variables elsewhere); the graphs then equal
    the process's, saved tensors included."""
    def test():
        with harness.tempdir() as d:
            with harness.Process(RELEASES[release], SCENARIO) as p:
                truth, core = p.truth, harness.gcore(p.pid, d)
            doc = harness.culeak_json("tensors", *with_version_py(core, d, version, cuda))
        judge(doc, truth)
        short = ".".join(version.split(".")[:2])
        check(any("torch %s has no autograd layout: autograd layout %s was used" % (short, want)
                  in w for w in doc["warnings"]), doc["warnings"])
    return test


def grad_refs(python):
    """refs of a parameter's .grad object, which only its C++ tensor keeps: the path through the
    parameter, not "reachable from no root"."""
    def test():
        with harness.Process(python, SCENARIO) as p:
            doc = harness.culeak_json("refs", "--pid", p.pid, "--addr", p.truth["grad_object"])
        obj = doc["objects"][0]
        check(obj["reachable"] and obj["paths"][0].startswith("__main__.") and
              obj["paths"][0].endswith(".grad"), "refs of the .grad object: %r" % obj)
    return test


def paths_evaluate(python, scenario=SCENARIO):
    """Every Python path culeak prints for a Python tensor or a holder, evaluated in the process
    after culeak detached, gives that object (autograd steps, written with arrows, are left out:
    Python has no expression for a SavedVariable)."""
    def test():
        with harness.Process(python, scenario, "--eval", stdin=True) as p:
            doc = harness.culeak_json("tensors", "--pid", p.pid)
            want = {}
            for t in doc["tensors"]:
                if t["paths"] and " → " not in t["paths"][0] and not t["type"].startswith("c++"):
                    want[t["paths"][0]] = int(t["address"], 16)
            check(len(want) > 40, "too few paths to evaluate: %d" % len(want))
            got = p.ask(sorted(want))
        bad = ["%s -> %s, want 0x%x" % (path, got[path], addr) for path, addr in sorted(want.items())
               if got[path].startswith("error") or int(got[path], 16) != addr]
        check(not bad, "%d of %d paths do not evaluate to their object:\n  %s" % (
            len(bad), len(want), "\n  ".join(bad[:20])))
    return test


def trainer(python, *args, env=None):
    """A Trainer in main() (issue 43): each parameter is named through the model that holds it
    (`trainer.model[0].weight`, as named_parameters() says), not through the optimizer's state
    keys or param_groups, which reach it in fewer steps but through an index; its optimizer
    state by it, as main()'s code would (`trainer.opt.state[trainer.model[0].weight]`), and refs
    lists that path first. The summary drills
    down the Trainer to its accumulation point, `trainer.metrics['loss']`, with as many objects as
    the list has entries and the bytes deleting it frees; a global of two big tensors has none,
    and the text says so. Memory by category equals the process's own view of each (its
    parameters, their gradients, its optimizer's state, its losses' saved tensors), on the CPU,
    and with args --cuda on the (simulated) CUDA device, where deleting is not measured (in a
    fork, which CUDA does not survive)."""
    return lambda: trainer_job(python, args, env)


def trainer_job(python, args, env):
    import re

    def drills(tree):
        yield tree
        for part in tree["parts"]:
            yield from drills(part)

    with harness.Process(python, "trainer_main.py", *args, env=env) as p:
        doc = harness.culeak_json("tensors", "--pid", p.pid)
        summary = harness.culeak_json("summary", "--pid", p.pid)
        text = harness.culeak("summary", "--pid", p.pid).stdout
        refs = harness.culeak_json("refs", "--pid", p.pid, "--type",
                                   "torch.nn.parameter.Parameter", "--max-paths", "3")
        # one more object than the list has entries: no accumulation point, and no breakdown
        strict = harness.culeak_json("summary", "--pid", p.pid, "--depth", "0", "--spread",
                                     str(p.truth["steps"] + 1))
    truth = p.truth
    root = "<thread main: main() at trainer_main.py:%d>.trainer" % truth["line"]
    def under_model(name):   # 0.weight -> .model[0].weight
        return ".model" + re.sub(r"\.(\d+)", r"[\1]", "." + name)

    named = {**truth["params"], **truth["exp_avg"]}
    got = {t["address"]: t["paths"][0] for t in doc["tensors"] if t["address"] in named}
    want = {a: root + under_model(name) for a, name in truth["params"].items()}
    want.update({a: "%s.opt.state[trainer%s]['exp_avg']" % (root, under_model(name))
                 for a, name in truth["exp_avg"].items()})
    check(got == want, "tensors named %r, want %r" % (got, want))
    # refs names a parameter so too, then by the optimizer's other references
    got = {o["address"]: o["paths"] for o in refs["objects"]}
    check(sorted(got) == sorted(truth["params"]) and
          all(paths[0] == want[a] and len(paths) == 3 and len(set(paths)) == 3
              for a, paths in got.items()), "refs --type Parameter: %r" % got)
    holders = {h["holder"]: h for h in summary["holders"]}
    check(root in holders and "__main__.few" in holders, "holders: %r" % sorted(holders))
    points = [d for d in drills(holders[root]["drill"]) if d["accumulation_point"]]
    check([(d["path"], d["objects"]) for d in points] ==
          [(root + ".metrics['loss']", truth["steps"])] and
          truth["loss_freed"] in (False, points[0]["retained_bytes"]),
          "the Trainer's accumulation points: %r" % points)
    few = list(drills(holders["__main__.few"]["drill"]))
    check(not any(d["accumulation_point"] for d in few) and
          truth["few_freed"] in (False, few[0]["retained_bytes"]),
          "__main__.few's drill-down: %r" % few)
    check(".metrics['loss']: accumulation point, %d objects" % truth["steps"] in text and
          "no accumulation point" in text, text[-2000:])
    check(all(not d["accumulation_point"] and not d["parts"] for h in strict["holders"]
              if h["drill"] for d in drills(h["drill"])), "--spread, --depth: %r" % strict)
    # memory by category, against the process's own view of each
    device = truth["device"]
    got = {c["category"]: c["bytes"] for c in summary["categories"] if c["device"] == device}
    check({k: got.get(k) for k in truth["categories"]} == truth["categories"],
          "categories %r, want %r" % (got, truth["categories"]))
    # the same total as the holder breakdown (on CUDA both count allocator blocks, and the
    # categories add the blocks C++ owners hold and the cache)
    held = sum(v for a in summary["accounting"] if a["device"] == device
               for k, v in a.items() if k != "device")
    held += sum(c["owned_by_cxx"] + c["cached"] for c in summary["cuda"]
                if "cuda:%d" % c["device"] == device)
    check(sum(got.values()) == held, "categories sum to %d, the holder breakdown of %s to %d" % (
        sum(got.values()), device, held))
    check("by category" in text and "%s optimizer state" % device in text, text[:1500])


def scenario_leaks(scenario, python, kind):
    """A scenario whose globals each hold tensors in a way of its own (iterator_leaks.py: through
    C iterators and dict views, "reachable from no root" before issue 41; cxx_wrappers.py:
    through grad_fn and torch.UntypedStorage objects; saved_hooks.py: through what
    saved_tensors_hooks packed; node_hooks.py: through closures registered as a node's or a
    tensor's hooks): each global reaches what the process reaches from it by
    gc.get_referents, culeak's retained bytes equal what deleting it freed in a fork of the
    job, and the categories the scenario counts have its bytes."""
    def test():
        with harness.tempdir() as d, harness.Process(python, scenario) as p:
            target = ["--pid", p.pid] if kind == "live" else ["--core", harness.gcore(p.pid, d)]
            summary = harness.culeak_json("summary", *target)
            doc = harness.culeak_json("tensors", *target)
            truth = p.truth
        retained = {h["holder"]: h["retained_by_device"].get("cpu", 0) for h in summary["holders"]}
        problems = compare_holders(doc, truth)
        problems += ["%s: culeak says dropping it frees %d bytes, deleting it freed %d" % (
            name, retained.get("__main__." + name, 0), want)
            for name, want in sorted(truth["freed"].items())
            if retained.get("__main__." + name, 0) != want]
        categories = {c["category"]: c["bytes"] for c in summary["categories"]
                      if c["device"] == "cpu"}
        problems += ["category %s: culeak %d bytes, the process %d" % (
            name, categories.get(name, 0), want)
            for name, want in sorted(truth.get("categories", {}).items())
            if categories.get(name, 0) != want]
        check(not problems, "\n".join(problems))
    return test


def freed(order, name, env):
    """What deleting one global frees, in a fresh run of the same job."""
    r = harness.subprocess.run(
        [harness.CUDA_TORCH_VENV, os.path.join(harness.SCENARIOS, SCENARIO), "--cuda",
         "--order", order, "--delete", name], capture_output=True, text=True, timeout=300, env=env)
    line = [x for x in r.stdout.splitlines() if x.startswith("{")]
    check(r.returncode == 0 and line, "--delete %s failed: %s" % (name, r.stderr[-1500:]))
    return harness.json.loads(line[-1])["freed"]


def retained(order, names):
    def test():
        env = harness.simgpu_env()
        with harness.Process(harness.CUDA_TORCH_VENV, SCENARIO, "--cuda", "--order", order, env=env) as p:
            judge(harness.culeak_json("tensors", "--pid", p.pid), p.truth)
            summary = harness.culeak_json("summary", "--pid", p.pid)
        got = {h["holder"]: h for h in summary["holders"]}
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            truth = dict(zip(names, pool.map(lambda n: freed(order, n, env), names)))
        problems = []
        for name, want in truth.items():
            h = got.get("__main__." + name, {"retained_by_device": {}})
            have = h["retained_by_device"].get("cuda:0", 0)
            if have != want:
                problems.append("%s: culeak says dropping it frees %d bytes on cuda:0, deleting it "
                                "freed %d" % (name, have, want))
        check(truth["val_total"] > 20 * truth["total_loss"],
              "the job does not show the two leaks apart: %r" % truth)
        if problems:
            raise harness.Failure("\n".join(problems))
    return test


def tests():
    for kind in ("live", "gcore", "kernel-core"):
        yield "torch-2.13:%s" % kind, inspect(harness.TORCH_VENV, kind)
    yield "torch-2.13:val-first:live", inspect(harness.TORCH_VENV, "live", ("--order", "val-first"))
    for release, python in RELEASES.items():
        if release != "2.13":
            yield ("torch-%s:live" % release, inspect(python, "live")) + tag(release)
    yield "torch-2.4-cuda:read-as-2.5:gcore", unlisted_release("2.4-cuda", "2.5.1+cu124", "12.4",
                                                               "2.4"), "full"
    yield "torch-2.13:read-as-2.99:gcore", unlisted_release("2.13", "2.99.0", None, "2.13")
    yield "torch-2.13:grad-refs", grad_refs(harness.TORCH_VENV)
    for kind in ("live", "gcore"):
        yield "torch-2.13:iterator-leaks:%s" % kind, scenario_leaks("iterator_leaks.py",
                                                                    harness.TORCH_VENV, kind)
        yield "torch-2.13:cxx-wrappers:%s" % kind, scenario_leaks("cxx_wrappers.py",
                                                                  harness.TORCH_VENV, kind)
    for release, python in RELEASES.items():   # each way a storage object and a node are held
        if release != "2.13":
            yield ("torch-%s:cxx-wrappers:live" % release,
                   scenario_leaks("cxx_wrappers.py", python, "live")) + tag(release)
    yield "torch-2.13:trainer", trainer(harness.TORCH_VENV)
    for hooks in ("saved-hooks", "node-hooks"):   # issue 44: what hooks hold from C++
        scenario = hooks.replace("-", "_") + ".py"
        for kind in ("live", "gcore"):
            yield ("torch-2.13:%s:%s" % (hooks, kind),
                   scenario_leaks(scenario, harness.TORCH_VENV, kind))
        # each layout of the hooks
        for release in ("1.13", "2.0-cuda", "2.1-cuda", "2.4-cuda", "2.6-cuda", "2.10-cuda", "2.12-cuda",
                        "2.14-cuda", "2.15-cuda"):
            yield ("torch-%s:%s:live" % (release, hooks),
                   scenario_leaks(scenario, RELEASES[release], "live")) + tag(release)
    yield ("torch-2.13:trainer:5000-steps", trainer(harness.TORCH_VENV, "--steps", "5000"),
           "full")   # the accumulation point at scale: 1.5 minutes
    yield "simulated-device:trainer", trainer(harness.CUDA_TORCH_VENV, "--cuda",
                                              env=harness.simgpu_env())
    yield "torch-2.13:paths-evaluate", paths_evaluate(harness.TORCH_VENV)
    for kind in ("live", "gcore"):   # real third-party model code
        yield "torch-2.13:gpt2:%s" % kind, inspect(harness.TORCH_VENV, kind, scenario="gpt2.py")
    yield "torch-2.13:gpt2:paths-evaluate", paths_evaluate(harness.TORCH_VENV, "gpt2.py")
    yield "simulated-device:retained:train-first", retained("train-first", DELETED)
    yield "simulated-device:retained:val-first", retained("val-first", ["total_loss", "val_total"])
