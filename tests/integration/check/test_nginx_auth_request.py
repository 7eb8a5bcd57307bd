"""A real Debian nginx with auth_request asking sluice's GET /v1/check/{rule} before it proxies
to an upstream (the recipe of docs/admin-api.md): each client's 200s turn into 429s when its
own budget is spent, denied requests never reach the upstream, and a sluice that cannot answer
is not mistaken for a denial."""
import http.client

import requests


def get_from(nginx, source_ip, path, method="GET", body=None):
    """One request to nginx from `source_ip` (any 127.0.0.0/8 address works on loopback)."""
    conn = http.client.HTTPConnection("127.0.0.1", nginx.port, timeout=5,
                                      source_address=(source_ip, 0))
    try:
        conn.request(method, path, body=body)
        r = conn.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        conn.close()


def test_each_client_address_has_its_own_budget(stack):
    _, nginx, upstream = stack
    first = [get_from(nginx, "127.0.0.2", "/ip/page") for _ in range(8)]
    assert [status for status, _, _ in first] == [200] * 5 + [429] * 3
    status, headers, body = first[0]
    assert body == b"hello GET /ip/page\n"
    assert headers["RateLimit"].startswith('"per-client";a=4;w=')
    assert headers["RateLimit-Policy"] == '"per-client";q=5;w=3600'
    status, headers, body = first[-1]
    assert body == b"Too Many Requests\n"
    assert int(headers["Retry-After"]) >= 1
    assert headers["RateLimit"].startswith('"per-client";a=0;w=')
    # Another client address is untouched by the first one's spending.
    second = [get_from(nginx, "127.0.0.3", "/ip/page")[0] for _ in range(6)]
    assert second == [200] * 5 + [429]
    # Denied requests were answered by nginx alone.
    assert upstream.hits == {"127.0.0.2": 5, "127.0.0.3": 5}


def test_each_user_header_has_its_own_budget_whatever_the_method(stack):
    _, nginx, upstream = stack
    with requests.Session() as s:
        def status(user, method="GET"):
            headers = {"X-User": user} if user else {}
            return s.request(method, nginx.url + "/user/x", headers=headers, data=b"body",
                             timeout=5).status_code

        # The subrequest is a GET whatever the client's method (proxy_method GET).
        assert [status("alice", "POST"), status("alice", "PUT"), status("alice")] == [200] * 3
        assert [status("alice", "POST"), status("alice")] == [429, 429]
        assert [status("bob") for _ in range(4)] == [200, 200, 200, 429]
        # No X-User: the map falls back to the client address, a budget of its own.
        assert [status(None) for _ in range(4)] == [200, 200, 200, 429]
    assert upstream.hits == {"alice": 3, "bob": 3, "127.0.0.1": 3}


def test_upstream_errors_pass_through_untouched(stack):
    _, nginx, _ = stack
    r = requests.get(nginx.url + "/user/fail", headers={"X-User": "carol"}, timeout=5)
    assert r.status_code == 500 and r.text == "hello GET /user/fail\n"


def test_an_unreachable_sluice_is_not_a_denial(stack):
    sluice, nginx, upstream = stack
    sluice.stop()
    r = requests.get(nginx.url + "/user/x", headers={"X-User": "dave"}, timeout=5)
    assert r.status_code == 503 and r.text == "rate limiter unavailable\n"  # fail closed
    r = requests.get(nginx.url + "/open/x", headers={"X-User": "dave"}, timeout=5)
    assert r.status_code == 200 and r.text == "hello GET /open/x\n"  # fail open
    assert upstream.hits == {"dave": 1}
