"""The config of rules kept in Redis: mistakes are refused by `sluice check-config` (exit 2) and
by `sluice serve`, each as FILE:LINE: problem at the line of the field at fault; and a Redis
rule works on Redis Cluster (keys spread over the masters)."""
import os
import re
import subprocess

import pytest
import requests

from integration_support import sluice_binary  # on sys.path through conftest

HEAD = """\
listen: 127.0.0.1:18080
admin: 127.0.0.1:18090
"""
ROUTE = """\
routes:
  - name: r
    match: {path_prefix: /}
    respond: {status: 200}
    rules: [x]
"""
RULE = """\
rules:
  x:
    limit: gcra:rate=10/s,burst=5
    key: const:global
"""
REDIS = """\
redis:
  url: redis://127.0.0.1:6379
"""

# (id, config, [(marker, message pattern)]): each error is expected at the line that ends with
# `# <-marker`, with a message matching the pattern.
CASES = [
    ("storage-without-url", HEAD + ROUTE + RULE + "    storage: redis  # <-a\n",
     [("a", r"rule 'x': kept in Redis, but no store is configured: add redis: "
            r"\{url: redis://127\.0\.0\.1:6379\}")]),
    ("default-storage-without-url",
     HEAD + "redis: {timeout: 50ms, storage: redis}\n" + ROUTE
     + RULE.replace("  x:\n", "  x:  # <-a\n"),
     [("a", r"rule 'x': kept in Redis, but no store is configured")]),
    ("url-scheme", HEAD + "redis:\n  url: http://127.0.0.1:6379  # <-a\n" + ROUTE + RULE
     + "    storage: redis\n",
     [("a", r"field 'redis\.url': unknown scheme 'http' in Redis URL "
            r"'http://127\.0\.0\.1:6379' \(expected redis or redis-cluster, redis-sentinel, or "
            r"rediss, rediss-cluster, rediss-sentinel for TLS\)")]),
    ("url-port", HEAD + "redis:\n  url: redis-cluster://127.0.0.1:7000,127.0.0.1:0  # <-a\n"
     + ROUTE + RULE + "    storage: redis\n",
     [("a", r"field 'redis\.url': bad port '0'")]),
    ("on-failure-maybe", HEAD + REDIS + ROUTE + RULE
     + "    storage: redis\n    on_failure: maybe  # <-a\n",
     [("a", r"rule 'x': field 'on_failure': unknown value 'maybe' "
            r"\(accepted: fail-open, fail-closed, local\)")]),
    ("default-on-failure-maybe", HEAD + REDIS + "  on_failure: maybe  # <-a\n" + ROUTE + RULE,
     [("a", r"field 'redis\.on_failure': unknown value 'maybe'")]),
    ("lease-on-queue", HEAD + REDIS + ROUTE
     + "rules:\n  x:\n    limit: queue:rate=10/s,max-wait=1s\n    key: const:global\n"
       "    storage: redis\n    lease: 10  # <-a\n",
     [("a", r"rule 'x': field 'lease': leasing applies to token-bucket, gcra and the windows, not queue "
            r"\(set lease: 0\)")]),
    ("lease-on-smooth", HEAD + REDIS + "  storage: redis\n" + ROUTE
     + "rules:\n  x:\n    limit: smooth-bursty:rate=10/s\n    key: const:global\n"
       "    lease: 10  # <-a\n",
     [("a", r"rule 'x': field 'lease': leasing applies to .*not smooth-bursty")]),
    # docs/distributed.md: "not leaky-bucket: its grants carry nginx's delay".
    ("lease-on-leaky-bucket", HEAD + REDIS + ROUTE
     + "rules:\n  x:\n    limit: leaky-bucket:rate=10/s,burst=5\n    key: const:global\n"
       "    storage: redis\n    lease: 10  # <-a\n",
     [("a", r"rule 'x': field 'lease': leasing applies to .*not leaky-bucket")]),
    ("local-share-2", HEAD + REDIS + ROUTE + RULE
     + "    storage: redis\n    on_failure: local\n    local_share: 2  # <-a\n",
     [("a", r"rule 'x': field 'local_share': expected a share of the rate between 0 and 1")]),
    ("combine-first", HEAD + REDIS
     + ROUTE.replace("    rules: [x]\n", "    rules: [x, y]\n    combine: first  # <-a\n")
     + RULE + "    storage: redis\n  y:\n    limit: token-bucket:rate=100/s,burst=10\n"
              "    key: client_ip\n",
     [("a", r"route 'r': field 'combine': 'first' needs every rule in one store, and rule "
            r"'x' is kept in Redis; use all")]),
    # Leased permits are spent at once and by one rule: a delay rule, or a leasing rule beside
    # another Redis rule on a route, would silently not lease.
    ("lease-on-delay-rule", HEAD + REDIS + ROUTE + RULE
     + "    storage: redis\n    action: delay\n    max_wait: 100ms\n    lease: 3  # <-a\n",
     [("a", r"rule 'x': field 'lease': leased permits are spent at once, so a delay rule "
            r"cannot lease")]),
    ("leasing-rule-beside-another-redis-rule", HEAD + REDIS
     + ROUTE.replace("    rules: [x]\n", "    rules: [x, y]  # <-a\n")
     + RULE + "    storage: redis\n    lease: 3\n  y:\n    limit: gcra:rate=100/s,burst=10\n"
              "    key: client_ip\n    storage: redis\n",
     [("a", r"route 'r': field 'rules': a leasing rule must be the route's only rule kept in "
            r"Redis \(it has 2\)")]),
    ("redis-fields-on-local-rule", HEAD + REDIS + ROUTE + RULE
     + "    on_failure: fail-closed  # <-a\n    lease: 3  # <-b\n",
     [("a", r"rule 'x': field 'on_failure': applies only to rules kept in Redis "
            r"\(storage: redis\)"),
      ("b", r"rule 'x': field 'lease': applies only to rules kept in Redis")]),
]


