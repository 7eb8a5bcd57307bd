"""Fixtures for the overload tests: the collapsing upstream and the open-loop generator
(tests/support, built by CMake; ctest passes their paths as SLUICE_UPSTREAM_BIN and
SLUICE_LOAD_BIN) and the lab that runs them with the limiters in front
(bench/overload/overload_lab.py, shared with `make bench-overload`)."""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "bench", "overload"))
import overload_lab  # noqa: E402


def _binary(env, name):
    path = os.environ.get(env) or os.path.join(ROOT, "build", "release", "tests", "support", name)
    if not os.access(path, os.X_OK):
        pytest.fail(f"{name} not found: build it (cmake --build build/release --target {name}) "
                    f"or set {env}")
    return path


@pytest.fixture(scope="session")
def upstream_bin():
    return _binary("SLUICE_UPSTREAM_BIN", "collapsing_upstream")


@pytest.fixture(scope="session")
def load_bin():
    return _binary("SLUICE_LOAD_BIN", "open_loop_load")


@pytest.fixture
def lab():
    return overload_lab


@pytest.fixture
def upstream(upstream_bin):
    """C = 4 workers, S = 10 ms +/- 2 ms: capacity 400 requests a second."""
    started = []

    def start(workers=4, service_ms=10, jitter_ms=2):
        up = overload_lab.Upstream(upstream_bin, workers, service_ms, jitter_ms)
        started.append(up)
        return up

    yield start
    for up in started:
        up.stop()
