"""GET /v1/rules/{name}/blocks on a local rule, through the real gateway and decision API: the
keys a rule's on_deny blocks are listed, the longest time left first, their times going down;
a lifted or ended block is not listed; keys with odd bytes and long keys are listed safely;
under log_key: hash the keys show as the access log's hash; the table's cap holds, and its
memory is counted and bounded. docs/admin-api.md, "Blocks"."""
import time

import requests

from conftest import gateway_config
from test_access_log import xxh3_low64_hex

RULE = """\
  login:
    limit: "fixed-window:limit=1,window=1h"
    key: header:X-Api-Key
    on_deny:
      block: {block}
{extra}"""

CAPACITY = 16384


def config(upstreams, block="60s", extra=""):
    return gateway_config([upstreams(1).address], rules=RULE.format(block=block, extra=extra),
                          route_rules="[login]")


def send(s, key):
    return requests.get(s.url + "/", headers={"X-Api-Key": key}, timeout=10)


def ban(s, key):
    """The key's first request passes, its second is refused and starts its block."""
    assert send(s, key).status_code == 200
    assert send(s, key).status_code == 429


def listing(s, query=""):
    r = requests.get(f"{s.admin}/v1/rules/login/blocks{query}", timeout=30)
    assert r.status_code == 200, r.text
    return r.json()


def left(listed):
    return {b["key"]: b["retry_after_ms"] for b in listed["blocks"]}


def test_blocked_keys_are_listed_latest_first_with_their_time_left_going_down(sluice, upstreams):
    s = sluice(config(upstreams))
    assert listing(s) == {"rule": "login", "storage": "local", "hashed": False, "count": 0,
                          "total": 0, "truncated": False, "capacity": CAPACITY, "blocks": []}
    for key in ("a", "b", "c"):
        ban(s, key)
        time.sleep(0.05)  # each block ends a little later than the one before
    assert send(s, "d").status_code == 200  # admitted: not blocked, not listed
    first = listing(s)
    assert [b["key"] for b in first["blocks"]] == ["c", "b", "a"], first
    assert (first["count"], first["total"], first["truncated"]) == (3, 3, False)
    assert all(59_000 <= ms <= 60_000 for ms in left(first).values()), first

    top = listing(s, "?n=2")
    assert [b["key"] for b in top["blocks"]] == ["c", "b"]
    assert (top["count"], top["total"], top["truncated"]) == (2, 3, True)

    time.sleep(1.1)
    later = left(listing(s))
    for key, ms in left(first).items():
        assert 1_000 <= ms - later[key] <= 3_000, (key, ms, later[key])

    assert requests.delete(f"{s.admin}/v1/rules/login/blocks/b", timeout=10).json()["unblocked"]
    assert [b["key"] for b in listing(s)["blocks"]] == ["c", "a"]
    assert send(s, "b").status_code == 429, "lifted, then refused by its limit: blocked again"
    assert [b["key"] for b in listing(s)["blocks"]] == ["b", "c", "a"]


def test_an_ended_block_is_not_listed(sluice, upstreams):
    s = sluice(config(upstreams, block="1s"))
    ban(s, "short")
    assert [b["key"] for b in listing(s)["blocks"]] == ["short"]
    time.sleep(1.2)
    assert listing(s)["blocks"] == [] and listing(s)["total"] == 0
    assert send(s, "short").status_code == 429, "its limit (1 an hour) still refuses it"


def test_keys_with_odd_bytes_and_long_keys_are_listed_exactly(sluice, upstreams):
    s = sluice(config(upstreams))
    raw = b"\xff\xfe-bin"  # not UTF-8: a header value may carry any byte but controls
    assert requests.get(s.url + "/", headers={"X-Api-Key": raw}, timeout=10).status_code == 200
    assert requests.get(s.url + "/", headers={"X-Api-Key": raw}, timeout=10).status_code == 429
    # Through the decision API (JSON): quotes, a backslash, a control character, non-ASCII.
    odd = 'q"uo\\te\t\u0001 \u00e9\u65e5'
    long_ascii = "k" * 300
    long_text = "a" + "\u00e9" * 200  # 401 bytes: byte 256 falls inside an é
    for key in (odd, long_ascii, long_text):
        for want in (True, False):
            r = requests.post(f"{s.admin}/v1/check", json={"rule": "login", "key": key},
                              timeout=10)
            assert r.json()["allowed"] is want, r.text
    # json() would fail on a reply that is not UTF-8.
    listed = {b["key"]: b for b in listing(s)["blocks"]}
    assert len(listed) == 4, listed
    assert listed["\\xFF\\xFE-bin"]["key_hex"] == raw.hex(), listed
    assert listed[odd].keys() == {"key", "retry_after_ms"}, "text is listed as it is"
    assert listed["k" * 256]["key_bytes"] == 300
    assert listed["a" + "\u00e9" * 127]["key_bytes"] == 401, "cut at the é's start: 255 bytes"
    # The key given back, percent-encoded, lifts the block.
    gone = requests.delete(f"{s.admin}/v1/rules/login/blocks/%FF%FE-bin", timeout=10)
    assert gone.json()["unblocked"] is True
    assert "\\xFF\\xFE-bin" not in left(listing(s))


