"""Slow and oversized request bodies (hardening issue, item 4): a body must keep a pace
(timeouts.body between reads, http.min_body_rate on average) or get 408, as nginx's
client_body_timeout answers; bodies are read before an upstream connection is taken (unless the
route streams them), so slow clients hold none (more in test_body_buffering.py); a body over
http.max_body_size gets 413, from its Content-Length before it is read, or as a chunked body
streams past the limit."""
import socket
import time

import pytest

from gateway_conftest import gateway_config, raw_exchange as exchange


def config(upstream, body="1s", rate="1KiB/s", buffered="16MiB", max_size="0", buffering="on"):
    return gateway_config([upstream.address], route_extra=f"request_buffering: {buffering}",
                          extra=f"""\
timeouts:
  body: {body}
http:
  max_buffered_body: {buffered}
  max_body_size: {max_size}
  min_body_rate: {rate}""")


def post_head(length=None, extra=b""):
    framing = b"Transfer-Encoding: chunked\r\n" if length is None else \
        b"Content-Length: %d\r\n" % length
    return b"POST /upload HTTP/1.1\r\nHost: app.example\r\n" + framing + extra + b"\r\n"


def trickle(port, head, body, interval, timeout=10):
    """Sends `head`, then `body` a byte every `interval` seconds, reading meanwhile; returns
    (reply, seconds from the head to the reply's end or the connection's close)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(head)
        start = time.monotonic()
        s.settimeout(interval)
        out, sent = b"", 0
        while True:
            try:
                piece = s.recv(65536)
                if not piece:
                    break
                out += piece
            except socket.timeout:
                if sent < len(body):
                    try:
                        s.sendall(body[sent:sent + 1])
                    except OSError:
                        break
                    sent += 1
                elif time.monotonic() - start > timeout:
                    break
            except ConnectionResetError:
                break
            if out.endswith(b"\r\n\r\nok\n") or out.endswith(b"Timeout\n"):
                break
        return out, time.monotonic() - start


def test_a_body_below_the_minimum_rate_gets_408_and_is_never_forwarded(sluice, raw_upstream):
    up = raw_upstream()
    s = sluice(config(up, body="1s", rate="1KiB/s"))
    # A byte every 0.25 s: no pause reaches timeouts.body, but 4 B/s is far below 1 KiB/s.
    out, took = trickle(s.gateway_port, post_head(40), b"x" * 40, 0.25)
    assert out.startswith(b"HTTP/1.1 408 "), out
    assert b"Connection: close" in out
    # Due when timeouts.body has passed with fewer than rate * (t - 1 s) bytes in: about 1 s.
    assert 0.8 <= took < 3.0, took
    assert up.connections() == (0, 0), "the body was buffered: no upstream was ever asked"


def test_the_same_trickle_without_a_minimum_rate_is_served(sluice, raw_upstream):
    up = raw_upstream()
    s = sluice(config(up, body="1s", rate="0/s"))
    out, took = trickle(s.gateway_port, post_head(12), b"x" * 12, 0.25)
    assert out.startswith(b"HTTP/1.1 200 "), out
    assert took >= 2.5  # 12 bytes, a quarter of a second apart
    [(head, body)] = up.requests
    assert body == b"x" * 12


def test_a_pause_longer_than_the_body_timeout_gets_408(sluice, raw_upstream):
    up = raw_upstream()
    s = sluice(config(up, body="1s", rate="0/s"))
    with socket.create_connection(("127.0.0.1", s.gateway_port), timeout=8) as c:
        c.sendall(post_head(10) + b"hello")
        start = time.monotonic()
        out = b""
        while not out.endswith(b"Timeout\n"):
            piece = c.recv(65536)
            if not piece:
                break
            out += piece
        took = time.monotonic() - start
    assert out.startswith(b"HTTP/1.1 408 "), out
    assert 0.8 <= took < 3.0, took
    assert up.all_bytes() == b""


@pytest.mark.parametrize("buffering, held", [("on", 0), ("off", 200)],
                         ids=["buffered", "streamed"])
def test_slow_clients_hold_no_upstream_connection_while_their_bodies_are_buffered(
        sluice, raw_upstream, buffering, held):
    up = raw_upstream()
    s = sluice(config(up, body="10s", rate="0/s", buffering=buffering))
    clients = []
    for _ in range(200):
        c = socket.create_connection(("127.0.0.1", s.gateway_port), timeout=10)
        c.sendall(post_head(8) + b"a")  # 1 of 8 bytes, then nothing for a while
        clients.append(c)
    # Streamed, each request goes upstream with its first byte; buffered, none does.
    deadline = time.monotonic() + 5
    while up.connections()[1] < held and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)
    accepted, live = up.connections()
    print(f"\nrequest_buffering {buffering}: 200 clients with a byte of their bodies sent, "
          f"{live} upstream connections open")
    assert live == held and accepted == held
    for c in clients:
        c.sendall(b"bcdefgh")
    for c in clients:
        out = b""
        while not out.endswith(b"\r\n\r\nok\n"):
            piece = c.recv(65536)
            assert piece, out
            out += piece
        assert out.startswith(b"HTTP/1.1 200 "), out
        c.close()
    assert up.request_count() == 200
    assert all(body == b"abcdefgh" for _, body in up.requests)


def test_a_content_length_over_the_maximum_gets_413_before_the_body_is_read(sluice,
                                                                           raw_upstream):
    up = raw_upstream()
    s = sluice(config(up, max_size="1KiB"))
    out, closed = exchange(s.gateway_port, post_head(1025) + b"x" * 1025)
    assert out.startswith(b"HTTP/1.1 413 ") and closed, out
    # Expect: 100-continue: refused without inviting the body.
    out, closed = exchange(s.gateway_port, post_head(1 << 30, b"Expect: 100-continue\r\n"))
    assert out.startswith(b"HTTP/1.1 413 ") and b"100 Continue" not in out, out
    assert up.all_bytes() == b""
    out, _ = exchange(s.gateway_port, post_head(1024, b"Connection: close\r\n") + b"x" * 1024)
    assert out.startswith(b"HTTP/1.1 200 "), out
    assert [len(body) for _, body in up.requests] == [1024]


def chunked(total, chunk=512):
    out = b""
    while total > 0:
        n = min(chunk, total)
        out += b"%x\r\n%s\r\n" % (n, b"y" * n)
        total -= n
    return out + b"0\r\n\r\n"


def test_a_chunked_body_over_the_maximum_gets_413(sluice, raw_upstream):
    up = raw_upstream()
    s = sluice(config(up, max_size="4KiB"))
    out, closed = exchange(s.gateway_port, post_head() + chunked(4097))
    assert out.startswith(b"HTTP/1.1 413 ") and closed, out
    # Within the buffer: refused before any upstream is asked.
    assert up.connections()[0] == 0
    out, _ = exchange(s.gateway_port, post_head(None, b"Connection: close\r\n") + chunked(4096))
    assert out.startswith(b"HTTP/1.1 200 "), out
    assert [len(body) for _, body in up.requests] == [4096]


def test_a_streamed_chunked_body_over_the_maximum_is_cut_off_with_413(sluice, raw_upstream):
    up = raw_upstream()
    s = sluice(config(up, buffered="1KiB", max_size="4KiB"))
    with socket.create_connection(("127.0.0.1", s.gateway_port), timeout=5) as c:
        c.sendall(post_head() + chunked(2048)[:-5])  # past max_buffered_body: streaming began
        time.sleep(0.3)
        c.sendall(chunked(8192))
        out = b""
        try:
            while True:
                piece = c.recv(65536)
                if not piece:
                    break
                out += piece
        except ConnectionResetError:
            pass
    assert out.startswith(b"HTTP/1.1 413 "), out
    # The upstream saw the start of the body and then its connection close: no request.
    time.sleep(0.2)
    assert up.connections() == (1, 0)
    assert up.request_count() == 0
