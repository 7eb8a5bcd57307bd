"""The decision API on the admin listener: POST /v1/check (one check, inline limits, batches),
GET /v1/check/{rule} (204/429 with headers), and bad input of every kind answered with a JSON
error naming the field, by a server that lives on."""
import socket
import time

import pytest
import requests

DECISION_FIELDS = {"allowed", "delay_ms", "remaining", "retry_after_ms", "reset_after_ms",
                   "limit", "dry_run", "dry_run_denied"}


def test_post_rule_counts_down_then_denies_with_headers(sluice):
    for remaining in (2, 1, 0):
        r = sluice.post({"rule": "per-user", "key": "post-a"})
        assert r.status_code == 200, r.text
        d = r.json()
        assert set(d) == DECISION_FIELDS
        assert d["allowed"] and d["remaining"] == remaining and d["limit"] == 3
        assert d["delay_ms"] == 0 and d["retry_after_ms"] == 0 and not d["dry_run"]
        assert r.headers["RateLimit-Policy"] == '"per-user";q=3;w=3600'
        assert r.headers["RateLimit"].startswith(f'"per-user";a={remaining};w=')
        assert "Retry-After" not in r.headers
    r = sluice.post({"rule": "per-user", "key": "post-a"})
    assert r.status_code == 200
    d = r.json()
    assert not d["allowed"] and d["remaining"] == 0
    assert 0 < d["retry_after_ms"] <= 3600_000 and d["reset_after_ms"] >= d["retry_after_ms"]
    assert int(r.headers["Retry-After"]) == -(-d["retry_after_ms"] // 1000)
    # Another key has its own budget.
    assert sluice.post({"rule": "per-user", "key": "post-b"}).json()["remaining"] == 2


def test_cost_takes_that_many_permits(sluice):
    assert sluice.post({"rule": "per-user", "key": "cost-a", "cost": 2}).json()["remaining"] == 1
    d = sluice.post({"rule": "per-user", "key": "cost-a", "cost": 2}).json()
    assert not d["allowed"] and d["remaining"] == 1
    assert sluice.post({"rule": "per-user", "key": "cost-a", "cost": 1.0}).json()["allowed"]
    # More than the limit can ever hold: denied, and retrying never helps.
    d = sluice.post({"rule": "per-user", "key": "cost-b", "cost": 2 ** 53}).json()
    assert not d["allowed"] and d["retry_after_ms"] == -1


def test_inline_limit_shares_state_per_canonical_spec(sluice):
    spec = "token-bucket:rate=1/m,burst=3"
    allowed = [sluice.post({"limit": spec, "key": "in-a"}).json()["allowed"] for _ in range(3)]
    assert allowed == [True, True, True]
    # The same limit spelt otherwise is the same table, so the same budget.
    d = sluice.post({"limit": "token-bucket:burst=3,rate=1/m", "key": "in-a"}).json()
    assert not d["allowed"] and d["limit"] == 3 and d["retry_after_ms"] > 0
    assert sluice.post({"limit": spec, "key": "in-b"}).json()["allowed"]


def test_inline_max_wait_delays_instead_of_denying(sluice):
    spec = "gcra:rate=10/s,burst=1"
    waits = [sluice.post({"limit": spec, "key": "mw", "max_wait": "1s"}).json()
             for _ in range(4)]
    assert all(d["allowed"] for d in waits)
    assert waits[0]["delay_ms"] == 0 and waits[3]["delay_ms"] >= 150
    # Without max_wait the same limit denies: a POST never waits, the caller does.
    d = sluice.post({"limit": spec, "key": "mw"}).json()
    assert not d["allowed"] and d["retry_after_ms"] > 0


def test_batch_answers_in_order_with_errors_in_place(sluice):
    checks = [{"rule": "per-user", "key": "batch"} for _ in range(4)]
    checks[1:1] = [{"rule": "nope", "key": "x"}, 7, {"limit": "gcra:rate=1/s", "key": "x"},
                   {"rule": "per-user", "key": "batch", "cost": 0}]
    r = sluice.post({"checks": checks})
    assert r.status_code == 200, r.text
    assert "RateLimit" not in r.headers
    results = r.json()["results"]
    assert len(results) == len(checks)
    assert results[1] == {"error": "unknown rule 'nope'", "field": "rule"}
    assert results[2]["field"] == "checks"
    assert results[3]["field"] == "limit" and "burst" in results[3]["error"]
    assert results[4]["field"] == "cost"
    decided = [results[0]] + results[5:]
    assert [d["allowed"] for d in decided] == [True, True, True, False]
    assert [d["remaining"] for d in decided] == [2, 1, 0, 0]


def test_batch_limits(sluice):
    assert sluice.post({"checks": []}).json() == {"results": []}
    full = [{"limit": "fixed-window:limit=2000,window=1h", "key": "k"}] * 1000
    r = sluice.post({"checks": full})
    assert r.status_code == 200 and len(r.json()["results"]) == 1000
    assert r.json()["results"][-1]["remaining"] == 1000
    for body, field in [({"checks": full + full[:1]}, "checks"),
                        ({"checks": {"rule": "per-user"}}, "checks"),
                        ({"checks": [], "key": "k"}, "checks")]:
        r = sluice.post(body)
        assert r.status_code == 400 and r.json()["field"] == field, r.text


BAD_POSTS = [
    ("not json", "body", "not JSON"),
    ('{"rule": "per-user", "key": "k",}', "body", "not JSON"),
    ("[1, 2]", "body", "JSON object"),
    ('"per-user"', "body", "JSON object"),
    ("[" * 100_000, "body", "not JSON"),
    ({"key": "k"}, "rule", "missing rule"),
    ({"rule": "per-user"}, "key", "missing key"),
    ({"rule": "per-user", "key": ""}, "key", "missing key"),
    ({"rule": "per-user", "key": 42}, "key", "must be a string"),
    ({"rule": ["per-user"], "key": "k"}, "rule", "must be a string"),
    ({"rule": "per-user", "key": "k", "cost": 0}, "cost", "bad cost 0"),
    ({"rule": "per-user", "key": "k", "cost": -3}, "cost", "bad cost -3"),
    ({"rule": "per-user", "key": "k", "cost": 1.5}, "cost", "bad cost"),
    ({"rule": "per-user", "key": "k", "cost": "2"}, "cost", "bad cost"),
    ({"rule": "per-user", "key": "k", "cost": True}, "cost", "bad cost"),
    ({"rule": "per-user", "key": "k", "cost": None}, "cost", "bad cost"),
    ({"rule": "per-user", "key": "k", "cost": 2 ** 53 + 1}, "cost", "2^53"),
    ({"rule": "per-user", "key": "k", "cost": 2 ** 64}, "cost", "bad cost"),
    ({"rule": "per-user", "key": "k", "cost": 1e300}, "cost", "bad cost"),
    ({"rule": "nope", "key": "k"}, "rule", "unknown rule 'nope'"),
    ({"limit": "gcra:rate=10/s", "key": "k"}, "limit", "missing parameter 'burst'"),
    ({"limit": "tokn:rate=1/s,burst=1", "key": "k"}, "limit", "unknown algorithm"),
    ({"limit": "gcra:rate=10/s,burst=5", "rule": "per-user", "key": "k"}, "limit", "not both"),
    ({"rule": "per-user", "key": "k", "max_wait": "1s"}, "max_wait", "inline"),
    ({"limit": "gcra:rate=10/s,burst=5", "key": "k", "max_wait": "1hx"}, "max_wait", "unit"),
    ({"limit": "gcra:rate=10/s,burst=5", "key": "k", "max_wait": 250}, "max_wait", "string"),
    ({"rule": "per-user", "key": "k", "cots": 2}, "cots", "unknown field 'cots'"),
]


@pytest.mark.parametrize("body,field,words", BAD_POSTS)
def test_bad_post_is_400_naming_the_field(sluice, body, field, words):
    r = sluice.post(body)
    assert r.status_code == 400, r.text
    assert r.json()["field"] == field, r.text
    assert words in r.json()["error"], r.text
    assert requests.get(sluice.admin + "/healthz", timeout=5).status_code == 200


def test_absurd_cost_on_a_time_based_limit_is_bad_input(sluice):
    r = sluice.post({"limit": "gcra:rate=1/h,burst=1", "key": "huge", "cost": 2 ** 53})
    if r.status_code == 400:  # the wait it implies leaves the time range
        assert r.json()["field"] == "cost"
    else:                     # or the limiter says "never"
        assert r.status_code == 200 and r.json()["retry_after_ms"] == -1
    assert sluice.post({"limit": "gcra:rate=1/h,burst=1", "key": "huge"}).json()["allowed"]


def test_oversized_body_is_413(sluice):
    r = sluice.post('{"checks": [' + '{"rule": "per-user", "key": "k"},' * 40_000 + "]}")
    assert r.status_code == 413 and r.json()["field"] == "body"


def test_get_answers_204_then_429_with_headers(sluice):
    for remaining in (2, 1, 0):
        r = sluice.get("per-user", key="get-a")
        assert r.status_code == 204 and r.content == b""
        assert "Content-Length" not in r.headers and "Content-Type" not in r.headers
        assert r.headers["RateLimit"].startswith(f'"per-user";a={remaining};w=')
        assert r.headers["RateLimit-Policy"] == '"per-user";q=3;w=3600'
    r = sluice.get("per-user", key="get-a")
    assert r.status_code == 429
    assert int(r.headers["Retry-After"]) >= 1
    assert r.headers["RateLimit"].startswith('"per-user";a=0;w=')
    d = r.json()
    assert not d["allowed"] and d["retry_after_ms"] > 0
    assert sluice.get("per-user", key="get-b").status_code == 204


def test_get_cost(sluice):
    assert sluice.get("per-user", key="get-cost", cost=3).status_code == 204
    assert sluice.get("per-user", key="get-cost").status_code == 429
    r = sluice.get("per-user", key="get-cost-2", cost=4)
    assert r.status_code == 429 and r.json()["retry_after_ms"] == -1
    assert "Retry-After" not in r.headers  # it never can be allowed


def test_get_keys_are_percent_decoded_like_post_keys(sluice):
    key = "a b&c=d/é"
    for _ in range(3):
        assert sluice.get("per-user", key=key).status_code == 204  # sent as a+b%26c%3Dd%2F%C3%A9
    assert not sluice.post({"rule": "per-user", "key": key}).json()["allowed"]
    # A '%' without two hex digits after it is kept as sent (nginx passes keys unescaped).
    url = sluice.admin + "/v1/check/per-user?key=100%zz"
    for _ in range(3):
        assert requests.get(url, timeout=5).status_code == 204
    assert not sluice.post({"rule": "per-user", "key": "100%zz"}).json()["allowed"]


@pytest.mark.parametrize("query,status,field", [
    ("", 400, "key"),
    ("key=", 400, "key"),
    ("cost=2", 400, "key"),
    ("key=a&cost=0", 400, "cost"),
    ("key=a&cost=-1", 400, "cost"),
    ("key=a&cost=abc", 400, "cost"),
    ("key=a&cost=9007199254740993", 400, "cost"),
    ("key=a&cost=99999999999999999999999", 400, "cost"),
    ("key=a&key=b", 400, "key"),
    ("key=a&cots=2", 400, "cots"),
])
def test_bad_get_query(sluice, query, status, field):
    r = requests.get(sluice.admin + "/v1/check/per-user?" + query, timeout=5)
    assert r.status_code == status and r.json()["field"] == field, r.text


def test_get_unknown_rule_is_404_and_wrong_methods_are_405(sluice):
    r = sluice.get("nope", key="k")
    assert r.status_code == 404 and r.json() == {"error": "unknown rule 'nope'", "field": "rule"}
    r = requests.post(sluice.admin + "/v1/check/per-user?key=k", timeout=5)
    assert r.status_code == 405 and r.headers["Allow"] == "GET"
    r = requests.get(sluice.admin + "/v1/check", timeout=5)
    assert r.status_code == 405 and r.headers["Allow"] == "POST"
    assert sluice.get("per%2Duser", key="enc").status_code == 204  # the rule name is decoded


def test_dry_run_rule_allows_and_says_it_would_deny(sluice):
    r = sluice.get("shadow", key="dry")
    assert r.status_code == 204 and "Sluice-Dry-Run-Denied" not in r.headers
    r = sluice.get("shadow", key="dry")
    assert r.status_code == 204 and r.headers["Sluice-Dry-Run-Denied"] == "true"
    assert "Retry-After" not in r.headers
    d = sluice.post({"rule": "shadow", "key": "dry"}).json()
    assert d["allowed"] and d["dry_run"] and d["dry_run_denied"]


def test_delay_rule_get_holds_the_reply_and_post_reports_the_wait(sluice):
    # gcra 10/s, burst 1: two at once, then one every 100 ms; GET waits, so they come paced.
    start = time.monotonic()
    for _ in range(5):
        assert sluice.get("paced", key="pace-get").status_code == 204
    assert time.monotonic() - start >= 0.25
    start = time.monotonic()
    delays = [sluice.post({"rule": "paced", "key": "pace-post"}).json()["delay_ms"]
              for _ in range(5)]
    assert time.monotonic() - start < 0.25
    assert delays[:2] == [0, 0] and delays[4] >= 250


def test_metrics_count_checks_under_frontend_check_api(sluice):
    for _ in range(4):
        sluice.get("per-user", key="metrics")
    text = requests.get(sluice.admin + "/metrics", timeout=5).text
    line = 'sluice_rule_requests_total{frontend="check_api",rule="per-user",outcome="denied"}'
    assert any(l.startswith(line) and int(l.split()[-1]) >= 1 for l in text.splitlines()), text


def test_garbage_on_a_check_connection_does_not_hurt_others(sluice):
    with socket.create_connection(("127.0.0.1", sluice.admin_port), timeout=5) as s:
        s.sendall(b"GET /v1/check/per-user?key=\x00\xff HTTP/1.1\r\nContent-Length: x\r\n\r\n")
        assert s.recv(100).startswith(b"HTTP/1.1 400")
    assert sluice.get("per-user", key="after-garbage").status_code == 204
