"""The Envoy rate limit service end to end: a Python gRPC client (Debian's python3-grpcio, stubs
generated from proto/) calls envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit on a
real `sluice serve --grpc ... --rls-config ...`."""
import concurrent.futures
import subprocess
import time

import grpc
import pytest

from integration_support import free_port, sluice_binary

UINT32_MAX = 2**32 - 1
OK, OVER_LIMIT = 1, 2  # RateLimitResponse.Code
SECOND, DAY = 1, 4     # RateLimit.Unit


@pytest.fixture(scope="module", autouse=True)
def away_from_midnight():
    """The day limits below count in UTC days: do not start a few seconds before one ends."""
    left = 86400 - time.time() % 86400
    if left < 30:
        time.sleep(left + 1)


def test_ok_turns_over_limit_after_requests_per_unit(ask):
    for remaining in (2, 1, 0):
        r = ask([[("remote_address", "192.0.2.1")]])
        assert r.overall_code == OK
        (s,) = r.statuses
        assert s.code == OK
        assert s.limit_remaining == remaining
        assert s.current_limit.requests_per_unit == 3
        assert s.current_limit.unit == DAY
        # Fixed windows aligned to UTC days, as envoyproxy/ratelimit's: whole seconds left.
        assert 0 < s.duration_until_reset.seconds <= 86400
        assert abs(s.duration_until_reset.seconds - (86400 - int(time.time()) % 86400)) <= 2
    r = ask([[("remote_address", "192.0.2.1")]])
    assert r.overall_code == OVER_LIMIT
    assert r.statuses[0].code == OVER_LIMIT
    assert r.statuses[0].limit_remaining == 0
    # Every address has its own counter; other domains are separate.
    assert ask([[("remote_address", "192.0.2.2")]]).overall_code == OK
    assert ask([[("remote_address", "192.0.2.1")]], domain="other").overall_code == OK


def test_key_and_value_beat_the_key_alone(ask):
    r = ask([[("remote_address", "10.0.0.1")]])
    assert r.overall_code == OK
    assert r.statuses[0].current_limit.requests_per_unit == 1
    assert r.statuses[0].current_limit.name == "tight"
    assert ask([[("remote_address", "10.0.0.1")]]).overall_code == OVER_LIMIT


def test_per_descriptor_statuses(ask):
    ask([[("remote_address", "10.0.0.1")]])  # used up by now in any order of tests
    r = ask([[("remote_address", "10.0.0.1")],
             [("path", "/health")],
             [("path", "/anything")],
             [("remote_address", "192.0.2.50")]])
    assert r.overall_code == OVER_LIMIT
    codes = [s.code for s in r.statuses]
    assert codes == [OVER_LIMIT, OK, OK, OK]
    unlimited, no_limit, own = r.statuses[1], r.statuses[2], r.statuses[3]
    assert unlimited.limit_remaining == UINT32_MAX and not unlimited.HasField("current_limit")
    assert not no_limit.HasField("current_limit") and no_limit.limit_remaining == 0
    assert own.current_limit.requests_per_unit == 3
    # The refused request was charged to none of its limits (Sluice: all or none).
    assert ask([[("remote_address", "192.0.2.50")]]).statuses[0].limit_remaining == 2


def test_nested_descriptors(ask):
    post = [("client", "acme"), ("path", "/orders"), ("method", "POST")]
    path = [("client", "acme"), ("path", "/orders")]
    assert ask([post]).overall_code == OK
    assert ask([post]).overall_code == OVER_LIMIT
    r = ask([path])  # its own counter, one level up
    assert r.overall_code == OK
    assert r.statuses[0].current_limit.name == "acme-path"
    assert r.statuses[0].limit_remaining == 1
    # A level without a rate_limit, a deeper request than the config, another client: no limit.
    for entries in ([("client", "acme")],
                    [("client", "acme"), ("path", "/orders"), ("method", "GET")],
                    [("client", "other"), ("path", "/orders")]):
        r = ask([entries])
        assert r.overall_code == OK and not r.statuses[0].HasField("current_limit"), entries


def test_unlimited(ask):
    for _ in range(5):
        r = ask([[("path", "/health")]], hits=1000)
        assert r.overall_code == OK
        assert r.statuses[0].code == OK
        assert r.statuses[0].limit_remaining == UINT32_MAX


def test_shadow_mode_reports_but_never_refuses(ask):
    assert ask([[("shadow", "s1")]]).statuses[0].limit_remaining == 0
    for _ in range(3):
        r = ask([[("shadow", "s1")]])
        assert r.overall_code == OK
        (s,) = r.statuses
        assert s.code == OK
        assert s.current_limit.requests_per_unit == 1
        assert s.limit_remaining == 0


def test_hits_addend_is_the_cost(ask):
    assert ask([[("remote_address", "192.0.2.60")]], hits=0).statuses[0].limit_remaining == 2
    assert ask([[("remote_address", "192.0.2.60")]], hits=2).statuses[0].limit_remaining == 0
    r = ask([[("remote_address", "192.0.2.61")]], hits=4)  # more than the limit holds
    assert r.overall_code == OVER_LIMIT
    assert r.statuses[0].limit_remaining == 3  # a refused request counts nothing


def test_per_second_windows_reset(ask):
    for attempt in range(5):
        # Start just after a second begins so the three calls share one window.
        time.sleep(1 - time.time() % 1 + 0.01)
        key = [("per_second", f"try{attempt}")]
        codes = [ask([key]).overall_code for _ in range(3)]
        if time.time() % 1 < 0.9:
            break
    assert codes == [OK, OK, OVER_LIMIT]
    time.sleep(1 - time.time() % 1 + 0.01)
    r = ask([key])
    assert r.overall_code == OK
    assert r.statuses[0].duration_until_reset.seconds == 1


