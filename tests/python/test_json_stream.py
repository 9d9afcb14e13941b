"""`nicmatrix sweep --json-stream` on a real lab: every line validates against results/stream.schema.json
(with the results schema for its runs and cells), and the events arrive while the sweep runs."""
import datetime
import json
import os
import subprocess
import time

import jsonschema
import pytest

from conftest import NM_BINARY, SOURCE, needs_root, serving, unique_name

CONFIG = {
    "name": "stream", "offloads": [{"name": "gro-on", "features": {"gro": "on"}}, {"name": "gro-off", "features": {"gro": "off"}}],
    "mtu": [1500], "traffic": [{"name": "tcp", "streams": 1}], "duration_s": 1, "omit_s": 0.2,
    "repetitions": 1, "order": "sequential", "interference": {"max_wait_s": 0},
}


def validator():
    with open(os.path.join(SOURCE, "results", "stream.schema.json")) as f:
        stream = json.load(f)
    with open(os.path.join(SOURCE, "results", "results.schema.json")) as f:
        results = json.load(f)
    with open(os.path.join(SOURCE, "configs", "sweep.schema.json")) as f:
        config = json.load(f)
    resolver = jsonschema.RefResolver.from_schema(stream, store={results["$id"]: results, config["$id"]: config})
    return jsonschema.Draft202012Validator(stream, resolver=resolver)


def test_the_schema_refuses_a_line_that_is_not_an_event():
    v = validator()
    assert not v.is_valid({"event": "start", "time": "2026-12-01T12:00:00.000Z"})   # start without its fields
    assert not v.is_valid({"event": "progress", "time": "2026-12-01T12:00:00.000Z"})   # progress without its counts
    assert not v.is_valid({"event": "lap", "time": "2026-12-01T12:00:00.000Z"})
    assert v.is_valid({"event": "note", "time": "2026-12-01T12:00:00.000Z", "text": "x"})


