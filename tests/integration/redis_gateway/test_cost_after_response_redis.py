"""A cost known only after the response, on rules kept in Redis (docs/distributed.md, "Costs
settled after the response"), through real sluice instances sharing one real redis-server and a
real upstream that states the cost: the same answers as the local rules give
(gateway/test_cost_after_response.py), settled in Redis by the script, so a cost stated through
one instance is in the other's next decision; the header never reaches the client; a report
through the check API or RESP settles in Redis; a settlement Redis does not take is lost (the
response is served, the reserve stands, the loss is counted and logged)."""
import os
import signal
import threading
import time

import pytest
import redis
import requests

from conftest import free_port
from gateway_fixtures import upstreams  # noqa: F401  (the gateway tests' upstream)
from integration_support import wait_until

RULES = """\
  tokens:
    limit: "token-bucket:rate=1/m,burst=10"
    key: header:X-Api-Key
    cost_from: response_header:X-Cost
  reserved:
    limit: "token-bucket:rate=1/m,burst=10"
    key: header:X-Api-Key
    cost_from: response_header:X-Cost
    reserve: 5
  logins:
    limit: "fixed-window:limit=3,window=1h"
    key: header:X-User
    count_if: {status: [401, 403]}
  reports:
    limit: "token-bucket:rate=1/m,burst=10"
    key: header:X-Api-Key
  slots:
    limit: "concurrency:limit=2"
    key: header:X-Api-Key
  fallback:
    limit: "token-bucket:rate=1/m,burst=10"
    key: header:X-Api-Key
    cost_from: response_header:X-Cost
    on_failure: local
  daily:
    limit: "fixed-window:limit=10,window=1d,align=calendar,timezone=Europe/Berlin"
    key: header:X-Api-Key
    cost_from: response_header:X-Cost
  leased:
    limit: "gcra:rate=100/s,burst=10"
    key: header:X-Api-Key
    lease: 10
"""

# The same limits local and in Redis, for the reports that must agree (sequences below).
LIMITS = {
    "gcra": "gcra:rate=1/m,burst=4",
    "tb": "token-bucket:rate=1/m,burst=5",
    "fw": "fixed-window:limit=5,window=1h",
    "sw": "sliding-window:limit=5,window=1h",
}
PAIRS = "".join(f"""\
  {name}_{storage}:
    limit: "{limit}"
    key: header:X-Key
    storage: {storage}
""" for name, limit in LIMITS.items() for storage in ("local", "redis"))


def config(route_rules, upstream, resp_port=None, timeout="2s"):
    resp = f'resp: {{{{listen: "127.0.0.1:{resp_port}"}}}}\n' if resp_port else ""
    return f"""\
listen: 127.0.0.1:{{gateway}}
admin: 127.0.0.1:{{admin}}
workers: 1
write_back: false
redis: {{{{url: "{{redis}}", timeout: {timeout}, storage: redis, on_failure: fail-closed}}}}
{resp}upstreams:
  app: {{{{servers: ["127.0.0.1:{upstream.port}"]}}}}
routes:
  - name: all
    match: {{{{path_prefix: /}}}}
    upstream: app
    rules: {route_rules}
rules:
""" + (RULES + PAIRS).replace("{", "{{").replace("}", "}}")


def get(g, key, query, header="X-Api-Key"):
    return requests.get(f"{g.url}/answer?{query}", headers={header: key}, timeout=10)


def key_state(g, rule, key):
    r = requests.get(f"{g.admin}/v1/rules/{rule}/keys/{key}", timeout=10)
    assert r.status_code == 200, r.text
    return r.json()


def remaining(g, rule, key):
    return key_state(g, rule, key)["remaining"]


def settles_to(g, rule, key, want):
    """Waits until `g` sees `want` left for the key: a settlement reaches Redis a round trip
    after the client has its answer."""
    wait_until(lambda: remaining(g, rule, key) == want, timeout=5,
               what=f"{rule}/{key} to show {want} left")


