"""on_change on rules kept in Redis, two sluice instances on one real redis-server
(docs/distributed.md, "A change of limit"): a key that spent 8 of 10 before its rule went to
burst or limit 20 has what configuration.md's table says is left, whether the change came by
PUT /v1/rules or by a file reload, and both instances see the same state once both have the
new limit. keep keeps today's key names; reset counts on a key named by the limit (the old one
expires); proportional rescales the stored state the first time the new limit meets it. Until
an instance has the new limit too, it keeps to the old one: reset's old key, proportional's
state rescaled back to its numbers."""
import hashlib
import signal

import pytest
import requests

from integration_support import wait_until  # on sys.path through conftest

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
    rules: [r]
rules:
  r:
    limit: "LIMIT"
    key: header:X-User
    storage: redis
    on_failure: fail-closed
    on_change: ON_CHANGE
"""

# configuration.md's table: burst (or limit) 10 with 8 used (gcra passes burst + 1: 3 are
# left), changed to 20; `remaining` after the next request.
CASES = {
    "token-bucket": ("token-bucket:rate=1/m,burst=10", "token-bucket:rate=1/m,burst=20", 2,
                     {"keep": 1, "reset": 19, "proportional": 3}),
    "gcra": ("gcra:rate=1/m,burst=10", "gcra:rate=1/m,burst=20", 3,
             {"keep": 12, "reset": 20, "proportional": 4}),
    "fixed-window": ("fixed-window:limit=10,window=1h", "fixed-window:limit=20,window=1h", 2,
                     {"keep": 11, "reset": 19, "proportional": 3}),
}


def tag(limit):
    """The suffix of a reset rule's keys: the first 8 hex digits of the SHA-1 of the limit."""
    return hashlib.sha1(limit.encode()).hexdigest()[:8]


def config(limit, on_change):
    return CONFIG.replace("LIMIT", limit).replace("ON_CHANGE", on_change)


def spend(g, cost):
    """Charges `cost` to key k through the check API; its remaining."""
    r = requests.post(f"{g.admin}/v1/check", json={"rule": "r", "key": "k", "cost": cost},
                      timeout=5).json()
    assert r["allowed"] is True, r
    return r["remaining"]


def put(g, limit, on_change):
    r = requests.put(f"{g.admin}/v1/rules/r", timeout=5,
                     json={"limit": limit, "key": "header:X-User", "storage": "redis",
                           "on_failure": "fail-closed", "on_change": on_change})
    assert r.status_code == 200, r.text


def reload(g, text):
    before = g.stderr().count("sluice: config reloaded")
    g.config_path.write_text(text.format(gateway=g.gateway_port, admin=g.admin_port,
                                         redis=g.redis_url))
    g.proc.send_signal(signal.SIGHUP)
    wait_until(lambda: g.stderr().count("sluice: config reloaded") > before, what="the reload")


def remaining_after_request(g):
    """One gateway request of key k: its RateLimit available quota (a=), and its status."""
    r = requests.get(g.url + "/", headers={"X-User": "k"}, timeout=5)
    field = r.headers["RateLimit"]
    assert field.startswith('"r";a='), field
    return int(field.split(";")[1][2:]), r.status_code


def peek(g):
    return requests.get(f"{g.admin}/v1/rules/r/keys/k", timeout=5).json()


def pair(redis_server, gateways, limit, on_change):
    rs = redis_server()
    a, b = gateways(config(limit, on_change), rs.url, n=2)
    for g in (a, b):
        g.redis_url = rs.url
    return rs, a, b


@pytest.mark.parametrize("on_change", ["keep", "reset", "proportional"])
@pytest.mark.parametrize("algorithm", list(CASES))
def test_a_put_on_both_instances_leaves_what_on_change_says(redis_server, gateways, algorithm,
                                                            on_change):
    old, new, left, expected = CASES[algorithm]
    rs, a, b = pair(redis_server, gateways, old, on_change)
    assert spend(a, 8) == left
    assert peek(b)["remaining"] == left, "one state for both instances"
    put(a, new, on_change)
    put(b, new, on_change)
    left, status = remaining_after_request(a)
    assert (left, status) == (expected[on_change], 200)
    # The other instance reads the same state under the same limit.
    assert peek(b)["remaining"] == expected[on_change]
    left, status = remaining_after_request(b)
    assert left == expected[on_change] - 1
    assert peek(a)["remaining"] == expected[on_change] - 1
    keys = sorted(k.decode() for k in rs.client().keys("sluice:{r:k}:*"))
    if on_change == "reset":
        # The old limit's key and the new one's, each named by its limit's canonical text, in
        # one hash tag (one cluster slot); the old one expires by its TTL.
        assert keys == sorted(f"sluice:{{r:k}}:{algorithm}:{tag(limit)}" for limit in (old, new))
    else:
        assert keys == [f"sluice:{{r:k}}:{algorithm}"], "today's key name"


