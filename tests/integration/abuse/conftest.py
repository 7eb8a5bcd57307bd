"""Fixtures for the abuse tests: a real `sluice serve` on free ports (`sluice`), Python upstreams
(`upstreams`) and the raw-socket upstream that records the exact bytes it receives
(`raw_upstream`), from tests/integration/gateway_fixtures.py."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from gateway_fixtures import raw_upstream, sluice, upstreams  # noqa: E402,F401
