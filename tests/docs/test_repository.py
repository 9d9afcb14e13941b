"""The repository's own hygiene: no empty files and notebooks committed without their outputs.

Tracked files come from `git ls-files` when the source is a git checkout; otherwise (a source tarball) the
tree is walked, build trees and caches left out."""
import json
import os
import subprocess

from conftest import SOURCE

_SKIPPED_DIRS = {".git", "__pycache__", ".ipynb_checkpoints", "Testing", "nicmatrix-results"}


def repository_files():
    """Every file of the repository, relative to its root."""
    listed = subprocess.run(["git", "-C", SOURCE, "ls-files", "-z"], capture_output=True, timeout=60)
    if listed.returncode == 0 and listed.stdout:
        return [p for p in listed.stdout.decode().split("\0") if p and os.path.isfile(os.path.join(SOURCE, p))]
    files = []
    for root, dirs, names in os.walk(SOURCE):
        dirs[:] = [d for d in dirs if d not in _SKIPPED_DIRS and not d.startswith("build")]
        files += [os.path.relpath(os.path.join(root, n), SOURCE) for n in names]
    return files


def test_no_empty_files():
    empty = [p for p in repository_files() if os.path.getsize(os.path.join(SOURCE, p)) == 0]
    assert not empty, f"empty files in the repository (give each its job or remove it): {empty}"


def test_no_test_logs_tracked():
    assert not [p for p in repository_files() if p.startswith("Testing/")], "CTest's Testing/ is tracked"


def test_notebooks_are_committed_without_outputs():
    """A notebook is committed cleared (tests/python/test_notebook.py executes it); clear one with
    /usr/bin/python3 -c "import nbformat as f; nb = f.read(P, 4); [c.update(outputs=[], execution_count=None)
    for c in nb.cells if c.cell_type == 'code']; f.write(nb, P)" (P the notebook's path)."""
    notebooks = [p for p in repository_files() if p.endswith(".ipynb")]
    assert notebooks, "the example notebook is missing"
    for path in notebooks:
        with open(os.path.join(SOURCE, path), encoding="utf-8") as f:
            nb = json.load(f)
        carrying = [i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"
                    and (c.get("outputs") or c.get("execution_count") is not None)]
        assert not carrying, f"{path}: code cells {carrying} carry outputs or execution counts"
