"""The server log's dry-run line (docs/logging.md, "Server log"): a burst of requests a dry-run
rule would refuse gives at most one line a second for the rule, each with how many it would have
refused and the latest key and route, and the counts add up to every would-be refusal. A real `sluice
serve` with --log-format json; the requests go through its gateway."""
import json
import re
import time

import pytest
import requests

from integration_support import ServeProcess, free_port, wait_until  # on sys.path via conftest

CONFIG = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
write_back: false
routes:
  - name: api
    match: {{path_prefix: /}}
    respond: {{status: 200, body: "ok\\n"}}
    rules: [shadow]
rules:
  shadow:
    limit: "fixed-window:limit=1,window=1h"
    key: "header:X-User"
    action: dry-run
"""

MSG = "sluice: dry-run rule would have refused requests"


@pytest.fixture
def serve(tmp_path):
    gateway, admin = free_port(), free_port()
    path = tmp_path / "sluice.yaml"
    path.write_text(CONFIG.format(gateway=gateway, admin=admin))
    s = ServeProcess(tmp_path, ["--config", str(path), "--log-format", "json"],
                     r"admin listening on \S+:%d\b" % admin)
    wait_until(lambda: re.search(r"gateway listening on \S+:%d\b" % gateway, s.stderr()),
               timeout=10, what="the gateway listener")
    s.url = f"http://127.0.0.1:{gateway}"
    yield s
    s.stop()


def dry_run_lines(s):
    # The access log goes to stderr too (its own format): only the server log is JSON.
    recs = (json.loads(line) for line in s.stderr().splitlines() if line.startswith("{"))
    return [r for r in recs if r.get("msg") == MSG]


def test_a_burst_of_200_would_be_refusals_logs_one_line_a_second_with_the_count(serve):
    start = time.monotonic()
    with requests.Session() as http:
        for _ in range(201):  # the first is within the limit: 200 would-be refusals
            assert http.get(serve.url + "/x", headers={"X-User": "bob"}, timeout=5).status_code == 200
    wait_until(lambda: sum(r["count"] for r in dry_run_lines(serve)) >= 200, timeout=10,
               what="the dry-run lines to count 200 refusals")
    elapsed = time.monotonic() - start
    lines = dry_run_lines(serve)
    assert sum(r["count"] for r in lines) == 200
    # The lines are written by a timer once a second: never more lines than seconds passed.
    assert len(lines) <= int(elapsed) + 1, (elapsed, lines)
    assert all(r["rule"] == "shadow" and r["route"] == "api" and r["key"] == "bob"
               and r["level"] == "warn" for r in lines), lines
    # Nothing more to say once the burst is over: no line with a count of 0.
    time.sleep(1.5)
    assert len(dry_run_lines(serve)) == len(lines)
