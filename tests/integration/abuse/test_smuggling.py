"""Request smuggling: every head whose body two readers could delimit differently is refused
(400, or 501 for a transfer coding sluice does not implement, as nginx 1.22 answers), the
connection is closed, and not one byte of it reaches the upstream — checked by an upstream on a
raw socket that records every byte it receives (hardening issue, item 3)."""
import time

import pytest

from gateway_conftest import raw_exchange as exchange

CONFIG = """\
listen: 127.0.0.1:{{gateway}}
admin: 127.0.0.1:{{admin}}
workers: 1
upstreams:
  app: {{{{servers: [{upstream}]}}}}
routes:
  - name: all
    match: {{{{path_prefix: /}}}}
    upstream: app
"""

POST = b"POST /upload HTTP/1.1\r\nHost: app.example\r\n"
# What a smuggler hides in a body: a request the upstream would serve as its own.
SMUGGLED = b"GET /admin HTTP/1.1\r\nHost: app.example\r\n\r\n"

CASES = {
    # Transfer-Encoding that is not exactly "chunked".
    "te-chunked-identity": (POST + b"Transfer-Encoding: chunked, identity\r\n\r\n" + SMUGGLED,
                            400),
    "te-chunked-identity-and-length": (
        POST + b"Transfer-Encoding: chunked, identity\r\nContent-Length: 4\r\n\r\n" +
        b"0\r\n\r\n" + SMUGGLED, 400),
    "te-chunked-then-identity-line": (
        POST + b"Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n" + SMUGGLED,
        400),
    "te-chunked-twice": (POST + b"Transfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n", 400),
    "te-xchunked": (POST + b"Transfer-Encoding: xchunked\r\n\r\n" + SMUGGLED, 501),
    "te-identity": (POST + b"Transfer-Encoding: identity\r\n\r\n" + SMUGGLED, 501),
    "te-gzip-chunked": (POST + b"Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501),
    "te-on-http10": (b"POST /upload HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"
                     b"5\r\nhello\r\n0\r\n\r\n", 400),
    # Both framings, in either order.
    "cl-then-te": (POST + b"Content-Length: 48\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" +
                   SMUGGLED, 400),
    "te-then-cl": (POST + b"Transfer-Encoding: chunked\r\nContent-Length: 48\r\n\r\n0\r\n\r\n" +
                   SMUGGLED, 400),
    # Content-Length given twice, agreeing or not, or as a list.
    "cl-twice-same": (POST + b"Content-Length: 5\r\nContent-Length: 5\r\n\r\nhello", 400),
    "cl-twice-conflicting": (POST + b"Content-Length: 0\r\nContent-Length: 44\r\n\r\n" +
                             SMUGGLED, 400),
    "cl-list": (POST + b"Content-Length: 5, 5\r\n\r\nhello", 400),
    "cl-signed": (POST + b"Content-Length: +5\r\n\r\nhello", 400),
    # Chunk sizes that are not plain hex, or lie about their chunk.
    "chunk-size-not-hex": (POST + b"Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
                           400),
    "chunk-size-0x": (POST + b"Transfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n", 400),
    "chunk-size-negative": (POST + b"Transfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n",
                            400),
    "chunk-size-overflow": (POST + b"Transfer-Encoding: chunked\r\n\r\n1" + b"0" * 16 +
                            b"\r\nhello\r\n0\r\n\r\n", 400),
    "chunk-shorter-than-sent": (POST + b"Transfer-Encoding: chunked\r\n\r\n3\r\nhello\r\n"
                                b"0\r\n\r\n", 400),
    "second-chunk-bad": (POST + b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\n"
                         b"0\r\n\r\n", 400),
    # Obsolete line folding.
    "obs-fold": (b"GET / HTTP/1.1\r\nHost: app.example\r\nX-A: b\r\n c\r\n\r\n", 400),
    "obs-fold-te": (POST + b"Transfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n" + SMUGGLED, 400),
    # Bare LF line endings.
    "bare-lf-everywhere": (b"GET / HTTP/1.1\nHost: app.example\n\n", 400),
    "bare-lf-request-line": (b"GET / HTTP/1.1\nHost: app.example\r\n\r\n", 400),
    "bare-lf-field": (b"GET / HTTP/1.1\r\nHost: app.example\nX-A: b\r\n\r\n", 400),
    "bare-cr-field": (b"GET / HTTP/1.1\r\nHost: app.example\rX-A: b\r\n\r\n", 400),
    # NUL and other control bytes in a field.
    "nul-in-value": (b"GET / HTTP/1.1\r\nHost: app.example\r\nX-A: b\x00c\r\n\r\n", 400),
    "nul-in-name": (b"GET / HTTP/1.1\r\nHost: app.example\r\nX\x00A: b\r\n\r\n", 400),
    "control-in-value": (b"GET / HTTP/1.1\r\nHost: app.example\r\nX-A: b\x01c\r\n\r\n", 400),
    "del-in-value": (b"GET / HTTP/1.1\r\nHost: app.example\r\nX-A: b\x7fc\r\n\r\n", 400),
}


@pytest.fixture
def gateway(sluice, raw_upstream):
    up = raw_upstream()
    return sluice(CONFIG.format(upstream=up.address)), up


def test_the_recording_upstream_sees_the_exact_bytes_of_a_sound_request(gateway):
    s, up = gateway
    out, _ = exchange(s.gateway_port, POST + b"Content-Length: 5\r\nConnection: close\r\n\r\n"
                      b"hello")
    assert out.startswith(b"HTTP/1.1 200 "), out
    [(head, body)] = up.requests
    assert head.startswith(b"POST /upload HTTP/1.1\r\nHost: app.example\r\n")
    assert b"Content-Length: 5\r\n" in head and body == b"hello"
    assert up.all_bytes() == head + body


@pytest.mark.parametrize("name", CASES)
def test_an_ambiguous_request_is_refused_and_never_forwarded(gateway, name):
    s, up = gateway
    data, status = CASES[name]
    out, closed = exchange(s.gateway_port, data)
    assert out.startswith(b"HTTP/1.1 %d " % status), out
    assert b"\r\nConnection: close\r\n" in out
    assert closed, "the connection must close: what follows the head cannot be trusted"
    # One reply, not two: nothing after the head was read as a request of its own.
    assert out.count(b"HTTP/1.1 ") == 1, out
    time.sleep(0.05)  # what the gateway would have sent has surely arrived by now
    assert up.all_bytes() == b"", f"forwarded: {up.all_bytes()!r}"
    # The gateway is unharmed: the next connection is served.
    out, _ = exchange(s.gateway_port, b"GET /ok HTTP/1.1\r\nHost: app.example\r\n"
                      b"Connection: close\r\n\r\n")
    assert out.startswith(b"HTTP/1.1 200 "), out
    assert [head.split(b" ")[1] for head, _ in up.requests] == [b"/ok"]
