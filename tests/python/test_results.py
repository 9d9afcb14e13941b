"""nicmatrix.load / to_dataframe / summary / compare, checked against the results files themselves (read
here with the json module, independently of the C++ reader) and against `nicmatrix compare`."""
import copy
import csv
import io
import json
import math
import os

import pytest

import nicmatrix as nm
from conftest import EXAMPLE_A, EXAMPLE_B, EXAMPLE_PROFILE, EXAMPLE_RR, FAKE_LAB, SOURCE, run

FILES = [FAKE_LAB, EXAMPLE_A, EXAMPLE_B]


def read_json(path):
    with open(path) as f:
        return json.load(f)


def same(a, b):
    if b is None:   # a JSON null is NaN in a DataFrame
        return a is None or (isinstance(a, float) and math.isnan(a))
    if isinstance(b, float) or isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) if (isinstance(a, float) and math.isnan(a)) else a == pytest.approx(b, rel=1e-12, abs=0)
    return a == b


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.rsplit("/", 1)[-1])
def test_dataframe_matches_the_file_cell_by_cell(path):
    doc = read_json(path)
    df = nm.load(path).to_dataframe()
    expected_rows = sum(max(1, len(c["runs"])) for c in doc["cells"])
    assert len(df) == expected_rows
    assert list(dict.fromkeys(df["key"])) == [c["key"] for c in doc["cells"]]   # every cell, in order

    rows = iter(df.to_dict("records"))
    for cell in doc["cells"]:
        test = cell["params"]["test"]
        runs = cell["runs"] or [None]
        for number, r in enumerate(runs, start=1):
            row = next(rows)
            assert row["key"] == cell["key"]
            assert row["status"] == cell["status"]
            assert row["error"] == cell["error"]
            assert row["profile"] == cell["params"]["offloads"]
            assert row["traffic"] == cell["params"]["traffic"]
            assert row["mtu"] == cell["params"]["mtu"]
            assert row["protocol"] == test["protocol"]
            assert row["direction"] == test["direction"]
            assert row["streams"] == test["streams"]
            assert row["write_size"] == test["write_size"]
            for name, wanted in cell["params"]["features_requested"].items():
                assert row[f"requested:{name}"] == wanted
            for end in ("local", "remote"):
                applied = cell.get("applied", {}).get(end)
                if applied:
                    assert row[f"mtu_{end}"] == applied["mtu"]
                    for name, active in applied["features"].items():
                        assert row[f"{end}:{name}"] == active, (cell["key"], end, name)
            if r is None:
                assert cell["status"] != "ok"
                assert math.isnan(row["repetition"])
                for column in ("throughput_bps", "packets_per_s", "cpu_sender_user_s", "cpu_receiver_sys_s", "softirq_pct"):
                    assert math.isnan(row[column])
                continue
            assert row["repetition"] == number
            assert row["run_status"] == r["status"]
            assert same(row["throughput_bps"], r["throughput_bps"])
            assert same(row["packets_per_s"], r["packets_per_s"])
            assert row["bytes"] == r["bytes"]
            assert same(row["duration_s"], r["duration_s"])
            cpu = r["cpu"]
            for end in ("sender", "receiver"):
                assert same(row[f"cpu_{end}_user_s"], cpu[end]["user_s"])
                assert same(row[f"cpu_{end}_sys_s"], cpu[end]["sys_s"])
                assert same(row[f"cpu_{end}_pct"], cpu[end]["util_pct"])
                for f in ("busy", "user", "sys", "irq", "softirq"):
                    assert same(row[f"system_{end}_{f}_pct"], cpu["system"][end][f"{f}_pct"])
            assert same(row["softirq_pct"], max(cpu["system"]["sender"]["softirq_pct"], cpu["system"]["receiver"]["softirq_pct"]))
            assert same(row["system_busy_pct"], max(cpu["system"]["sender"]["busy_pct"], cpu["system"]["receiver"]["busy_pct"]))
            assert row["tcp_retransmits"] == r["tcp"]["retransmits"]
            # Files written before the rename call the engines' figure service_demand_us_per_kb.
            assert same(row["engine_service_demand_us_per_kb"], r.get("engine_service_demand_us_per_kb", r.get("service_demand_us_per_kb")))
            for end in ("sender", "receiver"):
                system = cpu["system"][end]
                if system.get("busiest_cpu") is not None:
                    assert row[f"system_{end}_busiest_cpu"] == system["busiest_cpu"]
                    assert same(row[f"system_{end}_busiest_cpu_busy_pct"], system["busiest_cpu_busy_pct"])
                    assert system["busiest_cpu_busy_pct"] == max(c["busy_pct"] for c in system["per_cpu"])
                placement = r.get("placement", {}).get(end)
                assert row[f"placement_{end}"] == (",".join(map(str, placement)) if placement else None)
            if "service_demand_us_per_kb" in cpu:
                assert same(row["sender_service_demand_us_per_kb"], cpu["service_demand_us_per_kb"]["sender"])
            assert row["packets_source"] == (r.get("packets_source") or None)   # None in files written before it
            if r["loss"] is None:
                assert math.isnan(row["loss_pct"]) and math.isnan(row["loss_lost"])
            else:
                assert same(row["loss_pct"], r["loss"]["percent"])
                assert row["loss_lost"] == r["loss"]["lost"]
                assert row["loss_sent"] == r["loss"]["sent"]
            assert row["napi_receiver_processed"] == r["napi"]["receiver"]["processed"]
    assert next(rows, None) is None


