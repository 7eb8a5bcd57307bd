"""on_deny: {block: D} on a rule kept in Redis, two sluice instances on one real redis-server:
a key one instance refused is refused by the other too, for D, without the limit being asked;
the admin API of either shows and lifts the block. docs/configuration.md, `on_deny`."""
import time

import requests

from integration_support import status_from, wait_until  # on sys.path through conftest

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
    rules: [login]
rules:
  login:
    limit: gcra:rate=2/s,burst=1
    key: header:X-User
    storage: redis
    on_failure: fail-closed
    on_deny:
      block: 10m
"""


def get(g, user):
    return requests.get(g.url + "/", headers={"X-User": user}, timeout=5)


def block(g, user):
    return requests.get(f"{g.admin}/v1/rules/login/blocks/{user}", timeout=5)


def test_a_key_refused_through_one_instance_is_blocked_on_both_until_lifted(redis_server,
                                                                           gateways):
    rs = redis_server()
    a, b = gateways(CONFIG, rs.url, n=2)
    # gcra 2/s, burst 1: two at once, the third refused (and the key blocked for 10m).
    assert [get(g, "u").status_code for g in (a, b)] == [200, 200]
    over = get(a, "u")
    assert over.status_code == 429
    assert 599 <= int(over.headers["Retry-After"]) <= 600, "the block's time, not gcra's 0.5s"

    time.sleep(1.1)  # gcra alone would admit two again by now
    on_b = get(b, "u")
    assert on_b.status_code == 429, "b never refused u itself: the block is Redis's"
    assert 597 <= int(on_b.headers["Retry-After"]) <= 599
    assert get(b, "v").status_code == 200, "another key is not blocked"
    assert 597_000 <= rs.cmd("PTTL", "sluice:{login:u}:gcra:block") <= 600_000

    shown = block(a, "u").json()
    assert shown["blocked"] is True and 597_000 <= shown["retry_after_ms"] <= 599_000, shown
    assert block(a, "v").json()["blocked"] is False

    lifted = requests.delete(f"{b.admin}/v1/rules/login/blocks/u", timeout=5)
    assert lifted.status_code == 200, lifted.text
    assert lifted.json()["unblocked"] is True
    assert get(b, "u").status_code == 200
    # a kept its refusal of u for at most redis.cache_denials (1s): then Redis answers.
    wait_until(lambda: get(a, "u").status_code == 200, timeout=3,
               what="the other instance to see the block lifted")
    assert block(a, "u").json()["blocked"] is False
    assert requests.delete(f"{a.admin}/v1/rules/login/blocks/u",
                           timeout=5).json()["unblocked"] is False


def test_a_blocked_request_charges_nothing_and_the_block_outlives_an_instance(redis_server,
                                                                             gateways):
    rs = redis_server()
    a = gateways(CONFIG, rs.url)
    assert [get(a, "u").status_code for _ in range(3)] == [200, 200, 429]
    state = rs.cmd("GET", "sluice:{login:u}:gcra")
    for _ in range(5):
        assert get(a, "u").status_code == 429
    assert rs.cmd("GET", "sluice:{login:u}:gcra") == state, "blocked requests are not decided"
    a.stop()
    c = gateways(CONFIG, rs.url)
    assert get(c, "u").status_code == 429, "a restart does not lift a block kept in Redis"
    assert block(c, "u").json()["blocked"] is True
