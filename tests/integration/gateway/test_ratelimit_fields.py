"""The RateLimit-Policy and RateLimit fields of every algorithm a route can use, admitted and
refused, in each draft's syntax (headers.draft: 11 and 12, the default), as a client of
draft-ietf-httpapi-ratelimit-headers reads them (ratelimit_draft.py): well formed, one policy
per rule named by an sf-String, each available quota within the q of the policy it names, the
effective window a non-negative integer that on a refusal is the same point in time as
Retry-After, and one unit's time (not 0) for a continuous limit with everything left."""
import concurrent.futures
import re
import time

import pytest
import requests

from ratelimit_draft import Malformed, Token, check, parse_list

# name: (limit, extra rule fields). Each is tight enough to refuse within a few requests, and
# the continuous ones hold more than their rate per second (burst above rate), which is where
# the old fields put r above q. Slow rates, so that a loaded machine refills nothing meanwhile.
ALGORITHMS = {
    "tb": ("token-bucket:rate=1/m,burst=4", ""),
    "gc": ("gcra:rate=1/m,burst=3", ""),
    "lb": ("leaky-bucket:rate=1/s,burst=3", ""),  # admitted ones wait their turn
    "sb": ("smooth-bursty:rate=1/s,max-burst=4s", ""),
    "su": ("smooth-warmup:rate=2/s,warmup=2s,cold-factor=3", ""),
    "qu": ("queue:rate=2/s,max-wait=600ms", ", action: delay, max_wait: 600ms"),
    "fw": ("fixed-window:limit=3,window=1h", ""),
    "sw": ("sliding-window:limit=3,window=1h", ""),
    "cc": ("concurrency:limit=1", ""),
}


DRAFTS = [11, 12]


def config(upstream, draft=None):
    # The concurrency route takes the upstream's /slow, which answers after ?ms=.
    routes = "".join(
        f"  - {{{{name: {n}, match: {{{{path_prefix: {'/slow' if n == 'cc' else f'/{n}/'}}}}}, "
        f"upstream: app, rules: [{n}]}}}}\n" for n in ALGORITHMS)
    rules = "".join(f"  {n}: {{{{limit: \"{limit}\", key: client_ip{extra}}}}}\n"
                    for n, (limit, extra) in ALGORITHMS.items())
    headers = "" if draft is None else f"headers: {{{{draft: {draft}}}}}\n"
    return ("listen: 127.0.0.1:{gateway}\nadmin: 127.0.0.1:{admin}\nworkers: 1\n"
            f"access_log: \"{{access_log}}\"\n{headers}"
            f"upstreams:\n  app: {{{{servers: [{upstream.address}]}}}}\n"
            f"routes:\n{routes}rules:\n{rules}")


def assert_reads(r, name, draft=12):
    """The fields of one response, read as the draft says; returns its item for `name`."""
    fields = check(r.headers, draft)
    assert list(fields) == [name], r.headers
    item = fields[name]
    assert item["t"] is not None or name == "cc", r.headers
    if r.status_code == 429:
        assert item["r"] == 0, r.headers
        if "Retry-After" in r.headers:
            assert item["t"] == int(r.headers["Retry-After"]), r.headers
    return item


def test_the_validator_refuses_what_a_draft_client_cannot_read():
    # The fields sluice sent before: r=99 beside a policy of q=10.
    with pytest.raises(Malformed, match="r=99 is more than its policy's q=10"):
        check({"RateLimit-Policy": '"tb";q=10;w=1, "tb-burst";q=100',
               "RateLimit": '"tb";r=99;t=10'}, 11)
    for draft, policy, status in [
            (11, '"a";w=1', '"a";r=0'), (11, '"a";q=1', '"b";r=0'), (11, '"a";q=1', '"a";r=-1'),
            (11, '"a";q=1', '"a";r=0;t=1.5'), (11, '"a";q=1, "a";q=2', '"a";r=0'),
            (11, '"a";q=1,', '"a";r=0'), (11, 'a;q=1', 'a;r=0'), (11, '"a";q=1;w=0', '"a";r=0'),
            (11, '"a";q=1;qu=requests', '"a";r=0'), (11, '"a";q=1', '"a";a=0;w=1'),
            (12, '"a";q=1', '"a";r=0;t=1'), (12, '"a";q=1', '"a";a=2'),
            (12, '"a";q=1', '"a";a=0;w=-1'), (12, '"a";q=1', '"a";a=0;c=?1'),
            (12, '"a";q=1', '"a";a=0;w=1234567890123456'), (12, '"a";q=1', '("a");a=0'),
            (12, '"a";q=1', '"a";A=0'), (12, '"a";q=1', '"a";a=0 "b"')]:
        with pytest.raises(Malformed):
            check({"RateLimit-Policy": policy, "RateLimit": status}, draft)
    # What either draft's client reads: unknown parameters ignored, SP and HTAB around ",".
    assert check({"RateLimit-Policy": '"x";q=5;w=60;acme-burst=9,\t"y";q=2;pk=:AQI=:',
                  "RateLimit": '"x";a=4;w=3;c=1;r=99 ,"y";a=0'}) == {
        "x": {"q": 5, "w": 60, "r": 4, "t": 3}, "y": {"q": 2, "w": None, "r": 0, "t": None}}
    assert parse_list('"x\\"y";q=1;qu="concurrent-requests", z;q=2;d=1.5;b;k=@17;s=%"e"') == [
        ('x"y', {"q": 1, "qu": "concurrent-requests"}),
        ("z", {"q": 2, "d": 1.5, "b": True, "k": ("date", 17), "s": ("display", "e")})]
    assert isinstance(parse_list("z;q=2")[0][0], Token)


