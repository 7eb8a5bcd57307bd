"""The dashboard at /ui/ in headless Chromium, against a real sluice with an admin token, a
gateway route and demo-upstream: the token asked for, a chart that moves under load, a rule
edited in the page changing the 429s, a bad rate refused beside its field, and the edit kept
across a restart; the limited client in the rule's top list; a rule's blocked keys. Screenshots go to build/<preset>/test-artifacts/ui/ (docs/dashboard.md)."""
import threading
import time

import requests

from conftest import TOKEN

GOOD_LIMIT = "gcra:rate=1000/s,burst=1000"
ROW = '#rule-rows tr[data-rule="per-client"]'
CHART = '#charts-rule .chart[data-series="rule:per-client"]'


class Load:
    """About 50 requests a second to the gateway from one client (127.0.0.1), counting each
    status in one-second buckets, until stopped."""

    def __init__(self, url):
        self.url = url
        self.buckets = []  # [(second, {status: n})]
        self.running = True
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        session = requests.Session()
        while self.running:
            try:
                status = session.get(self.url, timeout=2).status_code
            except requests.RequestException:
                status = 0
            second = int(time.time())
            if not self.buckets or self.buckets[-1][0] != second:
                self.buckets.append((second, {}))
            counts = self.buckets[-1][1]
            counts[status] = counts.get(status, 0) + 1
            time.sleep(0.02)

    def recent(self, seconds=2):
        """Statuses of the last `seconds` whole seconds (not the one under way)."""
        done = self.buckets[-seconds - 1:-1]
        total = {}
        for _, counts in done:
            for k, v in counts.items():
                total[k] = total.get(k, 0) + v
        return total

    def stop(self):
        self.running = False
        self.thread.join(timeout=5)


def latest(browser, outcome):
    return browser.call("eval", js=f"Number(document.querySelector('{CHART}')?.dataset.latest_{outcome} ?? -1)")


def test_ui_files_are_open_but_every_data_call_needs_the_token(stack):
    page = requests.get(stack.admin + "/ui/", timeout=5)
    assert page.status_code == 200 and "<title>Sluice dashboard</title>" in page.text
    assert "default-src 'self'" in page.headers["Content-Security-Policy"]
    assert requests.get(stack.admin + "/ui/app.js", timeout=5).headers["Content-Type"].startswith("text/javascript")
    for path in ("/v1/stats/series", "/v1/status", "/v1/changes/last", "/v1/rules"):
        assert requests.get(stack.admin + path, timeout=5).status_code == 401, path
        assert stack.api("GET", path).status_code == 200, path
    assert stack.api("GET", "/v1/stats/series?since=soon").json()["field"] == "since"


