"""A secured admin API (hardening, Deliver item 4): the decision API on a listener of its own
without the rule-changing routes, a bearer token on the admin listener, the Host checked
against the listener (DNS rebinding), and no admin listener off loopback without a token."""
import signal
import subprocess

import pytest
import requests

from integration_support import free_port, sluice_binary, wait_until

TOKEN = "0123456789abcdef0123456789abcdef"
RULE = {"limit": "gcra:rate=1/s,burst=1", "key": "client_ip"}


def config(admin, extra=""):
    return (f"admin: 127.0.0.1:{admin}\n{extra}"
            "rules:\n"
            "  per-user: {limit: \"fixed-window:limit=2,window=1h\", key: \"header:X-User\"}\n")


def with_token(tmp_path, token=TOKEN, extra=""):
    path = tmp_path / "admin.token"
    path.write_text(token + "\n")  # as `echo` writes it
    return lambda g, a: config(a, f"admin_auth: {{token_file: {path}}}\n{extra}")


def bearer(token=TOKEN):
    return {"Authorization": f"Bearer {token}"}


def curl(*args):
    p = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", *args],
                       capture_output=True, text=True, timeout=10)
    return int(p.stdout)


def serve_fails(tmp_path, text, *args):
    path = tmp_path / "refused.yaml"
    path.write_text(text)
    return subprocess.run([sluice_binary(), "serve", "--config", str(path), *args],
                          capture_output=True, text=True, timeout=10)


# ------------------------------------------------------------------------ the check listener

def test_the_check_listener_serves_decisions_and_health_but_never_rule_changes(serve_config):
    check = free_port()
    s = serve_config(lambda g, a: config(a, f"check: 127.0.0.1:{check}\n"))
    url = f"http://127.0.0.1:{check}"
    assert requests.get(url + "/v1/check/per-user?key=a", timeout=5).status_code == 204
    r = requests.post(url + "/v1/check", json={"rule": "per-user", "key": "b"}, timeout=5)
    assert r.status_code == 200 and r.json()["allowed"] is True
    assert requests.get(url + "/healthz", timeout=5).text == "ok\n"
    for method, path in [("GET", "/v1/rules"), ("PUT", "/v1/rules/x"), ("DELETE",
                         "/v1/rules/per-user"), ("POST", "/v1/rules:validate"),
                         ("GET", "/metrics")]:
        r = requests.request(method, url + path, json=RULE, timeout=5)
        assert r.status_code == 404, (method, path, r.status_code)
    assert set(s.rules()) == {"per-user"}
    # The admin listener still serves checks, on the same tables: b's budget is one spent.
    assert requests.get(s.admin + "/v1/check/per-user?key=b", timeout=5).status_code == 204
    assert requests.get(url + "/v1/check/per-user?key=b", timeout=5).status_code == 429


def test_the_check_listener_hands_out_and_takes_back_concurrency_permits(serve_config):
    check = free_port()
    serve_config(lambda g, a: config(a, f"check: 127.0.0.1:{check}\n").replace(
        "rules:\n", "rules:\n  one: {limit: \"concurrency:limit=1\", key: client_ip}\n"))
    url = f"http://127.0.0.1:{check}"
    lease = requests.post(url + "/v1/check", json={"rule": "one", "key": "k"}, timeout=5).json()
    assert lease["allowed"] is True
    again = requests.post(url + "/v1/check", json={"rule": "one", "key": "k"}, timeout=5).json()
    assert again["allowed"] is False
    assert requests.delete(url + "/v1/leases/" + lease["lease"], timeout=5).status_code == 200
    after = requests.post(url + "/v1/check", json={"rule": "one", "key": "k"}, timeout=5).json()
    assert after["allowed"] is True


def test_serve_check_flag_opens_the_listener_and_check_on_admin_false_takes_checks_off_admin(
        serve_config):
    check = free_port()
    s = serve_config(lambda g, a: config(a, "check_on_admin: false\n"),
                     ["--check", f"127.0.0.1:{check}"])
    assert f"check listening on 127.0.0.1:{check}" in s.stderr()
    assert curl(f"http://127.0.0.1:{check}/v1/check/per-user?key=c") == 204
    assert curl(s.admin + "/v1/check/per-user?key=c") == 404
    assert curl(s.admin + "/v1/rules") == 200


