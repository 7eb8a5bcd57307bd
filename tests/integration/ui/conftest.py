"""Fixtures for the dashboard test: a real `sluice serve` with an admin token in front of
`sluice demo-upstream`, and headless Chromium driven through browser.mjs (puppeteer-core, from
this folder's package-lock.json; scripts/install-deps.sh installs it and Debian's chromium)."""
import json
import os
import shutil
import subprocess
import sys

import pytest
import requests

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from integration_support import free_port, sluice_binary, terminate, wait_until  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TOKEN = "dashboard-test-token-0123456789abcdef"


def artifacts_dir():
    """build/<preset>/test-artifacts/ui, beside the binary under test."""
    d = os.path.join(os.path.dirname(os.path.abspath(sluice_binary())), "test-artifacts", "ui")
    os.makedirs(d, exist_ok=True)
    return d


class Browser:
    """One headless Chromium page; each call is one command to browser.mjs."""

    def __init__(self):
        chromium = os.environ.get("CHROMIUM", "/usr/bin/chromium")
        assert os.access(chromium, os.X_OK), \
            f"no chromium at {chromium}: run scripts/install-deps.sh (Debian's chromium)"
        assert os.path.isdir(os.path.join(HERE, "node_modules", "puppeteer-core")), \
            "puppeteer-core is not installed: run scripts/install-deps.sh (npm ci in tests/integration/ui)"
        self.errors = open(os.path.join(artifacts_dir(), "browser.stderr"), "wb")
        self.proc = subprocess.Popen([shutil.which("node") or "node", os.path.join(HERE, "browser.mjs")],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.errors, cwd=HERE, text=True)

    def call(self, op, **args):
        self.proc.stdin.write(json.dumps({"op": op, **args}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, f"browser.mjs exited (see {self.errors.name})"
        answer = json.loads(line)
        assert answer["ok"], f"browser {op} {args}: {answer['error']}"
        return answer["value"]

    def wait(self, js, timeout=15000):
        return self.call("wait", js=js, timeout=timeout)

    def screenshot(self, name):
        return self.call("screenshot", path=os.path.join(artifacts_dir(), name))

    def close(self):
        try:
            self.call("close")
        except AssertionError:
            pass
        terminate(self.proc)
        self.errors.close()


@pytest.fixture
def browser():
    b = Browser()
    yield b
    b.close()


CONFIG = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
admin_auth: {{token_env: SLUICE_UI_TEST_TOKEN}}
workers: 1
upstreams:
  demo:
    servers: [{upstream}]
routes:
  - name: guarded
    match: {{path_prefix: /guarded}}
    upstream: demo
    adaptive_concurrency: {{algorithm: aimd, initial: 7, min_limit: 1, max_limit: 50}}
    breaker:
      error_ratio: 0.5
      window: 10s
      min_requests: 10
      open_for: 5s
      fallback: {{status: 503}}
  - name: api
    match: {{path_prefix: /}}
    upstream: demo
    rules: [per-client]
rules:
  per-client:
    limit: "gcra:rate=5/s,burst=5"
    key: client_ip
  spare:
    limit: "fixed-window:limit=100,window=1m"
    key: "header:X-User"
  bans:
    limit: "fixed-window:limit=1,window=1h"
    key: "header:X-User"
    on_deny: {{block: 10m}}
"""


class Stack:
    """demo-upstream, and sluice on fixed ports (so a restart serves the same page address)."""

    def __init__(self, tmp_path):
        self.tmp = tmp_path
        self.gateway_port, self.admin_port, up = free_port(), free_port(), free_port()
        self.gateway = f"http://127.0.0.1:{self.gateway_port}"
        self.admin = f"http://127.0.0.1:{self.admin_port}"
        self.upstream_log = open(tmp_path / "upstream.stderr", "wb")
        self.upstream = subprocess.Popen(
            [sluice_binary(), "demo-upstream", "--listen", f"127.0.0.1:{up}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.upstream_log)
        self.config = tmp_path / "sluice.yaml"
        self.config.write_text(CONFIG.format(gateway=self.gateway_port, admin=self.admin_port,
                                             upstream=f"127.0.0.1:{up}"))
        self.proc = None
        self.start()

    def start(self):
        self.log = open(self.tmp / "sluice.stderr", "ab")
        env = dict(os.environ, SLUICE_UI_TEST_TOKEN=TOKEN)
        self.proc = subprocess.Popen([sluice_binary(), "serve", "--config", str(self.config)],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=self.log, env=env)

        def ready():
            assert self.proc.poll() is None, f"sluice exited early:\n{self.stderr()}"
            try:
                return requests.get(self.gateway + "/", timeout=1).status_code in (200, 429)
            except requests.ConnectionError:
                return False

        wait_until(ready, timeout=15, what="sluice's gateway to reach demo-upstream")

    def stop(self):
        terminate(self.proc)
        self.log.close()

    def stderr(self):
        return (self.tmp / "sluice.stderr").read_text(errors="replace")

    def api(self, method, path, **kw):
        headers = {"Authorization": "Bearer " + TOKEN, **kw.pop("headers", {})}
        return requests.request(method, self.admin + path, headers=headers, timeout=5, **kw)

    def close(self):
        self.stop()
        terminate(self.upstream)
        self.upstream_log.close()


@pytest.fixture
def stack(tmp_path):
    s = Stack(tmp_path)
    yield s
    s.close()
