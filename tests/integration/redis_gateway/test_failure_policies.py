"""Redis going away under load (docs/distributed.md, "When Redis fails"): each rule's failure
policy answers at once — fail-open allows, fail-closed denies, local decides with an
in-process limiter at local_share of the rate — no request waits much longer than
redis.timeout, and decisions come from Redis again soon after it is back."""
import signal
import time

from conftest import Load
from integration_support import wait_until  # on sys.path through conftest

TIMEOUT_S = 0.050  # redis.timeout below
# The slack over the timeout a request may take end to end: Python clients, four processes
# and redis-server share two cores, so scheduling alone can cost tens of milliseconds; an
# answer that waited on a dead Redis (a connect or reply timeout per request, or TCP's
# retransmissions) would take seconds.
MAX_LATENCY_S = 1.0
PER_THREAD_RATE = 50  # requests per second per client thread
THREADS_PER_ROUTE = 2
OFFERED_RATE = PER_THREAD_RATE * THREADS_PER_ROUTE

# open: a low limit, so that while Redis decides it denies most of the offered 100/s and while
#   Redis is away fail-open visibly admits everything;
# closed: a limit far above the offered load, so every 429 on it is the failure policy's;
# local: 50/s with a burst of 5; its fallback at share 0.5 is 25/s with a burst of 3.
CONFIG = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
workers: 1
write_back: false
redis:
  url: {redis}
  timeout: 50ms
  storage: redis
  on_failure: fail-open
  cache_denials: 0s  # the policies alone; what a kept refusal does in an outage: test_denial_cache
routes:
  - name: open
    match: {{path_prefix: /open}}
    respond: {{status: 200, body: "ok\\n"}}
    rules: [r_open]
  - name: closed
    match: {{path_prefix: /closed}}
    respond: {{status: 200, body: "ok\\n"}}
    rules: [r_closed]
  - name: local
    match: {{path_prefix: /local}}
    respond: {{status: 200, body: "ok\\n"}}
    rules: [r_local]
rules:
  r_open:
    limit: gcra:rate=20/s,burst=2
    key: const:global
    storage: redis
    on_failure: fail-open
  r_closed:
    limit: gcra:rate=1000/s,burst=100
    key: const:global
    storage: redis
    on_failure: fail-closed
  r_local:
    limit: gcra:rate=50/s,burst=5
    key: const:global
    storage: redis
    on_failure: local
    local_share: 0.5