def settled(g, rule, charged):
    return g.metric("sluice_rule_settlements_total", route="all", rule=rule, charged=charged)


def report(g, body):
    return requests.post(g.admin + "/v1/report", json=body, timeout=10)


def check(g, rule, key, cost=1):
    r = requests.post(g.admin + "/v1/check", json={"rule": rule, "key": key, "cost": cost},
                      timeout=10)
    assert r.status_code == 200, r.text
    return r.json()


def test_a_cost_stated_through_one_instance_is_in_the_others_next_decision(
        redis_server, gateways, upstreams):  # noqa: F811
    a, b = gateways(config("[tokens]", upstreams(1)), redis_server().url, n=2)
    r = get(a, "k", "header=X-Cost:4")
    assert r.status_code == 200 and r.text == "answer\n"
    assert "X-Cost" not in r.headers, dict(r.headers)
    assert key_state(b, "tokens", "k")["storage"] == "redis"
    settles_to(b, "tokens", "k", 6)  # 10 - 4, settled in Redis through a, seen by b
    # Admitted by b (6 left, one more fits), then charged 10: 6 - 10 = -4, a debt of 4 tokens.
    assert get(b, "k", "header=X-Cost:10").status_code == 200
    settles_to(a, "tokens", "k", -4)
    refused = get(a, "k", "header=X-Cost:1")
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] in ("299", "300"), refused.headers  # -4 -> 1 at 1/m
    assert remaining(a, "tokens", "other") == 10  # another key is untouched
    assert (settled(a, "tokens", "stated"), settled(b, "tokens", "stated")) == (1, 1)
    assert a.metric("sluice_rule_settlements_lost_total") == 0


def test_a_calendar_quotas_stated_cost_is_settled_in_todays_window(redis_server, gateways,
                                                                    upstreams):  # noqa: F811
    # The settlement names the window the request was decided in (the day in Berlin), not
    # another one: 10 a day, a stated cost of 4, 6 left today on both instances.
    a, b = gateways(config("[daily]", upstreams(1)), redis_server().url, n=2)
    assert get(a, "k", "header=X-Cost:4").status_code == 200
    settles_to(b, "daily", "k", 6)
    assert get(b, "k", "header=X-Cost:5").status_code == 200
    settles_to(a, "daily", "k", 1)
    assert get(a, "k", "header=X-Cost:1").status_code == 200
    settles_to(b, "daily", "k", 0)
    assert get(b, "k", "header=X-Cost:1").status_code == 429


def test_a_reserve_is_charged_at_admission_and_settled_in_redis(redis_server, gateways,
                                                               upstreams):  # noqa: F811
    a, b = gateways(config("[reserved]", upstreams(1)), redis_server().url, n=2)
    assert get(a, "a", "status=200").status_code == 200  # no header: the reserve of 5 stands
    assert remaining(b, "reserved", "a") == 5
    assert get(a, "b", "header=X-Cost:lots").status_code == 200  # malformed: the same
    assert remaining(b, "reserved", "b") == 5
    assert get(a, "c", "header=X-Cost:0").status_code == 200  # stated 0: all 5 back
    settles_to(b, "reserved", "c", 10)
    assert get(a, "d", "header=X-Cost:2").status_code == 200  # 3 of the 5 back
    settles_to(b, "reserved", "d", 8)
    # Admission charges the reserve: with 3 left, a request that needs 5 is refused.
    assert report(a, {"rule": "reserved", "key": "e", "cost": 7}).json()["remaining"] == 3
    refused = get(b, "e", "header=X-Cost:1")
    assert refused.status_code == 429 and refused.headers["Retry-After"] in ("119", "120")
    assert (settled(a, "reserved", "stated"), settled(a, "reserved", "reserve")) == (2, 2)