def test_measurements_are_numeric_and_settings_are_columns():
    df = nm.load(EXAMPLE_A).to_dataframe()
    for column in ("throughput_bps", "packets_per_s", "cpu_sender_user_s", "cpu_sender_sys_s", "cpu_receiver_user_s",
                   "cpu_receiver_sys_s", "system_receiver_softirq_pct", "softirq_pct", "tcp_retransmits", "loss_pct",
                   "repetition", "mtu_local"):
        assert df[column].dtype.kind == "f" or df[column].dtype.kind in "iu", column
    assert {"profile", "mtu", "protocol", "streams", "write_size", "direction", "local:tx-tcp-segmentation",
            "remote:rx-gro"} <= set(df.columns)
    # all-off really had TSO off on both ends; all-on had it on (as read back and recorded).
    off = df[df["profile"] == "all-off"]
    assert not off["local:tx-tcp-segmentation"].any() and not off["remote:tx-tcp-segmentation"].any()
    assert df[df["profile"] == "all-on"]["local:tx-tcp-segmentation"].all()


def test_no_status_is_dropped():
    doc = read_json(FAKE_LAB)
    res = nm.load(FAKE_LAB)
    for frame in (res.to_dataframe(), res.summary()):
        assert set(frame["status"]) == {c["status"] for c in doc["cells"]}
        assert {"ok", "duplicate", "infeasible", "failed", "path_mtu_blackhole"} <= set(frame["status"])
    dup = res.summary().set_index("key").loc["tx-tso-off/mtu1500/tcp-p1"]
    assert dup["status"] == "duplicate" and dup["duplicate_of"] == "tx-off/mtu1500/tcp-p1"
    assert math.isnan(dup["throughput_bps_median"])


@pytest.mark.parametrize("path", [FAKE_LAB, EXAMPLE_A], ids=["fake-lab", "example"])
def test_summary_is_the_files_summary(path):
    doc = read_json(path)
    s = nm.load(path).summary()
    assert list(s["key"]) == [c["key"] for c in doc["cells"]]
    for row, cell in zip(s.to_dict("records"), doc["cells"]):
        for metric, stats in cell.get("summary", {}).items():
            # Files written before the rename summarize the engines' CPU per KB as service_demand_us_per_kb.
            column = "engine_service_demand_us_per_kb" if metric == "service_demand_us_per_kb" else metric
            for stat, value in stats.items():
                assert same(row[f"{column}_{stat}"], value), (cell["key"], metric, stat)


def test_matrix_and_report_show_the_same_medians():
    res = nm.load(EXAMPLE_A)
    m = res.matrix("throughput_bps")
    doc = read_json(EXAMPLE_A)
    for cell in doc["cells"]:
        p = cell["params"]
        assert same(m.loc[(p["offloads"], p["traffic"]), p["mtu"]], cell["summary"]["throughput_bps"]["median"])
    assert "all-off / tcp-p10" in res.report()


