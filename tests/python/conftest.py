import contextlib
import os
import subprocess
import sys
import uuid

import pytest

NM_BINARY = os.environ.get("NM_BINARY", os.path.join(os.path.dirname(__file__), "..", "..", "build", "nicmatrix"))
SOURCE = os.environ.get("NM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
FAKE_LAB = os.path.join(SOURCE, "tests", "fixtures", "results", "fake-lab.json")
EXAMPLE_A = os.path.join(SOURCE, "results", "offload-mtu-lab.json")
EXAMPLE_B = os.path.join(SOURCE, "results", "example-gro-lab.json")
EXAMPLE_PROFILE = os.path.join(SOURCE, "results", "example-profile-lab.json")   # "profile": true
EXAMPLE_RR = os.path.join(SOURCE, "results", "example-rr-lab.json")   # configs/rr-latency.json

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (CAP_NET_ADMIN) for network namespaces")


def run(*args, timeout=60, check=True):
    """Runs a command bounded in time and returns its CompletedProcess (text)."""
    return subprocess.run(list(args), capture_output=True, text=True, timeout=timeout, check=check)


def unique_name(prefix="nmpy"):
    """A lab name no other test (or helper) uses: the namespaces are NAME-a and NAME-b."""
    return prefix + uuid.uuid4().hex[:8]


@contextlib.contextmanager
def reaped(process):
    """`process` (a Popen) for the with-block; killed and reaped on leaving it if it still runs."""
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@contextlib.contextmanager
def serving(netns, *args):
    """`nicmatrix serve ARGS` in `netns` (its stdout a pipe), once it says it listens; killed and reaped
    on leaving the with-block if it still runs."""
    server = subprocess.Popen(["ip", "netns", "exec", netns, NM_BINARY, "serve", *args], stdout=subprocess.PIPE, text=True)
    with reaped(server):
        assert "listening" in server.stdout.readline()
        yield server


def run_script(netns, script, text, *args, timeout=30):
    """Writes `text` to the file `script` and runs it with Debian's python3 in `netns` (the module found
    through PYTHONPATH); its CompletedProcess."""
    script.write_text(text)
    return run("ip", "netns", "exec", netns, "/usr/bin/python3", str(script), *args, timeout=timeout)


@pytest.fixture
def nicmatrix_bin():
    return NM_BINARY


@pytest.fixture
def cli_lab():
    """A pair lab made with `nicmatrix lab up` under a unique name, taken down afterwards (even on failure)."""
    name = unique_name()
    run(NM_BINARY, "lab", "up", "--name", name)
    try:
        yield name
    finally:
        run(NM_BINARY, "lab", "down", "--name", name, check=False)


def pytest_report_header(config):
    return f"python: {sys.executable}; nicmatrix: {NM_BINARY}"
