"""One request, one spelling: routes, `path` keys and the upstream see the normalized path and
the URI's host, so no spelling of a path or host walks round a route's limits (hardening
issue, items 1 and 2; nginx 1.22 limits or refuses each of these)."""
import socket

from conftest import raw_request

LOGIN_CONFIG = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
workers: 1
upstreams:
  app: {{servers: [%s]}}
routes:
  - name: login
    match: {{path_exact: /login}}
    upstream: app
    rules: [login-5]
  - name: app
    match: {{path_prefix: /app/}}
    upstream: app
%s
rules:
  login-5: {{limit: "fixed-window:limit=5,window=1m", key: client_ip}}
"""


def status_of(port, target, host=b"public.example", version=b"HTTP/1.1", extra=b""):
    head = b"GET " + target + b" " + version + b"\r\n"
    if host is not None:
        head += b"Host: " + host + b"\r\n"
    out = raw_request(port, head + extra + b"Connection: close\r\n\r\n")
    assert out.startswith(b"HTTP/1."), out
    return int(out.split(b" ", 2)[1])


def test_no_spelling_of_a_path_walks_round_its_limit(sluice, upstreams):
    up = upstreams(1)
    s = sluice(LOGIN_CONFIG % (up.address, ""))
    spellings = [b"/login", b"/./login", b"//login", b"/x/../login", b"/%6cogin", b"/%2e/login",
                 b"/%2flogin", b"/app/%2e%2e/login", b"/%6C%6F%67%69%6E"]
    admitted = {}
    for spelling in spellings:
        codes = [status_of(s.gateway_port, spelling) for _ in range(20)]
        admitted[spelling] = codes.count(200)
        assert set(codes) <= {200, 429}, (spelling, codes)
    # 5 per minute for the client, whichever way it spells /login.
    assert sum(admitted.values()) == 5, admitted
    assert admitted[b"/login"] == 5
    # The upstream was asked for /login and nothing else.
    assert [path for path, _ in up.seen] == ["/login"] * 5


def test_dot_segments_cannot_climb_out_of_a_prefix_route(sluice, upstreams):
    up = upstreams(1)
    s = sluice(LOGIN_CONFIG % (up.address, ""))
    # /app/../v1/rules is /v1/rules: no route has it.
    assert status_of(s.gateway_port, b"/app/../v1/rules") == 404
    assert status_of(s.gateway_port, b"/app/x/%2e%2e/%2e%2e/v1/rules") == 404
    # Inside the prefix it is served, under its normal name.
    assert status_of(s.gateway_port, b"/app/a/../b/./c?next=/../x") == 200
    assert up.seen == [("/app/b/c?next=/../x", "public.example")]


def test_what_cannot_be_normalized_is_refused_and_never_forwarded(sluice, upstreams):
    up = upstreams(1)
    s = sluice(LOGIN_CONFIG % (up.address, ""))
    for target in [b"/../login", b"/app/../../login", b"/%2e%2e/login", b"/app/%zz",
                   b"/app/%4", b"*", b"public.example:80", b"ftp://public.example/app/x",
                   b"http://user@public.example/app/x", b"http:///app/x"]:
        assert status_of(s.gateway_port, target) == 400, target
    assert up.requests == 0


def test_escaped_slashes_can_be_refused(sluice, upstreams):
    up = upstreams(1)
    config = LOGIN_CONFIG % (up.address, "") + "http: {{escaped_slashes: reject}}\n"
    s = sluice(config)
    assert status_of(s.gateway_port, b"/app/a%2Fb") == 400
    assert status_of(s.gateway_port, b"/app/a/b") == 200
    assert up.seen == [("/app/a/b", "public.example")]


HOSTS_CONFIG = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
workers: 1
upstreams:
  public: {{servers: [%s]}}
  internal: {{servers: [%s]}}
routes:
  - name: public
    match: {{host: public.example}}
    upstream: public
    rules: [public-3]
%s
rules:
  public-3: {{limit: "fixed-window:limit=3,window=1m", key: client_ip}}
"""

INTERNAL_ROUTE = """\
  - name: internal
    match: {{host: internal.example}}
    upstream: internal
"""


def test_an_absolute_form_target_is_routed_by_its_own_host(sluice, upstreams):
    public, internal = upstreams(2)
    s = sluice(HOSTS_CONFIG % (public.address, internal.address, ""))
    # No route serves internal.example, whatever Host claims: nginx answers 403, sluice 404.
    assert status_of(s.gateway_port, b"http://internal.example/secret") == 404
    assert public.requests == 0 and internal.requests == 0


