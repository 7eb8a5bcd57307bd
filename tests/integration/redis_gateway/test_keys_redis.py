"""GET and DELETE /v1/rules/{name}/keys/{key}, SLUICE.PEEK and SLUICE.RESET on rules kept in
Redis: the state every instance shares is read without being charged (Sluice's script, request
kind p) and reset (kind x: the state key deleted), and when Redis is gone the look is refused
(503) rather than answered by the failure policy. Real redis-server, real sluice processes."""
import redis
import requests

import time

from integration_support import ServeProcess, free_port  # on sys.path through conftest

CONFIG = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
workers: 1
write_back: false
redis:
  url: {redis}
  timeout: 200ms
routes:
  - name: api
    match: {{path_prefix: /}}
    respond: {{status: 200, body: "ok\\n"}}
    rules: [per-user]
rules:
  per-user:
    limit: gcra:rate=1/m,burst=2
    key: header:X-User
    storage: redis
    on_failure: fail-open
  nginx-like:
    limit: leaky-bucket:rate=1/m,burst=2
    key: header:X-User
    storage: redis
  windowed:
    limit: sliding-window:limit=4,window=1h
    key: header:X-User
    storage: redis
"""


def look(g, rule, key, method="GET"):
    return requests.request(method, f"{g.admin}/v1/rules/{rule}/keys/{key}", timeout=5)


def test_a_key_one_instance_spent_is_seen_and_reset_from_another(redis_server, gateways):
    rs = redis_server()
    a, b = gateways(CONFIG, rs.url, n=2)
    # limit 3 (burst 2 + 1) per key, shared in Redis: two through a, one through b.
    for g in (a, a, b):
        assert requests.get(g.url + "/", headers={"X-User": "alice"}, timeout=5).ok
    assert requests.get(a.url + "/", headers={"X-User": "alice"}, timeout=5).status_code == 429
    first = look(b, "per-user", "alice")
    assert first.status_code == 200
    body = first.json()
    assert body["storage"] == "redis" and body["seen"] is True
    assert body["allowed"] is False and body["remaining"] == 0 and body["limit"] == 3
    assert 50000 < body["retry_after_ms"] <= 60000  # 60 s less the time the calls took
    assert 170000 < body["reset_after_ms"] <= 180000
    second = look(a, "per-user", "alice").json()
    assert second["remaining"] == 0 and second["allowed"] is False
    assert second["retry_after_ms"] <= body["retry_after_ms"]  # not charged: only time moved

    assert rs.client().keys("sluice:{per-user:alice}*")
    reset = look(b, "per-user", "alice", "DELETE").json()
    assert reset["reset"] is True and reset["seen"] is True and reset["remaining"] == 3
    assert not rs.client().keys("sluice:{per-user:alice}*")
    # a still holds Redis's last refusal of alice (redis.cache_denials, 1s by default): a reset
    # through another instance reaches it within that; one through a itself at once.
    start = time.monotonic()
    while not requests.get(a.url + "/", headers={"X-User": "alice"}, timeout=5).ok:
        assert time.monotonic() - start < 1.5, "a kept its refusal past cache_denials"
        time.sleep(0.05)
    assert look(a, "per-user", "alice").json()["remaining"] == 2
    for _ in range(3):
        requests.get(a.url + "/", headers={"X-User": "alice"}, timeout=5)  # spent, and refused
    assert look(a, "per-user", "alice", "DELETE").json()["reset"] is True
    assert requests.get(a.url + "/", headers={"X-User": "alice"}, timeout=5).ok


def test_a_key_never_seen_answers_its_full_quota_and_stores_nothing(redis_server, gateways):
    rs = redis_server()
    g = gateways(CONFIG, rs.url)
    for rule, limit in (("per-user", 3), ("nginx-like", 3), ("windowed", 4)):
        body = look(g, rule, "nobody").json()
        assert body["seen"] is False, rule
        assert (body["remaining"], body["limit"], body["allowed"]) == (limit, limit, True), rule
    assert look(g, "per-user", "nobody", "DELETE").json()["seen"] is False
    # Only the instance's heartbeat (docs/dashboard.md#instances): no state for any key.
    assert [k for k in rs.client().keys("sluice:*")
            if not k.startswith(b"sluice:{instances}")] == []


def test_a_sliding_window_key_checked_over_http_is_seen_by_its_count(redis_server, gateways):
    rs = redis_server()
    g = gateways(CONFIG, rs.url)
    for _ in range(3):
        requests.post(g.admin + "/v1/check", json={"rule": "windowed", "key": "w"}, timeout=5)
    assert look(g, "windowed", "w").json()["remaining"] == 1
    assert look(g, "windowed", "w").json()["remaining"] == 1


def test_without_redis_a_look_is_refused_not_answered_by_the_failure_policy(redis_server,
                                                                            gateways):
    rs = redis_server()
    g = gateways(CONFIG, rs.url)
    assert look(g, "per-user", "erin").status_code == 200
    rs.kill()
    for method in ("GET", "DELETE"):
        r = look(g, "per-user", "erin", method)
        assert r.status_code == 503, method
        assert r.json()["field"] == "storage"
        assert "Redis" in r.json()["error"]
    assert look(g, "nope", "erin").status_code == 404


def test_sluice_peek_and_reset_over_resp_on_a_redis_rule(redis_server, tmp_path):
    rs = redis_server()
    resp_port, admin_port = free_port(), free_port()
    path = tmp_path / "sluice.yaml"
    path.write_text(CONFIG.format(gateway=free_port(), admin=admin_port, redis=rs.url))
    proc = ServeProcess(tmp_path, ["--config", str(path), "--resp", f"127.0.0.1:{resp_port}"],
                        r"admin listening on", what="sluice to listen")
    try:
        c = redis.Redis(host="127.0.0.1", port=resp_port, socket_timeout=5)
        assert c.execute_command("SLUICE.PEEK", "per-user", "fay") == [0, 3, 3, -1, 0, 0]
        for _ in range(3):
            c.execute_command("SLUICE.CHECK", "per-user", "fay")
        # Seconds rounded up: 60 and 180 less the time the calls took.
        peek = c.execute_command("SLUICE.PEEK", "per-user", "fay")
        assert peek[:3] == [1, 3, 0] and peek[5] == 1
        assert 59 <= peek[3] <= 60 and 179 <= peek[4] <= 180
        again = c.execute_command("SLUICE.PEEK", "per-user", "fay")
        assert again[:3] == peek[:3] and again[3] <= peek[3]  # not charged
        assert c.execute_command("SLUICE.RESET", "per-user", "fay") == 1
        assert c.execute_command("SLUICE.RESET", "per-user", "fay") == 0
        assert c.execute_command("SLUICE.CHECK", "per-user", "fay")[:3] == [0, 3, 2]
        # A leaky bucket's new key: nginx passes its first request free, so burst + 1 are left.
        assert c.execute_command("SLUICE.PEEK", "nginx-like", "gus") == [0, 3, 3, -1, 0, 0]
    finally:
        proc.stop()


SPECS = ["token-bucket:rate=10/m,burst=5", "gcra:rate=10/m,burst=4",
         "leaky-bucket:rate=10/m,burst=4", "fixed-window:limit=5,window=1h",
         "sliding-window:limit=5,window=1h", "smooth-bursty:rate=1/s",
         "smooth-warmup:rate=1/s,warmup=2s", "queue:rate=1/s", "concurrency:limit=5"]
# Windows start at multiples of their length on each store's own clock (steady here, Redis's
# TIME there): their reset times differ by where the clocks stand, not by the look.
WINDOWED = ("fixed-window", "sliding-window")


def parity_config():
    # Doubled braces: the gateway fixture formats the config.
    rules = "".join(f"  l{i}: {{{{limit: \"{s}\", key: header:X-User}}}}\n"
                    f"  r{i}: {{{{limit: \"{s}\", key: header:X-User, storage: redis}}}}\n"
                    for i, s in enumerate(SPECS))
    head = CONFIG.split("rules:\n  per-user:")[0]
    return head + "rules:\n" + rules


def test_a_look_in_redis_answers_as_the_local_table_for_every_algorithm(redis_server, gateways):
    # The script's peek (dispatch.lua) and core::peek, on the same history: two checks.
    rs = redis_server()
    g = gateways(parity_config().replace("rules: [per-user]", "rules: [l0]"), rs.url)
    for i, spec in enumerate(SPECS):
        for rule in (f"l{i}", f"r{i}"):
            for _ in range(2):
                requests.post(g.admin + "/v1/check", json={"rule": rule, "key": "p"}, timeout=5)
        local, remote = look(g, f"l{i}", "p").json(), look(g, f"r{i}", "p").json()
        assert remote["storage"] == "redis" and local["storage"] == "local"
        for field in ("seen", "allowed", "remaining", "limit"):
            assert local[field] == remote[field], (spec, field, local, remote)
        if not spec.startswith(WINDOWED):
            for field in ("retry_after_ms", "reset_after_ms"):
                assert abs(local[field] - remote[field]) <= 2000, (spec, field, local, remote)
        fresh_local, fresh_remote = look(g, f"l{i}", "new").json(), look(g, f"r{i}", "new").json()
        for field in ("seen", "allowed", "remaining", "limit", "retry_after_ms"):
            assert fresh_local[field] == fresh_remote[field], (spec, field)
