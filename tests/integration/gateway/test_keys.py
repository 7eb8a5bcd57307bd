"""Every key kind through the real gateway: two requests with the same key share one budget,
a request with another key value has its own, and a missing key is skipped or denied."""
import pytest
import requests

from conftest import gateway_config


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
