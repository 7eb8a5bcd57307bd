"""A raw HTTP/2 client that opens many gRPC streams on one connection, as a hostile client
would: frames written by hand (only the header block is encoded by hpack, which Debian's
python3-h2 brings), so that it can open more streams than the server allows, reset each at
once, or never acknowledge the server's SETTINGS. h2's own connection object would refuse to
do any of that (and counts its open streams in O(n) per stream)."""
import select
import socket
import struct
import time

import hpack

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY = 0x0, 0x1, 0x3, 0x4, 0x6, 0x7
END_STREAM, END_HEADERS, ACK = 0x1, 0x4, 0x1
PATH = b"/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit"


def frame(kind, flags, stream, payload=b""):
    head = struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream)
    return head + payload


class FloodClient:
    """One connection. `acknowledge`: answer the server's SETTINGS (and PINGs) as a client
    must; False: read and drop everything, so the server's settings never take effect."""

    def __init__(self, port, acknowledge):
        self.acknowledge = acknowledge
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setblocking(False)
        self.closed = False
        self.received = {}  # frame type -> count
        self.server_settings = {}  # SETTINGS identifier -> value (3: MAX_CONCURRENT_STREAMS)
        self.goaway = None  # (last stream id, error code, debug text) when the server sent one
        self._in = b""
        self._out = bytearray(PREFACE + frame(SETTINGS, 0, 0))
        enc = hpack.Encoder()
        headers = [(b":method", b"POST"), (b":scheme", b"http"), (b":path", PATH),
                   (b":authority", b"sluice"), (b"content-type", b"application/grpc"),
                   (b"te", b"trailers")]
        self._first_block = enc.encode(headers)
        self._block = enc.encode(headers)  # all indexed now: the same bytes for every stream
        self._sent_first = False
        self.next_stream = 1

    def open(self, count, message=None, reset=False):
        """Opens `count` streams: HEADERS, then `message` (a serialized RateLimitRequest) as
        DATA ending the stream, or nothing (the stream stays open); `reset`: RST_STREAM each
        at once. Returns how many were queued before the server closed the connection."""
        for i in range(count):
            if self.closed:
                return i
            block = self._block if self._sent_first else self._first_block
            self._sent_first = True
            sid = self.next_stream
            self.next_stream += 2
            self._out += frame(HEADERS, END_HEADERS, sid, block)
            if message is not None:  # gRPC's framing: not compressed, length, message
                body = b"\x00" + struct.pack(">I", len(message)) + message
                self._out += frame(DATA, END_STREAM, sid, body)
            if reset:
                self._out += frame(RST_STREAM, 0, sid, struct.pack(">I", 8))  # CANCEL
            if len(self._out) > 1 << 16:
                self.pump()
        self.pump()
        return count

    def pump(self, seconds=0.0):
        """Writes what is queued and reads what has come, for up to `seconds`."""
        deadline = time.monotonic() + seconds
        while not self.closed:
            wait = max(0.0, deadline - time.monotonic())
            r, w, _ = select.select([self.sock], [self.sock] if self._out else [], [], wait)
            if not r and not w:
                if time.monotonic() >= deadline:
                    return
                continue
            if w:
                try:
                    n = self.sock.send(self._out)
                    del self._out[:n]
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError:
                    self.closed = True
            if r:
                try:
                    data = self.sock.recv(1 << 20)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    data = b""
                if not data:
                    self.closed = True
                    return
                self._read(data)
            if not self._out and time.monotonic() >= deadline:
                return

    def _read(self, data):
        self._in += data
        while len(self._in) >= 9:
            length = int.from_bytes(self._in[:3], "big")
            if len(self._in) < 9 + length:
                return
            kind, flags = self._in[3], self._in[4]
            payload = self._in[9:9 + length]
            self._in = self._in[9 + length:]
            self.received[kind] = self.received.get(kind, 0) + 1
            if kind == SETTINGS and not flags & ACK:
                for at in range(0, len(payload), 6):
                    key, value = struct.unpack(">HI", payload[at:at + 6])
                    self.server_settings[key] = value
                if self.acknowledge:
                    self._out += frame(SETTINGS, ACK, 0)
            elif kind == PING and not flags & ACK and self.acknowledge:
                self._out += frame(PING, ACK, 0, payload)
            elif kind == GOAWAY:
                last, code = struct.unpack(">II", payload[:8])
                self.goaway = (last & 0x7FFFFFFF, code, payload[8:].decode(errors="replace"))
                self.closed = True

    def close(self):
        self.sock.close()
