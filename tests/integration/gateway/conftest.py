"""Fixtures for the gateway tests: a real `sluice serve` (one worker) in front of real upstreams
on free 127.0.0.1 ports. Upstreams are Python HTTP/1.1 servers run in this process (so a test
can see what they received, slow them down or kill them) or `sluice demo-upstream`."""
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest
import requests

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from integration_support import free_port, sluice_binary, wait_until  # noqa: E402


def pattern(n):
    """n deterministic bytes (a body both ends can check without holding a copy)."""
    block = bytes(range(256)) * 256  # 64 KiB
    full, rest = divmod(n, len(block))
    return block * full + block[:rest]


# ---------------------------------------------------------------- upstreams (Python)

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def setup(self):
        super().setup()
        self.server.upstream.opened(self.connection)

    def read_body(self):
        """The request body, de-chunked; yields pieces so that large bodies are not held."""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return
                left = size
                while left:
                    piece = self.rfile.read(min(left, 1 << 16))
                    left -= len(piece)
                    yield piece
                self.rfile.readline()
        else:
            left = int(self.headers.get("Content-Length", "0"))
            while left:
                piece = self.rfile.read(min(left, 1 << 16))
                if not piece:
                    return
                left -= len(piece)
                yield piece

    def reply(self, status=200, body=b"", headers=()):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self):
        self.do_GET()

    def do_POST(self):
        self.do_GET()

    def do_PUT(self):
        self.do_GET()

    def do_GET(self):
        up = self.server.upstream
        up.record(self)
        url = urlparse(self.path)
        q = {k: v[0] for k, v in parse_qs(url.query).items()}
        path = url.path
        if path == "/headers":
            body = [[k, v] for k, v in self.headers.items()]
            for _ in self.read_body():
                pass
            self.reply(200, json.dumps(body).encode(), [("Content-Type", "application/json")])
        elif path == "/digest":
            h, n = hashlib.sha256(), 0
            for piece in self.read_body():
                h.update(piece)
                n += len(piece)
            te = self.headers.get("Transfer-Encoding", "")
            self.reply(200, json.dumps({"length": n, "sha256": h.hexdigest(), "te": te}).encode())
        elif path == "/big":
            n = int(q.get("bytes", "0"))
            self.send_response(200)
            self.send_header("Content-Length", str(n))
            self.end_headers()
            block = pattern(1 << 16)
            sent = 0
            while sent < n:
                piece = block[: min(len(block), n - sent)]
                self.wfile.write(piece)
                sent += len(piece)
        elif path == "/chunked":
            n, size = int(q.get("chunks", "10")), int(q.get("size", "1000"))
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            data = pattern(size)
            for _ in range(n):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        elif path == "/answer":  # ?status=N&header=Name:Value (repeatable)&ms=N (wait first)
            for _ in self.read_body():
                pass
            time.sleep(int(q.get("ms", "0")) / 1000)
            extra = [tuple(h.split(":", 1)) for h in parse_qs(url.query).get("header", [])]
            self.reply(int(q.get("status", "200")), b"answer\n", extra)
        elif path == "/slow":
            for _ in self.read_body():
                pass
            time.sleep(int(q.get("ms", "1000")) / 1000)
            self.reply(200, b"slow\n")
        else:
            for _ in self.read_body():
                pass
            self.reply(200, f"{up.name}\n".encode(), [("Content-Type", "text/plain")])


class Upstream:
    """A threaded HTTP/1.1 server on a free port. `requests` counts requests; `peers` the
    client ports it was reached from (one per connection)."""

    def __init__(self, name):
        self.name = name
        self.requests = 0
        self.peers = set()
        self.seen = []  # (request target, Host) of each request, as received
        self.connections = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.upstream = self
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def address(self):
        return f"127.0.0.1:{self.port}"

    def record(self, handler):
        with self.lock:
            self.requests += 1
            self.peers.add(handler.client_address[1])
            self.seen.append((handler.path, handler.headers.get("Host")))

    def opened(self, conn):
        with self.lock:
            self.connections.append(conn)

    def stop(self):
        """Dies as a killed process would: stops listening and cuts every open connection."""
        if self.server is None:
            return
        self.server.shutdown()
        self.server.server_close()
        with self.lock:
            for conn in self.connections:
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        self.server = None


class Blackhole:
    """A listening socket that never accepts: connects succeed (the kernel's backlog), requests
    are never answered — the upstream timeout's test."""

    def __init__(self, backlog=16):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(backlog)
        self.port = self.sock.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self.fillers = []

    def stop(self):
        for c in self.fillers:
            c.close()
        self.sock.close()


class FullBacklog(Blackhole):
    """A Blackhole whose accept queue is full: new connection attempts get no answer to their
    SYN (the kernel drops it), so a connect hangs — the connect timeout's test."""

    def __init__(self):
        super().__init__(backlog=0)
        for _ in range(3):
            c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            c.setblocking(False)
            try:
                c.connect(("127.0.0.1", self.port))
            except BlockingIOError:
                pass
            self.fillers.append(c)
        time.sleep(0.1)