"""
LOCAL_RATE, LOCAL_BURST = 25, 3  # r_local's fallback: gcra at half the rate and burst
FULL_RATE = 50


def between(records, start, end):
    """The requests sent at or after `start` and answered at or before `end`."""
    return [r for r in records if r[0] >= start and r[1] <= end]


def statuses(records):
    out = {}
    for r in records:
        out[r[2]] = out.get(r[2], 0) + 1
    return out


def latencies(records):
    return sorted(r[1] - r[0] for r in records)


def summary(name, records):
    lat = latencies(records)
    if not lat:
        return f"{name}: no requests"
    p50, p99 = lat[len(lat) // 2], lat[min(len(lat) - 1, int(len(lat) * 0.99))]
    return (f"{name}: {len(records)} requests {statuses(records)}, latency p50 {p50 * 1e3:.1f} "
            f"ms, p99 {p99 * 1e3:.1f} ms, max {lat[-1] * 1e3:.1f} ms")


def start_loads(g):
    loads = {route: Load(f"{g.url}/{route}", THREADS_PER_ROUTE, rate=PER_THREAD_RATE)
             for route in ("open", "closed", "local")}
    for load in loads.values():
        load.start()
    return loads


def redis_answers(g):
    return g.metric("sluice_redis_answers_total", source="redis")


def wait_for_redis_answers(g, before, since, limit=1.5):
    """Polls until the gateway answers from Redis again; returns the seconds since `since`."""
    back = wait_until(lambda: redis_answers(g) > before and time.monotonic(), timeout=limit,
                      interval=0.01, what="decisions from Redis again")
    return back - since


def test_failure_policies_when_redis_dies_and_returns(redis_server, gateways):
    rs = redis_server()
    g = gateways(CONFIG, rs.url)
    loads = start_loads(g)
    time.sleep(1.0)  # healthy: Redis decides

    killed = time.monotonic()
    rs.kill()
    time.sleep(2.0)  # the outage, under load

    before = redis_answers(g)
    restarting = time.monotonic()
    rs.restart()
    up = time.monotonic()  # redis-server answers PING again
    recovery = wait_for_redis_answers(g, before, up)
    back = up + recovery
    time.sleep(1.0)  # recovered: Redis decides again
    records = {route: load.stop() for route, load in loads.items()}
    end = time.monotonic()

    start = min(r[0] for rs_ in records.values() for r in rs_)
    print(f"\noutage {restarting - killed:.2f} s; redis-server back {up - restarting:.3f} s "
          f"after its restart began; first decision from Redis {recovery * 1e3:.0f} ms after "
          "it answered PING")
    phases = {"healthy": (start, killed), "outage": (killed, restarting), "recovered":
              (back + 0.1, end)}
    for phase, (a, b) in phases.items():
        for route, recs in records.items():
            print(summary(f"{phase:9} /{route:6}", between(recs, a, b)))
    everything = [r for recs in records.values() for r in recs]
    print(summary("all requests, whole run", everything))

    # No request failed at the HTTP level, and none waited on the dead Redis.
    assert all(r[2] != 0 for r in everything), "a request failed at the HTTP level"
    worst = max(r[1] - r[0] for r in everything)
    assert worst < MAX_LATENCY_S, f"a request took {worst:.3f} s (redis.timeout is 50ms)"

    # Healthy: Redis decides (r_open's 20/s denies most of the offered 100/s).
    healthy = {route: between(recs, start, killed) for route, recs in records.items()}
    assert statuses(healthy["closed"]) == {200: len(healthy["closed"])}
    assert statuses(healthy["open"]).get(429, 0) > 0

    # Outage: requests sent after the kill and answered before the restart began.
    outage = {route: between(recs, killed, restarting) for route, recs in records.items()}
    assert min(len(v) for v in outage.values()) > 0.5 * OFFERED_RATE, "too little load offered"
    assert statuses(outage["open"]) == {200: len(outage["open"])}, "fail-open must allow all"
    assert statuses(outage["closed"]) == {429: len(outage["closed"])}, "fail-closed must deny"
    assert all(int(r[3]["Retry-After"]) >= 1 for r in outage["closed"])
    local = statuses(outage["local"])
    admitted, offered = local.get(200, 0), len(outage["local"])
    assert set(local) <= {200, 429}
    outage_s = restarting - killed
    expected = LOCAL_BURST + LOCAL_RATE * outage_s
    print(f"local fallback: admitted {admitted} of {offered} offered in {outage_s:.2f} s; "
          f"a local limiter at share 0.5 admits about {expected:.0f}, at the full rate "
          f"{5 + FULL_RATE * outage_s:.0f}")
    assert 0 < admitted < offered
    # Roughly the shared rate: well above nothing, well below the full rate.
    assert 0.5 * LOCAL_RATE * outage_s <= admitted <= expected * 1.25 + 5

    # Recovered: Redis decides again, and the fail-closed route is back to 200s.
    recovered = {route: between(recs, back + 0.1, end) for route, recs in records.items()}
    assert recovery <= 1.0, f"decisions came back from Redis {recovery:.2f} s after it was up"
    assert recovered["closed"], "no request on /closed after recovery"
    assert statuses(recovered["closed"]) == {200: len(recovered["closed"])}
    assert statuses(recovered["open"]).get(429, 0) > 0, "r_open decided by Redis again"

    # The metrics tell the episode.
    m = g.metric
    assert m("sluice_redis_failures_total") > 0
    assert m("sluice_redis_breaker_opens_total") >= 1
    assert m("sluice_redis_client_reconnects_total") >= 1  # found Redis again by itself
    # Every loop (the gateway worker and the admin listener, each with its store) closed again.
    assert m("sluice_redis_breaker_loops", state="closed") == 2
    assert m("sluice_redis_breaker_loops", state="open") == 0
    for source, route in (("fail_open", "open"), ("fail_closed", "closed"), ("local", "local")):
        assert m("sluice_redis_answers_total", source=source) >= len(outage[route]) > 0
    assert m("sluice_redis_answers_total", source="redis") > 0
    assert m("sluice_redis_answers_total", source="lease") == 0
    assert m("sluice_redis_scripts_total") >= 1
    assert m("sluice_redis_scripted_requests_total") >= m("sluice_redis_scripts_total")
    print(f"metrics: failures {m('sluice_redis_failures_total'):.0f}, breaker opens "
          f"{m('sluice_redis_breaker_opens_total'):.0f}")


def test_hung_redis_costs_at_most_the_timeout(redis_server, gateways):
    """SIGSTOP: Redis keeps its connections but answers nothing. Every call waits out
    redis.timeout (50ms), then the breaker opens and decisions skip Redis; after SIGCONT the
    replies to calls already given up on are discarded, and decisions come from Redis again."""
    rs = redis_server()
    g = gateways(CONFIG, rs.url)
    loads = start_loads(g)
    time.sleep(0.5)

    stopped = time.monotonic()
    rs.proc.send_signal(signal.SIGSTOP)
    time.sleep(1.5)
    before = redis_answers(g)
    resumed = time.monotonic()
    rs.proc.send_signal(signal.SIGCONT)
    recovery = wait_for_redis_answers(g, before, resumed)
    back = resumed + recovery
    time.sleep(0.7)
    records = {route: load.stop() for route, load in loads.items()}
    end = time.monotonic()

    print(f"\nRedis stopped for {resumed - stopped:.2f} s; first decision from Redis "
          f"{recovery * 1e3:.0f} ms after SIGCONT")
    hung = {route: between(recs, stopped, resumed) for route, recs in records.items()}
    for route, recs in hung.items():
        print(summary(f"hung      /{route:6}", recs))
    everything = [r for recs in records.values() for r in recs]
    print(summary("all requests, whole run", everything))

    assert all(r[2] != 0 for r in everything), "a request failed at the HTTP level"
    worst = max(r[1] - r[0] for r in everything)
    assert worst < MAX_LATENCY_S, f"a request took {worst:.3f} s (redis.timeout is 50ms)"
    # Only the calls before the breaker opens, and its probes (one per 200 ms), wait out the
    # timeout; the other requests of the hang are answered without waiting.
    during = [r for recs in hung.values() for r in recs]
    waited = [r for r in during if r[1] - r[0] >= 0.8 * TIMEOUT_S]
    print(f"{len(waited)} of {len(during)} requests during the hang waited out the timeout")
    assert len(waited) <= 0.25 * len(during)
    # Requests sent once the breaker has surely opened go straight to the failure policy.
    settled = {route: between(recs, stopped + 0.3, resumed) for route, recs in records.items()}
    assert statuses(settled["open"]) == {200: len(settled["open"])}
    assert statuses(settled["closed"]) == {429: len(settled["closed"])}
    assert 0 < statuses(settled["local"]).get(200, 0) < len(settled["local"])
    assert recovery <= 1.0, f"decisions came back from Redis {recovery:.2f} s after SIGCONT"
    recovered = {route: between(recs, back + 0.1, end) for route, recs in records.items()}
    assert recovered["closed"]
    assert statuses(recovered["closed"]) == {200: len(recovered["closed"])}
    assert statuses(recovered["open"]).get(429, 0) > 0
    assert g.metric("sluice_redis_failures_total") > 0
    assert g.metric("sluice_redis_breaker_opens_total") >= 1


FIELDS_CONFIG = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
workers: 1
write_back: false
redis: {{url: "{redis}", timeout: 50ms, cache_denials: 0s}}
routes:
  - name: both
    match: {{path_prefix: /both}}
    respond: {{status: 200, body: "ok\\n"}}
    rules: [per-client, shared]
  - name: shared-only
    match: {{path_prefix: /shared}}
    respond: {{status: 200, body: "ok\\n"}}
    rules: [shared]
rules:
  per-client:
    limit: fixed-window:limit=10,window=1m
    key: client_ip
  shared:
    limit: fixed-window:limit=100,window=1m
    key: const:global
    storage: redis
    on_failure: fail-open
"""