def cli_compare(nicmatrix_bin, a, b, metric):
    out = run(nicmatrix_bin, "compare", a, b, "--format", "csv", "--metric", metric).stdout
    return list(csv.DictReader(io.StringIO(out)))


@pytest.mark.parametrize("pair", [(EXAMPLE_A, EXAMPLE_B), (FAKE_LAB, FAKE_LAB)], ids=["examples", "fake-self"])
def test_compare_matches_the_cli(nicmatrix_bin, pair):
    a, b = pair
    df = nm.compare(a, b, metric="throughput_bps")
    both = df[df["in_both"]]
    cli = cli_compare(nicmatrix_bin, a, b, "throughput_bps")
    cli_rows = [r for r in cli if r["key_a"] and r["key_b"]]
    assert len(cli_rows) >= 1
    assert df.attrs["only_a"] == [r["key_a"] for r in cli if not r["key_b"]]
    assert df.attrs["only_b"] == [r["key_b"] for r in cli if not r["key_a"]]
    assert len(both) == len(cli_rows)
    for row, line in zip(both.to_dict("records"), cli_rows):
        assert row["key_a"] == line["key_a"] and row["key_b"] == line["key_b"]
        assert row["mtu"] == int(line["mtu"])
        assert row["significant"] == (line["significant"] == "true")
        assert row["verdict"] == line["verdict"]
        for column in ("ratio_ci_low", "ratio_ci_high", "ratio_ci_confidence"):
            assert same(row[column], float(line[column]) if line[column] else None), column
        if line["ratio"]:
            assert row["ratio"] == pytest.approx(float(line["ratio"]), abs=5e-5)
            assert row["a_median"] == pytest.approx(float(line["a"])) and row["b_median"] == pytest.approx(float(line["b"]))
        else:
            assert math.isnan(row["ratio"])
    assert df.attrs["metric"] == "throughput_bps"


def test_compare_of_the_examples():
    doc_a, doc_b = read_json(EXAMPLE_A), read_json(EXAMPLE_B)
    df = nm.compare(nm.load(EXAMPLE_A), EXAMPLE_B)
    both = df[df["in_both"]]
    # The all-on cells at MTU 1500 and 9000 are in both files (same requested features, MTU and test).
    assert sorted(both["key_a"]) == sorted(c["key"] for c in doc_a["cells"] if c["params"]["offloads"] == "all-on"
                                           and c["params"]["mtu"] in (1500, 9000))
    med_b = {c["key"]: c["summary"]["throughput_bps"]["median"] for c in doc_b["cells"] if c["status"] == "ok"}
    med_a = {c["key"]: c["summary"]["throughput_bps"]["median"] for c in doc_a["cells"]}
    for row in both.to_dict("records"):
        assert row["ratio"] == pytest.approx(med_b[row["key_b"]] / med_a[row["key_a"]])
    assert set(df.attrs["only_a"]) == {c["key"] for c in doc_a["cells"]} - set(both["key_a"])
    assert set(df.attrs["only_b"]) == {c["key"] for c in doc_b["cells"]} - set(both["key_b"])
    assert len(df) == len(both) + len(df.attrs["only_a"]) + len(df.attrs["only_b"])
    text = nm.compare(EXAMPLE_A, EXAMPLE_B, text=True)
    assert "all-on" in text


# Errors cross the boundary as nicmatrix.Error with the C++ message.

def test_missing_file_raises_error_naming_it(tmp_path):
    path = tmp_path / "nope.json"
    with pytest.raises(nm.Error, match=f"{path}: cannot read the results file"):
        nm.load(path)


def test_other_schema_version_is_refused(tmp_path):
    doc = read_json(FAKE_LAB)
    doc["schema"] = "nicmatrix/results/v2"
    path = tmp_path / "v2.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(nm.Error, match=r'/schema: expected "nicmatrix/results/v1", got "nicmatrix/results/v2"'):
        nm.load(path)


