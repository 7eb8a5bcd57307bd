"""The instances that share one Redis (docs/dashboard.md#instances): each keeps a heartbeat
there, written every 5 s under a 15 s TTL, and GET /v1/instances on any of them lists all of
them with their health; one killed with SIGKILL is listed down once its heartbeat expires."""
import time

import requests

from integration_support import wait_until  # on sys.path through conftest

CONFIG = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
workers: 1
write_back: false
redis: {{url: "{redis}", timeout: 200ms}}
routes:
  - name: app
    match: {{path_prefix: /}}
    respond: {{status: 200, body: "ok\\n"}}
    rules: [shared]
rules:
  shared: {{limit: "fixed-window:limit=100,window=1m", key: const:all, storage: redis}}
"""

LOCAL = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
workers: 1
write_back: false
routes:
  - name: app
    match: {{path_prefix: /}}
    respond: {{status: 200, body: "ok\\n"}}
"""


def listed(g):
    r = requests.get(g.admin + "/v1/instances", timeout=5)
    assert r.status_code == 200, r.text
    return r.json()


def test_every_instance_sharing_redis_is_listed_and_a_killed_one_goes_down(redis_server,
                                                                         gateways):
    rs = redis_server()
    a, b = gateways(CONFIG, rs.url, n=2)
    both = wait_until(lambda: (s := listed(a)) and len(s["instances"]) == 2 and s, timeout=10,
                      what="both heartbeats")
    assert both["redis"] is True
    assert both["heartbeat_every_ms"] == 5000 and both["heartbeat_ttl_ms"] == 15000
    rows = {i["id"]: i for i in both["instances"]}
    assert all(i["live"] for i in rows.values())
    assert [i["self"] for i in rows.values()].count(True) == 1
    mine = rows[both["self"]]
    assert mine["pid"] == a.proc.pid and mine["version"]
    assert {"name": "admin", "address": f"127.0.0.1:{a.admin_port}"} in mine["listeners"]
    # The other instance sees the same two, itself the one marked self.
    from_b = listed(b)
    assert {i["id"] for i in from_b["instances"]} == set(rows)
    assert from_b["self"] != both["self"]
    other = from_b["self"]

    b.proc.kill()  # no goodbye: its heartbeat key expires within 15 s of its last write
    killed = time.monotonic()
    down = wait_until(lambda: (s := listed(a)) and not {i["id"]: i for i in s["instances"]}
                      [other]["live"] and s, timeout=20, interval=0.5, what="b listed down")
    assert time.monotonic() - killed <= 16
    row = {i["id"]: i for i in down["instances"]}[other]
    assert row["seen_seconds_ago"] >= 10  # its last heartbeat, by its own clock
    assert {i["id"]: i for i in down["instances"]}[both["self"]]["live"] is True


def test_without_redis_an_instance_shares_nothing(gateways):
    g = gateways(LOCAL, "")
    s = listed(g)
    assert s["redis"] is False and s["instances"] == [] and s["self"]
