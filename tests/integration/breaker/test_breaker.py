"""The circuit breaker of a route, end to end: a real sluice in front of a Python upstream whose
failure rate the test switches. At 50% failures the breaker opens (a log line, the metrics),
answers from its static fallback while the upstream sees no request, turns half-open after
open_for and closes once the probes succeed; with `fallback: stale` it answers the last good
response of that request with the stale marker, and the status fallback for one never kept.
A bad breaker field makes check-config fail and name the field."""
import os
import re
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from integration_support import ServeProcess, free_port, sluice_binary, wait_until  # noqa: E402

CONFIG = """
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
workers: 1
write_back: false
upstreams:
  app:
    servers: [127.0.0.1:{upstream}]
routes:
  - name: static
    match: {{path_prefix: /static/}}
    upstream: app
    breaker:
      error_ratio: 0.5
      window: 10s
      min_requests: 10
      open_for: 1s
      probes: 2
      errors: [5xx]
      fallback:
        status: 503
        body: "down for now\\n"
        headers: {{Retry-After: "1"}}
  - name: stale
    match: {{path_prefix: /stale/}}
    upstream: app
    breaker:
      error_ratio: 0.5
      window: 10s
      min_requests: 10
      open_for: 1m
      fallback: stale
      stale_for: 1m
    rules: [metered]
rules:
  metered:   # the upstream states each good answer's cost: the client never sees it
    limit: "token-bucket:rate=1000/s,burst=1000"
    key: "const:all"
    cost_from: response_header:X-Cost
"""


class Upstream(BaseHTTPRequestHandler):
    """Answers every `1/rate`-th request (exactly, by a counter) with a 503; /_control?fail=R
    sets the rate and zeroes the count of hits, /_hits reads it (neither counts as a hit)."""
    protocol_version = "HTTP/1.1"
    lock = threading.Lock()
    fail = 0.0
    hits = 0

    def log_message(self, *args):
        pass

    def answer(self, status, body, content_type="text/plain"):
        self.send_response(status)
        if status == 200:
            self.send_header("X-Cost", "1")
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        url = urlsplit(self.path)
        cls = type(self)
        if url.path == "/_control":
            with cls.lock:
                cls.fail = float(parse_qs(url.query)["fail"][0])
                cls.hits = 0
            return self.answer(200, b"ok\n")
        if url.path == "/_hits":
            return self.answer(200, str(cls.hits).encode())
        with cls.lock:
            cls.hits += 1
            n = cls.hits
            failed = int(n * cls.fail) != int((n - 1) * cls.fail)
        if failed:
            return self.answer(503, b"upstream failed\n")
        return self.answer(200, f"good {url.path}?{url.query}\n".encode(), "application/x-demo")


