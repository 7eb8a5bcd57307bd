"""Redis as it is deployed (docs/distributed.md, "Redis as it is deployed"): AUTH with a password
and with an ACL user, the secret read from a file or the environment, a database number, and TLS
against a real redis-server started with TLS (the server's certificate verified against the
config's CA; a wrong CA refused; a client certificate where the server requires one). A
refusal is a clear line on sluice's stderr and a metric, and the rule's failure policy answers
meanwhile."""
import re

import pytest
import redis
import requests

from deploy_support import AuthRedis, make_pki, tls_args
from integration_support import free_port, wait_until  # on sys.path through conftest
from redis_support import RedisServer

# A rule of 3 per minute kept in Redis, on two routes that differ only in the failure policy.
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
  - name: open
    match: {{path_prefix: /open}}
    respond: {{status: 200}}
    rules: [three_open]
  - name: closed
    match: {{path_prefix: /closed}}
    respond: {{status: 200}}
    rules: [three_closed]
rules:
  three_open:
    limit: fixed-window:limit=3,window=1m
    key: const:k
    on_failure: fail-open
  three_closed:
    limit: fixed-window:limit=3,window=1m
    key: const:k
    on_failure: fail-closed
"""
PASSWORD = "correct-horse-battery-staple"


def config(extra):
    # The extra lines belong to the redis section; braces are doubled for str.format.
    return CONFIG % "\n".join("  " + line for line in extra).replace("{", "{{").replace("}", "}}")


def codes(g, path, n=4):
    with requests.Session() as s:
        return [s.get(g.url + path, timeout=5).status_code for _ in range(n)]


def stored_keys(client):
    """The limits' keys (not the instances' heartbeats, docs/dashboard.md#instances)."""
    return sorted(k.decode() for k in client.keys("sluice:*")
                  if not k.startswith(b"sluice:{instances}"))


def test_auth_with_a_password_from_a_file_and_a_database(tmp_path, gateways):
    rs = AuthRedis(tmp_path, PASSWORD, extra=["--requirepass", PASSWORD])
    secret = tmp_path / "redis-password"
    secret.write_text(PASSWORD + "\n")  # the trailing newline is not part of the password
    try:
        g = gateways(config([f"password_file: {secret}", "db: 5"]), rs.url)
        assert codes(g, "/closed") == [200, 200, 200, 429]
        # The state is in database 5, none in 0.
        assert stored_keys(rs.client()) == []
        db5 = redis.Redis(host="127.0.0.1", port=rs.port, password=PASSWORD, db=5)
        assert stored_keys(db5) == ["sluice:{three_closed:k}:fixed-window"]
        db5.close()
        assert g.metric("sluice_redis_answers_total", source="redis") == 4
        assert g.metric("sluice_redis_client_refused_connects_total") == 0
        # The secret is never in what sluice says.
        assert PASSWORD not in g.stderr()
    finally:
        rs.stop()


def test_auth_as_an_acl_user_with_the_password_from_the_environment(tmp_path, gateways,
                                                                      monkeypatch):
    # The default user is off: only `app` may connect.
    acl = ["--user", "default", "off", "--user", "app", "on", f">{PASSWORD}", "~*", "&*", "+@all"]
    rs = AuthRedis(tmp_path, PASSWORD, user="app", extra=acl)
    monkeypatch.setenv("SLUICE_TEST_REDIS_PASSWORD", PASSWORD)
    try:
        g = gateways(config(["user: app", "password_env: SLUICE_TEST_REDIS_PASSWORD"]), rs.url)
        assert codes(g, "/closed") == [200, 200, 200, 429]
        assert stored_keys(rs.client()) == ["sluice:{three_closed:k}:fixed-window"]
        # The same user given in the url.
        g2 = gateways(config(["password_env: SLUICE_TEST_REDIS_PASSWORD"]),
                      f"redis://app@127.0.0.1:{rs.port}")
        assert codes(g2, "/open") == [200, 200, 200, 429]
    finally:
        rs.stop()


def test_a_wrong_password_is_a_clear_error_and_the_failure_policy_answers(tmp_path, gateways):
    rs = AuthRedis(tmp_path, PASSWORD, extra=["--requirepass", PASSWORD])
    secret = tmp_path / "wrong"
    secret.write_text("not-the-password\n")
    try:
        g = gateways(config([f"password_file: {secret}"]), rs.url)
        wait_until(lambda: "AUTH refused by Redis" in g.stderr(), what="the AUTH refusal logged")
        line = next(l for l in g.stderr().splitlines() if "AUTH refused" in l)
        # The server log's text line (docs/logging.md, "Server log"): time, level, message.
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]{12}Z warn  .*", line), line
        line = line.split("  ", 1)[1]
        assert line == (f"sluice: redis: cannot connect to Redis at 127.0.0.1:{rs.port}: AUTH "
                        f"refused by Redis at 127.0.0.1:{rs.port}: WRONGPASS invalid "
                        "username-password pair or user is disabled."), line
        assert "not-the-password" not in g.stderr()
        # Meanwhile each rule's policy answers: fail-open allows all, fail-closed denies all.
        assert codes(g, "/open", 5) == [200] * 5
        assert codes(g, "/closed", 5) == [429] * 5
        assert g.metric("sluice_redis_client_refused_connects_total") >= 1
        assert g.metric("sluice_redis_answers_total", source="redis") == 0
        assert g.metric("sluice_redis_answers_total", source="fail_open") == 5
        assert g.metric("sluice_redis_answers_total", source="fail_closed") == 5
        assert stored_keys(rs.client()) == []
    finally:
        rs.stop()


