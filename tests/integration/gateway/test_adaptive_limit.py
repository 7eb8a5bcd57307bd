"""A route's adaptive_concurrency in the gateway: over the limit a request is refused at once
with 503 and never reaches the upstream; health checks (their own route) and the bypass list
are never limited; the limit's state shows in /metrics."""
import socket
import statistics
import time

from integration_support import wait_until
from test_client_abort import REQUEST, HoldingUpstream

CONFIG = """\
listen: 127.0.0.1:{{gateway}}
admin: 127.0.0.1:{{admin}}
workers: 2
trusted_proxies: [127.0.0.1]
upstreams:
  app: {{{{servers: [{upstream}]}}}}
routes:
  - name: health
    match: {{{{path_exact: /healthz}}}}
    respond: {{{{status: 200, body: "ok\\n"}}}}
  - name: api
    match: {{{{path_prefix: /}}}}
    upstream: app
    adaptive_concurrency:
      algorithm: aimd
      min_limit: 1
      initial: 2
      max_limit: 2
      bypass: [192.0.2.10]
"""


def ask(conn, head):
    """One request on a keep-alive connection; (status, seconds to the answer)."""
    t = time.perf_counter()
    conn.sendall(head)
    data = b""
    while b"\r\n\r\n" not in data:
        data += conn.recv(65536)
    head_end = data.index(b"\r\n\r\n") + 4
    length = int([l.split(b":")[1] for l in data[:head_end].split(b"\r\n")
                  if l.lower().startswith(b"content-length:")][0])
    while len(data) < head_end + length:
        data += conn.recv(65536)
    return int(data.split(b" ")[1]), time.perf_counter() - t


def test_over_the_limit_a_request_is_refused_at_once_and_never_reaches_the_upstream(sluice):
    up = HoldingUpstream()
    held = []
    try:
        s = sluice(CONFIG.format(upstream=up.address))
        for _ in range(2):  # the limit's two permits, held by requests the upstream sits on
            c = socket.create_connection(("127.0.0.1", s.gateway_port))
            c.sendall(REQUEST)
            held.append(c)
        wait_until(lambda: up.held == 2, timeout=5, what="two requests at the upstream")
        with socket.create_connection(("127.0.0.1", s.gateway_port), timeout=5) as c:
            answers = [ask(c, REQUEST) for _ in range(20)]
            assert {status for status, _ in answers} == {503}, answers
            # Answered by the gateway alone: a loopback round trip (well under 1 ms on an idle
            # machine; 5 ms leaves room for a loaded CI box).
            assert statistics.median(t for _, t in answers) < 0.005, answers
            assert ask(c, b"GET /healthz HTTP/1.1\r\nHost: app\r\n\r\n")[0] == 200
        time.sleep(0.1)
        assert up.held == 2, "a refused request reached the upstream"
        # A client on the bypass list (its address through a trusted proxy) still goes through.
        bypass = socket.create_connection(("127.0.0.1", s.gateway_port))
        bypass.sendall(b"GET /slow HTTP/1.1\r\nHost: app\r\nX-Forwarded-For: 192.0.2.10\r\n\r\n")
        held.append(bypass)
        wait_until(lambda: up.held == 3, timeout=5, what="the bypassed request at the upstream")
        assert s.metric("sluice_adaptive_limit", route="api") == 2
        assert s.metric("sluice_adaptive_in_flight", route="api") == 2
        assert s.metric("sluice_adaptive_shed_total", route="api", tier="0") == 20
        for c in held:
            c.close()
        wait_until(lambda: s.metric("sluice_adaptive_in_flight", route="api") == 0, timeout=3,
                   what="the permits back once the clients left")
    finally:
        for c in held:
            c.close()
        up.stop()
