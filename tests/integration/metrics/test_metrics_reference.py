"""docs/metrics.md against what /metrics serves: a real sluice with every frontend (the gateway
in front of a real upstream, the check API, RESP with SLUICE.CHECK and CL.THROTTLE, Envoy RLS
over gRPC) and a rule kept in a real redis-server serves admitted and refused traffic through
each; its /metrics, parsed by the Prometheus client's own parser (Debian
python3-prometheus-client), must hold exactly the documented series, each of the documented
type, none of them a placeholder that stays at 0."""
import os
import re
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "redis"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "rls"))
from integration_support import ServeProcess, free_port  # noqa: E402
from redis_support import RedisServer  # noqa: E402
from rls_stubs import generate, request  # noqa: E402

DOC = os.path.join(HERE, "..", "..", "..", "docs", "metrics.md")
ROW = re.compile(r"^\| `([a-z_:]+)` \| (counter|gauge|histogram) \|([^|]*)\|([^|]*)\|([^|]*)\|$")

CONFIG = """
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
workers: 1
write_back: false
redis:
  url: redis://127.0.0.1:{redis}
upstreams:
  app:
    servers: [127.0.0.1:{upstream}]
routes:
  - name: api
    match: {{path_prefix: /api/}}
    upstream: app
    rules: [per-client, shared]
rules:
  per-client:
    limit: fixed-window:limit=3,window=1h
    key: client_ip
  shared:
    limit: fixed-window:limit=100,window=1h
    key: const:all
    storage: redis
  per-user:
    limit: fixed-window:limit=2,window=1h
    key: header:X-User
  roomy:
    limit: fixed-window:limit=1000,window=1h
    key: header:X-User
"""

RLS = """domain: edge
descriptors:
  - key: user
    rate_limit: {unit: day, requests_per_unit: 1}
"""


def documented():
    """{name: (type, may stay 0)} from the tables of docs/metrics.md."""
    out = {}
    with open(DOC) as f:
        for line in f:
            m = ROW.match(line.rstrip("\n"))
            if m:
                assert m.group(1) not in out, f"docs/metrics.md names {m.group(1)} twice"
                out[m.group(1)] = (m.group(2), m.group(5).strip() != "-")
    assert len(out) > 40, f"only {len(out)} rows read from docs/metrics.md: is the table intact?"
    return out


class Upstream(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "3")
        self.end_headers()
        self.wfile.write(b"ok\n")


