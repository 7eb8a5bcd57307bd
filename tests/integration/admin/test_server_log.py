"""The server log of `sluice serve` (docs/logging.md, "Server log"): --log-format json gives one
JSON object per line with time, level and msg; startup and every reload are logged; --log-level
hides what is below it; a bad level is refused at once."""
import json
import re
import signal
import subprocess

import requests

from conftest import CONFIG
from integration_support import wait_until

TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"


def serve(serve_config, *flags):
    return serve_config(lambda g, a: CONFIG.format(gateway=g, admin=a, write_back="false"),
                        list(flags))


def records(s):
    """Every line of stderr as JSON (json.loads must accept each one)."""
    return [json.loads(line) for line in s.stderr().splitlines()]


def one(recs, msg_part):
    found = [r for r in recs if msg_part in r["msg"]]
    assert len(found) == 1, recs
    return found[0]


def test_json_lines_name_the_listeners_and_the_rules_at_startup(serve_config):
    s = serve(serve_config, "--log-format", "json")
    recs = records(s)
    for r in recs:
        assert re.fullmatch(TIME, r["time"]) and r["level"] in ("info", "warn"), r
    port = s.gateway.rsplit(":", 1)[1]
    gw = one(recs, "gateway listening on")
    # The readiness line's text is the message, as in text format.
    assert gw["msg"] == f"sluice serve: gateway listening on 127.0.0.1:{port}"
    assert (gw["level"], gw["listener"], gw["address"]) == ("info", "gateway", f"127.0.0.1:{port}")
    started = one(recs, "sluice serve: started")
    # CONFIG has 2 rules (per-user, spare) and 1 route (api), none in Redis.
    assert (started["rules"], started["routes"], started["storage"]) == (2, 1, "local")
    assert started["generation"] >= 1


def test_json_lines_give_each_reload_its_outcome(serve_config):
    s = serve(serve_config, "--log-format", "json")
    first = one(records(s), "sluice serve: started")["generation"]
    text = s.config_path.read_text()
    s.config_path.write_text(text.replace("limit=3,", "limit=2,"))
    s.signal(signal.SIGHUP)
    wait_until(lambda: any("reloaded" in r["msg"] for r in records(s)), what="the good reload")
    ok = one(records(s), "config reloaded")
    assert (ok["level"], ok["outcome"], ok["generation"]) == ("info", "ok", first + 1)

    s.config_path.write_text(text.replace("window=1h", "window=1x"))
    s.signal(signal.SIGHUP)
    wait_until(lambda: any("refused" in r["msg"] for r in records(s)), what="the bad reload")
    bad = one(records(s), "config reload refused")
    assert (bad["level"], bad["outcome"], bad["generation"]) == ("warn", "refused", first + 1)
    assert len(bad["errors"]) == 1
    assert bad["errors"][0].startswith(f"{s.config_path}:")  # FILE:LINE: problem


def test_text_lines_start_with_time_and_level_and_keep_errors_on_their_own_lines(serve_config):
    s = serve(serve_config)
    port = s.gateway.rsplit(":", 1)[1]
    assert re.search(r"^%s info  sluice serve: gateway listening on 127\.0\.0\.1:%s "
                     r"listener=gateway address=127\.0\.0\.1:%s$" % (TIME, port, port),
                     s.stderr(), re.M), s.stderr()
    s.config_path.write_text(s.config_path.read_text().replace("window=1h", "window=1x"))
    s.signal(signal.SIGHUP)
    wait_until(lambda: "reload refused" in s.stderr(), what="the bad reload")
    assert re.search(r"^%s warn  sluice: config reload refused, .* outcome=refused generation=\d+"
                     % TIME, s.stderr(), re.M), s.stderr()
    assert re.search(r"^%s:\d+: " % re.escape(str(s.config_path)), s.stderr(), re.M)


def test_log_level_warn_hides_info_lines_and_keeps_warnings(serve_config):
    s = serve(serve_config, "--log-level", "warn", "--log-format", "json")
    assert records(s) == []  # the listening and started lines are info
    s.config_path.write_text(s.config_path.read_text().replace("window=1h", "window=1x"))
    s.signal(signal.SIGHUP)
    wait_until(lambda: "refused" in s.stderr(), what="the bad reload")
    assert [r["level"] for r in records(s)] == ["warn"]


def test_a_bad_log_level_or_format_is_refused_with_exit_2(sluice_bin):
    for flag, value in (("--log-level", "loud"), ("--log-format", "xml")):
        p = subprocess.run([sluice_bin, "serve", flag, value], capture_output=True, text=True,
                           timeout=10)
        assert p.returncode == 2, p
        assert flag in p.stderr and value in p.stderr, p.stderr


def test_json_lines_carry_the_dry_run_warning_with_its_rule_route_and_key(serve_config):
    # A dry-run rule's would-be refusal through the gateway: one JSON record with its fields
    # (the gateway once wrote its own bare stderr line for it, which broke a JSON log reader).
    shadow = CONFIG.replace("rules: [per-user]", "rules: [per-user, shadow]").replace(
        "  spare:", '  shadow:\n    limit: "fixed-window:limit=1,window=1h"\n'
        "    key: client_ip\n    action: dry-run\n  spare:")
    s = serve_config(lambda g, a: shadow.format(gateway=g, admin=a, write_back="false"),
                     ["--log-format", "json"])
    for _ in range(3):
        assert requests.get(s.gateway + "/", headers={"X-User": "u"}, timeout=5).status_code == 200
    msg = "sluice: dry-run rule would have refused requests"

    def lines():  # records() fails on any line that is not JSON
        return [r for r in records(s) if r["msg"] == msg and r.get("rule") == "shadow"]

    # The first of the three is within the limit: 2 would-be refusals, said once a second.
    wait_until(lambda: sum(r["count"] for r in lines()) == 2, what="the dry-run line")
    for line in lines():
        assert (line["level"], line["route"], line["key"]) == ("warn", "api", "127.0.0.1"), line
