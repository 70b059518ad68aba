"""Writes books_NAME.json, what test_books' torch-2.13:NAME cell compares with: culeak's balance
on tests/scenarios/NAME.py, references not explained by type, the most of RUNS runs each.

usage: python3 tests/integration/freeze_books.py [RUNS] [NAME...]   (after `make`; default: 5
runs of each of test_books.WHOLE_HEAPS)"""
import datetime
import json
import sys

import harness
import test_books


def freeze(scenario, runs):
    most = {}
    for _ in range(runs):
        with harness.Process(harness.TORCH_VENV, scenario + ".py") as p:
            doc = harness.culeak_json("balance", "--pid", p.pid)
        for row in doc["unexplained_by_type"]:
            most[row["type"]] = max(most.get(row["type"], 0), row["references"])
    about = ("culeak balance on tests/scenarios/%s.py (torch 2.13.0 CPU, Python 3.11.7): "
             "references not explained, by type, the most seen in %d runs of %s "
             "(tests/integration/freeze_books.py). str and type vary by up to 1%% from run "
             "to run; the test allows them 2%% or 10 more." % (scenario, runs,
                                                     datetime.date.today().isoformat()))
    ordered = dict(sorted(most.items(), key=lambda kv: (-kv[1], kv[0])))
    with open(test_books.FROZEN % scenario, "w") as f:
        json.dump({"_about": about, "references": ordered}, f, indent=1)
        f.write("\n")


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    for scenario in sys.argv[2:] or test_books.WHOLE_HEAPS:
        freeze(scenario, runs)


if __name__ == "__main__":
    main()
