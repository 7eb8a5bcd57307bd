"""The gateway's access log as docs/logging.md defines it, read from a real sluice in front of a
real upstream: each line names the route, the rule that decided and its key (raw, or hashed with
`log_key: hash`), the outcome, the delay, the upstream and its time, and the request id, which
is the client's X-Request-Id or one made and sent on (upstream and back to the client); the JSON
format parses line by line with the documented fields; no path or key can forge a column or a
line."""
import ctypes
import ctypes.util
import json
import os
import re
import signal
import socket

import requests

from conftest import accepts_connections, gateway_config
from integration_support import free_port, wait_until

DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "docs",
                    "logging.md")


def documented_columns():
    """The rows of docs/logging.md's column table: [(text column, JSON field)], in order."""
    text = open(DOCS, encoding="utf-8").read()
    table = text.split("<!-- columns -->")[1].split("<!-- /columns -->")[0]
    rows = []
    for line in table.splitlines():
        m = re.match(r"\| (\d+) \| `(\w+)` \|", line)
        if m:
            rows.append((int(m.group(1)), m.group(2)))
    assert [n for n, _ in rows] == list(range(1, len(rows) + 1)), rows
    return [name for _, name in rows]


def columns(line):
    fields = line.split(" ")
    names = documented_columns()
    assert len(fields) == len(names), line
    return dict(zip(names, fields))


def lines_of(s, n):
    return wait_until(lambda: len(s.access_lines()) >= n and s.access_lines(),
                      what=f"{n} access-log lines")


def per_user(extra_rule="", access_log=None):
    rules = ("  per-user:\n    limit: \"fixed-window:limit=1,window=1h\"\n"
             "    key: \"header:X-User\"\n" + extra_rule)
    text = gateway_config(["{upstream}"], rules=rules, route_rules="[per-user]")
    if access_log is not None:
        text = text.replace('access_log: "{access_log}"\n', access_log)
    return text


def start(sluice, up, config):
    return sluice(config.replace("{upstream}", up.address))


def xxh3_low64_hex(key):
    """What `log_key: hash` writes: the low 64 bits of the key's XXH3-128, in 16 hex digits
    (libxxhash, the library sluice hashes keys with)."""
    class XXH128(ctypes.Structure):
        _fields_ = [("low64", ctypes.c_uint64), ("high64", ctypes.c_uint64)]
    lib = ctypes.CDLL(ctypes.util.find_library("xxhash") or "libxxhash.so.0")
    lib.XXH3_128bits.restype = XXH128
    lib.XXH3_128bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    data = key.encode()
    return f"{lib.XXH3_128bits(data, len(data)).low64:016x}"


def test_a_429_line_names_the_route_the_rule_and_the_key(sluice, upstreams):
    up = upstreams(1)
    s = start(sluice, up, per_user())
    h = {"X-User": "alice"}
    codes = [requests.get(s.url + "/api/x", headers=h, timeout=5).status_code for _ in range(2)]
    assert codes == [200, 429]
    first, second = (columns(line) for line in lines_of(s, 2))
    assert (second["status"], second["route"], second["outcome"], second["rule"],
            second["key"]) == ("429", "all", "reject", "per-user", "alice")
    assert (second["upstream"], second["upstream_ms"]) == ("-", "-")
    # The admitted one: the same rule (the only one, so the closest to its limit), forwarded.
    assert (first["status"], first["outcome"], first["rule"], first["key"], first["upstream"]) \
        == ("200", "forward", "per-user", "alice", "app")
    assert float(first["upstream_ms"]) >= 0 and first["delay_ms"] == "0.0"


def test_log_key_hash_hides_the_raw_key_and_the_same_key_hashes_the_same(sluice, upstreams):
    up = upstreams(1)
    config = per_user(extra_rule="    log_key: hash\n")
    s = start(sluice, up, config)
    for user in ["alice", "alice", "bob"]:
        requests.get(s.url + "/", headers={"X-User": user}, timeout=5)
    keys = [columns(line)["key"] for line in lines_of(s, 3)]
    assert keys[0] == keys[1] != keys[2]
    assert keys == [xxh3_low64_hex("alice")] * 2 + [xxh3_low64_hex("bob")]
    assert "alice" not in s.access_log.read_text()
    # Another instance (a restart) writes the same hash for the same key.
    s.stop()
    again = start(sluice, up, config)
    requests.get(again.url + "/", headers={"X-User": "alice"}, timeout=5)
    assert columns(lines_of(again, 4)[3])["key"] == keys[0]


