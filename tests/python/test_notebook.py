"""results/example.ipynb runs clean with nbclient on Debian's python3 and writes its plots as PNG files."""
import json
import os
import shutil
import sys

import nbformat
from nbclient import NotebookClient
from PIL import Image

import nicmatrix

from conftest import SOURCE


def test_example_notebook_runs_and_writes_its_plots(tmp_path, monkeypatch):
    # A kernelspec of our own that starts this very interpreter (/usr/bin/python3), whatever other
    # "python3" kernelspecs the machine has; the kernel inherits PYTHONPATH (the build tree) from us.
    spec_dir = tmp_path / "jupyter" / "kernels" / "nm-python3"
    spec_dir.mkdir(parents=True)
    (spec_dir / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "nicmatrix test kernel", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    # The kernel runs in another directory: give it the package this test imported, by absolute path.
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(nicmatrix.__file__)))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([package_root, os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("NM_EXAMPLE_DIR", os.path.join(SOURCE, "results"))
    plots = tmp_path / "plots"
    monkeypatch.setenv("NM_PLOT_DIR", str(plots))
    monkeypatch.setenv("MPLBACKEND", "Agg")

    nb = nbformat.read(os.path.join(SOURCE, "results", "example.ipynb"), as_version=4)
    client = NotebookClient(nb, kernel_name="nm-python3", timeout=120, resources={"metadata": {"path": str(tmp_path)}})
    client.execute()   # raises CellExecutionError naming the cell when any cell errors

    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not [o for o in cell.outputs if o.output_type == "error"]
    executable = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in executable)
    for name in ("heatmap.png", "scatter.png", "timeseries.png", "box.png", "cdf.png", "breakdown.png", "bars.png"):
        path = plots / name
        assert path.stat().st_size > 0
        with Image.open(path) as img:
            assert img.format == "PNG" and img.width >= 300 and img.height >= 200
            lo, hi = img.convert("L").getextrema()
            assert hi - lo > 50
    # The notebook showed the images it wrote.
    shown = [o for c in executable for o in c.outputs if "image/png" in o.get("data", {})]
    assert len(shown) == 7
    shutil.rmtree(plots)
