"""The sweep request and the test spec as the CLI, the JSON codec and Python see them: a flag of `nicmatrix
sweep` or `nicmatrix run` that Python's sweep()/run() does not take fails here, naming it. The only
exceptions are the flags listed below with why (printing, or another spelling of a keyword)."""
import inspect
import json
import re

import nicmatrix as nm
import pytest

from conftest import NM_BINARY, run

# CLI flag -> Python keyword where the names differ; None: the flag is about printing, not the sweep.
SWEEP = {"--lab": "lab", "--iface": "iface", "--peer": "peer", "--port": "port", "--peer-iface": "peer_iface",
         "--key-file": "key_file", "--lab-name": "lab_name", "--lab-from": "lab_from", "--topology": "topology", "--output": "output",
         "--resume": "resume", "--journal": "journal", "--precision": "precision", "--time-budget": "time_budget",
         "--seed": "seed", "--ipv4": "ip_version", "--ipv6": "ip_version", "--profile-categories": "profile_categories",
         "--peer-kind": "peer_kind",
         "--dry-run": None, "--quiet": None, "--metric": None, "--json-stream": None, "--json-stream-queue": None}
# `run`'s flags written by hand -> the TestSpec JSON key Python's run() takes (None: printing, or another
# command's mode). The flags the field table declares map to their field's key (`nicmatrix schema flags`).
RUN_BY_HAND = {"--reverse": "direction", "--bidir": "direction", "--udp": "protocol", "--affinity": "affinity",
               "--rr": "test", "--crr": "connect_per_transaction", "--rr-size": "request_size", "--dscp": "dscp",
               "--key-file": "key_file", "--peer-kind": "peer_kind",
               "--json": None, "--json-stream": None,
               "--rfc2544": None, "--frames": None, "--trial": None, "--resolution": None, "--max-trials": None,
               "--loss-tolerance": None, "--line-rate": None}


def run_flags():
    rows = json.loads(run(NM_BINARY, "schema", "flags").stdout)["run"]
    table = {name: row["key"] for row in rows for name in row["flags"] if name.startswith("--")}
    assert not set(table) & set(RUN_BY_HAND), "a flag of the field table is listed here as written by hand"
    return {**table, **RUN_BY_HAND}


def long_flags(command):
    text = run(NM_BINARY, command, "--help").stdout
    return sorted(set(re.findall(r"(--[a-z][a-z0-9-]*)", text)) - {"--help"})


@pytest.mark.parametrize("command,table,function", [("sweep", lambda: SWEEP, nm.sweep), ("run", run_flags, nm.run)],
                         ids=["sweep", "run"])
def test_every_cli_flag_has_a_python_keyword(command, table, function):
    table = table()
    flags = long_flags(command)
    unknown = [f for f in flags if f not in table]
    assert not unknown, f"`nicmatrix {command}` flags this test does not know (add them to Python and to the table here): {unknown}"
    stale = [f for f in table if f not in flags]
    assert not stale, f"flags listed here that `nicmatrix {command} --help` no longer shows: {stale}"
    keywords = set(inspect.signature(function).parameters)
    missing = sorted({table[f] for f in flags if table[f] is not None} - keywords)
    assert not missing, f"nicmatrix.{command}() lacks keywords for CLI flags: {missing}"


def test_run_keywords_are_the_codecs_test_spec_keys():
    # Python's run() builds a TestSpec through the C++ JSON codec: each keyword but the key file must be a key
    # the codec reads and writes back for a run's "spec". The values are the C++ writer's defaults (what it
    # writes for a spec that sets nothing but the host: a field added to the table is there with no change
    # here), and a value for the keys it writes only when set.
    from nicmatrix import _nicmatrix
    written = _nicmatrix.test_spec({"host": "198.18.0.2"})
    assert {"streams", "duration_s", "rx_spin_us"} <= set(written)   # the defaults are a whole spec
    only_when_set = {"profile_categories": "categories.json", "affinity": {"client": [0], "server": [1]}}
    params = set(inspect.signature(nm.run).parameters) - {"key_file", "peer_kind"}   # how to run, not the test
    unknown = []
    for key in sorted(params):
        value = only_when_set[key] if key in only_when_set else written.get(key)
        back = _nicmatrix.test_spec({"host": "198.18.0.2", key: value})
        if key not in back or back[key] != value:
            unknown.append(key)
    assert not unknown, f"run() keywords the TestSpec codec does not read back: {unknown}"
    # And the check can fail: a keyword the codec has no field for does not come back.
    assert "no_such_field" not in _nicmatrix.test_spec({"host": "198.18.0.2", "no_such_field": 1})
