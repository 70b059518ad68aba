"""Writes books_gpt2.json, what test_books' torch-2.13:gpt2 cell compares with: culeak's balance
on tests/scenarios/gpt2.py, references not explained by type, the most of RUNS runs each.

usage: python3 tests/integration/freeze_books_gpt2.py [RUNS]   (after `make`; default 5)"""
import datetime
import json
import sys

import harness
import test_books


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    most = {}
    for _ in range(runs):
        with harness.Process(harness.TORCH_VENV, "gpt2.py") as p:
            doc = harness.culeak_json("balance", "--pid", p.pid)
        for row in doc["unexplained_by_type"]:
            most[row["type"]] = max(most.get(row["type"], 0), row["references"])
    about = ("culeak balance on tests/scenarios/gpt2.py (torch 2.13.0 CPU, Python 3.11.7): "
             "references not explained, by type, the most seen in %d runs of %s "
             "(tests/integration/freeze_books_gpt2.py). str and type vary by up to 1%% from run "
             "to run; the test allows them 2%%." % (runs, datetime.date.today().isoformat()))
    ordered = dict(sorted(most.items(), key=lambda kv: (-kv[1], kv[0])))
    with open(test_books.FROZEN, "w") as f:
        json.dump({"_about": about, "references": ordered}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
