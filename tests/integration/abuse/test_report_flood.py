"""A flood of costs reported for keys never seen before, through the check API's POST
/v1/report and RESP's SLUICE.REPORT: a report charges a key in the rule's table, so a flood of
new keys is held by the same memory budget as a flood of requests (the table evicts, never
grows), every report is answered, and a key reported afterwards is charged exactly."""
import os
import re
import signal
import subprocess
import time

import requests

from integration_support import free_port  # via conftest's sys.path
from test_key_flood import rss

HERE = os.path.dirname(os.path.abspath(__file__))
HTTP_KEYS = 200_000
RESP_KEYS = 100_000
BUDGET = 1 << 20  # memory: 1MiB, about 43,700 keys of this rule
OVERHEAD = 3 << 20  # besides the table: the flood's connections' buffers, the allocator

CONFIG = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
resp:
  listen: 127.0.0.1:%d
workers: 1
memory: 1MiB
routes:
  - name: api
    match: {{path_prefix: /}}
    respond: {{status: 200, body: "ok"}}
    rules: [tokens]
rules:
  tokens:
    limit: token-bucket:rate=100/s,burst=1000
    key: header:X-Key
"""


def http_flood(s):
    """HTTP_KEYS reports of new keys by wrk; its report (non-2xx answers are counted in it)."""
    answered = s.metric("sluice_admin_requests_total")
    wrk = subprocess.Popen(["wrk", "-t1", "-c16", "-d120s", "-s",
                            os.path.join(HERE, "report_flood.lua"), s.admin + "/", "--",
                            str(HTTP_KEYS)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    started = time.monotonic()
    try:
        # report_flood.lua stops at HTTP_KEYS answers; wrk itself waits out -d, so stop it then.
        while s.metric("sluice_admin_requests_total") - answered < HTTP_KEYS:
            assert wrk.poll() is None, wrk.stdout.read()
            assert time.monotonic() - started < 120, "the flood did not finish in 120 s"
            time.sleep(0.5)
        wrk.send_signal(signal.SIGINT)
        return wrk.communicate(timeout=10)[0]
    finally:
        wrk.kill()


def test_a_flood_of_reports_for_new_keys_stays_in_the_rules_memory_and_each_is_answered(sluice):
    resp_port = free_port()
    s = sluice(CONFIG % resp_port)
    pid = s.proc.pid
    start_rss = rss(pid)

    report = http_flood(s)
    assert re.search(r"(\d+) requests in", report), report
    assert "Non-2xx" not in report, report  # every report answered 200
    assert s.metric("sluice_admin_requests_total", code="200") >= HTTP_KEYS

    # RESP: SLUICE.REPORT of 100,000 keys drawn from 10^9, 16 clients; -e prints error replies.
    bench = subprocess.run(["redis-benchmark", "-p", str(resp_port), "-c", "16", "-n",
                            str(RESP_KEYS), "-r", "1000000000", "-e", "-q",
                            "SLUICE.REPORT", "tokens", "k:__rand_int__", "3"],
                           capture_output=True, text=True, timeout=120)
    assert bench.returncode == 0, bench.stdout + bench.stderr
    assert "ERR" not in bench.stdout + bench.stderr, bench.stdout
    assert s.metric("sluice_resp_commands_total") >= RESP_KEYS

    peak = rss(pid)
    keys = s.metric("sluice_limit_keys", rule="tokens")
    capacity = s.metric("sluice_limit_capacity", rule="tokens")
    # Made room for: evicted live, or dropped idle (a bucket refilled to full holds nothing).
    evictions = (s.metric("sluice_limit_evictions_total", rule="tokens")
                 + s.metric("sluice_limit_idle_drops_total", rule="tokens"))
    print(f"\n{HTTP_KEYS} + {RESP_KEYS} reported keys: table {keys:.0f} of {capacity:.0f} slots, "
          f"{evictions:.0f} evicted or dropped idle; RssAnon +{(peak - start_rss) / 2**20:.2f} MiB for a "
          f"{BUDGET >> 20} MiB budget")
    assert keys <= capacity < HTTP_KEYS
    assert evictions >= HTTP_KEYS + RESP_KEYS - capacity - 100  # the few drawn twice
    assert peak - start_rss <= BUDGET + OVERHEAD

    # Afterwards a report still charges exactly: 7 of a 1000 burst, then 7 more over RESP.
    r = requests.post(s.admin + "/v1/report", json={"rule": "tokens", "key": "real", "cost": 7},
                      timeout=5)
    assert (r.status_code, r.json()["reported"], r.json()["remaining"]) == (200, 7, 993), r.text
    cli = subprocess.run(["redis-cli", "-p", str(resp_port), "SLUICE.REPORT", "tokens", "real",
                          "7"], capture_output=True, text=True, timeout=10)
    # SLUICE.PEEK's integers: limited, limit, remaining (993 - 7, or one token more if the
    # bucket refilled one meanwhile at 100/s), ...
    values = [int(v) for v in cli.stdout.split()]
    assert values[1] == 1000 and 986 <= values[2] <= 990, cli.stdout
