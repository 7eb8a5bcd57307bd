"""Calendar quotas kept in Redis, two sluice instances on one real redis-server: a daily
fixed-window in Europe/Berlin is one count for both, and the RateLimit reset, Retry-After and the
check API's retry_after_ms point at the next local midnight in Berlin (Python's zoneinfo, from
the same wall clock), as they do for a local rule (tests/integration/gateway/
test_calendar_quota.py). The state key expires at that midnight. A leased calendar rule never
admits more than the day's quota over both instances. Crossing a DST change and a month end is
checked by replay (tests/integration/redis/test_replay_calendar_redis.py) and by the script's
own tests (tests/unit/redis/script_calendar_test.cpp), since Redis's clock cannot be moved."""
import re
import time
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import requests

BERLIN = ZoneInfo("Europe/Berlin")
CONFIG = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
workers: 1
write_back: false
redis:
  url: {redis}
  timeout: 500ms
routes:
  - name: api
    match: {{path_prefix: /}}
    respond: {{status: 200, body: "ok\\n"}}
    rules: [daily]
rules:
  daily:
    limit: "fixed-window:limit=3,window=1d,align=calendar,timezone=Europe/Berlin"
    key: header:X-Api-Key
    storage: redis
    on_failure: fail-closed
"""


def seconds_to_berlin_midnight():
    now = datetime.now(BERLIN)
    midnight = datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), BERLIN)
    return midnight.timestamp() - time.time()


def near_midnight(seconds):
    expected = seconds_to_berlin_midnight()
    # Whole seconds, rounded up; allow for the time the request took.
    return expected - 2 <= seconds <= expected + 2, (seconds, expected)


def send(g, key="k1"):
    return requests.get(g.url + "/", headers={"X-Api-Key": key}, timeout=5)


def test_a_daily_quota_is_one_count_for_both_instances_until_berlin_midnight(redis_server,
                                                                             gateways):
    rs = redis_server()
    a, b = gateways(CONFIG, rs.url, n=2)
    for g, left in ((a, 2), (b, 1), (a, 0)):
        r = send(g)
        assert r.status_code == 200
        m = re.search(r'"daily";a=(\d+);w=(\d+)', r.headers["RateLimit"])
        assert m and int(m.group(1)) == left, r.headers["RateLimit"]
        ok, why = near_midnight(int(m.group(2)))
        assert ok, why
    over = send(b)
    assert over.status_code == 429
    assert "q=3;w=86400" in over.headers.get("RateLimit-Policy", ""), "the nominal day"
    ok, why = near_midnight(int(over.headers["Retry-After"]))
    assert ok, why
    assert send(a, "k2").status_code == 200, "another key has its own day"

    check = requests.post(f"{a.admin}/v1/check", json={"rule": "daily", "key": "k1"},
                          timeout=5).json()
    assert check["allowed"] is False
    ok, why = near_midnight(check["retry_after_ms"] / 1000)
    assert ok, why
    # The count lives until the day ends (its TTL), not a fixed 24 h from now.
    ok, why = near_midnight(rs.client().pttl("sluice:{daily:k1}:fixed-window") / 1000)
    assert ok, why


def test_a_leased_daily_quota_admits_the_days_quota_at_most(redis_server, gateways):
    rs = redis_server()
    leased = CONFIG.replace("on_failure: fail-closed", "on_failure: fail-closed\n    lease: 2\n"
                            "    lease_ttl: 10s")
    a, b = gateways(leased, rs.url, n=2)
    codes = [send(g).status_code for g in (a, b, a, b, a, b)]
    assert codes.count(200) == 3, codes
    refused = send(a)
    assert refused.status_code == 429
    ok, why = near_midnight(int(refused.headers["Retry-After"]))
    assert ok, why
