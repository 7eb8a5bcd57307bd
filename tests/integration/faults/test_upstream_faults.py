"""An upstream that fails: down (502 at once, not after the connect timeout), slow (504 at the
upstream timeout, and its late answer never reaches anyone), resetting mid-response (the
client gets what was relayed and a closed connection, never a response that looks whole), or
answering what is not HTTP (502). After each, the gateway serves the next request."""
import socket
import time

import requests

from gateway_conftest import gateway_config, raw_exchange


def get(s, behaviour="ok", timeout=10):
    start = time.monotonic()
    r = requests.get(s.url + "/", headers={"X-Behaviour": behaviour}, timeout=timeout)
    return r, time.monotonic() - start


def test_an_upstream_that_is_down_gets_502_at_once(sluice):
    # A port bound but not listening: connections to it are refused, and no other process
    # can take it meanwhile (a closed port could be handed to the next bind).
    down = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    down.bind(("127.0.0.1", 0))
    address = "127.0.0.1:%d" % down.getsockname()[1]
    s = sluice(gateway_config([address], timeouts="timeouts: {{connect: 5s}}"))
    took = []
    for _ in range(20):
        r, t = get(s)
        assert r.status_code == 502 and r.text == "Bad Gateway\n"
        took.append(t)
    down.close()
    print(f"\n20 requests to a refused upstream: 502 in at most {max(took) * 1e3:.1f} ms")
    assert max(took) < 1.0, "a refused connection must not wait for the 5 s connect timeout"


def test_a_slow_upstream_gets_504_at_the_upstream_timeout(sluice, raw_upstream):
    up = raw_upstream()
    s = sluice(gateway_config([up.address], timeouts="timeouts: {{upstream: 1s}}"))
    r, took = get(s, "slow:2500")
    assert r.status_code == 504 and r.text == "Gateway Timeout\n"
    assert 0.9 <= took < 2.0, took
    # The late answer (2.5 s) died with its connection; the next client gets its own.
    time.sleep(2.0)
    r, took = get(s, "ok")
    assert r.status_code == 200 and r.text == "ok\n" and took < 1.0
    assert up.request_count() == 2


def test_an_upstream_resetting_mid_response_leaves_a_visibly_cut_response(sluice,
                                                                          raw_upstream):
    up = raw_upstream()
    s = sluice(gateway_config([up.address]))
    out, closed = raw_exchange(s.gateway_port, b"GET / HTTP/1.1\r\nHost: app\r\n"
                               b"X-Behaviour: reset\r\n\r\n")
    head, _, body = out.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ") and b"Content-Length: 100000" in head, out
    # The 10 bytes relayed before the reset, then the connection closed: short of its length.
    assert body == b"x" * 10 and closed
    assert s.metric("sluice_upstream_failures_total") >= 1
    r, _ = get(s, "ok")
    assert r.status_code == 200 and r.text == "ok\n"


def test_an_upstream_answering_what_is_not_http_gets_502(sluice, raw_upstream):
    up = raw_upstream()
    s = sluice(gateway_config([up.address]))
    r, _ = get(s, "malformed")
    assert r.status_code == 502 and r.text == "Bad Gateway\n"
    r, _ = get(s, "close")  # closes without a word: nothing to relay either
    assert r.status_code == 502
    r, _ = get(s, "ok")
    assert r.status_code == 200 and r.text == "ok\n"
    assert up.request_count() == 3
