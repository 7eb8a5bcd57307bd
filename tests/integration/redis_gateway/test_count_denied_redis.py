"""count_denied on rules kept in Redis, two sluice instances on one real redis-server: a refused
request is charged in Redis exactly as the local backend charges it (core/denied_charge.hpp),
per algorithm, and the charge is one budget across instances. Each sequence runs against a
local rule and a Redis rule of the same limit; both must give the same answers, and the numbers
are the ones docs/configuration.md gives for count_denied."""
import subprocess

import pytest
import requests

from integration_support import sluice_binary  # on sys.path through conftest

LIMITS = {
    "gcra": "gcra:rate=1/m,burst=0",
    "tb": "token-bucket:rate=1/m,burst=2",
    "fw": "fixed-window:limit=3,window=1h",
    "sw": "sliding-window:limit=3,window=1h",
}


def rules():
    out = []
    for name, limit in LIMITS.items():
        for storage in ("local", "redis"):
            out.append(f"""\
  {name}_{storage}:
    limit: "{limit}"
    key: header:X-Key
    storage: {storage}
    on_failure: fail-closed
    count_denied: true
""".replace("    on_failure: fail-closed\n", "    on_failure: fail-closed\n" if storage == "redis"
            else ""))
    return "".join(out)


CONFIG = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
workers: 1
write_back: false
redis:
  url: {redis}
  timeout: 500ms
routes:
  - name: api
    match: {{path_prefix: /}}
    respond: {{status: 200, body: "ok\\n"}}
    rules: [gcra_redis]
rules:
""" + rules().replace("{", "{{").replace("}", "}}")


def check(gateway, rule, key, cost=1):
    r = requests.post(gateway.admin + "/v1/check",
                      json={"rule": rule, "key": key, "cost": cost}, timeout=10)
    assert r.status_code == 200, r.text
    body = r.json()
    return body["allowed"], body["retry_after_ms"]


def seconds(ms):
    """retry_after_ms as whole seconds (the calls of one sequence take well under a second)."""
    return round(ms / 1000)


# (cost, allowed, retry in seconds or None) per step; each refusal after the first admitted
# request is charged, so the waits grow where the algorithm carries a debt and a window stays
# full. The windows' waits depend on where in the hour the test runs (and on whose clock the
# window starts), so only their answers are given.
SEQUENCES = {
    # The TAT moves 60 s per refusal, to at most now + 2 x 60 s.
    "gcra": [(1, True, 0), (1, False, 60), (1, False, 120), (1, False, 120)],
    # Two tokens spent; each refusal takes one more, down to -2: 60, 120, then 180 s of refill.
    "tb": [(2, True, 0), (1, False, 60), (1, False, 120), (1, False, 180), (1, False, 180)],
    # 2 of 3 used; the refused 2 fills the window to 3, so a cost of 1 no longer fits.
    "fw": [(2, True, 0), (2, False, None), (1, False, None)],
    "sw": [(2, True, 0), (2, False, None), (1, False, None)],
}


@pytest.mark.parametrize("alg", sorted(SEQUENCES))
def test_a_refusal_is_charged_in_redis_as_the_local_backend_charges_it(redis_server, gateways,
                                                                      alg):
    a, b = gateways(CONFIG, redis_server().url, n=2)
    for storage in ("local", "redis"):
        rule = f"{alg}_{storage}"
        for step, (cost, allowed, retry) in enumerate(SEQUENCES[alg]):
            # The Redis rule alternates instances: the charge is in Redis, not in either one.
            g = a if storage == "local" or step % 2 == 0 else b
            got_allowed, got_ms = check(g, rule, "k", cost)
            assert got_allowed == allowed, (rule, step, got_allowed, got_ms)
            if retry is not None:
                assert seconds(got_ms) == retry, (rule, step, got_ms)
            else:
                # A window's wait runs to its end, which each backend places on its own clock.
                assert got_ms > 0, (rule, step, got_ms)


def test_without_count_denied_the_same_refusals_are_free_in_redis(redis_server, gateways):
    config = CONFIG.replace("    count_denied: true\n", "")
    g = gateways(config, redis_server().url)
    answers = [check(g, "gcra_redis", "k") for _ in range(4)]
    assert answers[0] == (True, 0)
    assert [seconds(ms) for _, ms in answers[1:]] == [60, 60, 60]
    answers = [check(g, "fw_redis", "k", c) for c in (2, 2, 1)]
    assert [ok for ok, _ in answers] == [True, False, True], answers


def test_the_gateway_charges_refusals_through_redis_across_instances(redis_server, gateways):
    a, b = gateways(CONFIG, redis_server().url, n=2)
    send = lambda g: requests.get(g.url + "/", headers={"X-Key": "c"}, timeout=10)  # noqa: E731
    assert send(a).status_code == 200
    first, second = send(b), send(b)  # b's denial cache would answer the second with 60
    assert (first.status_code, first.headers["Retry-After"]) == (429, "60")
    assert (second.status_code, second.headers["Retry-After"]) == (429, "120")
    # The denial cache never answers a rule that counts refusals: every one reached Redis.
    assert b.metric("sluice_redis_answers_total", source="denial_cache") == 0


def test_check_config_refuses_count_denied_on_a_leased_redis_rule(tmp_path):
    config = tmp_path / "leased.yaml"
    config.write_text("""\
listen: 127.0.0.1:8080
admin: 127.0.0.1:9090
redis: {url: "redis://127.0.0.1:6379"}
routes:
  - name: api
    match: {path_prefix: /}
    respond: {status: 200}
    rules: [leased]
rules:
  leased:
    limit: "gcra:rate=100/s,burst=10"
    key: header:X-Key
    storage: redis
    lease: 10
    count_denied: true
""")
    run = subprocess.run([sluice_binary(), "check-config", str(config)], capture_output=True,
                         text=True, timeout=30)
    assert run.returncode != 0
    assert "field 'count_denied'" in run.stderr and "lease: 0 (exact)" in run.stderr, run.stderr
