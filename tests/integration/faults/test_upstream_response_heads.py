"""What the gateway relays of an upstream's response head, through either of its readers: the
hand-written scanner (one Content-Length, or no body) and Beast's parser (everything else:
chunked, a body to EOF, interim 1xx, a field name repeated after others, and every head with
something odd about its framing, which is refused as before). The client sees the same either
way, and an upstream connection goes back to the pool only when its response ended exactly
where its framing said."""
import pytest

from gateway_conftest import gateway_config, raw_exchange


def exchange(s, behaviour, method="GET"):
    """One request on a fresh client connection that asks to close: (head, body) as relayed."""
    out, closed = raw_exchange(s.gateway_port, f"{method} / HTTP/1.1\r\nHost: app\r\n"
                               f"X-Behaviour: {behaviour}\r\nConnection: close\r\n\r\n".encode())
    assert closed, out
    head, _, body = out.partition(b"\r\n\r\n")
    return head, body


def lines(head):
    return head.split(b"\r\n")


@pytest.fixture
def gateway(sluice, raw_upstream):
    up = raw_upstream()
    return sluice(gateway_config([up.address])), up


def test_a_length_response_is_relayed_less_its_hop_fields_and_its_connection_reused(gateway):
    s, up = gateway
    up.scripts["plain"] = (b"HTTP/1.1 200 OK\r\nServer: raw\r\nConnection: X-Hop, keep-alive\r\n"
                           b"X-Hop: 1\r\nKeep-Alive: timeout=5\r\nSet-Cookie: a=1\r\n"
                           b"set-cookie: b=2\r\nContent-Length: 5\r\n\r\nhello")
    for _ in range(3):
        head, body = exchange(s, "script:plain")
        got = lines(head)
        assert got[0] == b"HTTP/1.1 200 OK" and body == b"hello"
        assert b"Server: raw" in got and b"Content-Length: 5" in got
        assert [g for g in got if g.lower().startswith(b"set-cookie")] == [
            b"Set-Cookie: a=1", b"set-cookie: b=2"]
        assert not [g for g in got if g.startswith((b"X-Hop", b"Keep-Alive"))], got
    assert up.connections()[0] == 1, "the upstream connection was not pooled and reused"


def test_bytes_past_the_length_keep_the_connection_out_of_the_pool(gateway):
    s, up = gateway
    up.scripts["extra"] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokSURPLUS"
    head, body = exchange(s, "script:extra")
    assert lines(head)[0] == b"HTTP/1.1 200 OK" and body == b"ok"
    head, body = exchange(s, "ok")
    assert body == b"ok\n"
    assert up.connections()[0] == 2, "a connection with unread bytes went back to the pool"


def test_heads_without_a_body_keep_their_length_and_their_connection(gateway):
    s, up = gateway
    up.scripts["head"] = b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\nETag: \"e\"\r\n\r\n"
    up.scripts["nothing"] = b"HTTP/1.1 204 No Content\r\nServer: raw\r\n\r\n"
    up.scripts["same"] = b"HTTP/1.1 304 Not Modified\r\nETag: \"e\"\r\n\r\n"
    head, body = exchange(s, "script:head", method="HEAD")
    assert b"Content-Length: 99" in lines(head) and body == b""
    head, body = exchange(s, "script:nothing")
    assert lines(head)[0] == b"HTTP/1.1 204 No Content" and body == b""
    head, body = exchange(s, "script:same")
    assert lines(head)[0] == b"HTTP/1.1 304 Not Modified" and body == b""
    assert up.connections()[0] == 1


def test_a_body_cut_short_of_its_length_is_a_cut_response_and_a_closed_connection(gateway):
    s, up = gateway
    up.scripts["short-close"] = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"
    head, body = exchange(s, "script:short-close")
    assert b"Content-Length: 10" in lines(head) and body == b"abc"
    assert s.metric("sluice_upstream_failures_total") >= 1


