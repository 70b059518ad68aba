"""Runs the integration tests: every `tests()` generator in tests/integration/test_*.py yields
(name, function). Tests run in parallel (CULEAK_JOBS, default 2). Prints one line per test and a
closing `integration: N passed, N failed`. Exit status 1 if any failed.

A test generator may yield (name, function, "full") for a cell of the version matrix that only
`make check-full` runs (CULEAK_FULL=1): `make check` keeps one representative per axis.

usage: run.py [SUBSTRING ...]   only tests whose name contains one of the substrings"""
import concurrent.futures
import importlib
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402


def collect(filters, full_matrix):
    here = os.path.dirname(os.path.abspath(__file__))
    for name in sorted(os.listdir(here)):
        if name.startswith("test_") and name.endswith(".py"):
            module = importlib.import_module(name[:-3])
            for test_name, fn, *scope in module.tests():
                if scope == ["full"] and not full_matrix:
                    continue
                full = "%s::%s" % (name[5:-3], test_name)
                if not filters or any(f in full for f in filters):
                    yield full, fn


def run_one(item):
    name, fn = item
    start = time.time()
    try:
        fn()
        return name, None, time.time() - start
    except harness.Failure as e:
        return name, str(e), time.time() - start
    except Exception:
        return name, traceback.format_exc(), time.time() - start


def main():
    items = list(collect(sys.argv[1:], os.environ.get("CULEAK_FULL") == "1"))
    jobs = int(os.environ.get("CULEAK_JOBS", "2"))
    passed = failed = 0
    with harness.kernel_core_pattern():
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            for name, error, secs in pool.map(run_one, items):
                if error is None:
                    passed += 1
                    print("ok    %-60s %5.1fs" % (name, secs), flush=True)
                else:
                    failed += 1
                    print("FAIL  %-60s %5.1fs\n      %s" % (name, secs, error.replace("\n", "\n      ")),
                          flush=True)
    print("integration: %d passed, %d failed" % (passed, failed))
    return 1 if failed or not items else 0


if __name__ == "__main__":
    sys.exit(main())
