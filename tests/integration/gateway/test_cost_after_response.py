"""A cost known only after the response, through a real sluice and a real upstream that states
it: `cost_from: response_header:X-Cost` admits while one more request fits (or reserves
`reserve: N`), then charges what the upstream stated, into debt if need be, and the client never
sees the header; `count_if: {status: [...]}` charges only the responses it lists (a login-failure
limit); POST /v1/report settles a cost after the fact through the check API."""
import subprocess

import requests

from conftest import gateway_config, sluice_binary

RULES = """\
  tokens:
    limit: "token-bucket:rate=1/s,burst=10"
    key: header:X-Api-Key
    cost_from: response_header:X-Cost
  reserved:
    limit: "token-bucket:rate=1/s,burst=10"
    key: header:X-Api-Key
    cost_from: response_header:X-Cost
    reserve: 5
  logins:
    limit: "fixed-window:limit=3,window=60s"
    key: header:X-User
    count_if: {{status: [401, 403]}}
  reports:
    limit: "token-bucket:rate=1/s,burst=10"
    key: header:X-Api-Key
  slots:
    limit: "concurrency:limit=2"
    key: header:X-Api-Key
"""


def remaining(s, rule, key):
    r = requests.get(f"{s.admin}/v1/rules/{rule}/keys/{key}", timeout=10)
    assert r.status_code == 200, r.text
    return r.json()["remaining"]


def settled(s, rule, charged):
    """sluice_rule_settlements_total of `rule` on the route `all`, for `charged`."""
    text = requests.get(s.admin + "/metrics", timeout=10).text
    want = f'sluice_rule_settlements_total{{route="all",rule="{rule}",charged="{charged}"}} '
    for line in text.splitlines():
        if line.startswith(want):
            return float(line.split()[-1])
    return 0


def get(s, key, query, header="X-Api-Key"):
    return requests.get(f"{s.url}/answer?{query}", headers={header: key}, timeout=10)


def test_the_stated_cost_is_charged_into_debt_and_the_header_never_reaches_the_client(
        sluice, upstreams):
    s = sluice(gateway_config([upstreams(1).address], rules=RULES, route_rules="[tokens]"))
    r = get(s, "a", "header=X-Cost:4")
    assert r.status_code == 200 and r.text == "answer\n"
    assert "X-Cost" not in r.headers, dict(r.headers)
    assert remaining(s, "tokens", "a") == 6  # 10 - 4 (well within a second's refill)
    # Admitted (6 left, one more fits), then charged 10: 6 - 10 = -4, a debt of 4 tokens.
    assert get(s, "a", "header=X-Cost:10").status_code == 200
    refused = get(s, "a", "header=X-Cost:1")
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] in ("5", "6"), refused.headers  # -4 -> 1 at 1/s
    # Another key is untouched.
    assert remaining(s, "tokens", "b") == 10
    assert (settled(s, "tokens", "stated"), settled(s, "tokens", "reserve")) == (2, 0)


def test_a_reserve_stands_without_a_stated_cost_and_is_given_back_when_less_is_stated(
        sluice, upstreams):
    s = sluice(gateway_config([upstreams(1).address], rules=RULES, route_rules="[reserved]"))
    assert get(s, "a", "status=200").status_code == 200  # no header: the reserve of 5 stands
    assert remaining(s, "reserved", "a") == 5
    assert get(s, "b", "header=X-Cost:lots").status_code == 200  # malformed: the same
    assert remaining(s, "reserved", "b") == 5
    assert get(s, "c", "header=X-Cost:0").status_code == 200  # stated 0: all 5 back
    assert remaining(s, "reserved", "c") == 10
    assert get(s, "d", "header=X-Cost:2").status_code == 200  # 3 of the 5 back
    assert remaining(s, "reserved", "d") == 8
    # What an operator sees: two answers stated no usable cost.
    assert (settled(s, "reserved", "stated"), settled(s, "reserved", "reserve")) == (2, 2)


def test_count_if_charges_only_the_failures_it_lists(sluice, upstreams):
    s = sluice(gateway_config([upstreams(1).address], rules=RULES, route_rules="[logins]"))
    for _ in range(5):  # successful logins cost nothing
        assert get(s, "ann", "status=200", header="X-User").status_code == 200
    assert remaining(s, "logins", "ann") == 3
    assert get(s, "ann", "status=404", header="X-User").status_code == 404  # not listed
    assert remaining(s, "logins", "ann") == 3
    for status in (401, 403, 401):
        assert get(s, "ann", f"status={status}", header="X-User").status_code == status
    assert remaining(s, "logins", "ann") == 0
    refused = get(s, "ann", "status=200", header="X-User")
    assert refused.status_code == 429  # three failures in the window: sluice refuses
    assert (settled(s, "logins", "nothing"), settled(s, "logins", "reserve")) == (6, 3)
    assert get(s, "bob", "status=200", header="X-User").status_code == 200