def resp(port, *commands):
    """The RESP replies to `commands`, sent on one connection (redis-py speaks the protocol)."""
    import redis

    r = redis.Redis(host="127.0.0.1", port=port, socket_timeout=5)
    try:
        return [r.execute_command(*c) for c in commands]
    finally:
        r.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """/metrics of a sluice that has served every frontend, and the tallies of what it served."""
    tmp = tmp_path_factory.mktemp("metrics")
    upstream = ThreadingHTTPServer(("127.0.0.1", free_port()), Upstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    ports = {k: free_port() for k in ("gateway", "admin", "resp", "grpc")}
    with RedisServer(tmp) as redis_server:
        cfg = tmp / "sluice.yaml"
        cfg.write_text(CONFIG.format(redis=redis_server.port, upstream=upstream.server_port,
                                     **ports))
        rls = tmp / "edge.yaml"
        rls.write_text(RLS)
        s = ServeProcess(tmp, ["--config", str(cfg), "--resp", f"127.0.0.1:{ports['resp']}",
                               "--grpc", f"127.0.0.1:{ports['grpc']}", "--rls-config", str(rls)],
                         r"grpc \(Envoy RLS\) listening on \S+:%d\b" % ports["grpc"])
        try:
            yield drive(s, ports, tmp)
        finally:
            s.stop()
            upstream.shutdown()


def drive(s, ports, tmp):
    gw = f"http://127.0.0.1:{ports['gateway']}"
    admin = f"http://127.0.0.1:{ports['admin']}"
    # Gateway: per-client lets 3 of 5 through to the upstream, the other 2 get 429.
    codes = [requests.get(gw + "/api/x", timeout=5).status_code for _ in range(5)]
    assert codes == [200, 200, 200, 429, 429], codes
    # Check API: per-user allows 2 of 3 for one key.
    allowed = [requests.post(admin + "/v1/check", json={"rule": "per-user", "key": "ann"},
                             timeout=5).json()["allowed"] for _ in range(3)]
    assert allowed == [True, True, False], allowed
    # The check API again, a batch of 64 on a roomy rule: one in 64 local decisions is timed.
    batch = {"checks": [{"rule": "roomy", "key": f"k{i}"} for i in range(64)]}
    r = requests.post(admin + "/v1/check", json=batch, timeout=5)
    assert r.status_code == 200 and all(d["allowed"] for d in r.json()["results"]), r.text
    # RESP: SLUICE.CHECK as the check API (its own key), CL.THROTTLE with a burst of 1.
    checks = resp(ports["resp"], *[("SLUICE.CHECK", "per-user", "bob")] * 3)
    assert [c[0] for c in checks] == [0, 0, 1], checks  # limited: 0 or 1, as CL.THROTTLE
    throttles = resp(ports["resp"], *[("CL.THROTTLE", "t1", "1", "1", "60")] * 3)
    assert [t[0] for t in throttles] == [0, 0, 1], throttles
    # RLS: one a day for user=carl: OK, then OVER_LIMIT.
    import grpc

    (tmp / "stubs").mkdir()
    pb = generate(tmp / "stubs")
    with grpc.insecure_channel(f"127.0.0.1:{ports['grpc']}") as ch:
        stub = pb.rls_grpc.RateLimitServiceStub(ch)
        codes = [stub.ShouldRateLimit(request(pb, [[("user", "carl")]]), timeout=10).overall_code
                 for _ in range(2)]
    assert codes == [pb.rls.RateLimitResponse.OK, pb.rls.RateLimitResponse.OVER_LIMIT], codes
    r = requests.get(admin + "/metrics", timeout=5)
    assert r.status_code == 200
    return r.text


def scraped(text):
    """{name: (type, [(labels, value)])} by the Prometheus client's parser (which names a
    counter's family without _total); a histogram's _count samples only (its buckets and sum
    move with it)."""
    from prometheus_client.parser import text_string_to_metric_families

    out = {}
    for fam in text_string_to_metric_families(text):
        name = fam.name + "_total" if fam.type == "counter" else fam.name
        samples = [(s.labels, s.value) for s in fam.samples
                   if fam.type != "histogram" or s.name.endswith("_count")]
        out.setdefault(name, (fam.type, []))[1].extend(samples)
    return out


def test_every_served_series_is_documented_and_every_documented_one_served(served):
    docs, got = documented(), scraped(served)
    assert sorted(set(got) - set(docs)) == [], "served but not in docs/metrics.md"
    assert sorted(set(docs) - set(got)) == [], "in docs/metrics.md but not served"
    wrong = {n: (t, docs[n][0]) for n, (t, _) in got.items() if t != docs[n][0]}
    assert wrong == {}, "served type != documented type"


def test_no_series_stays_at_zero_unless_documented_as_an_event_that_did_not_happen(served):
    docs, got = documented(), scraped(served)
    still = [f"{n}{labels}" for n, (_, samples) in got.items() if not docs.get(n, ("", True))[1]
             for labels, v in samples if v == 0]
    assert still == [], "series at 0 after every frontend served traffic"
    empty = [n for n, (_, samples) in got.items() if not samples and not docs.get(n, ("", True))[1]]
    assert empty == [], "families with no sample after every frontend served traffic"


def test_the_names_follow_prometheus_rules(served):
    for name, (kind, _) in scraped(served).items():
        assert re.fullmatch(r"(sluice|process)_[a-z0-9_]+", name), name
        if kind == "counter":
            assert name.endswith("_total"), f"counter {name} does not end in _total"
        else:
            assert not name.endswith("_total"), f"{kind} {name} ends in _total"
        assert not re.search(r"_(ms|milliseconds|ns|kb|mb|bytes_total_bytes)$", name), name


def decisions(text):
    """{(frontend, rule, outcome): value} of sluice_rule_requests_total."""
    from prometheus_client.parser import text_string_to_metric_families

    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if s.name == "sluice_rule_requests_total":
                key = (s.labels["frontend"], s.labels["rule"], s.labels["outcome"])
                out[key] = out.get(key, 0) + s.value
    return out


def test_every_frontend_counts_its_decisions_by_rule_and_outcome(served):
    # What drive() served: 5 gateway requests (3 through, 2 refused by per-client; shared
    # decides only those per-client let by), 3 checks a key for each of the check API and
    # SLUICE.CHECK (2 allowed, 1 denied), 64 checks of roomy, 3 CL.THROTTLE (2, 1), 2 RLS
    # calls (1 OK, 1 over).
    assert decisions(served) == {
        ("gateway", "per-client", "allowed"): 3,
        ("gateway", "per-client", "denied"): 2,
        ("gateway", "shared", "allowed"): 3,
        ("check_api", "per-user", "allowed"): 2,
        ("check_api", "per-user", "denied"): 1,
        ("check_api", "roomy", "allowed"): 64,
        ("sluice_check", "per-user", "allowed"): 2,
        ("sluice_check", "per-user", "denied"): 1,
        ("cl_throttle", "cl.throttle", "allowed"): 2,
        ("cl_throttle", "cl.throttle", "denied"): 1,
        ("rls", "edge/user", "allowed"): 1,
        ("rls", "edge/user", "denied"): 1,
    }
    # Only the gateway's series name a route.
    assert 'route="api"' in served and served.count("route=") == 3


def test_decision_and_redis_call_times_are_histograms_that_moved(served):
    from prometheus_client.parser import text_string_to_metric_families

    fams = {f.name: f for f in text_string_to_metric_families(served)}
    counts = {(f, s.labels.get("storage")): s.value for f in ("sluice_decision_duration_seconds",
                                                             "sluice_redis_call_duration_seconds")
              for s in fams[f].samples if s.name.endswith("_count")}
    # Every decision that asked Redis is timed: the 3 gateway requests `shared` decided.
    assert counts[("sluice_decision_duration_seconds", "redis")] == 3
    assert counts[("sluice_redis_call_duration_seconds", None)] == 3
    infinite = [s.value for s in fams["sluice_redis_call_duration_seconds"].samples
                if s.labels.get("le") == "+Inf"]
    assert infinite == [3]