def first_and_crowd(url):
    """A few one after another, then a crowd at once (the queue holds one after another in
    turn and refuses only those that would wait past max_wait)."""
    with requests.Session() as session:
        replies = [session.get(url, timeout=10) for _ in range(5)]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        replies += pool.map(lambda _: requests.get(url, timeout=10), range(8))
    return replies


@pytest.mark.parametrize("draft", DRAFTS)
@pytest.mark.parametrize("name", [n for n in ALGORITHMS if n != "cc"])
def test_every_algorithms_fields_read_right_admitted_and_refused(sluice, upstreams, name, draft):
    s = sluice(config(upstreams(1), draft))
    seen = {}
    for r in first_and_crowd(f"{s.url}/{name}/"):
        seen.setdefault(r.status_code, []).append(assert_reads(r, name, draft))
        # The other draft's client finds its REQUIRED parameter missing: the switch is real.
        with pytest.raises(Malformed, match="is required"):
            check(r.headers, 23 - draft)
    assert 200 in seen and 429 in seen, seen
    admitted = seen[200]
    # What is left only falls while nothing refills in between (at most one unit may).
    assert admitted[-1]["r"] <= admitted[0]["r"] + 1, admitted
    q = admitted[0]["q"]
    assert all(a["q"] == q for a in admitted), admitted
    # Within the effective window no more than what is left can be used: a limit that is
    # not a window (whose end is far off) gets more within one unit of its rate, so its window
    # is at most the policy's w per q, rounded up.
    if name not in ("fw", "sw"):
        w = admitted[0]["w"]
        assert all(0 < a["t"] <= -(-w // q) for a in admitted), admitted


def test_the_default_is_draft_12(sluice, upstreams):
    s = sluice(config(upstreams(1)))
    r = requests.get(f"{s.url}/fw/", timeout=10)
    assert r.status_code == 200
    assert r.headers["RateLimit-Policy"] == '"fw";q=3;w=3600', r.headers
    assert re.fullmatch(r'"fw";a=2;w=(\d+)', r.headers["RateLimit"]), r.headers
    assert 0 < assert_reads(r, "fw")["t"] <= 3600  # the end of the clock's hour


@pytest.mark.parametrize("draft", DRAFTS)
def test_the_check_api_answers_in_the_same_draft(sluice, upstreams, draft):
    s = sluice(config(upstreams(1), draft))
    replies = [requests.get(f"{s.admin}/v1/check/gc", params={"key": "k"}, timeout=5)
               for _ in range(5)]
    assert [r.status_code for r in replies] == [204] * 4 + [429]
    assert [assert_reads(r, "gc", draft)["r"] for r in replies] == [3, 2, 1, 0, 0]
    assert replies[0].headers["RateLimit-Policy"] == '"gc";q=4;w=240'
    status = "RateLimit: " + replies[0].headers["RateLimit"]
    assert status == ('RateLimit: "gc";r=3;t=60' if draft == 11 else 'RateLimit: "gc";a=3;w=60')


@pytest.mark.parametrize("draft", DRAFTS)
def test_a_concurrency_limits_fields_read_right_admitted_and_refused(sluice, upstreams, draft):
    s = sluice(config(upstreams(1), draft))
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        slow = pool.submit(requests.get, f"{s.url}/slow?ms=1500", timeout=10)
        time.sleep(0.3)
        refused = requests.get(f"{s.url}/slow?ms=0", timeout=10)
        admitted = slow.result()
    assert admitted.status_code == 200 and refused.status_code != 200
    assert assert_reads(admitted, "cc", draft)["q"] == 1
    assert assert_reads(refused, "cc", draft) == {"q": 1, "w": None, "r": 0, "t": None}
    assert parse_list(refused.headers["RateLimit-Policy"])[0][1]["qu"] == "concurrent-requests"


def test_refusals_on_one_connection_say_what_is_true_for_each(sluice, upstreams):
    # A connection's refusal is copied from its last one while nothing in it changes
    # (src/server/gateway/repeated_answer.hpp): the copy must follow the retry time as it runs
    # down, a rule changed through the admin API and each request's own X-Request-Id.
    from conftest import rule_config
    s = sluice(rule_config(upstreams(1), "fw", "fixed-window:limit=1,window=3s"))
    with requests.Session() as c:
        retry_after, ids = set(), set()
        deadline = time.monotonic() + 2.5
        while time.monotonic() < deadline:
            r = c.get(s.url + "/a", timeout=5)
            if r.status_code == 429:
                item = assert_reads(r, "fw")
                assert (item["q"], item["w"]) == (1, 3)
                retry_after.add(int(r.headers["Retry-After"]))
                ids.add(r.headers["X-Request-Id"])
            time.sleep(0.05)
        assert len(retry_after) >= 2, retry_after  # 3 s down to 1 s, across window ends
        assert len(ids) > 10  # a new one each time
        changed = requests.put(s.admin + "/v1/rules/fw", timeout=5,
                               json={"limit": "fixed-window:limit=2,window=1h",
                                     "key": "client_ip"})
        assert changed.status_code == 200, changed.text
        statuses = [c.get(s.url + "/a", timeout=5) for _ in range(3)]
        assert [r.status_code for r in statuses] == [200, 200, 429]
        item = assert_reads(statuses[-1], "fw")
        assert (item["q"], item["w"]) == (2, 3600)