def test_count_if_charges_only_the_failures_it_lists_in_redis(redis_server, gateways,
                                                              upstreams):  # noqa: F811
    a, b = gateways(config("[logins]", upstreams(1)), redis_server().url, n=2)
    for i in range(4):  # successful logins cost nothing, whichever instance answers
        assert get((a, b)[i % 2], "ann", "status=200", header="X-User").status_code == 200
    settles_to(a, "logins", "ann", 3)
    assert get(a, "ann", "status=404", header="X-User").status_code == 404  # not listed
    settles_to(b, "logins", "ann", 3)
    for i, status in enumerate((401, 403, 401)):
        assert get((a, b)[i % 2], "ann", f"status={status}", header="X-User").status_code == status
    assert remaining(a, "logins", "ann") == 0
    assert get(b, "ann", "status=200", header="X-User").status_code == 429  # 3 failures: refused
    nothing = settled(a, "logins", "nothing") + settled(b, "logins", "nothing")
    counted = settled(a, "logins", "reserve") + settled(b, "logins", "reserve")
    assert (nothing, counted) == (5, 3)
    assert get(b, "bob", "status=200", header="X-User").status_code == 200


def test_a_report_settles_a_redis_rule_for_every_instance(redis_server, gateways,
                                                         upstreams):  # noqa: F811
    url, up, resp_port = redis_server().url, upstreams(1), free_port()
    a = gateways(config("[]", up, resp_port=resp_port), url)
    b = gateways(config("[]", up), url)
    r = report(a, {"rule": "reports", "key": "a", "cost": 7})
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["storage"], body["reported"], body["remaining"]) == ("redis", 7, 3), body
    assert remaining(b, "reports", "a") == 3
    # A check through b that reserved 5, then a report through a of what it cost (2).
    assert check(b, "reports", "b", 5)["remaining"] == 5
    r = report(a, {"rule": "reports", "key": "b", "cost": 2, "reserved": 5})
    assert (r.json()["reported"], r.json()["remaining"]) == (-3, 8), r.text
    # Into debt: a report is not refused; the next check, on the other instance, is.
    assert report(a, {"rule": "reports", "key": "c", "cost": 15}).json()["remaining"] == -5
    refused = check(b, "reports", "c")
    assert refused["allowed"] is False and refused["retry_after_ms"] >= 5 * 60000 - 2000, refused
    # SLUICE.REPORT: the same through RESP, answered as SLUICE.PEEK (remaining third).
    client = redis.Redis(port=resp_port, socket_timeout=5)
    assert client.execute_command("SLUICE.REPORT", "reports", "d", 4)[2] == 6
    assert client.execute_command("SLUICE.REPORT", "reports", "d", 1, 3)[2] == 8
    assert remaining(b, "reports", "d") == 8

    for rule, status, says in (("slots", 409, "token-bucket, gcra"),
                               ("leased", 409, "lease: 0 (exact)"),
                               ("nope", 404, "unknown rule")):
        r = report(a, {"rule": rule, "key": "a", "cost": 1})
        assert r.status_code == status, r.text
        assert says in r.json()["error"], r.text


# (op, cost, reserved) per step: a check of `cost`, or a report of `cost` settling `reserved`.
SEQUENCE = [("check", 2, 0), ("report", 5, 2), ("check", 1, 0), ("report", 0, 3),
            ("check", 2, 0), ("report", 20, 0), ("check", 1, 0), ("report", 0, 12),
            ("check", 1, 0), ("report", 1, 0)]


@pytest.mark.parametrize("alg", sorted(LIMITS))
def test_reports_settle_in_redis_as_the_local_backend_settles(redis_server, gateways,
                                                             upstreams, alg):  # noqa: F811
    g = gateways(config("[]", upstreams(1)), redis_server().url)
    answers = {}
    for storage in ("local", "redis"):
        rule, got = f"{alg}_{storage}", []
        for op, cost, reserved in SEQUENCE:
            if op == "check":
                body = check(g, rule, "k", cost)
            else:
                r = report(g, {"rule": rule, "key": "k", "cost": cost, "reserved": reserved})
                assert r.status_code == 200, r.text
                body = r.json()
                assert body["storage"] == storage
            got.append((op, body["allowed"], body["remaining"], body["retry_after_ms"]))
        answers[storage] = got
    assert any(not allowed for _, allowed, _, _ in answers["local"])  # the sequence refuses
    for (op, allowed, left, retry), (_, r_allowed, r_left, r_retry) in zip(answers["local"],
                                                                           answers["redis"]):
        assert (r_allowed, r_left) == (allowed, left), (alg, answers["local"], answers["redis"])
        if alg in ("gcra", "tb"):  # the windows' waits run to ends each backend places itself
            assert abs(r_retry - retry) <= 1000, (alg, answers)