# ------------------------------------------------------------------------ the bearer token

def test_with_a_token_every_admin_endpoint_but_healthz_needs_it(serve_config, tmp_path):
    check = free_port()
    s = serve_config(with_token(tmp_path, extra=f"check: 127.0.0.1:{check}\n"))
    assert requests.get(s.admin + "/healthz", timeout=5).status_code == 200
    for method, path in [("GET", "/metrics"), ("GET", "/v1/rules"), ("GET", "/v1/rules/per-user"),
                         ("PUT", "/v1/rules/x"), ("DELETE", "/v1/rules/per-user"),
                         ("POST", "/v1/rules:validate"), ("GET", "/v1/check/per-user?key=d"),
                         ("GET", "/v2/nothing")]:
        r = requests.request(method, s.admin + path, json=RULE, timeout=5)
        assert r.status_code == 401, (method, path)
        assert r.headers["WWW-Authenticate"] == 'Bearer realm="sluice admin"'
        r = requests.request(method, s.admin + path, json=RULE, headers=bearer("x" * 32),
                             timeout=5)
        assert r.status_code == 401
        assert r.headers["WWW-Authenticate"] == \
            'Bearer realm="sluice admin", error="invalid_token"'
    assert set(requests.get(s.admin + "/v1/rules", headers=bearer(), timeout=5).json()[0]) >= \
        {"name", "limit"}
    r = requests.put(s.admin + "/v1/rules/x", json=RULE, headers=bearer(), timeout=5)
    assert r.status_code == 201
    # The scheme is case-insensitive (RFC 9110 11.1); curl sends the header as given.
    assert curl("-H", f"Authorization: bearer {TOKEN}", s.admin + "/metrics") == 200
    assert curl(s.admin + "/metrics") == 401
    # The decision listener needs no token.
    assert curl(f"http://127.0.0.1:{check}/v1/check/per-user?key=d") == 204


