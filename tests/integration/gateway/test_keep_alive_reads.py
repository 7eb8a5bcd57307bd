"""Once a read has emptied a client's socket, the gateway waits for the next request on epoll's
event rather than asking the kernel first (src/server/gateway/edge_read.hpp). Nothing may be
missed that way: every request of a keep-alive connection is answered at once however it
arrives, and a client that half-closes after its last request gets its answers and then the
close at once, not at the idle timeout (a FIN that came with the last bytes read)."""
import socket
import time

import pytest

from conftest import gateway_config, rule_config

# Timeouts far above what a test waits for an answer: a missed event shows as a wait this long.
LONG = "timeouts: {{header: 30s, idle: 30s}}"
PATIENCE = 3.0  # seconds a test waits for one answer or the close


def read_response(c, buf=b""):
    """One response (Content-Length framed) from `c`; returns (head, body, bytes left over)."""
    while b"\r\n\r\n" not in buf:
        piece = c.recv(65536)
        assert piece, f"closed before a whole head: {buf!r}"
        buf += piece
    head, _, rest = buf.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(rest) < length:
        piece = c.recv(65536)
        assert piece, "closed inside a body"
        rest += piece
    return head, rest[:length], rest[length:]


def status(head):
    return int(head.split(b" ", 2)[1])


def closed_within(c, seconds):
    """Whether the server closes `c` (EOF or reset) within `seconds`, nothing more sent."""
    c.settimeout(seconds)
    try:
        return c.recv(65536) == b""
    except socket.timeout:
        return False
    except ConnectionResetError:
        return True


@pytest.fixture(params=["proxied", "refused"])
def gateway(request, sluice, upstreams):
    """A sluice whose route forwards every request, or refuses all but the first."""
    up = upstreams(1)
    if request.param == "proxied":
        s = sluice(gateway_config([up.address], timeouts=LONG))
        s.want = 200
    else:
        s = sluice(rule_config(up, "one", "fixed-window:limit=1,window=1h", extra=LONG))
        s.want = 429
    s.up = up
    return s


def test_every_request_of_a_keep_alive_connection_is_answered_at_once(gateway):
    with socket.create_connection(("127.0.0.1", gateway.gateway_port), timeout=PATIENCE) as c:
        statuses = []
        # Through the test's Python upstream a request takes a delayed ACK's 40 ms: fewer there.
        for i in range(300 if gateway.want == 429 else 40):
            if i % 10 == 1:
                time.sleep(0.05)  # the gateway has long waited for this one when it comes
            c.sendall(b"GET /r%d HTTP/1.1\r\nHost: app\r\n\r\n" % i)
            head, _, left = read_response(c)
            assert left == b""
            statuses.append(status(head))
    assert statuses[0] == 200
    assert set(statuses[1:]) == {gateway.want}


def test_a_request_sent_in_pieces_is_answered_when_its_last_piece_comes(gateway):
    request = b"GET /pieces HTTP/1.1\r\nHost: app\r\nX-One: 1\r\n\r\n"
    with socket.create_connection(("127.0.0.1", gateway.gateway_port), timeout=PATIENCE) as c:
        for _ in range(3):  # the first on a fresh connection, then on a kept-alive one
            cuts = (0, 5, 20, 31, len(request))  # in the request line, a name, a field, the end
            for a, b in zip(cuts, cuts[1:]):
                c.sendall(request[a:b])
                time.sleep(0.05)
            head, _, left = read_response(c)
            assert left == b""
            assert status(head) in (200, 429)


def test_requests_sent_together_are_all_answered(gateway):
    together = b"".join(b"GET /p%d HTTP/1.1\r\nHost: app\r\n\r\n" % i for i in range(5))
    with socket.create_connection(("127.0.0.1", gateway.gateway_port), timeout=PATIENCE) as c:
        c.sendall(together)
        buf, statuses = b"", []
        for _ in range(5):
            head, _, buf = read_response(c, buf)
            statuses.append(status(head))
        assert buf == b""
        assert statuses == [200] + [gateway.want] * 4
        # Then the connection waits for more, and answers it.
        c.sendall(b"GET /after HTTP/1.1\r\nHost: app\r\n\r\n")
        head, _, _ = read_response(c)
        assert status(head) == gateway.want


