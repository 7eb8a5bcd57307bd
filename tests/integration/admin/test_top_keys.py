"""GET /v1/rules/{name}/top: the keys a rule met most over the last five minutes, by denials or
by requests. A real `sluice serve` whose gateway refuses one hot user and admits a few others,
and whose decision API (/v1/check) charges the same rule; a rule with `log_key: hash` lists its
keys' hashes; bad `by`, bad `n` and an unknown rule get the admin API's error replies."""
import re

import pytest
import requests

from integration_support import ServeProcess, free_port, wait_until  # on sys.path via conftest

TOKEN = "top-keys-test-token-0123456789abcdef"

CONFIG = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
admin_auth: {{token_file: {token_file}}}
write_back: false
routes:
  - name: api
    match: {{path_prefix: /}}
    respond: {{status: 200, body: "ok\\n"}}
    rules: [per-user, hidden]
rules:
  per-user:
    limit: "fixed-window:limit=3,window=1h"
    key: "header:X-User"
  hidden:
    limit: "fixed-window:limit=1000,window=1h"
    key: "header:X-User"
    log_key: hash
  idle:
    limit: "fixed-window:limit=1000,window=1h"
    key: "header:X-User"
"""


class Serve(ServeProcess):
    def __init__(self, tmp_path):
        self.gateway_port, self.admin_port = free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.gateway_port}"
        self.admin = f"http://127.0.0.1:{self.admin_port}"
        token_file = tmp_path / "admin.token"
        token_file.write_text(TOKEN + "\n")
        path = tmp_path / "sluice.yaml"
        path.write_text(CONFIG.format(gateway=self.gateway_port, admin=self.admin_port,
                                      token_file=token_file))
        super().__init__(tmp_path, ["--config", str(path)],
                         r"admin listening on \S+:%d\b" % self.admin_port)
        wait_until(lambda: re.search(r"listening on \S+:%d\b" % self.gateway_port,
                                     self.stderr()), timeout=10, what="the gateway listener")

    def get(self, path, **params):
        return requests.get(self.admin + path, params=params, timeout=5,
                            headers={"Authorization": f"Bearer {TOKEN}"})

    def through_gateway(self, user, times):
        return [requests.get(self.url + "/x", headers={"X-User": user}, timeout=5).status_code
                for _ in range(times)]


@pytest.fixture(scope="module")
def serve(tmp_path_factory):
    s = Serve(tmp_path_factory.mktemp("top"))
    # per-user admits 3 per user: "hot" gets 3 of 20 through, 17 refused; the others pass.
    assert s.through_gateway("hot", 20).count(429) == 17
    for user, times in (("alice", 3), ("bob", 2), ("carol", 1)):
        assert s.through_gateway(user, times) == [200] * times
    # The decision API charges the same rule: carol's 2nd request there is admitted too.
    r = requests.post(s.admin + "/v1/check", json={"rule": "per-user", "key": "carol"},
                      headers={"Authorization": f"Bearer {TOKEN}"}, timeout=5)
    assert r.status_code == 200, r.text
    yield s
    s.stop()


def test_by_denied_lists_the_refused_hot_key_first_with_its_count(serve):
    r = serve.get("/v1/rules/per-user/top", by="denied")
    assert r.status_code == 200, r.text
    assert r.headers["Content-Type"].startswith("application/json")
    assert r.json() == {"rule": "per-user", "by": "denied", "window_seconds": 300,
                        "capacity": 64,
                        "keys": [{"key": "hot", "requests": 20, "denied": 17}]}


def test_by_requests_ranks_every_key_by_its_requests_from_both_frontends(serve):
    body = serve.get("/v1/rules/per-user/top", by="requests").json()
    assert body["by"] == "requests"
    assert body["keys"] == [{"key": "hot", "requests": 20, "denied": 17},
                            {"key": "alice", "requests": 3, "denied": 0},
                            {"key": "bob", "requests": 2, "denied": 0},
                            {"key": "carol", "requests": 2, "denied": 0}]  # a tie: by key


def test_by_defaults_to_denied_and_n_cuts_the_list(serve):
    body = serve.get("/v1/rules/per-user/top").json()
    assert body["by"] == "denied" and [k["key"] for k in body["keys"]] == ["hot"]
    body = serve.get("/v1/rules/per-user/top", by="requests", n="2").json()
    assert [k["key"] for k in body["keys"]] == ["hot", "alice"]


def test_a_rule_with_log_key_hash_lists_hashes_not_keys(serve):
    # `hidden` comes after per-user on the route: a request per-user refused is not counted
    # there, so hot has its 3 admitted requests, as alice has.
    keys = serve.get("/v1/rules/hidden/top", by="requests").json()["keys"]
    assert [k["requests"] for k in keys] == [3, 3, 2, 1]
    assert all(re.fullmatch(r"[0-9a-f]{16}", k["key"]) for k in keys), keys
    assert not {"hot", "alice", "bob", "carol"} & {k["key"] for k in keys}


@pytest.mark.parametrize("params,field", [
    ({"by": "allowed"}, "by"),
    ({"n": "0"}, "n"),
    ({"n": "65"}, "n"),
    ({"n": "ten"}, "n"),
    ({"limit": "5"}, "limit"),
])
def test_a_bad_query_is_refused_naming_the_parameter(serve, params, field):
    r = serve.get("/v1/rules/per-user/top", **params)
    assert r.status_code == 400, r.text
    assert r.json()["field"] == field
    assert field in r.json()["error"]


def test_a_rules_memory_counts_its_top_keys_once_it_has_decided(serve):
    text = requests.get(serve.admin + "/metrics", timeout=5,
                        headers={"Authorization": f"Bearer {TOKEN}"}).text
    memory = {m[1]: float(m[2]) for m in
              re.finditer(r'^sluice_limit_memory_bytes\{rule="([^"]+)"\} (\S+)$', text, re.M)}
    # The same table budget; `idle` has never decided, so it has no sketch (41,120 bytes).
    assert memory["hidden"] - memory["idle"] == 41120
    assert serve.get("/v1/rules/idle/top").json()["keys"] == []


def test_an_unknown_rule_is_404(serve):
    r = serve.get("/v1/rules/nope/top")
    assert r.status_code == 404
    assert r.json() == {"error": "unknown rule 'nope'", "field": "rule"}
