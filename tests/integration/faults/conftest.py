"""Fixtures for the fault tests: a real `sluice serve` (`sluice`), Python and raw-socket
upstreams (`upstreams`, `raw_upstream`, from tests/integration/gateway_fixtures.py), `sluice
demo-upstream` as a fast upstream (`demo_upstream`), and WrkRun (wrk counting every response by
status, tests/integration/wrk_support.py)."""
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from gateway_fixtures import raw_upstream, sluice, upstreams  # noqa: E402,F401
from gateway_conftest import accepts_connections  # noqa: E402
from integration_support import free_port, sluice_binary, terminate, wait_until  # noqa: E402
from wrk_support import WrkRun  # noqa: E402,F401


class DemoUpstream:
    """`sluice demo-upstream` on a free port: 200 "hello from upstream" on every path."""

    def __init__(self, tmp_path):
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        d = tmp_path / f"demo-upstream-{self.port}"
        d.mkdir()
        self.log = open(d / "stderr", "wb")
        self.proc = subprocess.Popen([sluice_binary(), "demo-upstream", "--listen", self.address],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=self.log)

        def listening():
            assert self.proc.poll() is None, "demo-upstream exited early"
            return accepts_connections(self.port)

        wait_until(listening, timeout=8, what="demo-upstream to listen")

    def stop(self):
        terminate(self.proc)
        self.log.close()


@pytest.fixture
def demo_upstream(tmp_path):
    made = []

    def make():
        u = DemoUpstream(tmp_path)
        made.append(u)
        return u

    yield make
    for u in made:
        u.stop()
