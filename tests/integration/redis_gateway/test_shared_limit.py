"""Four gateways share one limit kept in Redis (docs/distributed.md): `rate=200/s` means 200 per
second in total. Exact mode admits burst + rate·T across the instances; with leasing the total
stays within the documented bound (over-admission at most I·N, under-admission at most I·N
per lease_ttl)."""
import time

import requests

from conftest import Load

INSTANCES = 4
THREADS = 3  # client threads per instance, unpaced: the offered load is far above the rate
DURATION_S = 3.0
RATE, BURST = 200, 20
LEASE, LEASE_TTL_S = 5, 0.100

CONFIG = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
workers: 1
write_back: false
redis:
  url: {redis}
  timeout: 50ms
routes:
  - name: exact
    match: {{path_prefix: /exact}}
    respond: {{status: 200, body: "ok\\n"}}
    rules: [shared_exact]
  - name: leased
    match: {{path_prefix: /leased}}
    respond: {{status: 200, body: "ok\\n"}}
    rules: [shared_leased]
rules:
  shared_exact:
    limit: token-bucket:rate=200/s,burst=20
    key: const:global
    storage: redis
    on_failure: fail-closed
  shared_leased:
    limit: token-bucket:rate=200/s,burst=20
    key: const:global
    storage: redis
    on_failure: fail-closed
    lease: 5
    lease_ttl: 100ms
"""


def drive(gateways, path):
    """Every instance under load at once for DURATION_S; returns (admitted, offered, T, per
    instance admitted, Redis round trips, counters by source) with T from the first request
    sent to the last response received."""
    counters = ("sluice_redis_scripts_total", "sluice_redis_lease_takes_total")
    before = [{c: g.metric(c) for c in counters} for g in gateways]
    loads = [Load(g.url + path, THREADS) for g in gateways]
    for load in loads:
        load.start()
    time.sleep(DURATION_S)
    records = [load.stop() for load in loads]
    every = [r for recs in records for r in recs]
    assert all(r[2] in (200, 429) for r in every), {r[2] for r in every}
    t = max(r[1] for r in every) - min(r[0] for r in every)
    per_instance = [sum(1 for r in recs if r[2] == 200) for recs in records]
    after = [{c: g.metric(c) for c in counters} for g in gateways]
    trips = {c: sum(a[c] - b[c] for a, b in zip(after, before)) for c in counters}
    sources = {s: sum(g.metric("sluice_redis_answers_total", source=s) for g in gateways)
               for s in ("redis", "lease", "fail_closed")}
    assert sources["fail_closed"] == 0, "Redis failed during the run"
    return sum(per_instance), len(every), t, per_instance, trips, sources


def report(mode, admitted, offered, t, per_instance, trips):
    ideal = BURST + RATE * t
    print(f"\n{mode}: {INSTANCES} instances x {THREADS} threads, T = {t:.3f} s, offered "
          f"{offered} ({offered / t:.0f}/s); admitted {admitted} (per instance "
          f"{per_instance}); burst + rate*T = {ideal:.1f}; difference {admitted - ideal:+.1f} "
          f"({(admitted - ideal) / ideal * 100:+.2f}%); round trips: "
          f"{trips['sluice_redis_scripts_total']:.0f} EVALSHA "
          f"({trips['sluice_redis_scripts_total'] / offered:.3f} per decision), "
          f"{trips['sluice_redis_lease_takes_total']:.0f} lease takes")
    return ideal


def test_exact_mode_admits_burst_plus_rate_times_t(redis_server, gateways):
    rs = redis_server()
    gs = gateways(CONFIG, rs.url, n=INSTANCES)
    admitted, offered, t, per_instance, trips, sources = drive(gs, "/exact")
    ideal = report("exact", admitted, offered, t, per_instance, trips)
    # Twice the limit keeps the bucket empty throughout (a request every 1.6 ms against a token
    # every 5 ms); the Python clients offer 1,850-3,600 in 3 s, by the machine's load.
    assert offered > 2 * ideal, "the offered load must be well above the rate"
    assert all(n > 0 for n in per_instance), "every instance takes part in the shared limit"
    assert abs(admitted - ideal) <= 0.01 * ideal
    assert sources["lease"] == 0


def test_leased_mode_stays_within_the_documented_bound(redis_server, gateways):
    rs = redis_server()
    gs = gateways(CONFIG, rs.url, n=INSTANCES)
    admitted, offered, t, per_instance, trips, sources = drive(gs, "/leased")
    ideal = report(f"leased (lease {LEASE}, lease_ttl {LEASE_TTL_S * 1e3:.0f}ms)", admitted,
                   offered, t, per_instance, trips)
    assert offered > 2 * ideal, "the offered load must be well above the rate"
    assert sources["lease"] > 0 and trips["sluice_redis_lease_takes_total"] > 0
    # Over-admission: in any interval T, admitted <= burst + rate·T + I·N.
    upper = ideal + INSTANCES * LEASE
    # Under-admission: at most I·N permits lost per lease_ttl (the documented bound), which at
    # N = rate·lease_ttl / I, the doc's advice, can be the whole rate.
    documented_lower = RATE * t - (t / LEASE_TTL_S) * INSTANCES * LEASE
    # Under a load that spends every lease long before it expires, only the permits left in
    # the pools when the load stops are lost: at most I·N, plus the 1% of exact mode.
    tight_lower = ideal - INSTANCES * LEASE - 0.01 * ideal
    print(f"leased bounds: documented [{documented_lower:.1f}, {upper:.1f}], under steady "
          f"load [{tight_lower:.1f}, {upper:.1f}]; over-admission {admitted - ideal:+.1f} "
          f"(allowed +{INSTANCES * LEASE}), under-admission {ideal - admitted:.1f}")
    assert admitted <= upper
    assert admitted >= documented_lower
    assert admitted >= tight_lower


ONE_CLIENT = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
workers: 1
write_back: false
redis:
  url: {redis}
routes:
  - name: leased
    match: {{path_prefix: /}}
    respond: {{status: 200}}
    rules: [slow]
rules:
  slow:
    limit: token-bucket:rate=1/s,burst=10
    key: const:global
    storage: redis
    lease: 5
"""


