"""The repository's own hygiene: no empty files, notebooks committed without their outputs, no C++ file over
the size bound in core/, matrix/ and agent/.

Tracked files come from `git ls-files` when the source is a git checkout; otherwise (a source tarball) the
tree is walked, build trees and caches left out."""
import json
import os
import re
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


_SIZE_FLOORS = ("core/", "matrix/", "agent/")
_CPP_SUFFIXES = (".cpp", ".hpp", ".h", ".cc")
_MAX_FILE_LINES = 700


def size_paragraph():
    """CONTRIBUTING.md's "Size" bullet: from `- **Size.**` to the next bullet or heading."""
    with open(os.path.join(SOURCE, "CONTRIBUTING.md"), encoding="utf-8") as f:
        text = f.read()
    start = text.find("- **Size.**")
    assert start >= 0, "CONTRIBUTING.md has no '- **Size.**' paragraph"
    end = len(text)
    for marker in ("\n- ", "\n#", "\n\n"):
        found = text.find(marker, start + 1)
        if found >= 0:
            end = min(end, found)
    return text[start:end]


def test_no_cpp_file_over_the_size_bound():
    """No C++ file in core/, matrix/ or agent/ is over 700 lines, unless CONTRIBUTING.md's Size paragraph
    names it (in backquotes, with the reason it must be longer); a file named there that is no longer over
    the bound is a stale exception and fails too. (Function length is clang-tidy's readability-function-size.)"""
    paragraph = size_paragraph()
    excepted = set(re.findall(r"`([^`\s]+)`", paragraph))
    sizes = {}
    for path in repository_files():
        if path.startswith(_SIZE_FLOORS) and path.endswith(_CPP_SUFFIXES):
            with open(os.path.join(SOURCE, path), encoding="utf-8", errors="replace") as f:
                sizes[path] = len(f.read().splitlines())
    assert sizes, "no C++ files found under core/, matrix/, agent/"
    over = {p: n for p, n in sizes.items() if n > _MAX_FILE_LINES and p not in excepted}
    assert not over, (f"C++ files over {_MAX_FILE_LINES} lines (split them by job, or name them with the reason "
                      f"in CONTRIBUTING.md's Size paragraph): {dict(sorted(over.items()))}")
    stale = sorted(p for p in excepted if p in sizes and sizes[p] <= _MAX_FILE_LINES)
    assert not stale, f"CONTRIBUTING.md's Size paragraph excepts files no longer over {_MAX_FILE_LINES} lines: {stale}"
