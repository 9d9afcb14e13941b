"""A sweep of request/response tests on the real lab: rr cells recorded, and the rr_* metrics in the
DataFrame, `report --metric`, `compare --metric` and the plots, checked against the results file itself."""
import json
import os

import nicmatrix as nm
from conftest import NM_BINARY, SOURCE, needs_root, run, run_script, serving, unique_name

pytestmark = needs_root


def test_rr_sweep_metrics_reach_dataframe_report_compare_and_plot(tmp_path):
    lab = unique_name("nmpyrr")
    config = {
        "name": "py-rr",
        "offloads": [{"name": "gro-off", "features": {"gro": "off"}}],
        "mtu": [1500],
        "traffic": [{"test": "rr", "protocol": "tcp"},
                    {"test": "rr", "protocol": "udp", "request_size": 64, "response_size": 512},
                    {"test": "rr", "protocol": "tcp", "connect_per_transaction": True, "dscp": "EF"}],
        "duration_s": 0.7, "omit_s": 0, "repetitions": 1, "cooldown_s": 0,
    }
    out = tmp_path / "rr.json"
    res = nm.sweep(config, lab=True, lab_name=lab, output=out, journal=str(tmp_path / "journal.json"))
    doc = json.loads(out.read_text())
    keys = [c["key"] for c in doc["cells"]]
    assert keys == ["gro-off/mtu1500/tcp-rr-1x1", "gro-off/mtu1500/udp-rr-64x512", "gro-off/mtu1500/tcp-crr-1x1-dscp46"]
    for cell in doc["cells"]:
        assert cell["status"] == "ok", cell.get("error")
        rr = cell["runs"][0]["rr"]
        assert rr["transactions"] > 100
        assert rr["responder_transactions"] == rr["transactions"] + rr["lost"]
        lat = rr["latency_us"]
        assert 0 < lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["p999"] <= lat["max"]
        assert cell["summary"]["rr_p99_us"]["median"] == lat["p99"]
    assert doc["cells"][2]["runs"][0]["socket"]["dscp"] == 46

    df = res.to_dataframe().set_index("key")
    for cell in doc["cells"]:
        run_ = cell["runs"][0]
        assert df.loc[cell["key"], "rr_p99_us"] == run_["rr"]["latency_us"]["p99"]
        assert df.loc[cell["key"], "rr_transactions_per_s"] == run_["rr"]["transactions_per_s"]
    assert "rr_p999_us" in nm.known_metrics()

    csv = run(NM_BINARY, "report", str(out), "--metric", "rr_p99_us", "--format", "csv").stdout.splitlines()
    assert csv[0].startswith("profile,traffic,mtu,key,status,rr_p99_us_median")
    by_key = {line.split(",")[3]: float(line.split(",")[5]) for line in csv[1:]}
    assert by_key == {c["key"]: c["summary"]["rr_p99_us"]["median"] for c in doc["cells"]}
    table = run(NM_BINARY, "report", str(out), "--metric", "rr_transactions_per_s").stdout
    assert "trans/s" in table
    # Every cell is a request/response test: transactions/s is what report and compare show unasked.
    assert run(NM_BINARY, "report", str(out)).stdout == table
    assert "median rr_transactions_per_s" in table
    assert res.default_metric() == "rr_transactions_per_s" and res.report() == table   # Python says the same
    assert nm.compare(res, res).attrs["metric"] == "rr_transactions_per_s"
    assert nm.load(os.path.join(SOURCE, "results", "offload-mtu-lab.json")).default_metric() == "throughput_bps"
    assert (run(NM_BINARY, "compare", str(out), str(out), "--format", "json").stdout
            == run(NM_BINARY, "compare", str(out), str(out), "--metric", "rr_transactions_per_s", "--format", "json").stdout)

    cmp = json.loads(run(NM_BINARY, "compare", str(out), str(out), "--metric", "rr_p50_us", "--format", "json").stdout)
    rows = cmp["rows"] if isinstance(cmp, dict) else cmp
    assert len(rows) == 3
    png = tmp_path / "rr.png"
    run(NM_BINARY, "plot", str(out), "-o", str(png), "--metric", "rr_p99_us")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


RR_SCRIPT = """
import json
import nicmatrix as nm
print(json.dumps(nm.run(host="198.18.0.2", duration_s=0.7, test="rr", request_size=32, response_size=256, burst=2,
                        congestion="reno", nodelay=True)))
"""


def test_run_rr_from_python(tmp_path, cli_lab):
    ns_a, ns_b = f"{cli_lab}-a", f"{cli_lab}-b"
    with serving(ns_b, "--once", "--json") as server:
        out = run_script(ns_a, tmp_path / "rr.py", RR_SCRIPT)
        served = json.loads(server.stdout.readline())   # the server's own line for the test
        server.wait(timeout=10)
    result = json.loads(out.stdout)
    assert result["status"] == "ok"
    assert result["spec"]["request_size"] == 32 and result["spec"]["burst"] == 2
    assert result["rr"]["transactions"] > 100
    # The server's report, read from its own output, counted the same transactions.
    assert served["report"]["rr"]["transactions"] == result["rr"]["responder_transactions"] == result["rr"]["transactions"]
    assert result["socket"]["congestion"] == "reno" and result["socket"]["nodelay"] is True


def test_sweep_of_rr_cells_prints_transactions_and_p99(tmp_path):
    # `nicmatrix sweep` itself: the progress line of an rr cell gives transactions/s and the p99, and the
    # table at the end is report's default, transactions/s, not a byte rate of 1-byte messages. A
    # precision without a metric judges the rr cell by its transactions/s: with 3 runs at 75% the interval
    # of the median is [min, max] of the runs, computed here from the runs' own figures.
    lab = unique_name("nmpyrs")
    config = tmp_path / "rr-cli.json"
    config.write_text(json.dumps({"name": "rr-cli", "offloads": [{"name": "as-is", "features": {}}], "mtu": [1500],
                                  "traffic": [{"test": "rr", "protocol": "tcp"}],
                                  "duration_s": 0.7, "omit_s": 0, "cooldown_s": 0,
                                  "precision": {"ci_pct": 20, "confidence": 75, "min_repetitions": 3, "max_repetitions": 3}}))
    out = tmp_path / "rr-cli-out.json"
    res = run(NM_BINARY, "sweep", str(config), "--lab", "--lab-name", lab, "-o", str(out), "--journal",
              str(tmp_path / "journal.json"), timeout=60)
    line = next(l for l in res.stdout.splitlines() if "] as-is/mtu1500/tcp-rr-1x1" in l)
    assert " ... ok " in line and " trans/s " in line and " p99 " in line and "bit/s" not in line, line
    report = run(NM_BINARY, "report", str(out)).stdout
    assert "median rr_transactions_per_s" in report
    assert report in res.stdout
    doc = json.loads(out.read_text())
    assert "metric" not in doc["run"]["config"]["precision"]
    cell = doc["cells"][0]
    rates = sorted(r["rr"]["transactions_per_s"] for r in cell["runs"])
    assert len(rates) == 3
    median = rates[1]
    assert cell["precision_met"] == (rates[0] >= median * 0.8 and rates[2] <= median * 1.2), rates
    assert "interval of the median rr_transactions_per_s within ±20%" in report
    assert lab not in run("ip", "netns", "list").stdout
