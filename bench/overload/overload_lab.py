"""The overload lab that `make bench-overload` and tests/integration/overload share: the
collapsing upstream (tests/support), the limiters in front of it (nginx limit_conn, HAProxy
maxconn + timeout queue, sluice's concurrency rule) and the open-loop generator, all on
127.0.0.1; and goodput per step of a schedule.

Plain Python with no third-party imports, so any python3 runs the benchmark.
"""
import csv
import io
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "tests", "integration"))
from plain_support import free_port  # noqa: E402


def wait_for_port(port, proc, what, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode} before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"{what} did not listen on {port} within {timeout}s")


def stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Upstream:
    """collapsing_upstream: `workers` C, `service_ms` S, jitter J; capacity C / S."""

    def __init__(self, binary, workers, service_ms, jitter_ms=0.0, seed=1):
        self.port = free_port()
        self.workers, self.service_ms = workers, service_ms
        self.proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--workers", str(workers), "--service-ms",
             str(service_ms), "--jitter-ms", str(jitter_ms), "--seed", str(seed)],
            stdout=subprocess.DEVNULL)
        wait_for_port(self.port, self.proc, "collapsing_upstream")

    @property
    def capacity(self):
        return self.workers * 1000.0 / self.service_ms

    def control(self, **params):
        """GET /_control?service_ms=..&workers=..: the settings, queue and served count."""
        query = "&".join(f"{k}={v}" for k, v in params.items())
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_control?{query}",
                                    timeout=5) as r:
            return json.loads(r.read())

    def stop(self):
        stop(self.proc)


NGINX_CONF = """\
# nginx 1.22 in front of the upstream: limit_conn at the known worker count, refusing with 503
# (the upstream `queue` directive, which would hold the rest, is nginx Plus only).
worker_processes 1;
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/nginx-error.log warn;
events {{ worker_connections 16384; }}
http {{
  access_log off;
  keepalive_requests 1000000;
  map $request_method $upstream_slot {{ default app; }}
  limit_conn_zone $upstream_slot zone=app:1m;
  upstream app {{
    server 127.0.0.1:{upstream};
    keepalive 256;
  }}
  server {{
    listen 127.0.0.1:{port};
    location / {{
      limit_conn app {limit};
      limit_conn_status 503;
      proxy_pass http://app;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }}
  }}
}}
"""

HAPROXY_CONF = """\
# HAProxy 2.6 in front of the upstream: at most {limit} requests at the server, the rest queued
# for up to {queue_ms} ms (then 503); a queued request whose client left is dropped.
global
  maxconn 9000
  nbthread 1
defaults
  mode http
  timeout connect 1s
  timeout client 30s
  timeout server 30s
  timeout queue {queue_ms}ms
  option http-keep-alive
  option abortonclose
frontend fe
  bind 127.0.0.1:{port}
  default_backend app
backend app
  http-reuse always
  server s1 127.0.0.1:{upstream} maxconn {limit}
"""

SLUICE_CONF = """\
# sluice serve in front of the upstream: a static concurrency limit at the known worker count,
# one key for every request, refusing with 503.
listen: 127.0.0.1:{port}
admin: 127.0.0.1:{admin}
workers: 1
upstreams:
  app: {{servers: [127.0.0.1:{upstream}]}}
routes:
  - name: all
    match: {{path_prefix: /}}
    upstream: app
    rules: [upstream-slots]
rules:
  upstream-slots:
    limit: "concurrency:limit={limit}"
    key: "const:app"
    status: 503
    body: "Service Unavailable\\n"
"""


SLUICE_ADAPTIVE_CONF = """\
# sluice serve in front of the upstream with no capacity configured: an adaptive concurrency
# limit on the route finds it from latency, refusing with 503 (after max_wait in its queue).
listen: 127.0.0.1:{port}
admin: 127.0.0.1:{admin}
workers: 1
trusted_proxies: [127.0.0.1]
upstreams:
  app: {{servers: [127.0.0.1:{upstream}]}}
routes:
  - name: all
    match: {{path_prefix: /}}
    upstream: app
    adaptive_concurrency:
      algorithm: {algorithm}
{extra}"""


