"""nicmatrix.plot from Python and as `nicmatrix plot`: real PNG images, checked by opening them with PIL."""
import json
import os
import statistics
import subprocess
import sys

import pytest
from PIL import Image

import nicmatrix as nm
from nicmatrix import _nicmatrix, plot
from conftest import EXAMPLE_A, EXAMPLE_B, EXAMPLE_PROFILE, EXAMPLE_RR, FAKE_LAB, run


def check_png(path, min_size=(300, 200)):
    """The file is a PNG image of at least min_size pixels that is not one flat colour."""
    assert os.path.getsize(path) > 0
    with Image.open(path) as img:
        assert img.format == "PNG"
        assert img.width >= min_size[0] and img.height >= min_size[1]
        lo_hi = img.convert("L").getextrema()
        assert lo_hi[1] - lo_hi[0] > 50, f"{path} is (almost) one flat colour: {lo_hi}"
        return img.size


@pytest.mark.parametrize("path", [EXAMPLE_A, FAKE_LAB], ids=["example", "fake-lab"])
def test_heatmap_has_one_panel_per_traffic_pattern(tmp_path, path):
    res = nm.load(path)
    fig = plot.heatmap(res, metric="throughput_bps")
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title().split(":")[0] for ax in panels] == list(dict.fromkeys(res.summary()["traffic"]))
    # Cells without a figure show their status instead of a number.
    texts = {t.get_text() for ax in panels for t in ax.texts}
    assert set(res.summary()["status"]) - {"ok"} <= texts
    check_png(plot.save(fig, tmp_path / "heatmap.png"))


def test_scatter_has_a_point_per_measured_cell(tmp_path):
    res = nm.load(EXAMPLE_A)
    fig = plot.scatter(res)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.texts]
    assert len(labels) == int((res.summary()["status"] == "ok").sum())
    check_png(plot.save(fig, tmp_path / "scatter.png"))


def test_bars_show_the_matched_cells(tmp_path):
    fig = plot.bars(EXAMPLE_A, EXAMPLE_B)
    c = nm.compare(EXAMPLE_A, EXAMPLE_B)
    ax = fig.axes[0]
    assert len(ax.patches) == 2 * int(c["in_both"].sum())
    check_png(plot.save(fig, tmp_path / "bars.png"))


@pytest.mark.parametrize("args,kind", [([EXAMPLE_A], "heatmap"), ([EXAMPLE_A, "--kind", "scatter"], "scatter"),
                                       ([EXAMPLE_A, EXAMPLE_B], "bars"), ([FAKE_LAB, "--metric", "packets_per_s"], "heatmap")],
                         ids=["heatmap", "scatter", "bars", "metric"])
def test_cli_plot_writes_png(tmp_path, nicmatrix_bin, args, kind):
    out = tmp_path / f"{kind}.png"
    res = run(nicmatrix_bin, "plot", *args, "-o", str(out), timeout=120)
    assert res.stdout.strip() == str(out)
    check_png(out)


