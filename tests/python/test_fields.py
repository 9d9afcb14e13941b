"""The sweep request and the test spec as the CLI, the JSON codec and Python see them: a flag of `nicmatrix
sweep` or `nicmatrix run` that Python's sweep()/run() does not take fails here, naming it. The only
exceptions are the flags listed below with why (printing, or another spelling of a keyword)."""
import inspect
import json
import re

import nicmatrix as nm
import pytest

from conftest import FAKE_LAB, NM_BINARY, run

# CLI flag -> Python keyword where the names differ; None: the flag is about printing, not the sweep.
SWEEP = {"--lab": "lab", "--iface": "iface", "--peer": "peer", "--port": "port", "--peer-iface": "peer_iface",
         "--key-file": "key_file", "--lab-name": "lab_name", "--topology": "topology", "--output": "output",
         "--resume": "resume", "--journal": "journal", "--precision": "precision", "--time-budget": "time_budget",
         "--seed": "seed", "--ipv4": "ip_version", "--ipv6": "ip_version",
         "--dry-run": None, "--quiet": None, "--metric": None, "--json-stream": None}
# `run`'s flags -> the TestSpec JSON key Python's run() takes (None: printing, or another command's mode).
RUN = {"--client": "host", "--port": "port", "--bind": "bind", "--parallel": "streams", "--threads": "threads",
       "--length": "write_size", "--window": "window", "--time": "duration_s", "--bytes": "bytes", "--reverse": "direction",
       "--bidir": "direction", "--udp": "protocol", "--bitrate": "rate_bps", "--pps": "rate_pps", "--gso": "udp_gso",
       "--gro": "udp_gro", "--omit": "omit_s", "--interval": "interval_s", "--iface": "iface", "--stall-timeout": "stall_timeout_s",
       "--json": None, "--json-stream": None,
       # Not yet in Python: the server's proof of the key is checked in cli/traffic_commands.cpp, not in the engine.
       "--key-file": None,
       "--rfc2544": None, "--frames": None, "--trial": None, "--resolution": None, "--max-trials": None,
       "--loss-tolerance": None, "--line-rate": None}


def long_flags(command):
    text = run(NM_BINARY, command, "--help").stdout
    return sorted(set(re.findall(r"(--[a-z][a-z0-9-]*)", text)) - {"--help"})


@pytest.mark.parametrize("command,table,function", [("sweep", SWEEP, nm.sweep), ("run", RUN, nm.run)], ids=["sweep", "run"])
def test_every_cli_flag_has_a_python_keyword(command, table, function):
    flags = long_flags(command)
    unknown = [f for f in flags if f not in table]
    assert not unknown, f"`nicmatrix {command}` flags this test does not know (add them to Python and to the table here): {unknown}"
    stale = [f for f in table if f not in flags]
    assert not stale, f"flags listed here that `nicmatrix {command} --help` no longer shows: {stale}"
    keywords = set(inspect.signature(function).parameters)
    missing = sorted({table[f] for f in flags if table[f] is not None} - keywords)
    assert not missing, f"nicmatrix.{command}() lacks keywords for CLI flags: {missing}"


def test_run_keywords_are_the_codecs_test_spec_keys():
    # Python's run() builds a TestSpec through the JSON codec: each keyword must be a key the codec writes
    # for a run's "spec" (the fixture is the C++ writer's output, checked by test_schemas.py).
    with open(FAKE_LAB) as f:
        spec_keys = set(json.load(f)["cells"][0]["runs"][0]["spec"])
    params = set(inspect.signature(nm.run).parameters)
    assert params - spec_keys == set(), f"run() keywords the TestSpec codec does not know: {sorted(params - spec_keys)}"
