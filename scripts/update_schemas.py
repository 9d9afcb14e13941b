#!/usr/bin/env python3
"""Splices the JSON Schema fragments generated from the field tables (`nicmatrix schema spec|traffic|sweep|results`,
core/traffic/test_spec_fields.hpp, matrix/model/sweep_config_fields.hpp and the field lists) into the committed schemas:
- configs/sweep.schema.json: $defs/spec, whole: a test as a run records it (`nicmatrix schema spec`), the one
  place of the test-spec fields' full schema, so that a new field changes one schema file;
- results/results.schema.json: $defs/spec is a $ref to the sweep schema's, and a run's "spec" refers to it; and every def `nicmatrix
  schema results` generates from the field lists of the records a results file carries
  (matrix/model/results_schema.cpp): its generated keywords (type, properties, required, $ref, oneOf, items,
  additionalProperties, and a minimum the file does not set) replace the committed ones, and what else a
  property has (description, enum, const, pattern, maximum, ...) stays as written. A property the field
  list lacks is dropped (a key the codec writes by hand is listed as {} and kept as written); a record the
  file described inline moves into its def, descriptions and all;
- configs/sweep.schema.json: each table field's generated keywords (type, minimum, maximum, default) in
  $defs/test_fields (descriptions, patterns and the keys coded by hand stay as written), and a $ref for each
  key in the stream entry ($defs/test), the request/response entry ($defs/rr) and an exclude rule's match;
- configs/sweep.schema.json: the sweep config's own keys that are one value (its top level, "precision",
  "interference"): their generated keywords (type, minimum or exclusiveMinimum, maximum, default,
  description) replace the committed ones, other keywords and the keys coded by hand stay as written, and a
  key the table makes required is in "required"; a table key the file lacks is added, a key coded by hand
  that the parser allows and the file lacks (or the other way round) is an error.

Usage: scripts/update_schemas.py NICMATRIX [--check]
--check changes nothing and exits 1 when a committed file differs from what the tables give, and names for
the results schema each key the field lists have and it lacks, each property it has and they lack, and
each type that differs (tests/python/test_schemas.py runs it)."""
import json
import os
import subprocess
import sys

SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SWEEP = os.path.join(SOURCE, "configs", "sweep.schema.json")
RESULTS = os.path.join(SOURCE, "results", "results.schema.json")


def generated(nicmatrix, which):
    """`nicmatrix schema WHICH`, parsed."""
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


def splice_sweep_spec(sweep, spec):
    sweep["$defs"]["spec"] = spec
    return sweep


def splice_results(results, _spec):
    results["$defs"]["spec"] = {"$ref": "../configs/sweep.schema.json#/$defs/spec"}
    results["$defs"]["run"]["properties"]["spec"] = {"$ref": "#/$defs/spec"}
    return results


def def_name(ref):
    return ref.rsplit("/", 1)[-1] if ref.startswith("#/$defs/") else None


def inline_object(node):
    """The committed object a property describes inline (itself, or its non-null branch of a oneOf)."""
    if "properties" in node:
        return node
    return next((b for b in node.get("oneOf", []) if "properties" in b), None)


