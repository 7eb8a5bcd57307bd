"""The admin listener's HTTP: keep-alive, JSON errors for every failure, capped bodies, and a
server that survives bad requests."""
import json

import requests


def raw(sluice, data, read_all=True):
    return sluice.raw(data, read_all)


def test_keep_alive_serves_several_requests_on_one_connection(sluice):
    out = raw(sluice, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                      b"GET /v1/rules/spare HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                      b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    assert out.count(b"HTTP/1.1 200 OK\r\n") == 3, out


def test_unknown_path_and_wrong_method_are_json_errors(sluice):
    r = requests.get(sluice.admin + "/v2/nothing", timeout=5)
    assert r.status_code == 404 and "error" in r.json()
    r = requests.post(sluice.admin + "/v1/rules/spare", data="{}", timeout=5)
    assert r.status_code == 405 and "error" in r.json()
    assert set(r.headers["Allow"].split(", ")) == {"GET", "PUT", "DELETE"}
    r = requests.get(sluice.admin + "/v1/rules:validate", timeout=5)
    assert r.status_code == 405 and r.headers["Allow"] == "POST"


def test_percent_encoded_names(sluice):
    assert requests.get(sluice.admin + "/v1/rules/sp%61re", timeout=5).status_code == 200
    out = raw(sluice, b"GET /v1/rules/sp%zzre HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    head, _, body = out.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 ") and json.loads(body)["field"] == "name", out


def test_oversized_body_is_413(sluice):
    r = requests.put(sluice.admin + "/v1/rules/spare", data=b"x" * (2 << 20), timeout=10)
    assert r.status_code == 413
    assert r.json()["field"] == "body"
    # Chunked, so the size is known only while reading.
    r = requests.put(sluice.admin + "/v1/rules/spare",
                     data=iter([b"y" * (600 << 10), b"z" * (600 << 10)]), timeout=10)
    assert r.status_code == 413
    assert sluice.rule("spare").status_code == 200


def test_malformed_requests_get_400_and_the_server_lives_on(sluice):
    for request in [b"GARBAGE\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n",
                    b"PUT /v1/rules/x HTTP/1.1\r\nContent-Length: nope\r\n\r\n"]:
        out = raw(sluice, request)
        head, _, body = out.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400 "), out
        assert "error" in json.loads(body)
    out = raw(sluice, b"GET /healthz HTTP/1.1\r\nX: " + b"a" * (64 << 10) + b"\r\n\r\n")
    assert out.startswith(b"HTTP/1.1 431 "), out[:100]
    assert requests.get(sluice.admin + "/healthz", timeout=5).status_code == 200


def test_a_client_that_goes_away_mid_request_harms_nothing(sluice):
    raw(sluice, b"PUT /v1/rules/spare HTTP/1.1\r\nContent-Length: 100\r\n\r\n{\"li",
        read_all=False)
    assert requests.get(sluice.admin + "/healthz", timeout=5).status_code == 200
    assert sluice.rule("spare").json()["limit"] == "token-bucket:rate=10/s,burst=5"