def test_dashboard_shows_live_rates_edits_a_rule_and_keeps_the_edit_across_a_restart(stack, browser):
    # The page asks for the token before it shows anything.
    assert browser.call("goto", url=stack.admin + "/ui/") == 200
    browser.wait("!document.getElementById('token-form').hidden")
    assert browser.call("eval", js="document.getElementById('main').hidden") is True
    browser.screenshot("1-token.png")
    browser.call("type", selector="#token", text=TOKEN)
    browser.call("click", selector="#token-form button")
    browser.wait(f"document.querySelector('{ROW} input.limit')?.value === 'gcra:rate=5/s,burst=5'")

    load = Load(stack.gateway + "/x")
    try:
        # gcra 5/s under ~50/s: the chart's latest second shows both allowed and denied, and
        # keeps moving (its newest second advances).
        browser.wait(f"Number(document.querySelector('{CHART}')?.dataset.latest_denied) > 10"
                     f" && Number(document.querySelector('{CHART}').dataset.latest_allowed) > 0")
        first = browser.call("eval", js=f"Number(document.querySelector('{CHART}').dataset.last)")
        browser.wait(f"Number(document.querySelector('{CHART}').dataset.last) > {first}")
        assert 1 <= latest(browser, "allowed") <= 20, "about 5 a second (and the burst) pass a 5/s limit"
        before = load.recent()
        assert before.get(429, 0) > before.get(200, 0), before
        # The limited client is at the top of the rule's list of denied keys.
        top = '.top[data-rule="per-client"] tbody tr'
        row = browser.wait(f"(() => {{ const r = document.querySelector('{top}');"
                           " return r && Number(r.cells[2].textContent) > 10"
                           " && [...r.cells].map((c) => c.textContent); })()")
        assert row[0] == "127.0.0.1" and int(row[1]) > int(row[2]), row
        browser.screenshot("2-rates.png")

        # The key lookup shows that client's state, and Reset drops it.
        browser.call("type", selector="#key-name", text="127.0.0.1")
        browser.call("click", selector="#key-form button[type=submit]")
        state = browser.wait("(() => { const t = document.getElementById('key-state').textContent;"
                             " return t.includes('127.0.0.1') && JSON.parse(t); })()")
        assert state["rule"] == "per-client" and state["seen"] is True and state["limit"] > 0, state
        browser.call("click", selector="#key-reset")
        state = browser.wait("(() => { const t = document.getElementById('key-state').textContent;"
                             " return t.includes('\"reset\": true') && JSON.parse(t); })()")
        assert state["reset"] is True, state

        # A bad rate is refused beside the limit field, and the rule stays as it was.
        browser.call("type", selector=f"{ROW} input.limit", text="gcra:rate=fast,burst=5")
        browser.call("click", selector=f"{ROW} button.save")
        error = browser.wait(f"document.querySelector('{ROW} .field-error[data-field=\"limit\"]').textContent")
        assert "rate" in error, error
        browser.screenshot("3-bad-rate.png")
        assert stack.api("GET", "/v1/rules/per-client").json()["limit"] == "gcra:rate=5/s,burst=5"

        # A good one is applied: the 429s stop, and the chart's denied line falls to 0.
        browser.call("type", selector=f"{ROW} input.limit", text=GOOD_LIMIT)
        browser.call("click", selector=f"{ROW} button.save")
        browser.wait(f"document.querySelector('{ROW} .saved')?.textContent === 'saved'")
        assert stack.api("GET", "/v1/rules/per-client").json()["limit"] == GOOD_LIMIT

        def no_429s():
            now = load.recent(2)
            return now.get(200, 0) > 20 and now.get(429, 0) == 0

        deadline = time.monotonic() + 10
        while not no_429s():
            assert time.monotonic() < deadline, f"still 429s after the edit: {load.recent(2)}"
            time.sleep(0.2)
        browser.wait(f"Number(document.querySelector('{CHART}').dataset.latest_denied) === 0"
                     f" && Number(document.querySelector('{CHART}').dataset.latest_allowed) > 10")
        # The last change, as a line diff.
        diff = browser.wait("[...document.querySelectorAll('#last-change pre.diff div')]"
                            ".map((d) => d.textContent)")
        changed = [line.replace(" ", "") for line in diff if line[0] in "+-"]
        assert changed == ["-limit:gcra:rate=5/s,burst=5", f"+limit:{GOOD_LIMIT}"], diff
        browser.screenshot("4-edited.png")
    finally:
        load.stop()

    # The dry-run switch of a rule goes through the API too.
    browser.call("click", selector='#rule-rows tr[data-rule="spare"] input.dry-run')
    browser.wait("document.querySelector('#rule-rows tr[data-rule=\"spare\"] .saved')?.textContent === 'saved'")
    assert stack.api("GET", "/v1/rules/spare").json()["action"] == "dry-run"

    # Written back to the file: a restart serves the edit, and the page shows it after a reload.
    assert GOOD_LIMIT in stack.config.read_text()
    stack.stop()
    # While sluice is away the page says so (its polls fail), and it recovers by itself.
    browser.wait("!document.getElementById('connection').hidden"
                 " && document.getElementById('connection').textContent.includes('connection lost')")
    stack.start()
    browser.wait("document.getElementById('connection').hidden")
    assert browser.call("goto", url=stack.admin + "/ui/") == 200
    browser.wait(f"document.querySelector('{ROW} input.limit')?.value === '{GOOD_LIMIT}'")
    assert browser.call("eval", js="document.querySelector('#rule-rows tr[data-rule=\"spare\"] input.dry-run').checked")
    browser.screenshot("5-after-restart.png")
    assert browser.call("errors") == []


def test_dashboard_shows_each_routes_adaptive_limit_and_breaker(stack, browser):
    for _ in range(5):
        assert requests.get(stack.gateway + "/guarded/x", timeout=5).status_code == 200
    assert browser.call("goto", url=stack.admin + "/ui/") == 200
    browser.call("type", selector="#token", text=TOKEN)
    browser.call("click", selector="#token-form button")
    # route, adaptive limit, in flight, queued, min RTT ms, shed, breaker, opens, fallbacks
    row = browser.wait("(() => { const r = [...document.querySelectorAll('#overload-body tbody tr')]"
                       ".find((tr) => tr.cells[0].textContent === 'guarded');"
                       " return r && [...r.cells].map((c) => c.textContent); })()")
    # aimd from 7: five quick successes, no loss, so no cut; none waiting, none shed.
    assert row[0] == "guarded" and int(row[1]) >= 7, row
    assert (row[2], row[3], row[5]) == ("0", "0", "0"), row
    assert float(row[4]) > 0, row  # a round trip was measured (tens of microseconds here)
    assert (row[6], row[7], row[8]) == ("closed", "0", "0"), row
    browser.screenshot("6-overload.png")


def test_dashboard_lists_the_keys_a_rule_blocks(stack, browser):
    for key in ("mallory", "trudy"):  # each admitted once, then refused and blocked for 10m
        answers = [stack.api("POST", "/v1/check", json={"rule": "bans", "key": key}).json()
                   for _ in range(2)]
        assert [a["allowed"] for a in answers] == [True, False], answers
        time.sleep(0.05)
    assert browser.call("goto", url=stack.admin + "/ui/") == 200
    browser.call("type", selector="#token", text=TOKEN)
    browser.call("click", selector="#token-form button")
    box = '.top[data-rule="bans"]'
    rows = browser.wait(f"(() => {{ const rows = [...document.querySelectorAll('{box} table.blocked tbody tr')];"
                        " return rows.length === 2 && rows.map((r) => [...r.cells].map((c) => c.textContent)); })()")
    assert [r[0] for r in rows] == ["trudy", "mallory"], "the latest block first"
    assert all(590 <= int(r[1]) <= 600 for r in rows), rows
    assert browser.call("eval", js=f"document.querySelector('{box} p.blocked').textContent") == \
        "2 keys blocked now"
    assert browser.call("eval", js="document.querySelectorAll('.top[data-rule=\"per-client\"] .blocked').length") == 0, \
        "a rule without on_deny lists none"
    browser.screenshot("7-blocked-keys.png")
    assert browser.call("errors") == []
