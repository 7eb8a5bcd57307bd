"""on_deny: {block: D} through the real gateway: a key over its limit is refused for D (Retry-After
the block's time left) even once its limit would admit it again; another key is not; the admin
API shows the block and lifts it, and the key is admitted again."""
import subprocess
import time

import requests

from conftest import gateway_config, sluice_binary

# One request a second per API key; a key that asks for more is banned for 60s.
BANNED = """\
  login:
    limit: "fixed-window:limit=1,window=1s"
    key: header:X-Api-Key
    on_deny:
      block: 60s
"""


def send(s, key):
    return requests.get(s.url + "/", headers={"X-Api-Key": key}, timeout=10)


def test_a_key_over_its_limit_is_refused_for_the_block_until_the_block_is_deleted(sluice,
                                                                                 upstreams):
    up = upstreams(1)
    s = sluice(gateway_config([up.address], rules=BANNED, route_rules="[login]"))
    assert send(s, "a").status_code == 200
    over = send(s, "a")
    assert over.status_code == 429
    assert 59 <= int(over.headers["Retry-After"]) <= 60, "the block's time, not the window's 1s"

    time.sleep(1.2)  # the window's own retry time has passed: the limit alone would admit
    blocked = send(s, "a")
    assert blocked.status_code == 429
    assert 57 <= int(blocked.headers["Retry-After"]) <= 59
    assert send(s, "b").status_code == 200, "another key is not blocked"

    shown = requests.get(f"{s.admin}/v1/rules/login/blocks/a", timeout=10)
    assert shown.status_code == 200, shown.text
    assert shown.json()["blocked"] is True
    assert 57_000 <= shown.json()["retry_after_ms"] <= 59_000
    assert requests.get(f"{s.admin}/v1/rules/login/blocks/b", timeout=10).json()["blocked"] is False

    lifted = requests.delete(f"{s.admin}/v1/rules/login/blocks/a", timeout=10)
    assert lifted.status_code == 200, lifted.text
    assert lifted.json()["unblocked"] is True
    assert send(s, "a").status_code == 200
    assert up.requests == 3  # a, b, and a after its block was lifted


def test_the_blocks_of_a_rule_without_on_deny_are_not_found(sluice, upstreams):
    rule = '  plain:\n    limit: "gcra:rate=1/s,burst=1"\n    key: header:X-Api-Key\n'
    s = sluice(gateway_config([upstreams(1).address], rules=rule, route_rules="[plain]"))
    r = requests.get(f"{s.admin}/v1/rules/plain/blocks/a", timeout=10)
    assert r.status_code == 404
    assert "no on_deny: block" in r.text


def test_the_rule_api_shows_and_takes_on_deny(sluice, upstreams):
    s = sluice(gateway_config([upstreams(1).address], rules=BANNED, route_rules="[login]"))
    assert requests.get(f"{s.admin}/v1/rules/login", timeout=10).json()["on_deny"] == {"block": "1m"}


def test_check_config_refuses_a_block_on_a_leased_redis_rule(upstreams, tmp_path):
    rule = BANNED + "    storage: redis\n    lease: 10\n"
    text = gateway_config([upstreams(1).address], rules=rule, route_rules="[login]",
                          extra='redis: {{url: "redis://127.0.0.1:6379"}}')
    path = tmp_path / "bad.yaml"
    path.write_text(text.format(gateway=1, admin=2, access_log="x"))
    out = subprocess.run([sluice_binary(), "check-config", str(path)], capture_output=True,
                         text=True)
    assert out.returncode != 0
    assert "field 'on_deny': a leased rule refuses from permits taken ahead" in out.stderr, \
        out.stderr