def test_leased_denial_costs_one_round_trip(redis_server, gateways):
    """One client, one request at a time: the burst of 10 is two takes of 5; then the bucket
    is dry and each request is denied by one take that Redis answers short."""
    rs = redis_server()
    g = gateways(ONE_CLIENT, rs.url)
    with requests.Session() as s:
        codes = [s.get(g.url + "/", timeout=5).status_code for _ in range(30)]
    takes = g.metric("sluice_redis_lease_takes_total")
    print(f"\n{codes.count(200)} admitted, {codes.count(429)} denied, {takes:.0f} takes")
    assert codes.count(200) in (10, 11)  # the burst, and maybe one token refilled meanwhile
    assert takes <= 2 + codes.count(429) + 1


TWO_INSTANCES = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
workers: 1
write_back: false
redis:
  url: {redis}
routes:
  - name: quota
    match: {{path_prefix: /}}
    respond: {{status: 200}}
    rules: [quota]
rules:
  quota:
    limit: token-bucket:rate=1/h,burst=40
    key: const:global
    storage: redis
    on_failure: fail-closed
    lease: 10
    lease_ttl: 10s
"""


def script_calls(rs):
    stats = rs.client().info("commandstats")
    return sum(stats.get(f"cmdstat_{c}", {}).get("calls", 0) for c in ("evalsha", "eval"))


def test_leased_permits_are_spent_here_and_refused_exactly_at_the_limit(redis_server, gateways):
    """Two instances, one request at a time to each in turn: each takes 10 permits a call and
    spends them without asking Redis again, so 40 admissions cost 4 script calls, not 40; both
    refuse the 41st, the limit shared exactly (nothing is left in a pool to over-admit)."""
    rs = redis_server()
    pair = gateways(TWO_INSTANCES, rs.url, n=2)
    sessions = [requests.Session() for _ in pair]

    def round_robin(n):
        return [s.get(g.url + "/", timeout=5) for _ in range(n) for s, g in zip(sessions, pair)]

    assert [r.status_code for r in round_robin(1)] == [200, 200]  # each loads the script, takes 10
    before = script_calls(rs)
    assert [r.status_code for r in round_robin(19)] == [200] * 38
    # 9 left in each pool, then one more take of 10 each: 2 calls for 38 admissions.
    assert script_calls(rs) - before == 2
    assert sum(g.metric("sluice_redis_answers_total", source="lease") for g in pair) == 40
    refused = round_robin(3)
    assert [r.status_code for r in refused] == [429] * 6
    assert all(int(r.headers["Retry-After"]) > 0 for r in refused)
    for s in sessions:
        s.close()