def test_redis_down_when_the_response_arrives_loses_the_settlement_not_the_response(
        redis_server, gateways, upstreams):  # noqa: F811
    rs, up = redis_server(), upstreams(1)
    g = gateways(config("[tokens]", up, timeout="3s"), rs.url)
    got = {}

    def send():
        start = time.monotonic()
        got["response"] = get(g, "k", "header=X-Cost:9&ms=800")
        got["seconds"] = time.monotonic() - start

    client = threading.Thread(target=send)
    client.start()
    # Admitted while Redis answers; then Redis stops answering while the upstream works.
    wait_until(lambda: up.requests == 1, what="the upstream to have the request")
    os.kill(rs.proc.pid, signal.SIGSTOP)
    try:
        client.join(timeout=15)
        r = got["response"]
        assert r.status_code == 200 and r.text == "answer\n"
        assert "X-Cost" not in r.headers, dict(r.headers)
        # Served without waiting for the settlement, which waits for Redis's 3 s timeout.
        assert got["seconds"] < 2.5, got["seconds"]
        wait_until(lambda: g.metric("sluice_rule_settlements_lost_total", route="all",
                                    rule="tokens") == 1, timeout=10,
                   what="the lost settlement to be counted")
    finally:
        rs.kill()  # SIGKILL while stopped: the timed-out call is never run late
    assert settled(g, "tokens", "stated") == 1  # what the response said, though not charged
    wait_until(lambda: "settlements lost" in g.stderr(), what="the server log's line")
    line = next(x for x in g.stderr().splitlines() if "settlements lost" in x)
    assert "tokens" in line and "lost" in line, line


def test_a_request_the_local_fallback_admitted_is_settled_in_the_fallback(
        redis_server, gateways, upstreams):  # noqa: F811
    rs = redis_server()
    g = gateways(config("[fallback]", upstreams(1)), rs.url)
    rs.kill()  # on_failure: local decides, and charges, in this instance while Redis is away
    assert get(g, "k", "header=X-Cost:9").status_code == 200  # 10 - 9: 1 left in the fallback
    assert get(g, "k", "header=X-Cost:1").status_code == 200  # the last one
    # Had only the reserves (1 each) been charged, 8 would be left.
    refused = get(g, "k", "header=X-Cost:1")
    assert refused.status_code == 429 and refused.headers["Retry-After"] in ("59", "60")
    assert g.metric("sluice_redis_answers_total", source="local") == 3
    assert g.metric("sluice_rule_settlements_lost_total") == 0


def test_settlements_reach_the_master_of_each_keys_slot_in_a_cluster(redis_cluster, gateways,
                                                                     upstreams):  # noqa: F811
    g = gateways(config("[tokens]", upstreams(1)), redis_cluster.url(seeds=1))
    keys = [f"k{i}" for i in range(12)]
    for k in keys:
        assert get(g, k, "header=X-Cost:4").status_code == 200
    for k in keys:
        settles_to(g, "tokens", k, 6)
    owners = {redis_cluster.owner(redis_cluster.keyslot(f"sluice:{{tokens:{k}}}:token-bucket"))
              for k in keys}
    assert len(owners) > 1  # the keys live on several masters
    assert g.metric("sluice_redis_failures_total") == 0
    assert g.metric("sluice_rule_settlements_lost_total") == 0