def test_log_key_set_through_the_admin_api_is_shown_kept_and_applied(sluice, upstreams, tmp_path):
    up = upstreams(1)
    s = start(sluice, up, per_user())
    rule = {"limit": "fixed-window:limit=1,window=1h", "key": "header:X-User", "log_key": "hash"}
    wait_until(lambda: accepts_connections(s.admin_port), what="the admin listener")
    r = requests.put(s.admin + "/v1/rules/per-user", json=rule, timeout=5)
    assert r.status_code == 200, r.text
    assert r.json()["log_key"] == "hash"
    assert requests.get(s.admin + "/v1/rules/per-user", timeout=5).json()["log_key"] == "hash"
    assert "log_key: hash" in (tmp_path / "sluice.yaml").read_text()  # written back
    requests.get(s.url + "/", headers={"X-User": "dave"}, timeout=5)
    assert columns(lines_of(s, 1)[0])["key"] == xxh3_low64_hex("dave")
    r = requests.put(s.admin + "/v1/rules/per-user", json=dict(rule, log_key="md5"), timeout=5)
    assert r.status_code == 400 and "log_key" in r.text


def test_a_given_request_id_is_logged_and_forwarded_and_answered(sluice, upstreams):
    up = upstreams(1)
    s = start(sluice, up, per_user())
    r = requests.get(s.url + "/headers", headers={"X-User": "a", "X-Request-Id": "req-7f3a:1"},
                     timeout=5)
    got = [v for k, v in json.loads(r.text) if k.lower() == "x-request-id"]
    assert got == ["req-7f3a:1"]
    assert r.headers["X-Request-Id"] == "req-7f3a:1"
    assert columns(lines_of(s, 1)[0])["request_id"] == "req-7f3a:1"
    # A refused request carries it back too.
    r = requests.get(s.url + "/", headers={"X-User": "a", "X-Request-Id": "req-2"}, timeout=5)
    assert r.status_code == 429 and r.headers["X-Request-Id"] == "req-2"
    assert columns(lines_of(s, 2)[1])["request_id"] == "req-2"


def test_a_missing_or_unusable_request_id_is_made_and_forwarded(sluice, upstreams):
    up = upstreams(1)
    s = start(sluice, up, per_user())
    made = []
    for given in [None, "x" * 129, 'has "quotes"']:
        h = {"X-User": str(len(made))}
        if given is not None:
            h["X-Request-Id"] = given
        r = requests.get(s.url + "/headers", headers=h, timeout=5)
        got = [v for k, v in json.loads(r.text) if k.lower() == "x-request-id"]
        assert len(got) == 1 and re.fullmatch(r"[0-9a-f]{32}", got[0]), got
        assert r.headers["X-Request-Id"] == got[0]
        made.append(got[0])
    assert len(set(made)) == 3
    assert [columns(line)["request_id"] for line in lines_of(s, 3)] == made


def test_a_delayed_request_logs_its_delay(sluice, upstreams):
    up = upstreams(1)
    rules = ("  paced:\n    limit: \"token-bucket:rate=2/s,burst=1\"\n    key: \"const:all\"\n"
             "    action: delay\n    max_wait: 2s\n")
    s = sluice(gateway_config([up.address], rules=rules, route_rules="[paced]"))
    for _ in range(2):
        assert requests.get(s.url + "/", timeout=5).status_code == 200
    first, second = (columns(line) for line in lines_of(s, 2))
    assert (first["outcome"], first["delay_ms"]) == ("forward", "0.0")
    # 2/s: the second, right behind the first, waits up to 500 ms for its token (less the time
    # the first took).
    assert second["outcome"] == "delay" and second["rule"] == "paced"
    assert second["key"] == "all"
    assert 100 <= float(second["delay_ms"]) <= 500, second


def test_a_forwarded_request_no_server_answered_names_the_upstream_without_a_time(sluice):
    s = sluice(gateway_config([f"127.0.0.1:{free_port()}"]))  # nothing listens there
    assert requests.get(s.url + "/", timeout=5).status_code == 502
    c = columns(lines_of(s, 1)[0])
    assert (c["status"], c["outcome"], c["upstream"], c["upstream_ms"]) == \
        ("502", "forward", "app", "-")


