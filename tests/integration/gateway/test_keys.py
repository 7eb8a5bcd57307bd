"""Every key kind through the real gateway: two requests with the same key share one budget,
a request with another key value has its own, and a missing key is skipped or denied."""
import subprocess

import pytest
import requests

from conftest import gateway_config, rule_config, sluice_binary


def get(url, **kw):
    return requests.get(url, timeout=10, **kw)


def one_per_key(upstream, key_yaml, extra_rule=""):
    """A config whose only rule allows one request per key per hour."""
    rule = f"  once:\n    limit: \"fixed-window:limit=1,window=1h\"\n    key: {key_yaml}\n{extra_rule}"
    return gateway_config([upstream.address], rules=rule, route_rules="[once]")


# (key as YAML, request kwargs for key value A, for key value B)
KINDS = {
    "header": ("header:X-Api-Key", dict(headers={"X-Api-Key": "a"}), dict(headers={"X-Api-Key": "b"})),
    "query": ("query:userId", dict(params={"userId": "a"}), dict(params={"userId": "b"})),
    "cookie": ("cookie:session", dict(cookies={"session": "a"}), dict(cookies={"session": "b"})),
    "path": ("path", dict(path="/x"), dict(path="/y")),
    "combined": ("[path, header:X-Api-Key]", dict(path="/x", headers={"X-Api-Key": "a"}),
                 dict(path="/x", headers={"X-Api-Key": "b"})),
}


def send(s, path="/", **kw):
    return get(s.url + path, **kw).status_code


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_key_value_has_its_own_budget(sluice, upstreams, kind):
    key, a, b = KINDS[kind]
    s = sluice(one_per_key(upstreams(1), key))
    assert send(s, **a) == 200
    assert send(s, **a) == 429, "the same key value shares one budget"
    assert send(s, **b) == 200, "another key value has its own budget"


@pytest.mark.parametrize("key", ["const:everyone", "route"])
def test_constant_and_route_keys_are_one_budget_for_all_clients(sluice, upstreams, key):
    s = sluice(one_per_key(upstreams(1), key))
    assert send(s, headers={"X-Api-Key": "a"}) == 200
    assert send(s, headers={"X-Api-Key": "b"}) == 429


def test_a_missing_key_skips_the_limit_by_default(sluice, upstreams):
    s = sluice(one_per_key(upstreams(1), "header:X-Api-Key"))
    assert [send(s) for _ in range(3)] == [200, 200, 200]


def test_a_missing_key_is_denied_when_configured(sluice, upstreams):
    up = upstreams(1)
    s = sluice(one_per_key(up, "header:X-Api-Key", "    on_missing_key: deny\n"))
    assert send(s) == 429
    assert send(s, headers={"X-Api-Key": "a"}) == 200
    assert up.requests == 1


def from_client(s, address):
    return send(s, headers={"X-Forwarded-For": address})


def test_a_client_ip_prefix_key_makes_one_network_one_client(sluice, upstreams):
    # One request an hour per IPv4 /24 and per IPv6 /64 (the peer, 127.0.0.1, is a trusted proxy).
    s = sluice(rule_config(upstreams(1), "per-net", "fixed-window:limit=1,window=1h",
                           key="client_ip/24/64", extra="trusted_proxies: [127.0.0.1]"))
    assert from_client(s, "203.0.113.7") == 200
    assert from_client(s, "203.0.113.250") == 429, "the same /24 is one client"
    assert from_client(s, "203.0.114.7") == 200, "the next /24 is another"
    assert from_client(s, "2001:db8:1:2::1") == 200
    assert from_client(s, "2001:db8:1:2:ffff::9") == 429, "the same /64 is one client"
    assert from_client(s, "2001:db8:1:3::1") == 200, "the next /64 is another"
    # The decision API names the network and meets the same state.
    r = requests.post(f"{s.admin}/v1/check", json={"rule": "per-net", "key": "198.51.100.0/24"},
                      timeout=10)
    assert r.status_code == 200, r.text
    assert from_client(s, "198.51.100.1") == 429


def test_check_config_names_a_client_ip_prefix_out_of_range(upstreams, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(rule_config(upstreams(1), "per-net", "gcra:rate=1/s,burst=1",
                                key="client_ip/33/64").format(gateway=1, admin=2, access_log="x"))
    out = subprocess.run([sluice_binary(), "check-config", str(path)], capture_output=True, text=True)
    assert out.returncode != 0
    assert "client_ip IPv4 prefix '33' is not 0 to 32" in out.stderr, out.stderr
