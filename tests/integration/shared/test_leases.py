"""A concurrency rule through the decision service: a check holds a permit and hands back a
token; the permit is given back by a release call (HTTP or SLUICE.RELEASE) or expires by itself.
Acquire, acquire denied, release, acquire allowed; locally and through Redis, across instances."""
import time

import redis
import requests

LOCAL = """\
rules:
  jobs: {{limit: "concurrency:limit=1", key: client_ip, permit_ttl: 2s}}
"""

SHARED = """\
redis: {{url: "{redis}", timeout: 200ms}}
rules:
  jobs: {{limit: "concurrency:limit=1", key: client_ip, storage: redis, permit_ttl: 60s}}
"""


def check(inst, key="batch"):
    return requests.post(inst.admin + "/v1/check", json={"rule": "jobs", "key": key}, timeout=5)


def test_a_permit_goes_around_over_http(instances):
    inst = instances(LOCAL)
    first = check(inst).json()
    assert first["allowed"] is True
    assert first["lease"].startswith("l-") and first["lease_ttl_ms"] == 2000
    assert check(inst).json()["allowed"] is False  # the one permit is held
    r = requests.post(inst.admin + "/v1/release", json={"lease": first["lease"]}, timeout=5)
    assert r.status_code == 200 and r.json() == {"released": True}
    again = check(inst).json()
    assert again["allowed"] is True
    # DELETE /v1/leases/{token} does the same; a token gives its permit back once.
    assert requests.delete(inst.admin + "/v1/leases/" + again["lease"], timeout=5).status_code == 200
    r = requests.delete(inst.admin + "/v1/leases/" + again["lease"], timeout=5)
    assert r.status_code == 404 and r.json()["field"] == "lease"


def test_a_permit_never_released_expires_at_its_ttl(instances):
    inst = instances(LOCAL)
    assert check(inst, "forgotten").json()["allowed"] is True
    assert check(inst, "forgotten").json()["allowed"] is False
    time.sleep(3.2)  # permit_ttl 2 s, looked at once a second
    assert check(inst, "forgotten").json()["allowed"] is True


def test_a_permit_goes_around_over_resp(instances):
    inst = instances(LOCAL, resp=True)
    c = redis.Redis(port=inst.resp_port, socket_timeout=5)
    held = c.execute_command("SLUICE.CHECK", "jobs", "resp-key")
    assert held[0] == 0 and len(held) == 6  # allowed, with the token as a sixth element
    token = held[5].decode()
    assert c.execute_command("SLUICE.CHECK", "jobs", "resp-key")[0] == 1  # denied
    assert c.execute_command("SLUICE.RELEASE", token) == 1
    assert c.execute_command("SLUICE.RELEASE", token) == 0
    assert c.execute_command("SLUICE.CHECK", "jobs", "resp-key")[0] == 0
    # The HTTP decision service sees the same permit.
    assert check(inst, "resp-key").json()["allowed"] is False


def test_a_permit_held_in_redis_is_released_by_another_instance(redis_server, instances):
    rs = redis_server()
    a = instances(SHARED, rs.url)
    b = instances(SHARED, rs.url)
    held = check(a, "shared").json()
    assert held["allowed"] is True and held["lease"].startswith("r-")
    assert check(b, "shared").json()["allowed"] is False  # one permit for both
    r = requests.post(b.admin + "/v1/release", json={"lease": held["lease"]}, timeout=5)
    assert r.status_code == 200
    time.sleep(0.2)  # the release is sent on b's loop, fire and forget
    assert check(a, "shared").json()["allowed"] is True
