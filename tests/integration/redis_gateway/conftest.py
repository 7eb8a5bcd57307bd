"""Fixtures for the gateway's rules kept in Redis (docs/distributed.md): a real redis-server on a
free 127.0.0.1 port that a test can SIGKILL and restart on the same port, `sluice serve`
instances pointed at it, and HTTP load generators that record every request's status and
latency."""
import os
import sys
import threading
import time

import pytest
import requests

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from integration_support import ServeProcess, free_port  # noqa: E402


# ---------------------------------------------------------------- redis-server

# One RedisServer and RedisCluster for every Redis test: tests/integration/redis/redis_support.py.
sys.path.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                             "redis"))
from redis_support import RedisCluster, RedisServer  # noqa: E402


@pytest.fixture
def redis_server(tmp_path):
    servers = []

    def make():
        s = RedisServer(tmp_path)
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.stop()


@pytest.fixture
def redis_cluster(tmp_path):
    """Three masters holding all slots (tests/integration/redis/redis_support.py)."""
    d = tmp_path / "cluster"
    d.mkdir()
    cluster = RedisCluster(d)
    yield cluster
    cluster.stop()


# ---------------------------------------------------------------- sluice

class Gateway(ServeProcess):
    """`sluice serve --config FILE` with `config` (a format string with {gateway}, {admin}
    and {redis}); ready once the gateway listens."""

    def __init__(self, tmp_path, config, redis_url):
        self.gateway_port, self.admin_port = free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.gateway_port}"
        self.admin = f"http://127.0.0.1:{self.admin_port}"
        path = self.config_path = tmp_path / "sluice.yaml"
        path.write_text(config.format(gateway=self.gateway_port, admin=self.admin_port,
                                      redis=redis_url))
        super().__init__(tmp_path, ["--config", str(path)],
                         r"gateway listening on \S+:%d\b" % self.gateway_port,
                         what="the gateway to listen")

    def metrics(self):
        """{(name, frozenset(labels)): value} of every sample on /metrics."""
        text = requests.get(self.admin + "/metrics", timeout=5).text
        out = {}
        for line in text.splitlines():
            if not line or line.startswith("#"):
                continue
            series, value = line.rsplit(" ", 1)
            name, _, labels = series.partition("{")
            pairs = frozenset(tuple(p.split("=", 1)) for p in labels.rstrip("}").split(",")
                              if p) if labels else frozenset()
            out[(name, pairs)] = float(value)
        return out

    def metric(self, name, **labels):
        """The sum of a metric's samples that carry `labels` (0 when there is none)."""
        want = {(k, f'"{v}"') for k, v in labels.items()}
        return sum(v for (n, ls), v in self.metrics().items() if n == name and want <= ls)

    def stop(self):
        super().stop()
        report = self.stderr()
        assert "Sanitizer" not in report and "runtime error" not in report, report


@pytest.fixture
def gateways(tmp_path):
    """gateways(config, redis_url, n=1) -> n started Gateways (stopped at teardown)."""
    started = []

    def make(config, redis_url, n=1):
        new = []
        for _ in range(n):
            d = tmp_path / f"sluice{len(started)}"
            d.mkdir()
            g = Gateway(d, config, redis_url)
            started.append(g)
            new.append(g)
        return new if n > 1 else new[0]

    yield make
    for g in started:
        g.stop()


# ---------------------------------------------------------------- load

class Load:
    """Client threads, each with its own keep-alive requests.Session, sending GET `url`
    until stop(), at most `rate` requests per second each (None: as fast as they can).
    Every request is recorded as (sent, done, status, headers) with time.monotonic() instants;
    a request that fails at the HTTP level is recorded with status 0."""

    def __init__(self, url, threads, rate=None, timeout=5):
        self.url = url
        self.rate = rate
        self.timeout = timeout
        self.records = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.go = threading.Event()
        self.threads = [threading.Thread(target=self.run, args=(i,), daemon=True)
                        for i in range(threads)]
        for t in self.threads:
            t.start()

    def start(self):
        self.go.set()

    def run(self, index):
        session = requests.Session()
        mine = []
        self.go.wait()
        interval = 1.0 / self.rate if self.rate else 0.0
        # Spread the paced threads over one interval, so that their requests interleave.
        next_at = time.monotonic() + interval * index / max(1, len(self.threads))
        while not self.stopping.is_set():
            if interval:
                now = time.monotonic()
                if next_at > now:
                    time.sleep(next_at - now)
                elif now - next_at > interval:
                    next_at = now  # fell behind (a slow answer): no catch-up burst
                next_at += interval
            sent = time.monotonic()
            try:
                r = session.get(self.url, timeout=self.timeout)
                status, headers = r.status_code, r.headers
            except requests.RequestException:
                status, headers = 0, {}
            mine.append((sent, time.monotonic(), status, headers))
        session.close()
        with self.lock:
            self.records.extend(mine)

    def stop(self):
        self.stopping.set()
        for t in self.threads:
            t.join(timeout=30)
        self.records.sort(key=lambda r: r[0])
        return self.records
