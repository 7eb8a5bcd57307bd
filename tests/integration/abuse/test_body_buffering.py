"""Request bodies are buffered before an upstream connection is taken, as nginx buffers them
(proxy_request_buffering on, client_body_buffer_size, client_body_temp_path): the first
http.body_buffer bytes in memory, the rest in an unlinked temporary file, up to
http.max_buffered_body; a route with request_buffering: off streams them (hardening issue 16,
item 4: 50 clients trickling `Content-Length: 100000` bodies held 51 upstream connections)."""
import hashlib
import os
import socket
import time

from gateway_conftest import gateway_config, pattern


def config(upstream, http="", buffering="on", body="60s"):
    return gateway_config([upstream.address], route_extra=f"request_buffering: {buffering}",
                          extra=f"timeouts: {{{{body: {body}}}}}\nhttp: {{{{{http}}}}}")


def post_head(length=None, extra=b""):
    framing = b"Transfer-Encoding: chunked\r\n" if length is None else \
        b"Content-Length: %d\r\n" % length
    return b"POST /upload HTTP/1.1\r\nHost: app.example\r\n" + framing + extra + b"\r\n"


def chunked(data, chunk=1000):
    out = b"".join(b"%x\r\n%s\r\n" % (len(data[i:i + chunk]), data[i:i + chunk])
                   for i in range(0, len(data), chunk))
    return out + b"0\r\n\r\n"


def read_reply(c):
    """Reads until the raw upstream's answer ("ok\n") has come, or the connection closes."""
    out = b""
    while not out.endswith(b"\r\n\r\nok\n"):
        piece = c.recv(65536)
        if not piece:
            break
        out += piece
    return out


def forwarded(c, up):
    """Reads the reply on `c`, which must be 200; the one request the upstream got."""
    out = read_reply(c)
    assert out.startswith(b"HTTP/1.1 200 "), out
    [request] = up.requests
    return request


def wait_for(predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.02)
    return predicate()


def sha(data):
    return hashlib.sha256(data).hexdigest()


def held_files(pid, directory):
    """The temporary files sluice holds open in `directory`, as /proc/PID/fd shows them."""
    out = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(directory) + "/"):
            out.append(target)
    return out


def test_50_clients_trickling_bodies_hold_no_upstream_connection(sluice, raw_upstream):
    up = raw_upstream()
    # The defaults: body_buffer 64KiB, max_buffered_body 16MiB, min_body_rate 1KiB/s.
    s = sluice(gateway_config([up.address]))
    bodies = [pattern(100000)[i:] + pattern(i) for i in range(50)]  # 50 different bodies
    clients = []
    for body in bodies:
        c = socket.create_connection(("127.0.0.1", s.gateway_port), timeout=10)
        c.sendall(post_head(100000) + body[:1])
        clients.append(c)
    # A byte every 0.5 s from each, for 3 s: the trickle, faster. Before, each client
    # held an upstream connection from its first byte.
    most_open = 0
    for sent in range(2, 8):
        time.sleep(0.5)
        for c, body in zip(clients, bodies):
            c.sendall(body[sent - 1:sent])
        most_open = max(most_open, up.connections()[1])
    accepted, live = up.connections()
    print(f"\n50 clients 7 bytes into 100000-byte bodies: {accepted} upstream connections "
          f"made, at most {most_open} open at once")
    assert (accepted, most_open) == (0, 0)
    # The rest of each body, at once: 50 requests forwarded whole, each with its own bytes.
    for c, body in zip(clients, bodies):
        c.sendall(body[7:])
    for c in clients:
        out = read_reply(c)
        assert out.startswith(b"HTTP/1.1 200 "), out
        c.close()
    assert up.request_count() == 50
    assert sorted(sha(body) for _, body in up.requests) == sorted(sha(b) for b in bodies)
    assert all(b"Content-Length: 100000\r\n" in head for head, _ in up.requests)


def test_a_body_over_the_memory_buffer_waits_in_an_unlinked_file_and_arrives_intact(
        sluice, raw_upstream, tmp_path):
    up = raw_upstream()
    spool = tmp_path / "bodies"
    spool.mkdir()
    s = sluice(config(up, http=f"body_buffer: 16KiB, body_temp_dir: {spool}"))
    body = os.urandom(1 << 20)  # 1 MiB: 16 KiB in memory, the rest in the file
    with socket.create_connection(("127.0.0.1", s.gateway_port), timeout=10) as c:
        c.sendall(post_head(len(body)) + body[:600000])
        # 600000 bytes in, the client pauses: sluice holds them in a file with no name, and
        # no upstream has been asked.
        assert wait_for(lambda: held_files(s.proc.pid, spool))
        time.sleep(0.3)
        [name] = held_files(s.proc.pid, spool)
        assert name.endswith(" (deleted)") or "/#" in name, name  # O_TMPFILE: "/dir/#1234"
        assert os.listdir(spool) == []
        assert up.connections() == (0, 0)
        c.sendall(body[600000:])
        head, got = forwarded(c, up)
    assert b"Content-Length: 1048576\r\n" in head
    assert len(got) == len(body) and sha(got) == sha(body)
    # The file goes with the request.
    assert wait_for(lambda: held_files(s.proc.pid, spool) == [])


