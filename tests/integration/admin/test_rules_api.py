"""The rules API: list, get, put, delete, validate, and write-back to the config file."""
import subprocess

import requests

TIGHT = {"limit": "fixed-window:limit=1,window=1h", "key": ["header:X-User"]}


def test_healthz(sluice):
    r = requests.get(sluice.admin + "/healthz", timeout=5)
    assert r.status_code == 200
    assert r.text.strip() == "ok"


def test_list_and_get(sluice):
    rules = sluice.rules()
    assert set(rules) == {"per-user", "spare"}
    assert rules["per-user"]["limit"] == "fixed-window:limit=3,window=1h"
    assert rules["per-user"]["key"] == ["header:X-User"]
    assert rules["per-user"]["action"] == "reject"

    r = sluice.rule("per-user")
    assert r.status_code == 200
    assert r.headers["Content-Type"].startswith("application/json")
    assert r.json() == rules["per-user"]

    r = sluice.rule("nope")
    assert r.status_code == 404
    assert r.json()["field"] == "name" and "nope" in r.json()["error"]


def test_put_replaces_a_rule_and_changes_behaviour(sluice):
    assert sluice.allowed("before-put", 5) == 3
    r = sluice.put("per-user", TIGHT)
    assert r.status_code == 200, r.text
    assert r.json()["limit"] == TIGHT["limit"]
    assert sluice.rule("per-user").json()["limit"] == TIGHT["limit"]
    assert sluice.allowed("after-put", 4) == 1


def test_put_round_trips_what_get_returns(sluice):
    rule = sluice.rule("spare").json()
    r = sluice.put("spare", rule)
    assert r.status_code == 200, r.text
    assert r.json() == rule


def test_put_accepts_yaml(sluice):
    r = sluice.put("per-user", "limit: fixed-window:limit=2,window=1h\nkey: header:X-User\n")
    assert r.status_code == 200, r.text
    assert sluice.allowed("yaml-put", 4) == 2


def test_put_creates_then_delete_removes(sluice):
    r = sluice.put("extra", {"limit": "gcra:rate=5/s,burst=2", "key": "client_ip",
                             "action": "dry-run"})
    assert r.status_code == 201, r.text
    assert r.json()["name"] == "extra" and r.json()["action"] == "dry-run"
    assert "extra" in sluice.rules()

    r = sluice.delete("extra")
    assert r.status_code == 200, r.text
    assert r.json()["name"] == "extra"
    assert sluice.rule("extra").status_code == 404
    r = sluice.delete("extra")
    assert r.status_code == 404
    assert r.json()["field"] == "name"


def test_delete_of_a_rule_in_use_names_the_routes(sluice):
    r = sluice.delete("per-user")
    assert r.status_code == 409
    body = r.json()
    assert body["routes"] == ["api"]
    assert "'api'" in body["error"]
    assert "per-user" in sluice.rules()
    assert sluice.allowed("after-409", 5) == 3


def assert_bad_field(r, field):
    assert r.status_code == 400, (r.status_code, r.text)
    assert r.headers["Content-Type"].startswith("application/json")
    body = r.json()
    assert body["field"] == field, body
    assert body["error"], body


def test_bad_put_names_the_field_and_the_old_rule_keeps_working(sluice):
    before = sluice.rule("per-user").json()
    assert_bad_field(sluice.put("per-user", {"limit": "tokn-bucket:rate=1/s,burst=1",
                                             "key": "header:X-User"}), "limit")
    assert_bad_field(sluice.put("per-user", {"limit": "fixed-window:limit=1,window=1h",
                                             "key": "header:X-User", "statsu": 429}), "statsu")
    assert_bad_field(sluice.put("per-user", {"limit": "fixed-window:limit=1,window=1h",
                                             "key": "header:X-User", "status": 700}), "status")
    assert_bad_field(sluice.put("per-user", {"limit": "fixed-window:limit=1,window=1h",
                                             "key": "nose:X"}), "key")
    assert_bad_field(sluice.put("per-user", {"limit": "fixed-window:limit=1,window=1h",
                                             "key": "header:X-User", "action": "delay"}),
                     "action")
    assert_bad_field(sluice.put("per-user", {"name": "other", "limit": TIGHT["limit"],
                                             "key": "client_ip"}), "name")
    assert_bad_field(sluice.put("per-user", '{"limit": "fixed-window:limit=1'), "body")
    assert_bad_field(sluice.put("per-user", ""), "body")

    assert sluice.rule("per-user").json() == before
    assert sluice.allowed("after-bad-puts", 5) == 3


