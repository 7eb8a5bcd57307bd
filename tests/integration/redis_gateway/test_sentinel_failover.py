"""Redis Sentinel under load (docs/distributed.md, "Sentinel"): sluice finds the master through
three real redis-sentinel processes (which want AUTH), the master is killed (SIGKILL) while requests flow, and the
sentinels promote the replica. Meanwhile each rule's failure policy answers (fail-open admits,
fail-closed refuses, local decides locally at its share); once the sentinels announce the new
master, sluice decides in Redis again within a second. The times are printed: the figure in
docs/distributed.md comes from this test."""
import time

import pytest

from conftest import Load
from deploy_support import SentinelGroup
from integration_support import wait_until  # on sys.path through conftest

PER_THREAD_RATE = 50
THREADS_PER_ROUTE = 2

CONFIG = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
workers: 1
write_back: false
redis:
  url: {redis}
  sentinel_password_env: SLUICE_TEST_SENTINEL_PASSWORD
  timeout: 100ms
  storage: redis
routes:
  - name: open
    match: {{path_prefix: /open}}
    respond: {{status: 200}}
    rules: [r_open]
  - name: closed
    match: {{path_prefix: /closed}}
    respond: {{status: 200}}
    rules: [r_closed]
  - name: local
    match: {{path_prefix: /local}}
    respond: {{status: 200}}
    rules: [r_local]
rules:
  r_open:
    limit: gcra:rate=20/s,burst=2
    key: const:global
    on_failure: fail-open
  r_closed:
    limit: gcra:rate=1000/s,burst=100
    key: const:global
    on_failure: fail-closed
  r_local:
    limit: gcra:rate=50/s,burst=5
    key: const:global
    on_failure: local
    local_share: 0.5
"""


def between(records, start, end):
    return [r for r in records if r[0] >= start and r[1] <= end]


def statuses(records):
    out = {}
    for r in records:
        out[r[2]] = out.get(r[2], 0) + 1
    return out


SENTINEL_PASSWORD = "the-sentinels-own-password"


@pytest.fixture
def sentinel_group(tmp_path, monkeypatch):
    # The sentinels want AUTH (their own password, not the data's): sluice reads it from the
    # environment.
    monkeypatch.setenv("SLUICE_TEST_SENTINEL_PASSWORD", SENTINEL_PASSWORD)
    group = SentinelGroup(tmp_path / "sentinel", sentinel_password=SENTINEL_PASSWORD)
    yield group
    group.stop()


def test_the_master_killed_under_load_is_replaced_and_each_policy_holds_meanwhile(
        sentinel_group, gateways):
    group = sentinel_group
    g = gateways(CONFIG, group.url)
    first_master = group.master.port
    wait_until(lambda: f"the sentinels name 127.0.0.1:{first_master} as master 'mymaster'\n"
               in g.stderr(), what="the master found through the sentinels")
    loads = {route: Load(f"{g.url}/{route}", THREADS_PER_ROUTE, rate=PER_THREAD_RATE)
             for route in ("open", "closed", "local")}
    for load in loads.values():
        load.start()
    time.sleep(1.0)  # healthy: Redis decides

    killed = time.monotonic()
    group.master.kill()
    # The policies answer from the first failed call; the baseline of Redis answers is taken
    # once they do, so a later increase is a decision of the new master.
    wait_until(lambda: g.metric("sluice_redis_answers_total", source="fail_closed") > 0,
               timeout=5, interval=0.01, what="the failure policies to answer")
    before = g.metric("sluice_redis_answers_total", source="redis")
    named = wait_until(lambda: group.named_master() not in (None, first_master) and
                       time.monotonic(), timeout=30, interval=0.01,
                       what="the sentinels to promote the replica")
    back = wait_until(lambda: g.metric("sluice_redis_answers_total", source="redis") > before
                      and time.monotonic(), timeout=5, interval=0.01,
                      what="decisions from the new master")
    time.sleep(1.0)  # recovered
    records = {route: load.stop() for route, load in loads.items()}
    end = time.monotonic()

    print(f"\nsentinels ready {group.ready_after:.1f} s after start; master killed; the "
          f"sentinels named the new master after {named - killed:.2f} s; sluice decided in "
          f"Redis again {back - killed:.2f} s after the kill ({(back - named) * 1e3:.0f} ms "
          "after the sentinels named it)")
    for phase, (a, b) in {"outage": (killed + 0.2, named), "recovered": (back + 0.3, end)}.items():
        for route, recs in records.items():
            print(f"{phase:9} /{route:6} {statuses(between(recs, a, b))}")

    everything = [r for recs in records.values() for r in recs]
    assert all(r[2] != 0 for r in everything), "a request failed at the HTTP level"
    assert "(a failover)" in g.stderr()
    assert f"127.0.0.1:{group.replica.port} as master 'mymaster' (a failover)" in g.stderr()

    # Meanwhile (sent after the kill, answered before the sentinels named the new master).
    outage = {route: between(recs, killed + 0.2, named) for route, recs in records.items()}
    assert min(len(v) for v in outage.values()) > 0, "no load during the failover"
    assert statuses(outage["open"]) == {200: len(outage["open"])}, "fail-open must allow all"
    assert statuses(outage["closed"]) == {429: len(outage["closed"])}, "fail-closed must deny"
    local = statuses(outage["local"])
    assert set(local) <= {200, 429}
    outage_s = named - killed - 0.2
    # At share 0.5: gcra 25/s with a burst of 3, well under the offered 100/s.
    assert 0 < local.get(200, 0) <= 3 + 1 + 25 * outage_s * 1.25 + 5, local

    # Sluice follows the announcement within a second; limits are exact again.
    assert back - named < 1.0, f"{back - named:.2f} s from the switch to a Redis decision"
    recovered = {route: between(recs, back + 0.3, end) for route, recs in records.items()}
    assert statuses(recovered["closed"]) == {200: len(recovered["closed"])} and \
        recovered["closed"], recovered["closed"][:3]
    assert statuses(recovered["open"]).get(429, 0) > 0, "r_open decided by Redis again"
    # Both loops (the gateway worker and the admin listener) followed the switch.
    assert g.metric("sluice_redis_sentinel_switches_total") >= 1
    assert g.metric("sluice_redis_answers_total", source="fail_open") >= len(outage["open"])
    assert g.metric("sluice_redis_answers_total", source="local") >= len(outage["local"])
    # The new master is the one deciding.
    assert group.replica.client().info("commandstats")["cmdstat_evalsha"]["calls"] > 0
