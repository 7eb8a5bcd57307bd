"""Concurrency permits the decision service holds for its callers are capped per rule, counted
in a gauge, and their memory goes back once they do (defect 6 of the second hardening round:
1M permits took 154 MB, with no cap, no gauge, and the memory kept after they expired).

A real `sluice serve` with a RESP listener: SLUICE.CHECK takes permits pipelined through redis-py
(thousands a second), POST /v1/check meets the cap over HTTP."""
import os
import subprocess
import time

import pytest

import redis
import requests

from integration_support import free_port, sluice_binary, terminate, wait_until

# `jobs` counts per job, `pool` all at once (one key, so its table is one page: what grows and
# must shrink again is the book of permits and their tokens).
CONFIG = """\
admin: 127.0.0.1:{admin}
resp: {{listen: 127.0.0.1:{resp}}}
rules:
  jobs:
    limit: "concurrency:limit=1"
    key: "header:X-Job"
    permit_ttl: {ttl}
    max_permits: {cap}
  pool:
    limit: "concurrency:limit=1000000"
    key: const:all
    permit_ttl: {ttl}
    max_permits: {cap}
"""


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def held(admin, rule="jobs"):
    text = requests.get(f"{admin}/metrics", timeout=5).text
    for line in text.splitlines():
        if line.startswith(f'sluice_permits_held{{rule="{rule}"}}'):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


class Served:
    def __init__(self, tmp_path, cap, ttl="1s"):
        self.admin_port, self.resp_port = free_port(), free_port()
        self.admin = f"http://127.0.0.1:{self.admin_port}"
        path = tmp_path / "sluice.yaml"
        path.write_text(CONFIG.format(admin=self.admin_port, resp=self.resp_port, cap=cap, ttl=ttl))
        self.log = open(tmp_path / "stderr", "wb")
        self.proc = subprocess.Popen([sluice_binary(), "serve", "--config", str(path)],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=self.log)

        def up():
            assert self.proc.poll() is None
            try:
                return requests.get(self.admin + "/healthz", timeout=1).ok
            except requests.ConnectionError:
                return False

        wait_until(up, timeout=10, what="sluice")
        self.r = redis.Redis(host="127.0.0.1", port=self.resp_port, socket_timeout=30)

    def take(self, keys, rule="jobs"):
        """SLUICE.CHECK RULE KEY for each key, pipelined: the replies."""
        pipe = self.r.pipeline(transaction=False)
        for k in keys:
            pipe.execute_command("SLUICE.CHECK", rule, k)
        return pipe.execute(raise_on_error=False)

    def stop(self):
        terminate(self.proc)
        self.log.close()


def test_a_rule_holds_at_most_max_permits_and_says_so_over_resp_and_http(tmp_path):
    s = Served(tmp_path, cap=3)
    try:
        replies = s.take(["a", "b", "c", "d"])
        assert [r[0] for r in replies[:3]] == [0, 0, 0], replies  # allowed, each with a token
        assert isinstance(replies[3], redis.ResponseError), replies[3]
        assert "max_permits" in str(replies[3])
        r = requests.post(s.admin + "/v1/check", json={"rule": "jobs", "key": "e"}, timeout=5)
        assert r.status_code == 503 and r.json()["field"] == "exhausted", r.text
        assert held(s.admin) == 3
        # Expired (permit_ttl 1s, looked at once a second): room again, and the gauge says 0.
        wait_until(lambda: held(s.admin) == 0, timeout=5, what="the permits to expire")
        assert s.take(["d"])[0][0] == 0
    finally:
        s.stop()


# A sanitizer's allocator keeps freed memory in quarantine and its shadow grows with the heap:
# what this measures is the release build's (scripts/run-sanitized-tests.sh sets SLUICE_SANITIZER).
@pytest.mark.skipif(bool(os.environ.get("SLUICE_SANITIZER")), reason="measures the release heap")
def test_the_memory_of_200k_permits_goes_back_once_they_are_given_back(tmp_path):
    s = Served(tmp_path, cap=300_000, ttl="10m")  # none expires during the test
    try:
        s.take(["warm"], "pool")
        before = rss_kib(s.proc.pid)
        tokens = []
        for _ in range(10):
            replies = s.take(["all"] * 20_000, "pool")
            assert all(r[0] == 0 for r in replies), "a permit refused"
            tokens += [r[5] for r in replies]
        grown = rss_kib(s.proc.pid) - before
        assert held(s.admin, "pool") == 200_001  # and the warm-up one
        assert grown > 10_000, f"{grown} KiB for 200k permits: too little to tell"
        for i in range(0, len(tokens), 20_000):
            pipe = s.r.pipeline(transaction=False)
            for t in tokens[i:i + 20_000]:
                pipe.execute_command("SLUICE.RELEASE", t)
            assert all(r == 1 for r in pipe.execute())
        assert held(s.admin, "pool") == 1
        left = rss_kib(s.proc.pid) - before
        assert left < grown / 4, f"grew {grown} KiB, {left} KiB left after every permit went back"
    finally:
        s.stop()
