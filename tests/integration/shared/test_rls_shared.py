"""Envoy RLS replicas share one limit through Redis, as envoyproxy/ratelimit replicas do: two
`sluice serve --grpc` instances on one redis-server, called with grpcio as Envoy's filter calls
them, admit together exactly the domain's limit; and a domain reloads on SIGHUP."""
import signal
import time

import grpc
import pytest

from integration_support import wait_until
from rls_stubs import request

OK, OVER_LIMIT = 1, 2  # RateLimitResponse.Code

SHARED = """\
redis: {{url: "{redis}", timeout: 200ms}}
rls:
  storage: redis
  on_failure: fail-closed
  domains:
    - domain: edge
      descriptors:
        - key: api_key
          rate_limit: {{unit: hour, requests_per_unit: 25}}
"""


def stub_of(pb, port):
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    grpc.channel_ready_future(channel).result(timeout=10)
    return pb.rls_grpc.RateLimitServiceStub(channel), channel


@pytest.fixture(autouse=True)
def away_from_the_hour():
    """The limit counts in hour windows: do not start a few seconds before one ends."""
    left = 3600 - time.time() % 3600
    if left < 20:
        time.sleep(left + 1)


def test_two_replicas_admit_exactly_the_domains_limit_together(pb, redis_server, instances):
    rs = redis_server()
    a = instances(SHARED, rs.url, grpc=True)
    b = instances(SHARED, rs.url, grpc=True)
    stubs = [stub_of(pb, a.grpc_port), stub_of(pb, b.grpc_port)]
    codes = []
    for i in range(60):  # alternating replicas, as a balancer in front of them would
        stub, _ = stubs[i % 2]
        r = stub.ShouldRateLimit(request(pb, [[("api_key", "k1")]]), timeout=10)
        codes.append(r.overall_code)
    assert codes.count(OK) == 25, codes  # not 25 per replica
    assert codes[:25] == [OK] * 25 and set(codes[25:]) == {OVER_LIMIT}
    # The last one, whichever replica it asks, sees the shared count.
    r = stubs[1][0].ShouldRateLimit(request(pb, [[("api_key", "k1")]]), timeout=10)
    assert r.statuses[0].limit_remaining == 0
    assert r.statuses[0].current_limit.requests_per_unit == 25
    # Another key has its own count; the state is in Redis, under the descriptor's key.
    assert stubs[0][0].ShouldRateLimit(request(pb, [[("api_key", "k2")]]),
                                       timeout=10).overall_code == OK
    assert rs.client().keys("sluice:{rls:*")
    for _, ch in stubs:
        ch.close()


def test_without_redis_the_failure_policy_answers(pb, redis_server, instances):
    rs = redis_server()
    a = instances(SHARED, rs.url, grpc=True)
    stub, ch = stub_of(pb, a.grpc_port)
    assert stub.ShouldRateLimit(request(pb, [[("api_key", "k3")]]), timeout=10).overall_code == OK
    rs.kill()
    started = time.monotonic()
    r = stub.ShouldRateLimit(request(pb, [[("api_key", "k3")]]), timeout=10)
    assert r.overall_code == OVER_LIMIT  # fail-closed
    assert time.monotonic() - started < 2.0
    ch.close()


LOCAL = """\
rls:
  files: ["{rls_file}"]
"""

DOMAIN = """\
domain: edge
descriptors:
  - key: user
    rate_limit: {unit: hour, requests_per_unit: %d}
"""


def test_a_changed_domain_is_picked_up_on_sighup_and_a_broken_one_refused(pb, instances):
    inst = instances(LOCAL, grpc=True, files={"rls.yaml": DOMAIN % 2})
    rls_file = inst.dir / "rls.yaml"
    stub, ch = stub_of(pb, inst.grpc_port)
    ask = lambda: stub.ShouldRateLimit(request(pb, [[("user", "u")]]), timeout=10)  # noqa
    assert [ask().overall_code for _ in range(3)] == [OK, OK, OVER_LIMIT]
    # Raised to 4 per hour: the 2 already counted are kept, 2 more pass.
    rls_file.write_text(DOMAIN % 4)
    inst.proc.send_signal(signal.SIGHUP)
    wait_until(lambda: "config reloaded" in inst.stderr(), what="the reload")
    assert [ask().overall_code for _ in range(3)] == [OK, OK, OVER_LIMIT]
    # A broken file: refused with FILE:LINE, the domain in force keeps serving.
    rls_file.write_text("domain: edge\ndescriptors:\n  - key: user\n"
                        "    rate_limit: {unit: fortnight, requests_per_unit: 9}\n")
    inst.proc.send_signal(signal.SIGHUP)
    wait_until(lambda: "reload refused" in inst.stderr(), what="the refusal")
    assert f"{rls_file}:4: domain 'edge': descriptor 'user': field " \
           "'rate_limit.unit': 'fortnight'" in inst.stderr()
    r = ask()
    assert r.overall_code == OVER_LIMIT and r.statuses[0].current_limit.requests_per_unit == 4
    ch.close()


def test_check_config_checks_rls_files_with_file_and_line(tmp_path):
    import subprocess
    from integration_support import sluice_binary
    bad = tmp_path / "rls.yaml"
    bad.write_text("domain: edge\ndescriptors:\n  - key: a\n    rate_limt: {}\n")
    good = tmp_path / "good.yaml"
    good.write_text(DOMAIN % 3)
    r = subprocess.run([sluice_binary(), "check-config", str(good), str(bad)],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert f"{good}: ok" in r.stdout
    assert f"{bad}:4: domain 'edge': descriptor 'a': unknown field 'rate_limt'" in r.stderr