@pytest.fixture
def upstreams():
    """upstreams(n) -> n started Upstream servers named u0, u1, ...; all stopped at teardown."""
    made = []

    def make(n=1):
        new = [Upstream(f"u{len(made) + i}") for i in range(n)]
        made.extend(new)
        return new if n > 1 else new[0]

    yield make
    for u in made:
        u.stop()


# ---------------------------------------------------------------- sluice

def accepts_connections(port):
    """Whether a connection to 127.0.0.1:port is accepted now."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


class Sluice:
    """`sluice serve` on free ports; stderr to a file, the access log to another."""

    def __init__(self, tmp_path, config, args=()):
        self.gateway_port, self.admin_port = free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.gateway_port}"
        self.admin = f"http://127.0.0.1:{self.admin_port}"
        self.access_log = tmp_path / "access.log"
        self.stderr_path = tmp_path / "sluice.stderr"
        argv = [sluice_binary(), "serve"]
        if config is not None:
            path = tmp_path / "sluice.yaml"
            path.write_text(config.format(gateway=self.gateway_port, admin=self.admin_port,
                                          access_log=self.access_log))
            argv += ["--config", str(path)]
        argv += list(args)
        if config is None:
            argv += ["--listen", f"127.0.0.1:{self.gateway_port}",
                     "--admin", f"127.0.0.1:{self.admin_port}"]
        self.stderr_file = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=self.stderr_file)

        def ready():
            assert self.proc.poll() is None, f"sluice exited early:\n{self.stderr()}"
            # The gateway binds before the admin listener starts: the started line comes
            # after both, so a test's first admin call cannot beat the listener.
            return (accepts_connections(self.gateway_port)
                    and "sluice serve: started" in self.stderr())

        wait_until(ready, timeout=8, what="the gateway and admin listeners")

    def stderr(self):
        return self.stderr_path.read_text(errors="replace")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=12)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.stderr_file.close()
        report = self.stderr()
        assert "Sanitizer" not in report and "runtime error" not in report, report

    def metric(self, name, **labels):
        """The sum of a metric's samples that carry `labels` (0 when there is none)."""
        text = requests.get(self.admin + "/metrics", timeout=5).text
        total = 0.0
        for line in text.splitlines():
            if line.startswith("#") or not line.startswith(name):
                continue
            series, value = line.rsplit(" ", 1)
            metric_name = series.split("{", 1)[0]
            if metric_name != name:
                continue
            if all(f'{k}="{v}"' in series for k, v in labels.items()):
                total += float(value)
        return total

    def access_lines(self):
        if not self.access_log.exists():
            return []
        return self.access_log.read_text().splitlines()


@pytest.fixture
def sluice(tmp_path):
    """sluice(config_text or None, *args) -> a started Sluice (stopped at teardown). The config
    is a format string with {gateway}, {admin} and {access_log}."""
    started = []

    def make(config, *args):
        s = Sluice(tmp_path, config, args)
        started.append(s)
        return s

    yield make
    for s in started:
        s.stop()


def gateway_config(upstream_addresses, rules="", route_rules="[]", extra="", timeouts="",
                   max_fails=1, fail_timeout="10s", route_extra=""):
    """A one-route config proxying every path to `upstream_addresses`; `route_extra`: more
    fields of the route, one "name: value" per line."""
    servers = ", ".join(upstream_addresses)
    text = f"""\
listen: 127.0.0.1:{{gateway}}
admin: 127.0.0.1:{{admin}}
workers: 1
access_log: "{{access_log}}"
{timeouts}
{extra}
upstreams:
  app: {{{{servers: [{servers}], max_fails: {max_fails}, fail_timeout: {fail_timeout}}}}}
routes:
  - name: all
    match: {{{{path_prefix: /}}}}
    upstream: app
    rules: {route_rules}
"""
    text += "".join(f"    {line}\n" for line in route_extra.splitlines())
    if rules:
        text += "rules:\n" + rules
    return text


def rule_config(upstream, name, limit, key="client_ip", extra="", **fields):
    """gateway_config() with one rule on the route: `limit` keyed by `key`, plus `fields`
    (action, max_wait, ...) as YAML."""
    rule = f"  {name}:\n    limit: \"{limit}\"\n    key: \"{key}\"\n"
    rule += "".join(f"    {k}: {v}\n" for k, v in fields.items())
    return gateway_config([upstream.address], rules=rule, route_rules=f"[{name}]", extra=extra)


def raw_exchange(port, data, timeout=5):
    """Sends raw bytes on a fresh connection; returns (everything read, whether the server
    closed the connection within `timeout` of a read)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        out = b""
        try:
            while True:
                piece = s.recv(65536)
                if not piece:
                    return out, True
                out += piece
        except socket.timeout:
            return out, False
        except ConnectionResetError:
            return out, True


def raw_request(port, data, timeout=5):
    """Sends raw bytes on a fresh connection; returns everything read until the server closes
    (or `timeout` passes)."""
    return raw_exchange(port, data, timeout)[0]
