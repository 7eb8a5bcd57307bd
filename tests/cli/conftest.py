"""Shared fixtures for the CLI tests: the sluice binary under test and a replay runner."""
import os
import subprocess

import pytest


@pytest.fixture(scope="session")
def sluice_bin():
    path = os.environ.get("SLUICE_BIN")
    if not path:
        here = os.path.dirname(os.path.abspath(__file__))
        path = os.path.join(here, "..", "..", "build", "release", "sluice")
    assert os.access(path, os.X_OK), f"sluice binary not found at {path} (set SLUICE_BIN)"
    return path


@pytest.fixture
def replay(sluice_bin):
    """replay(trace_text, *args) -> CompletedProcess with text stdout/stderr."""

    def run(trace, *args):
        data = trace.encode() if isinstance(trace, str) else trace
        return subprocess.run([sluice_bin, "replay", *args], input=data,
                              capture_output=True, timeout=120)

    return run