@pytest.fixture(scope="module")
def gateway(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("breaker")
    upstream = ThreadingHTTPServer(("127.0.0.1", free_port()), Upstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    ports = {"gateway": free_port(), "admin": free_port()}
    cfg = tmp / "sluice.yaml"
    cfg.write_text(CONFIG.format(upstream=upstream.server_port, **ports))
    s = ServeProcess(tmp, ["--config", str(cfg)],
                     r"gateway listening on \S+:%d\b" % ports["gateway"])
    control = f"http://127.0.0.1:{upstream.server_port}"
    try:
        yield s, f"http://127.0.0.1:{ports['gateway']}", f"http://127.0.0.1:{ports['admin']}", control
    finally:
        s.stop()
        upstream.shutdown()


def set_failures(control, rate):
    assert requests.get(f"{control}/_control?fail={rate}", timeout=5).status_code == 200


def hits(control):
    return int(requests.get(f"{control}/_hits", timeout=5).text)


def series(admin, name, **labels):
    """The value of one sample of /metrics, or None when it is not served."""
    text = requests.get(f"{admin}/metrics", timeout=5).text
    want = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in text.splitlines():
        m = re.match(r"^(\w+)(?:\{(.*)\})? (\S+)$", line)
        if m and m.group(1) == name:
            got = ",".join(sorted((m.group(2) or "").split(","))) if m.group(2) else ""
            if got == want:
                return float(m.group(3))
    return None


def test_half_failures_open_the_breaker_the_fallback_answers_and_recovery_closes_it(gateway):
    s, gw, admin, control = gateway
    set_failures(control, 0.5)
    # 10 calls, every second one a 503: at the 10th, 5 of 10 failed = error_ratio 0.5.
    codes = [requests.get(f"{gw}/static/x", timeout=5).status_code for _ in range(10)]
    assert codes == [200, 503] * 5, codes
    assert hits(control) == 10
    wait_until(lambda: "breaker opened" in s.stderr(), what="the breaker's open line")
    line = next(l for l in s.stderr().splitlines() if "breaker opened" in l)
    for word in ("route=static", "from=closed", "to=open", "reason=error_ratio", "calls=10",
                 "errors=5"):
        assert word in line, line
    assert series(admin, "sluice_breaker_state", route="static") == 1
    assert series(admin, "sluice_breaker_transitions_total", route="static", **{
        "from": "closed", "to": "open"}) == 1

    # Open: 5 requests answered by the fallback, none of them reaching the upstream.
    for _ in range(5):
        r = requests.get(f"{gw}/static/x", timeout=5)
        assert (r.status_code, r.text, r.headers.get("Retry-After")) == (503, "down for now\n", "1")
    assert hits(control) == 10
    assert series(admin, "sluice_breaker_fallbacks_total", route="static", kind="static") == 5

    # The upstream recovers; after open_for (1 s) the next request is a probe, and 2 good
    # probes close the breaker.
    set_failures(control, 0)
    wait_until(lambda: requests.get(f"{gw}/static/x", timeout=5).status_code == 200,
               timeout=5, interval=0.05, what="a probe after open_for")
    assert "breaker half-open" in s.stderr()
    assert requests.get(f"{gw}/static/x", timeout=5).status_code == 200
    wait_until(lambda: "breaker closed" in s.stderr(), what="the breaker's closed line")
    assert hits(control) == 2
    assert series(admin, "sluice_breaker_state", route="static") == 0
    for frm, to in (("open", "half_open"), ("half_open", "closed")):
        assert series(admin, "sluice_breaker_transitions_total", route="static",
                      **{"from": frm, "to": to}) == 1
    codes = [requests.get(f"{gw}/static/x", timeout=5).status_code for _ in range(5)]
    assert codes == [200] * 5 and hits(control) == 7


def test_an_open_breaker_answers_the_last_good_response_marked_stale(gateway):
    s, gw, admin, control = gateway
    set_failures(control, 0)
    good = requests.get(f"{gw}/stale/page?v=1", timeout=5)
    assert (good.status_code, good.text) == (200, "good /stale/page?v=1\n")
    assert "X-Sluice-Stale" not in good.headers
    # Every call fails from now: the good one and 9 failures are 10 calls, 9 of them failed.
    set_failures(control, 1)
    codes = [requests.get(f"{gw}/stale/page?v=1", timeout=5).status_code for _ in range(9)]
    assert codes == [503] * 9, codes
    assert hits(control) == 9
    wait_until(lambda: "route=stale" in s.stderr(), what="the stale route's open line")

    r = requests.get(f"{gw}/stale/page?v=1", timeout=5)
    assert (r.status_code, r.text) == (200, "good /stale/page?v=1\n")
    assert r.headers["X-Sluice-Stale"] == "1"
    assert r.headers["Content-Type"] == "application/x-demo"
    # The route's cost_from header was read and removed from the live answer, and so was
    # never kept in the stale copy either.
    assert "X-Cost" not in good.headers and "X-Cost" not in r.headers, r.headers
    assert int(r.headers["Age"]) >= 0
    # Another query is another key, never kept: the status fallback.
    other = requests.get(f"{gw}/stale/page?v=2", timeout=5)
    assert (other.status_code, other.text) == (503, "Service Unavailable\n")
    assert "X-Sluice-Stale" not in other.headers
    assert hits(control) == 9  # neither reached the upstream
    assert series(admin, "sluice_breaker_fallbacks_total", route="stale", kind="stale") == 1
    assert series(admin, "sluice_breaker_fallbacks_total", route="stale", kind="static") == 1
    assert series(admin, "sluice_stale_cache_entries") == 1


@pytest.mark.parametrize("field,value,says", [
    ("error_ratio", "1.5", "route 'api': field 'breaker.error_ratio'"),
    ("probes", "0", "route 'api': field 'breaker.probes'"),
    ("window", "50ms", "route 'api': field 'breaker.window'"),
    ("errors", "[6xx]", "route 'api': field 'breaker.errors'"),
    ("fallback", "stale", "route 'api': field 'breaker.stale_for'"),
])
def test_a_bad_breaker_field_fails_check_config_naming_it(tmp_path, field, value, says):
    breaker = {"error_ratio": "0.5", field: value}
    text = ("upstreams:\n  app: {servers: [127.0.0.1:9]}\nroutes:\n  - name: api\n"
            "    upstream: app\n    breaker:\n"
            + "".join(f"      {k}: {v}\n" for k, v in breaker.items()))
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    p = subprocess.run([sluice_binary(), "check-config", str(path)], capture_output=True,
                       text=True, timeout=30)
    assert p.returncode != 0
    assert says in p.stderr + p.stdout, p.stderr