def test_validate_a_rule_does_not_apply_it(sluice):
    r = sluice.validate('{"name": "per-user", "limit": "fixed-window:limit=1,window=1h", '
                        '"key": "header:X-User"}')
    assert r.status_code == 200, r.text
    assert r.json() == {"kind": "rule", "valid": True, "errors": []}
    assert sluice.rule("per-user").json()["limit"] == "fixed-window:limit=3,window=1h"
    assert sluice.allowed("after-validate", 5) == 3

    r = sluice.validate("limit: gcra:rate=1/s\nkey: client_ip\n", name="x")
    body = r.json()
    assert r.status_code == 200 and body["kind"] == "rule" and body["valid"] is False
    assert any("burst" in e for e in body["errors"]), body
    assert "x" not in sluice.rules()


def test_validate_a_whole_config(sluice):
    good = sluice.config_path.read_text()
    r = sluice.validate(good)
    assert r.json() == {"kind": "config", "valid": True, "errors": []}

    bad = good.replace("window=1h", "window=1hour").replace("client_ip", "client_ipp")
    body = sluice.validate(bad).json()
    assert body["kind"] == "config" and body["valid"] is False
    assert len(body["errors"]) == 2, body
    for e in body["errors"]:
        assert e.startswith("body:") and e.split(":")[1].isdigit(), e
    assert sluice.rule("per-user").json()["limit"] == "fixed-window:limit=3,window=1h"
    assert sluice.config_path.read_text() == good

    assert sluice.validate("").status_code == 400


def test_write_back_survives_a_restart(make_sluice, sluice_bin):
    s = make_sluice()
    assert s.put("per-user", {"limit": "fixed-window:limit=2,window=1h",
                              "key": "header:X-User"}).status_code == 200
    assert s.put("extra", {"limit": "gcra:rate=5/s,burst=2", "key": "client_ip"}).status_code == 201
    assert s.delete("spare").status_code == 200

    text = s.config_path.read_text()
    assert "limit=2" in text and "extra" in text and "spare" not in text
    check = subprocess.run([sluice_bin, "check-config", str(s.config_path)],
                           capture_output=True, timeout=30)
    assert check.returncode == 0, check.stderr
    leftovers = [p.name for p in s.config_path.parent.iterdir() if p.name.startswith(".")]
    assert leftovers == [], leftovers  # the temp file was renamed over the config

    s.stop()
    s.start()
    rules = s.rules()
    assert set(rules) == {"per-user", "extra"}
    assert rules["per-user"]["limit"] == "fixed-window:limit=2,window=1h"
    assert s.allowed("after-restart", 4) == 2


def test_write_back_keeps_the_files_own_listeners(make_sluice):
    s = make_sluice(admin_flag=True)  # --admin overrides the file's admin address
    before = s.config_path.read_text()
    file_admin = next(l for l in before.splitlines() if l.startswith("admin:"))
    assert s.put("per-user", TIGHT).status_code == 200
    after = s.config_path.read_text()
    assert file_admin in after.splitlines()
    assert s.admin.split("//")[1] not in after


def test_write_back_false_leaves_the_file_alone(make_sluice):
    s = make_sluice(write_back=False)
    before = s.config_path.read_bytes()
    assert s.put("per-user", TIGHT).status_code == 200
    assert s.allowed("no-write-back", 3) == 1
    assert s.config_path.read_bytes() == before