@needs_root
def test_sweep_json_stream_validates_line_by_line_and_arrives_while_the_sweep_runs(tmp_path):
    cfg = tmp_path / "stream.json"
    cfg.write_text(json.dumps(CONFIG))
    v = validator()
    proc = subprocess.Popen([NM_BINARY, "sweep", str(cfg), "--lab", "--lab-name", unique_name("nmst"), "--json-stream",
                             "-o", str(tmp_path / "r.json"), "--journal", str(tmp_path / "j.json")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    events = []
    running_at_first_cell = None
    try:
        deadline = time.monotonic() + 120
        for line in proc.stdout:   # read as the lines come, not after the process ends
            assert time.monotonic() < deadline, "the sweep took too long"
            event = json.loads(line)
            errors = sorted(v.iter_errors(event), key=lambda e: e.path)
            assert not errors, f"{line}: {errors[0].message}"
            if event["event"] == "cell" and running_at_first_cell is None:
                running_at_first_cell = proc.poll() is None
            events.append(event)
        assert proc.wait(timeout=60) == 0, proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    names = [e["event"] for e in events]
    assert names[0] == "start" and names[-1] == "end"
    assert events[0]["cells"] == 2
    # The first cell's event came while the sweep was still running (it had the second cell to measure).
    assert running_at_first_cell is True
    # Per cell, in order: cell_start, its live progress while the repetition runs, the run's intervals,
    # the repetition, the cell.
    per_cell = [n for n in names if n != "note"][1:-1]
    assert per_cell.count("cell_start") == 2 and per_cell.count("cell") == 2 and per_cell.count("repetition") == 2
    first = per_cell[: per_cell.index("cell") + 1]
    assert first[0] == "cell_start" and first[-2:] == ["repetition", "cell"] and "interval" in first
    assert "progress" in first and first.index("progress") < first.index("interval")
    progress = [e for e in events if e["event"] == "progress"]
    assert {(p["key"], p["repetition"]) for p in progress} == {(c["key"], 1) for c in saved_cells(tmp_path)}
    with open(tmp_path / "r.json") as f:
        saved = json.load(f)
    cells = [e for e in events if e["event"] == "cell"]
    # What was streamed is what the file holds.
    assert [c["result"]["key"] for c in cells] == [c["key"] for c in saved["cells"]]
    reps = [e for e in events if e["event"] == "repetition"]
    assert [r["run"]["bytes"] for r in reps] == [c["runs"][0]["bytes"] for c in saved["cells"]]
    intervals = [e for e in events if e["event"] == "interval" and e["key"] == reps[0]["key"]]
    assert len(intervals) == len(saved["cells"][0]["runs"][0]["intervals"]) > 0
    assert events[-1] == {**events[-1], "event": "end", "interrupted": False, "cells": 2}
    # The build's source commit, as git describes the source tree it was built from (run from a git
    # checkout: the tests are, as README's test command runs them), in the file and in --version.
    commit = subprocess.run(["git", "-C", SOURCE, "describe", "--always", "--dirty", "--abbrev=12", "--match=NO-TAGS-WANTED"],
                            capture_output=True, text=True, timeout=30)
    if commit.returncode == 0:
        assert saved["tool"]["commit"] == commit.stdout.strip()
        version = subprocess.run([NM_BINARY, "--version"], capture_output=True, text=True, timeout=30).stdout
        assert version.strip() == f"nicmatrix {saved['tool']['version']} ({commit.stdout.strip()})"
    # The lab's file carries both ends' metadata, and compare warns against a file whose kernel differs.
    for end in ("local", "remote"):
        host = saved["hosts"][end]
        assert host["kernel"] == os.uname().release
        assert host["sysctls"]["net.ipv4.tcp_congestion_control"] and host["kernel_cmdline"] and host["cpu_layout"]["cpus"]
        assert host["interface"]["system"]["qdisc"]["kind"] and host["interface"]["driver_version"]
        assert host["tool"] == saved["tool"]   # the lab's two ends: this build
    other = dict(saved, hosts=dict(saved["hosts"], local=dict(saved["hosts"]["local"], kernel="6.1.0-13-amd64")))
    (tmp_path / "other.json").write_text(json.dumps(other))
    cmp = subprocess.run([NM_BINARY, "compare", str(tmp_path / "r.json"), str(tmp_path / "other.json")],
                         capture_output=True, text=True, timeout=60)
    assert cmp.returncode == 0, cmp.stderr
    assert f"local kernel: {os.uname().release} vs 6.1.0-13-amd64" in cmp.stdout + cmp.stderr
    same = subprocess.run([NM_BINARY, "compare", str(tmp_path / "r.json"), str(tmp_path / "r.json")],
                          capture_output=True, text=True, timeout=60)
    assert "hosts differ" not in same.stdout + same.stderr


def saved_cells(tmp_path):
    with open(tmp_path / "r.json") as f:
        return json.load(f)["cells"]


def stamp(event):
    return datetime.datetime.strptime(event["time"], "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()


@needs_root
def test_run_json_stream_validates_and_its_run_is_what_crossed_the_wire(cli_lab):
    ns_a, ns_b = f"{cli_lab}-a", f"{cli_lab}-b"
    with serving(ns_b, "--once") as server:
        out = subprocess.run(["ip", "netns", "exec", ns_a, NM_BINARY, "run", "-c", "2001:2::2", "-t", "3", "-i", "0.5", "--json-stream"],
                             capture_output=True, text=True, timeout=30)
        server.wait(timeout=10)
    assert out.returncode == 0, out.stderr
    v = validator()
    events = [json.loads(line) for line in out.stdout.splitlines()]
    for e in events:
        errors = list(v.iter_errors(e))
        assert not errors, f"{e}: {errors[0].message}"
    names = [e["event"] for e in events]
    assert names[0] == "run_start" and names[-2:] == ["run", "run_end"]
    run = events[-2]["run"]
    assert names.count("interval") == len(run["intervals"]) > 0
    # Live progress: every half second of the 3-s window, written while the test ran (the first long before
    # the result, by the times the lines were stamped with), numbered in order; what the client's senders
    # wrote in them adds up to what the run measured (the receiver's count of the same window).
    progress = [e for e in events if e["event"] == "progress"]
    assert len(progress) >= 5 and [p["index"] for p in progress] == list(range(len(progress)))
    assert names.index("progress") < names.index("interval")
    assert stamp(progress[0]) <= stamp(events[-2]) - 1.0
    assert all(p["received_bytes"] == 0 and p["end_s"] > p["start_s"] for p in progress)
    assert all(abs(p["sent_bps"] - 8 * p["sent_bytes"] / (p["end_s"] - p["start_s"])) <= 1e-6 * p["sent_bps"] + 1e-9 for p in progress)
    assert abs(sum(p["sent_bytes"] for p in progress) - run["bytes"]) <= 0.1 * run["bytes"]
    assert run["spec"]["host"] == "2001:2::2" and run["status"] == "ok"
    assert events[-1]["status"] == "ok"
