"""Fixtures for the RESP listener tests: a real `sluice serve --resp 127.0.0.1:PORT` (no
config file) on free ports, and raw-socket helpers for what client libraries would never
send."""
import os
import socket
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from integration_support import ServeProcess, free_port, wait_until  # noqa: E402


class Sluice(ServeProcess):
    """`sluice serve --resp 127.0.0.1:PORT` (and a config file when given)."""

    def __init__(self, tmp_path, config=None):
        self.port = free_port()
        args = ["--resp", f"127.0.0.1:{self.port}", "--admin", f"127.0.0.1:{free_port()}"]
        if config is not None:
            path = tmp_path / "sluice.yaml"
            path.write_text(config)
            args += ["--config", str(path)]
        super().__init__(tmp_path, args, r"resp listening on \S+:%d\b" % self.port,
                         what="sluice to listen for RESP")


@pytest.fixture(scope="module")
def sluice(tmp_path_factory):
    s = Sluice(tmp_path_factory.mktemp("resp"))
    yield s
    s.stop()


# Rules for SLUICE.CHECK: a fixed window of 2 per hour, so the third check is denied.
RULES = """\
rules:
  api:
    limit: "fixed-window:limit=2,window=1h"
    key: client_ip
"""


@pytest.fixture(scope="module")
def sluice_with_rules(tmp_path_factory):
    s = Sluice(tmp_path_factory.mktemp("resp-rules"), config=RULES)
    yield s
    s.stop()


class Raw:
    """A plain TCP connection: send bytes, read what comes back within a short while."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)

    def send(self, data):
        self.sock.sendall(data)

    def read_until(self, predicate, timeout=5.0):
        """Reads until predicate(bytes) holds or the peer closes; returns (bytes, closed)."""
        out = b""
        deadline = time.monotonic() + timeout
        self.sock.settimeout(0.1)
        while time.monotonic() < deadline:
            if predicate(out):
                return out, False
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                continue
            except ConnectionResetError:
                return out, True
            if not chunk:
                return out, True
            out += chunk
        return out, False

    def exchange(self, data, expect):
        """Sends `data`, reads until the reply has `expect` bytes."""
        self.send(data)
        out, _ = self.read_until(lambda b: len(b) >= len(expect))
        return out

    def close(self):
        self.sock.close()


@pytest.fixture
def raw(sluice):
    conns = []

    def connect():
        c = Raw(sluice.port)
        conns.append(c)
        return c

    yield connect
    for c in conns:
        c.close()
