import os
import uuid

import pytest

import nicmatrix as nm
from conftest import run


def test_version_matches_the_cli(nicmatrix_bin):
    # The same version, and the same source commit when built from a git checkout.
    out = run(nicmatrix_bin, "--version").stdout.strip()
    assert out == f"nicmatrix {nm.__version__}" + (f" ({nm.__commit__})" if nm.__commit__ else "")


def test_missing_lab_raises_the_cpp_message():
    name = "nmpy" + uuid.uuid4().hex[:8]
    with pytest.raises(nm.Error, match=f"no lab named {name}"):
        nm.lab(name)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root for network namespaces")
def test_lab_made_by_the_cli_is_seen_from_python(nicmatrix_bin):
    name = "nmpy" + uuid.uuid4().hex[:8]
    run(nicmatrix_bin, "lab", "up", "--name", name)
    try:
        lab = nm.lab(name)
        assert lab["namespaces"] == [f"{name}-a", f"{name}-b"]
        client, server = lab["interfaces"][0], lab["interfaces"][1]
        ping = run("ip", "netns", "exec", client["netns"], "ping", "-c1", "-W2", server["ipv4"].split("/")[0], check=False)
        assert ping.returncode == 0
    finally:
        run(nicmatrix_bin, "lab", "down", "--name", name)
    assert f"{name}-a" not in run("ip", "netns", "list").stdout