def test_an_absolute_form_target_is_forwarded_in_origin_form(sluice, upstreams):
    public, internal = upstreams(2)
    s = sluice(HOSTS_CONFIG % (public.address, internal.address, INTERNAL_ROUTE))
    assert status_of(s.gateway_port, b"http://internal.example/secret/./x?a=1") == 200
    assert internal.seen == [("/secret/x?a=1", "internal.example")]
    assert status_of(s.gateway_port, b"HTTP://Public.Example:8080") == 200
    assert public.seen == [("/", "Public.Example:8080")]


def test_one_host_in_any_spelling_shares_one_limit(sluice, upstreams):
    public, internal = upstreams(2)
    s = sluice(HOSTS_CONFIG % (public.address, internal.address, ""))
    codes = [status_of(s.gateway_port, b"/", host=h)
             for h in [b"public.example", b"PUBLIC.example", b"public.example.",
                       b"Public.Example.:8080", b"public.example:1"]]
    assert codes == [200, 200, 200, 429, 429]
    codes = [status_of(s.gateway_port, b"http://Public.Example./x", host=b"other.example")]
    assert codes == [429]


def test_host_fields_must_be_one_valid_host(sluice, upstreams):
    public, internal = upstreams(2)
    s = sluice(HOSTS_CONFIG % (public.address, internal.address, INTERNAL_ROUTE))
    port = s.gateway_port
    assert status_of(port, b"/", host=None) == 400  # HTTP/1.1 without Host
    assert status_of(port, b"/", extra=b"Host: internal.example\r\n") == 400  # two
    assert status_of(port, b"/", host=b"public.example/../x") == 400
    assert status_of(port, b"/", host=b"user@internal.example") == 400
    assert public.requests == 0 and internal.requests == 0
    # HTTP/1.0 may leave Host out; an absolute-form target on 1.1 carries its own host.
    assert status_of(port, b"/", host=None, version=b"HTTP/1.0") == 404
    assert status_of(port, b"http://internal.example/", host=None) == 200
    assert internal.seen == [("/", "internal.example")]


def test_an_empty_or_unparsable_host_is_400(sluice, upstreams):
    public, internal = upstreams(2)
    s = sluice(HOSTS_CONFIG % (public.address, internal.address, INTERNAL_ROUTE))
    port = s.gateway_port
    # nginx 1.22 answers each of these 400 ("client sent invalid host header"); sluice used to
    # route an empty Host as no host at all.
    for host in [b"", b"   ", b":80", b".", b".:80"]:
        assert status_of(port, b"/", host=host) == 400, host
    assert status_of(port, b"/", host=b"", version=b"HTTP/1.0") == 400
    # An absolute-form target does not excuse an empty Host field (nginx: 400).
    assert status_of(port, b"http://internal.example/", host=b"") == 400
    # Brackets hold an IPv6 address and nothing else (RFC 3986 §3.2.2). nginx passes these
    # on as they are (200 behind a catch-all); sluice refuses them.
    for host in [b"[1.2.3.4]", b"[:::::]", b"[v1.x]", b"[fe80::1%25eth0]", b"[::1"]:
        assert status_of(port, b"/", host=host) == 400, host
    assert public.requests == 0 and internal.requests == 0
    # Hosts that are hosts still route (no route has these names: 404, as before).
    for host in [b"[::1]", b"[2001:db8::1]:8080", b"192.0.2.1:80", b"h:"]:
        assert status_of(port, b"/", host=host) == 404, host
    assert status_of(port, b"/", host=b"Internal.Example:8080") == 200
    assert internal.seen == [("/", "Internal.Example:8080")]


def test_route_paths_must_be_written_in_normal_form(sluice, tmp_path):
    import subprocess
    from integration_support import sluice_binary
    path = tmp_path / "bad.yaml"
    path.write_text("routes:\n  - name: a\n    match: {path_prefix: /app/./x/}\n"
                    "    respond: {status: 200}\n")
    out = subprocess.run([sluice_binary(), "check-config", str(path)], capture_output=True,
                         text=True)
    assert out.returncode == 2
    assert f"{path}:3:" in out.stderr and "'/app/x/'" in out.stderr, out.stderr
