"""Tiers and overrides on a rule kept in Redis, two sluice instances sharing one real
redis-server: each tier's budget (and a configured override's) is one budget across both
instances, and an untrusted client's X-Plan: pro still gets the default tier. Overrides set
through the admin API: test_overrides_redis.py."""

import requests

from integration_support import status_from  # on sys.path through conftest

CONFIG = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
workers: 1
write_back: false
trusted_proxies: [127.0.0.1]
redis:
  url: {redis}
  timeout: 200ms
routes:
  - name: api
    match: {{path_prefix: /}}
    respond: {{status: 200, body: "ok\\n"}}
    rules: [plan]
rules:
  plan:
    key: header:X-User
    storage: redis
    on_failure: fail-closed
    tier: header:X-Plan
    tiers:
      default: gcra:rate=1/m,burst=1
      pro: gcra:rate=1/m,burst=4
    overrides:
      customer-42: gcra:rate=1/m,burst=6
"""


def admitted_across(gateways, source, headers):
    """Requests admitted, alternating between the instances, until one is refused."""
    n = 0
    while n < 20 and status_from(gateways[n % 2].gateway_port, source, headers) == 200:
        n += 1
    return n


def test_each_tier_is_one_budget_across_instances_and_an_untrusted_plan_is_ignored(
        redis_server, gateways):
    rs = redis_server()
    pair = gateways(CONFIG, rs.url, n=2)
    # gcra burst=4: 5 at once, in total over both instances.
    assert admitted_across(pair, "127.0.0.1", {"X-User": "a", "X-Plan": "pro"}) == 5
    assert admitted_across(pair, "127.0.0.2", {"X-User": "b", "X-Plan": "pro"}) == 2, \
        "X-Plan from a peer not in trusted_proxies: the default tier (burst=1: 2 at once)"
    assert admitted_across(pair, "127.0.0.2", {"X-User": "customer-42"}) == 7
    check = requests.post(f"{pair[1].admin}/v1/check",
                          json={"rule": "plan", "key": "a", "tier": "pro"}, timeout=5).json()
    assert check["allowed"] is False, "a's pro budget was spent through both gateways"

