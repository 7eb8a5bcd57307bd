"""Calendar quotas through a real sluice: a daily fixed-window in Europe/Berlin counts the
gateway's requests and the decision API's checks, and the RateLimit reset, Retry-After and the
check's retry_after_ms all point at the next local midnight in Berlin (computed here with
Python's zoneinfo from the same wall clock). check-config takes it with storage: redis too
(tests/integration/redis_gateway/test_calendar_redis.py)."""
import re
import subprocess
import time
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import requests

from conftest import gateway_config, sluice_binary

BERLIN = ZoneInfo("Europe/Berlin")
DAILY = """\
  daily:
    limit: "fixed-window:limit=3,window=1d,align=calendar,timezone=Europe/Berlin"
    key: header:X-Api-Key
"""


def seconds_to_berlin_midnight():
    now = datetime.now(BERLIN)
    midnight = datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), BERLIN)
    return midnight.timestamp() - time.time()


def reset_of(response):
    match = re.search(r'"daily";a=(\d+);w=(\d+)', response.headers["RateLimit"])
    assert match, response.headers["RateLimit"]
    return int(match.group(1)), int(match.group(2))


def near_midnight(seconds):
    expected = seconds_to_berlin_midnight()
    # t is rounded up to whole seconds; allow for the time the request took.
    return expected - 2 <= seconds <= expected + 2, (seconds, expected)


def test_the_fourth_request_of_the_day_waits_for_berlin_midnight(sluice, upstreams):
    up = upstreams(1)
    s = sluice(gateway_config([up.address], rules=DAILY, route_rules="[daily]"))
    send = lambda: requests.get(s.url + "/", headers={"X-Api-Key": "k1"}, timeout=10)  # noqa: E731
    for left in (2, 1, 0):
        r = send()
        assert r.status_code == 200
        remaining, t = reset_of(r)
        assert remaining == left
        ok, why = near_midnight(t)
        assert ok, why
    assert "q=3;w=86400" in send().headers.get("RateLimit-Policy", ""), "nominal day length"
    over = send()
    assert over.status_code == 429
    ok, why = near_midnight(int(over.headers["Retry-After"]))
    assert ok, why
    assert up.requests == 3
    assert requests.get(s.url + "/", headers={"X-Api-Key": "k2"}, timeout=10).status_code == 200

    # The decision API counts the same day in the same table: k1 is spent, k3 is not.
    check = lambda key: requests.post(s.admin + "/v1/check", timeout=10,  # noqa: E731
                                      json={"rule": "daily", "key": key}).json()
    spent = check("k1")
    assert spent["allowed"] is False
    ok, why = near_midnight(spent["retry_after_ms"] / 1000)
    assert ok, why
    fresh = check("k3")
    assert fresh["allowed"] is True and fresh["remaining"] == 2
    ok, why = near_midnight(fresh["reset_after_ms"] / 1000)
    assert ok, why


def check_config(tmp_path, text):
    """`sluice check-config` on `text`: its exit code and its stderr."""
    config = tmp_path / "sluice.yaml"
    config.write_text(text)
    run = subprocess.run([sluice_binary(), "check-config", str(config)], capture_output=True,
                         text=True, timeout=30)
    return run.returncode, run.stderr


def test_check_config_takes_a_calendar_window_kept_in_redis(tmp_path):
    rc, err = check_config(tmp_path, """\
listen: 127.0.0.1:8080
redis: {url: "redis://127.0.0.1:6379"}
routes:
  - {name: all, match: {path_prefix: /}, respond: {status: 200}, rules: [daily]}
rules:
  daily:
    limit: fixed-window:limit=1000,window=1d,align=calendar,timezone=Europe/Berlin
    key: header:X-Api-Key
    storage: redis
""")
    assert rc == 0, err


def test_check_config_names_an_unknown_time_zone(tmp_path):
    rc, err = check_config(tmp_path, """\
listen: 127.0.0.1:8080
routes:
  - {name: all, match: {path_prefix: /}, respond: {status: 200}, rules: [daily]}
rules:
  daily:
    limit: fixed-window:limit=1000,window=1d,align=calendar,timezone=Europe/Atlantis
    key: header:X-Api-Key
""")
    assert rc != 0
    assert "unknown time zone 'Europe/Atlantis'" in err, err
