"""`cmake --install` puts the package where Debian's python3 finds it (under the prefix), and the installed
`nicmatrix plot` finds its installed package without PYTHONPATH."""
import glob
import os
import subprocess
import sys

from conftest import EXAMPLE_A, NM_BINARY, run

BUILD = os.path.dirname(os.path.abspath(NM_BINARY))


def clean_env():
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def test_install_under_a_prefix(tmp_path):
    prefix = tmp_path / "inst"
    run("cmake", "--install", BUILD, "--prefix", str(prefix), timeout=120)
    packages = glob.glob(str(prefix / "lib" / "python3*" / "dist-packages" / "nicmatrix"))
    assert len(packages) == 1, os.listdir(prefix / "lib")
    package = packages[0]
    assert glob.glob(os.path.join(package, "_nicmatrix*.so"))
    assert {"__init__.py", "_results.py", "plot.py", "__main__.py"} <= set(os.listdir(package))
    # Imported from the install tree (not the build tree): a clean environment plus that directory only.
    out = subprocess.run([sys.executable, "-c", "import nicmatrix as nm; print(nm.__file__); print(len(nm.load(%r)))" % EXAMPLE_A],
                         env=dict(clean_env(), PYTHONPATH=os.path.dirname(package)), cwd=tmp_path,
                         capture_output=True, text=True, timeout=60, check=True).stdout.split()
    assert out[0].startswith(package)
    assert int(out[1]) > 0
    # The installed CLI plots through the installed package, found relative to bin/.
    png = tmp_path / "h.png"
    res = subprocess.run([str(prefix / "bin" / "nicmatrix"), "plot", EXAMPLE_A, "-o", str(png)], env=clean_env(),
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert png.stat().st_size > 0


def test_install_with_destdir(tmp_path):
    dest = tmp_path / "dest"
    subprocess.run(["cmake", "--install", BUILD], env=dict(os.environ, DESTDIR=str(dest)), check=True,
                   capture_output=True, timeout=120)
    found = glob.glob(str(dest / "**" / "dist-packages" / "nicmatrix" / "_nicmatrix*.so"), recursive=True)
    assert len(found) == 1
    # Under the configured prefix, in a directory Debian's python3 searches: /usr -> lib/python3/dist-packages,
    # /usr/local (the default) -> lib/python3.X/dist-packages.
    cache = dict(line.split("=", 1) for line in open(os.path.join(BUILD, "CMakeCache.txt")).read().splitlines()
                 if "=" in line and not line.startswith(("#", "//")))
    prefix = cache["CMAKE_INSTALL_PREFIX:PATH"]
    site = os.path.dirname(os.path.dirname(found[0]))
    chosen = cache.get("NM_PYTHON_INSTALL_DIR:STRING") or os.path.join(
        "lib", "python3" if prefix == "/usr" else "python3.%d" % sys.version_info.minor, "dist-packages")
    assert "/" + os.path.relpath(site, dest) == os.path.join(prefix, chosen)
    if prefix in ("/usr", "/usr/local"):
        search = subprocess.run(["/usr/bin/python3", "-c", "import sys; print(chr(10).join(sys.path))"], env=clean_env(),
                                capture_output=True, text=True, check=True).stdout.split()
        assert "/" + os.path.relpath(site, dest) in search
