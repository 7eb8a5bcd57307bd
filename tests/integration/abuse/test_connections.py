"""Connections that cost the gateway without paying: slowloris (heads and bodies trickled a
piece at a time), thousands of idle keep-alive connections, and heads too large to hold. Each
is bounded by a timeout or a size, answered as nginx answers it, and costs the clients that
behave nothing they can notice."""
import json
import os
import selectors
import socket
import subprocess
import time

import requests

from gateway_conftest import gateway_config, raw_exchange

HERE = os.path.dirname(os.path.abspath(__file__))


def config(upstream, timeouts):
    return gateway_config([upstream.address], timeouts="timeouts:\n" + timeouts)


def latencies(url, n, rate):
    """Seconds per request of `n` GETs on one keep-alive connection, paced at `rate` per second;
    fails the test on any answer but 200."""
    out = []
    with requests.Session() as session:
        next_at = time.monotonic()
        for _ in range(n):
            next_at += 1.0 / rate
            start = time.monotonic()
            r = session.get(url, timeout=5)
            out.append(time.monotonic() - start)
            assert r.status_code == 200, r.status_code
            time.sleep(max(0.0, next_at - time.monotonic()))
    return sorted(out)


def quantile(sorted_values, q):
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def test_1000_slowloris_connections_cost_a_normal_client_nothing(sluice, raw_upstream):
    up = raw_upstream()
    s = sluice(config(up, "  header: 6s\n  body: 6s"))
    base = latencies(s.url + "/", 300, 100)

    attack = subprocess.Popen(
        ["/usr/bin/python3", os.path.join(HERE, "slowloris.py"), str(s.gateway_port), "1000",
         "0.5", "20"], stdout=subprocess.PIPE, text=True)
    try:
        assert attack.stdout.readline().strip() == "ready 1000"
        opened = time.monotonic()
        under = latencies(s.url + "/", 300, 100)
        measured = time.monotonic() - opened
        open_now = s.metric("sluice_gateway_open_connections")
        upstream_live = up.connections()[1]
        summary = json.loads(attack.communicate(timeout=30)[0])
    finally:
        attack.kill()
    p50, p99 = quantile(base, 0.5), quantile(base, 0.99)
    a50, a99 = quantile(under, 0.5), quantile(under, 0.99)
    closed = sorted(summary["closed"])
    print(f"\nbaseline: p50 {p50 * 1e3:.2f} ms, p99 {p99 * 1e3:.2f} ms; beside 1000 slowloris "
          f"connections: p50 {a50 * 1e3:.2f} ms, p99 {a99 * 1e3:.2f} ms; {open_now:.0f} client "
          f"connections open, {upstream_live} upstream; the attackers were cut after "
          f"{closed[0]:.2f}-{closed[-1]:.2f} s, replies {summary['replies']}")
    # The attack was in place throughout the measurement...
    assert measured < closed[0], "the measurement outlasted the attack"
    assert open_now >= 1000
    # ...and the normal client noticed nothing worth the name (same machine, same load).
    assert a50 <= 2 * p50 + 0.005, (p50, a50)
    assert a99 <= 3 * p99 + 0.050, (p99, a99)
    # The trickled bodies were buffered: they held no upstream connection (the client's one).
    assert upstream_live <= 1
    # Every attacker was cut at its timeout (6 s for its head or its body), not before.
    assert len(closed) == 1000
    assert 5.5 <= closed[0] and closed[-1] <= 9.0, (closed[0], closed[-1])
    # Heads timed out are closed without a word (as nginx); bodies get 408.
    assert summary["replies"] == {"HTTP/1.1 408 Request Timeout": 500}
    assert up.request_count() == 600


def test_thousands_of_idle_keep_alive_connections_close_at_the_idle_timeout(sluice,
                                                                          raw_upstream):
    up = raw_upstream()
    s = sluice(config(up, "  idle: 3s"))
    n = 3000
    sel = selectors.DefaultSelector()
    answered = {}
    for i in range(n):
        c = socket.create_connection(("127.0.0.1", s.gateway_port), timeout=5)
        c.sendall(b"GET /%d HTTP/1.1\r\nHost: app.example\r\n\r\n" % i)
        out = b""
        while not out.endswith(b"\r\n\r\nok\n"):
            out += c.recv(65536)
        assert out.startswith(b"HTTP/1.1 200 "), out
        answered[c] = time.monotonic()  # idle from here on, kept alive
        c.setblocking(False)
        sel.register(c, selectors.EVENT_READ)
    all_answered = time.monotonic()
    open_then = s.metric("sluice_gateway_open_connections")
    idle_for = []
    while len(idle_for) < n and time.monotonic() - all_answered < 10:
        for key, _ in sel.select(timeout=0.5):
            c = key.fileobj
            assert c.recv(100) == b"", "an idle connection must close without a word"
            idle_for.append(time.monotonic() - answered[c])
            sel.unregister(c)
            c.close()
    idle_for.sort()
    print(f"\n{n} keep-alive connections idle after one request each ({open_then:.0f} open "
          f"when the last was answered, {all_answered - min(answered.values()):.1f} s after "
          f"the first); closed after {idle_for[0]:.2f}-{idle_for[-1]:.2f} s idle")
    assert open_then >= 1000, "thousands must have been idle at once"
    assert len(idle_for) == n, f"{n - len(idle_for)} were still open 10 s after the last reply"
    # idle: 3s, read from the kernel's coarse clock: a few ms early at most, late by the load.
    assert idle_for[0] >= 2.9 and idle_for[-1] <= 5.0, (idle_for[0], idle_for[-1])
    assert s.metric("sluice_gateway_open_connections") == 0
    assert up.request_count() == n


def test_oversized_targets_and_heads_get_414_and_431_and_are_never_forwarded(sluice,
                                                                          raw_upstream):
    up = raw_upstream()
    s = sluice(config(up, "  header: 5s"))
    port = s.gateway_port

    def status(target=b"/", fields=b""):
        out, closed = raw_exchange(port, b"GET " + target + b" HTTP/1.1\r\nHost: app.example\r\n"
                                   + fields + b"Connection: close\r\n\r\n")
        assert closed, out
        return int(out.split(b" ", 2)[1])

    # The target: 8 KiB is served, a byte more is 414, however long it grows.
    assert status(b"/" + b"a" * 8191) == 200
    assert status(b"/" + b"a" * 8192) == 414
    assert status(b"/" + b"a" * (1 << 20)) == 414
    # The head: 32 KiB in all, however it is cut into fields.
    assert status(fields=b"X-Big: " + b"v" * 30000 + b"\r\n") == 200
    assert status(fields=b"X-Big: " + b"v" * 33000 + b"\r\n") == 431
    assert status(fields=b"".join(b"X-F%d: %s\r\n" % (i, b"v" * 100) for i in range(400))) == 431
    assert status(fields=b"X-Big: " + b"v" * (1 << 20) + b"\r\n") == 431
    forwarded = [head.split(b" ")[1][:8] for head, _ in up.requests]
    assert forwarded == [b"/" + b"a" * 7, b"/"], forwarded
