"""nicmatrix.plot from Python and as `nicmatrix plot`: real PNG images, checked by opening them with PIL."""
import os
import subprocess
import sys

import pytest
from PIL import Image

import nicmatrix as nm
from nicmatrix import plot
from conftest import EXAMPLE_A, EXAMPLE_B, FAKE_LAB, run


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