def test_unknown_domain_is_ok_without_limits(ask):
    r = ask([[("remote_address", "192.0.2.1")], [("x", "y")]], domain="nobody")
    assert r.overall_code == OK
    assert [s.code for s in r.statuses] == [OK, OK]
    assert not any(s.HasField("current_limit") for s in r.statuses)


def test_client_override(ask):
    r = ask([[("anything", "o1")]], overrides=[(1, DAY)])
    assert r.overall_code == OK
    assert r.statuses[0].current_limit.requests_per_unit == 1
    assert ask([[("anything", "o1")]], overrides=[(1, DAY)]).overall_code == OVER_LIMIT


def test_concurrent_calls_count_exactly(ask):
    def one(_):
        return ask([[("bulk", "shared")]]).overall_code

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(one, range(200)))
    assert codes.count(OK) == 100
    assert codes.count(OVER_LIMIT) == 100


def test_bad_requests_get_errors_and_the_server_lives(ask, channel, sluice):
    with pytest.raises(grpc.RpcError) as e:
        ask([[("remote_address", "192.0.2.1")]], domain="")
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert e.value.details() == "rate limit domain must not be empty"
    with pytest.raises(grpc.RpcError) as e:
        ask([])
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert e.value.details() == "rate limit descriptor list must not be empty"
    with pytest.raises(grpc.RpcError) as e:
        ask([[("anything", "o2")]], overrides=[(5, 9)])
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    # Empty entries, empty keys, many descriptors, long values: answered, not crashed.
    r = ask([[], [("", "")], [("remote_address", "")]] + [[("k", "v" * 1000)]] * 2000)
    assert r.overall_code == OK and len(r.statuses) == 2003
    # Bytes that are no protobuf at all.
    raw = channel.unary_unary("/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit")
    with pytest.raises(grpc.RpcError) as e:
        raw(b"\xff\xff\xff\xff\x0f", timeout=10)
    assert e.value.code() != grpc.StatusCode.OK
    assert sluice.alive()
    assert ask([[("remote_address", "192.0.2.99")]]).overall_code == OK


# --- The wire format, checked against Envoy's field numbers without our .proto files --------

def _varint(n):
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def _ld(num, payload):
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def _vi(num, n):
    return _varint(num << 3) + _varint(n)


def _fields(buf):
    """{field number: [values]}: ints for varints, bytes for length-delimited fields."""
    out, i = {}, 0

    def read_varint():
        nonlocal i
        n, shift = 0, 0
        while True:
            b = buf[i]
            i += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return n

    while i < len(buf):
        key = read_varint()
        num, wire = key >> 3, key & 7
        if wire == 0:
            value = read_varint()
        elif wire == 2:
            n = read_varint()
            value, i = buf[i:i + n], i + n
        else:
            raise AssertionError(f"unexpected wire type {wire}")
        out.setdefault(num, []).append(value)
    return out


def test_wire_format_matches_envoys_field_numbers(channel):
    # RateLimitRequest{domain=1, descriptors=2{entries=1{key=1, value=2}}, hits_addend=3}
    entry = _ld(1, b"remote_address") + _ld(2, b"192.0.2.77")
    request = _ld(1, b"edge") + _ld(2, _ld(1, entry)) + _vi(3, 1)
    call = channel.unary_unary("/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit")
    response = _fields(call(request, timeout=10))
    assert response[1] == [OK]                       # overall_code
    (status,) = [_fields(s) for s in response[2]]    # statuses
    assert status[1] == [OK]                         # code
    limit = _fields(status[2][0])                    # current_limit
    assert limit[1] == [3] and limit[2] == [DAY]     # requests_per_unit, unit
    assert status[3] == [2]                          # limit_remaining
    reset = _fields(status[4][0])                    # duration_until_reset (Duration.seconds=1)
    assert 0 < reset[1][0] <= 86400


# --- Configuration errors and flags ----------------------------------------------------------

def _serve(tmp_path, *args, config_text=None):
    cmd = [sluice_binary(), "serve", "--admin", f"127.0.0.1:{free_port()}", *args]
    if config_text is not None:
        path = tmp_path / "rls.yaml"
        path.write_text(config_text)
        cmd += ["--rls-config", str(path)]
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=20)


def test_bad_config_exits_2_naming_file_and_line(tmp_path):
    bad = ("domain: edge\n"
           "descriptors:\n"
           "  - key: a\n"
           "    rate_limit: {unit: fortnight, requests_per_unit: 1}\n"
           "  - key: b\n"
           "    rate_limit: {unit: second, requests_per_unit: 1, algorithm: queue}\n")
    r = _serve(tmp_path, "--grpc", f"127.0.0.1:{free_port()}", config_text=bad)
    assert r.returncode == 2, r.stderr
    path = str(tmp_path / "rls.yaml")
    assert (f"{path}:4: domain 'edge': descriptor 'a': field 'rate_limit.unit': 'fortnight' is "
            "not one of second, minute, hour, day") in r.stderr
    assert (f"{path}:6: domain 'edge': descriptor 'b': field 'rate_limit.algorithm': algorithm "
            "'queue' cannot answer") in r.stderr


def test_rls_config_needs_grpc(tmp_path):
    r = _serve(tmp_path, config_text="domain: edge\n")
    assert r.returncode == 2
    assert "--rls-config needs --grpc" in r.stderr
