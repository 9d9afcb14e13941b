"""A build tree where only the executable was built (the package's .py files are there, the compiled module
is not) gives an error that says how to build the module, from `import nicmatrix` and from `nicmatrix
plot`, instead of Python's "cannot import name '_nicmatrix' from partially initialized module"."""
import glob
import os
import shutil
import subprocess
import sys

from conftest import EXAMPLE_A, NM_BINARY

BUILD_PACKAGE = os.path.join(os.path.dirname(os.path.abspath(NM_BINARY)), "python", "nicmatrix")


def package_without_module(root):
    """root/nicmatrix: the build tree's package .py files, without _nicmatrix*.so."""
    dest = root / "nicmatrix"
    dest.mkdir(parents=True)
    for f in glob.glob(os.path.join(BUILD_PACKAGE, "*.py")):
        shutil.copy(f, dest)
    assert not glob.glob(str(dest / "_nicmatrix*"))
    return dest


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(extra)
    return env


def test_import_says_how_to_build_the_module(tmp_path):
    package_without_module(tmp_path / "py")
    res = subprocess.run([sys.executable, "-c", "import nicmatrix"], env=clean_env(PYTHONPATH=str(tmp_path / "py")),
                         cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert res.returncode != 0
    assert "the compiled module _nicmatrix is missing" in res.stderr
    assert "cmake --build build --target _nicmatrix" in res.stderr
    assert "partially initialized" not in res.stderr


def test_a_module_that_does_not_load_says_why(tmp_path):
    dest = package_without_module(tmp_path / "py")
    (dest / "_nicmatrix.cpython-311-x86_64-linux-gnu.so").write_bytes(b"not an ELF file")
    res = subprocess.run([sys.executable, "-c", "import nicmatrix"], env=clean_env(PYTHONPATH=str(tmp_path / "py")),
                         cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert res.returncode != 0
    assert "does not load" in res.stderr and "_nicmatrix" in res.stderr


def test_plot_says_how_to_build_the_module(tmp_path):
    # The executable next to a python/ directory holding the package without its module: the layout of
    # a build tree after `cmake --build build --target nicmatrix`.
    shutil.copy(NM_BINARY, tmp_path / "nicmatrix")
    package_without_module(tmp_path / "python")
    png = tmp_path / "h.png"
    res = subprocess.run([str(tmp_path / "nicmatrix"), "plot", EXAMPLE_A, "-o", str(png)], env=clean_env(),
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 1
    assert "has no compiled module _nicmatrix" in res.stderr
    assert f"cmake --build {tmp_path} --target _nicmatrix" in res.stderr
    assert not png.exists()