def test_under_log_key_hash_the_keys_show_as_the_access_log_hash(sluice, upstreams):
    s = sluice(config(upstreams, extra="    log_key: hash\n"))
    ban(s, "secret-user")
    listed = listing(s)
    assert listed["hashed"] is True
    [entry] = listed["blocks"]
    top = requests.get(f"{s.admin}/v1/rules/login/top?by=denied", timeout=10).json()
    assert entry["key"] == xxh3_low64_hex("secret-user")
    assert entry["key"] == top["keys"][0]["key"], "the same hash the top keys show"
    with open(s.access_log) as f:
        assert entry["key"] in f.read(), "and the access log writes"


def test_a_rule_without_on_deny_an_unknown_rule_and_a_bad_n_are_refused(sluice, upstreams):
    rules = '  plain:\n    limit: "gcra:rate=1/s,burst=1"\n    key: header:X-Api-Key\n'
    s = sluice(gateway_config([upstreams(1).address], rules=RULE.format(block="1m", extra="") +
                              rules, route_rules="[login, plain]"))
    r = requests.get(f"{s.admin}/v1/rules/plain/blocks", timeout=10)
    assert (r.status_code, r.json()["field"]) == (404, "on_deny")
    assert "no on_deny: block" in r.json()["error"]
    r = requests.get(f"{s.admin}/v1/rules/nope/blocks", timeout=10)
    assert (r.status_code, r.json()["field"]) == (404, "rule")
    for query in ("?n=0", "?n=1001", "?n=x", "?n=1&n=2", "?by=denied"):
        r = requests.get(f"{s.admin}/v1/rules/login/blocks{query}", timeout=10)
        assert r.status_code == 400, (query, r.text)
    assert listing(s, "?n=1000")["count"] == 0


def memory(s):
    return s.metric("sluice_limit_memory_bytes", rule="login")


def ban_through_checks(s, keys):
    """Each key checked twice, 1000 checks a batch (the decision API): admitted, then refused."""
    keys = list(keys)
    for at in range(0, len(keys), 500):
        batch = [{"rule": "login", "key": k} for k in keys[at:at + 500] for _ in range(2)]
        r = requests.post(f"{s.admin}/v1/check", json={"checks": batch}, timeout=30)
        assert r.status_code == 200, r.text


def test_the_table_holds_at_most_its_capacity_and_its_memory_is_counted_and_bounded(
        sluice, upstreams):
    s = sluice(config(upstreams))
    ban(s, "warm")  # the rule's top keys take their memory at its first decision
    before = memory(s)
    # 16 stripes of 1,024: enough keys that every stripe fills (deterministic hashes).
    ban_through_checks(s, (f"user-{i:05d}" for i in range(CAPACITY + 3000)))
    full = listing(s, "?n=1000")
    assert (full["total"], full["count"], full["truncated"]) == (CAPACITY, 1000, True)
    grown = memory(s) - before
    # 128 bytes a short key (its text fits inside its std::string): 2 MiB when full, the
    # warm-up key's 128 already in `before`.
    assert grown == 128 * (CAPACITY - 1), grown
    ban_through_checks(s, (f"more-{i:05d}" for i in range(3000)))
    assert listing(s)["total"] == CAPACITY
    assert memory(s) - before == grown, "full: a new block takes the place of another"
    assert all(b["key"].startswith("more-") for b in listing(s, "?n=1000")["blocks"]), \
        "the latest blocks are listed first"
