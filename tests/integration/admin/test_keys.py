"""GET and DELETE /v1/rules/{name}/keys/{key} on rules kept in this process, and SLUICE.PEEK and
SLUICE.RESET over RESP: a key the gateway or /v1/check charged is seen without being charged,
and a reset gives its next request a full quota. A real `sluice serve` with a gateway, an
admin listener that needs a token, and a RESP listener; redis-cli as the RESP client."""
import http.client
import json
import re
import subprocess
import urllib.parse

import pytest
import requests

from integration_support import ServeProcess, free_port, wait_until  # on sys.path via conftest

TOKEN = "keys-test-token-0123456789abcdef"

CONFIG = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
admin_auth: {{token_file: {token_file}}}
write_back: false
routes:
  - name: api
    match: {{path_prefix: /}}
    respond: {{status: 200, body: "ok\\n"}}
    rules: [per-user, pair]
rules:
  per-user:
    limit: "gcra:rate=1/m,burst=2"
    key: "header:X-User"
  pair:
    limit: "fixed-window:limit=5,window=1h"
    key: ["header:X-Tenant", method]
    on_missing_key: skip
  conc:
    limit: "concurrency:limit=2"
    key: "header:X-User"
"""


class Serve(ServeProcess):
    def __init__(self, tmp_path):
        self.gateway_port, self.admin_port, self.resp_port = free_port(), free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.gateway_port}"
        self.admin = f"http://127.0.0.1:{self.admin_port}"
        token_file = tmp_path / "admin.token"
        token_file.write_text(TOKEN + "\n")
        path = tmp_path / "sluice.yaml"
        path.write_text(CONFIG.format(gateway=self.gateway_port, admin=self.admin_port,
                                      token_file=token_file))
        super().__init__(tmp_path, ["--config", str(path), "--resp",
                                    f"127.0.0.1:{self.resp_port}"],
                         r"resp listening on \S+:%d\b" % self.resp_port)
        # Each listener says so when it is bound; a slow start (a sanitizer build) may bring
        # the RESP listener up before the admin one.
        wait_until(lambda: re.search(r"admin listening on \S+:%d\b" % self.admin_port,
                                     self.stderr()), timeout=10, what="the admin listener")

    def key(self, rule, key, method="GET", token=TOKEN):
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        path = f"/v1/rules/{rule}/keys/{urllib.parse.quote(key, safe='')}"
        return requests.request(method, self.admin + path, headers=headers, timeout=5)

    def cli(self, *args):
        out = subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(self.resp_port)]
                             + [str(a) for a in args], capture_output=True, text=True,
                             timeout=10, check=True)
        return out.stdout.split()


@pytest.fixture
def serve(tmp_path):
    s = Serve(tmp_path)
    yield s
    s.stop()


def test_a_key_spent_through_the_gateway_is_seen_uncharged_then_reset(serve):
    # gcra rate=1/m, burst=2: limit 3 at once, then one per 20 s... per 60 s.
    for _ in range(3):
        assert requests.get(serve.url + "/", headers={"X-User": "alice"}, timeout=5).ok
    assert requests.get(serve.url + "/", headers={"X-User": "alice"},
                        timeout=5).status_code == 429
    first = serve.key("per-user", "alice")
    assert first.status_code == 200
    body = first.json()
    assert body["seen"] is True and body["storage"] == "local"
    assert body["allowed"] is False
    assert body["remaining"] == 0 and body["limit"] == 3
    assert 50000 < body["retry_after_ms"] <= 60000  # 60 s less the time the calls took
    assert 170000 < body["reset_after_ms"] <= 180000
    second = serve.key("per-user", "alice").json()
    assert second["remaining"] == 0 and second["allowed"] is False
    assert second["retry_after_ms"] <= body["retry_after_ms"]  # only time moved

    reset = serve.key("per-user", "alice", "DELETE")
    assert reset.status_code == 200
    assert reset.json()["reset"] is True and reset.json()["seen"] is True
    assert reset.json()["remaining"] == 3
    assert requests.get(serve.url + "/", headers={"X-User": "alice"}, timeout=5).ok
    after = serve.key("per-user", "alice").json()
    assert after["remaining"] == 2 and after["seen"] is True


def test_a_key_never_seen_answers_its_full_quota(serve):
    body = serve.key("per-user", "nobody").json()
    assert body == {"rule": "per-user", "key": "nobody", "storage": "local", "seen": False,
                    "allowed": True, "remaining": 3, "limit": 3, "retry_after_ms": 0,
                    "reset_after_ms": 0, "delay_ms": 0}


def test_a_key_of_two_parts_is_named_by_its_joined_text(serve):
    for _ in range(2):
        requests.post(serve.url + "/", headers={"X-Tenant": "acme", "X-User": "t1"}, timeout=5)
    # key: [header:X-Tenant, method] -> "acme|POST", percent-encoded in the path.
    body = serve.key("pair", "acme|POST").json()
    assert body["seen"] is True and body["remaining"] == 3
    assert serve.key("pair", "acme|GET").json()["seen"] is False


def test_check_api_charges_are_seen_and_a_reset_admits_the_next_check(serve):
    auth = {"Authorization": f"Bearer {TOKEN}"}
    check = {"rule": "per-user", "key": "bob"}
    for _ in range(3):
        assert requests.post(serve.admin + "/v1/check", json=check, headers=auth,
                             timeout=5).json()["allowed"]
    assert serve.key("per-user", "bob").json()["remaining"] == 0
    assert serve.key("per-user", "bob", "DELETE").status_code == 200
    assert requests.post(serve.admin + "/v1/check", json=check, headers=auth,
                         timeout=5).json()["remaining"] == 2


def test_errors_are_json_and_the_token_is_needed(serve):
    unknown = serve.key("nope", "k")
    assert unknown.status_code == 404
    assert unknown.json() == {"error": "unknown rule 'nope'", "field": "rule"}
    assert serve.key("per-user", "k", token=None).status_code == 401
    assert serve.key("per-user", "k", "DELETE", token=None).status_code == 401
    assert serve.key("per-user", "k", "DELETE", token="wrong-token-0123456789").status_code == 401
    conc = serve.key("conc", "k", "DELETE")
    assert conc.status_code == 409
    assert conc.json()["field"] == "rule"
    assert "concurrency" in conc.json()["error"]
    # http.client sends the path as written (requests would re-quote the bad escape).
    conn = http.client.HTTPConnection("127.0.0.1", serve.admin_port, timeout=5)
    conn.request("GET", "/v1/rules/per-user/keys/%zz", headers={"Authorization": f"Bearer {TOKEN}"})
    bad = conn.getresponse()
    assert bad.status == 400 and json.loads(bad.read())["field"] == "key"
    conn.close()
    assert requests.put(serve.admin + "/v1/rules/per-user/keys/k",
                        headers={"Authorization": f"Bearer {TOKEN}"},
                        timeout=5).status_code == 405


def test_sluice_peek_and_reset_over_resp(serve):
    for _ in range(3):
        assert serve.cli("SLUICE.CHECK", "per-user", "carol")[0] == "0"
    # limited, limit, remaining, retry_after (s), reset_after (s), seen
    # Seconds rounded up: 60 and 180 less the time the calls took.
    peek = [int(x) for x in serve.cli("SLUICE.PEEK", "per-user", "carol")]
    assert peek[:3] == [1, 3, 0] and peek[5] == 1
    assert 59 <= peek[3] <= 60 and 179 <= peek[4] <= 180
    again = [int(x) for x in serve.cli("SLUICE.PEEK", "per-user", "carol")]
    assert again[:3] == peek[:3] and again[3] <= peek[3]  # not charged
    assert serve.cli("SLUICE.PEEK", "per-user", "dan") == ["0", "3", "3", "-1", "0", "0"]
    assert serve.cli("SLUICE.RESET", "per-user", "carol") == ["1"]
    assert serve.cli("SLUICE.RESET", "per-user", "carol") == ["0"]
    assert serve.cli("SLUICE.CHECK", "per-user", "carol")[:3] == ["0", "3", "2"]
    # The HTTP look sees what RESP spent: the same table.
    assert serve.key("per-user", "carol").json()["remaining"] == 2
    assert " ".join(serve.cli("SLUICE.PEEK", "nope", "k")) == "ERR unknown rule 'nope'"
    assert " ".join(serve.cli("SLUICE.PEEK", "per-user")) == \
        "ERR wrong number of arguments for 'sluice.peek' command"


def test_sluice_report_charges_a_cost_after_the_fact_over_resp(serve):
    # pair: fixed-window limit 5 an hour; the key is tenant|method as the gateway builds it.
    # limited, limit, remaining, retry_after, reset_after, seen: 3 of 5 spent, one passes now.
    reported = serve.cli("SLUICE.REPORT", "pair", "acme|GET", "3")
    assert reported[:4] == ["0", "5", "2", "-1"] and reported[5] == "1", reported
    # A check that reserved 2, reported at what it cost (0): both given back in this window.
    assert serve.cli("SLUICE.CHECK", "pair", "acme|GET", "2")[:3] == ["0", "5", "0"]
    assert serve.cli("SLUICE.REPORT", "pair", "acme|GET", "0", "2")[:3] == ["0", "5", "2"]
    assert serve.key("pair", "acme|GET").json()["remaining"] == 2  # the same table over HTTP
    assert " ".join(serve.cli("SLUICE.REPORT", "pair", "acme|GET", "x")) == \
        "ERR invalid cost 'x': must be an integer from 0 to 1000000"
    assert " ".join(serve.cli("SLUICE.REPORT", "conc", "u", "1")).startswith(
        "ERR rule 'conc' is concurrency: a report settles token-bucket")
    assert " ".join(serve.cli("SLUICE.REPORT", "pair", "k")) == \
        "ERR wrong number of arguments for 'sluice.report' command"