class Splice:
    """Splices generated defs into a committed schema's defs, noting each difference between the two."""

    def __init__(self, defs, generated_names):
        self.defs = defs  # the committed file's $defs
        self.generated_names = generated_names
        self.problems = []
        self.seeds = {}  # def name -> the committed inline description of its record

    def node(self, committed, generated, where):
        """`committed` with `generated`'s shape keywords and its own annotations. A record that became a def of
        its own while the file describes it inline leaves that description in `seeds`."""
        if not generated:
            return committed  # written by hand (a hand-coded type, or an extra key): the file says
        hand_ref = def_name(committed.get("$ref", ""))
        if hand_ref and hand_ref not in self.generated_names and "$ref" not in generated and "oneOf" not in generated:
            # The file refers to a def of its own (counts, profile_categories): it may say more than the type.
            self.check_type(self.defs.get(hand_ref, {}), generated, where)
            return committed
        self.check_type(committed, generated, where)
        inline = inline_object(committed)
        refs = [generated.get("$ref")] + [b.get("$ref") for b in generated.get("oneOf", [])]
        for name in filter(None, (def_name(r) for r in refs if r)):
            if inline is not None:
                self.seeds.setdefault(name, inline)
        shaped = {}
        for key, g in generated.items():
            if key == "properties":
                shaped[key] = self.properties((inline or {}).get("properties", {}), g, where)
            elif key in ("items", "additionalProperties"):
                c = committed.get(key)
                shaped[key] = self.node(c if isinstance(c, dict) else {}, g, f"{where}[]")
            elif key == "oneOf":
                branches = committed.get("oneOf", [])
                shaped[key] = [self.node(next((c for c in branches if c.get("type") == b.get("type") and c.get("$ref") == b.get("$ref")), {}),
                                         b, where) for b in g]
            elif key != "minimum" or "minimum" not in committed:
                shaped[key] = g
        # What the generated node says the value is replaces what the file said. "required" is the field
        # list's (what the reader needs) plus what the file requires of the keys the writer always writes
        # (hostname, kernel, ...: an output that lost one fails validation), as long as the key still exists;
        # items and additionalProperties the generator cannot give (hand-coded types) stay.
        if "properties" in shaped:
            kept = [k for k in (inline or {}).get("required", []) if k in shaped["properties"]]
            required = list(dict.fromkeys(kept + shaped.get("required", [])))
            shaped.pop("required", None)
            if required:
                shaped["required"] = required
        dropped = {"type", "$ref", "oneOf", "properties", "required"} - set(shaped)
        out = {k: shaped.get(k, v) for k, v in committed.items() if k not in dropped}
        out.update((k, v) for k, v in shaped.items() if k not in out)
        return out

    def properties(self, have, generated, where):
        props = {}
        for name in have:
            if name in generated:
                props[name] = self.node(have[name], generated[name], f"{where}/{name}")
            else:
                self.problems.append(f"{where}/{name}: in the schema, not in the field list")
        for name in generated:
            if name not in have:
                self.problems.append(f"{where}/{name}: in the field list, not in the schema")
                props[name] = self.node({}, generated[name], f"{where}/{name}")
        return props

    def check_type(self, committed, generated, where):
        if "type" in committed and "type" in generated and committed["type"] != generated["type"]:
            self.problems.append(f"{where}: type {json.dumps(committed['type'])}, the field list gives {json.dumps(generated['type'])}")


def splice_results_defs(results, generated):
    """results.schema.json with every def `nicmatrix schema results` generates; returns it and the problems
    found (each a difference between the field lists and the committed file)."""
    defs = results["$defs"]
    names = set(generated["$defs"])
    seeding = Splice(defs, names)
    for name, g in generated["$defs"].items():  # first pass: find the defs the file describes inline
        seeding.node(defs.get(name, {}), g, f"$defs/{name}")
    splice = Splice(defs, names)
    splice.problems = [f"$defs/{name}: described inline, not as a def" for name in names if name not in defs and name in seeding.seeds]
    for name, g in generated["$defs"].items():
        defs[name] = splice.node(defs.get(name, seeding.seeds.get(name, {})), g, f"$defs/{name}")
    return results, splice.problems


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    nicmatrix, check = argv[1], "--check" in argv[2:]
    stale = []
    for path, splice, which in ((SWEEP, splice_sweep, "traffic"), (SWEEP, splice_sweep_table, "sweep"),
                                (SWEEP, splice_sweep_spec, "spec"), (RESULTS, splice_results, "spec")):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        want = splice(json.loads(text), generated(nicmatrix, which))
        if path == RESULTS:
            want, problems = splice_results_defs(want, generated(nicmatrix, "results"))
            for problem in problems:
                print(f"{os.path.relpath(path, SOURCE)}: {problem}", file=sys.stderr)
        want = dump(want)
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
