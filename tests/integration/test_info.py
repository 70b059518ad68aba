"""`culeak info` on real interpreters, live and from both kinds of core, checked against what each
scenario process reported about itself."""
import harness
from harness import check, check_eq


def check_report(info, truth, kind):
    check_eq(info["target"]["kind"], kind, "target.kind")
    check_eq(info["target"]["pid"], truth["pid"], "target.pid")
    check_eq(info["target"]["executable"], truth["executable"], "target.executable")
    check_eq(sorted(info["target"]["threads"]), truth["threads"], "target.threads")
    check_eq(info["python"]["version"], truth["version"], "python.version")
    check_eq(info["torch"]["version"], truth["torch"], "torch.version")
    check_eq(info["torch"]["cuda"], truth["torch_cuda"], "torch.cuda")


def check_untouched(p):
    """After culeak detached, the process runs on, untraced."""
    st = p.status()
    check_eq(st["TracerPid"], "0", "TracerPid after culeak")
    check(st["State"][0] in "SR", "process state after culeak: %s" % st["State"])
    check(p.proc.poll() is None, "process died")


def live(python, args):
    def test():
        with harness.Process(python, "idle.py", *args) as p:
            info = harness.culeak_json("info", "--pid", p.pid)
            check_report(info, p.truth, "live")
            check_untouched(p)
            text = harness.culeak("info", "--pid", p.pid).stdout
            check("python      %s" % p.truth["version"] in text, "text output: %s" % text)
    return test


def gcore(python, args):
    def test():
        with harness.tempdir() as d, harness.Process(python, "idle.py", *args) as p:
            core = harness.gcore(p.pid, d)
            info = harness.culeak_json("info", "--core", core, *harness.sysroot_args(python))
            check_report(info, p.truth, "core")
            check_eq(info["target"]["signal"], 0, "target.signal of a gcore")
    return test


def kernel(python, args):
    def test():
        with harness.tempdir() as d:
            truth, core = harness.kernel_core(python, "idle.py", args, d)
            info = harness.culeak_json("info", "--core", core, *harness.sysroot_args(python))
            check_report(info, truth, "core")
            check_eq(info["target"]["signal"], 6, "target.signal (SIGABRT)")
    return test


def stripped_libpython(python):
    """The same pyenv interpreter with a stripped copy of its libpython (no .symtab, no DWARF): the
    runtime is found through .dynsym and sections alone, and reported as without debug info."""
    def test():
        with harness.tempdir() as d:
            env, copy = harness.stripped_libpython(python, d)
            with harness.Process(python, "idle.py", env=env) as p:
                info = harness.culeak_json("info", "--pid", p.pid)
                check_report(info, p.truth, "live")
                check_eq(info["python"]["module"], copy, "python.module")
                check_eq(info["python"]["debug_info"], False, "python.debug_info")
                check_eq(info["python"]["symtab"], False, "python.symtab")
                core = harness.gcore(p.pid, d)
                check_report(harness.culeak_json("info", "--core", core), p.truth, "core")
            with harness.Process(python, "idle.py") as p:
                info = harness.culeak_json("info", "--pid", p.pid)
                check_eq(info["python"]["debug_info"], True, "python.debug_info (unstripped)")
    return test


def cuda_build():
    """The CUDA 13 wheel, imported on a machine without a GPU: a CUDA build whose caching allocator
    library is mapped."""
    with harness.Process(harness.CUDA_TORCH_VENV, "idle.py", "--torch") as p:
        info = harness.culeak_json("info", "--pid", p.pid)
        check_report(info, p.truth, "live")
        check_eq(info["torch"]["cuda_build"], True, "torch.cuda_build")
        check_eq(info["torch"]["c10_cuda_mapped"], True, "torch.c10_cuda_mapped")
        check(any(l.endswith("/libc10_cuda.so") for l in info["torch"]["libraries"]),
              "libc10_cuda.so in %r" % info["torch"]["libraries"])


def tests():
    targets = [(name, py, []) for name, py in harness.interpreters()]
    targets.append(("torch-2.13", harness.TORCH_VENV, ["--torch"]))
    yield "torch-2.14-cuda:live", cuda_build
    for name, python, args in targets:
        yield "%s:live" % name, live(python, args)
        yield "%s:gcore" % name, gcore(python, args)
        yield "%s:kernel-core" % name, kernel(python, args)
        if name.startswith("pyenv-"):
            yield "%s:stripped-libpython" % name, stripped_libpython(python)