@pytest.mark.parametrize("on_change", ["keep", "reset", "proportional"])
def test_a_file_reload_carries_the_state_as_a_put_does(redis_server, gateways, on_change):
    old, new, left, expected = CASES["gcra"]
    _, a, b = pair(redis_server, gateways, old, on_change)
    assert spend(b, 8) == left
    for g in (a, b):
        reload(g, config(new, on_change))
    assert remaining_after_request(a) == (expected[on_change], 200)
    assert peek(b)["remaining"] == expected[on_change]


def test_an_instance_not_yet_reloaded_keeps_to_the_old_limit(redis_server, gateways):
    """token-bucket rate=1/m burst 10 -> 20, 8 spent; instance a has the new limit, b not yet.
    reset: b counts on the old limit's key (2 left, 1 after its request) while a's new key
    has 19. proportional: both count on one key, each in its own numbers: a's 3 of 20 are 1.5
    of 10 for b (0 after its request), which are 1 of 20 again for a."""
    old, new, _, _ = CASES["token-bucket"]
    _, a, b = pair(redis_server, gateways, old, "reset")
    spend(a, 8)
    put(a, new, "reset")
    assert remaining_after_request(a) == (19, 200)
    assert remaining_after_request(b) == (1, 200)
    assert remaining_after_request(a) == (18, 200)

    _, a, b = pair(redis_server, gateways, old, "proportional")
    spend(a, 8)
    put(a, new, "proportional")
    assert remaining_after_request(a) == (3, 200)
    assert remaining_after_request(b) == (0, 200)
    put(b, new, "proportional")
    assert remaining_after_request(b) == (0, 200), "1 of 20: admitted, nothing left"
    assert remaining_after_request(a)[1] == 429


def test_one_put_that_turns_keep_into_proportional_rescales_the_state_keep_wrote(redis_server,
                                                                                 gateways):
    """The 8 used of burst 10 were written under keep, which records no numbers: the instances
    take them to be the limit they had before the PUT, 2 of 10 left are 4 of 20 (3 after the
    request), as a local rule's PUT does (tests/integration/gateway/test_tiers.py)."""
    old, new, left, expected = CASES["token-bucket"]
    _, a, b = pair(redis_server, gateways, old, "keep")
    assert spend(a, 8) == left
    put(a, new, "proportional")
    put(b, new, "proportional")
    assert remaining_after_request(b) == (expected["proportional"], 200)
    assert peek(a)["remaining"] == expected["proportional"]


@pytest.mark.parametrize("on_change", ["reset", "proportional"])
def test_a_tiers_change_follows_on_change_and_leaves_the_other_tiers(redis_server, gateways,
                                                                     on_change):
    """The pro tier goes from gcra burst 10 to 20 (8 used: 3 left), default stays at burst 5
    (2 used: 4 left): pro has the table's 20 or 4 left after a request, default 3."""
    tiers = {"default": "gcra:rate=1/m,burst=5", "pro": "gcra:rate=1/m,burst=10"}
    rule = {"key": "header:X-User", "storage": "redis", "on_failure": "fail-closed",
            "on_change": on_change, "tier": "header:X-Plan", "tiers": tiers}
    rs, a, b = pair(redis_server, gateways, "gcra:rate=1/m,burst=1", on_change)
    for g in (a, b):
        assert requests.put(f"{g.admin}/v1/rules/r", json=rule, timeout=5).status_code == 200

    def check(g, tier, cost=1):
        return requests.post(f"{g.admin}/v1/check", timeout=5,
                             json={"rule": "r", "key": "k", "tier": tier, "cost": cost}).json()

    assert check(a, "pro", 8)["remaining"] == 3
    assert check(a, "default", 2)["remaining"] == 4
    rule["tiers"] = {"default": "gcra:rate=1/m,burst=5", "pro": "gcra:rate=1/m,burst=20"}
    for g in (a, b):
        assert requests.put(f"{g.admin}/v1/rules/r", json=rule, timeout=5).status_code == 200
    assert check(b, "pro")["remaining"] == {"reset": 20, "proportional": 4}[on_change]
    assert check(a, "default")["remaining"] == 3
    pro_keys = [k.decode() for k in rs.client().keys("sluice:{r/tier/pro:k}:*")]
    assert len(pro_keys) == (2 if on_change == "reset" else 1), pro_keys