def test_json_lines_parse_and_have_the_documented_fields(sluice, upstreams, tmp_path):
    up = upstreams(1)
    log = tmp_path / "access.json"
    s = start(sluice, up, per_user(access_log=f'access_log: {{{{path: "{log}", format: json}}}}\n'))
    for _ in range(2):
        requests.get(s.url + "/p?q=1", headers={"X-User": "carol", "X-Request-Id": "j1"},
                     timeout=5)
    lines = wait_until(lambda: log.exists() and len(log.read_text().splitlines()) >= 2 and
                       log.read_text().splitlines(), what="two JSON lines")
    objects = [json.loads(line) for line in lines]
    for o in objects:
        assert list(o) == documented_columns()
    ok, refused = objects
    assert (ok["status"], ok["outcome"], ok["route"], ok["rule"], ok["key"], ok["upstream"],
            ok["request_id"], ok["target"], ok["client"]) == \
        (200, "forward", "all", "per-user", "carol", "app", "j1", "/p?q=1", "127.0.0.1")
    assert ok["upstream_ms"] >= 0 and ok["dry_run"] is None
    assert (refused["status"], refused["outcome"], refused["upstream"], refused["upstream_ms"]) \
        == (429, "reject", None, None)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", ok["time"])


def test_a_reload_that_changes_the_format_applies_to_the_next_line(sluice, upstreams, tmp_path):
    up = upstreams(1)
    s = start(sluice, up, per_user())
    requests.get(s.url + "/", headers={"X-User": "a"}, timeout=5)
    assert columns(lines_of(s, 1)[0])["key"] == "a"
    config = tmp_path / "sluice.yaml"
    text = config.read_text().replace(f'access_log: "{s.access_log}"',
                                      f'access_log: {{path: "{s.access_log}", format: json}}')
    config.write_text(text)
    s.proc.send_signal(signal.SIGHUP)

    def json_line():
        requests.get(s.url + "/", headers={"X-User": "b"}, timeout=5)
        last = s.access_lines()[-1]
        return last.startswith("{") and json.loads(last)

    assert wait_until(json_line, what="a JSON line after the reload")["key"] == "b"


def raw_get(port, target, user):
    """A request sent as these bytes (a target `requests` would have encoded)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: x\r\nX-User: " + user +
                  b"\r\nConnection: close\r\n\r\n")
        out = b""
        while chunk := c.recv(65536):
            out += chunk
        return out


HOSTILE_TARGET = b'/a"b\\c\xff?q=1%0d%0a'
HOSTILE_KEY = b'x 200 - "forged"\tz \xc3\xa9'


def test_a_hostile_path_or_key_cannot_break_a_text_line(sluice, upstreams):
    up = upstreams(1)
    s = start(sluice, up, per_user())
    for _ in range(2):
        out = raw_get(s.gateway_port, HOSTILE_TARGET, HOSTILE_KEY)
        assert out.startswith(b"HTTP/1.1 "), out
    lines = lines_of(s, 2)
    assert len(lines) == 2
    for line in lines:
        c = columns(line)  # exactly the documented columns, each on one line
        assert c["target"] == r"/a\x22b\x5cc\xff?q=1%0d%0a"
        assert c["key"] == r"x\x20200\x20-\x20\x22forged\x22\x09z\x20\xc3\xa9"
        assert c["route"] == "all"
    assert [columns(line)["status"] for line in lines] == ["200", "429"]


def test_a_hostile_path_or_key_stays_inside_its_json_string(sluice, upstreams, tmp_path):
    up = upstreams(1)
    log = tmp_path / "access.json"
    s = start(sluice, up, per_user(access_log=f'access_log: {{{{path: "{log}", format: json}}}}\n'))
    for _ in range(2):
        raw_get(s.gateway_port, HOSTILE_TARGET, HOSTILE_KEY)
    lines = wait_until(lambda: log.exists() and len(log.read_bytes().splitlines()) >= 2 and
                       log.read_bytes().splitlines(), what="two JSON lines")
    assert len(lines) == 2
    for line in lines:
        o = json.loads(line.decode("utf-8"))
        assert o["target"] == r'/a"b\c\xff?q=1%0d%0a'  # not UTF-8: \xff written as text
        assert o["key"] == 'x 200 - "forged"\tz é'  # UTF-8: kept
    assert [json.loads(line)["status"] for line in lines] == [200, 429]