def test_request_buffering_off_streams_the_body_as_it_comes(sluice, raw_upstream):
    up = raw_upstream()
    s = sluice(config(up, buffering="off"))
    body = pattern(100000)
    with socket.create_connection(("127.0.0.1", s.gateway_port), timeout=10) as c:
        c.sendall(post_head(len(body)) + body[:10])
        # The upstream has the head and the first 10 bytes while the client has 99990 to go.
        assert wait_for(lambda: up.all_bytes().endswith(b"\r\n\r\n" + body[:10]))
        assert up.connections() == (1, 1)
        time.sleep(0.5)
        c.sendall(body[10:])
        head, got = forwarded(c, up)
    assert b"Content-Length: 100000\r\n" in head and got == body


def test_a_chunked_body_is_buffered_and_forwarded_with_its_length(sluice, raw_upstream):
    up = raw_upstream()
    s = sluice(config(up, http="body_buffer: 16KiB"))
    body = pattern(100000)
    with socket.create_connection(("127.0.0.1", s.gateway_port), timeout=10) as c:
        wire = chunked(body)
        c.sendall(post_head() + wire[:50000])
        time.sleep(0.3)
        assert up.connections() == (0, 0)  # half of it in hand, none of it forwarded
        c.sendall(wire[50000:])
        head, got = forwarded(c, up)
    # Re-framed, as nginx forwards a buffered chunked body.
    assert b"Content-Length: 100000\r\n" in head and b"Transfer-Encoding" not in head, head
    assert got == body


def test_a_chunked_body_over_max_buffered_body_is_streamed_chunked(sluice, raw_upstream):
    up = raw_upstream()
    s = sluice(config(up, http="body_buffer: 16KiB, max_buffered_body: 32KiB"))
    body = pattern(100000)
    with socket.create_connection(("127.0.0.1", s.gateway_port), timeout=10) as c:
        wire = chunked(body)
        c.sendall(post_head() + wire[:20000])
        time.sleep(0.3)
        assert up.connections()[0] == 0  # 20000 bytes: still buffered
        c.sendall(wire[20000:60000])
        # Past 32 KiB: the upstream is connected, the buffered part sent, the rest streams.
        assert wait_for(lambda: len(up.all_bytes()) > 32768)
        assert up.request_count() == 0
        c.sendall(wire[60000:])
        head, got = forwarded(c, up)
    assert b"Transfer-Encoding: chunked\r\n" in head and b"Content-Length" not in head, head
    assert got == body


def test_expect_100_continue_is_answered_then_the_body_is_buffered(sluice, raw_upstream):
    up = raw_upstream()
    s = sluice(config(up, http="body_buffer: 16KiB"))
    body = pattern(50000)
    with socket.create_connection(("127.0.0.1", s.gateway_port), timeout=10) as c:
        c.sendall(post_head(len(body), b"Expect: 100-continue\r\n"))
        interim = b""
        while not interim.endswith(b"\r\n\r\n"):
            interim += c.recv(1)
        assert interim == b"HTTP/1.1 100 Continue\r\n\r\n"
        assert up.connections() == (0, 0)  # the 100 is sluice's own; no upstream yet
        c.sendall(body)
        head, got = forwarded(c, up)
    assert b"Expect" not in head and b"Content-Length: 50000\r\n" in head and got == body


def test_a_temp_dir_that_cannot_be_written_streams_the_body_and_says_why(sluice, raw_upstream,
                                                                         tmp_path):
    up = raw_upstream()
    missing = tmp_path / "no-such-dir"
    s = sluice(config(up, http=f"body_buffer: 16KiB, body_temp_dir: {missing}"))
    body = pattern(100000)
    for _ in range(3):
        with socket.create_connection(("127.0.0.1", s.gateway_port), timeout=10) as c:
            c.sendall(post_head(len(body)) + body)
            out = read_reply(c)
        # Served all the same: the first 16 KiB and the piece that found no file go first,
        # the rest is streamed after them.
        assert out.startswith(b"HTTP/1.1 200 "), out
    assert [got for _, got in up.requests] == [body] * 3
    assert all(b"Content-Length: 100000\r\n" in head for head, _ in up.requests)
    # One line for the three (at most one every 10 s), naming the directory and the cause.
    lines = [line for line in s.stderr().splitlines() if "temporary file" in line]
    assert len(lines) == 1, s.stderr()
    assert f"cannot make a temporary file in {missing}: No such file or directory" in lines[0]
