"""Results.frames(): the RFC 2544 frame-size tables as a DataFrame, checked against the results file itself
(read here with the json module) and against the table `nicmatrix report --format csv` prints; once on the
committed example and once on a frame-size sweep run here on a real lab."""
import csv
import io
import json
import math
import os

import nicmatrix as nm
from conftest import NM_BINARY, SOURCE, needs_root, run, unique_name

EXAMPLE_FRAMES = os.path.join(SOURCE, "results", "example-bridge-frames-lab.json")


def cli_tables(path):
    """The CSV `nicmatrix report` prints for a file of rfc2544 cells: {key: [row dict, ...]}."""
    out = run(NM_BINARY, "report", path, "--format", "csv").stdout
    tables = {}
    for block in out.split("\n\n"):
        lines = [line for line in block.splitlines() if line]
        if not lines or not lines[0].startswith("# "):
            continue
        key = lines[0][2:].rsplit(" (", 1)[0]
        tables[key] = list(csv.DictReader(io.StringIO("\n".join(lines[1:]))))
    return tables


def check_frames_against_file_and_cli(path):
    with open(path) as f:
        doc = json.load(f)
    frames = nm.load(path).frames()
    cells = [c for c in doc["cells"] if c["params"]["test"]["test"] == "rfc2544"]
    assert len(frames) == sum(len(c["rfc2544"]["rows"]) for c in cells)
    assert list(dict.fromkeys(frames["key"])) == [c["key"] for c in cells]
    tables = cli_tables(path)
    rows = iter(frames.to_dict("records"))
    for cell in cells:
        table = cell["rfc2544"]
        assert [r["frame_size"] for r in tables[cell["key"]]] == [r["frame"] for r in table["rows"]]
        for frame_row, printed in zip(table["rows"], tables[cell["key"]]):
            row = next(rows)
            assert row["key"] == cell["key"]
            assert row["profile"] == cell["params"]["offloads"]
            assert row["line_rate_bps"] == table["line_rate_bps"]
            assert row["frame"] == frame_row["frame"]
            assert row["throughput_fps"] == frame_row["throughput_fps"]
            assert row["line_rate_pct"] == frame_row["line_rate_pct"]
            assert row["loss_pct"] == frame_row["loss_pct"]
            assert row["trials"] == frame_row["trials"]
            assert row["generator_limited"] == frame_row["generator_limited"]
            assert row["confirmed"] == frame_row["confirmed"]
            assert row["confirmation_loss_pct"] == frame_row["confirmation"]["loss_pct"]
            assert row["cpu_sender_pct"] == frame_row["cpu"]["sender_pct"]
            assert row["softirq_pct"] == frame_row["cpu"]["softirq_pct"]
            # The report prints the same figures, rounded.
            assert float(printed["frames_per_s"]) == round(row["throughput_fps"])
            assert float(printed["mbit_per_s"]) == round(row["layer2_bps"] / 1e6, 2)
            assert printed["trials"].split("+")[0] == str(row["trials"])
    return frames


def test_frames_of_the_example_match_the_file_and_the_report():
    frames = check_frames_against_file_and_cli(EXAMPLE_FRAMES)
    assert set(frames["profile"]) == {"dut-offloads-on", "dut-offloads-off"}
    assert list(frames["frame"][:8]) == ["64", "128", "256", "512", "1024", "1280", "1518", "imix"]
    assert frames["throughput_fps"].dtype.kind == "f" and frames["trials"].dtype.kind in "if"


def test_a_file_without_frame_tables_has_none():
    frames = nm.load(os.path.join(SOURCE, "results", "example-gro-lab.json")).frames()
    assert len(frames) == 0
    assert {"key", "frame", "throughput_fps", "line_rate_pct", "generator_limited"} <= set(frames.columns)


@needs_root
def test_frames_of_a_sweep_on_the_lab(tmp_path):
    lab = unique_name("nmpyfr")
    config = {
        "name": "py-frames",
        "offloads": [{"name": "as-is", "features": {}}],
        "mtu": [1500],
        "traffic": [{"name": "frames", "test": "rfc2544", "frames": [64, 1518], "trial_s": 0.3,
                     "resolution_pct": 20, "max_trials": 3, "line_rate_bps": 2e8}],
        "repetitions": 1, "cooldown_s": 0,
    }
    out = tmp_path / "frames.json"
    res = nm.sweep(config, lab=True, lab_name=lab, output=out, journal=str(tmp_path / "journal.json"))
    frames = check_frames_against_file_and_cli(str(out))
    assert list(frames["frame"]) == ["64", "1518"]
    assert (frames["line_rate_source"] == "configured").all()
    # 200 Mbit/s of line rate is 297,619 64-byte frames/s and 16,254 of 1518 bytes: what was found is at most that.
    for frame, line_fps in (("64", 2e8 / ((64 + 20) * 8)), ("1518", 2e8 / ((1518 + 20) * 8))):
        row = frames[frames["frame"] == frame].iloc[0]
        assert math.isclose(row["line_rate_fps"], line_fps, rel_tol=1e-9)
        assert row["found"] and 0 < row["throughput_fps"] <= line_fps * 1.001
    assert len(res.frames()) == 2
    assert lab not in run("ip", "netns", "list").stdout
