import os
import subprocess
import sys

import pytest

NM_BINARY = os.environ.get("NM_BINARY", os.path.join(os.path.dirname(__file__), "..", "..", "build", "nicmatrix"))


def run(*args, timeout=60, check=True):
    """Runs a command bounded in time and returns its CompletedProcess (text)."""
    return subprocess.run(list(args), capture_output=True, text=True, timeout=timeout, check=check)


@pytest.fixture
def nicmatrix_bin():
    return NM_BINARY


def pytest_report_header(config):
    return f"python: {sys.executable}; nicmatrix: {NM_BINARY}"