def test_more_requests_than_one_read_takes_are_all_answered(sluice, upstreams):
    # 2,000 requests (about 150 KiB) sent at once, all but the first refused (answered here, at
    # once): the socket holds more than a read takes (64 KiB), so reads that leave bytes behind
    # must not wait for an event.
    s = sluice(rule_config(upstreams(1), "one", "fixed-window:limit=1,window=1h", extra=LONG))
    n = 2000
    together = b"".join(b"GET /batch/%06d HTTP/1.1\r\nHost: app\r\nX-Pad: %s\r\n\r\n"
                        % (i, b"p" * 30) for i in range(n))
    with socket.create_connection(("127.0.0.1", s.gateway_port), timeout=PATIENCE) as c:
        c.sendall(together)
        buf, statuses = b"", []
        for _ in range(n):
            head, _, buf = read_response(c, buf)
            statuses.append(status(head))
        assert buf == b""
        assert statuses == [200] + [429] * (n - 1)


def test_a_client_that_half_closes_after_its_request_gets_the_answer_and_the_close(
        sluice, upstreams):
    # Answered locally: a half-close while a request waits on the upstream is an abort (as
    # nginx's proxy_ignore_client_abort off), test_client_abort.py. The FIN comes right behind
    # the request, often in the socket by the time the gateway reads the request, so that the
    # read that empties the socket has taken the FIN's event too.
    s = sluice(rule_config(upstreams(1), "one", "fixed-window:limit=1,window=1h", extra=LONG))
    with socket.create_connection(("127.0.0.1", s.gateway_port), timeout=PATIENCE) as c:
        c.sendall(b"GET /spend HTTP/1.1\r\nHost: app\r\n\r\n")
        assert status(read_response(c)[0]) == 200
    for i in range(20):
        with socket.create_connection(("127.0.0.1", s.gateway_port), timeout=PATIENCE) as c:
            if i % 2:  # the second request of a connection: the gateway waits on epoll for it
                c.sendall(b"GET /first HTTP/1.1\r\nHost: app\r\n\r\n")
                read_response(c)
            c.sendall(b"GET /last HTTP/1.1\r\nHost: app\r\n\r\n")
            c.shutdown(socket.SHUT_WR)
            head, _, left = read_response(c)
            assert status(head) == 429
            assert left == b""
            assert closed_within(c, PATIENCE), "the gateway missed the client's FIN"


def test_a_fin_queued_behind_the_next_request_closes_the_connection_after_its_answer(
        sluice, upstreams):
    # The next request and the FIN both reach the socket while the first request waits on a
    # slow upstream (the abort watch sees the request's bytes and stands down): the read that
    # takes that request finds the FIN queued behind it, and no event will come for the FIN.
    s = sluice(rule_config(upstreams(1), "one", "fixed-window:limit=1,window=1h", extra=LONG))
    with socket.create_connection(("127.0.0.1", s.gateway_port), timeout=PATIENCE) as c:
        c.sendall(b"GET /slow?ms=300 HTTP/1.1\r\nHost: app\r\n\r\n")
        time.sleep(0.1)
        c.sendall(b"GET /next HTTP/1.1\r\nHost: app\r\n\r\n")
        c.shutdown(socket.SHUT_WR)
        head, body, left = read_response(c)
        assert (status(head), body) == (200, b"slow\n")
        head, _, left = read_response(c, left)
        assert status(head) == 429
        assert left == b""
        started = time.monotonic()
        assert closed_within(c, PATIENCE), "the gateway missed the client's FIN"
        assert time.monotonic() - started < 1.0
