"""Graceful shutdown: SIGTERM stops accepting, a request in flight completes, then exit 0."""
import signal
import socket
import threading
import time

import requests

from conftest import accepts_connections, gateway_config


def test_request_in_flight_completes_then_exit_0(sluice, upstreams):
    up = upstreams(1)
    s = sluice(gateway_config([up.address]))
    idle = socket.create_connection(("127.0.0.1", s.gateway_port))  # keep-alive, no request
    result = {}

    def slow():
        start = time.monotonic()
        r = requests.get(s.url + "/slow?ms=1500", timeout=10)
        result["status"], result["body"] = r.status_code, r.text
        result["took"] = time.monotonic() - start

    t = threading.Thread(target=slow)
    t.start()
    time.sleep(0.4)  # in flight at the upstream
    s.proc.send_signal(signal.SIGTERM)
    time.sleep(0.2)
    refused = not accepts_connections(s.gateway_port)  # no longer accepting
    t.join(10)
    assert result.get("status") == 200 and result["body"] == "slow\n", result
    assert result["took"] >= 1.4
    assert s.proc.wait(timeout=8) == 0, s.stderr()
    assert refused
    # The idle keep-alive connection was closed, not left hanging.
    idle.settimeout(2)
    assert idle.recv(10) == b""
    idle.close()
