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
        self.admin_port = free_port()
        args = ["--resp", f"127.0.0.1:{self.port}", "--admin", f"127.0.0.1:{self.admin_port}"]
        if config is not None:
            path = tmp_path / "sluice.yaml"
            path.write_text(config)
            args += ["--config", str(path)]
        super().__init__(tmp_path, args, r"resp listening on \S+:%d\b" % self.port,
                         what="sluice to listen for RESP")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def metric(self, sample):
        """The value of one sample of GET /metrics (`name{labels}` as written), or None."""
        import urllib.request
        with urllib.request.urlopen(f"http://127.0.0.1:{self.admin_port}/metrics",
                                    timeout=5) as r:
            for line in r.read().decode().splitlines():
                if line.startswith(sample + " "):
                    return float(line.split()[-1])
        return None

    def rss_mib(self):
        """The process's resident memory, in MiB (/proc/PID/status VmRSS)."""
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        raise AssertionError("no VmRSS")


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


def command(*args):
    """One command as a RESP array of bulk strings."""
    parts = [a if isinstance(a, bytes) else str(a).encode() for a in args]
    return b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)


class Raw:
    """A plain TCP connection: send bytes, read what comes back within a short while."""

    def __init__(self, port, source="127.0.0.1"):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5,
                                             source_address=(source, 0))

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