def test_bad_field_is_named(tmp_path):
    doc = read_json(FAKE_LAB)
    broken = copy.deepcopy(doc)
    broken["cells"][0]["status"] = "great"
    path = tmp_path / "bad-status.json"
    path.write_text(json.dumps(broken))
    with pytest.raises(nm.Error, match="great"):
        nm.load(path)
    broken = copy.deepcopy(doc)
    del broken["cells"][1]["key"]
    path.write_text(json.dumps(broken))
    with pytest.raises(nm.Error, match="'key' not found"):
        nm.load(path)
    path.write_text("{not json")
    with pytest.raises(nm.Error, match="not a nicmatrix results file"):
        nm.load(path)


def test_unknown_metric_raises_the_cpp_message():
    with pytest.raises(nm.Error, match="nope"):
        nm.compare(FAKE_LAB, FAKE_LAB, metric="nope")


def test_bad_config_names_the_field(tmp_path):
    config = read_json(EXAMPLE_A)["run"]["config"]
    config["traffic"][1]["streams"] = -3
    with pytest.raises(nm.Error, match=r"/traffic/1/streams: expected a positive integer"):
        nm.sweep(config, lab=True, output=tmp_path / "never.json", journal=str(tmp_path / "journal.json"))
    assert not (tmp_path / "never.json").exists()
    with pytest.raises(nm.Error, match="no such file|cannot"):
        nm.sweep(tmp_path / "missing-config.json", lab=True, journal=str(tmp_path / "journal.json"))


@pytest.mark.parametrize("path", [EXAMPLE_A, EXAMPLE_B, EXAMPLE_PROFILE, EXAMPLE_RR],
                         ids=["offload-mtu-lab", "example-gro-lab", "example-profile-lab", "example-rr-lab"])
def test_example_results_validate_against_the_schema(path):
    from test_schemas import validator
    validator("results/results.schema.json").validate(read_json(path))


def test_tuning_axes_are_labels_and_the_effective_state_columns():
    """The tuning axes' value names are columns a table can pivot on; each end's read-back is there too
    (results/queues-steering-lab.json is `nicmatrix sweep configs/queues-steering.json --lab`)."""
    path = os.path.join(SOURCE, "results/queues-steering-lab.json")
    raw = read_json(path)
    df = nm.load(path).to_dataframe()
    assert list(df["channels"].unique()) == ["ch1", "ch2"]
    assert sorted(df["rps"].unique()) == ["rps-all", "rps-none"]
    for _, row in df.iterrows():
        cell = next(c for c in raw["cells"] if c["key"] == row["key"])
        assert row["channels"] == cell["params"]["channels"]
        assert row["local:channels.rx"] == cell["applied"]["local"]["channels"]["rx"]
        assert row["remote:rps.rx-0"] == cell["applied"]["remote"]["rps"]["rx-0"]
    table = df.pivot_table(index=["channels", "rps"], columns="traffic", values="throughput_bps", aggfunc="median")
    assert table.shape == (4, 2)


def test_iperf3_far_end_runs_leave_the_far_end_out_and_keep_the_peers_figures():
    # results/example-iperf3-lab.json: `sweep --lab --peer-kind iperf3` (Debian's iperf3 -s --json as the far end).
    path = os.path.join(SOURCE, "results", "example-iperf3-lab.json")
    raw = read_json(path)
    df = nm.load(path).to_dataframe()
    assert len(df) == sum(len(c["runs"]) for c in raw["cells"])
    forward, reverse = df[df["direction"] == "forward"], df[df["direction"] == "reverse"]
    assert len(forward) and len(reverse)
    # The far end (receiver forward, sender with -R) was not measured: NaN, not 0; this end was.
    assert forward["cpu_receiver_user_s"].isna().all() and forward["cpu_receiver_pct"].isna().all()
    assert forward["cpu_sender_user_s"].notna().all()
    assert reverse["cpu_sender_user_s"].isna().all() and reverse["cpu_sender_pct"].isna().all()
    assert reverse["cpu_receiver_user_s"].notna().all()
    # The server's own CPU is a metric of its own; its figures are in every run's "peer".
    assert (df["peer_cpu_pct"] > 0).all()
    for cell in raw["cells"]:
        for r in cell["runs"]:
            assert r["peer"]["kind"] == "iperf3" and r["peer"]["version"].startswith("iperf 3.")
            own = r["peer"]["sent_bps"] if r["spec"]["direction"] == "reverse" else r["peer"]["received_bps"]
            assert own > 0
