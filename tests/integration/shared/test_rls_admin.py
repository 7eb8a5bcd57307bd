"""Envoy RLS domains through the admin API, as rules are: a domain PUT in envoyproxy/ratelimit's
format is in force for the next ShouldRateLimit (grpcio) and written back to the config file;
raising its limit keeps what was counted; a domain read from a file is changed there and
reloaded with POST /v1/reload, which refuses a broken file with FILE:LINE and keeps serving."""
import time

import grpc
import pytest
import requests
import yaml

from rls_stubs import request

OK, OVER_LIMIT = 1, 2  # RateLimitResponse.Code

CONFIG = """\
rls:
  files: ["{rls_file}"]
"""

FILE_DOMAIN = """\
domain: edge
descriptors:
  - key: user
    rate_limit: {unit: hour, requests_per_unit: %d}
"""


def api_domain(per_hour):
    return {"domain": "api", "descriptors": [
        {"key": "tenant", "rate_limit": {"unit": "hour", "requests_per_unit": per_hour}}]}


@pytest.fixture(autouse=True)
def away_from_the_hour():
    """The limits count in hour windows: do not start a few seconds before one ends."""
    left = 3600 - time.time() % 3600
    if left < 20:
        time.sleep(left + 1)


@pytest.fixture
def inst(instances, pb):
    i = instances(CONFIG, grpc=True, files={"rls.yaml": FILE_DOMAIN % 2})
    channel = grpc.insecure_channel(f"127.0.0.1:{i.grpc_port}")
    grpc.channel_ready_future(channel).result(timeout=10)
    stub = pb.rls_grpc.RateLimitServiceStub(channel)
    i.ask = lambda domain, entries: stub.ShouldRateLimit(  # noqa: E731
        request(pb, [entries], domain), timeout=10)
    yield i
    channel.close()


def codes(inst, domain, entries, n):
    return [inst.ask(domain, entries).overall_code for _ in range(n)]


def test_a_domain_put_through_the_api_limits_at_once_and_is_written_back(inst):
    # Before: no domain "api", so nothing limits it (envoyproxy/ratelimit answers OK).
    assert codes(inst, "api", [("tenant", "t1")], 4) == [OK] * 4
    r = requests.put(f"{inst.admin}/v1/rls/domains/api", json=api_domain(3), timeout=10)
    assert r.status_code == 201, r.text
    assert r.json() == api_domain(3)
    assert codes(inst, "api", [("tenant", "t1")], 4) == [OK, OK, OK, OVER_LIMIT]
    # It reads back as it was put, and the list says where each domain comes from.
    assert requests.get(f"{inst.admin}/v1/rls/domains/api", timeout=10).json() == api_domain(3)
    listed = {d["domain"]: d["file"]
              for d in requests.get(f"{inst.admin}/v1/rls/domains", timeout=10).json()}
    assert listed == {"edge": str(inst.dir / "rls.yaml"), "api": ""}
    # Written back into the config's own rls.domains (the file's domain stays in its file).
    on_disk = yaml.safe_load(inst.config_path.read_text())
    assert [d["domain"] for d in on_disk["rls"]["domains"]] == ["api"]
    assert on_disk["rls"]["files"] == [str(inst.dir / "rls.yaml")]

    # Raised to 5: the 3 already counted this hour are kept, 2 more pass.
    r = requests.put(f"{inst.admin}/v1/rls/domains/api", data=yaml.safe_dump(api_domain(5)),
                     timeout=10)
    assert r.status_code == 200, r.text
    assert codes(inst, "api", [("tenant", "t1")], 3) == [OK, OK, OVER_LIMIT]
    status = inst.ask("api", [("tenant", "t1")]).statuses[0]
    assert status.current_limit.requests_per_unit == 5 and status.limit_remaining == 0

    # Deleted: unlimited again, and gone from the file.
    r = requests.delete(f"{inst.admin}/v1/rls/domains/api", timeout=10)
    assert r.status_code == 200 and r.json() == api_domain(5)
    assert codes(inst, "api", [("tenant", "t1")], 2) == [OK, OK]
    assert requests.get(f"{inst.admin}/v1/rls/domains/api", timeout=10).status_code == 404
    assert not yaml.safe_load(inst.config_path.read_text())["rls"].get("domains")


def test_a_bad_domain_is_refused_naming_the_line_and_changes_nothing(inst):
    bad = "domain: api\ndescriptors:\n  - key: tenant\n    rate_limit: {unit: fortnight, " \
          "requests_per_unit: 3}\n"
    r = requests.put(f"{inst.admin}/v1/rls/domains/api", data=bad, timeout=10)
    assert r.status_code == 400
    assert r.json()["errors"][0].startswith(
        "body:4: domain 'api': descriptor 'tenant': field 'rate_limit.unit': 'fortnight'")
    # Another domain's name in the body, or no body at all.
    r = requests.put(f"{inst.admin}/v1/rls/domains/other", json=api_domain(3), timeout=10)
    assert r.status_code == 400
    assert r.json()["error"] == "the body names domain 'api' but the path names 'other'"
    assert requests.put(f"{inst.admin}/v1/rls/domains/api", timeout=10).status_code == 400
    assert requests.get(f"{inst.admin}/v1/rls/domains/api", timeout=10).status_code == 404
    assert codes(inst, "edge", [("user", "u")], 3) == [OK, OK, OVER_LIMIT]


def test_a_file_domain_changes_in_its_file_and_reloads_through_the_api(inst):
    assert codes(inst, "edge", [("user", "u")], 3) == [OK, OK, OVER_LIMIT]
    # The API will not edit what a file holds: the next reload would undo it.
    r = requests.put(f"{inst.admin}/v1/rls/domains/edge", data=FILE_DOMAIN % 9, timeout=10)
    assert r.status_code == 409
    assert str(inst.dir / "rls.yaml") in r.json()["error"]
    assert requests.delete(f"{inst.admin}/v1/rls/domains/edge", timeout=10).status_code == 409

    version = requests.post(f"{inst.admin}/v1/reload", timeout=10).json()["version"]
    (inst.dir / "rls.yaml").write_text(FILE_DOMAIN % 4)
    r = requests.post(f"{inst.admin}/v1/reload", timeout=10)
    assert r.status_code == 200 and r.json() == {"reloaded": True, "version": version + 1}
    # Raised to 4: the 2 counted are kept.
    assert codes(inst, "edge", [("user", "u")], 3) == [OK, OK, OVER_LIMIT]

    (inst.dir / "rls.yaml").write_text("domain: edge\ndescriptors:\n  - key: user\n"
                                       "    rate_limt: {unit: hour, requests_per_unit: 9}\n")
    r = requests.post(f"{inst.admin}/v1/reload", timeout=10)
    assert r.status_code == 422
    assert r.json()["version"] == version + 1
    [error] = r.json()["errors"]
    assert error.startswith(
        f"{inst.dir / 'rls.yaml'}:4: domain 'edge': descriptor 'user': unknown field 'rate_limt'")
    status = inst.ask("edge", [("user", "u")]).statuses[0]
    assert status.current_limit.requests_per_unit == 4  # the domain in force keeps serving