def test_the_token_can_come_from_an_environment_variable(tmp_path):
    admin = free_port()
    path = tmp_path / "env.yaml"
    path.write_text(config(admin, "admin_auth: {token_env: SLUICE_TEST_ADMIN_TOKEN}\n"))
    env = {"SLUICE_TEST_ADMIN_TOKEN": TOKEN, "PATH": "/usr/bin:/bin"}
    proc = subprocess.Popen([sluice_binary(), "serve", "--config", str(path)], env=env,
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{admin}"

        def up():
            try:
                return requests.get(url + "/healthz", timeout=1).ok
            except requests.ConnectionError:
                return False

        wait_until(up, timeout=10, what="sluice with a token from the environment")
        assert requests.get(url + "/v1/rules", timeout=5).status_code == 401
        assert requests.get(url + "/v1/rules", headers=bearer(), timeout=5).status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    p = serve_fails(tmp_path, config(free_port(), "admin_auth: {token_env: SLUICE_TEST_UNSET}\n"))
    assert p.returncode == 2
    assert ("field 'admin_auth.token_env': the environment variable SLUICE_TEST_UNSET is not set"
            in p.stderr)


def test_a_reload_rotates_the_token_and_a_bad_token_file_keeps_the_old_one(serve_config,
                                                                           tmp_path):
    s = serve_config(with_token(tmp_path))
    new = "fedcba9876543210fedcba9876543210"
    (tmp_path / "admin.token").write_text(new + "\n")
    s.signal(signal.SIGHUP)
    wait_until(lambda: requests.get(s.admin + "/v1/rules", headers=bearer(new),
                                    timeout=5).status_code == 200, what="the new token")
    assert requests.get(s.admin + "/v1/rules", headers=bearer(), timeout=5).status_code == 401
    (tmp_path / "admin.token").write_text("short\n")
    s.signal(signal.SIGHUP)
    wait_until(lambda: "the token has 5 characters" in s.stderr(), what="the refused reload")
    assert requests.get(s.admin + "/v1/rules", headers=bearer(new), timeout=5).status_code == 200


@pytest.mark.parametrize("token_text,problem", [
    (None, "cannot read: No such file or directory"),
    ("short", "the token has 5 characters; give it 16 to 1024"),
    ("a token with spaces in it", "the token holds ' '"),
])
def test_a_token_that_cannot_be_used_stops_serve_with_the_line_that_names_it(
        tmp_path, token_text, problem):
    token = tmp_path / "admin.token"
    if token_text is not None:
        token.write_text(token_text)
    p = serve_fails(tmp_path, config(free_port(), f"admin_auth:\n  token_file: {token}\n"))
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith(f"{tmp_path / 'refused.yaml'}:2: field 'admin_auth.token_file': ")
    assert problem in p.stderr


# ------------------------------------------------------------------------ Host (DNS rebinding)

def test_a_host_that_does_not_name_the_listener_gets_421(serve_config):
    s = serve_config(lambda g, a: config(a, "admin_hosts: [sluice.internal]\n"))
    port = s.admin.rsplit(":", 1)[1]
    # A page on evil.example that rebinds its name to 127.0.0.1 reaches the listener, and its
    # browser sends Host: evil.example. curl --resolve plays that browser.
    rebound = f"http://evil.example:{port}"
    assert curl("--resolve", f"evil.example:{port}:127.0.0.1", rebound + "/v1/rules") == 421
    assert curl("--resolve", f"evil.example:{port}:127.0.0.1", "-X", "PUT", "-d", "limit: x",
                rebound + "/v1/rules/x") == 421
    r = requests.get(s.admin + "/v1/rules", headers={"Host": "evil.example"}, timeout=5)
    assert r.status_code == 421 and r.json()["field"] == "Host"
    for host in [f"127.0.0.1:{port}", "localhost", f"LocalHost.:{port}", "sluice.internal",
                 "api.localhost"]:
        assert requests.get(s.admin + "/v1/rules", headers={"Host": host},
                            timeout=5).status_code == 200, host
    assert requests.get(s.admin + "/v1/rules", headers={"Host": "127.0.0.2"},
                        timeout=5).status_code == 421
    raw = s.raw(b"GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n")
    assert raw.startswith(b"HTTP/1.1 400 "), raw
    raw = s.raw(b"GET /healthz HTTP/1.0\r\n\r\n")
    assert raw.startswith(b"HTTP/1.0 200 "), raw


# ------------------------------------------------------------------------ off loopback

def test_serve_refuses_an_admin_listener_off_loopback_without_a_token(tmp_path):
    port = free_port()
    p = serve_fails(tmp_path, config(free_port()), "--admin", f"0.0.0.0:{port}")
    assert p.returncode == 2
    assert p.stderr == (f"{tmp_path / 'refused.yaml'}: admin listener 0.0.0.0:{port} is not on "
                        "loopback and has no token, so anyone who can reach it could change the "
                        "rules; give it one (admin_auth: {token_file: PATH} or {token_env: NAME}),"
                        " or allow it without on a network you control (admin_auth: {insecure: "
                        "true}, or serve --admin-insecure)\n")


@pytest.mark.parametrize("how", ["token", "flag", "field"])
def test_an_admin_listener_off_loopback_starts_with_a_token_or_when_allowed(serve_config,
                                                                           tmp_path, how):
    text_of = {"token": with_token(tmp_path), "flag": lambda g, a: config(a),
               "field": lambda g, a: config(a, "admin_auth: {insecure: true}\n")}[how]
    flags = ["--admin-insecure"] if how == "flag" else []
    s = serve_config(text_of, lambda g, a: ["--admin", f"0.0.0.0:{a}", *flags])
    assert f"admin listening on 0.0.0.0:{s.admin.rsplit(':', 1)[1]}" in s.stderr()


def test_a_reload_cannot_take_the_token_off_an_exposed_listener(serve_config, tmp_path):
    s = serve_config(with_token(tmp_path), lambda g, a: ["--admin", f"0.0.0.0:{a}"])
    s.config_path.write_text(config(s.admin.rsplit(":", 1)[1]))
    s.signal(signal.SIGHUP)
    wait_until(lambda: "is not on loopback and has no token" in s.stderr(),
               what="the refused reload")
    assert requests.get(s.admin + "/v1/rules", timeout=5).status_code == 401
    assert requests.get(s.admin + "/v1/rules", headers=bearer(), timeout=5).status_code == 200
