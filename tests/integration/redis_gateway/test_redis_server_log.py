"""The server log's Redis lines (docs/logging.md, "Server log"): Redis going away opens the
breaker, which is logged once with the failure policy in force, and its return closes it,
logged once too; a steady outage logs no more. Fail-open admissions are counted per rule, in
at most one line a second."""
import json
import time

import requests

from integration_support import ServeProcess, free_port, wait_until  # via conftest's sys.path

CONFIG = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
workers: 1
write_back: false
redis:
  url: {redis}
  timeout: 50ms
  storage: redis
  on_failure: fail-closed
routes:
  - name: api
    match: {{path_prefix: /}}
    respond: {{status: 200, body: "ok\\n"}}
    rules: [shared]
rules:
  shared:
    limit: gcra:rate=1000/s,burst=100
    key: const:global
"""


def records_of(g):
    return [json.loads(line) for line in g.stderr().splitlines()]


def breaker_lines(g):
    return [r for r in records_of(g) if "breaker" in r]


def hit(g, n):
    return [requests.get(g.url + "/x", timeout=5).status_code for _ in range(n)]


def serve_json(tmp_path, redis_url, config=CONFIG):
    gateway = free_port()
    path = tmp_path / "sluice.yaml"
    path.write_text(config.format(gateway=gateway, admin=free_port(), redis=redis_url))
    g = ServeProcess(tmp_path, ["--config", str(path), "--log-format", "json"],
                     r"gateway listening on \S+:%d\b" % gateway, what="the gateway to listen")
    g.url = f"http://127.0.0.1:{gateway}"
    return g


def test_breaker_open_and_closed_are_each_logged_once_with_the_policy(tmp_path, redis_server):
    rs = redis_server()
    g = serve_json(tmp_path, rs.url)
    try:
        check_open_then_closed(g, rs)
    finally:
        g.stop()


def test_the_breaker_line_names_each_rules_policy_when_they_differ(tmp_path, redis_server):
    # redis.on_failure is fail-closed; one rule says fail-open: the line names both, with rules.
    rs = redis_server()
    config = CONFIG.replace("    rules: [shared]", "    rules: [shared, open]") + (
        "  open:\n    limit: gcra:rate=1000/s,burst=100\n    key: const:other\n"
        "    on_failure: fail-open\n")
    g = serve_json(tmp_path, rs.url, config)
    try:
        assert hit(g, 2) == [200] * 2
        rs.kill()
        wait_until(lambda: (hit(g, 1), breaker_lines(g))[1], timeout=5, interval=0.02,
                   what="the breaker line")
        assert breaker_lines(g)[0]["on_failure"] == "fail-closed: shared; fail-open: open"
    finally:
        g.stop()


def check_open_then_closed(g, rs):
    assert hit(g, 5) == [200] * 5
    rs.kill()
    # Requests over 1.5 s of outage: the breaker opens once and stays open (fail-closed: 429s).
    deadline = time.monotonic() + 1.5
    while time.monotonic() < deadline:
        hit(g, 1)
        time.sleep(0.02)
    lines = breaker_lines(g)
    assert [(r["level"], r["breaker"], r["on_failure"]) for r in lines] == [
        ("warn", "open", "fail-closed")], lines
    assert lines[0]["msg"].startswith("sluice: redis lost, breaker open")
    rs.restart()

    def closed():
        hit(g, 1)
        return len(breaker_lines(g)) == 2

    wait_until(closed, timeout=5, interval=0.05, what="the breaker to close")
    last = breaker_lines(g)[1]
    assert (last["level"], last["breaker"], last["msg"]) == (
        "info", "closed", "sluice: redis recovered, breaker closed")


def test_fail_open_admissions_are_counted_in_at_most_one_line_a_second(tmp_path, redis_server):
    rs = redis_server()
    g = serve_json(tmp_path, rs.url, CONFIG.replace("on_failure: fail-closed",
                                                    "on_failure: fail-open"))
    try:
        rs.kill()
        sent, began = 0, time.monotonic()
        while time.monotonic() - began < 2.2:  # 2.2 s of outage: at most 3 lines (0, 1, 2 s)
            assert hit(g, 1) == [200]  # fail-open admits
            sent += 1
            time.sleep(0.01)
        wait_until(lambda: any("admitted" in r for r in records_of(g)), what="a fail-open line")
        lines = [r for r in records_of(g) if "admitted" in r]
        assert 1 <= len(lines) <= 3, lines
        assert all((r["rule"], r["on_failure"], r["level"]) == ("shared", "fail-open", "warn")
                   for r in lines)
        # Each line counts the admissions since the one before; the last ones may be unlogged.
        assert lines[0]["admitted"] == 1 and sum(r["admitted"] for r in lines) <= sent, lines
        assert sent > 50, sent
    finally:
        g.stop()
