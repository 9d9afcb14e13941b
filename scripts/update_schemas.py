#!/usr/bin/env python3
"""Splices the JSON Schema fragments generated from the field tables (`nicmatrix schema spec|traffic`,
core/base/test_spec_fields.hpp) into the committed schemas:
- results/results.schema.json: $defs/spec, whole, and a run's "spec" refers to it;
- configs/sweep.schema.json: each table field's generated keywords (type, minimum, maximum, default) in
  $defs/test_fields (descriptions, patterns and the keys coded by hand stay as written), and a $ref for each
  key in the stream entry ($defs/test), the request/response entry ($defs/rr) and an exclude rule's match.

Usage: scripts/update_schemas.py NICMATRIX [--check]
--check changes nothing and exits 1 when a committed file differs from what the tables give
(tests/python/test_schemas.py runs it)."""
import json
import os
import subprocess
import sys

SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SWEEP = os.path.join(SOURCE, "configs", "sweep.schema.json")
RESULTS = os.path.join(SOURCE, "results", "results.schema.json")


def generated(nicmatrix, which):
    return json.loads(subprocess.run([nicmatrix, "schema", which], check=True, capture_output=True, text=True).stdout)


def dump(schema):
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def splice_sweep(sweep, traffic):
    defs = sweep["$defs"]
    for key, keywords in traffic["test_fields"].items():
        defs["test_fields"].setdefault(key, {}).update(keywords)
    for entry, keys in (("test", traffic["stream"]), ("rr", traffic["rr"]),
                        ("test_match", traffic["stream"] + traffic["rr"])):
        properties = defs[entry]["properties"]
        for key in keys:
            properties.setdefault(key, {"$ref": f"#/$defs/test_fields/{key}"})
    return sweep


def splice_results(results, spec):
    results["$defs"]["spec"] = spec
    results["$defs"]["run"]["properties"]["spec"] = {"$ref": "#/$defs/spec"}
    return results


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    nicmatrix, check = argv[1], "--check" in argv[2:]
    stale = []
    for path, splice, which in ((SWEEP, splice_sweep, "traffic"), (RESULTS, splice_results, "spec")):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        want = dump(splice(json.loads(text), generated(nicmatrix, which)))
        if want != text:
            stale.append(os.path.relpath(path, SOURCE))
            if not check:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(want)
    if stale and check:
        sys.exit(f"not what the field tables give (run scripts/update_schemas.py BUILD/nicmatrix): {', '.join(stale)}")


if __name__ == "__main__":
    main(sys.argv)
