"""The JSON Schema files validate what nicmatrix reads and writes, checked with a full validator
(Debian's python3-jsonschema), and the CLI agrees with them about bad configs."""
import copy
import glob
import json
import os

import jsonschema
import pytest

from conftest import run

SOURCE = os.environ.get("NM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


def load(path):
    with open(os.path.join(SOURCE, path)) as f:
        return json.load(f)


def validator(schema_path):
    sweep = load("configs/sweep.schema.json")
    results = load("results/results.schema.json")
    schema = load(schema_path)
    jsonschema.Draft202012Validator.check_schema(schema)
    store = {sweep["$id"]: sweep, results["$id"]: results}
    resolver = jsonschema.RefResolver.from_schema(schema, store=store)
    return jsonschema.Draft202012Validator(schema, resolver=resolver)


def example_configs():
    return sorted(p for p in glob.glob(os.path.join(SOURCE, "configs", "*.json")) if not p.endswith(".schema.json")
                  and os.path.basename(p) != "profile-categories.json")  # the profile's category table, not a sweep


@pytest.mark.parametrize("path", example_configs(), ids=os.path.basename)
def test_example_configs_validate(path):
    with open(path) as f:
        validator("configs/sweep.schema.json").validate(json.load(f))


BAD = [
    ({"traffic": [{}, {"streams": -3}]}, "/traffic/1/streams: expected a positive integer"),
    ({"traffic": [{"stream": 2}]}, "/traffic/0/stream: unknown key"),
    ({"mtu": [70000]}, "/mtu/0: expected an MTU in bytes from 68 to 65535, got 70000"),
    ({"apply_to": "remote"}, "/apply_to: expected one of"),
    ({"offloads": [{"name": "a", "features": {"tso": "maybe"}}]}, "/offloads/0/features/tso: expected"),
    ({"repetitions": 0}, "/repetitions: expected a positive integer, got 0"),
]


@pytest.mark.parametrize("patch,message", BAD, ids=[m.split(":")[0] for _, m in BAD])
def test_bad_configs_fail_the_schema_and_the_cli_alike(tmp_path, nicmatrix_bin, patch, message):
    config = load("configs/offload-mtu.json")
    config.update(copy.deepcopy(patch))
    with pytest.raises(jsonschema.ValidationError):
        validator("configs/sweep.schema.json").validate(config)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(config))
    res = run(nicmatrix_bin, "sweep", str(path), "--dry-run", check=False)
    assert res.returncode == 2
    assert f"{path}: {message}" in res.stderr


def example_results():
    return sorted(p for p in glob.glob(os.path.join(SOURCE, "results", "*.json")) if not p.endswith(".schema.json")
                  and os.path.basename(p) != "profile-categories.json")  # the profile's category table, not a sweep


@pytest.mark.parametrize("path", example_results(), ids=os.path.basename)
def test_lab_results_in_results_validate(path, nicmatrix_bin):
    with open(path) as f:
        results = json.load(f)
    validator("results/results.schema.json").validate(results)
    if results["hosts"]["local"].get("virtualization", "").startswith("qemu"):
        # The VM lab's NIC comparisons: a setting a driver cannot take is infeasible, with the kernel's reason;
        # one jumbo cell of the vmxnet3's file was judged a blackhole by the preflight of its time (README).
        assert all(c["status"] in ("ok", "infeasible", "path_mtu_blackhole") for c in results["cells"])
        assert all(c["error"] for c in results["cells"] if c["status"] != "ok")
        assert any(c["status"] == "ok" for c in results["cells"])
    else:
        assert all(c["status"] == "ok" for c in results["cells"])
    # The C++ reader takes it too, and renders every cell: the matrix has a header and a line per ordinary
    # cell, each rfc2544 cell its own table ("# key (status)", a header, a line per frame size).
    lines = [line for line in run(nicmatrix_bin, "report", path, "--format", "csv").stdout.splitlines() if line]
    frames = [c for c in results["cells"] if c.get("rfc2544")]
    ordinary = len(results["cells"]) - len(frames)
    assert len(lines) == (1 + ordinary if ordinary else 0) + sum(2 + len(c["rfc2544"]["rows"]) for c in frames)
    for c in frames:
        assert f"# {c['key']} ({c['status']})" in lines


def test_the_example_results_file_validates():
    results = load("tests/fixtures/results/fake-lab.json")
    validator("results/results.schema.json").validate(results)
    statuses = {c["status"] for c in results["cells"]}
    assert {"ok", "duplicate", "infeasible", "path_mtu_blackhole", "failed"} <= statuses


def test_results_schema_rejects_what_readers_could_not_use():
    v = validator("results/results.schema.json")
    results = load("tests/fixtures/results/fake-lab.json")
    broken = copy.deepcopy(results)
    broken["schema"] = "nicmatrix/results/v2"
    assert not v.is_valid(broken)
    broken = copy.deepcopy(results)
    del broken["cells"][0]["runs"][0]["throughput_bps"]
    assert not v.is_valid(broken)
    broken = copy.deepcopy(results)
    broken["cells"][0]["status"] = "great"
    assert not v.is_valid(broken)


