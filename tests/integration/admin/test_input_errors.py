"""Bad input on the admin API (hardening defect 9): bytes that are not UTF-8 get 400 naming the
field, never a 500; every reply is valid JSON even when it quotes such bytes; a bad rule name in
the path is `field: name`; refusals carry the documented `errors` list; and a client that sends
its request slowly is cut off, while other clients are served."""
import json
import socket
import threading
import time

import requests

RULE = b'{"limit": "gcra:rate=1/s,burst=1", "key": "client_ip"'


def put(sluice, name, body):
    return requests.put(sluice.admin + "/v1/rules/" + name, data=body, timeout=5)


def strict_json(response):
    """The reply parsed as UTF-8 JSON, as a strict client (Python's json) reads it."""
    return json.loads(response.content.decode("utf-8"))


def test_bytes_that_are_not_utf8_in_a_rule_field_get_400_naming_the_field(sluice):
    for field, body in [("body", RULE + b', "body": "\xff\xfe"}'),
                        ("key", b'{"limit": "gcra:rate=1/s,burst=1", "key": "header:X\xff"}'),
                        ("limit", b'{"limit": "gcra:rate=1/s,burst=\xc0\xaf", "key": "a"}')]:
        r = put(sluice, "new-rule", body)
        assert r.status_code == 400, (field, r.status_code, r.content)
        reply = strict_json(r)
        assert reply["field"] == field
        assert "is not valid UTF-8" in reply["error"], reply
        assert reply["errors"] and reply["errors"][0] == reply["error"]
    assert sluice.rule("new-rule").status_code == 404


def test_a_rule_name_that_is_not_utf8_gets_400_naming_name_on_every_method(sluice):
    for method in ("GET", "PUT", "DELETE"):
        r = requests.request(method, sluice.admin + "/v1/rules/sp%FFre", data=RULE + b"}",
                             timeout=5)
        assert r.status_code == 400, (method, r.content)
        reply = strict_json(r)
        assert reply["field"] == "name"
        assert reply["error"] == ("rule name 'sp\\xFFre' may hold only letters, digits, '_', '-' "
                                  "and '.' (it appears in admin URLs and metric labels)")
        assert reply["errors"] == [reply["error"]]


def test_a_bad_rule_name_in_the_path_is_reported_as_field_name(sluice):
    r = put(sluice, "a%20b", RULE + b"}")
    assert r.status_code == 400
    assert r.json()["field"] == "name"
    assert r.json()["errors"] == [r.json()["error"]]
    assert "'a b'" in r.json()["error"]


def test_validate_escapes_the_bytes_it_quotes_so_its_reply_is_valid_json(sluice):
    r = sluice.validate(b"rules:\n  \xff: {limit: x, key: client_ip}\n")
    assert r.status_code == 200
    reply = strict_json(r)
    assert reply["valid"] is False
    assert any(e.startswith("body:2: rule '\\xFF':") for e in reply["errors"]), reply
    r = sluice.validate(b'{"limit": "gcra:rate=1/s,burst=1", "key": "client_ip", "body": "\xff"}')
    reply = strict_json(r)
    assert reply["kind"] == "rule" and reply["valid"] is False
    assert "field 'body': is not valid UTF-8 (byte 0xFF at offset 0)" in reply["errors"][0]


def test_an_empty_put_body_gets_400_with_the_errors_list(sluice):
    r = put(sluice, "spare", b"")
    assert r.status_code == 400
    assert r.json() == {"error": "the body must be a rule (JSON or YAML)", "field": "body",
                        "errors": ["the body must be a rule (JSON or YAML)"]}
    assert sluice.rule("spare").status_code == 200


def test_a_check_whose_key_is_not_utf8_gets_400_naming_key(sluice):
    r = requests.post(sluice.admin + "/v1/check", data=b'{"rule": "spare", "key": "a\xff"}',
                      timeout=5)
    assert r.status_code == 400
    assert strict_json(r)["field"] == "key"
    r = requests.post(sluice.admin + "/v1/check",
                      data=b'{"checks": [{"rule": "spare", "key": "ok"}, {"limit": "\xff"}]}',
                      timeout=5)
    assert r.status_code == 400 and strict_json(r)["field"] == "limit"
    # The same bytes, percent-encoded in the query, are a key like any other.
    assert requests.get(sluice.admin + "/v1/check/spare?key=a%FF", timeout=5).status_code == 204


def closed_after(sluice, head, trickle, results, name):
    """Opens a connection, sends `head`, then one byte of `trickle` per second; records how long
    the server took to close it."""
    host, port = sluice.admin.split("//")[1].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(head)
        started = time.monotonic()
        try:
            for byte in trickle:
                time.sleep(1)
                s.sendall(bytes([byte]))
            while s.recv(1024):
                pass
        except OSError:
            pass
        results[name] = time.monotonic() - started


def test_a_request_head_or_body_sent_too_slowly_is_cut_off_and_others_are_served(sluice):
    results = {}
    head = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
    body = b"PUT /v1/rules/spare HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{"
    threads = [threading.Thread(target=closed_after, args=(sluice, head, b"a" * 40, results,
                                                           "head")),
               threading.Thread(target=closed_after, args=(sluice, body, b" " * 40, results,
                                                           "body"))]
    for t in threads:
        t.start()
    time.sleep(2)
    assert requests.get(sluice.admin + "/healthz", timeout=2).status_code == 200
    for t in threads:
        t.join()
    # 10 s for the head from its first byte, 10 s for the body after the head.
    assert 8 < results["head"] < 14, results
    assert 8 < results["body"] < 14, results
    assert sluice.rule("spare").json()["limit"] == "token-bucket:rate=10/s,burst=5"
