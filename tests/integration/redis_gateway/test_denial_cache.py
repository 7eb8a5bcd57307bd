"""A key Redis refused until T is refused by the instance until T without asking Redis again
or for at most `redis.cache_denials` (default 1s), without asking Redis again (envoyproxy/
ratelimit's local over-limit cache, docs/distributed.md): only denials are kept, so every
decision is the one Redis would have made, unless the key is reset in Redis itself. Counted from Redis's own INFO
commandstats and sluice's `sluice_redis_answers_total{source="denial_cache"}`."""
import time

import redis
import requests

CONFIG = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
workers: 1
write_back: false
redis:
  url: {redis}
  timeout: 200ms
  storage: redis
%s
routes:
  - name: hot
    match: {{path_prefix: /}}
    respond: {{status: 200}}
    rules: [hot]
rules:
  hot:
    limit: "%s"
    key: const:hot
    on_failure: fail-closed
"""


def config(limit, redis_lines=""):
    return CONFIG % (redis_lines, limit)


def script_calls(port):
    stats = redis.Redis(host="127.0.0.1", port=port).info("commandstats")
    return sum(stats.get(f"cmdstat_{c}", {}).get("calls", 0) for c in ("evalsha", "eval"))


def codes(g, n):
    with requests.Session() as s:
        return [s.get(g.url + "/", timeout=5).status_code for _ in range(n)]


def test_a_refused_key_is_refused_here_until_its_retry_time_without_asking_redis(
        redis_server, gateways):
    rs = redis_server()
    g = gateways(config("fixed-window:limit=3,window=1h", "  cache_denials: 1h"), rs.url)
    assert codes(g, 1) == [200]  # the script is loaded into Redis with the first call
    before = script_calls(rs.port)
    assert codes(g, 2) == [200] * 2
    from_redis = requests.get(g.url + "/", timeout=5)
    assert codes(g, 99) == [429] * 99
    # 2 admitted and the first refusal went to Redis; the 99 after it were answered here.
    assert script_calls(rs.port) - before == 3
    assert g.metric("sluice_redis_answers_total", source="redis") == 4
    assert g.metric("sluice_redis_answers_total", source="denial_cache") == 99
    # A cached refusal tells the client what Redis's did: the seconds to the window's end.
    cached = requests.get(g.url + "/", timeout=5)
    assert from_redis.status_code == cached.status_code == 429
    redis_says, cache_says = int(from_redis.headers["Retry-After"]), int(cached.headers["Retry-After"])
    assert redis_says - 2 <= cache_says <= redis_says


def test_the_refusal_holds_only_until_redis_would_admit_again(redis_server, gateways):
    rs = redis_server()
    # One request per 400 ms: refused for 400 ms after each admission.
    g = gateways(config("gcra:rate=150/m,burst=0"), rs.url)
    assert codes(g, 1) == [200]
    start = time.monotonic()
    refused = codes(g, 20)
    assert refused == [429] * 20 and time.monotonic() - start < 0.35, "all within the 400 ms"
    time.sleep(0.45)
    assert codes(g, 2) == [200, 429], "past the retry time Redis is asked, and admits"
    assert g.metric("sluice_redis_answers_total", source="denial_cache") >= 19


def test_another_instance_sees_the_same_refusals_through_redis(redis_server, gateways):
    rs = redis_server()
    a, b = gateways(config("fixed-window:limit=3,window=1h", "  cache_denials: 1h"), rs.url, n=2)
    assert codes(a, 3) == [200, 200, 200]
    assert codes(b, 0) == []
    # b has cached nothing: it asks Redis once, learns the refusal, then answers itself.
    before = script_calls(rs.port)
    assert codes(b, 10) == [429] * 10
    assert script_calls(rs.port) - before == 1


def test_a_refusal_is_kept_at_most_cache_denials_so_a_reset_in_redis_is_seen(
        redis_server, gateways):
    rs = redis_server()
    g = gateways(config("fixed-window:limit=3,window=1h", "  cache_denials: 300ms"), rs.url)
    assert codes(g, 4) == [200, 200, 200, 429]
    redis.Redis(host="127.0.0.1", port=rs.port).flushdb()  # an operator resets every key
    assert codes(g, 1) == [429], "kept: Redis is not asked within 300 ms"
    time.sleep(0.35)
    assert codes(g, 1) == [200], "past 300 ms Redis is asked, and has forgotten the key"


def test_a_kept_refusal_answers_while_redis_is_down_then_the_failure_policy_does(
        redis_server, gateways):
    rs = redis_server()
    cfg = config("fixed-window:limit=3,window=1h", "  cache_denials: 500ms").replace(
        "fail-closed", "fail-open")
    g = gateways(cfg, rs.url)
    assert codes(g, 4) == [200, 200, 200, 429]
    rs.stop()
    assert codes(g, 1) == [429], "what Redis last said holds for its 500 ms"
    time.sleep(0.55)
    assert codes(g, 3) == [200, 200, 200], "then fail-open answers"


def test_cache_denials_0s_asks_redis_for_every_decision(redis_server, gateways):
    rs = redis_server()
    g = gateways(config("fixed-window:limit=3,window=1h", "  cache_denials: 0s"), rs.url)
    assert codes(g, 1) == [200]
    before = script_calls(rs.port)
    assert codes(g, 12) == [200] * 2 + [429] * 10
    assert script_calls(rs.port) - before == 12
    assert g.metric("sluice_redis_answers_total", source="denial_cache") == 0