def expected_errors(path, text, errors):
    lines = text.splitlines()
    out = []
    for marker, pattern in errors:
        number = next(i + 1 for i, line in enumerate(lines) if line.endswith(f"# <-{marker}"))
        out.append((number, re.compile(re.escape(f"{path}:{number}: ") + pattern)))
    return out


@pytest.mark.parametrize("text,errors", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_check_config_names_the_line(tmp_path, text, errors):
    path = tmp_path / "sluice.yaml"
    path.write_text(text)
    r = subprocess.run([sluice_binary(), "check-config", str(path)], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    got = r.stderr.splitlines()
    want = expected_errors(path, text, errors)
    assert len(got) == len(want), r.stderr
    for line, (_, pattern) in zip(got, want):
        assert pattern.match(line), f"{line!r} !~ {pattern.pattern}"


def test_serve_refuses_the_same_file(tmp_path):
    """`sluice serve` checks as check-config does, and does not start."""
    _, text, errors = CASES[4]  # on_failure: maybe
    path = tmp_path / "sluice.yaml"
    path.write_text(text)
    r = subprocess.run([sluice_binary(), "serve", "--config", str(path)], capture_output=True,
                       text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert r.returncode == 2, (r.returncode, r.stderr)
    (_, pattern), = expected_errors(path, text, errors)
    assert any(pattern.match(line) for line in r.stderr.splitlines()), r.stderr


def test_valid_redis_config_checks_ok(tmp_path):
    text = HEAD + REDIS + """\
  timeout: 50ms
  storage: redis
  on_failure: fail-open
  lease_ttl: 200ms
routes:
  - name: r
    match: {path_prefix: /}
    respond: {status: 200}
    rules: [y, z]
  - name: leased
    match: {path_prefix: /leased}
    respond: {status: 200}
    rules: [x, z]
rules:
  x:
    limit: gcra:rate=100/s,burst=10
    key: const:global
    on_failure: local
    local_share: 0.5
    lease: 10
    lease_ttl: 100ms
  y:
    limit: sliding-window:limit=100,window=1m
    key: client_ip
    on_failure: fail-closed
  z:
    limit: token-bucket:rate=10/s,burst=5
    key: header:X-User
    storage: local
"""
    path = tmp_path / "sluice.yaml"
    path.write_text(text)
    r = subprocess.run([sluice_binary(), "check-config", str(path)], capture_output=True,
                       text=True, timeout=30)
    assert (r.returncode, r.stdout.strip(), r.stderr) == (0, f"{path}: ok", "")


CLUSTER_CONFIG = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
workers: 1
write_back: false
redis:
  url: {redis}
  timeout: 200ms
routes:
  - name: api
    match: {{path_prefix: /}}
    respond: {{status: 200, body: "ok\\n"}}
    rules: [per_user]
rules:
  per_user:
    limit: fixed-window:limit=3,window=1h
    key: header:X-User
    storage: redis
    on_failure: fail-closed
"""


def test_redis_rule_on_a_cluster(redis_cluster, gateways):
    g = gateways(CLUSTER_CONFIG, redis_cluster.url(seeds=1))
    users = [f"u{i}" for i in range(12)]
    with requests.Session() as s:
        codes = {u: [s.get(g.url + "/", headers={"X-User": u}, timeout=5).status_code
                     for _ in range(4)] for u in users}
    assert all(c == [200, 200, 200, 429] for c in codes.values()), codes
    # Each user's state lives on the master that serves its slot, not all on the seed.
    owners = {redis_cluster.owner(redis_cluster.keyslot(f"sluice:{{per_user:{u}}}:fixed-window"))
              for u in users}
    assert len(owners) > 1
    stored = [len(n.client().keys("sluice:{per_user:*")) for n in redis_cluster.nodes]
    assert sum(stored) == len(users) and sum(1 for n in stored if n) == len(owners), stored
    assert g.metric("sluice_redis_answers_total", source="redis") == 4 * len(users)
    assert g.metric("sluice_redis_failures_total") == 0


def test_the_distributed_example_config_checks_ok():
    path = os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples",
                        "distributed.yaml")
    r = subprocess.run([sluice_binary(), "check-config", path], capture_output=True, text=True,
                       timeout=30)
    assert (r.returncode, r.stderr) == (0, ""), r.stderr


def test_the_tls_sentinel_example_config_checks_ok_given_its_secret():
    path = os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples",
                        "redis-tls-sentinel.yaml")
    run = lambda env: subprocess.run([sluice_binary(), "check-config", path],  # noqa: E731
                                     capture_output=True, text=True, timeout=30, env=env)
    env = {k: v for k, v in os.environ.items() if k != "SLUICE_REDIS_PASSWORD"}
    r = run({**env, "SLUICE_REDIS_PASSWORD": "a-long-random-password"})
    assert (r.returncode, r.stderr) == (0, ""), r.stderr
    # Without it, the line that names it says so.
    r = run(env)
    assert r.returncode == 2
    assert re.search(r"redis-tls-sentinel\.yaml:\d+: field 'redis\.password_env': the "
                     r"environment variable 'SLUICE_REDIS_PASSWORD' is not set", r.stderr), r.stderr