def test_no_password_for_a_server_that_wants_one_says_so(tmp_path, gateways):
    rs = AuthRedis(tmp_path, PASSWORD, extra=["--requirepass", PASSWORD])
    try:
        g = gateways(config([]), rs.url)
        wait_until(lambda: "wants AUTH" in g.stderr(), what="the NOAUTH refusal logged")
        assert (f"Redis at 127.0.0.1:{rs.port} wants AUTH (NOAUTH Authentication required.): "
                "give redis.password_file or password_env") in g.stderr()
        assert codes(g, "/closed", 2) == [429, 429]
    finally:
        rs.stop()


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return make_pki(tmp_path_factory.mktemp("pki"))


def tls_redis(tmp_path, pki, auth_clients=False):
    """A redis-server with a TLS port (returned) beside its plain one (the test's window)."""
    port = free_port()
    rs = RedisServer(tmp_path, extra=tls_args(pki, port, auth_clients))
    return rs, port


def test_tls_verifies_the_server_against_the_ca_file(tmp_path, gateways, pki):
    rs, port = tls_redis(tmp_path, pki)
    try:
        g = gateways(config(["tls:", f"  ca_file: {pki['ca']}"]), f"rediss://127.0.0.1:{port}")
        assert codes(g, "/closed") == [200, 200, 200, 429]
        assert stored_keys(rs.client()) == ["sluice:{three_closed:k}:fixed-window"]
        assert g.metric("sluice_redis_client_tls_failures_total") == 0
        # The name checked is the host connected to (127.0.0.1, in the certificate), or the
        # configured one: `localhost` is in it too, `redis.other` is not.
        g2 = gateways(config(["tls:", f"  ca_file: {pki['ca']}", "  server_name: localhost"]),
                      f"redis://127.0.0.1:{port}")
        assert codes(g2, "/open") == [200, 200, 200, 429]
        assert g2.metric("sluice_redis_answers_total", source="redis") == 4
    finally:
        rs.stop()


def test_tls_with_a_wrong_ca_or_name_is_refused_and_verify_false_is_not(tmp_path, gateways, pki):
    rs, port = tls_redis(tmp_path, pki)
    url = f"rediss://127.0.0.1:{port}"
    try:
        wrong_ca = gateways(config(["tls:", f"  ca_file: {pki['other_ca']}"]), url)
        wrong_name = gateways(config(["tls:", f"  ca_file: {pki['ca']}",
                                      "  server_name: redis.other"]), url)
        for g in (wrong_ca, wrong_name):
            wait_until(lambda: "TLS handshake" in g.stderr(), what="the TLS refusal logged")
            assert (f"sluice: redis: cannot connect to Redis at 127.0.0.1:{port}: TLS handshake: "
                    "certificate verify failed") in g.stderr()
            assert codes(g, "/closed", 3) == [429] * 3
            assert codes(g, "/open", 3) == [200] * 3
            assert g.metric("sluice_redis_client_tls_failures_total") >= 1
            assert g.metric("sluice_redis_answers_total", source="redis") == 0
        assert stored_keys(rs.client()) == []
        # verify: false takes any certificate (encryption without authentication).
        unverified = gateways(config(["tls: {verify: false}"]), url)
        assert codes(unverified, "/closed") == [200, 200, 200, 429]
    finally:
        rs.stop()


def test_a_client_certificate_where_the_server_requires_one(tmp_path, gateways, pki):
    rs, port = tls_redis(tmp_path, pki, auth_clients=True)
    url = f"rediss://127.0.0.1:{port}"
    try:
        without = gateways(config(["tls:", f"  ca_file: {pki['ca']}"]), url)
        wait_until(lambda: "cannot connect" in without.stderr(), what="the refusal logged")
        # TLS 1.3: the server says so after the handshake, at the first read.
        assert (f"sluice: redis: cannot connect to Redis at 127.0.0.1:{port}: read: tlsv13 alert "
                "certificate required") in without.stderr()
        assert codes(without, "/closed", 2) == [429, 429]
        assert without.metric("sluice_redis_client_tls_failures_total") >= 1
        with_cert = gateways(config(["tls:", f"  ca_file: {pki['ca']}",
                                     f"  cert_file: {pki['client_crt']}",
                                     f"  key_file: {pki['client_key']}"]), url)
        assert codes(with_cert, "/closed") == [200, 200, 200, 429]
        assert with_cert.metric("sluice_redis_client_tls_failures_total") == 0
        assert stored_keys(rs.client()) == ["sluice:{three_closed:k}:fixed-window"]
    finally:
        rs.stop()