def test_cli_plot_finds_the_package_without_pythonpath(tmp_path, nicmatrix_bin):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = tmp_path / "h.png"
    res = subprocess.run([nicmatrix_bin, "plot", EXAMPLE_A, "-o", str(out)], env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    check_png(out)


def test_cli_plot_bad_input(tmp_path, nicmatrix_bin):
    out = tmp_path / "x.png"
    res = run(nicmatrix_bin, "plot", EXAMPLE_A, "-o", str(out), "--metric", "nope", check=False)
    assert res.returncode == 2 and "--metric nope: expected one of" in res.stderr
    res = run(nicmatrix_bin, "plot", EXAMPLE_A, "-o", str(out), "--kind", "bars", check=False)
    assert res.returncode == 2 and "two results files" in res.stderr
    res = run(nicmatrix_bin, "plot", str(tmp_path / "missing.json"), "-o", str(out), check=False)
    assert res.returncode == 2 and "cannot read the results file" in res.stderr
    res = run(nicmatrix_bin, "plot", EXAMPLE_A, check=False)
    assert res.returncode == 2 and "--output" in res.stderr
    assert not out.exists()


def test_python_dash_m_nicmatrix_plot(tmp_path):
    out = tmp_path / "s.png"
    res = subprocess.run([sys.executable, "-m", "nicmatrix", "plot", EXAMPLE_A, "--kind", "scatter", "-o", str(out)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    check_png(out)
    res = subprocess.run([sys.executable, "-m", "nicmatrix"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "usage" in res.stderr


def _lines(fig):
    return [line for ax in fig.axes for line in ax.get_lines()]


def test_heatmap_shows_the_median_interval_and_precision_marks(tmp_path):
    res = nm.load(FAKE_LAB)
    fig = plot.heatmap(res)
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    s = res.summary()
    for _, row in s[(s["status"] == "ok")].iterrows():
        lo, hi = row["throughput_bps_median_ci_low"], row["throughput_bps_median_ci_high"]
        want = f"[{_nicmatrix.format_metric('throughput_bps', lo)} .. {_nicmatrix.format_metric('throughput_bps', hi)}]"
        assert any(want in t for t in texts), (row["key"], want, texts)
    # A cell whose precision was not met carries "?" after its median.
    res.data["cells"][0]["precision_met"] = False
    texts = [t.get_text() for ax in plot.heatmap(res).axes for t in ax.texts]
    assert any(t.split("\n")[0].endswith(" ?") for t in texts)
    check_png(plot.save(fig, tmp_path / "heatmap.png"))


def test_timeseries_draws_every_repetitions_intervals(tmp_path):
    res = nm.load(EXAMPLE_A)
    fig = plot.timeseries(res, cells="all-on/*/tcp-p1")
    chosen = [c for c in res.cells if c["key"].startswith("all-on/") and c["key"].endswith("/tcp-p1")]
    lines = _lines(fig)
    assert len(lines) == sum(len(c["runs"]) for c in chosen)
    # The y values are the file's interval throughputs, in Gbit/s, in order.
    want = [[iv["throughput_bps"] / 1e9 for iv in r["intervals"]] for c in chosen for r in c["runs"]]
    assert [list(line.get_ydata()) for line in lines] == [pytest.approx(w) for w in want]
    ax = fig.axes[0]
    assert "Gbit/s" in ax.get_ylabel() and "seconds" in ax.get_xlabel() and ax.get_title()
    check_png(plot.save(fig, tmp_path / "timeseries.png"))


def test_timeseries_and_cdf_of_request_response_cells_draw_their_transactions_per_interval(tmp_path):
    res = nm.load(EXAMPLE_RR)
    fig = plot.timeseries(res, cells="all-on/*/tcp-rr-1x1")   # the default metric of an rr file
    chosen = [c for c in res.cells if c["key"].startswith("all-on/") and c["key"].endswith("/tcp-rr-1x1")]
    want = [[iv["transactions_per_s"] for iv in r["rr"]["intervals"]] for c in chosen for r in c["runs"]]
    assert want and all(want)
    assert [list(line.get_ydata()) for line in _lines(fig)] == [pytest.approx(w) for w in want]
    assert "rr_transactions_per_s" in fig.axes[0].get_title()
    # An rr run records its intervals as transactions (runs[].rr.intervals), not as bytes.
    assert not any(r["intervals"] for c in chosen for r in c["runs"])
    with pytest.raises(nm.Error, match="no run of the chosen cells has intervals of throughput_bps"):
        plot.timeseries(res, cells="all-on/*/tcp-rr-1x1", metric="throughput_bps")
    cdf = plot.cdf(res, cells="all-on/mtu1500/tcp-rr-1x1")
    xs = sorted(v for r in chosen[0]["runs"] for v in (iv["transactions_per_s"] for iv in r["rr"]["intervals"]))
    assert list(_lines(cdf)[0].get_xdata()) == pytest.approx(xs)
    check_png(plot.save(cdf, tmp_path / "rr-cdf.png"))


def test_box_has_one_box_per_cell_with_its_repetitions(tmp_path):
    res = nm.load(EXAMPLE_A)
    fig = plot.box(res)
    ax = fig.axes[0]
    ok = [c for c in res.cells if c["status"] == "ok"]
    assert len(ax.get_xticklabels()) == len(ok)
    # The orange points are the repetitions, one point per run.
    points = [line for line in ax.get_lines() if line.get_marker() == "o" and line.get_color() == "C1"]
    assert sorted(len(p.get_ydata()) for p in points) == sorted(len(c["runs"]) for c in ok)
    check_png(plot.save(fig, tmp_path / "box.png"))


def test_cdf_of_intervals_reaches_one_per_cell(tmp_path):
    res = nm.load(EXAMPLE_A)
    fig = plot.cdf(res, cells="all-off/mtu1500/*")
    lines = _lines(fig)
    assert len(lines) == 2
    for line in lines:
        y = list(line.get_ydata())
        assert y == sorted(y) and y[-1] == pytest.approx(1.0)
    with pytest.raises(nm.Error, match="no run of the chosen cells has rr"):
        plot.cdf(res, of="latency")
    check_png(plot.save(fig, tmp_path / "cdf.png"))


def test_cdf_of_latency_of_the_committed_rr_example_is_every_transaction(tmp_path, nicmatrix_bin):
    # configs/rr-latency.json as a lab sweep wrote it: each cell's line is its runs' histograms merged.
    with open(EXAMPLE_RR) as f:
        raw = json.load(f)
    ok = [c for c in raw["cells"] if c["status"] == "ok"]
    assert ok
    cell = next(c for c in ok if c["key"].startswith("all-on/mtu1500/"))
    fig = plot.cdf(EXAMPLE_RR, of="latency", cells=cell["key"])
    (line,) = _lines(fig)
    xs, ys = list(line.get_xdata()), list(line.get_ydata())
    runs = [r["rr"] for r in cell["runs"]]
    # One point per bucket that any run filled, read from the file's sparse bucket lists.
    assert len(xs) == len({index for rr in runs for index, _ in rr["histogram"]["buckets"]})
    assert xs == sorted(xs) and ys == sorted(ys) and ys[-1] == pytest.approx(1.0)
    assert str(sum(rr["histogram"]["count"] for rr in runs)) + " transactions" in line.get_label()
    # The merged median lies between the runs' own medians, and the last bucket holds the slowest one
    # (bounds within the histogram's 0.4%).
    median = next(x for x, y in zip(xs, ys) if y >= 0.5)
    p50s = [rr["latency_us"]["p50"] for rr in runs]
    assert min(p50s) * 0.99 <= median <= max(p50s) * 1.01
    slowest = max(rr["latency_us"]["max"] for rr in runs)
    assert slowest <= xs[-1] <= slowest * 1.01 + 0.001
    check_png(plot.save(fig, tmp_path / "latency-example.png"))
    res = run(nicmatrix_bin, "plot", EXAMPLE_RR, "--kind", "cdf", "--of", "latency", "-o", str(tmp_path / "cdf.png"), timeout=120)
    check_png(res.stdout.strip())


def test_cdf_of_latency_goes_through_the_recorded_percentiles(tmp_path):
    res = nm.load(FAKE_LAB)
    cell = next(c for c in res.cells if c["status"] == "ok")
    for k, run in enumerate(cell["runs"]):
        run["rr"] = {"transactions": 1000, "latency_us": {"mean": 30 + k, "p50": 25 + k, "p90": 40 + k, "p99": 80 + k, "p999": 150 + k, "max": 300 + k}}
    fig = plot.cdf(res, of="latency", cells=cell["key"])
    (line,) = _lines(fig)
    xs = sorted(v for r in cell["runs"] for p, v in r["rr"]["latency_us"].items() if p != "mean")
    assert list(line.get_xdata()) == xs
    assert fig.axes[0].get_xscale() == "log" and "µs" in fig.axes[0].get_xlabel()
    check_png(plot.save(fig, tmp_path / "latency.png"))


def test_breakdown_stacks_the_profile_and_names_the_missing_field(tmp_path, nicmatrix_bin):
    # The committed example files predate the kernel profile: the error names the field.
    with pytest.raises(nm.Error, match="has cpu_profile.receiver"):
        plot.breakdown(EXAMPLE_A)
    res = run(nicmatrix_bin, "plot", EXAMPLE_A, "--kind", "breakdown", "-o", str(tmp_path / "b.png"), check=False)
    assert res.returncode == 2 and "cpu_profile" in res.stderr and not (tmp_path / "b.png").exists()
    # A profile in the agreed shape (RUN_RECORD: cpu_profile.{sender,receiver}.categories, percent of all
    # samples) is stacked per cell as the median over the repetitions.
    r = nm.load(EXAMPLE_A)
    cells = [c for c in r.cells if c["key"].endswith("mtu1500/tcp-p1")]
    for c in cells:
        for k, run_ in enumerate(c["runs"]):
            cats = {"copy": 20.0 + k, "checksum": 10.0 if c["key"].startswith("all-off") else 1.0, "idle": 50.0 - k}
            run_["cpu_profile"] = {"sender": None, "receiver": {"host": "vm", "samples": 4000, "categories": cats}}
    fig = plot.breakdown(r, cells="*/mtu1500/tcp-p1")
    ax = fig.axes[0]
    bars = {}
    for patch, label in zip(ax.patches, [h.get_label() for h in ax.containers for _ in h]):
        bars.setdefault(label, []).append(patch.get_height())
    assert bars["copy"] == pytest.approx([21.0, 21.0]) and bars["checksum"] == pytest.approx([1.0, 10.0])
    assert "% of all samples" in ax.get_ylabel()
    check_png(plot.save(fig, tmp_path / "breakdown.png"))


def test_breakdown_of_the_committed_profiled_example(tmp_path, nicmatrix_bin):
    # `nicmatrix plot --kind breakdown` on a file a real sweep with "profile": true wrote.
    out = tmp_path / "breakdown.png"
    res = run(nicmatrix_bin, "plot", EXAMPLE_PROFILE, "--kind", "breakdown", "-o", str(out), timeout=120)
    assert res.stdout.strip() == str(out)
    check_png(out)
    # Every ok cell has a bar, each category's height the median of its runs' shares, read from the JSON here.
    with open(EXAMPLE_PROFILE) as f:
        raw = json.load(f)
    fig = plot.breakdown(EXAMPLE_PROFILE, end="receiver")
    ax = fig.axes[0]
    ok = [c for c in raw["cells"] if c["status"] == "ok"]
    assert ok and len(ax.get_xticks()) == len(ok)
    heights = {h.get_label(): [p.get_height() for p in h] for h in ax.containers}
    for name in ("copy", "checksum", "tcp_ip", "idle"):
        want = [statistics.median(r["cpu_profile"]["receiver"]["categories"].get(name, 0.0) for r in c["runs"]) for c in ok]
        assert heights[name] == pytest.approx(want), name
    # With every offload off a checksum share appears that all-on lacks.
    by_key = dict(zip((c["key"] for c in ok), heights["checksum"]))
    assert all(by_key[k] > 1.0 for k in by_key if k.startswith("all-off/"))
    assert all(by_key[k] < 0.5 for k in by_key if k.startswith("all-on/"))


@pytest.mark.parametrize("kind", ["timeseries", "box", "cdf"])
def test_cli_new_kinds_write_png(tmp_path, nicmatrix_bin, kind):
    out = tmp_path / f"{kind}.png"
    res = run(nicmatrix_bin, "plot", EXAMPLE_A, "--kind", kind, "--cells", "all-on/*", "-o", str(out), timeout=120)
    assert res.stdout.strip() == str(out)
    check_png(out, min_size=(600, 400))


def test_cli_new_kinds_bad_input(tmp_path, nicmatrix_bin):
    out = tmp_path / "x.png"
    res = run(nicmatrix_bin, "plot", EXAMPLE_A, "--kind", "timeseries", "--cells", "nope/*", "-o", str(out), check=False)
    assert res.returncode == 2 and "--cells nope/*: no such cell" in res.stderr
    res = run(nicmatrix_bin, "plot", EXAMPLE_A, "--kind", "timeseries", "--metric", "cpu_sender_pct", "-o", str(out), check=False)
    assert res.returncode == 2 and "timeseries draws the intervals'" in res.stderr
    res = run(nicmatrix_bin, "plot", EXAMPLE_A, "--kind", "cdf", "--of", "nope", "-o", str(out), check=False)
    assert res.returncode == 2
    assert not out.exists()


def test_cli_breakdown_takes_end_and_cells(monkeypatch):
    # `--end` and `--cells` reach the breakdown (a second, earlier branch once dropped both).
    drawn = []
    monkeypatch.setattr(plot, "save", lambda fig, out: drawn.append(fig))
    assert plot.main([EXAMPLE_PROFILE, "--kind", "breakdown", "--end", "sender", "--cells", "all-on/*", "-o", "unused.png"]) == 0
    ax = drawn[0].axes[0]
    assert "sender's CPU" in ax.get_title()
    with open(EXAMPLE_PROFILE) as f:
        ok = [c for c in json.load(f)["cells"] if c["status"] == "ok" and c["key"].startswith("all-on/")]
    assert len(ax.get_xticks()) == len(ok) > 0


QUEUES = os.path.join(os.path.dirname(EXAMPLE_A), "queues-steering-lab.json")   # configs/queues-steering.json


def test_heatmap_rows_are_every_tuning_combination(tmp_path, nicmatrix_bin):
    """A sweep over channels x RPS: by default a row per (profile, channels, rps), so each cell has its own
    square with its own median; --rows/--columns put any setting on either axis; a setting left out of both
    is an error naming it."""
    res = nm.load(QUEUES)
    s = res.summary()
    fig = plot.heatmap(res)
    panels = [ax for ax in fig.axes if ax.get_title()]
    rows = [t.get_text() for t in panels[0].get_yticklabels()]
    assert sorted(rows) == sorted({f"{p} / {c} / {r}" for p, c, r in zip(s["profile"], s["channels"], s["rps"])})
    assert len(rows) == 4
    # Every measured cell's median is in some square of its traffic's panel.
    for ax, traffic in zip(panels, dict.fromkeys(s["traffic"])):
        texts = [t.get_text().split("\n")[0] for t in ax.texts]
        for _, cell in s[s["traffic"] == traffic].iterrows():
            if cell["status"] == "ok":
                assert plot._human("throughput_bps", cell["throughput_bps_median"]) in texts
    # Channels along the columns, RPS (and the profile) down the rows.
    fig = plot.heatmap(res, rows=["profile", "rps", "mtu"], columns="channels")
    ax = [a for a in fig.axes if a.get_title()][0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["ch1", "ch2"]
    with pytest.raises(nm.Error, match="also varies rps"):
        plot.heatmap(res, rows=["profile"], columns="channels")
    with pytest.raises(nm.Error, match="--rows queues: expected one of profile, mtu, channels, rps"):
        plot.heatmap(res, rows=["queues"])
    # The same through the CLI, and the DataFrame's matrix has a row per combination too.
    out = tmp_path / "q.png"
    run(nicmatrix_bin, "plot", QUEUES, "--rows", "rps,profile,mtu", "--columns", "channels", "-o", str(out), timeout=120)
    check_png(out)
    bad = run(nicmatrix_bin, "plot", QUEUES, "--rows", "profile", "-o", str(tmp_path / "x.png"), check=False)
    assert bad.returncode == 2 and "also varies" in bad.stderr
    assert res.matrix().shape == (8, 1)   # (profile, channels, rps, traffic) x MTU


def test_plots_of_request_response_cells_show_transactions_per_s_unasked(tmp_path):
    # As report does: a file of request/response cells is drawn by its transactions/s, a byte rate only if asked.
    res = nm.load(EXAMPLE_RR)
    titles = [ax.get_title() for ax in plot.heatmap(res).axes if ax.get_title()]
    assert titles and all(t.endswith("median rr_transactions_per_s") for t in titles)
    assert all(t.endswith("median throughput_bps") for t in
               (ax.get_title() for ax in plot.heatmap(res, metric="throughput_bps").axes if ax.get_title()))
    assert "rr_transactions_per_s" in plot.box(res).axes[0].get_title()
    assert "rr_transactions_per_s against" in plot.scatter(res).axes[0].get_title()
    assert all(t.endswith("median throughput_bps") for t in
               (ax.get_title() for ax in plot.heatmap(nm.load(EXAMPLE_A)).axes if ax.get_title()))
    out = tmp_path / "rr.png"
    cli = run(sys.executable, "-m", "nicmatrix", "plot", EXAMPLE_RR, "-o", str(out), check=False)
    assert cli.returncode == 0, cli.stderr
    check_png(out)
