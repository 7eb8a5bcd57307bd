"""Per-tenant limits through the real gateway and decision API: a rule's tier named by X-Plan is
believed only from a trusted proxy (a client connecting from another address that sends
X-Plan: pro gets the default tier), the check API and SLUICE.CHECK take the tier from the
caller, a key's override set through the admin API is honoured at once and written back, and
on_change decides what a PUT of the rule does to a key's remaining quota."""
import socket

import pytest
import requests
import yaml

from conftest import accepts_connections, free_port, gateway_config, wait_until
from integration_support import status_from

# 127.0.0.1 is the trusted proxy; 127.0.0.2 (also loopback) stands for a client.
TIERS = """\
  plan:
    key: header:X-User
    tier: header:X-Plan
    tiers:
      default: "token-bucket:rate=1/m,burst=2"
      pro: "token-bucket:rate=1/m,burst=5"
"""


def tiered(up, extra=""):
    return gateway_config([up.address], rules=TIERS, route_rules="[plan]",
                          extra="trusted_proxies: [127.0.0.1]\n" + extra)


def serving(sluice, config):
    """A started sluice whose admin listener is up too (it may come up after the gateway's)."""
    s = sluice(config)
    wait_until(lambda: accepts_connections(s.admin_port), timeout=8, what="the admin listener")
    return s


def admitted(port, source, headers):
    n = 0
    while n < 20 and status_from(port, source, headers) == 200:
        n += 1
    return n


def test_a_trusted_proxys_plan_picks_the_tier_and_a_clients_own_plan_header_does_not(
        sluice, upstreams):
    s = serving(sluice, tiered(upstreams(1)))
    assert admitted(s.gateway_port, "127.0.0.1", {"X-User": "a", "X-Plan": "pro"}) == 5
    assert admitted(s.gateway_port, "127.0.0.2", {"X-User": "b", "X-Plan": "pro"}) == 2, \
        "a client not in trusted_proxies that says X-Plan: pro is in the default tier"
    assert admitted(s.gateway_port, "127.0.0.1", {"X-User": "c", "X-Plan": "gold"}) == 2, \
        "an unknown tier is the default"


def test_the_ratelimit_fields_show_the_tier_applied(sluice, upstreams):
    s = serving(sluice, tiered(upstreams(1)))
    r = requests.get(s.url + "/", headers={"X-User": "a", "X-Plan": "pro"}, timeout=10)
    assert r.status_code == 200
    assert r.headers["RateLimit"].startswith('"plan";a=4;'), r.headers["RateLimit"]


def test_the_check_api_and_sluice_check_take_the_tier_from_the_caller(sluice, upstreams):
    resp_port = free_port()
    s = serving(sluice, tiered(upstreams(1), extra=f"resp: {{{{listen: 127.0.0.1:{resp_port}}}}}\n"))
    wait_until(lambda: accepts_connections(resp_port), timeout=8, what="the RESP listener")
    check = requests.post(f"{s.admin}/v1/check",
                          json={"rule": "plan", "key": "u", "tier": "pro"}, timeout=10).json()
    assert (check["remaining"], check["limit"]) == (4, 5)
    assert requests.get(f"{s.admin}/v1/check/plan?key=v", timeout=10).status_code == 204
    plain = requests.post(f"{s.admin}/v1/check", json={"rule": "plan", "key": "w"},
                          timeout=10).json()
    assert (plain["remaining"], plain["limit"]) == (1, 2), "no tier: the default"
    with socket.create_connection(("127.0.0.1", resp_port), timeout=5) as c:
        c.sendall(b"SLUICE.CHECK plan z 2 TIER pro\r\n")
        reply = b""
        while reply.count(b"\r\n") < 6:
            reply += c.recv(4096)
    # *5, limited 0, limit 5, remaining 3, ...
    assert reply.split(b"\r\n")[:4] == [b"*5", b":0", b":5", b":3"], reply


def test_an_override_put_through_the_admin_api_applies_at_once_and_is_written_back(
        sluice, upstreams, tmp_path):
    s = serving(sluice, tiered(upstreams(1)))
    url = f"{s.admin}/v1/rules/plan/overrides/customer-42"
    assert requests.get(url, timeout=10).status_code == 404
    put = requests.put(url, json={"limit": "token-bucket:rate=1/m,burst=9"}, timeout=10)
    assert put.status_code == 201, put.text
    assert put.json() == {"rule": "plan", "key": "customer-42",
                          "limit": "token-bucket:rate=1/m,burst=9", "shared": False}
    assert requests.get(url, timeout=10).json()["limit"] == "token-bucket:rate=1/m,burst=9"
    assert admitted(s.gateway_port, "127.0.0.2", {"X-User": "customer-42"}) == 9

    written = yaml.safe_load((tmp_path / "sluice.yaml").read_text())
    assert written["rules"]["plan"]["overrides"] == {
        "customer-42": "token-bucket:rate=1/m,burst=9"}

    wrong = requests.put(f"{s.admin}/v1/rules/plan/overrides/x",
                         json={"limit": "gcra:rate=1/s,burst=1"}, timeout=10)
    assert wrong.status_code == 400
    assert "is gcra but the rule's default tier is token-bucket" in wrong.json()["error"]
    assert requests.delete(url, timeout=10).status_code == 200
    assert requests.get(url, timeout=10).status_code == 404
    assert "overrides" not in yaml.safe_load((tmp_path / "sluice.yaml").read_text())["rules"]["plan"]


@pytest.mark.parametrize("on_change, remaining", [("keep", 1), ("reset", 19),
                                                  ("proportional", 3)])
def test_a_put_from_burst_10_to_20_with_8_used_leaves_what_on_change_says(
        sluice, upstreams, on_change, remaining):
    rule = ("  tb:\n    limit: \"token-bucket:rate=1/m,burst=10\"\n    key: header:X-User\n"
            f"    on_change: {on_change}\n")
    s = serving(sluice, gateway_config([upstreams(1).address], rules=rule, route_rules="[tb]"))
    spent = requests.post(f"{s.admin}/v1/check", json={"rule": "tb", "key": "k", "cost": 8},
                          timeout=10).json()
    assert spent["remaining"] == 2
    put = requests.put(f"{s.admin}/v1/rules/tb", timeout=10,
                       json={"limit": "token-bucket:rate=1/m,burst=20", "key": "header:X-User",
                             "on_change": on_change})
    assert put.status_code == 200, put.text
    r = requests.get(s.url + "/", headers={"X-User": "k"}, timeout=10)
    assert r.status_code == 200
    assert r.headers["RateLimit"].startswith(f'"tb";a={remaining};'), r.headers["RateLimit"]
