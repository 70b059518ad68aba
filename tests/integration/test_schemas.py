"""The JSON Schemas of docs/schemas/: one per command that prints a --json document, plus the
error object, each a valid draft 2020-12 schema. Every test that reads a document through
harness.culeak_json checks it against its schema; these show that check has teeth: a field the
schema does not describe, or a missing one, fails."""
import copy
import json
import os

import harness
from harness import check, check_eq

SYSTEM_PY = "/usr/bin/python3"


def valid_schemas():
    import jsonschema
    names = sorted(n[:-5] for n in os.listdir(harness.SCHEMAS) if n.endswith(".json"))
    check_eq(names, sorted(harness.SCHEMA_COMMANDS + ("error", "targets")), "schemas in docs/schemas")
    for name in names:
        with open(os.path.join(harness.SCHEMAS, name + ".json")) as f:
            schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(schema)
        check(schema.get("additionalProperties") is False, "%s.json: not strict" % name)


def rejects(doc, args, what):
    try:
        harness.check_schema(doc, args)
    except harness.Failure:
        return
    check(False, "a document with %s passed its schema" % what)


def strict():
    with harness.Process(SYSTEM_PY, "idle.py") as p:
        doc = harness.culeak_json("info", "--pid", p.pid)   # checked on the way
        extra = copy.deepcopy(doc)
        extra["target"]["undocumented"] = 1
        rejects(extra, ["info"], "a field the schema does not describe")
        missing = copy.deepcopy(doc)
        del missing["python"]["version"]
        rejects(missing, ["info"], "a required field missing")
        error = harness.culeak_json("objects", "--pid", p.pid, "--state", "free", expect_rc=2)
        check_eq(error["error"]["code"], "usage", "error code of an option that does not apply")
        rejects({"schema_version": 1, "error": {"code": "usage"}}, ["objects"], "no message")


def tests():
    yield "valid", valid_schemas
    yield "strict", strict
