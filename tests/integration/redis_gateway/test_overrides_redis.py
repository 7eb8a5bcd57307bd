"""Per-key overrides of a rule kept in Redis, set through the admin API: kept in Redis (hash
sluice:{overrides}) for every instance on it, never in the config file. Real sluice instances
on one real redis-server; docs/admin-api.md, "Overrides", gives what each call answers."""
import time

import requests

from integration_support import status_from, wait_until  # on sys.path through conftest

CONFIG = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
workers: 1
write_back: true
redis:
  url: {redis}
  timeout: 200ms
routes:
  - name: api
    match: {{path_prefix: /}}
    respond: {{status: 200, body: "ok\\n"}}
    rules: [plan]
rules:
  plan:
    limit: gcra:rate=1/m,burst=1
    key: header:X-User
    storage: redis
    on_failure: fail-closed
    overrides:
      customer-42: gcra:rate=1/m,burst=6
"""

HASH = "sluice:{overrides}"


def override(g, key):
    return requests.get(f"{g.admin}/v1/rules/plan/overrides/{key}", timeout=5)


def put(g, key, limit):
    return requests.put(f"{g.admin}/v1/rules/plan/overrides/{key}", json={"limit": limit},
                        timeout=5)


def delete(g, key):
    return requests.delete(f"{g.admin}/v1/rules/plan/overrides/{key}", timeout=5)


def admitted_across(instances, user):
    """Requests for `user` admitted, alternating between the instances, until one is refused
    (gcra at 1/m: nothing comes back during the count)."""
    n = 0
    while n < 30 and status_from(instances[n % len(instances)].gateway_port, "127.0.0.1",
                                 {"X-User": user}) == 200:
        n += 1
    return n


def test_an_override_put_on_one_instance_is_in_force_on_the_other_within_two_seconds(
        redis_server, gateways, tmp_path):
    a, b = gateways(CONFIG, redis_server().url, n=2)
    r = put(a, "c-9", "gcra:rate=1/m,burst=9")
    assert r.status_code == 201, r.text
    assert r.json() == {"rule": "plan", "key": "c-9", "limit": "gcra:rate=1/m,burst=9",
                        "shared": True}
    set_at = time.monotonic()
    wait_until(lambda: override(b, "c-9").status_code == 200, timeout=5,
               what="the other instance to read the override from Redis")
    assert time.monotonic() - set_at < 2.5, "polled every second"
    assert override(b, "c-9").json()["shared"] is True
    # burst=9: 10 at once, one budget over both instances (the default would admit 2).
    assert admitted_across([a, b], "c-9") == 10
    assert admitted_across([a, b], "c-8") == 2
    # Redis holds it; the config file (write_back: true) does not.
    for g in (a, b):
        assert "c-9" not in g.config_path.read_text()
    # A second PUT of the key replaces it: 200.
    r = put(b, "c-9", "gcra:rate=1/m,burst=3")
    assert r.status_code == 200, r.text
    wait_until(lambda: override(a, "c-9").json()["limit"] == "gcra:rate=1/m,burst=3", timeout=5,
               what="the replaced override on the first instance")


def test_a_shared_override_outlives_the_instance_that_set_it_and_a_delete_reaches_all(
        redis_server, gateways):
    rs = redis_server()
    a, b = gateways(CONFIG, rs.url, n=2)
    assert put(a, "c-9", "gcra:rate=1/m,burst=4").status_code == 201
    a.stop()
    c = gateways(CONFIG, rs.url)  # a new instance reads Redis's set at its start
    wait_until(lambda: override(c, "c-9").status_code == 200, timeout=5,
               what="a new instance to read the override")
    assert admitted_across([c], "c-9") == 5
    r = delete(c, "c-9")
    assert r.status_code == 200, r.text
    assert r.json()["limit"] == "gcra:rate=1/m,burst=4"
    wait_until(lambda: override(b, "c-9").status_code == 404, timeout=5,
               what="the delete to reach the other instance")
    assert rs.cmd("HLEN", HASH) == 0
    assert delete(b, "c-9").status_code == 404


def test_with_redis_down_a_put_is_refused_and_nothing_changes(redis_server, gateways):
    rs = redis_server()
    g = gateways(CONFIG, rs.url)
    rs.kill()
    r = put(g, "c-9", "gcra:rate=1/m,burst=9")
    assert r.status_code == 503, r.text
    assert "nothing changed" in r.json()["error"]
    assert override(g, "c-9").status_code == 404
    rs.start()
    time.sleep(1.5)  # a poll or more against the restarted, empty Redis
    assert override(g, "c-9").status_code == 404
    assert put(g, "c-9", "gcra:rate=1/m,burst=9").status_code == 201


def test_a_bad_override_is_refused_before_redis_holds_it(redis_server, gateways):
    rs = redis_server()
    g = gateways(CONFIG, rs.url)
    r = put(g, "c-9", "gcra:rate=fast")
    assert r.status_code == 400 and "limit" in r.json()["error"], r.text
    r = put(g, "c-9", "token-bucket:rate=1/s,burst=5")
    assert r.status_code == 400, r.text
    assert "token-bucket" in r.text and "gcra" in r.text, r.text
    assert rs.cmd("HLEN", HASH) == 0


def test_a_file_override_of_a_redis_rule_is_shown_but_changed_in_the_file(redis_server, gateways):
    g = gateways(CONFIG, redis_server().url)
    assert override(g, "customer-42").json() == {
        "rule": "plan", "key": "customer-42", "limit": "gcra:rate=1/m,burst=6", "shared": False}
    r = delete(g, "customer-42")
    assert r.status_code == 409 and "config file" in r.json()["error"], r.text
    # A shared one of the same key stands over the file's, for as long as it is set.
    assert put(g, "customer-42", "gcra:rate=1/m,burst=2").status_code == 201
    assert admitted_across([g], "customer-42") == 3
    assert delete(g, "customer-42").status_code == 200
    assert override(g, "customer-42").json()["shared"] is False


def test_an_entry_written_to_redis_by_hand_that_is_not_a_limit_is_left_out_and_logged(
        redis_server, gateways):
    rs = redis_server()
    g = gateways(CONFIG, rs.url)
    rs.cmd("HSET", HASH, "plan/c-1", "gcra:rate=1/m,burst=2", "plan/c-2", "not a limit")
    rs.cmd("INCR", HASH + ":gen")
    wait_until(lambda: override(g, "c-1").status_code == 200, timeout=5,
               what="the hand-written override")
    assert override(g, "c-2").status_code == 404
    wait_until(lambda: "plan/c-2" in g.stderr(), timeout=5, what="the entry left out, logged")
    assert "left out" in g.stderr()
