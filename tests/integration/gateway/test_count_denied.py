"""count_denied through a real sluice: with `count_denied: true` a refused request is charged
as if admitted (Kong's penalty), so a key that keeps asking while refused waits longer; without
it (the default) refusals are free. One GCRA of 1 a second and no burst: the first request
passes, the next must wait 1 s; charged, the one after must wait 2 s (the debt's cap)."""
import subprocess

import requests

from conftest import gateway_config, sluice_binary

RULES = """\
  penalised:
    limit: "gcra:rate=1/s,burst=0"
    key: header:X-Api-Key
    count_denied: true
  plain:
    limit: "gcra:rate=1/s,burst=0"
    key: header:X-Api-Key
"""


def retry_ms(s, rule, key):
    r = requests.post(s.admin + "/v1/check", json={"rule": rule, "key": key}, timeout=10)
    assert r.status_code == 200, r.text
    return r.json()["retry_after_ms"]


def test_a_refused_request_counts_only_where_the_rule_says_so(sluice, upstreams):
    s = sluice(gateway_config([upstreams(1).address], rules=RULES, route_rules="[penalised]"))
    plain = [retry_ms(s, "plain", "a") for _ in range(4)]
    assert plain[0] == 0
    assert all(900 <= ms <= 1000 for ms in plain[1:]), plain  # each refusal was free

    penalised = [retry_ms(s, "penalised", "a") for _ in range(4)]
    assert penalised[0] == 0
    assert 900 <= penalised[1] <= 1000, penalised
    assert 1900 <= penalised[2] <= 2000, penalised  # the refusal before was charged
    assert 1900 <= penalised[3] <= 2000, penalised  # at most one capacity of debt

    shown = requests.get(s.admin + "/v1/rules/penalised", timeout=10).json()
    assert shown.get("count_denied") is True, shown
    assert "count_denied" not in requests.get(s.admin + "/v1/rules/plain", timeout=10).json()

    # The gateway charges the same way: Retry-After 1 s, then 2 s.
    send = lambda: requests.get(s.url + "/", headers={"X-Api-Key": "b"}, timeout=10)  # noqa: E731
    assert send().status_code == 200
    first, second = send(), send()
    assert (first.status_code, first.headers["Retry-After"]) == (429, "1")
    assert (second.status_code, second.headers["Retry-After"]) == (429, "2")


def test_check_config_refuses_count_denied_where_it_has_no_meaning(tmp_path):
    config = tmp_path / "bad.yaml"
    config.write_text(gateway_config(["127.0.0.1:9"], route_rules="[q]", rules="""\
  q:
    limit: "queue:rate=10/s"
    key: header:X-Api-Key
    count_denied: true
""").replace("{gateway}", "8080").replace("{admin}", "9090").replace("{access_log}", "/dev/null"))
    run = subprocess.run([sluice_binary(), "check-config", str(config)], capture_output=True,
                         text=True, timeout=30)
    assert run.returncode != 0
    assert "field 'count_denied'" in run.stderr, run.stderr
    assert "token-bucket, gcra, fixed-window and sliding-window" in run.stderr, run.stderr