def test_a_head_cut_short_is_502(gateway):
    s, up = gateway
    up.scripts["cut-close"] = b"HTTP/1.1 200 OK\r\nContent-Le"
    head, body = exchange(s, "script:cut-close")
    assert lines(head)[0] == b"HTTP/1.1 502 Bad Gateway" and body == b"Bad Gateway\n"


# Heads the scanner leaves to Beast: relayed (or refused) as they were before it.
@pytest.mark.parametrize("name, answer, status, want", [
    ("chunked", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
     b"HTTP/1.1 200 OK", b"5\r\nhello\r\n0\r\n\r\n"),
    ("eof-close", b"HTTP/1.0 200 OK\r\nServer: old\r\n\r\nhello", b"HTTP/1.1 200 OK",
     b"5\r\nhello\r\n0\r\n\r\n"),
    ("hints", b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
              b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", b"HTTP/1.1 200 OK", b"hello"),
    ("te-and-length-close", b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"
                            b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
     b"HTTP/1.1 502 Bad Gateway", b"Bad Gateway\n"),
    ("two-lengths-close", b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n"
                          b"hello!", b"HTTP/1.1 502 Bad Gateway", b"Bad Gateway\n"),
    ("bare-lf-close", b"HTTP/1.1 200 OK\nContent-Length: 5\n\nhello",
     b"HTTP/1.1 502 Bad Gateway", b"Bad Gateway\n"),
])
def test_heads_left_to_the_parser_are_relayed_or_refused_as_before(gateway, name, answer,
                                                                   status, want):
    s, up = gateway
    up.scripts[name] = answer
    head, body = exchange(s, "script:" + name)
    assert lines(head)[0] == status and body == want, (head, body)
    if status.endswith(b"200 OK") and name != "hints":
        assert b"Transfer-Encoding: chunked" in lines(head)


def test_a_name_repeated_after_other_fields_is_grouped_as_beast_groups_it(gateway):
    s, up = gateway
    up.scripts["apart"] = (b"HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nServer: raw\r\n"
                           b"Set-Cookie: b=2\r\nContent-Length: 2\r\n\r\nok")
    head, body = exchange(s, "script:apart")
    got = lines(head)
    assert got.index(b"Set-Cookie: b=2") == got.index(b"Set-Cookie: a=1") + 1, got
    assert b"Server: raw" in got and body == b"ok"


def test_a_head_that_trickles_in_over_many_reads_is_relayed_whole(gateway):
    # 8 bytes every 5 ms: more reads than the scanner tries before Beast's parser, which resumes
    # where it stopped, takes over; the client sees the head and body as sent.
    s, up = gateway
    up.scripts["slow-head"] = (b"HTTP/1.1 200 OK\r\nServer: raw\r\nX-Trickle: " + b"t" * 40 +
                               b"\r\nContent-Length: 5\r\n\r\nhello")
    head, body = exchange(s, "trickle:slow-head")
    got = lines(head)
    assert got[0] == b"HTTP/1.1 200 OK" and b"X-Trickle: " + b"t" * 40 in got, got
    assert b"Content-Length: 5" in got and body == b"hello"


def test_more_fields_than_the_scanner_holds_are_relayed_by_the_parser(gateway):
    s, up = gateway
    fields = b"".join(b"X-F%d: %d\r\n" % (i, i) for i in range(100))  # the scanner holds 64
    up.scripts["many"] = b"HTTP/1.1 200 OK\r\n" + fields + b"Content-Length: 2\r\n\r\nok"
    head, body = exchange(s, "script:many")
    got = lines(head)
    assert all(b"X-F%d: %d" % (i, i) in got for i in range(100)) and body == b"ok"


def test_a_head_over_32_kib_is_refused_as_before(gateway):
    s, up = gateway
    up.scripts["huge-close"] = (b"HTTP/1.1 200 OK\r\nX-Big: " + b"b" * (40 * 1024) +
                                b"\r\nContent-Length: 2\r\n\r\nok")
    head, body = exchange(s, "script:huge-close")
    assert lines(head)[0] == b"HTTP/1.1 502 Bad Gateway" and body == b"Bad Gateway\n"