def test_a_fail_open_admission_names_its_policy_but_claims_no_remaining(redis_server,
                                                                         gateways):
    import requests

    rs = redis_server()
    g = gateways(FIELDS_CONFIG, rs.url)
    import re

    healthy = requests.get(g.url + "/both", timeout=5).headers
    # w: the seconds to the minute's end (windows are aligned to the clock).
    assert re.fullmatch(r'"per-client";a=9;w=\d+, "shared";a=99;w=\d+', healthy["RateLimit"])
    rs.kill()
    # Fail-open: the shared rule's policy stays, its status item goes (never a=0); the local
    # rule still counts (8 left of 10).
    got = wait_until(lambda: (h := requests.get(g.url + "/both", timeout=5).headers)
                     and "shared" not in h.get("RateLimit", "") and h, timeout=5,
                     what="a fail-open answer")
    assert got["RateLimit-Policy"] == '"per-client";q=10;w=60, "shared";q=100;w=60'
    assert got["RateLimit"].startswith('"per-client";a=')
    assert "a=0" not in got["RateLimit"]
    # Only the fail-open rule: its policy, and no RateLimit field at all.
    alone = requests.get(g.url + "/shared", timeout=5)
    assert alone.status_code == 200
    assert alone.headers["RateLimit-Policy"] == '"shared";q=100;w=60'
    assert "RateLimit" not in alone.headers