def test_report_and_compare_read_the_example(nicmatrix_bin):
    path = os.path.join(SOURCE, "tests/fixtures/results/fake-lab.json")
    table = run(nicmatrix_bin, "report", path).stdout
    assert "original / tcp-p1" in table
    assert "path_mtu_blackhole" in table
    csv = run(nicmatrix_bin, "report", path, "--format", "csv", "--metric", "packets_per_s").stdout.splitlines()
    assert csv[0].startswith("profile,traffic,mtu,key,status,packets_per_s_median")
    assert len(csv) == 1 + 16
    same = run(nicmatrix_bin, "compare", path, path, "--format", "csv").stdout.splitlines()
    ok_rows = [line for line in same[1:] if line.split(",")[5] not in ("", "duplicate", "infeasible", "failed", "path_mtu_blackhole")]
    assert ok_rows and all(line.split(",")[7] == "1.0000" for line in ok_rows)


def test_committed_schemas_hold_what_the_field_tables_give(nicmatrix_bin):
    # `nicmatrix schema spec|traffic` generates the test spec's fragments from its field table, and
    # `nicmatrix schema results` the results file's records from their field lists; the script splices them
    # into the committed files, and here changes nothing.
    out = run("/usr/bin/python3", os.path.join(SOURCE, "scripts", "update_schemas.py"), nicmatrix_bin, "--check", check=False)
    assert out.returncode == 0, out.stderr


def sweep_table_edges(nicmatrix_bin):
    """(name, config, accepted) for the edges of every key of the sweep config's field tables
    (`nicmatrix schema sweep`): at its minimum and maximum it is taken, just past them refused."""
    table = json.loads(run(nicmatrix_bin, "schema", "sweep").stdout)
    # Where each record sits in a config, and what its object needs besides the key under test
    # (min_repetitions <= max_repetitions: each at its widest lets the other reach its edges).
    places = {"config": None, "precision": {"ci_pct": 5, "min_repetitions": 1, "max_repetitions": 1000},
              "interference": {}}
    for record, base in places.items():
        for key, s in table[record]["properties"].items():
            if s["type"] == "boolean":
                values = [(True, True), (False, True), (1, False)]
            else:
                step = 1 if s["type"] == "integer" else 0.5
                values = [(s["maximum"], True), (s["maximum"] + step, False)]
                if "exclusiveMinimum" in s:
                    values += [(s["exclusiveMinimum"], False), (s["exclusiveMinimum"] + step, True)]
                else:
                    values += [(s["minimum"], True), (s["minimum"] - step, False)]
            for value, accepted in values:
                config = load("configs/offload-mtu.json")
                if base is None:
                    config[key] = value
                else:
                    config[record] = dict(base, **{key: value})
                yield f"{record}.{key}={value}", config, accepted


def test_the_schema_and_the_parser_agree_on_the_edges_of_the_sweep_tables(tmp_path, nicmatrix_bin):
    # The committed schema (checked by a full validator) and the C++ parser take and refuse the same
    # values at every edge of every table key.
    v = validator("configs/sweep.schema.json")
    path = tmp_path / "edge.json"
    cases = list(sweep_table_edges(nicmatrix_bin))
    assert len(cases) >= 40
    for name, config, accepted in cases:
        path.write_text(json.dumps(config))
        res = run(nicmatrix_bin, "sweep", str(path), "--dry-run", check=False)
        assert v.is_valid(config) == accepted, name
        assert (res.returncode == 0) == accepted, f"{name}: {res.stderr}"
        if not accepted:
            assert res.returncode == 2, f"{name}: {res.stderr}"
            key = name.split("=")[0].replace("config.", "").replace(".", "/")
            assert f"{path}: /{key}: expected " in res.stderr, name


def test_the_results_check_names_each_difference_and_the_splice_keeps_descriptions(nicmatrix_bin):
    # `nicmatrix schema results` generates the defs of the records a results file carries from their field
    # lists; spliced into a committed schema that lost a key, gained one, and got a type wrong, it names
    # each, puts the generated keywords back and keeps the hand-written description.
    import importlib.util
    spec = importlib.util.spec_from_file_location("update_schemas", os.path.join(SOURCE, "scripts", "update_schemas.py"))
    update = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(update)
    generated = update.generated(nicmatrix_bin, "results")
    assert {"host", "interface", "summary", "tool", "napi", "rfc2544"} <= set(generated["$defs"])
    _, problems = update.splice_results_defs(load("results/results.schema.json"), generated)
    assert problems == []

    broken = load("results/results.schema.json")
    defs = broken["$defs"]
    del defs["tool"]["properties"]["version"]
    defs["summary"]["properties"]["median"]["type"] = "string"
    defs["summary"]["properties"]["median"]["description"] = "the middle value"
    defs["napi"]["properties"]["bogus"] = {"type": "integer"}
    fixed, problems = update.splice_results_defs(broken, generated)
    assert "$defs/tool/version: in the field list, not in the schema" in problems
    assert '$defs/summary/median: type "string", the field list gives "number"' in problems
    assert "$defs/napi/bogus: in the schema, not in the field list" in problems
    assert len(problems) == 3
    assert fixed["$defs"]["tool"]["properties"]["version"] == {"type": "string"}
    assert fixed["$defs"]["summary"]["properties"]["median"] == {"type": "number", "description": "the middle value"}
    assert "bogus" not in fixed["$defs"]["napi"]["properties"]
    # A key a record's codec writes by hand (json_fields_and_more) is left as the file describes it.
    assert generated["$defs"]["iperf3_peer"]["properties"]["kind"] == {}
    assert fixed["$defs"]["iperf3_peer"]["properties"]["kind"] == load("results/results.schema.json")["$defs"]["iperf3_peer"]["properties"]["kind"]
