"""Helpers every integration folder's conftest shares: finding the sluice binary under test,
choosing free ports, and polling for a condition instead of sleeping blindly.

A conftest imports it after putting this folder on sys.path:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
"""
import os
import signal
import socket
import subprocess
import time

import pytest

from plain_support import cpu_seconds, free_port  # noqa: F401 (re-exported: every conftest takes it from here)


def sluice_binary():
    """The binary from $SLUICE_BIN (ctest sets it), else build/release/sluice."""
    path = os.environ.get("SLUICE_BIN")
    if not path:
        here = os.path.dirname(os.path.abspath(__file__))
        path = os.path.join(here, "..", "..", "build", "release", "sluice")
    assert os.access(path, os.X_OK), f"sluice binary not found at {path} (set SLUICE_BIN)"
    return path


def wait_until(predicate, timeout=5.0, interval=0.02, what="condition"):
    """Polls `predicate` until it returns a true value, which it returns; fails the test after
    `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def terminate(proc, timeout=12):
    """Stops a server the way its operator would (SIGTERM, so it shuts down gracefully), and
    kills it if it has not exited within `timeout` seconds."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class ServeProcess:
    """A `sluice serve ...` started with `args`, its stderr kept in a file under `tmp_path`;
    the constructor returns once stderr matches `ready` (a regular expression)."""

    def __init__(self, tmp_path, args, ready, what="sluice to listen"):
        import re

        self.log_path = str(tmp_path / "sluice.stderr")
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen([sluice_binary(), "serve", *args],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=self.log)

        def started():
            assert self.proc.poll() is None, f"sluice exited early:\n{self.stderr()}"
            return re.search(ready, self.stderr())

        wait_until(started, timeout=10, what=what)

    def stderr(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", errors="replace")

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        terminate(self.proc)
        self.log.close()


def cell_reply_matches(reply, expected):
    """redis-cell's five integers (and SLUICE.PEEK's sixth) against the expected ones: the counts
    exact; each time is whole seconds rounded up, so the time the calls took may take one
    second off it."""
    if len(reply) != len(expected) or reply[:3] != expected[:3] or reply[5:] != expected[5:]:
        return False
    return all(want - 1 <= got <= want if want > 0 else got == want
               for got, want in zip(reply[3:5], expected[3:5]))


def status_from(port, source, headers):
    """GET / on 127.0.0.1:`port` from the loopback address `source` (127.0.0.2 is a client
    that is not 127.0.0.1's trusted proxy); the response's status code."""
    with socket.create_connection(("127.0.0.1", port), timeout=5,
                                  source_address=(source, 0)) as s:
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        s.sendall(f"GET / HTTP/1.1\r\nHost: x\r\n{head}Connection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return int(data.split(b" ", 2)[1])