class Proxy:
    """One limiter in front of the upstream: kind is nginx, haproxy or sluice."""

    def __init__(self, kind, workdir, upstream_port, limit, sluice_bin=None, queue_ms=100,
                 algorithm="envoy-gradient", max_wait_ms=0, priority_header=None,
                 min_rtt_interval=None):
        self.kind, self.port, self.admin = kind, free_port(), free_port()
        os.makedirs(workdir, exist_ok=True)
        conf = os.path.join(workdir, f"{kind}.conf")
        if kind == "nginx":
            text = NGINX_CONF.format(dir=workdir, upstream=upstream_port, port=self.port,
                                     limit=limit)
            cmd = ["nginx", "-p", workdir, "-c", conf,
                   "-e", os.path.join(workdir, "nginx-error.log")]
        elif kind == "haproxy":
            text = HAPROXY_CONF.format(upstream=upstream_port, port=self.port, limit=limit,
                                       queue_ms=queue_ms)
            cmd = ["haproxy", "-db", "-f", conf]
        elif kind == "sluice":
            text = SLUICE_CONF.format(upstream=upstream_port, port=self.port, limit=limit,
                                      admin=self.admin)
            cmd = [sluice_bin, "serve", "--config", conf]
        elif kind == "sluice-adaptive":  # `limit` unused: nobody tells it the capacity
            extra = f"      max_wait: {max_wait_ms}ms\n" if max_wait_ms else ""
            if priority_header:
                extra += f"      priority: header:{priority_header}\n"
            if min_rtt_interval:
                extra += f"      min_rtt_interval: {min_rtt_interval}\n"
            text = SLUICE_ADAPTIVE_CONF.format(upstream=upstream_port, port=self.port,
                                               admin=self.admin, algorithm=algorithm,
                                               extra=extra)
            cmd = [sluice_bin, "serve", "--config", conf]
        else:
            raise ValueError(f"unknown proxy kind {kind}")
        with open(conf, "w") as f:
            f.write(text)
        self.log = open(os.path.join(workdir, f"{kind}.log"), "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        wait_for_port(self.port, self.proc, kind)

    def metric(self, name):
        """A sluice's series `name` (its first sample) from /metrics; None when absent."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.admin}/metrics", timeout=5) as r:
            for line in r.read().decode().splitlines():
                if line.split(" ")[0] == name or line.startswith(name + "{"):
                    return float(line.rsplit(" ", 1)[1])
        return None

    def stop(self):
        stop(self.proc)
        self.log.close()


def schedule_text(steps):
    """[(rate, seconds), ...] -> the generator's --schedule."""
    return ",".join(f"{rate:g}:{seconds:g}s" for rate, seconds in steps)


def run_load(load_bin, port, steps, deadline_ms=200, headers=(), max_conns=4096):
    """Runs the open-loop generator against 127.0.0.1:port; returns its CSV rows as dicts
    (numbers as int or float), one per second of the schedule."""
    cmd = [load_bin, "--url", f"http://127.0.0.1:{port}/", "--schedule", schedule_text(steps),
           "--deadline", f"{deadline_ms}ms", "--max-conns", str(max_conns)]
    for h in headers:
        cmd += ["--header", h]
    total = sum(seconds for _, seconds in steps)
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=total + 60)
    rows = []
    for row in csv.DictReader(io.StringIO(out.stdout)):
        rows.append({k: (float(v) if "." in v else int(v)) for k, v in row.items()})
    return rows


def run_load_changing(load_bin, port, steps, upstream, at_s, change, **kw):
    """run_load, with upstream.control(**change) called `at_s` seconds into the schedule (the
    upstream slowing or shrinking mid-run); returns the rows."""
    timer = threading.Timer(at_s, lambda: upstream.control(**change))
    timer.start()
    try:
        return run_load(load_bin, port, steps, **kw)
    finally:
        timer.cancel()


def mean_goodput(rows, first_s, end_s):
    """The mean of the ok answers per second over seconds [first_s, end_s) of the run."""
    secs = [r for r in rows if first_s <= r["second"] < end_s]
    return sum(r["ok"] for r in secs) / max(len(secs), 1)


def per_step(rows, steps, settle_s=1):
    """Per step: the mean per second of goodput (ok), other statuses and timeouts, and the
    median of the seconds' p99 of 2xx answers, over the step's seconds after the first
    `settle_s` (the transition from the step before)."""
    by_second = {r["second"]: r for r in rows}
    out, start = [], 0
    for rate, seconds in steps:
        secs = [by_second.get(s) for s in range(int(start) + settle_s, int(start + seconds))]
        secs = [r for r in secs if r is not None]
        n = max(len(secs), 1)
        p99s = sorted(r["p99_ms"] for r in secs if r["ok"] > 0)
        out.append({
            "rate": rate,
            "seconds": len(secs),
            "goodput": sum(r["ok"] for r in secs) / n,
            "other": sum(r["other"] for r in secs) / n,
            "timeouts": sum(r["timeouts"] + r["errors"] + r["unsent"] for r in secs) / n,
            "p99_ms": p99s[len(p99s) // 2] if p99s else None,
        })
        start += seconds
    return out
