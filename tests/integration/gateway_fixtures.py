"""The gateway folder's fixtures for the folders that test the gateway from outside
(abuse/, faults/): its conftest's `sluice` and `upstreams` fixtures and helpers, loaded under
the name `gateway_conftest` (each folder's own file is `conftest`), and `raw_upstream`, the
raw-socket upstream that records the exact bytes it receives (raw_upstream.py).

A conftest imports the fixtures to make them its own:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from gateway_fixtures import raw_upstream, sluice, upstreams  # noqa: F401
"""
import importlib.util
import os
import sys

import pytest

from raw_upstream import RawUpstream

_HERE = os.path.dirname(os.path.abspath(__file__))
if "gateway_conftest" not in sys.modules:
    _spec = importlib.util.spec_from_file_location(
        "gateway_conftest", os.path.join(_HERE, "gateway", "conftest.py"))
    _module = importlib.util.module_from_spec(_spec)
    sys.modules["gateway_conftest"] = _module
    _spec.loader.exec_module(_module)

from gateway_conftest import sluice, upstreams  # noqa: E402,F401


@pytest.fixture
def raw_upstream():
    """raw_upstream(behaviour="ok") -> a started RawUpstream, stopped at teardown."""
    made = []

    def make(behaviour="ok"):
        u = RawUpstream(behaviour)
        made.append(u)
        return u

    yield make
    for u in made:
        u.stop()