def test_a_report_settles_a_cost_after_the_fact_through_the_check_api(sluice, upstreams):
    s = sluice(gateway_config([upstreams(1).address], rules=RULES, route_rules="[]"))
    report = lambda body: requests.post(s.admin + "/v1/report", json=body, timeout=10)  # noqa
    r = report({"rule": "reports", "key": "a", "cost": 7})
    assert r.status_code == 200, r.text
    assert (r.json()["reported"], r.json()["remaining"]) == (7, 3)
    # A check that reserved 5, then a report of what it cost (2): 3 given back.
    assert requests.post(s.admin + "/v1/check", json={"rule": "reports", "key": "b", "cost": 5},
                         timeout=10).json()["remaining"] == 5
    r = report({"rule": "reports", "key": "b", "cost": 2, "reserved": 5})
    assert (r.json()["reported"], r.json()["remaining"]) == (-3, 8), r.text
    # Into debt: a report is not refused; the next check is.
    in_debt = report({"rule": "reports", "key": "c", "cost": 15})
    assert in_debt.status_code == 200 and in_debt.json()["remaining"] == -5, in_debt.text
    check = requests.post(s.admin + "/v1/check", json={"rule": "reports", "key": "c"}, timeout=10)
    assert check.json()["allowed"] is False and check.json()["retry_after_ms"] >= 5000

    for body, status, field in (
            ({"rule": "nope", "key": "a", "cost": 1}, 404, "rule"),
            ({"rule": "slots", "key": "a", "cost": 1}, 409, "rule"),
            ({"rule": "reports", "key": "a"}, 400, "cost"),
            ({"rule": "reports", "key": "a", "cost": -1}, 400, "cost"),
            ({"rule": "reports", "key": "a", "cost": 1, "extra": 1}, 400, "extra"),
            ({"key": "a", "cost": 1}, 400, "rule")):
        r = report(body)
        assert r.status_code == status, (body, r.text)
        assert r.json()["field"] == field, (body, r.text)
    assert "token-bucket, gcra" in report({"rule": "slots", "key": "a", "cost": 1}).json()["error"]


def test_rules_settled_after_the_response_are_written_back_as_given(sluice, upstreams):
    s = sluice(gateway_config([upstreams(1).address], rules=RULES, route_rules="[]"))
    shown = requests.get(s.admin + "/v1/rules/reserved", timeout=10).json()
    assert (shown["cost_from"], shown["reserve"]) == ("response_header:X-Cost", 5), shown
    shown = requests.get(s.admin + "/v1/rules/logins", timeout=10).json()
    assert shown["count_if"] == {"status": [401, 403]}, shown
    put = requests.put(s.admin + "/v1/rules/login5xx", timeout=10, json={
        "limit": "gcra:rate=1/s,burst=2", "key": ["header:X-User"],
        "count_if": {"status": ["5xx", 429]}})
    assert put.status_code in (200, 201), put.text
    assert requests.get(s.admin + "/v1/rules/login5xx", timeout=10).json()["count_if"] == \
        {"status": ["5xx", 429]}


def check_config(tmp_path, rules, extra=""):
    config = tmp_path / "c.yaml"
    config.write_text(gateway_config(["127.0.0.1:9"], route_rules="[]", extra=extra)
                      .format(gateway=8080, admin=9090, access_log="/dev/null") +
                      "rules:\n" + rules)
    return subprocess.run([sluice_binary(), "check-config", str(config)], capture_output=True,
                          text=True, timeout=30)


def test_check_config_names_each_misuse(tmp_path):
    cases = [
        ('limit: "queue:rate=10/s"\n    cost_from: response_header:X-Cost',
         "field 'cost_from'", "token-bucket, gcra, fixed-window and sliding-window"),
        ('limit: "gcra:rate=1/s,burst=1"\n    reserve: 3', "field 'reserve'",
         "applies with cost_from only"),
        ('limit: "gcra:rate=1/s,burst=1"\n    cost_from: X-Cost', "field 'cost_from'",
         "response_header:NAME"),
        ('limit: "gcra:rate=1/s,burst=1"\n    count_if: {status: [600]}', "field 'count_if.status'",
         "not a status"),
        ('limit: "gcra:rate=1/s,burst=1"\n    count_if: {}', "count_if", "needs status"),
    ]
    for body, where, problem in cases:
        run = check_config(tmp_path, f"  r:\n    key: header:X\n    {body}\n")
        assert run.returncode != 0, body
        assert where in run.stderr and problem in run.stderr, (body, run.stderr)
    redis_rule = ('  r:\n    key: header:X\n    limit: "gcra:rate=1/s,burst=1"\n'
                  "    storage: redis\n    count_if: {status: [401]}\n")
    redis = "redis: {{url: redis://127.0.0.1:6379}}"
    run = check_config(tmp_path, redis_rule, extra=redis)
    assert run.returncode == 0, run.stderr  # settled by the Redis script
    run = check_config(tmp_path, redis_rule + "    lease: 10\n", extra=redis)
    assert run.returncode != 0 and "field 'count_if'" in run.stderr, run.stderr
    assert "lease: 0 (exact)" in run.stderr, run.stderr
