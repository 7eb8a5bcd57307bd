"""The gateway acting on the engine's verdicts: reject with Retry-After and RateLimit fields,
delay, dry-run, concurrency limits, and the client key behind (un)trusted proxies."""
import concurrent.futures
import re
import time

import requests

from conftest import rule_config, wait_until


def get(url, **kw):
    return requests.get(url, timeout=10, **kw)


def test_reject_after_burst_per_client_key(sluice, upstreams):
    up = upstreams(1)
    s = sluice(rule_config(up, "per-ip", "fixed-window:limit=3,window=1h",
                           extra="trusted_proxies: [127.0.0.1]"))
    a = [get(s.url + "/", headers={"X-Forwarded-For": "198.51.100.1"}) for _ in range(5)]
    assert [r.status_code for r in a] == [200, 200, 200, 429, 429]
    denied = a[3]
    assert int(denied.headers["Retry-After"]) >= 1
    assert denied.headers["RateLimit-Policy"].startswith('"per-ip";q=3')
    assert denied.headers["RateLimit"].startswith('"per-ip";a=0')
    assert denied.text == "Too Many Requests\n"
    # The fields ride on forwarded responses too.
    assert a[0].headers["RateLimit"].startswith('"per-ip";a=2')
    # Another client (another key) has its own budget.
    assert get(s.url + "/", headers={"X-Forwarded-For": "198.51.100.2"}).status_code == 200
    assert up.requests == 4
    assert s.metric("sluice_gateway_responses_total", code="4xx") == 2


def test_spoofed_forwarded_for_from_untrusted_peer_is_ignored(sluice, upstreams):
    up = upstreams(1)
    s = sluice(rule_config(up, "per-ip", "fixed-window:limit=2,window=1h"))
    codes = [get(s.url + "/", headers={"X-Forwarded-For": f"203.0.113.{i}"}).status_code
             for i in range(4)]
    assert codes == [200, 200, 429, 429], "the key must stay the peer, whatever XFF says"
    line = wait_until(lambda: [l for l in s.access_lines() if " 429 " in l],
                      what="a logged 429")[0]
    assert line.split(" ")[1] == "127.0.0.1"


def test_delay_holds_requests_in_order(sluice, upstreams):
    up = upstreams(1)
    s = sluice(rule_config(up, "paced", "token-bucket:rate=10/s,burst=1", key="const:all",
                           action="delay", max_wait="2s"))

    def timed(i):
        time.sleep(i * 0.01)  # arrive in order
        start = time.monotonic()
        r = get(s.url + f"/d{i}")
        return r.status_code, time.monotonic() - start

    with concurrent.futures.ThreadPoolExecutor(5) as pool:
        results = list(pool.map(timed, range(5)))
    assert [code for code, _ in results] == [200] * 5
    # 1 passes at once; the 4 others are held about 0.1 s apart: the last waits >= ~0.3 s.
    assert max(took for _, took in results) >= 0.25, results
    assert results[0][1] < max(took for _, took in results)
    decisions = [l.split(" ")[8] for l in s.access_lines()]  # the outcome column
    assert "delay" in decisions and "forward" in decisions
    assert s.metric("sluice_rule_requests_total", rule="paced", outcome="delayed") >= 3


def test_delay_beyond_max_wait_is_rejected(sluice, upstreams):
    up = upstreams(1)
    s = sluice(rule_config(up, "paced", "token-bucket:rate=1/s,burst=1", key="const:all",
                           action="delay", max_wait="100ms"))
    assert get(s.url + "/").status_code == 200
    assert get(s.url + "/").status_code == 429


def test_dry_run_never_blocks(sluice, upstreams):
    up = upstreams(1)
    s = sluice(rule_config(up, "shadow", "fixed-window:limit=1,window=1h", action="dry-run"))
    assert [get(s.url + "/").status_code for _ in range(6)] == [200] * 6
    assert up.requests == 6
    assert s.metric("sluice_rule_requests_total", rule="shadow", outcome="dry_run_denied") == 5
    # Logged, as documented: each of the 5 access-log lines says so, and the server log names
    # the rule, its route and the key, with the count (a line a second at most).
    wait_until(lambda: len(s.access_lines()) == 6, timeout=5, what="six access-log lines")
    marked = [line for line in s.access_lines() if line.endswith(" shadow")]  # dry_run column
    assert len(marked) == 5, s.access_lines()

    def warnings():
        return [line for line in s.stderr().splitlines()
                if "dry-run rule would have refused requests rule=shadow route=all" in line]

    def counted():
        return sum(int(re.search(r" count=(\d+) ", line).group(1)) for line in warnings())

    wait_until(lambda: counted() == 5, timeout=5, what="the dry-run line")
    assert all(" key=127.0.0.1 " in line for line in warnings()), warnings()


def test_concurrency_limit(sluice, upstreams):
    up = upstreams(1)
    s = sluice(rule_config(up, "two-at-a-time", "concurrency:limit=2", key="const:all"))

    def slow(i):
        time.sleep(i * 0.15)  # the first two are in flight when the third arrives
        return get(s.url + "/slow?ms=1200").status_code

    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        codes = list(pool.map(slow, range(3)))
    assert codes == [200, 200, 429], codes
    # The permits went back when the responses were complete.
    assert get(s.url + "/slow?ms=10").status_code == 200
