"""One-off (not committed): bench/heap.py's floor and live measurements on the GPU machine."""
import os, shutil, sys, time
sys.path.insert(0, "bench")
import heap
heap.CULEAK = os.path.abspath("build/static/culeak")
py = os.environ.get("BENCH_PYTHON") or shutil.which("python3")
heap.VENV = os.path.dirname(os.path.dirname(py))
print("load %.2f %.2f %.2f, %d CPUs" % (os.getloadavg() + (os.cpu_count(),)), flush=True)
for n in [int(a) for a in sys.argv[1:]]:
    t0 = time.time()
    t = heap.Target(n, 2000, False)
    built = time.time() - t0
    try:
        pid = str(t.pid)
        obj = heap.objects_of(t.pid)
        fb, fc = min((heap.floor_read(t.pid) for _ in range(3)), key=lambda x: x[1])
        ff = min(heap.floor_read(t.pid, fresh=True)[1] for _ in range(3))
        lc, lr, lu = heap.best([heap.CULEAK, "objects", "--json", "--pid", pid], 3)
        tc, tr, _ = heap.best([heap.CULEAK, "tensors", "--json", "--pid", pid], 3)
        ir = heap.best([heap.CULEAK, "info", "--json", "--pid", pid], 1)[1]
        t.ask("gap"); heap.run([heap.CULEAK, "objects", "--json", "--pid", pid]); pause = t.ask("gap")
    finally:
        t.close()
    print("%.2fM objects (heap built in %.0fs): floor %d MiB read %.3fs fresh %.3fs | objects %.3fs"
          " = %.1fx read %.1fx fresh, %.0f ns/obj, user %.3fs | tensors %.3fs | pause %.3fs |"
          " RSS/obj %.0f / %.0f B" % (obj / 1e6, built, fb >> 20, fc, ff, lc, lc / fc, lc / ff,
          lc / obj * 1e9, lu, tc, pause, (lr - ir) / obj, (tr - ir) / obj), flush=True)
