"""A slowloris attacker, run as its own process so that its sends never share a Python
interpreter (and its lock) with the client whose latency a test measures.

    slowloris.py PORT N INTERVAL MAX_SECONDS

Opens N connections to 127.0.0.1:PORT: the even ones send a request head a field at a time,
the odd ones a complete head announcing a 1000-byte body that they send a byte at a time. Every
INTERVAL seconds each open connection sends one more piece. Prints "ready N" once all are open,
then runs until the server has closed every connection (or MAX_SECONDS pass), and prints one
JSON line: {"opened": N, "closed": [seconds after opening, per connection closed by the server],
"replies": {first status line: count}}.
"""
import json
import selectors
import socket
import sys
import time


def main():
    port, n, interval, max_seconds = (int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]),
                                      float(sys.argv[4]))
    sel = selectors.DefaultSelector()
    conns = {}
    for i in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        if i % 2 == 0:
            s.sendall(b"GET /slow HTTP/1.1\r\nHost: app.example\r\n")
        else:
            s.sendall(b"POST /slow HTTP/1.1\r\nHost: app.example\r\nContent-Length: 1000\r\n\r\n")
        s.setblocking(False)
        conns[s] = (i, time.monotonic())
        sel.register(s, selectors.EVENT_READ)
    print(f"ready {n}", flush=True)
    closed, replies = [], {}
    started = time.monotonic()
    next_send = started + interval
    while conns and time.monotonic() - started < max_seconds:
        for key, _ in sel.select(timeout=max(0.0, next_send - time.monotonic())):
            s = key.fileobj
            try:
                data = s.recv(65536)
            except OSError:
                data = b""
            if data:
                line = data.split(b"\r\n", 1)[0].decode(errors="replace")
                replies[line] = replies.get(line, 0) + 1
                continue
            _, opened = conns.pop(s)
            closed.append(time.monotonic() - opened)
            sel.unregister(s)
            s.close()
        if time.monotonic() >= next_send:
            next_send += interval
            for s, (i, _) in list(conns.items()):
                try:
                    s.send(b"X-Slow: 1\r\n" if i % 2 == 0 else b"x")
                except OSError:
                    pass
    print(json.dumps({"opened": n, "closed": closed, "replies": replies}), flush=True)


if __name__ == "__main__":
    main()
