#!/usr/bin/env python3
"""Splices the JSON Schema fragments generated from the field tables (`nicmatrix schema spec|traffic|sweep`,
core/base/test_spec_fields.hpp and matrix/model/sweep_config_fields.hpp) into the committed schemas:
- results/results.schema.json: $defs/spec, whole, and a run's "spec" refers to it;
- configs/sweep.schema.json: each table field's generated keywords (type, minimum, maximum, default) in
  $defs/test_fields (descriptions, patterns and the keys coded by hand stay as written), and a $ref for each
  key in the stream entry ($defs/test), the request/response entry ($defs/rr) and an exclude rule's match;
- configs/sweep.schema.json: the sweep config's own keys that are one value (its top level, "precision",
  "interference"): their generated keywords (type, minimum or exclusiveMinimum, maximum, default,
  description) replace the committed ones, other keywords and the keys coded by hand stay as written, and a
  key the table makes required is in "required"; a table key the file lacks is added, a key coded by hand
  that the parser allows and the file lacks (or the other way round) is an error.

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


# The keywords `nicmatrix schema sweep` owns in a key's entry, in the order a new entry writes them.
SWEEP_TABLE_KEYWORDS = ("type", "exclusiveMinimum", "minimum", "maximum", "default", "description")
# Where each record of the sweep config's tables sits in configs/sweep.schema.json.
SWEEP_TABLE_RECORDS = {"config": (), "precision": ("properties", "precision"),
                       "interference": ("properties", "interference")}


def splice_sweep_keywords(entry, keywords):
    """The committed entry with the generated keywords in place of its own (kept where they were)."""
    out = {}
    for word, value in entry.items():
        if word not in SWEEP_TABLE_KEYWORDS:
            out[word] = value
        elif word in keywords:
            out[word] = keywords[word]
    for word in SWEEP_TABLE_KEYWORDS:
        if word in keywords and word not in out:
            out[word] = keywords[word]
    return out


def splice_sweep_table(sweep, table):
    for record, where in SWEEP_TABLE_RECORDS.items():
        obj = sweep
        for step in where:
            obj = obj[step]
        generated_record = table[record]
        properties = obj["properties"]
        for key in generated_record["properties"]:
            properties.setdefault(key, {})
        if set(properties) != set(generated_record["keys"]):
            sys.exit(f"configs/sweep.schema.json: the keys of {record} are {sorted(properties)}, "
                     f"the parser allows {sorted(generated_record['keys'])}")
        for key, keywords in generated_record["properties"].items():
            properties[key] = splice_sweep_keywords(properties[key], keywords)
        for key in generated_record["required"]:
            if key not in obj.setdefault("required", []):
                obj["required"].append(key)
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
    for path, splice, which in ((SWEEP, splice_sweep, "traffic"), (SWEEP, splice_sweep_table, "sweep"),
                                (RESULTS, splice_results, "spec")):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        want = dump(splice(json.loads(text), generated(nicmatrix, which)))
        if want != text:
            if os.path.relpath(path, SOURCE) not in stale:
                stale.append(os.path.relpath(path, SOURCE))
            if not check:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(want)
    if stale and check:
        sys.exit(f"not what the field tables give (run scripts/update_schemas.py BUILD/nicmatrix): {', '.join(stale)}")


if __name__ == "__main__":
    main(sys.argv)
