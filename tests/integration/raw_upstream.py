"""An upstream server on a raw socket, for tests that must see exactly what the gateway sends
and make the upstream misbehave in ways an HTTP library would not: it records every byte each
connection receives, parses just enough HTTP/1.1 (Content-Length or chunked) to find where a
request ends, and answers each request as its `behaviour` says.

Behaviours (RawUpstream(behaviour=...), or per request through the X-Behaviour request field):
- "ok": 200 with a short body ("ok\n"), keep-alive;
- "slow:MS": waits MS milliseconds, then answers as "ok";
- "reset": sends a head announcing 100000 bytes and 10 of them, then resets the connection (RST);
- "malformed": sends a response that is not HTTP, then closes;
- "close": closes the connection without a word;
- "script:NAME": sends the bytes the test put in `scripts[NAME]` as they are, then closes the
  connection if NAME ends in "-close", else waits for the next request on it;
- "trickle:NAME": the same bytes 8 at a time, 5 ms apart (a head that takes many reads).
"""
import socket
import struct
import threading
import time


def _read_until(conn, buf, marker):
    """Reads from `conn` until `buf` (a bytearray) holds `marker`; the index after it, or None
    when the connection ended first."""
    while True:
        i = buf.find(marker)
        if i >= 0:
            return i + len(marker)
        piece = conn.recv(65536)
        if not piece:
            return None
        buf += piece


def _read_exactly(conn, buf, n):
    while len(buf) < n:
        piece = conn.recv(65536)
        if not piece:
            return False
        buf += piece
    return True


def _header(head, name):
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == name:
            return v.strip()
    return None


def _read_request(conn, buf):
    """One request from `conn` (bytes already read in `buf`, which keeps what follows it):
    (head, body) or None when the connection ended."""
    end = _read_until(conn, buf, b"\r\n\r\n")
    if end is None:
        return None
    head = bytes(buf[:end])
    del buf[:end]
    body = b""
    te = _header(head, b"transfer-encoding")
    if te is not None and te.lower() == b"chunked":
        while True:
            end = _read_until(conn, buf, b"\r\n")
            if end is None:
                return None
            size = int(bytes(buf[:end - 2]).split(b";")[0], 16)
            del buf[:end]
            if size == 0:
                if _read_until(conn, buf, b"\r\n") is None:  # no trailers from the gateway
                    return None
                del buf[:2]
                break
            if not _read_exactly(conn, buf, size + 2):
                return None
            body += bytes(buf[:size])
            del buf[:size + 2]
    else:
        n = int(_header(head, b"content-length") or b"0")
        if not _read_exactly(conn, buf, n):
            return None
        body = bytes(buf[:n])
        del buf[:n]
    return head, body


class RawUpstream:
    def __init__(self, behaviour="ok"):
        self.behaviour = behaviour
        self.lock = threading.Lock()
        self.received = []  # per connection: every byte it received, as one bytes object
        self.requests = []  # (head, body) of every complete request, in order of arrival
        self.scripts = {}  # name -> bytes: the answers of behaviour "script:NAME"
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1024)
        self.port = self.sock.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self.open = []
        self.live = 0  # connections open right now
        self.stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def all_bytes(self):
        with self.lock:
            return b"".join(self.received)

    def request_count(self):
        with self.lock:
            return len(self.requests)

    def connections(self):
        """(accepted so far, open right now)."""
        with self.lock:
            return len(self.received), self.live

    def _accept(self):
        while not self.stopped:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                index = len(self.received)
                self.received.append(b"")
                self.open.append(conn)
                self.live += 1
            threading.Thread(target=self._serve, args=(conn, index), daemon=True).start()

    def _serve(self, conn, index):
        recorder = _Recording(conn, self, index)
        buf = bytearray()
        try:
            while True:
                request = _read_request(recorder, buf)
                if request is None:
                    return
                with self.lock:
                    self.requests.append(request)
                behaviour = (_header(request[0], b"x-behaviour") or b"").decode() or self.behaviour
                if not self._answer(conn, behaviour):
                    return
        except OSError:
            pass
        finally:
            conn.close()
            with self.lock:
                self.live -= 1

    def _answer(self, conn, behaviour):
        """Answers one request; False when the connection is to end."""
        if behaviour.startswith("slow:"):
            time.sleep(int(behaviour[5:]) / 1000)
            behaviour = "ok"
        if behaviour == "ok":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n")
            return True
        if behaviour == "reset":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b"x" * 10)
            time.sleep(0.05)
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return False
        if behaviour.startswith("script:"):
            name = behaviour[7:]
            conn.sendall(self.scripts[name])
            return not name.endswith("-close")
        if behaviour.startswith("trickle:"):
            name = behaviour[8:]
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            data = self.scripts[name]
            for at in range(0, len(data), 8):
                conn.sendall(data[at:at + 8])
                time.sleep(0.005)
            return not name.endswith("-close")
        if behaviour == "malformed":
            conn.sendall(b"HTTP/1.1 two hundred\r\nContent-Length: 3\r\n\r\nok\n")
            return False
        return False  # "close"

    def stop(self):
        self.stopped = True
        self.sock.close()
        with self.lock:
            for c in self.open:
                try:
                    c.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


class _Recording:
    """A socket's recv() that appends what it returns to its connection's record."""

    def __init__(self, conn, upstream, index):
        self.conn, self.upstream, self.index = conn, upstream, index

    def recv(self, n):
        piece = self.conn.recv(n)
        with self.upstream.lock:
            self.upstream.received[self.index] += piece
        return piece
