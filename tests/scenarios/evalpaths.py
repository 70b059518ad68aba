"""For scenarios whose paths a test evaluates: after culeak has detached, the test writes one JSON
list of paths on the scenario's stdin; each is evaluated in the process as a user would (its root
module imported, then the expression), and one JSON line maps every path to the id() of what it
gives, or to the error it raised."""
import importlib
import json
import re
import sys


def evaluate(path):
    namespace = {"sys": sys}
    # the root module (at the start, or inside `[*...]` and `[...]` keys), imported as a user would
    for top in set(re.findall(r"(?:^|\[\*?)([A-Za-z_]\w*)", path)):
        try:
            namespace[top] = importlib.import_module(top)
        except (ImportError, ValueError):
            pass
    try:
        return hex(id(eval(path, namespace)))
    except Exception as e:   # the test reports which path failed, and how
        return "error: %s: %s" % (type(e).__name__, e)


def serve():
    """Answers one request on stdin, then returns."""
    paths = json.loads(sys.stdin.readline())
    print(json.dumps({p: evaluate(p) for p in paths}), flush=True)
