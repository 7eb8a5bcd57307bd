"""The HTTP decision service on rules kept in Redis: GET /v1/check/{rule} (nginx
auth_request's call) and POST /v1/check, single and batched, share the Redis state with the
gateway, and follow the rule's failure policy when Redis is gone; SLUICE.CHECK (RESP) decides them through
the same engine."""
import pytest
import redis
import requests

from integration_support import ServeProcess, free_port  # on sys.path through conftest

CONFIG = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
workers: 1
write_back: false
redis:
  url: {redis}
  timeout: 50ms
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
    on_failure: fail-closed
"""


def check(g, key):
    return requests.get(f"{g.admin}/v1/check/per-user", params={"key": key}, timeout=5)


def test_get_check_counts_against_the_same_redis_state_as_the_gateway(redis_server, gateways):
    rs = redis_server()
    g = gateways(CONFIG, rs.url)
    # burst=2 -> 3 at once per minute (limit = burst + 1), whoever asks.
    assert requests.get(g.url + "/", headers={"X-User": "alice"}, timeout=5).status_code == 200
    assert check(g, "alice").status_code == 204
    assert requests.get(g.url + "/", headers={"X-User": "alice"}, timeout=5).status_code == 200
    denied = check(g, "alice")
    assert denied.status_code == 429
    assert int(denied.headers["Retry-After"]) > 0
    assert check(g, "bob").status_code == 204


def test_a_batch_decides_its_redis_checks_in_order(redis_server, gateways):
    rs = redis_server()
    g = gateways(CONFIG, rs.url)
    body = {"checks": [{"rule": "per-user", "key": "carol"} for _ in range(4)]
            + [{"rule": "nope", "key": "x"}]}
    results = requests.post(g.admin + "/v1/check", json=body, timeout=5).json()["results"]
    assert [r.get("allowed") for r in results[:4]] == [True, True, True, False]
    assert [r.get("remaining") for r in results[:3]] == [2, 1, 0]
    assert results[4] == {"error": "unknown rule 'nope'", "field": "rule"}


def test_without_redis_a_check_follows_the_failure_policy_at_once(redis_server, gateways):
    rs = redis_server()
    g = gateways(CONFIG, rs.url)
    assert check(g, "dave").status_code == 204
    rs.kill()
    r = check(g, "dave")
    assert r.status_code == 429  # fail-closed
    assert r.elapsed.total_seconds() < 1.0
    assert g.metric("sluice_redis_answers_total", source="fail_closed") >= 1


def test_sluice_check_over_resp_decides_a_redis_rule_with_the_same_state(redis_server, tmp_path):
    # SLUICE.CHECK goes through the engine like /v1/check: a rule kept in Redis is decided in
    # Redis, and the HTTP decision service sees what RESP spent.
    rs = redis_server()
    resp_port, admin_port = free_port(), free_port()
    path = tmp_path / "sluice.yaml"
    path.write_text(CONFIG.format(gateway=free_port(), admin=admin_port, redis=rs.url))
    proc = ServeProcess(tmp_path, ["--config", str(path), "--resp", f"127.0.0.1:{resp_port}"],
                        r"admin listening on", what="sluice to listen")
    try:
        client = redis.Redis(host="127.0.0.1", port=resp_port, socket_timeout=5)
        # burst=2: limit 3; remaining 2, 1, 0, then limited.
        replies = [client.execute_command("SLUICE.CHECK", "per-user", "erin") for _ in range(4)]
        assert [r[0] for r in replies] == [0, 0, 0, 1]
        assert [r[2] for r in replies[:3]] == [2, 1, 0]
        assert replies[3][3] > 0  # retry after, in seconds
        r = requests.get(f"http://127.0.0.1:{admin_port}/v1/check/per-user",
                         params={"key": "erin"}, timeout=5)
        assert r.status_code == 429
        assert rs.client().keys("sluice:{per-user:erin}*")
        assert client.execute_command("CL.THROTTLE", "k", "1", "1", "1")[0] == 0
    finally:
        proc.stop()
